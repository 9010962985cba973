/* Rule A of the spec (RoIAlign's bilinear sampling) and the bins built of it, shared by roi_align
 * and roi_align_rotated. */
#include "ref_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ref_bilinear_rule(int64_t H, int64_t W, double y, double x, ref_bilinear *b)
{
    if (!(y >= -1.0 && y <= (double)H && x >= -1.0 && x <= (double)W)) return 0;
    if (H <= 0 || W <= 0) return 0;
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
    if (y0 >= H - 1) { y0 = y1 = H - 1; y = (double)y0; } else y1 = y0 + 1;
    if (x0 >= W - 1) { x0 = x1 = W - 1; x = (double)x0; } else x1 = x0 + 1;
    double ly = y - (double)y0, lx = x - (double)x0;
    b->y[0] = y0; b->y[1] = y1; b->wy[0] = 1.0 - ly; b->wy[1] = ly;
    b->x[0] = x0; b->x[1] = x1; b->wx[0] = 1.0 - lx; b->wx[1] = lx;
    return 1;
}

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

void ref_bilinear_rule_clamped(int64_t H, int64_t W, double y, double x, ref_bilinear *b)
{
    ref_bilinear_rule(H, W, clamp(y, -1.0, (double)H), clamp(x, -1.0, (double)W), b);
}

static sample_class axis_class(double v, double n, double d)
{
    if (v >= -1.0 + d && v <= n - d) return SAMPLE_INSIDE;
    if (v < -1.0 - d || v > n + d) return SAMPLE_EMPTY;
    return SAMPLE_AMBIGUOUS;
}

sample_class ref_classify_sample(int64_t H, int64_t W, double y, double x, double dy, double dx)
{
    if (!isfinite(y) || !isfinite(x) || H <= 0 || W <= 0) return SAMPLE_EMPTY;
    sample_class cy = axis_class(y, (double)H, dy), cx = axis_class(x, (double)W, dx);
    if (cy == SAMPLE_EMPTY || cx == SAMPLE_EMPTY) return SAMPLE_EMPTY;
    if (cy == SAMPLE_INSIDE && cx == SAMPLE_INSIDE) return SAMPLE_INSIDE;
    return SAMPLE_AMBIGUOUS;
}

void ref_local_slopes(const double *plane, int64_t H, int64_t W, const ref_bilinear *b,
                      double *sy, double *sx)
{
    double my = 0, mx = 0;
    int64_t r_lo = b->y[0] - 1 < 0 ? 0 : b->y[0] - 1, r_hi = b->y[0] + 2 > H - 1 ? H - 1 : b->y[0] + 2;
    int64_t c_lo = b->x[0] - 1 < 0 ? 0 : b->x[0] - 1, c_hi = b->x[0] + 2 > W - 1 ? W - 1 : b->x[0] + 2;
    for (int64_t r = r_lo; r <= r_hi; r++)
        for (int64_t c = c_lo; c <= c_hi; c++) {
            double v = plane[r * W + c];
            if (r < r_hi) { double d = fabs(plane[(r + 1) * W + c] - v); if (d > my) my = d; }
            if (c < c_hi) { double d = fabs(plane[r * W + c + 1] - v); if (d > mx) mx = d; }
        }
    *sy = my;
    *sx = mx;
}

void ref_neighbour_weights(const int64_t ys[2], const int64_t xs[2], const double wy[2], const double wx[2],
                           double dy, double dx, ref_pixel_fn add, void *ctx)
{
    /* the row below the cell when the sample sits within dy of its lower edge (wy[1] = ly small),
       the row above when within dy of its upper edge (wy[0] small); columns likewise */
    int64_t rows[2], cols[2];
    int nr = 0, nc = 0;
    if (wy[1] <= dy) rows[nr++] = ys[0] - 1;
    if (wy[0] <= dy) rows[nr++] = ys[1] + 1;
    if (wx[1] <= dx) cols[nc++] = xs[0] - 1;
    if (wx[0] <= dx) cols[nc++] = xs[1] + 1;
    for (int a = 0; a < nr; a++)
        for (int j = 0; j < 2; j++) add(ctx, rows[a], xs[j], (wx[j] + dx) * dy);
    for (int b = 0; b < nc; b++)
        for (int i = 0; i < 2; i++) add(ctx, ys[i], cols[b], (wy[i] + dy) * dx);
    for (int a = 0; a < nr; a++)
        for (int b = 0; b < nc; b++) add(ctx, rows[a], cols[b], dy * dx);
}

