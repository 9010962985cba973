#include "compare.h"

#include "dtype.h"

#include <float.h>
#include <math.h>
#include <string.h>

const double compare_ratio_edges[COMPARE_HIST_BINS - 1] = {0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1};
const double compare_ulp_edges[COMPARE_HIST_BINS - 1] = {0, 0.5, 1, 2, 4, 16, 256, 4096, 65536};

/* The edges increase, so the edges below v are a prefix and the bin is their count: counted
   without a branch, as a loop stopping at the first edge would mispredict on about every element
   (two bins per element made that most of the comparator's time) */
static inline int bin_of(const double *edges, double v)
{
    int b = 0;
    for (int e = 0; e < COMPARE_HIST_BINS - 1; e++) b += v > edges[e];
    return b;
}

int compare_bin(const double *edges, double v) { return bin_of(edges, v); }

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

/* The per-call constants of the loop below, hoisted: the same expressions as tolerance(),
   compare_scale() and the ULP of the dtype compute, in the same order, so every number is the same. */
typedef struct {
    double u, eta, k_val, ulp_ratio, ulp_floor;
} compare_consts;

/* ulp_f32 without libm: 2^(e - 24) for v = m 2^e (m in [0.5, 1)) is the double whose biased
   exponent is v's minus 23 (v >= FLT_MIN, so it stays normal) */
static inline double ulp_f32_fast(double v)
{
    v = fabs(v);
    if (!(v >= FLT_MIN) || !isfinite(v)) return ulp_f32(v);
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    b = ((b >> 52) - 23) << 52;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* tolerance() and compare_scale() of element i at once */
static inline double element_bounds(const tol_inputs *t, const compare_consts *k, int64_t i, double f, double *ambig,
                                    double *scale)
{
    double nt = t->n_terms ? t->n_terms[i] : 0.0, as = t->abs_sum ? t->abs_sum[i] : 0.0;
    double pe = t->pos_err ? t->pos_err[i] : 0.0;
    *ambig = t->ambig ? t->ambig[i] : 0.0;
    double kk = k->k_val + nt;
    double tol = k->u * kk * as + pe + k->eta * kk;
    if (isnan(*ambig)) *ambig = 0;
    double m = as + (kk > 0 ? pe / (k->u * kk) : 0.0), af = fabs(f);
    double s = m > af ? m : af; /* fmax(|f|, m): a NaN m gives |f| */
    *scale = isfinite(s) ? s : af;
    return isnan(tol) ? 0.0 : tol;
}

static void compare_any(const double *ref, const float *got_f32, const double *got_f64, int64_t n, const tol_inputs *t,
                        compare_result *r)
{
    /* a local result: its fields stay in registers (the arrays are doubles too, so the compiler
       would otherwise have to store every running maximum at every element) */
    compare_result a;
    memset(&a, 0, sizeof a);
    a.n = n;
    a.worst_index = -1;
    double worst_ratio = -1.0;
    int got_all_zero = 1, ref_clearly_nonzero = 0;
    const compare_consts k = {t->dt->u, t->dt->eta, t->model ? t->model->k_val : 0.0, t->dt->u / CONFORM_U_F32,
                              2.0 * t->dt->eta};
    for (int64_t i = 0; i < n; i++) {
        double g = got_f32 ? (double)got_f32[i] : got_f64[i], f = ref[i];
        if (g != 0.0) got_all_zero = 0;
        double ambig, scale, tol = element_bounds(t, &k, i, f, &ambig, &scale);
        if (!isfinite(f) || !isfinite(g)) {
            if (!same_nonfinite(f, g)) {
                a.n_nonfinite_mismatch++;
                a.n_over++;
                if (worst_ratio < INFINITY) {
                    worst_ratio = INFINITY;
                    a.worst_index = i; a.worst_ref = f; a.worst_got = g; a.worst_tol = tol + ambig;
                }
            }
            continue;
        }
        double err = fabs(g - f);
        /* the error metrics and histograms cover every finite element, ambiguous ones too: an
           output that differs from the reference never prints 0 (issue 24) */
        if (err > a.max_abs_err) a.max_abs_err = err;
        if (f != 0 && err / fabs(f) > a.max_rel_err) a.max_rel_err = err / fabs(f);
        /* ULPs of the element's scale (its reference, or the magnitude its tolerance is built on
           when larger): a near-zero result of cancelling terms is measured against the terms, not
           against itself. A zero scale (or a subnormal one) has no meaningful ULP */
        if (scale >= FLT_MIN) {
            /* the ULP of the dtype at scale: float32's scaled by its precision, and never finer
               than the dtype's smallest subnormal (a float16 value below 2^-25 rounds to 0, an
               error under half an ULP, not thousands of float32-sized ones) */
            double ulp = ulp_f32_fast(scale) * k.ulp_ratio;
            double ulps = err / (ulp > k.ulp_floor ? ulp : k.ulp_floor);
            if (ulps > a.max_ulp) a.max_ulp = ulps;
            a.hist_ulp[bin_of(compare_ulp_edges, ulps)]++;
        }
        if (ambig > 0) {
            /* judged against tol + ambig, and reported apart: count and worst err/(tol + ambig) */
            a.n_ambiguous++;
            double ratio = err == 0 ? 0 : err / (tol + ambig);
            if (ratio > a.ambiguous_max_err_over_tol) a.ambiguous_max_err_over_tol = ratio;
            a.hist_ratio[bin_of(compare_ratio_edges, ratio)]++;
            if (err > tol + ambig) {
                a.n_over++;
                if (ratio > worst_ratio) {
                    worst_ratio = ratio;
                    a.worst_index = i; a.worst_ref = f; a.worst_got = g; a.worst_tol = tol + ambig;
                }
            }
            continue;
        }
        if (fabs(f) > tol) ref_clearly_nonzero = 1;
        if (tol > a.max_tol) a.max_tol = tol;
        double ratio = err == 0 ? 0 : (tol > 0 ? err / tol : INFINITY);
        if (ratio > a.max_err_over_tol) a.max_err_over_tol = ratio;
        a.hist_ratio[bin_of(compare_ratio_edges, ratio)]++;
        if (err > tol) a.n_over++;
        if (ratio > worst_ratio) {
            worst_ratio = ratio;
            a.worst_index = i; a.worst_ref = f; a.worst_got = g; a.worst_tol = tol;
        }
    }
    a.all_zero = n > 0 && got_all_zero && ref_clearly_nonzero;
    *r = a;
}

void compare_f32(const double *ref, const float *got, int64_t n, const tol_inputs *t, compare_result *r)
{
    compare_any(ref, got, NULL, n, t, r);
}

void compare_f64(const double *ref, const double *got, int64_t n, const tol_inputs *t, compare_result *r)
{
    compare_any(ref, NULL, got, n, t, r);
}
