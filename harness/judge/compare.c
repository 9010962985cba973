#include "compare.h"

#include "dtype.h"
#include "judge_avx2.h"

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

/* The tolerance of one element: the definition (CONFORM_TOL_FORMULA says it in words; the AVX2
   blocks compute it four lanes at a time, held to this element for element by a test). kk =
   k_val + n_terms roundings, each at most u relative of abs_sum, and each may also underflow: eta
   of the dtype u belongs to */
static inline double tol_formula(double u, double eta, double kk, double abs_sum, double pos_err)
{
    double tol = u * kk * abs_sum + pos_err + eta * kk;
    /* a bound that is not a number allows nothing: it must never let an element through */
    return isnan(tol) ? 0.0 : tol;
}

/* The scale an element's ULPs are measured in (compare.h): the tolerance is u * kk * (abs_sum +
   pos_err / (u * kk)), the bracket the magnitude it is built on, position error included; the
   larger of it and af = |ref|, af where that is not finite (a NaN bracket gives af) */
static inline double scale_formula(double u, double kk, double abs_sum, double pos_err, double af)
{
    double m = abs_sum + (kk > 0 ? pos_err / (u * kk) : 0.0);
    double s = m > af ? m : af;
    return isfinite(s) ? s : af;
}

double compare_element_tol(const dtype_desc *dt, double k_val, double n_terms, double abs_sum, double pos_err)
{
    return tol_formula(dt->u, dt->eta, k_val + n_terms, abs_sum, pos_err);
}

double compare_element_scale(const dtype_desc *dt, double k_val, double n_terms, double abs_sum, double pos_err,
                             double ref)
{
    return scale_formula(dt->u, k_val + n_terms, abs_sum, pos_err, fabs(ref));
}

double compare_tolerance(const tol_inputs *t, int64_t i, double *ambig)
{
    *ambig = at(t->ambig, i);
    if (isnan(*ambig)) *ambig = 0;
    return compare_element_tol(t->dt, t->model ? t->model->k_val : 0.0, at(t->n_terms, i), at(t->abs_sum, i),
                               at(t->pos_err, i));
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
    return compare_element_scale(t->dt, t->model ? t->model->k_val : 0.0, at(t->n_terms, i), at(t->abs_sum, i),
                                 at(t->pos_err, i), ref);
}

static int same_nonfinite(double ref, double got)
{
    if (isnan(ref)) return isnan(got);
    return got == ref; /* same infinity */
}

/* The per-call constants of the loop below, hoisted: the operands of tol_formula(), scale_formula()
   and the ULP of the dtype. */
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

/* the tolerance and the scale of element i at once */
static inline double element_bounds(const tol_inputs *t, const compare_consts *k, int64_t i, double f, double *ambig,
                                    double *scale)
{
    double nt = t->n_terms ? t->n_terms[i] : 0.0, as = t->abs_sum ? t->abs_sum[i] : 0.0;
    double pe = t->pos_err ? t->pos_err[i] : 0.0;
    *ambig = t->ambig ? t->ambig[i] : 0.0;
    if (isnan(*ambig)) *ambig = 0;
    double kk = k->k_val + nt;
    *scale = scale_formula(k->u, kk, as, pe, fabs(f));
    return tol_formula(k->u, k->eta, kk, as, pe);
}

/* The running state of the element loop over its scalar elements: a local struct, so its fields
   stay in registers (the arrays are doubles too: through a pointer the compiler would store every
   running maximum at every element) */
typedef struct {
    compare_result a;
    double worst_ratio;
    int got_all_zero, ref_clearly_nonzero;
} compare_state;

/* Element i, every kind of it: the reference semantics of the comparator. The vector blocks below
   compute the same for their plain elements (finite, not ambiguous) */
