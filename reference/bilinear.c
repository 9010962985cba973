/* Rule A of the spec (RoIAlign's bilinear sampling) and the bins built of it, shared by roi_align
 * and roi_align_rotated. */
#include "ref_internal.h"

#include <math.h>

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

typedef struct {
    double *pos_err;
    int64_t H, W;
    double scale;
} plane_ctx;

static void add_to_plane(void *ctx, int64_t row, int64_t col, double bound)
{
    plane_ctx *c = ctx;
    if (row < 0 || row >= c->H || col < 0 || col >= c->W) return;
    c->pos_err[row * c->W + col] += c->scale * bound;
}

void ref_plane_neighbour_pos_err(double *pos_err, int64_t H, int64_t W, double scale, const ref_bilinear *r,
                                 double dy, double dx)
{
    if (!isfinite(scale)) return;
    plane_ctx c = {pos_err, H, W, scale};
    ref_neighbour_weights(r->y, r->x, r->wy, r->wx, dy, dx, add_to_plane, &c);
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
    double pe = ref_value_pos_err(sy, sx, dy, dx);
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
    if (cls == SAMPLE_AMBIGUOUS) a->ambig += av + pe;
}

void ref_roi_sample_bwd(const ref_plane_out *o, int64_t H, int64_t W, double y, double x, double dy, double dx,
                        double go, double count, int as_alternative)
{
    ref_bilinear r;
    sample_class cls = ref_classify_sample(H, W, y, x, dy, dx);
    int inside = ref_bilinear_rule(H, W, y, x, &r);
    if (!inside && cls == SAMPLE_AMBIGUOUS) ref_bilinear_rule_clamped(H, W, y, x, &r);
    if (!inside && cls != SAMPLE_AMBIGUOUS) return;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            int64_t e = r.y[i] * W + r.x[j];
            double t = go * r.wy[i] * r.wx[j] / count;
            double pe = fabs(go) / count * ref_weight_pos_err(r.wy[i], r.wx[j], dy, dx);
            if (inside && !as_alternative) {
                if (o->grad) o->grad[e] += t;
                if (o->abs_sum) o->abs_sum[e] += fabs(t);
                if (o->n_terms) o->n_terms[e] += 1;
                if (o->pos_err) o->pos_err[e] += pe;
            } else if (fabs(t) > 0) {
                /* a term only another branch adds (another sample count, or the sample kept:
                   outside, so ambiguous) is rounded by a kernel on that branch: abs_sum and
                   n_terms cover it too */
                if (o->abs_sum) o->abs_sum[e] += fabs(t);
                if (o->n_terms) o->n_terms[e] += 1;
            }
            if ((as_alternative || cls == SAMPLE_AMBIGUOUS) && o->ambig) o->ambig[e] += fabs(t) + pe;
        }
    /* pixels across a cell edge the float twin may reach */
    if (inside && !as_alternative && o->pos_err) ref_plane_neighbour_pos_err(o->pos_err, H, W, fabs(go) / count, &r, dy, dx);
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

int64_t ref_channel_block(int64_t N, int64_t C)
{
    const int64_t want = 2 * (int64_t)ref_get_threads(), per_n = N > 0 ? (want + N - 1) / N : 1;
    const int64_t cb = (C + per_n - 1) / per_n;
    return cb > 0 ? cb : 1;
}
