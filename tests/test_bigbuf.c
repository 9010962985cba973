/* Big buffers kept from case to case (bigbuf.h): reused zeroed when asked, never more held than
 * the cap the scheduler sets, and the kinds children see as documented. */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bigbuf.h"

#define MIB (1 << 20)

Test(bigbuf, nothing_is_kept_without_a_cap)
{
    bigbuf_set_cap(0);
    char *a = bigbuf_alloc(8 * MIB, 1, BIGBUF_NOT_INHERITED);
    cr_assert(a);
    bigbuf_free(a);
    cr_assert_eq(bigbuf_kept(), 0);
}

/* a private block of n bytes, written all over and given back: kept under a cap of 64 MiB */
static unsigned char *kept_dirty(size_t n)
{
    bigbuf_set_cap(64.0 * MIB);
    unsigned char *a = bigbuf_alloc(n, 1, BIGBUF_NOT_INHERITED);
    memset(a, 0xab, n);
    bigbuf_free(a);
    cr_assert_geq(bigbuf_kept(), n);
    return a;
}

/* every byte of p[0, n) is zero */
static void all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) cr_assert_eq(p[i], 0, "byte %zu not zeroed", i);
}

Test(bigbuf, a_kept_buffer_is_reused_and_zeroed_when_asked)
{
    unsigned char *a = kept_dirty(8 * MIB);
    unsigned char *b = bigbuf_alloc(6 * MIB, 1, BIGBUF_NOT_INHERITED); /* fits the kept one */
    cr_assert_eq(b, a, "the kept block was not reused");
    all_zero(b, 6 * MIB);
    void *s = bigbuf_alloc(1 * MIB, 0, BIGBUF_SHARED);
    cr_assert_neq(s, a, "a kept private block went to a shared request");
    bigbuf_free(s);
    bigbuf_free(b);
    bigbuf_set_cap(0);
    cr_assert_eq(bigbuf_kept(), 0, "a lower cap gives kept blocks back");
}

Test(bigbuf, a_kept_block_too_small_is_grown_keeping_none_of_its_bytes)
{
    kept_dirty(4 * MIB);
    unsigned char *b = bigbuf_alloc(12 * MIB, 1, BIGBUF_NOT_INHERITED); /* no fit: the kept one grows */
    cr_assert(b);
    cr_assert_eq(bigbuf_kept(), 0, "the kept block was not the one grown");
    all_zero(b, 12 * MIB);
    memset(b, 0xcd, 12 * MIB); /* every page of the grown block is writable */
    bigbuf_free(b);
    bigbuf_set_cap(0);
    cr_assert_eq(bigbuf_kept(), 0);
}

Test(bigbuf, in_use_and_kept_stay_under_the_cap)
{
    bigbuf_set_cap(20.0 * MIB);
    void *a = bigbuf_alloc(8 * MIB, 0, BIGBUF_NOT_INHERITED), *b = bigbuf_alloc(8 * MIB, 0, BIGBUF_NOT_INHERITED);
    bigbuf_free(a); /* 8 in use + 8 kept: under 20 */
    cr_assert_geq(bigbuf_kept(), 8 * MIB);
    void *c = bigbuf_alloc(12 * MIB, 0, BIGBUF_NOT_INHERITED); /* no fit: 8 + 8 + 12 > 20, the kept one goes */
    cr_assert_eq(bigbuf_kept(), 0);
    bigbuf_free(b);
    bigbuf_free(c); /* 12 in use + 8 + 12 kept would pass the cap: c is not kept */
    cr_assert_leq(bigbuf_kept(), 20 * MIB);
    bigbuf_set_cap(0);
}

Test(bigbuf, a_shared_buffer_carries_a_childs_writes_also_when_reused)
{
    bigbuf_set_cap(64.0 * MIB);
    for (int round = 0; round < 2; round++) {
        int *s = bigbuf_alloc(4 * MIB, 0, BIGBUF_SHARED);
        s[12345] = 0;
        pid_t pid = fork();
        if (pid == 0) {
            s[12345] = 7 + round;
            _exit(0);
        }
        waitpid(pid, NULL, 0);
        cr_assert_eq(s[12345], 7 + round, "round %d", round);
        bigbuf_free(s);
    }
    bigbuf_set_cap(0);
}

Test(bigbuf, a_not_inherited_buffer_is_absent_in_a_child)
{
    bigbuf_set_cap(0);
    volatile int *r = bigbuf_alloc(4 * MIB, 1, BIGBUF_NOT_INHERITED);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);
        (void)r[100];
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "the child read the reference's pages");
    bigbuf_free((void *)r);
}

/* a child (a device directory's reader allocates tensors) must not reuse a block its parent kept:
   a block not inherited is not there */
Test(bigbuf, a_child_never_reuses_its_parents_kept_blocks)
{
    bigbuf_set_cap(64.0 * MIB);
    bigbuf_free(bigbuf_alloc(8 * MIB, 1, BIGBUF_NOT_INHERITED));
    cr_assert_geq(bigbuf_kept(), 8 * MIB);
    pid_t pid = fork();
    if (pid == 0) {
        unsigned char *c = bigbuf_alloc(8 * MIB, 1, BIGBUF_NOT_INHERITED);
        c[0] = c[8 * MIB - 1] = 1;
        bigbuf_free(c);
        _exit(bigbuf_kept() == 0 ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
    bigbuf_set_cap(0);
}
