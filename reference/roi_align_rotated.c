/* roi_align_rotated (spec 3) and roi_align_rotated_grad (spec 4) in double.
 * The kernels compute in the documented layout (NCHW features, rois [K, 6]); data_format NHWC is
 * the same math on permuted tensors, so the NHWC entry points permute in, compute, permute out
 * (exact copies: the two layouts give identical numbers by construction).
 * The value loops read like the spec; the ref_bounds bookkeeping sits beside them. */
#include "ref_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One roi after the formulas of spec 3. */
typedef struct {
    int64_t b;              /* -1: skipped (batch index not finite or outside [0, B)) */
    double Cy, Cx, Hr, Wr;  /* centre (shifted by the aligned offset) and extent in feature pixels */
    double bin_h, bin_w, cos_t, sin_t;
    int64_t gh, gw;         /* samples per bin per axis as the spec computes them */
    double mag_y, mag_x;    /* magnitude behind every sample position (see roi_geometry) */
    int64_t gh_lo, gh_hi, gw_lo, gw_hi; /* adaptive sample counts reachable by rounding */
} roi_geom;

/* ceil(q) of an adaptive sample count, 0 when q is not finite (nothing can be sampled) */
static int64_t adaptive_count(double q)
{
    if (!isfinite(q)) return 0;
    if (q > 1e9) return 1000000000; /* the harness refuses such rois before they get here */
    if (q < -1e9) return -1000000000; /* a negative count samples nothing; keep the cast defined */
    return (int64_t)ceil(q);
}

/* An extent after the unaligned max(r, 1) (a NaN extent stays NaN, as in roi_align). */
static double clamp_extent(double r, int aligned) { return (!aligned && r < 1.0) ? 1.0 : r; }

static roi_geom roi_geometry(const ref_roi_align_rotated_params *p, const double *roi, double pos_rel_err)
{
    roi_geom g;
    memset(&g, 0, sizeof g);
    double bf = floor(roi[0]);
    g.b = (isfinite(bf) && bf >= 0 && bf < (double)p->B) ? (int64_t)bf : -1;

    const double s = p->spatial_scale, off = p->aligned ? 0.5 : 0.0;
    g.Cx = roi[1] * s - off; /* only the centre shifts; width and height do not */
    g.Cy = roi[2] * s - off;
    const double w0 = roi[3] * s, h0 = roi[4] * s;
    g.Wr = clamp_extent(w0, p->aligned);
    g.Hr = clamp_extent(h0, p->aligned);
    const double theta = p->clockwise ? -roi[5] : roi[5];
    g.cos_t = cos(theta);
    g.sin_t = sin(theta);
    g.bin_h = g.Hr / (double)p->pooled_h;
    g.bin_w = g.Wr / (double)p->pooled_w;
    const int adaptive = p->sampling_ratio <= 0;
    g.gh = adaptive ? adaptive_count(g.Hr / (double)p->pooled_h) : p->sampling_ratio;
    g.gw = adaptive ? adaptive_count(g.Wr / (double)p->pooled_w) : p->sampling_ratio;

    /* y = yy*cos - xx*sin + Cy with |yy| <= |Hr|/2 + bin, |xx| <= |Wr|/2 + bin: every rounding of
       the chain is relative to the centre term or to one of the two extents */
    double ext = fabs(g.Hr) + fabs(g.Wr);
    /* an angle given in double that float32 cannot hold is read rounded by u*|angle|: it turns
       every sample about the centre by up to that much times the extent */
    if ((double)(float)roi[5] != roi[5] && isfinite(roi[5])) ext *= 1.0 + fabs(roi[5]);
    g.mag_y = fabs(roi[2] * s) + off + ext;
    g.mag_x = fabs(roi[1] * s) + off + ext;
    g.gh_lo = g.gh_hi = g.gh;
    g.gw_lo = g.gw_hi = g.gw;
    /* h*s (and /PH) is rounded before ceil: the count may land on the next integer. The clamp
       is applied to both ends, so a clamped extent (exactly 1 in any precision) is not ambiguous. */
    if (adaptive && isfinite(h0)) {
        double d = pos_rel_err * fabs(h0);
        g.gh_lo = adaptive_count(clamp_extent(h0 - d, p->aligned) / (double)p->pooled_h);
        g.gh_hi = adaptive_count(clamp_extent(h0 + d, p->aligned) / (double)p->pooled_h);
    }
    if (adaptive && isfinite(w0)) {
        double d = pos_rel_err * fabs(w0);
        g.gw_lo = adaptive_count(clamp_extent(w0 - d, p->aligned) / (double)p->pooled_w);
        g.gw_hi = adaptive_count(clamp_extent(w0 + d, p->aligned) / (double)p->pooled_w);
    }
    return g;
}