static inline void element_scalar(compare_state *st, const double *ref, const float *got_f32, const double *got_f64,
                                  int64_t i, const tol_inputs *t, const compare_consts *k)
{
    compare_result *a = &st->a;
    double g = got_f32 ? (double)got_f32[i] : got_f64[i], f = ref[i];
    if (g != 0.0) st->got_all_zero = 0;
    double ambig, scale, tol = element_bounds(t, k, i, f, &ambig, &scale);
    if (!isfinite(f) || !isfinite(g)) {
        if (!same_nonfinite(f, g) && ambig == INFINITY) {
            /* the reference declares the element unbounded (a non-finite input where a legal
               position or evaluation form decides between NaN and a number or an infinity,
               ops.md 10), a non-finite input a position within rounding of a cell line reads or not: a
               mismatch is ambiguous, not failed; an agreeing element is a match */
            a->n_ambiguous++;
            return;
        }
        if (!same_nonfinite(f, g)) {
            a->n_nonfinite_mismatch++;
            a->n_over++;
            /* no finite tolerance holds a NaN or a wrong infinity: its err/tol is infinite, so an
               output of NaNs never shows a worst err/tol below 1 beside its failure */
            a->max_err_over_tol = INFINITY;
            if (st->worst_ratio < INFINITY) {
                st->worst_ratio = INFINITY;
                a->worst_index = i;
            }
        }
        return;
    }
    double err = fabs(g - f);
    /* the error metrics and histograms cover every finite element, ambiguous ones too: an
       output that differs from the reference never prints 0 */
    if (err > a->max_abs_err) a->max_abs_err = err;
    if (f != 0 && err / fabs(f) > a->max_rel_err) a->max_rel_err = err / fabs(f);
    /* ULPs of the element's scale (its reference, or the magnitude its tolerance is built on
       when larger): a near-zero result of cancelling terms is measured against the terms, not
       against itself. A zero scale (or a subnormal one) has no meaningful ULP */
    if (scale >= FLT_MIN) {
        /* the ULP of the dtype at scale: float32's scaled by its precision, and never finer
           than the dtype's smallest subnormal (a float16 value below 2^-25 rounds to 0, an
           error under half an ULP, not thousands of float32-sized ones) */
        double ulp = ulp_f32_fast(scale) * k->ulp_ratio;
        double ulps = err / (ulp > k->ulp_floor ? ulp : k->ulp_floor);
        if (ulps > a->max_ulp) a->max_ulp = ulps;
        a->hist_ulp[bin_of(compare_ulp_edges, ulps)]++;
    }
    if (ambig > 0) {
        /* judged against tol + ambig, in the worst err/tol, the count beyond tolerance and the
           all-zero rule alike (their numbers agree with the verdict), and reported apart too: count
           and worst err/(tol + ambig) */
        a->n_ambiguous++;
        const double w = tol + ambig, ratio = err == 0 ? 0 : err / w;
        if (ratio > a->ambiguous_max_err_over_tol) a->ambiguous_max_err_over_tol = ratio; /* joins the worst below */
        if (fabs(f) > w) st->ref_clearly_nonzero = 1;
        a->hist_ratio[bin_of(compare_ratio_edges, ratio)]++;
        if (err > w) a->n_over++;
        if (ratio > st->worst_ratio) {
            st->worst_ratio = ratio;
            a->worst_index = i;
        }
        return;
    }
    if (fabs(f) > tol) st->ref_clearly_nonzero = 1;
    if (tol > a->max_tol) a->max_tol = tol;
    double ratio = err == 0 ? 0 : (tol > 0 ? err / tol : INFINITY);
    if (ratio > a->max_err_over_tol) a->max_err_over_tol = ratio;
    a->hist_ratio[bin_of(compare_ratio_edges, ratio)]++;
    if (err > tol) a->n_over++;
    if (ratio > st->worst_ratio) {
        st->worst_ratio = ratio;
        a->worst_index = i;
    }
}

