#include "compare.h"

#include "dtype.h"

#include <float.h>
#include <math.h>
#include <string.h>

const double compare_ratio_edges[COMPARE_HIST_BINS - 1] = {0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1};
const double compare_ulp_edges[COMPARE_HIST_BINS - 1] = {0, 0.5, 1, 2, 4, 16, 256, 4096, 65536};

int compare_bin(const double *edges, double v)
{
    int b = 0;
    while (b < COMPARE_HIST_BINS - 1 && v > edges[b]) b++;
    return b;
}

static double at(const double *a, int64_t i) { return a ? a[i] : 0.0; }

static double tolerance(const tol_inputs *t, int64_t i, double *ambig)
{
    double k_val = t->model ? t->model->k_val : 0.0;
    *ambig = at(t->ambig, i);
    /* each of the k_val + n_terms roundings may also underflow: eta of the dtype u belongs to */
    double tol = t->dt->u * (k_val + at(t->n_terms, i)) * at(t->abs_sum, i) + at(t->pos_err, i) +
                 t->dt->eta * (k_val + at(t->n_terms, i));
    /* a bound that is not a number allows nothing: it must never let an element through */
    if (isnan(*ambig)) *ambig = 0;
    return isnan(tol) ? 0.0 : tol;
}

double compare_tolerance(const tol_inputs *t, int64_t i, double *ambig)
{
    return tolerance(t, i, ambig);
}

static double ulp_f32(double v)
{
    v = fabs(v);
    if (!(v >= FLT_MIN)) return ldexp(1.0, -149);
    int e;
    frexp(v, &e); /* v = m * 2^e, m in [0.5, 1) */
    return ldexp(1.0, e - 24);
}

/* the ULP of dtype dt at scale:
   float32's scaled by its precision, and never finer than the dtype's smallest subnormal (a
   float16 value below 2^-25 rounds to 0, an error under half an ULP, not thousands of
   float32-sized ones) */
static double ulp_of_dtype(double scale, const dtype_desc *dt)
{
    return fmax(ulp_f32(scale) * (dt->u / CONFORM_U_F32), 2.0 * dt->eta);
}

double compare_ulps(double ref, double got) { return fabs(got - ref) / ulp_f32(ref); }

double compare_scale(const tol_inputs *t, int64_t i, double ref)
{
    /* the tolerance is u * (k_val + n_terms) * (abs_sum + pos_err / (u * (k_val + n_terms))):
       the bracket is the magnitude it is built on, position error included */
    double k = (t->model ? t->model->k_val : 0.0) + at(t->n_terms, i), pe = at(t->pos_err, i);
    double m = at(t->abs_sum, i) + (k > 0 ? pe / (t->dt->u * k) : 0.0);
    double s = fmax(fabs(ref), m);
    return isfinite(s) ? s : fabs(ref);
}

static int same_nonfinite(double ref, double got)
{
    if (isnan(ref)) return isnan(got);
    return got == ref; /* same infinity */
}

static void compare_any(const double *ref, const float *got_f32, const double *got_f64, int64_t n, const tol_inputs *t,
                        compare_result *r)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->worst_index = -1;
    double worst_ratio = -1.0;
    int got_all_zero = 1, ref_clearly_nonzero = 0;
    for (int64_t i = 0; i < n; i++) {
        double g = got_f32 ? (double)got_f32[i] : got_f64[i], f = ref[i];
        if (g != 0.0) got_all_zero = 0;
        double ambig, tol = tolerance(t, i, &ambig);
        if (!isfinite(f) || !isfinite(g)) {
            if (!same_nonfinite(f, g)) {
                r->n_nonfinite_mismatch++;
                r->n_over++;
                if (worst_ratio < INFINITY) {
                    worst_ratio = INFINITY;
                    r->worst_index = i; r->worst_ref = f; r->worst_got = g; r->worst_tol = tol + ambig;
                }
            }
            continue;
        }
        double err = fabs(g - f);
        /* the error metrics and histograms cover every finite element, ambiguous ones too: an
           output that differs from the reference never prints 0 (issue 24) */
        if (err > r->max_abs_err) r->max_abs_err = err;
        if (f != 0 && err / fabs(f) > r->max_rel_err) r->max_rel_err = err / fabs(f);
        /* ULPs of the element's scale (its reference, or the magnitude its tolerance is built on
           when larger): a near-zero result of cancelling terms is measured against the terms, not
           against itself. A zero scale (or a subnormal one) has no meaningful ULP */
        double scale = compare_scale(t, i, f);
        double ulps = scale >= FLT_MIN ? err / ulp_of_dtype(scale, t->dt) : 0.0;
        if (ulps > r->max_ulp) r->max_ulp = ulps;
        if (scale >= FLT_MIN) r->hist_ulp[compare_bin(compare_ulp_edges, ulps)]++;
        if (ambig > 0) {
            /* judged against tol + ambig, and reported apart: count and worst err/(tol + ambig) */
            r->n_ambiguous++;
            double ratio = err == 0 ? 0 : err / (tol + ambig);
            if (ratio > r->ambiguous_max_err_over_tol) r->ambiguous_max_err_over_tol = ratio;
            r->hist_ratio[compare_bin(compare_ratio_edges, ratio)]++;
            if (err > tol + ambig) {
                r->n_over++;
                if (ratio > worst_ratio) {
                    worst_ratio = ratio;
                    r->worst_index = i; r->worst_ref = f; r->worst_got = g; r->worst_tol = tol + ambig;
                }
            }
            continue;
        }
        if (fabs(f) > tol) ref_clearly_nonzero = 1;
        if (tol > r->max_tol) r->max_tol = tol;
        double ratio = err == 0 ? 0 : (tol > 0 ? err / tol : INFINITY);
        if (ratio > r->max_err_over_tol) r->max_err_over_tol = ratio;
        r->hist_ratio[compare_bin(compare_ratio_edges, ratio)]++;
        if (err > tol) r->n_over++;
        if (ratio > worst_ratio) {
            worst_ratio = ratio;
            r->worst_index = i; r->worst_ref = f; r->worst_got = g; r->worst_tol = tol;
        }
    }
    r->all_zero = n > 0 && got_all_zero && ref_clearly_nonzero;
}

void compare_f32(const double *ref, const float *got, int64_t n, const tol_inputs *t, compare_result *r)
{
    compare_any(ref, got, NULL, n, t, r);
}

void compare_f64(const double *ref, const double *got, int64_t n, const tol_inputs *t, compare_result *r)
{
    compare_any(ref, NULL, got, n, t, r);
}
