/* Helpers of the tolerance caps' property tests (test_tolerance_caps*.c): extreme but finite
 * coordinates, planes of known range [PLANE_LO, PLANE_HI], and the assertion that no element's
 * tol + ambig reaches what the element can change by. */
#ifndef CONFORM_TESTS_TOLERANCE_CAPS_H
#define CONFORM_TESTS_TOLERANCE_CAPS_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "compare.h"
#include "conform_ref.h"
#include "op.h"
#include "ref_check.h"

#define PLANE_LO 1.0
#define PLANE_HI 20.0

static inline double uniform(unsigned *s) { return (double)rand_r(s) / ((double)RAND_MAX + 1.0); }

/* an extreme magnitude: 1e2 .. 1e9 log-uniform, 2^23 .. 2^26, or within 2^8 of 2^31 */
static inline double extreme_mag(unsigned *s)
{
    switch (rand_r(s) % 3) {
    case 0: return 1e2 * pow(1e7, uniform(s));
    case 1: return ldexp(1.0, 23) * pow(8.0, uniform(s));
    default: return 2147483648.0 - 256.0 * uniform(s);
    }
}

/* an extreme coordinate of either sign, a float32 number */
static inline double extreme(unsigned *s)
{
    double m = extreme_mag(s);
    return (double)(float)(rand_r(s) % 2 ? m : -m);
}

/* n float32 values uniform in [PLANE_LO, PLANE_HI) */
static inline double *plane_values(int64_t n, unsigned *s)
{
    double *x = malloc(sizeof(double) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) x[i] = (double)(float)(PLANE_LO + (PLANE_HI - PLANE_LO) * uniform(s));
    return x;
}

/* Every element: pos_err + ambig <= reach[i] (or reach), the most any position (any branch) can
 * change it; and the element moved by that reach plus its value term (u (k_val + n_terms) abs_sum:
 * the rounding of whatever value a kernel's branch computes, which may be the far end of the reach
 * itself) fails. An element that can reach nothing (reach 0: no sample can touch it) must have no
 * tolerance term at all. */
static inline void assert_below_reach(const op_desc *op, int out, const double *ref, const ref_bounds *b, int64_t n,
                                      const double *reach_each, double reach, const char *what)
{
    tol_inputs t = {DTYPE_FLOAT32, &op->tol[out], b->abs_sum, b->n_terms, b->pos_err, b->ambig};
    float *moved = malloc(sizeof(float) * (size_t)(n + 1));
    int64_t movable = 0;
    for (int64_t i = 0; i < n; i++) {
        double ambig, tol = compare_tolerance(&t, i, &ambig), r = reach_each ? reach_each[i] : reach;
        double pe = b->pos_err ? b->pos_err[i] : 0, as = b->abs_sum ? b->abs_sum[i] : 0;
        if (r == 0) {
            /* (tol keeps its floor of a few subnormals, the model's eta term) */
            cr_assert(pe == 0 && as == 0 && ambig == 0 && ref[i] == 0,
                      "%s element %lld: reaches nothing, yet ref %.6g abs_sum %.6g pos_err %.6g ambig %.6g", what,
                      (long long)i, ref[i], as, pe, ambig);
            moved[i] = (float)ref[i];
            continue;
        }
        cr_assert(pe + ambig <= r, "%s element %lld: pos_err %.6g + ambig %.6g passes the reach %.6g (ref %.6g)", what,
                  (long long)i, pe, ambig, r, ref[i]);
        double val = fmax(tol - pe, 0);
        moved[i] = (float)(ref[i] + (ref[i] > 0 ? 1 : -1) * (r + val) * 1.0000002);
        movable++;
    }
    compare_result cr;
    compare_f32(ref, moved, n, &t, &cr);
    cr_assert_eq(cr.n_over, movable, "%s: %lld of %lld elements moved by their reach pass", what,
                 (long long)(movable - cr.n_over), (long long)movable);
    free(moved);
}

/* adds v to every pixel (r, c) of an H x W plane (element (r W + c) cs of t) within the rectangle
 * [yc - ry, yc + ry] x [xc - rx, xc + rx]; any extent, any centre */
static inline void add_rect(double *t, int64_t H, int64_t W, int64_t cs, double yc, double xc, double ry, double rx,
                            double v)
{
    double r0 = fmax(ceil(yc - ry), 0), r1 = fmin(floor(yc + ry), (double)(H - 1));
    double c0 = fmax(ceil(xc - rx), 0), c1 = fmin(floor(xc + rx), (double)(W - 1));
    if (!(r0 <= r1 && c0 <= c1)) return;
    for (int64_t r = (int64_t)r0; r <= (int64_t)r1; r++)
        for (int64_t c = (int64_t)c0; c <= (int64_t)c1; c++) t[(r * W + c) * cs] += v;
}

#endif
