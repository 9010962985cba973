/* The zoo's kernels: a plain, independent float32 implementation of all eight ops, written from
 * ops.md in the spec's own evaluation forms (not conform's factored SIMD kernels), as another team
 * would write it. Built bug-free (build/zoo/none.so) it must pass the whole default suite; built
 * with -DZOO_BUG_ID=ZOO_<id> it carries exactly one bug of tests/zoo/zoo_bugs.h, in one op.
 * Float16 bugs are emulated by rounding intermediates to half precision (to_half). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conform_plugin.h"

enum {
    ZOO_none,
#define ZOO_BUG(id, op, what, field) ZOO_##id,
#include "zoo_bugs.h"
#undef ZOO_BUG
};
#ifndef ZOO_BUG_ID
#define ZOO_BUG_ID ZOO_none
#endif
#define BUG(id) (ZOO_BUG_ID == ZOO_##id)

/* ---- plumbing -------------------------------------------------------------------------------- */

typedef struct {
    int n;
    const conform_plugin_attr *a;
} attrs_t;

static const conform_plugin_attr *attr(const attrs_t *at, const char *name)
{
    for (int i = 0; i < at->n; i++)
        if (!strcmp(at->a[i].name, name)) return &at->a[i];
    return NULL; /* conform passes every attribute of the op, defaults filled in */
}
static int64_t attr_int(const attrs_t *at, const char *name) { return attr(at, name)->i; }
static float attr_float(const attrs_t *at, const char *name) { return (float)attr(at, name)->f; }
static const int64_t *attr_list(const attrs_t *at, const char *name) { return attr(at, name)->list; }

static int64_t numel(const conform_plugin_output *o)
{
    int64_t n = 1;
    for (int d = 0; d < o->rank; d++) n *= o->dims[d];
    return n;
}

static void zero(conform_plugin_output *o)
{
    if (o->data) memset(o->data, 0, sizeof(float) * (size_t)numel(o));
}

/* x rounded to float16 (11 significant bits, round half to even), as a float16 kernel would hold
 * it; the exponent range is not emulated (the zoo's values stay far inside it) */
static float to_half(float x)
{
    if (!isfinite(x) || x == 0) return x;
    int e;
    frexpf(x, &e);
    float scale = ldexpf(1.0f, 11 - e);
    return nearbyintf(x * scale) / scale;
}

/* the adaptive sample count of a bin of size q (ops.md 1, 3): ceil, 0 when nothing is sampled */
static int64_t adaptive_count(float q, int use_floor)
{
    if (!(q > 0) || q == INFINITY) return 0; /* NaN too; inf: its samples sample nothing (ops.md 0) */
    float c = use_floor ? floorf(q) : ceilf(q);
    return c > 1e9f ? 1000000000 : (int64_t)c;
}

/* max(v, 1) of an unaligned roi size; a NaN size stays NaN and then samples nothing (as
 * torchvision's std::max does), where fmaxf would make it 1 */
static float at_least_one(float v, int like_fmaxf)
{
    if (like_fmaxf) return fmaxf(v, 1.0f);
    return v < 1.0f ? 1.0f : v;
}

/* ---- rule A, the RoIAlign bilinear rule (ops.md A) ----------------------------------------- */

/* up to 4 (pixel index, weight) pairs of the sample (y, x) on an H x W plane; 0 when empty */
/* strict: a bit per window bound tested strictly (a bug): 1 y > -1, 2 y < H, 4 x > -1, 8 x < W */
enum { STRICT_Y_LO = 1, STRICT_Y_HI = 2, STRICT_X_LO = 4, STRICT_X_HI = 8, STRICT_ALL = 15 };
static int rule_a(int64_t H, int64_t W, float y, float x, int strict, int64_t h[4], int64_t w[4], float wt[4])
{
    int inside = ((strict & STRICT_Y_LO) ? y > -1.0f : y >= -1.0f) && ((strict & STRICT_Y_HI) ? y < (float)H : y <= (float)H) &&
                 ((strict & STRICT_X_LO) ? x > -1.0f : x >= -1.0f) && ((strict & STRICT_X_HI) ? x < (float)W : x <= (float)W);
    if (!inside) return 0;
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
    if (y0 >= H - 1) { y0 = y1 = H - 1; y = (float)y0; } else y1 = y0 + 1;
    if (x0 >= W - 1) { x0 = x1 = W - 1; x = (float)x0; } else x1 = x0 + 1;
    float ly = y - (float)y0, lx = x - (float)x0, hy = 1.0f - ly, hx = 1.0f - lx;
    h[0] = y0; w[0] = x0; wt[0] = hy * hx;
    h[1] = y0; w[1] = x1; wt[1] = hy * lx;
    h[2] = y1; w[2] = x0; wt[2] = ly * hx;
    h[3] = y1; w[3] = x1; wt[3] = ly * lx;
    return 4;
}

/* ---- roi_align and roi_align_v2_backward (ops.md 1, 2) ------------------------------------- */

typedef struct {
    int64_t B, C, H, W, K, PH, PW, sr;
    float s;
    int aligned, backward;
    float plus; /* roi_end_mode 1: the roi ends one image pixel further out, (x2 + 1, y2 + 1) */
} roi_params;

