/* Helpers of the tests that hold an optimized kernel against the reference and its bounds. */
#ifndef CONFORM_TESTS_REF_CHECK_H
#define CONFORM_TESTS_REF_CHECK_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
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

/* got judged as run judges an output (judge.h) at float32 (model tol, the reference's bounds b):
 * every element within its tolerance, no NaN/Inf on one side only, not all zero */
static inline void check_against_bounds(const double *ref, const float *got, int64_t n, const ref_bounds *b,
                                        const tol_model *tol, const char *what)
{
    tol_inputs t = {DTYPE_FLOAT32, tol, b->abs_sum, b->n_terms, b->pos_err, b->ambig};
    double *g = malloc(sizeof(double) * (size_t)(n + 1));
    cr_assert(g);
    for (int64_t i = 0; i < n; i++) g[i] = got[i];
    output_result out;
    memset(&out, 0, sizeof out);
    snprintf(out.name, sizeof out.name, "%s", what);
    out.shape = (shape_t){1, {n}};
    char msg[400];
    int failed = judge_values(&t, ref, g, n, &out, msg, sizeof msg);
    free(g);
    free(out.heat);
    cr_assert(!failed, "%s", msg);
}

#endif
