/* The reachable range of every forward output element (conform_range.h). Each op's reason:
 *   grid_sampler_2d: bilinear and nearest weights are convex at every position, so the value at
 *     any position of the box lies in [min, max] of the taps the box reaches (border and reflection
 *     clamp the taps onto the plane; zeros padding adds 0 when a tap leaves it). Bicubic's weights
 *     sum to 1 per axis with sum |c| <= 11/8: v = mid + sum w (tap - mid), |v - mid| <= (11/8)^2
 *     half the taps' spread; past the int32 range it may sample 0 (spec 7.2).
 *   roi_align, roi_align_rotated: each sample is rule A's convex combination of its clamped taps,
 *     an empty sample counts 0, a sample within rounding of the window's edge either; the bin is
 *     the samples' sum over a fixed count, so it lies between the sums of their lows and highs
 *     over that count. A roi whose adaptive count rounding may change gets none.
 *   deformable_offsets: mask times a bilinear sample of the zero-padded plane: m [lo, hi].
 * The reach rectangles are the ones the bounds' caps use, so a range never claims less than the
 * tolerance model grants a position. */
#include "conform_range.h"
#include "ref_internal.h"

#include <math.h>
#include <stdlib.h>

static void set(ref_range *r, int64_t e, double lo, double hi, double mag)
{
    if (isnan(lo) || isnan(hi) || isnan(mag)) { lo = -INFINITY; hi = INFINITY; mag = 0; } /* a NaN tap: nothing */
    r->lo[e] = lo;
    r->hi[e] = hi;
    r->mag[e] = mag;
}

static void none(ref_range *r, int64_t e) { set(r, e, -INFINITY, INFINITY, 0); }

static double absmax(double lo, double hi) { return fmax(fabs(lo), fabs(hi)); }

/* ---- grid_sampler_2d ---------------------------------------------------------------------------- */

typedef struct {
    const ref_grid_sampler_params *p;
    const double *input, *grid;
    ref_range *r;
} grid_ctx;

static void grid_point(void *ctx, int64_t nq)
{
    const grid_ctx *x = ctx;
    const ref_grid_sampler_params *p = x->p;
    const int64_t P = p->Ho * p->Wo, n = nq / P, q = nq % P, HW = p->H * p->W;
    const double *g = x->grid + 2 * nq;
    ref_tap_rect rect;
    int past = 0;
    const int finite = isfinite(g[0]) && isfinite(g[1]);
    if (finite) ref_grid_sampler_reach(p, g, x->r->pos_rel_err, &rect, &past);
    const double s2 = REF_CUBIC_ABS_SUM * REF_CUBIC_ABS_SUM;
    for (int64_t c = 0; c < p->C; c++) {
        const int64_t e = (n * p->C + c) * P + q;
        if (!finite) { none(x->r, e); continue; } /* the spec's -100 rule: left to the tolerance */
        double lo, hi;
        ref_tap_rect_range(x->input + (n * p->C + c) * HW, p->W, 1, &rect, &lo, &hi);
        if (p->interpolation_mode != 2) { set(x->r, e, lo, hi, absmax(lo, hi)); continue; }
        double mid = 0.5 * (lo + hi), half = 0.5 * (hi - lo) * s2, mag = s2 * absmax(lo, hi);
        lo = mid - half;
        hi = mid + half;
        if (past) { lo = fmin(lo, 0); hi = fmax(hi, 0); }
        set(x->r, e, lo, hi, mag);
    }
}

void f64_grid_sampler_2d_fwd__range(const ref_grid_sampler_params *p, const double *input, const double *grid,
                                    ref_range *r)
{
    grid_ctx x = {p, input, grid, r};
    ref_parallel_for(p->N * p->Ho * p->Wo, grid_point, &x);
}

/* ---- the RoIAlign family ------------------------------------------------------------------------ */

typedef struct {
    ref_tap_rect rect;
    int maybe_empty; /* empty, or within rounding of the window's edge: 0 joins its range */
    int empty;       /* empty beyond any rounding: 0 only */
} roi_sample;