/* the batch image of a roi, or -1 when the roi is skipped */
static int64_t roi_batch(const roi_params *p, float v)
{
    float b = BUG(ra_batch_rounded) && !p->backward ? roundf(v) : BUG(rb_batch_truncated) && p->backward ? truncf(v) : floorf(v);
    if (!isfinite(b)) return -1;
    if (BUG(rb_oob_batch_clamped) && p->backward) return b < 0 ? 0 : b >= (float)p->B ? p->B - 1 : (int64_t)b;
    return b >= 0 && b < (float)p->B ? (int64_t)b : -1;
}

/* forward (out) or backward (grad_in from grad_out), one roi after another */
static void roi_align(const roi_params *p, const float *rois, const float *in, float *out, const float *grad_out,
                      float *grad_in)
{
    const int fwd = !p->backward;
    float off = p->aligned && !(BUG(ra_aligned_ignored) && fwd) ? 0.5f : 0.0f;
    for (int64_t k = 0; k < p->K; k++) {
        const float *r = rois + 5 * k;
        int64_t b = roi_batch(p, r[0]);
        float sx = r[1] * p->s - off, sy = r[2] * p->s - off, ex = (r[3] + p->plus) * p->s - off, ey = (r[4] + p->plus) * p->s - off;
        float rw = ex - sx, rh = ey - sy;
        if (!p->aligned && !(BUG(ra_no_min_size) && fwd)) {
            rw = at_least_one(rw, BUG(ra_nan_size_fmax) && fwd);
            rh = at_least_one(rh, BUG(ra_nan_size_fmax) && fwd);
        }
        float bin_h = rh / (float)p->PH, bin_w = rw / (float)p->PW;
        int floor_count = BUG(ra_adaptive_floor) && fwd;
        int64_t gh = p->sr > 0 ? p->sr : adaptive_count(rh / (float)p->PH, floor_count);
        int64_t gw = p->sr > 0 ? p->sr : adaptive_count(rw / (float)p->PW, floor_count);
        float count = gh * gw > 1 ? (float)(gh * gw) : 1.0f;
        if (BUG(rb_count_not_divided) && !fwd) count = 1.0f;
        for (int64_t c = 0; c < p->C; c++) {
            int64_t plane = (b * p->C + c) * p->H * p->W;
            for (int64_t ph = 0; ph < p->PH; ph++)
                for (int64_t pw = 0; pw < p->PW; pw++) {
                    int64_t o = ((k * p->C + c) * p->PH + ph) * p->PW + pw;
                    float acc = 0;
                    for (int64_t iy = 0; b >= 0 && iy < gh; iy++)
                        for (int64_t ix = 0; ix < gw; ix++) {
                            float y = sy + (float)ph * bin_h + ((float)iy + 0.5f) * bin_h / (float)gh;
                            float x = sx + (float)pw * bin_w + ((float)ix + 0.5f) * bin_w / (float)gw;
                            int64_t hh[4], ww[4];
                            float wt[4];
                            int n = rule_a(p->H, p->W, y, x, BUG(ra_bounds_exclusive) && fwd ? STRICT_ALL : 0, hh, ww, wt);
                            if (!n && fwd && BUG(ra_empty_reads_origin)) acc += 0.0f * in[plane]; /* pos 0, weight 0 */
                            for (int t = 0; t < n; t++) {
                                int64_t at = plane + hh[t] * p->W + ww[t];
                                if (fwd) acc += wt[t] * in[at];
                                else grad_in[at] += grad_out[o] * wt[t] / count;
                            }
                        }
                    if (fwd) out[o] = acc / count;
                }
        }
    }
}

static int run_roi_align(const char *op, const attrs_t *at, const conform_plugin_input *in, conform_plugin_output *out)
{
    roi_params p;
    p.s = attr_float(at, "spatial_scale");
    p.sr = attr_int(at, "sampling_ratio");
    p.aligned = (int)attr_int(at, "aligned");
    /* roi_end_mode (docs/ops/roi_align.md): -1 not given; 0 unaligned; 1 unaligned, ends + 1; 2, 3 aligned */
    int64_t end_mode = attr_int(at, "roi_end_mode");
    if (end_mode >= 0) p.aligned = end_mode >= 2;
    p.plus = end_mode == 1 ? 1.0f : 0.0f;
    p.K = in[1].dims[0];
    p.backward = strcmp(op, "roi_align") != 0;
    if (!p.backward) {
        p.B = in[0].dims[0]; p.C = in[0].dims[1]; p.H = in[0].dims[2]; p.W = in[0].dims[3];
        p.PH = attr_int(at, "pooled_h");
        p.PW = attr_int(at, "pooled_w");
        roi_align(&p, in[1].data, in[0].data, out[0].data, NULL, NULL);
        return 0;
    }
    const int64_t *shape = attr_list(at, "input_shape");
    p.B = shape[0]; p.C = shape[1]; p.H = shape[2]; p.W = shape[3];
    p.PH = attr_int(at, "pooled_height");
    p.PW = attr_int(at, "pooled_width");
    if (BUG(rb_pooled_swapped)) { int64_t t = p.PH; p.PH = p.PW; p.PW = t; }
    zero(&out[0]);
    roi_align(&p, in[1].data, NULL, NULL, in[0].data, out[0].data);
    return 0;
}

/* ---- roi_align_rotated and roi_align_rotated_grad (ops.md 3, 4) ---------------------------- */

typedef struct {
    int64_t B, C, H, W, K, PH, PW, sr;
    float s;
    int aligned, clockwise, nhwc, backward;
} rot_params;