/* ---- AVX2 blocks -------------------------------------------------------------------------------
   Four elements at a time where the CPU has AVX2 (checked at run time; else the scalar loop does
   every element). Only IEEE +, -, *, / and comparisons, each as element_scalar computes it, in the
   same order and without FMA (not enabled for these functions): every lane's number is bit for bit
   the scalar one. A block with an element that is not plain (finite on both sides, not ambiguous)
   goes to element_scalar whole. Running maxima and the worst element are kept per lane and merged
   at the end: the largest, of equals the first index (the scalar loop's strict > keeps the first);
   max_pd(x, m) is x > m ? x : m, the scalar "if (x > m) m = x" */
#ifdef JUDGE_AVX2

/* the histograms' bins of a block as one-hot 6-bit counters in each 64-bit lane (10 bins, 60 bits):
   emptied into the int64 histograms before any counter can pass 63 */
#define HIST_FIELD 6
#define HIST_FLUSH 63

typedef struct {
    __m256d max_abs, max_rel, max_ulp, max_ot, max_tol, worst_ratio;
    __m256i worst_index, nonzero_got, clearly_nonzero, n_over, hist_ulp, hist_ratio;
} lanes;

/* the bound arrays, a NULL one read as zeros: its index masked to 0 of a block of zeros */
typedef struct {
    const double *nt, *as, *pe, *am;
    int64_t mnt, mas, mpe, mam;
} bound_src;

static const double zero_block[4];

/* compare_consts, broadcast; 1/den for the ULPs: den = max(ulp, ulp_floor) is a power of two
   (every dtype's u and eta are), so err * (1/den) is err / den correctly rounded, the same number */
typedef struct {
    __m256d u, eta, k_val, ulp_ratio, ulp_floor, edges_ulp[COMPARE_HIST_BINS - 1], edges_ratio[COMPARE_HIST_BINS - 1];
} vconsts;

/* 1 when every den of the dtype is a normal power of two with a normal reciprocal: 2^-149 <= ulp / ulp_ratio
   <= 2^1000 (a finite scale), ulp_floor a power of two too or below every ulp */
static int reciprocal_exact(const compare_consts *k)
{
    int e;
    int pow2_ratio = frexp(k->ulp_ratio, &e) == 0.5 && k->ulp_ratio >= 0x1p-800 && k->ulp_ratio <= 0x1p20;
    int floor_ok = k->ulp_floor < 0x1p-149 * k->ulp_ratio || (frexp(k->ulp_floor, &e) == 0.5 && k->ulp_floor >= DBL_MIN &&
                                                                k->ulp_floor <= 0x1p1000);
    return pow2_ratio && floor_ok;
}

/* 1/x of a normal power of two x with a normal reciprocal: its biased exponent E becomes 2046 - E */
AVX2_INLINE __m256d pow2_reciprocal(__m256d x)
{
    __m256i e = _mm256_srli_epi64(_mm256_castpd_si256(x), 52);
    return _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_sub_epi64(_mm256_set1_epi64x(2046), e), 52));
}

AVX2_INLINE __m256i one_hot_bin(__m256d v, const __m256d *edges)
{
    __m256i b = _mm256_setzero_si256();
#pragma GCC unroll 9
    for (int e = 0; e < COMPARE_HIST_BINS - 1; e++)
        b = _mm256_sub_epi64(b, _mm256_castpd_si256(_mm256_cmp_pd(v, edges[e], _CMP_GT_OQ)));
    __m256i shift = _mm256_add_epi64(_mm256_slli_epi64(b, 2), _mm256_slli_epi64(b, 1)); /* HIST_FIELD * b */
    return _mm256_sllv_epi64(_mm256_set1_epi64x(1), shift);
}

/* tol_formula() and scale_formula() of four elements: the same operations in the same order
   (compare_bounds_avx2 holds them to the scalar ones element for element) */