static double sample_count(int64_t gh, int64_t gw)
{
    double c = (double)gh * (double)gw;
    return c > 1.0 ? c : 1.0;
}

/* Sample (iy, ix) of bin (ph, pw): the spec's yy, xx in the roi's frame, rotated, centred. */
static void sample_pos(const roi_geom *g, int64_t ph, int64_t pw, int64_t iy, int64_t ix, int64_t gh, int64_t gw,
                       double *y, double *x)
{
    double yy = -g->Hr / 2 + (double)ph * g->bin_h + ((double)iy + 0.5) * g->bin_h / (double)gh;
    double xx = -g->Wr / 2 + (double)pw * g->bin_w + ((double)ix + 0.5) * g->bin_w / (double)gw;
    *y = yy * g->cos_t - xx * g->sin_t + g->Cy;
    *x = yy * g->sin_t + xx * g->cos_t + g->Cx;
}

static int count_ambiguous(const roi_geom *g)
{
    return g->gh_lo != g->gh_hi || g->gw_lo != g->gw_hi;
}

/* Absurd rois (an extent whose rounding spans more than a few sample counts, or an alternative
 * count of more than 2^20 samples a bin, which the main count's work budget did not see) are not
 * evaluated count by count: their elements are ambiguous without bound. */
static int countable_alternatives(const roi_geom *g)
{
    return g->gh_hi - g->gh_lo <= 2 && g->gw_hi - g->gw_lo <= 2 &&
           (double)g->gh_hi * (double)g->gw_hi <= (double)(1 << 20);
}

/* ---- forward (NCHW, rois [K, 6]) ---------------------------------------------------------- */

typedef struct {
    double sum, abs_sum, n_terms, pos_err, ambig;
} bin_acc;

/* The mean of rule A over the gh x gw samples of bin (ph, pw) of one plane, with its bounds. */
static bin_acc forward_bin(const ref_roi_align_rotated_params *p, const roi_geom *g, const double *plane,
                           int64_t ph, int64_t pw, int64_t gh, int64_t gw, double pos_rel_err)
{
    bin_acc a = {0, 0, 0, 0, 0};
    if (gh <= 0 || gw <= 0) return a; /* no samples (a negative count on one axis must not loop on the other) */
    for (int64_t iy = 0; iy < gh; iy++)
        for (int64_t ix = 0; ix < gw; ix++) {
            double y, x;
            sample_pos(g, ph, pw, iy, ix, gh, gw, &y, &x);
            double dy = pos_rel_err * (g->mag_y + fabs(y)), dx = pos_rel_err * (g->mag_x + fabs(x));
            ref_bilinear r;
            sample_class cls = ref_classify_sample(p->H, p->W, y, x, dy, dx);
            int inside = ref_bilinear_rule(p->H, p->W, y, x, &r);
            if (!inside && cls == SAMPLE_AMBIGUOUS) ref_bilinear_rule_clamped(p->H, p->W, y, x, &r);
            if (!inside && cls != SAMPLE_AMBIGUOUS) continue;

            double v = 0, av = 0, sy, sx;
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++) {
                    double t = r.wy[i] * r.wx[j] * plane[r.y[i] * p->W + r.x[j]];
                    v += t;
                    av += fabs(t);
                }
            ref_local_slopes(plane, p->H, p->W, &r, &sy, &sx);
            double pe = ref_value_pos_err(sy, sx, dy, dx);
            if (inside) {
                a.sum += v;
                a.abs_sum += av;
                a.n_terms += 4;
                a.pos_err += pe;
            }
            if (cls == SAMPLE_AMBIGUOUS) a.ambig += av + pe;
        }
    return a;
}