static int64_t feature_at(const rot_params *p, int64_t b, int64_t c, int64_t h, int64_t w)
{
    int nhwc = p->nhwc && !(BUG(rg_nhwc_ignored) && p->backward);
    return nhwc ? ((b * p->H + h) * p->W + w) * p->C + c : ((b * p->C + c) * p->H + h) * p->W + w;
}

static int64_t bin_at(const rot_params *p, int64_t r, int64_t c, int64_t ph, int64_t pw)
{
    return p->nhwc ? ((r * p->PH + ph) * p->PW + pw) * p->C + c : ((r * p->C + c) * p->PH + ph) * p->PW + pw;
}

/* field f (batch, cx, cy, w, h, angle) of roi r: rois are [n,6] (NCHW) or [6,n] (NHWC) */
static float roi_field(const rot_params *p, const float *rois, int64_t r, int f)
{
    int field_major = p->nhwc && !(BUG(rr_rois_n6) && !p->backward);
    return field_major ? rois[f * p->K + r] : rois[r * 6 + f];
}

static float f16_if(int bug, float v) { return bug ? to_half(v) : v; }

/* the window bounds a rotated bug tests strictly, forward or backward */
static int rotated_strict(int fwd)
{
    if (fwd) return (BUG(rr_strict_y_lo) ? STRICT_Y_LO : 0) | (BUG(rr_strict_y_hi) ? STRICT_Y_HI : 0) |
                    (BUG(rr_strict_x_lo) ? STRICT_X_LO : 0) | (BUG(rr_strict_x_hi) ? STRICT_X_HI : 0);
    return (BUG(rg_strict_y_lo) ? STRICT_Y_LO : 0) | (BUG(rg_strict_y_hi) ? STRICT_Y_HI : 0) |
           (BUG(rg_strict_x_lo) ? STRICT_X_LO : 0) | (BUG(rg_strict_x_hi) ? STRICT_X_HI : 0);
}

static void roi_align_rotated(const rot_params *p, const float *rois, const float *x, float *y, const float *x_grad,
                              float *y_grad)
{
    const int fwd = !p->backward, half = BUG(rr_coords_f16) && fwd;
    float off = p->aligned ? 0.5f : 0.0f;
    for (int64_t r = 0; r < p->K; r++) {
        float bv = BUG(rg_batch_rounded_even) && !fwd ? rintf(roi_field(p, rois, r, 0)) : floorf(roi_field(p, rois, r, 0));
        int64_t b = isfinite(bv) && bv >= 0 && bv < (float)p->B ? (int64_t)bv : -1;
        float cx = roi_field(p, rois, r, 1) * p->s - off, cy = roi_field(p, rois, r, 2) * p->s - off;
        float wr = roi_field(p, rois, r, 3) * p->s, hr = roi_field(p, rois, r, 4) * p->s;
        float angle = roi_field(p, rois, r, 5);
        if (BUG(rr_angle_degrees) && fwd) angle = angle * 3.14159265f / 180.0f;
        int clockwise = p->clockwise;
        if (BUG(rr_clockwise_inverted) && fwd) clockwise = !clockwise;
        if (BUG(rg_clockwise_ignored) && !fwd) clockwise = 0;
        float theta = clockwise ? -angle : angle;
        if (!p->aligned) {
            wr = at_least_one(wr, 0);
            hr = at_least_one(hr, 0);
        }
        float bin_h = hr / (float)p->PH, bin_w = wr / (float)p->PW;
        int64_t gh = p->sr > 0 ? p->sr : adaptive_count(hr / (float)p->PH, 0);
        int64_t gw = p->sr > 0 ? p->sr : adaptive_count(wr / (float)p->PW, 0);
        float count = gh * gw > 1 ? (float)(gh * gw) : 1.0f;
        float ct = cosf(theta), st = sinf(theta);
        for (int64_t c = 0; c < p->C; c++)
            for (int64_t ph = 0; ph < p->PH; ph++)
                for (int64_t pw = 0; pw < p->PW; pw++) {
                    int64_t o = bin_at(p, r, c, ph, pw);
                    float acc = 0;
                    for (int64_t iy = 0; b >= 0 && iy < gh; iy++)
                        for (int64_t ix = 0; ix < gw; ix++) {
                            float yy = f16_if(half, -hr / 2 + (float)ph * bin_h + ((float)iy + 0.5f) * bin_h / (float)gh);
                            float xx = f16_if(half, -wr / 2 + (float)pw * bin_w + ((float)ix + 0.5f) * bin_w / (float)gw);
                            float sy = f16_if(half, yy * ct - xx * st + cy), sx = f16_if(half, yy * st + xx * ct + cx);
                            int64_t hh[4], ww[4];
                            float wt[4];
                            int n = rule_a(p->H, p->W, sy, sx, rotated_strict(fwd), hh, ww, wt);
                            for (int t = 0; t < n; t++) {
                                int64_t at = feature_at(p, b, c, hh[t], ww[t]);
                                if (fwd) acc += wt[t] * x[at];
                                else y_grad[at] += x_grad[o] * wt[t] / count;
                            }
                        }
                    if (fwd) y[o] = acc / count;
                }
    }
}

