#include <criterion/criterion.h>
#include <math.h>

#include "dtype.h"
#include "runner.h"

/* The guard bands around every output buffer (harness/core/guarded.c) must show a kernel that
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

/* The poison (dtype_poison) is a NaN no computed value equals: the default NaNs of arithmetic and of
 * the encoder, and the poison of float32 narrowed or widened, are never counted as unwritten, while a
 * buffer left alone is counted whole, at every dtype */
Test(guard, poison_is_no_nan_a_computation_gives)
{
    volatile double zero = 0.0, inf = INFINITY;
    const double nans[4] = {NAN, -NAN, zero * inf, inf - inf};
    for (int id = 0; id < 4; id++) {
        const dtype_desc *dt = dtype_get((conform_dtype)id);
        unsigned char enc[4 * 8];
        dtype_encode(dt->id, nans, enc, 4);
        int64_t first;
        cr_assert_eq(dtype_count_poison(dt->id, enc, 4, &first), 0, "%s: an encoded NaN reads as poison", dt->name);
        cr_assert_eq(first, -1);
        unsigned char *buf = guarded_alloc(5, dt);
        cr_assert_eq(dtype_count_poison(dt->id, buf, 5, &first), 5, "%s", dt->name);
        cr_assert_eq(first, 0);
        /* float32's poison carried into another format (a float32 kernel's output rounded) is not
           that format's poison: its narrowing drops the payload's low bits */
        float p32;
        dtype_poison(CONFORM_DTYPE_FLOAT32, &p32);
        const double wide = (double)p32;
        dtype_encode(dt->id, &wide, buf, 1);
        cr_assert_eq(dtype_count_poison(dt->id, buf, 5, &first), id == CONFORM_DTYPE_FLOAT32 ? 5 : 4, "%s", dt->name);
        cr_assert_eq(first, id == CONFORM_DTYPE_FLOAT32 ? 0 : 1, "%s", dt->name);
        guarded_free(buf);
    }
}

/* an input's bands hold GUARD_INPUT_VALUE in every dtype, element for element, on both sides */
Test(guard, input_bands_read_as_the_guard_value_in_every_dtype)
{
    const char *names[] = {"float32", "float16", "bfloat16", "float64"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const dtype_desc *dt = dtype_find(names[k]);
        unsigned char *buf = guarded_alloc_input(3, dt);
        cr_assert(buf);
        const int64_t per_band = GUARD_BYTES / dt->itemsize;
        for (int64_t i = 1; i <= per_band; i++) {
            double before, after;
            dtype_decode(dt->id, buf - i * dt->itemsize, &before, 1);
            dtype_decode(dt->id, buf + (3 + i - 1) * dt->itemsize, &after, 1);
            cr_assert(before == GUARD_INPUT_VALUE && after == GUARD_INPUT_VALUE, "%s: element %lld past an end: %g, %g",
                      names[k], (long long)i, before, after);
        }
        guarded_free(buf);
    }
}