AVX2_INLINE __m256d vbounds(const vconsts *k, __m256d nt, __m256d as, __m256d pe, __m256d af, __m256d *scale)
{
    __m256d kk = _mm256_add_pd(k->k_val, nt), ukk = _mm256_mul_pd(k->u, kk);
    __m256d tol = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(ukk, as), pe), _mm256_mul_pd(k->eta, kk));
    __m256d m = _mm256_add_pd(as, _mm256_and_pd(_mm256_div_pd(pe, ukk), _mm256_cmp_pd(kk, _mm256_setzero_pd(), _CMP_GT_OQ)));
    __m256d s = _mm256_max_pd(m, af); /* m > af ? m : af */
    *scale = _mm256_blendv_pd(af, s, _mm256_cmp_pd(s, _mm256_set1_pd(INFINITY), _CMP_LT_OQ));
    return _mm256_and_pd(tol, _mm256_cmp_pd(tol, tol, _CMP_ORD_Q)); /* NaN: 0 */
}

/* the tolerance, ULPs and err/tol of four plain elements, into the lanes */
AVX2_INLINE void block_plain(lanes *v, const vconsts *k, __m256d f, __m256d g, __m256d nt, __m256d as, __m256d pe,
                             __m256i idx)
{
    const __m256d zero = _mm256_setzero_pd(), inf = _mm256_set1_pd(INFINITY);
    __m256d err = vabs(_mm256_sub_pd(g, f)), af = vabs(f);
    v->nonzero_got = _mm256_or_si256(v->nonzero_got, _mm256_castpd_si256(_mm256_cmp_pd(g, zero, _CMP_NEQ_UQ)));
    v->max_abs = _mm256_max_pd(err, v->max_abs);
    __m256d rel = _mm256_and_pd(_mm256_div_pd(err, af), _mm256_cmp_pd(f, zero, _CMP_NEQ_UQ));
    v->max_rel = _mm256_max_pd(rel, v->max_rel);
    __m256d scale, tol = vbounds(k, nt, as, pe, af, &scale);
    __m256d has_ulp = _mm256_cmp_pd(scale, _mm256_set1_pd(FLT_MIN), _CMP_GE_OQ);
    /* ulp_f32_fast: the biased exponent lowered by 23 */
    __m256i e = _mm256_sub_epi64(_mm256_srli_epi64(_mm256_castpd_si256(scale), 52), _mm256_set1_epi64x(23));
    __m256d ulp = _mm256_mul_pd(_mm256_castsi256_pd(_mm256_slli_epi64(e, 52)), k->ulp_ratio);
    __m256d ulps = _mm256_and_pd(_mm256_mul_pd(err, pow2_reciprocal(_mm256_max_pd(ulp, k->ulp_floor))), has_ulp);
    v->max_ulp = _mm256_max_pd(ulps, v->max_ulp);
    v->hist_ulp = _mm256_add_epi64(v->hist_ulp, _mm256_and_si256(one_hot_bin(ulps, k->edges_ulp), _mm256_castpd_si256(has_ulp)));
    v->clearly_nonzero = _mm256_or_si256(v->clearly_nonzero, _mm256_castpd_si256(_mm256_cmp_pd(af, tol, _CMP_GT_OQ)));
    v->max_tol = _mm256_max_pd(tol, v->max_tol);
    __m256d ratio = _mm256_blendv_pd(inf, _mm256_div_pd(err, tol), _mm256_cmp_pd(tol, zero, _CMP_GT_OQ));
    ratio = _mm256_andnot_pd(_mm256_cmp_pd(err, zero, _CMP_EQ_OQ), ratio);
    v->max_ot = _mm256_max_pd(ratio, v->max_ot);
    v->hist_ratio = _mm256_add_epi64(v->hist_ratio, one_hot_bin(ratio, k->edges_ratio));
    v->n_over = _mm256_sub_epi64(v->n_over, _mm256_castpd_si256(_mm256_cmp_pd(err, tol, _CMP_GT_OQ)));
    __m256d better = _mm256_cmp_pd(ratio, v->worst_ratio, _CMP_GT_OQ);
    v->worst_ratio = _mm256_max_pd(ratio, v->worst_ratio);
    v->worst_index = _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(v->worst_index), _mm256_castsi256_pd(idx), better));
}

