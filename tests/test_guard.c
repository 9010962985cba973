#include <criterion/criterion.h>

#include "dtype.h"
#include "runner.h"

/* The guard bands around every output buffer (harness/judge/runner.c) must show a kernel that
 * accumulates past either end of its output (grad[at] += v with at out of range), not only one
 * that stores there: a quiet-NaN guard read, added to and written back keeps its bits, so such a
 * write was invisible (the generated zoo's "b <= B" backward mutants passed every case). */

static void accumulate(float *at, float v)
{
    volatile float *p = at; /* the read-modify-write a kernel does, not folded away */
    *p = *p + v;
}

Test(guard, untouched_buffer_is_intact)
{
    const dtype_desc *f32 = dtype_find("float32");
    float *buf = guarded_alloc(16, f32);
    int64_t bad = 0;
    cr_assert_not_null(buf);
    for (int i = 0; i < 16; i++) buf[i] = (float)i;
    cr_assert_eq(guarded_check(buf, 16, f32, &bad), 1);
    guarded_free(buf);
}

Test(guard, accumulate_past_the_end_is_seen)
{
    const dtype_desc *f32 = dtype_find("float32");
    float *buf = guarded_alloc(16, f32);
    int64_t bad = 0;
    accumulate(buf + 16 + 3, 0.25f);
    cr_assert_eq(guarded_check(buf, 16, f32, &bad), 0, "a += past the end left the guard intact");
    cr_assert_eq(bad, 19);
    guarded_free(buf);
}

Test(guard, accumulate_before_the_start_is_seen)
{
    const dtype_desc *f32 = dtype_find("float32");
    float *buf = guarded_alloc(16, f32);
    int64_t bad = 0;
    accumulate(buf - 5, -1.0f);
    cr_assert_eq(guarded_check(buf, 16, f32, &bad), 0, "a += before the start left the guard intact");
    cr_assert_eq(bad, -5);
    guarded_free(buf);
}

Test(guard, store_past_the_end_is_seen)
{
    const dtype_desc *f32 = dtype_find("float32");
    float *buf = guarded_alloc(4, f32);
    int64_t bad = 0;
    buf[4 + 63] = 0.0f; /* the last guard element */
    cr_assert_eq(guarded_check(buf, 4, f32, &bad), 0);
    cr_assert_eq(bad, 4 + 63);
    guarded_free(buf);
}