static int run_roi_align_rotated(const char *op, const attrs_t *at, const conform_plugin_input *in,
                                 conform_plugin_output *out)
{
    rot_params p;
    p.s = attr_float(at, "spatial_scale");
    p.sr = attr_int(at, "sampling_ratio");
    p.PH = attr_int(at, "pooled_h");
    p.PW = attr_int(at, "pooled_w");
    p.aligned = (int)attr_int(at, "aligned");
    p.clockwise = (int)attr_int(at, "clockwise");
    p.nhwc = !strcmp(attr(at, "data_format")->s, "NHWC");
    p.K = in[1].dims[p.nhwc ? 1 : 0];
    p.backward = strcmp(op, "roi_align_rotated") != 0;
    const int64_t *d = p.backward ? attr_list(at, "y_grad_shape") : in[0].dims;
    p.B = d[0];
    p.C = d[p.nhwc ? 3 : 1];
    p.H = d[p.nhwc ? 1 : 2];
    p.W = d[p.nhwc ? 2 : 3];
    if (!p.backward) {
        roi_align_rotated(&p, in[1].data, in[0].data, out[0].data, NULL, NULL);
        return 0;
    }
    if (BUG(rg_pooled_swapped)) { int64_t t = p.PH; p.PH = p.PW; p.PW = t; }
    zero(&out[0]);
    roi_align_rotated(&p, in[1].data, NULL, NULL, in[0].data, out[0].data);
    return 0;
}

/* ---- grid_sampler_2d and grid_sampler_2d_backward (ops.md 7) -------------------------------- */

#define CUBIC_A (-0.75f)

typedef struct {
    int64_t N, C, H, W, Ho, Wo;
    int interp, pad, ac, backward;
} gs_params;

/* 7.1: the pixel coordinate of a normalised one, and d pixel / d normalised */
static float unnormalize(float c, int64_t S, int ac, float *mult)
{
    if (ac) {
        *mult = (float)(S - 1) / 2.0f;
        return (c + 1.0f) / 2.0f * (float)(S - 1);
    }
    *mult = (float)S / 2.0f;
    return ((c + 1.0f) * (float)S - 1.0f) / 2.0f;
}

static float clip_coord(const gs_params *p, float i, int64_t S, float *d)
{
    if (BUG(gb_border_grad_at_clip) && p->backward) { /* strict tests: the clip points keep d = 1 */
        if (i < 0) { *d = 0; return 0; }
        if (i > (float)(S - 1)) { *d = 0; return (float)(S - 1); }
        *d = 1;
        return i;
    }
    if (i <= 0) { *d = 0; return 0; }
    if (i >= (float)(S - 1)) { *d = 0; return (float)(S - 1); }
    *d = 1;
    return i;
}

static float reflect_coord(const gs_params *p, float i, int64_t S, float *dr)
{
    float lo = p->ac ? 0.0f : -1.0f, hi = p->ac ? 2.0f * (float)(S - 1) : 2.0f * (float)S - 1.0f;
    if (lo == hi) { *dr = 0; return 0; }
    float mn = lo / 2.0f, span = (hi - lo) / 2.0f;
    if (BUG(gf_reflect_once) && !p->backward) { /* one mirror at each end, then whatever is left */
        float top = mn + span;
        *dr = 1;
        if (i < mn) { *dr = -1; return 2 * mn - i; }
        if (i > top) { *dr = -1; return 2 * top - i; }
        return i;
    }
    float t = i - mn, sgn = t < 0 ? -1.0f : 1.0f;
    t = fabsf(t);
    float extra = fmodf(t, span), flips = floorf(t / span);
    if (fmodf(flips, 2.0f) == 0) { *dr = sgn; return extra + mn; }
    *dr = -sgn;
    return span - extra + mn;
}

/* 7.1 padding, then 7.2: a coordinate that is not finite or beyond int32 becomes -100 */
static float pad_coord(const gs_params *p, float i, int64_t S, float *d)
{
    *d = 1;
    if (p->pad == 2) {
        float dr, dc;
        i = reflect_coord(p, i, S, &dr);
        i = clip_coord(p, i, S, &dc);
        *d = dr * dc;
    } else if (p->pad == 1) {
        i = clip_coord(p, i, S, d);
    }
    if (!isfinite(i) || i < -2147483648.0f || i > 2147483647.0f) { i = -100; *d = 0; }
    return i;
}

static int inside(int64_t v, int64_t S) { return v >= 0 && v < S; }

/* 7.5: [cc2(t+1), cc1(t), cc1(1-t), cc2(2-t)] and their derivatives in the spec's forms */
static float cc1(float t) { return ((CUBIC_A + 2) * t - (CUBIC_A + 3)) * t * t + 1; }
static float cc2(float t) { return ((CUBIC_A * t - 5 * CUBIC_A) * t + 8 * CUBIC_A) * t - 4 * CUBIC_A; }
static void cubic_coeffs(float t, float c[4], float g[4])
{
    c[0] = cc2(t + 1); c[1] = cc1(t); c[2] = cc1(1 - t); c[3] = cc2(2 - t);
    float x0 = -1 - t, x1 = -t, x2 = 1 - t, x3 = 2 - t;
    g[0] = (-3 * CUBIC_A * x0 - 10 * CUBIC_A) * x0 - 8 * CUBIC_A;
    g[1] = (-3 * (CUBIC_A + 2) * x1 - 2 * (CUBIC_A + 3)) * x1;
    g[2] = (3 * (CUBIC_A + 2) * x2 - 2 * (CUBIC_A + 3)) * x2;
    g[3] = (3 * CUBIC_A * x3 - 10 * CUBIC_A) * x3 + 8 * CUBIC_A;
}

