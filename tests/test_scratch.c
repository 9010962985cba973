/* The kernels' scratch cache (optimized/scratch.c): a buffer given back is handed to the next
 * request of its size, never to two requests at once, what is kept stays under its cap, release
 * frees it all, and threads may use it at the same time. */
#include <criterion/criterion.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "opt_internal.h"

#define MIB ((size_t)1 << 20)

Test(scratch, a_buffer_given_back_serves_the_next_request_of_its_size)
{
    conform_opt_scratch_release();
    unsigned char *a = conform_scratch_alloc(3 * MIB + 5);
    cr_assert(a);
    cr_assert_eq((uintptr_t)a % 64, 0, "not on a cache line");
    memset(a, 1, 3 * MIB + 5);
    conform_scratch_free(a);
    cr_assert_geq(conform_opt_scratch_kept(), 3 * MIB);
    unsigned char *b = conform_scratch_alloc(3 * MIB);
    cr_assert_eq(b, a, "the kept buffer was not reused");
    unsigned char *c = conform_scratch_alloc(3 * MIB);
    cr_assert_neq(c, b, "one buffer handed to two requests");
    cr_assert_eq(conform_opt_scratch_kept(), 0);
    conform_scratch_free(b);
    conform_scratch_free(c);
    conform_opt_scratch_release();
    cr_assert_eq(conform_opt_scratch_kept(), 0, "release keeps nothing");
}

Test(scratch, small_requests_do_not_take_big_buffers_and_small_ones_are_not_kept)
{
    conform_opt_scratch_release();
    void *big = conform_scratch_alloc(8 * MIB);
    conform_scratch_free(big);
    void *small = conform_scratch_alloc(1 * MIB);
    cr_assert_neq(small, big, "a 1 MiB request took the 8 MiB buffer");
    conform_scratch_free(small);
    const size_t kept = conform_opt_scratch_kept();
    void *tiny = conform_scratch_alloc(1000);
    conform_scratch_free(tiny);
    cr_assert_eq(conform_opt_scratch_kept(), kept, "a 1000-byte buffer was kept");
    conform_opt_scratch_release();
}

Test(scratch, what_is_kept_stays_under_the_cap)
{
    conform_opt_scratch_release();
    void *b[12];
    for (int i = 0; i < 12; i++) cr_assert(b[i] = conform_scratch_alloc(10 * MIB));
    for (int i = 0; i < 12; i++) conform_scratch_free(b[i]);
    cr_assert_leq(conform_opt_scratch_kept(), 64 * MIB);
    cr_assert_geq(conform_opt_scratch_kept(), 50 * MIB, "the most recent ones are kept");
    void *huge = conform_scratch_alloc(100 * MIB); /* beyond the cap: freed at once */
    cr_assert(huge);
    conform_scratch_free(huge);
    cr_assert_leq(conform_opt_scratch_kept(), 64 * MIB);
    conform_opt_scratch_release();
}

Test(scratch, realloc_keeps_the_contents)
{
    int64_t *a = conform_scratch_realloc(NULL, 1000 * sizeof *a);
    for (int i = 0; i < 1000; i++) a[i] = i;
    a = conform_scratch_realloc(a, 200000 * sizeof *a);
    cr_assert(a);
    for (int i = 0; i < 1000; i++) cr_assert_eq(a[i], i);
    conform_scratch_free(a);
}

Test(scratch, threads_never_share_a_buffer)
{
    conform_opt_scratch_release();
    int bad = 0;
#pragma omp parallel num_threads(4) reduction(+ : bad)
    for (int round = 0; round < 200; round++) {
        const size_t n = (size_t)(64 << 10) * (1 + (size_t)(round % 3));
        unsigned char *p = conform_scratch_alloc(n);
        const unsigned char mark = (unsigned char)(omp_get_thread_num() * 50 + round % 50);
        memset(p, mark, n);
        for (size_t i = 0; i < n; i += 4096) bad += p[i] != mark;
        bad += p[n - 1] != mark;
        conform_scratch_free(p);
    }
    cr_assert_eq(bad, 0, "a buffer was written by two threads at once");
    cr_assert_leq(conform_opt_scratch_kept(), 64 * MIB);
    conform_opt_scratch_release();
}