static void forward_nchw(const ref_roi_align_rotated_params *p, const double *x, const double *rois, double *y,
                         ref_bounds *bounds)
{
    const int64_t PH = p->pooled_h, PW = p->pooled_w, plane_size = p->H * p->W;
    const double pre = bounds ? bounds->pos_rel_err : 0.0;
    for (int64_t k = 0; k < p->K; k++) {
        roi_geom g = roi_geometry(p, rois + 6 * k, pre);
        for (int64_t c = 0; c < p->C; c++) {
            const double *plane = g.b >= 0 ? x + (g.b * p->C + c) * plane_size : NULL;
            for (int64_t ph = 0; ph < PH; ph++)
                for (int64_t pw = 0; pw < PW; pw++) {
                    int64_t e = ((k * p->C + c) * PH + ph) * PW + pw;
                    bin_acc a = {0, 0, 0, 0, 0};
                    double count = sample_count(g.gh, g.gw);
                    if (plane) a = forward_bin(p, &g, plane, ph, pw, g.gh, g.gw, pre);
                    y[e] = a.sum / count;
                    if (!bounds) continue;
                    double ambig = a.ambig / count;
                    if (plane && count_ambiguous(&g) && !countable_alternatives(&g))
                        ambig = INFINITY; /* rounding spans many counts: any value is possible */
                    else if (plane && count_ambiguous(&g)) {
                        /* every sample count within rounding: the element may be any of them */
                        for (int64_t gh = g.gh_lo; gh <= g.gh_hi; gh++)
                            for (int64_t gw = g.gw_lo; gw <= g.gw_hi; gw++) {
                                bin_acc alt = forward_bin(p, &g, plane, ph, pw, gh, gw, pre);
                                double alt_count = sample_count(gh, gw);
                                ambig = fmax(ambig, fabs(alt.sum / alt_count - y[e]) +
                                                        (alt.ambig + alt.pos_err) / alt_count);
                            }
                    }
                    if (bounds->abs_sum) bounds->abs_sum[e] = a.abs_sum / count;
                    if (bounds->n_terms) bounds->n_terms[e] = a.n_terms;
                    if (bounds->pos_err) bounds->pos_err[e] = a.pos_err / count;
                    if (bounds->ambig) bounds->ambig[e] = ambig;
                }
        }
    }
}

/* ---- backward (NCHW, rois [K, 6]) --------------------------------------------------------- */

typedef struct {
    double *grad;                                /* y_grad plane of (b, c) */
    double *abs_sum, *n_terms, *pos_err, *ambig; /* bounds planes of (b, c), each may be NULL */
} plane_out;

/* Adds the samples of bin (ph, pw) with gh x gw samples, each corner getting go*w/count.
 * as_alternative: the bin as another sample count would take it; only widens ambig. */