/* 1 when the four elements from i were plain and are done, 0 to do them with element_scalar */
AVX2_INLINE int block(lanes *v, const bound_src *b, const vconsts *k, const double *ref, const float *g32,
                      const double *g64, int64_t i)
{
    __m256d f = _mm256_loadu_pd(ref + i), g = g32 ? _mm256_cvtps_pd(_mm_loadu_ps(g32 + i)) : _mm256_loadu_pd(g64 + i);
    __m256d am = _mm256_loadu_pd(b->am + (i & b->mam));
    __m256d plain = _mm256_and_pd(finite_mask(f), finite_mask(g));
    plain = _mm256_andnot_pd(_mm256_cmp_pd(am, _mm256_setzero_pd(), _CMP_GT_OQ), plain);
    if (_mm256_movemask_pd(plain) != 0xf) return 0;
    block_plain(v, k, f, g, _mm256_loadu_pd(b->nt + (i & b->mnt)), _mm256_loadu_pd(b->as + (i & b->mas)),
                _mm256_loadu_pd(b->pe + (i & b->mpe)), _mm256_add_epi64(_mm256_set1_epi64x(i), _mm256_set_epi64x(3, 2, 1, 0)));
    return 1;
}

/* returns the counters emptied */
AVX2_INLINE __m256i flush_hist(int64_t *hist, __m256i packed)
{
    int64_t lane[4];
    memcpy(lane, &packed, sizeof lane);
    for (int l = 0; l < 4; l++)
        for (int b = 0; b < COMPARE_HIST_BINS; b++) hist[b] += (int64_t)((uint64_t)lane[l] >> (HIST_FIELD * b)) & HIST_FLUSH;
    return _mm256_setzero_si256();
}

AVX2 static void merge_lanes(compare_state *st, const lanes *v)
{
    compare_result *a = &st->a;
    double d[6][4];
    int64_t q[4][4];
    __m256d dv[6] = {v->max_abs, v->max_rel, v->max_ulp, v->max_ot, v->max_tol, v->worst_ratio};
    __m256i qv[4] = {v->worst_index, v->nonzero_got, v->clearly_nonzero, v->n_over};
    memcpy(d, dv, sizeof d);
    memcpy(q, qv, sizeof q);
    double *to[5] = {&a->max_abs_err, &a->max_rel_err, &a->max_ulp, &a->max_err_over_tol, &a->max_tol};
    for (int l = 0; l < 4; l++) {
        for (int m = 0; m < 5; m++) if (d[m][l] > *to[m]) *to[m] = d[m][l];
        if (q[1][l]) st->got_all_zero = 0;
        if (q[2][l]) st->ref_clearly_nonzero = 1;
        a->n_over += q[3][l];
        double w = d[5][l];
        if (w > st->worst_ratio || (w == st->worst_ratio && q[0][l] >= 0 && q[0][l] < a->worst_index)) {
            st->worst_ratio = w;
            a->worst_index = q[0][l];
        }
    }
    flush_hist(a->hist_ulp, v->hist_ulp);
    flush_hist(a->hist_ratio, v->hist_ratio);
}