/* ---- the RoIAlign family's bins ------------------------------------------------------------- */

int64_t ref_adaptive_count(double q)
{
    if (!isfinite(q)) return 0;
    if (q > 1e9) return 1000000000; /* the harness refuses such rois before they get here */
    if (q < -1e9) return -1000000000; /* a negative count samples nothing; keep the cast defined */
    return (int64_t)ceil(q);
}

double ref_sample_count(int64_t gh, int64_t gw)
{
    double c = (double)gh * (double)gw;
    return c > 1.0 ? c : 1.0;
}

void ref_roi_sample_fwd(const double *plane, int64_t H, int64_t W, double y, double x, double dy, double dx,
                        ref_bin_acc *a)
{
    ref_bilinear r;
    sample_class cls = ref_classify_sample(H, W, y, x, dy, dx);
    int inside = ref_bilinear_rule(H, W, y, x, &r);
    if (!inside && cls == SAMPLE_AMBIGUOUS) ref_bilinear_rule_clamped(H, W, y, x, &r);
    if (!inside && cls != SAMPLE_AMBIGUOUS) return;

    double v = 0, av = 0, sy, sx;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            double t = r.wy[i] * r.wx[j] * plane[r.y[i] * W + r.x[j]];
            v += t;
            av += fabs(t);
        }
    ref_local_slopes(plane, H, W, &r, &sy, &sx);
    /* capped: a sample moving anywhere within its box stays within the range of the taps it reaches
       (at |position| near 2^24 the first-order term alone passes the plane's whole range) */
    double lo, hi;
    ref_tap_range(plane, H, W, 1, y, x, dy, dx, 1, &lo, &hi);
    double pe = fmin(ref_value_pos_err(sy, sx, dy, dx), isnan(hi - lo) ? INFINITY : hi - lo);
    /* an ambiguous sample adds 0 or a value of [lo, hi]: it changes the bin's sum by at most the
       range of {0} and the taps, of which the position term already counted pe when it is inside */
    double reach0 = isnan(hi - lo) ? INFINITY : fmax(hi, 0) - fmin(lo, 0);
    if (inside) {
        a->sum += v;
        a->abs_sum += av;
        a->n_terms += 4;
        a->pos_err += pe;
    } else if (av > 0) {
        /* outside, so ambiguous: a kernel that keeps the sample also rounds its terms, so the
           element's abs_sum and n_terms cover that branch (what a bfloat16 kernel's rounding of
           it needs) */
        a->abs_sum += av;
        a->n_terms += 4;
    }
    if (cls == SAMPLE_AMBIGUOUS) a->ambig += fmin(av + pe, inside ? fmax(reach0 - pe, 0) : reach0);
}

/* One backward sample's bounds, per distinct pixel: corners that coincide (rule A clamps both
 * corners of an axis onto its last pixel) and pixels across an edge add up before the cap. */
typedef struct {
    int64_t e[16];
    double pe[16], amb[16];
    int n;
    int64_t H, W;
} sample_pixels;

static void pixels_add(sample_pixels *s, int64_t e, double pe, double amb)
{
    int k = 0;
    while (k < s->n && s->e[k] != e) k++;
    if (k == s->n) { s->e[k] = e; s->pe[k] = s->amb[k] = 0; s->n++; }
    s->pe[k] += pe;
    s->amb[k] += amb;
}

static void pixels_add_neighbour(void *ctx, int64_t row, int64_t col, double bound)
{
    sample_pixels *s = ctx;
    if (row >= 0 && row < s->H && col >= 0 && col < s->W) pixels_add(s, row * s->W + col, bound, 0);
}