static void backward_bin(const ref_roi_align_rotated_params *p, const roi_geom *g, const plane_out *o, double go,
                         int64_t ph, int64_t pw, int64_t gh, int64_t gw, double pos_rel_err, int as_alternative)
{
    if (gh <= 0 || gw <= 0) return; /* no samples */
    double count = sample_count(gh, gw);
    for (int64_t iy = 0; iy < gh; iy++)
        for (int64_t ix = 0; ix < gw; ix++) {
            double y, x;
            sample_pos(g, ph, pw, iy, ix, gh, gw, &y, &x);
            double dy = pos_rel_err * (g->mag_y + fabs(y)), dx = pos_rel_err * (g->mag_x + fabs(x));
            ref_bilinear r;
            sample_class cls = ref_classify_sample(p->H, p->W, y, x, dy, dx);
            int inside = ref_bilinear_rule(p->H, p->W, y, x, &r);
            if (!inside && cls == SAMPLE_AMBIGUOUS) ref_bilinear_rule_clamped(p->H, p->W, y, x, &r);
            if (!inside && cls != SAMPLE_AMBIGUOUS) continue;
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++) {
                    int64_t e = r.y[i] * p->W + r.x[j];
                    double t = go * r.wy[i] * r.wx[j] / count;
                    double pe = fabs(go) / count * ref_weight_pos_err(r.wy[i], r.wx[j], dy, dx);
                    if (as_alternative) {
                        if (o->ambig) o->ambig[e] += fabs(t) + pe;
                        continue;
                    }
                    if (inside) {
                        o->grad[e] += t;
                        if (o->abs_sum) o->abs_sum[e] += fabs(t);
                        if (o->n_terms) o->n_terms[e] += 1;
                        if (o->pos_err) o->pos_err[e] += pe;
                    }
                    if (cls == SAMPLE_AMBIGUOUS && o->ambig) o->ambig[e] += fabs(t) + pe;
                }
            /* pixels across a cell edge the float twin may reach */
            if (inside && !as_alternative && o->pos_err)
                ref_plane_neighbour_pos_err(o->pos_err, p->H, p->W, fabs(go) / count, &r, dy, dx);
        }
}

static double *plane_of(double *t, int64_t b, int64_t c, const ref_roi_align_rotated_params *p)
{
    return t ? t + (b * p->C + c) * p->H * p->W : NULL;
}

static void backward_nchw(const ref_roi_align_rotated_params *p, const double *x_grad, const double *rois,
                          double *y_grad, ref_bounds *bounds)
{
    const int64_t PH = p->pooled_h, PW = p->pooled_w;
    const int64_t n = p->B * p->C * p->H * p->W;
    const double pre = bounds ? bounds->pos_rel_err : 0.0;
    double *bt[4] = {NULL, NULL, NULL, NULL};
    if (bounds) { bt[0] = bounds->abs_sum; bt[1] = bounds->n_terms; bt[2] = bounds->pos_err; bt[3] = bounds->ambig; }
    for (int64_t i = 0; i < n; i++) {
        y_grad[i] = 0.0;
        for (int t = 0; t < 4; t++) if (bt[t]) bt[t][i] = 0.0;
    }
    for (int64_t k = 0; k < p->K; k++) {
        roi_geom g = roi_geometry(p, rois + 6 * k, pre);
        if (g.b < 0) continue;
        for (int64_t c = 0; c < p->C; c++) {
            plane_out o = {plane_of(y_grad, g.b, c, p), plane_of(bt[0], g.b, c, p), plane_of(bt[1], g.b, c, p),
                           plane_of(bt[2], g.b, c, p), plane_of(bt[3], g.b, c, p)};
            for (int64_t ph = 0; ph < PH; ph++)
                for (int64_t pw = 0; pw < PW; pw++) {
                    double go = x_grad[((k * p->C + c) * PH + ph) * PW + pw];
                    backward_bin(p, &g, &o, go, ph, pw, g.gh, g.gw, pre, 0);
                    if (!bounds || !count_ambiguous(&g)) continue;
                    if (!countable_alternatives(&g)) { /* rounding spans many counts */
                        if (o.ambig) for (int64_t q = 0; q < p->H * p->W; q++) o.ambig[q] = INFINITY;
                        continue;
                    }
                    /* any sample count within rounding may be the one used: widen every pixel
                       either sampling touches by both contributions */
                    for (int64_t gh = g.gh_lo; gh <= g.gh_hi; gh++)
                        for (int64_t gw = g.gw_lo; gw <= g.gw_hi; gw++)
                            backward_bin(p, &g, &o, go, ph, pw, gh, gw, pre, 1);
                }
        }
    }
}