/* every whole block of four from 0; returns the elements done */
AVX2 static int64_t compare_blocks_avx2(compare_state *st, const double *ref, const float *g32, const double *g64, int64_t n,
                                        const tol_inputs *t, const compare_consts *k)
{
    lanes v;
    memset(&v, 0, sizeof v);
    v.worst_ratio = _mm256_set1_pd(-1.0);
    v.worst_index = _mm256_set1_epi64x(-1);
    const bound_src b = {t->n_terms ? t->n_terms : zero_block, t->abs_sum ? t->abs_sum : zero_block,
                         t->pos_err ? t->pos_err : zero_block, t->ambig ? t->ambig : zero_block,
                         t->n_terms ? -1 : 0, t->abs_sum ? -1 : 0, t->pos_err ? -1 : 0, t->ambig ? -1 : 0};
    vconsts vk = {.u = _mm256_set1_pd(k->u), .eta = _mm256_set1_pd(k->eta), .k_val = _mm256_set1_pd(k->k_val),
                  .ulp_ratio = _mm256_set1_pd(k->ulp_ratio), .ulp_floor = _mm256_set1_pd(k->ulp_floor)};
    for (int e = 0; e < COMPARE_HIST_BINS - 1; e++) {
        vk.edges_ulp[e] = _mm256_set1_pd(compare_ulp_edges[e]);
        vk.edges_ratio[e] = _mm256_set1_pd(compare_ratio_edges[e]);
    }
    int64_t i = 0;
    int until_flush = HIST_FLUSH;
    for (; i + 4 <= n; i += 4) {
        if (!block(&v, &b, &vk, ref, g32, g64, i))
            for (int l = 0; l < 4; l++) element_scalar(st, ref, g32, g64, i + l, t, k);
        else if (!--until_flush) {
            v.hist_ulp = flush_hist(st->a.hist_ulp, v.hist_ulp);
            v.hist_ratio = flush_hist(st->a.hist_ratio, v.hist_ratio);
            until_flush = HIST_FLUSH;
        }
    }
    merge_lanes(st, &v);
    return i;
}
#endif

#ifdef JUDGE_AVX2
/* vbounds() over n elements, four at a time (the tail padded with zeros) */
AVX2 static void bounds_avx2(const compare_consts *k, int64_t n, const double *nt, const double *as, const double *pe,
                             const double *ref, double *tol, double *scale)
{
    const vconsts vk = {.u = _mm256_set1_pd(k->u), .eta = _mm256_set1_pd(k->eta), .k_val = _mm256_set1_pd(k->k_val)};
    for (int64_t i = 0; i < n; i += 4) {
        double q[4][4] = {{0}}, o[2][4];
        int64_t m = n - i < 4 ? n - i : 4;
        for (int64_t l = 0; l < m; l++) {
            q[0][l] = nt[i + l];
            q[1][l] = as[i + l];
            q[2][l] = pe[i + l];
            q[3][l] = ref[i + l];
        }
        __m256d sc, t = vbounds(&vk, _mm256_loadu_pd(q[0]), _mm256_loadu_pd(q[1]), _mm256_loadu_pd(q[2]),
                                vabs(_mm256_loadu_pd(q[3])), &sc);
        _mm256_storeu_pd(o[0], t);
        _mm256_storeu_pd(o[1], sc);
        memcpy(tol + i, o[0], (size_t)m * sizeof *tol);
        memcpy(scale + i, o[1], (size_t)m * sizeof *scale);
    }
}
#endif

int compare_bounds_avx2(const dtype_desc *dt, double k_val, int64_t n, const double *nt, const double *as,
                        const double *pe, const double *ref, double *tol, double *scale)
{
#ifdef JUDGE_AVX2
    if (!judge_use_avx2(0)) return 0;
    const compare_consts k = {dt->u, dt->eta, k_val, 0, 0};
    bounds_avx2(&k, n, nt, as, pe, ref, tol, scale);
    return 1;
#else
    return 0;
#endif
}

/* A reference of exactly 0 into which nothing is summed (abs_sum, pos_err and ambig all 0): 0 is its
   only legal value and its tolerance is the underflow floor eta (k_val + n_terms) alone, so an element
   beyond it has an infinite err/tol (not err over a few subnormals, a number like 1e43 that reads as a
   fault of the tool), and is the worst unless a NaN mismatch came first. Only a failing output is
   scanned. */