void ref_roi_sample_bwd(const ref_plane_out *o, int64_t H, int64_t W, double y, double x, double dy, double dx,
                        double go, double count, int as_alternative)
{
    ref_bilinear r;
    sample_class cls = ref_classify_sample(H, W, y, x, dy, dx);
    int inside = ref_bilinear_rule(H, W, y, x, &r);
    if (!inside && cls == SAMPLE_AMBIGUOUS) ref_bilinear_rule_clamped(H, W, y, x, &r);
    if (!inside && cls != SAMPLE_AMBIGUOUS) return;
    const int nominal = inside && !as_alternative;
    const double cap = fabs(go) / count;
    sample_pixels px = {.n = 0, .H = H, .W = W};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            int64_t e = r.y[i] * W + r.x[j];
            double t = go * r.wy[i] * r.wx[j] / count;
            double pe = cap * ref_weight_pos_err(r.wy[i], r.wx[j], dy, dx);
            if (nominal) {
                if (o->grad) o->grad[e] += t;
                if (o->abs_sum) o->abs_sum[e] += fabs(t);
                if (o->n_terms) o->n_terms[e] += 1;
            } else if (fabs(t) > 0) {
                /* a term only another branch adds (another sample count, or the sample kept:
                   outside, so ambiguous) is rounded by a kernel on that branch: abs_sum and
                   n_terms cover it too */
                if (o->abs_sum) o->abs_sum[e] += fabs(t);
                if (o->n_terms) o->n_terms[e] += 1;
            }
            pixels_add(&px, e, nominal ? pe : 0, as_alternative || cls == SAMPLE_AMBIGUOUS ? fabs(t) + pe : 0);
        }
    /* pixels across a cell edge the float twin may reach */
    if (nominal && isfinite(cap)) ref_neighbour_weights(r.y, r.x, r.wy, r.wx, dy, dx, pixels_add_neighbour, &px);
    /* capped per pixel: the weights a sample gives one pixel sum to a number in [0, 1] on every
       branch (coinciding corners included), so the sample moves that pixel's term by at most
       |go| / count; the position term takes its share first, the ambiguity the rest */
    for (int k = 0; k < px.n; k++) {
        double pe = fmin(px.pe[k], cap), amb = fmin(px.amb[k], nominal ? fmax(cap - pe, 0) : cap);
        if (o->pos_err && pe > 0) o->pos_err[px.e[k]] += pe;
        if (o->ambig && amb > 0) o->ambig[px.e[k]] += amb;
    }
}

/* ---- the backward of the RoIAlign family: planes of the gradient, rois in order ---------------- */

typedef struct {
    const ref_roi_bwd_op *op;
    const char *geo; /* K geometries of op->geo_size bytes */
    const double *grad_output;
    double *grad, *bt[4];
    int with_bounds;
    double pre;
} roi_bwd_ctx;

/* Plane (b, c) of the gradient (zeroed first): the rois of image b in order, so every pixel sums its
 * terms in the same order whichever thread runs the plane, and however many there are. */
static void roi_backward_plane(void *ctx, int64_t bc)
{
    const roi_bwd_ctx *x = ctx;
    const ref_roi_bwd_op *op = x->op;
    const int64_t b = bc / op->C, c = bc % op->C, PH = op->PH, PW = op->PW, HW = op->H * op->W;
    double *planes[5] = {x->grad, x->bt[0], x->bt[1], x->bt[2], x->bt[3]};
    for (int t = 0; t < 5; t++)
        if (planes[t]) {
            planes[t] += bc * HW;
            memset(planes[t], 0, sizeof(double) * (size_t)HW);
        }
    const ref_plane_out o = {planes[0], planes[1], planes[2], planes[3], planes[4]};
    for (int64_t k = 0; k < op->K; k++) {
        const ref_roi_head *g = (const ref_roi_head *)(x->geo + (size_t)k * op->geo_size);
        if (g->b != b) continue;
        for (int64_t ph = 0; ph < PH; ph++)
            for (int64_t pw = 0; pw < PW; pw++) {
                double go = x->grad_output[((k * op->C + c) * PH + ph) * PW + pw];
                op->bin(op->op, g, &o, go, ph, pw, g->gh, g->gw, x->pre, 0);
                if (!x->with_bounds || !ref_counts_ambiguous(&g->cr)) continue;
                if (!ref_counts_enumerable(&g->cr)) { /* rounding spans many counts */
                    if (o.ambig) for (int64_t q = 0; q < HW; q++) o.ambig[q] = INFINITY;
                    continue;
                }
                /* any sample count within rounding may be the one used: widen every pixel
                   either sampling touches by both contributions */
                for (int64_t gh = g->cr.gh_lo; gh <= g->cr.gh_hi; gh++)
                    for (int64_t gw = g->cr.gw_lo; gw <= g->cr.gw_hi; gw++)
                        op->bin(op->op, g, &o, go, ph, pw, gh, gw, x->pre, 1);
            }
    }
}