static void add_input_grad(const gs_params *p, float *g, float v)
{
    *g += v;
    if (BUG(gb_input_grad_f16_atomic) && p->backward) *g = to_half(*g);
}

/* one output point (n, h, w): forward value of every channel, or its backward */
typedef struct {
    const float *input, *grad_output;
    float *output, *input_grad;
    float gix, giy, mx, my;
} gs_point;

static void gs_bilinear(const gs_params *p, int64_t n, int64_t h, int64_t w, float ix, float iy, gs_point *q)
{
    float fx = floorf(ix), fy = floorf(iy);
    int64_t x_nw = (int64_t)fx, y_nw = (int64_t)fy;
    float x_se = fx + 1, y_se = fy + 1, x_sw = fx, y_sw = fy + 1, x_ne = fx + 1, y_ne = fy;
    float wgt[4] = {(x_se - ix) * (y_se - iy), (ix - x_sw) * (y_sw - iy), (x_ne - ix) * (iy - y_ne),
                    (ix - fx) * (iy - fy)};
    int64_t cx[4] = {x_nw, x_nw + 1, x_nw, x_nw + 1}, cy[4] = {y_nw, y_nw, y_nw + 1, y_nw + 1};
    for (int64_t c = 0; c < p->C; c++) {
        const float *plane = q->input + (n * p->C + c) * p->H * p->W;
        int64_t o = ((n * p->C + c) * p->Ho + h) * p->Wo + w;
        float acc = 0, g = p->backward ? q->grad_output[o] : 0;
        float v[4];
        for (int k = 0; k < 4; k++) {
            int in = inside(cx[k], p->W) && inside(cy[k], p->H);
            v[k] = in ? plane[cy[k] * p->W + cx[k]] : 0;
            if (!in) continue;
            if (!p->backward) acc += wgt[k] * v[k];
            else if (q->input_grad)
                add_input_grad(p, q->input_grad + (n * p->C + c) * p->H * p->W + cy[k] * p->W + cx[k], wgt[k] * g);
        }
        if (!p->backward) { q->output[o] = acc; continue; }
        q->gix -= v[0] * (y_se - iy) * g; q->giy -= v[0] * (x_se - ix) * g;
        q->gix += v[1] * (y_sw - iy) * g; q->giy -= v[1] * (ix - x_sw) * g;
        q->gix -= v[2] * (iy - y_ne) * g; q->giy += v[2] * (x_ne - ix) * g;
        q->gix += v[3] * (iy - fy) * g;   q->giy += v[3] * (ix - fx) * g;
    }
}

static void gs_nearest(const gs_params *p, int64_t n, int64_t h, int64_t w, float ix, float iy, gs_point *q)
{
    int half_away = BUG(gf_nearest_half_away) && !p->backward;
    int64_t x = (int64_t)(half_away ? roundf(ix) : rintf(ix)), y = (int64_t)(half_away ? roundf(iy) : rintf(iy));
    int in = inside(x, p->W) && inside(y, p->H);
    for (int64_t c = 0; c < p->C; c++) {
        int64_t o = ((n * p->C + c) * p->Ho + h) * p->Wo + w, at = (n * p->C + c) * p->H * p->W + y * p->W + x;
        if (!p->backward) q->output[o] = in ? q->input[at] : 0;
        else if (in && q->input_grad) add_input_grad(p, q->input_grad + at, q->grad_output[o]);
    }
    q->mx = q->my = 0; /* nearest has no grid gradient */
}

static void gs_bicubic(const gs_params *p, int64_t n, int64_t h, int64_t w, float ix, float iy, gs_point *q)
{
    if (!isfinite(ix) || !isfinite(iy) || fabsf(ix) > 2147483647.0f || fabsf(iy) > 2147483647.0f) {
        if (!p->backward)
            for (int64_t c = 0; c < p->C; c++) q->output[((n * p->C + c) * p->Ho + h) * p->Wo + w] = 0;
        return;
    }
    float fx = floorf(ix), fy = floorf(iy), xc[4], xg[4], yc[4], yg[4];
    cubic_coeffs(ix - fx, xc, xg);
    cubic_coeffs(iy - fy, yc, yg);
    int64_t tx[4], ty[4];
    for (int k = 0; k < 4; k++) {
        float d;
        tx[k] = (int64_t)pad_coord(p, fx - 1 + (float)k, p->W, &d);
        ty[k] = (int64_t)pad_coord(p, fy - 1 + (float)k, p->H, &d);
    }
    for (int64_t c = 0; c < p->C; c++) {
        const float *plane = q->input + (n * p->C + c) * p->H * p->W;
        int64_t o = ((n * p->C + c) * p->Ho + h) * p->Wo + w;
        float acc = 0, g = p->backward ? q->grad_output[o] : 0;
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 4; i++) {
                if (!inside(tx[i], p->W) || !inside(ty[j], p->H)) continue;
                float v = plane[ty[j] * p->W + tx[i]];
                if (!p->backward) { acc += v * xc[i] * yc[j]; continue; }
                if (q->input_grad)
                    add_input_grad(p, q->input_grad + (n * p->C + c) * p->H * p->W + ty[j] * p->W + tx[i], g * xc[i] * yc[j]);
                q->gix -= v * xg[i] * yc[j] * g;
                q->giy -= v * yg[j] * xc[i] * g;
            }
        if (!p->backward) q->output[o] = acc;
    }
}