typedef struct {
    roi_sample *s;
    int64_t n, cap;
    int failed;
    int64_t H, W;
} sample_vec;

static void roi_emit(void *ctx, double y, double x, double dy, double dx)
{
    sample_vec *v = ctx;
    if (v->n == v->cap) {
        int64_t cap = v->cap ? 2 * v->cap : 64;
        roi_sample *s = v->failed ? NULL : realloc(v->s, sizeof *s * (size_t)cap);
        if (!s) { v->failed = 1; return; }
        v->s = s;
        v->cap = cap;
    }
    roi_sample *s = &v->s[v->n++];
    sample_class cls = ref_classify_sample(v->H, v->W, y, x, dy, dx);
    s->empty = cls == SAMPLE_EMPTY;
    s->maybe_empty = cls != SAMPLE_INSIDE;
    if (!s->empty) ref_tap_rect_of(v->H, v->W, y, x, dy, dx, 1, &s->rect);
}

typedef struct {
    const ref_roi_op *op;
    const double *input;
    const char *geo;
    ref_range *r;
} roi_ctx;

static int64_t roi_out_index(const ref_roi_op *op, int64_t k, int64_t c, int64_t ph, int64_t pw)
{
    if (op->nhwc) return ((k * op->PH + ph) * op->PW + pw) * op->C + c;
    return ((k * op->C + c) * op->PH + ph) * op->PW + pw;
}

/* bin (ph, pw) of roi k over every channel: the samples' ranges summed, over the count */
static void roi_bin(const roi_ctx *x, int64_t k, const ref_roi_head *h, int64_t ph, int64_t pw, sample_vec *v)
{
    const ref_roi_op *op = x->op;
    v->n = 0;
    op->bin(op->op, h, ph, pw, h->gh, h->gw, x->r->pos_rel_err, roi_emit, v);
    const double count = ref_sample_count(h->gh, h->gw);
    const int64_t HW = op->H * op->W, cs = op->nhwc ? op->C : 1;
    for (int64_t c = 0; c < op->C; c++) {
        const int64_t e = roi_out_index(op, k, c, ph, pw);
        if (v->failed) { none(x->r, e); continue; }
        const double *plane = op->nhwc ? x->input + h->b * HW * op->C + c : x->input + (h->b * op->C + c) * HW;
        double lo = 0, hi = 0, mag = 0;
        for (int64_t i = 0; i < v->n; i++) {
            const roi_sample *s = &v->s[i];
            if (s->empty) continue;
            double a, b;
            ref_tap_rect_range(plane, op->W, cs, &s->rect, &a, &b);
            /* 0 joins a range that may be empty; a NaN tap's range stays NaN (fmin and fmax would
               drop it for 0, claiming a range of [0, 0] for a sample whose value is unbounded) */
            if (s->maybe_empty && !isnan(a) && !isnan(b)) { a = fmin(a, 0); b = fmax(b, 0); }
            lo += a;
            hi += b;
            mag += absmax(a, b);
        }
        set(x->r, e, lo / count, hi / count, mag / count);
    }
}

static void roi_one(void *ctx, int64_t k)
{
    const roi_ctx *x = ctx;
    const ref_roi_op *op = x->op;
    const ref_roi_head *h = (const ref_roi_head *)(x->geo + (size_t)k * op->geo_size);
    sample_vec v = {NULL, 0, 0, 0, op->H, op->W};
    for (int64_t ph = 0; ph < op->PH; ph++)
        for (int64_t pw = 0; pw < op->PW; pw++) {
            /* a skipped roi, or one whose count rounding may change: its elements are left to the
               tolerance (the counts' alternatives sample elsewhere) */
            if (h->b < 0 || ref_counts_ambiguous(&h->cr)) {
                for (int64_t c = 0; c < op->C; c++) none(x->r, roi_out_index(op, k, c, ph, pw));
                continue;
            }
            roi_bin(x, k, h, ph, pw, &v);
        }
    free(v.s);
}