void ref_roi_backward(const ref_roi_bwd_op *op, const double *grad_output, const double *rois, double *grad,
                      ref_bounds *bounds)
{
    char *geo = malloc(op->geo_size * (size_t)(op->K > 0 ? op->K : 1));
    if (!geo) { /* out of memory: a reference that cannot run says so loudly */
        for (int64_t i = 0; i < op->B * op->C * op->H * op->W; i++) grad[i] = NAN;
        return;
    }
    roi_bwd_ctx x = {op, geo, grad_output, grad, {NULL, NULL, NULL, NULL}, bounds != NULL,
                     bounds ? bounds->pos_rel_err : 0.0};
    if (bounds) { x.bt[0] = bounds->abs_sum; x.bt[1] = bounds->n_terms; x.bt[2] = bounds->pos_err; x.bt[3] = bounds->ambig; }
    for (int64_t k = 0; k < op->K; k++) op->geometry(op->op, rois + op->roi_len * k, x.pre, geo + (size_t)k * op->geo_size);
    ref_parallel_for(op->B * op->C, roi_backward_plane, &x);
    free(geo);
}

void ref_roi_element(ref_bin_acc a, int64_t gh, int64_t gw, const ref_count_range *c, ref_bin_fn alt, const void *ctx,
                     double *out, int64_t e, ref_bounds *bounds)
{
    double count = ref_sample_count(gh, gw);
    out[e] = a.sum / count;
    if (!bounds) return;
    double ambig = a.ambig / count, abs_sum = a.abs_sum / count, n_terms = a.n_terms;
    if (alt && ref_counts_ambiguous(c) && !ref_counts_enumerable(c))
        ambig = INFINITY; /* rounding spans many counts: any value is possible */
    else if (alt && ref_counts_ambiguous(c)) {
        /* every sample count within rounding: the element may be any of them, rounded as that
           count's sum is (abs_sum and n_terms of the largest) */
        for (int64_t h = c->gh_lo; h <= c->gh_hi; h++)
            for (int64_t w = c->gw_lo; w <= c->gw_hi; w++) {
                ref_bin_acc o = alt(ctx, h, w);
                double alt_count = ref_sample_count(h, w);
                ambig = fmax(ambig, fabs(o.sum / alt_count - out[e]) + (o.ambig + o.pos_err) / alt_count);
                abs_sum = fmax(abs_sum, o.abs_sum / alt_count);
                n_terms = fmax(n_terms, o.n_terms);
            }
    }
    if (bounds->abs_sum) bounds->abs_sum[e] = abs_sum;
    if (bounds->n_terms) bounds->n_terms[e] = n_terms;
    if (bounds->pos_err) bounds->pos_err[e] = a.pos_err / count;
    if (bounds->ambig) bounds->ambig[e] = ambig;
}

/* ---- the range a bilinear sample can reach --------------------------------------------------- */

void ref_clip_taps(double first, double last, int64_t n, int64_t *a, int64_t *b)
{
    *a = (int64_t)(first > 0 ? (first < (double)n ? first : (double)n) : 0);
    *b = (int64_t)(last < (double)(n - 1) ? (last > -1 ? last : -1) : (double)(n - 1));
}

/* the taps [*a, *b] of an axis of n pixels a position in [v - d, v + d] reaches; *out: some tap
   lies outside the plane (clamped onto it when clamp) */
static void axis_reach(double v, double d, int64_t n, int clamped, int64_t *a, int64_t *b, int *out)
{
    double lo = floor(v - d), hi = floor(v + d) + 1;
    if (!isfinite(lo) || !isfinite(hi)) { lo = -1; hi = (double)n; } /* any tap */
    *out = lo < 0 || hi > (double)(n - 1);
    if (clamped) {
        *a = (int64_t)clamp(lo, 0, (double)(n - 1));
        *b = (int64_t)clamp(hi, 0, (double)(n - 1));
    } else {
        ref_clip_taps(lo, hi, n, a, b);
    }
}