/* ---- data_format NHWC: the same math on permuted tensors ---------------------------------- */

/* [N, S, C] <-> [N, C, S] (to_cl = 1: channels-first to channels-last) */
static void permute(const double *src, double *dst, int64_t N, int64_t S, int64_t C, int to_cl)
{
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < S; i++) {
                int64_t cf = (n * C + c) * S + i, cl = (n * S + i) * C + c;
                if (to_cl) dst[cl] = src[cf];
                else dst[cf] = src[cl];
            }
}

static double *alloc_doubles(int64_t n) { return malloc(sizeof(double) * (size_t)(n > 0 ? n : 1)); }

/* Runs kernel on NCHW copies of an NHWC problem: input [N_in, S_in, C] -> output [N_out, S_out, C]. */
static void run_nhwc(const ref_roi_align_rotated_params *p, const double *in, int64_t n_in, int64_t s_in,
                     const double *rois, double *out, int64_t n_out, int64_t s_out, ref_bounds *bounds,
                     void (*kernel)(const ref_roi_align_rotated_params *, const double *, const double *, double *,
                                    ref_bounds *))
{
    const int64_t C = p->C, ni = n_in * s_in * C, no = n_out * s_out * C;
    double *cin = alloc_doubles(ni), *cout = alloc_doubles(no), *croi = alloc_doubles(6 * p->K);
    double *bt[4] = {NULL, NULL, NULL, NULL}, *src[4] = {NULL, NULL, NULL, NULL};
    ref_bounds cb = {0, NULL, NULL, NULL, NULL};
    int ok = cin && cout && croi;
    if (bounds) {
        cb = *bounds;
        double **f[4] = {&cb.abs_sum, &cb.n_terms, &cb.pos_err, &cb.ambig};
        for (int t = 0; t < 4; t++) {
            src[t] = *f[t];
            if (src[t]) { bt[t] = *f[t] = alloc_doubles(no); ok = ok && bt[t]; }
        }
    }
    if (ok) {
        permute(in, cin, n_in, s_in, C, 0);
        for (int64_t k = 0; k < p->K; k++)
            for (int f = 0; f < 6; f++) croi[6 * k + f] = rois[f * p->K + k]; /* [6, K] -> [K, 6] */
        kernel(p, cin, croi, cout, bounds ? &cb : NULL);
        permute(cout, out, n_out, s_out, C, 1);
        for (int t = 0; t < 4; t++) if (bt[t]) permute(bt[t], src[t], n_out, s_out, C, 1);
    } else { /* out of memory: a reference that cannot run says so loudly */
        for (int64_t i = 0; i < no; i++) out[i] = NAN;
    }
    free(cin); free(cout); free(croi);
    for (int t = 0; t < 4; t++) free(bt[t]);
}

void f64_roi_align_rotated_fwd__ref(const ref_roi_align_rotated_params *p, const double *x, const double *rois,
                                    double *y, ref_bounds *bounds)
{
    if (!p->nhwc) forward_nchw(p, x, rois, y, bounds);
    else run_nhwc(p, x, p->B, p->H * p->W, rois, y, p->K, p->pooled_h * p->pooled_w, bounds, forward_nchw);
}

void f64_roi_align_rotated_bwd__ref(const ref_roi_align_rotated_params *p, const double *x_grad,
                                    const double *rois, double *y_grad, ref_bounds *bounds)
{
    if (!p->nhwc) backward_nchw(p, x_grad, rois, y_grad, bounds);
    else run_nhwc(p, x_grad, p->K, p->pooled_h * p->pooled_w, rois, y_grad, p->B, p->H * p->W, bounds, backward_nchw);
}