/* A bug: the padding applied to the two taps' indices, not to the coordinate, and the weights
 * x1 - x, x - x0 taken from the unpadded float32 coordinate. Border gives the same values while
 * x has a fraction; past 2^24 floorf(x) + 1 rounds to x or x + 2 and the weights to 0 or 2. */
static void gs_bilinear_taps_padded(const gs_params *p, int64_t n, int64_t h, int64_t w, float ix, float iy, gs_point *q)
{
    float fx = floorf(ix), fy = floorf(iy), x1 = fx + 1, y1 = fy + 1, d;
    float wx[2] = {x1 - ix, ix - fx}, wy[2] = {y1 - iy, iy - fy};
    int64_t tx[2] = {(int64_t)pad_coord(p, fx, p->W, &d), (int64_t)pad_coord(p, x1, p->W, &d)};
    int64_t ty[2] = {(int64_t)pad_coord(p, fy, p->H, &d), (int64_t)pad_coord(p, y1, p->H, &d)};
    for (int64_t c = 0; c < p->C; c++) {
        const float *plane = q->input + (n * p->C + c) * p->H * p->W;
        float acc = 0;
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++)
                if (inside(tx[i], p->W) && inside(ty[j], p->H)) acc += wy[j] * wx[i] * plane[ty[j] * p->W + tx[i]];
        q->output[((n * p->C + c) * p->Ho + h) * p->Wo + w] = acc;
    }
}

static void grid_sampler(const gs_params *p, const float *grid, gs_point *q, float *grid_grad)
{
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t h = 0; h < p->Ho; h++)
            for (int64_t w = 0; w < p->Wo; w++) {
                const float *g = grid + ((n * p->Ho + h) * p->Wo + w) * 2;
                float ix = unnormalize(g[0], p->W, p->ac, &q->mx), iy = unnormalize(g[1], p->H, p->ac, &q->my);
                q->gix = q->giy = 0;
                if (p->interp == 2) {
                    gs_bicubic(p, n, h, w, ix, iy, q);
                } else {
                    float dx, dy;
                    if (BUG(gf_taps_padded_f32) && !p->backward && p->interp == 0 && p->pad) {
                        gs_bilinear_taps_padded(p, n, h, w, ix, iy, q);
                        continue;
                    }
                    ix = pad_coord(p, ix, p->W, &dx);
                    iy = pad_coord(p, iy, p->H, &dy);
                    q->mx *= dx;
                    q->my *= dy;
                    if (p->interp == 1) gs_nearest(p, n, h, w, ix, iy, q);
                    else gs_bilinear(p, n, h, w, ix, iy, q);
                }
                if (!grid_grad) continue;
                float gx = q->gix * q->mx, gy = q->giy * q->my;
                if (BUG(gb_grid_grad_no_mult)) { gx = q->mx != 0 ? q->gix : 0; gy = q->my != 0 ? q->giy : 0; }
                if (BUG(gb_grid_grad_xy_swapped)) { float t = gx; gx = gy; gy = t; }
                float *gg = grid_grad + ((n * p->Ho + h) * p->Wo + w) * 2;
                gg[0] = p->interp == 1 ? 0 : gx;
                gg[1] = p->interp == 1 ? 0 : gy;
            }
}

static int run_grid_sampler(const char *op, const attrs_t *at, const conform_plugin_input *in,
                            conform_plugin_output *out)
{
    gs_params p;
    p.backward = strcmp(op, "grid_sampler_2d") != 0;
    const conform_plugin_input *x = &in[p.backward ? 1 : 0], *grid = &in[p.backward ? 2 : 1];
    p.N = x->dims[0]; p.C = x->dims[1]; p.H = x->dims[2]; p.W = x->dims[3];
    p.Ho = grid->dims[1]; p.Wo = grid->dims[2];
    p.interp = (int)attr_int(at, "interpolation_mode");
    p.pad = (int)attr_int(at, "padding_mode");
    p.ac = (int)attr_int(at, "align_corners");
    if (BUG(gf_align_corners_flipped) && !p.backward) p.ac = !p.ac;
    if (BUG(gf_padding_swapped) && !p.backward && p.pad) p.pad = 3 - p.pad;
    gs_point q = {x->data, NULL, NULL, NULL, 0, 0, 0, 0};
    if (!p.backward) {
        q.output = out[0].data;
        grid_sampler(&p, grid->data, &q, NULL);
        return 0;
    }
    q.grad_output = in[0].data;
    q.input_grad = out[0].data; /* NULL when output_mask[0] is false */
    zero(&out[0]);
    grid_sampler(&p, grid->data, &q, out[1].data);
    return 0;
}

/* ---- deformable_offsets and deformable_offsets_grad (ops.md 5, 6) -------------------------- */

typedef struct {
    int64_t N, H, W, C, Ho, Wo, kh, kw, sh, sw, dh, dw, pt, pl, dg;
    int backward;
} df_params;