static void only_zero_rule(compare_state *st, const double *ref, const float *got_f32, const double *got_f64, int64_t n,
                           const tol_inputs *t, const compare_consts *k)
{
    compare_result *a = &st->a;
    for (int64_t i = 0; i < n; i++) {
        double g = got_f32 ? (double)got_f32[i] : got_f64[i], ambig, scale;
        if (ref[i] != 0 || !isfinite(g)) continue;
        if ((t->abs_sum && t->abs_sum[i] != 0) || (t->pos_err && t->pos_err[i] != 0)) continue;
        double tol = element_bounds(t, k, i, ref[i], &ambig, &scale);
        if (ambig != 0 || !(fabs(g) > tol)) continue;
        a->max_err_over_tol = a->plain_max_err_over_tol = INFINITY;
        if (st->worst_ratio < INFINITY) {
            st->worst_ratio = INFINITY;
            a->worst_index = i;
        }
        return;
    }
}

static void compare_any(const double *ref, const float *got_f32, const double *got_f64, int64_t n, const tol_inputs *t,
                        int loop_only, compare_result *r)
{
    compare_state st;
    memset(&st, 0, sizeof st);
    st.a.n = n;
    st.a.worst_index = -1;
    st.worst_ratio = -1.0;
    st.got_all_zero = 1;
    const compare_consts k = {t->dt->u, t->dt->eta, t->model ? t->model->k_val : 0.0, t->dt->u / CONFORM_U_F32,
                              2.0 * t->dt->eta};
    int64_t i = 0;
#ifdef JUDGE_AVX2
    if (judge_use_avx2(loop_only) && reciprocal_exact(&k)) i = compare_blocks_avx2(&st, ref, got_f32, got_f64, n, t, &k);
#endif
    for (; i < n; i++) element_scalar(&st, ref, got_f32, got_f64, i, t, &k);
    compare_result *a = &st.a;
    /* the loops kept the plain elements' worst (the vector lanes see only those); the worst err/tol
       is over every element, an ambiguous one against tol + ambig, as n_over counts them */
    a->plain_max_err_over_tol = a->max_err_over_tol;
    if (a->ambiguous_max_err_over_tol > a->max_err_over_tol) a->max_err_over_tol = a->ambiguous_max_err_over_tol;
    if (a->n_over) only_zero_rule(&st, ref, got_f32, got_f64, n, t, &k);
    if (a->worst_index >= 0) { /* its numbers, as judged: the widened tolerance but for a plain element */
        int64_t w = a->worst_index;
        double ambig, scale, tol = element_bounds(t, &k, w, ref[w], &ambig, &scale);
        a->worst_ref = ref[w];
        a->worst_got = got_f32 ? (double)got_f32[w] : got_f64[w];
        int plain = isfinite(a->worst_ref) && isfinite(a->worst_got) && !(ambig > 0);
        a->worst_tol = plain ? tol : tol + ambig;
        a->worst_only_zero = st.worst_ratio == INFINITY && a->worst_ref == 0 && isfinite(a->worst_got);
    }
    a->all_zero = n > 0 && st.got_all_zero && st.ref_clearly_nonzero;
    *r = *a;
}

void compare_f32(const double *ref, const float *got, int64_t n, const tol_inputs *t, compare_result *r)
{
    compare_any(ref, got, NULL, n, t, 0, r);
}

void compare_f64(const double *ref, const double *got, int64_t n, const tol_inputs *t, compare_result *r)
{
    compare_any(ref, NULL, got, n, t, 0, r);
}

void compare_f32_loop(const double *ref, const float *got, int64_t n, const tol_inputs *t, compare_result *r)
{
    compare_any(ref, got, NULL, n, t, 1, r);
}

void compare_f64_loop(const double *ref, const double *got, int64_t n, const tol_inputs *t, compare_result *r)
{
    compare_any(ref, NULL, got, n, t, 1, r);
}