static void roi_family_range(const ref_roi_op *op, const double *input, const double *rois, ref_range *r)
{
    const int64_t n = op->K * op->C * op->PH * op->PW;
    char *geo = malloc(op->geo_size * (size_t)(op->K > 0 ? op->K : 1));
    if (!geo) {
        for (int64_t e = 0; e < n; e++) none(r, e);
        return;
    }
    for (int64_t k = 0; k < op->K; k++) op->geometry(op->op, rois + op->roi_len * k, r->pos_rel_err, geo + (size_t)k * op->geo_size);
    roi_ctx x = {op, input, geo, r};
    ref_parallel_for(op->K, roi_one, &x);
    free(geo);
}

void f64_roi_align_fwd__range(const ref_roi_align_params *p, const double *input, const double *rois, ref_range *r)
{
    const ref_roi_op op = ref_roi_align_family(p);
    roi_family_range(&op, input, rois, r);
}

void f64_roi_align_rotated_fwd__range(const ref_roi_align_rotated_params *p, const double *x, const double *rois,
                                      ref_range *r)
{
    const ref_roi_op op = ref_roi_align_rotated_family(p);
    if (!p->nhwc) {
        roi_family_range(&op, x, rois, r);
        return;
    }
    double *croi = malloc(sizeof(double) * (size_t)(6 * p->K > 0 ? 6 * p->K : 1)); /* [6, K] -> [K, 6] */
    if (croi) {
        for (int64_t k = 0; k < p->K; k++)
            for (int f = 0; f < 6; f++) croi[6 * k + f] = rois[f * p->K + k];
        roi_family_range(&op, x, croi, r);
    } else {
        for (int64_t e = 0; e < p->K * p->C * p->pooled_h * p->pooled_w; e++) none(r, e);
    }
    free(croi);
}

/* ---- deformable_offsets ------------------------------------------------------------------------- */

typedef struct {
    const ref_deformable_params *p;
    const double *x, *offsets;
    ref_range *r;
} dfm_ctx;

static void dfm_row(void *ctx, int64_t nh)
{
    const dfm_ctx *f = ctx;
    const ref_deformable_params *p = f->p;
    const int64_t K = p->kh * p->kw, cpg = p->dg > 0 ? p->C / p->dg : 0, YH = p->Ho * p->kh, YW = p->Wo * p->kw;
    const int64_t n = nh / p->Ho, ho = nh % p->Ho;
    const double *xn = f->x + n * p->H * p->W * p->C, *off_n = f->offsets + n * p->Ho * p->Wo * 3 * p->dg * K;
    for (int64_t wo = 0; wo < p->Wo; wo++)
        for (int64_t g = 0; g < p->dg; g++)
            for (int64_t i = 0; i < p->kh; i++)
                for (int64_t j = 0; j < p->kw; j++) {
                    ref_deformable_sample s;
                    ref_deformable_sample_at(p, off_n, ho, wo, g, i, j, f->r->pos_rel_err, &s);
                    const int64_t e0 = ((n * YH + ho * p->kh + i) * YW + wo * p->kw + j) * p->C;
                    const int finite = isfinite(s.py) && isfinite(s.px);
                    ref_tap_rect rect;
                    if (finite) ref_tap_rect_of(p->H, p->W, s.py, s.px, s.dy, s.dx, 0, &rect);
                    for (int64_t c = g * cpg; c < (g + 1) * cpg; c++) {
                        if (!finite) { none(f->r, e0 + c); continue; } /* spec 0 settles it: the tolerance */
                        double lo, hi;
                        ref_tap_rect_range(xn + c, p->W, p->C, &rect, &lo, &hi);
                        double a = s.m * lo, b = s.m * hi; /* NaN (0 x inf): set() gives none */
                        set(f->r, e0 + c, a < b ? a : b, a < b ? b : a, fabs(s.m) * absmax(lo, hi));
                    }
                }
}

void f64_deformable_offsets_fwd__range(const ref_deformable_params *p, const double *x, const double *offsets,
                                       ref_range *r)
{
    dfm_ctx f = {p, x, offsets, r};
    ref_parallel_for(p->N * p->Ho, dfm_row, &f);
}