static void read_df_params(const char *op, const attrs_t *at, const conform_plugin_input *x,
                          const conform_plugin_input *offsets, df_params *p)
{
    p->backward = strcmp(op, "deformable_offsets") != 0;
    p->N = x->dims[0]; p->H = x->dims[1]; p->W = x->dims[2]; p->C = x->dims[3];
    p->Ho = offsets->dims[1]; p->Wo = offsets->dims[2];
    const int64_t *k = attr_list(at, "ksize"), *s = attr_list(at, "strides"), *d = attr_list(at, "dilations");
    const int64_t *pads = attr_list(at, "pads");
    int nchw = !strcmp(attr(at, "data_format")->s, "NCHW");
    if (BUG(df_strides_format_ignored) && !p->backward) nchw = 1;
    p->kh = k[0]; p->kw = k[1];
    if (BUG(df_ksize_swapped) && !p->backward) { p->kh = k[1]; p->kw = k[0]; }
    p->sh = s[nchw ? 2 : 1]; p->sw = s[nchw ? 3 : 2];
    p->dh = d[nchw ? 2 : 1]; p->dw = d[nchw ? 3 : 2];
    if (BUG(dg_dilations_swapped) && p->backward) { int64_t t = p->dh; p->dh = p->dw; p->dw = t; }
    p->pt = pads[0]; p->pl = pads[2];
    if (BUG(df_pads_order) && !p->backward) { p->pt = pads[2]; p->pl = pads[0]; }
    p->dg = attr_int(at, "deformable_groups");
}

/* one sample: position, mask, the corner cell and its weights */
typedef struct {
    float py, px, m, lh, lw, hh, hw;
    int64_t h0, w0;
    int finite;
} df_sample;

/* floor of a finite position, clamped where every corner is outside anyway (fits an int64) */
static int64_t cell_of(float v, int64_t n)
{
    float f = floorf(v);
    return f < -3.0f ? -3 : f > (float)n + 2.0f ? n + 2 : (int64_t)f;
}

static df_sample df_sample_at(const df_params *p, const float *o, int64_t ho, int64_t wo, int64_t g, int64_t i,
                              int64_t j)
{
    const int64_t K = p->kh * p->kw, dgK = p->dg * K, k = g * K + i * p->kw + j;
    int swap = BUG(df_xy_swapped) && !p->backward, half = BUG(df_coords_f16) && !p->backward;
    float bx = (float)(wo * p->sw - p->pl + j * p->dw), by = (float)(ho * p->sh - p->pt + i * p->dh);
    float ox = o[(swap ? 1 : 0) * dgK + k], oy = o[(swap ? 0 : 1) * dgK + k];
    df_sample s;
    s.px = half ? to_half(to_half(bx) + to_half(ox)) : bx + ox;
    s.py = half ? to_half(to_half(by) + to_half(oy)) : by + oy;
    s.m = o[2 * dgK + k];
    s.finite = isfinite(s.px) && isfinite(s.py);
    if (!s.finite) return s;
    s.h0 = cell_of(s.py, p->H);
    s.w0 = cell_of(s.px, p->W);
    s.lh = s.py - floorf(s.py); s.lw = s.px - floorf(s.px);
    s.hh = 1 - s.lh; s.hw = 1 - s.lw;
    return s;
}

/* V(h, w) of ops.md 5: the pixel, 0 outside the plane (hmax, wmax: the bounds tested) */
static float V(const df_params *p, const float *xn, int64_t h, int64_t w, int64_t c, int64_t hmax, int64_t wmax)
{
    if (h >= 0 && h < hmax && w >= 0 && w < wmax) return xn[(h * p->W + w) * p->C + c];
    if (BUG(df_corner_clamped_read) && !p->backward) { /* weight 0 times the clamped pixel */
        int64_t hc = h < 0 ? 0 : h >= p->H ? p->H - 1 : h, wc = w < 0 ? 0 : w >= p->W ? p->W - 1 : w;
        return 0.0f * xn[(hc * p->W + wc) * p->C + c];
    }
    return 0.0f;
}

static void deformable_fwd(const df_params *p, const float *x, const float *off, float *y)
{
    const int64_t K = p->kh * p->kw, cpg = p->C / p->dg, YH = p->Ho * p->kh, YW = p->Wo * p->kw;
    /* the far corners' bounds: H, W; the bug tests them against H-1, W-1 */
    const int64_t hfar = BUG(df_taps_dropped_edge) ? p->H - 1 : p->H, wfar = BUG(df_taps_dropped_edge) ? p->W - 1 : p->W;
    for (int64_t n = 0; n < p->N; n++) {
        const float *xn = x + n * p->H * p->W * p->C;
        for (int64_t ho = 0; ho < p->Ho; ho++)
            for (int64_t wo = 0; wo < p->Wo; wo++) {
                const float *o = off + ((n * p->Ho + ho) * p->Wo + wo) * 3 * p->dg * K;
                for (int64_t g = 0; g < p->dg; g++)
                    for (int64_t i = 0; i < p->kh; i++)
                        for (int64_t j = 0; j < p->kw; j++) {
                            df_sample s = df_sample_at(p, o, ho, wo, g, i, j);
                            float *ye = y + ((n * YH + ho * p->kh + i) * YW + wo * p->kw + j) * p->C;
                            for (int64_t c = g * cpg; c < (g + 1) * cpg; c++) {
                                if (!s.finite) { ye[c] = 0; continue; } /* spec 0: samples nothing */
                                float v1 = V(p, xn, s.h0, s.w0, c, p->H, p->W), v2 = V(p, xn, s.h0, s.w0 + 1, c, p->H, wfar);
                                float v3 = V(p, xn, s.h0 + 1, s.w0, c, hfar, p->W);
                                float v4 = V(p, xn, s.h0 + 1, s.w0 + 1, c, hfar, wfar);
                                ye[c] = s.m * (s.hh * s.hw * v1 + s.hh * s.lw * v2 + s.lh * s.hw * v3 + s.lh * s.lw * v4);
                            }
                        }
            }
    }
}

