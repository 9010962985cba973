/* Helpers of the tests that hold an optimized kernel against the reference and its bounds. */
#ifndef CONFORM_TESTS_REF_CHECK_H
#define CONFORM_TESTS_REF_CHECK_H

#include <criterion/criterion.h>
#include <stdlib.h>

#include "compare.h"
#include "conform_ref.h"

/* zeroed bounds of n elements (one spare, so n = 0 allocates) for position error pos_rel_err */
static inline ref_bounds bounds_alloc(double pos_rel_err, int64_t n)
{
    ref_bounds b = {pos_rel_err, calloc((size_t)n + 1, 8), calloc((size_t)n + 1, 8), calloc((size_t)n + 1, 8),
                    calloc((size_t)n + 1, 8)};
    return b;
}

static inline void bounds_free(ref_bounds *b)
{
    free(b->abs_sum);
    free(b->n_terms);
    free(b->pos_err);
    free(b->ambig);
}

static inline float *to_float(const double *x, int64_t n)
{
    float *f = malloc(sizeof(float) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) f[i] = (float)x[i];
    return f;
}

/* every element of got within its float32 tolerance (model tol, the reference's bounds b), and
 * not all of them zero */
static inline void check_against_bounds(const double *ref, const float *got, int64_t n, const ref_bounds *b,
                                        const tol_model *tol, const char *what)
{
    tol_inputs t = {DTYPE_FLOAT32, tol, b->abs_sum, b->n_terms, b->pos_err, b->ambig};
    compare_result r;
    compare_f32(ref, got, n, &t, &r);
    cr_assert_eq(r.n_over, 0, "%s: %lld elements over tolerance, worst at %lld: ref %.9g got %.9g tol %.3g", what,
                 (long long)r.n_over, (long long)r.worst_index, r.worst_ref, r.worst_got, r.worst_tol);
    cr_assert(!r.all_zero, "%s: all zero", what);
}

#endif