void ref_tap_rect_of(int64_t H, int64_t W, double y, double x, double dy, double dx, int clamped, ref_tap_rect *t)
{
    int oy, ox;
    axis_reach(y, dy, H, clamped, &t->r0, &t->r1, &oy);
    axis_reach(x, dx, W, clamped, &t->c0, &t->c1, &ox);
    t->zero = !clamped && (oy || ox); /* a tap beyond the zero-padded plane */
}

void ref_tap_rect_range(const double *plane, int64_t W, int64_t cs, const ref_tap_rect *t, double *lo, double *hi)
{
    double mn = INFINITY, mx = -INFINITY;
    if (t->zero) mn = mx = 0;
    for (int64_t r = t->r0; r <= t->r1; r++)
        for (int64_t c = t->c0; c <= t->c1; c++) {
            double v = plane[(r * W + c) * cs];
            if (v < mn) mn = v;
            if (v > mx) mx = v;
            if (isnan(v)) mn = mx = NAN; /* nothing bounds a NaN tap: no cap */
        }
    if (mn > mx) mn = mx = 0; /* no tap at all */
    *lo = mn;
    *hi = mx;
}

void ref_tap_range(const double *plane, int64_t H, int64_t W, int64_t cs, double y, double x, double dy, double dx,
                   int clamped, double *lo, double *hi)
{
    ref_tap_rect t;
    ref_tap_rect_of(H, W, y, x, dy, dx, clamped, &t);
    ref_tap_rect_range(plane, W, cs, &t, lo, hi);
}

double ref_tap_spread(const double *plane, int64_t H, int64_t W, int64_t cs, double y, double x, double dy,
                      double dx, int clamped)
{
    double lo, hi;
    ref_tap_range(plane, H, W, cs, y, x, dy, dx, clamped, &lo, &hi);
    double s = hi - lo;
    return isnan(s) ? INFINITY : s;
}

/* ---- exact sample positions ----------------------------------------------------------------- */

/* the lowest set bit of v (a float32 value or a product of two, exact in double); inf for 0 */
static double lowest_bit(double v)
{
    if (v == 0) return INFINITY;
    int e;
    frexp(v, &e);
    double unit = ldexp(1.0, e - 53);
    while (fmod(v, 2 * unit) == 0) unit *= 2;
    return unit;
}

static int is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* Whether every float32 form of spec 1 computes each sample position of an axis exactly: the
 * corners c1 s - off, (c2 + plus) s - off (or c2 s + plus s - off), the extent (or 1), the bin
 * extent / pooled (or extent * (1/pooled)), start + p bin + (i + 0.5) bin / g (any order, FMA or
 * not, bin / g or bin * (1/g)). With pooled and g powers of two (their reciprocals exact) every
 * intermediate is an integer multiple of unit = (the lowest bit of c1 s, c2 s, s, off, 1) / (2
 * pooled g), at most 2 mag + 2 in magnitude (and c2 + 1 a multiple of its own lowest bit): within
 * 2^24 units each is a float32 number, no rounding changes anything. */
int ref_axis_exact(double c1, double c2, double s, double plus, double off, double mag, int64_t pooled, int64_t g)
{
    if (!isfinite(c1) || !isfinite(c2) || !isfinite(s) || !is_pow2(pooled) || !is_pow2(g)) return 0;
    double u0 = fmin(fmin(lowest_bit(c1) * lowest_bit(s), lowest_bit(c2) * lowest_bit(s)), 1.0);
    if (plus != 0) {
        u0 = fmin(u0, lowest_bit(s));
        if ((fabs(c2) + 1) / fmin(lowest_bit(c2), 1.0) > 16777216.0) return 0; /* c2 + 1 itself */
    }
    if (off != 0) u0 = fmin(u0, off);
    double unit = u0 / (2.0 * (double)pooled * (double)g);
    return (2 * mag + 2) / unit <= 16777216.0; /* 2^24 */
}

int64_t ref_channel_block(int64_t N, int64_t C)
{
    const int64_t want = 2 * (int64_t)ref_get_threads(), per_n = N > 0 ? (want + N - 1) / N : 1;
    const int64_t cb = (C + per_n - 1) / per_n;
    return cb > 0 ? cb : 1;
}