static void add_grad_x(float *g, float v)
{
    *g += v;
    if (BUG(dg_grad_x_f16_atomic)) *g = to_half(*g);
}

static void deformable_bwd(const df_params *p, const float *grad, const float *x, const float *off, float *grad_x,
                           float *grad_off)
{
    const int64_t K = p->kh * p->kw, dgK = p->dg * K, cpg = p->C / p->dg, YH = p->Ho * p->kh, YW = p->Wo * p->kw;
    for (int64_t n = 0; n < p->N; n++) {
        const float *xn = x + n * p->H * p->W * p->C;
        float *gxn = grad_x + n * p->H * p->W * p->C;
        for (int64_t ho = 0; ho < p->Ho; ho++)
            for (int64_t wo = 0; wo < p->Wo; wo++) {
                int64_t cell = (n * p->Ho + ho) * p->Wo + wo;
                const float *o = off + cell * 3 * dgK;
                float *go = grad_off + cell * 3 * dgK;
                for (int64_t g = 0; g < p->dg; g++)
                    for (int64_t i = 0; i < p->kh; i++)
                        for (int64_t j = 0; j < p->kw; j++) {
                            const int64_t k = g * K + i * p->kw + j;
                            df_sample s = df_sample_at(p, o, ho, wo, g, i, j);
                            int window = s.finite && s.py > -1 && s.py < (float)p->H && s.px > -1 && s.px < (float)p->W;
                            if (BUG(dg_window_open)) window = s.finite && s.py >= -1 && s.py <= (float)p->H &&
                                                              s.px >= -1 && s.px <= (float)p->W;
                            if (!window) continue;
                            const float *G = grad + ((n * YH + ho * p->kh + i) * YW + wo * p->kw + j) * p->C;
                            const int64_t hs[4] = {s.h0, s.h0, s.h0 + 1, s.h0 + 1}, ws[4] = {s.w0, s.w0 + 1, s.w0, s.w0 + 1};
                            const float wt[4] = {s.hh * s.hw, s.hh * s.lw, s.lh * s.hw, s.lh * s.lw};
                            float gy = 0, gx = 0, gm = 0;
                            for (int64_t c = g * cpg; c < (g + 1) * cpg; c++) {
                                float v[4];
                                for (int t = 0; t < 4; t++) {
                                    v[t] = V(p, xn, hs[t], ws[t], c, p->H, p->W);
                                    if (hs[t] >= 0 && hs[t] < p->H && ws[t] >= 0 && ws[t] < p->W)
                                        add_grad_x(gxn + (hs[t] * p->W + ws[t]) * p->C + c, G[c] * s.m * wt[t]);
                                }
                                float gm_c = BUG(dg_mask_ignored_offsets) ? G[c] : G[c] * s.m;
                                gy += gm_c * (s.hw * (v[2] - v[0]) + s.lw * (v[3] - v[1]));
                                gx += gm_c * (s.hh * (v[1] - v[0]) + s.lh * (v[3] - v[2]));
                                gm += G[c] * (wt[0] * v[0] + wt[1] * v[1] + wt[2] * v[2] + wt[3] * v[3]);
                            }
                            go[0 * dgK + k] = gx;
                            go[1 * dgK + k] = gy;
                            go[2 * dgK + k] = gm;
                        }
            }
    }
}

static int run_deformable(const char *op, const attrs_t *at, const conform_plugin_input *in,
                          conform_plugin_output *out)
{
    df_params p;
    int bwd = strcmp(op, "deformable_offsets") != 0;
    const conform_plugin_input *x = &in[bwd ? 1 : 0], *off = &in[bwd ? 2 : 1];
    read_df_params(op, at, x, off, &p);
    if (!bwd) {
        deformable_fwd(&p, x->data, off->data, out[0].data);
        return 0;
    }
    zero(&out[0]);
    zero(&out[1]);
    deformable_bwd(&p, in[0].data, x->data, off->data, out[0].data, out[1].data);
    return 0;
}

/* ---- the plugin ------------------------------------------------------------------------------ */

static int supports(const char *op)
{
    static const char *const ops[] = {"roi_align", "roi_align_v2_backward", "roi_align_rotated", "roi_align_rotated_grad",
                                      "grid_sampler_2d", "grid_sampler_2d_backward", "deformable_offsets",
                                      "deformable_offsets_grad"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(op, ops[i])) return 1;
    return 0;
}

static int run(const char *op, int n_attrs, const conform_plugin_attr *a, int n_inputs, const conform_plugin_input *in,
               int n_outputs, conform_plugin_output *out)
{
    (void)n_inputs;
    (void)n_outputs;
    attrs_t at = {n_attrs, a};
    if (!strncmp(op, "roi_align_rotated", 17)) return run_roi_align_rotated(op, &at, in, out);
    if (!strncmp(op, "roi_align", 9)) return run_roi_align(op, &at, in, out);
    if (!strncmp(op, "grid_sampler", 12)) return run_grid_sampler(op, &at, in, out);
    if (!strncmp(op, "deformable", 10)) return run_deformable(op, &at, in, out);
    return 1;
}

#define ZOO_STR2(x) #x
#define ZOO_STR(x) ZOO_STR2(x)
static const conform_plugin plugin = {CONFORM_PLUGIN_ABI_V1, "conform zoo: " ZOO_STR(ZOO_BUG_ID), supports, run};

const conform_plugin *conform_plugin_entry(void) { return &plugin; }
