/* roi_align (spec 1) and roi_align_v2_backward (spec 2) in double.
 * The value loops read like the spec; the ref_bounds bookkeeping sits beside them. */
#include "ref_internal.h"

#include <math.h>
#include <string.h>

/* One roi after the formulas of spec 1. */
typedef struct {
    int64_t b;            /* -1: skipped (batch index not finite or outside [0, B)) */
    double sy, sx, bin_h, bin_w;
    int64_t gh, gw;       /* samples per bin per axis as the spec computes them */
    double mag_y, mag_x;  /* |y1 s| + |y2 s| + off: magnitude behind every sample position */
    /* adaptive sample counts reachable by rounding (gh_lo..gh_hi, gw_lo..gw_hi) */
    int64_t gh_lo, gh_hi, gw_lo, gw_hi;
} roi_geom;

/* ceil(q) of an adaptive sample count, 0 when q is not finite (nothing can be sampled) */
static int64_t adaptive_count(double q)
{
    if (!isfinite(q)) return 0;
    if (q > 1e9) return 1000000000; /* the harness refuses such rois before they get here */
    if (q < -1e9) return -1000000000; /* a negative count samples nothing; keep the cast defined */
    return (int64_t)ceil(q);
}

static roi_geom roi_geometry(const ref_roi_align_params *p, const double *roi, double pos_rel_err)
{
    roi_geom g;
    memset(&g, 0, sizeof g);
    double bf = floor(roi[0]);
    g.b = (isfinite(bf) && bf >= 0 && bf < (double)p->B) ? (int64_t)bf : -1;

    double s = p->spatial_scale, off = p->aligned ? 0.5 : 0.0;
    g.sx = roi[1] * s - off;
    g.sy = roi[2] * s - off;
    double ex = roi[3] * s - off, ey = roi[4] * s - off;
    double rw = ex - g.sx, rh = ey - g.sy;
    /* max(r, 1) as torchvision writes it: a NaN extent stays NaN (its samples are empty) */
    if (!p->aligned) { if (rw < 1.0) rw = 1.0; if (rh < 1.0) rh = 1.0; }
    g.bin_h = rh / (double)p->pooled_h;
    g.bin_w = rw / (double)p->pooled_w;
    int adaptive = p->sampling_ratio <= 0;
    g.gh = adaptive ? adaptive_count(rh / (double)p->pooled_h) : p->sampling_ratio;
    g.gw = adaptive ? adaptive_count(rw / (double)p->pooled_w) : p->sampling_ratio;

    g.mag_y = fabs(roi[2] * s) + fabs(roi[4] * s) + off;
    g.mag_x = fabs(roi[1] * s) + fabs(roi[3] * s) + off;
    g.gh_lo = g.gh_hi = g.gh;
    g.gw_lo = g.gw_hi = g.gw;
    /* rh/PH carries the rounding of rh: ceil may land on the next integer. Equal corners give
       an extent of exactly 0 in any precision: nothing to flip there. */
    if (adaptive && isfinite(rh) && roi[2] != roi[4]) {
        double dq = pos_rel_err * 2.0 * g.mag_y / (double)p->pooled_h;
        g.gh_lo = adaptive_count(rh / (double)p->pooled_h - dq);
        g.gh_hi = adaptive_count(rh / (double)p->pooled_h + dq);
    }
    if (adaptive && isfinite(rw) && roi[1] != roi[3]) {
        double dr = pos_rel_err * 2.0 * g.mag_x / (double)p->pooled_w;
        g.gw_lo = adaptive_count(rw / (double)p->pooled_w - dr);
        g.gw_hi = adaptive_count(rw / (double)p->pooled_w + dr);
    }
    return g;
}

static double sample_count(int64_t gh, int64_t gw)
{
    double c = (double)gh * (double)gw;
    return c > 1.0 ? c : 1.0;
}

static double sample_y(const roi_geom *g, int64_t ph, int64_t iy, int64_t gh)
{
    return g->sy + (double)ph * g->bin_h + ((double)iy + 0.5) * g->bin_h / (double)gh;
}

static double sample_x(const roi_geom *g, int64_t pw, int64_t ix, int64_t gw)
{
    return g->sx + (double)pw * g->bin_w + ((double)ix + 0.5) * g->bin_w / (double)gw;
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

/* ---- forward ---------------------------------------------------------------------------- */

typedef struct {
    double sum, abs_sum, n_terms, pos_err, ambig;
} bin_acc;

/* The mean of rule A over the gh x gw samples of bin (ph, pw) of one plane, with its bounds. */
static bin_acc forward_bin(const ref_roi_align_params *p, const roi_geom *g, const double *plane,
                           int64_t ph, int64_t pw, int64_t gh, int64_t gw, double pos_rel_err)
{
    bin_acc a = {0, 0, 0, 0, 0};
    if (gh <= 0 || gw <= 0) return a; /* no samples (a negative count on one axis must not loop on the other) */
    for (int64_t iy = 0; iy < gh; iy++) {
        double y = sample_y(g, ph, iy, gh);
        double dy = pos_rel_err * (g->mag_y + fabs(y));
        for (int64_t ix = 0; ix < gw; ix++) {
            double x = sample_x(g, pw, ix, gw);
            double dx = pos_rel_err * (g->mag_x + fabs(x));
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
    }
    return a;
}

void f64_roi_align_fwd__ref(const ref_roi_align_params *p, const double *input, const double *rois,
                            double *output, ref_bounds *bounds)
{
    const int64_t PH = p->pooled_h, PW = p->pooled_w, plane_size = p->H * p->W;
    const double pre = bounds ? bounds->pos_rel_err : 0.0;
    for (int64_t k = 0; k < p->K; k++) {
        roi_geom g = roi_geometry(p, rois + 5 * k, pre);
        for (int64_t c = 0; c < p->C; c++) {
            const double *plane = g.b >= 0 ? input + (g.b * p->C + c) * plane_size : NULL;
            for (int64_t ph = 0; ph < PH; ph++)
                for (int64_t pw = 0; pw < PW; pw++) {
                    int64_t e = ((k * p->C + c) * PH + ph) * PW + pw;
                    bin_acc a = {0, 0, 0, 0, 0};
                    double count = sample_count(g.gh, g.gw);
                    if (plane) a = forward_bin(p, &g, plane, ph, pw, g.gh, g.gw, pre);
                    output[e] = a.sum / count;
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
                                ambig = fmax(ambig, fabs(alt.sum / alt_count - output[e]) +
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

/* ---- backward --------------------------------------------------------------------------- */

typedef struct {
    double *grad;                /* grad_input plane of (b, c); NULL: only bounds are wanted */
    double *abs_sum, *n_terms, *pos_err, *ambig; /* bounds planes of (b, c), each may be NULL */
} plane_out;

/* Adds the samples of bin (ph, pw) with gh x gw samples, each corner getting go*w/count.
 * as_alternative: the bin as another sample count would take it; only widens ambig. */
static void backward_bin(const ref_roi_align_params *p, const roi_geom *g, const plane_out *o,
                         double go, int64_t ph, int64_t pw, int64_t gh, int64_t gw,
                         double pos_rel_err, int as_alternative)
{
    if (gh <= 0 || gw <= 0) return; /* no samples */
    double count = sample_count(gh, gw);
    for (int64_t iy = 0; iy < gh; iy++) {
        double y = sample_y(g, ph, iy, gh);
        double dy = pos_rel_err * (g->mag_y + fabs(y));
        for (int64_t ix = 0; ix < gw; ix++) {
            double x = sample_x(g, pw, ix, gw);
            double dx = pos_rel_err * (g->mag_x + fabs(x));
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
                        if (o->grad) o->grad[e] += t;
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
}

static double *plane_of(double *t, int64_t b, int64_t c, const ref_roi_align_params *p)
{
    return t ? t + (b * p->C + c) * p->H * p->W : NULL;
}

void f64_roi_align_bwd__ref(const ref_roi_align_params *p, const double *grad_output,
                            const double *rois, double *grad_input, ref_bounds *bounds)
{
    const int64_t PH = p->pooled_h, PW = p->pooled_w;
    const int64_t n = p->B * p->C * p->H * p->W;
    const double pre = bounds ? bounds->pos_rel_err : 0.0;
    double *bt[4] = {NULL, NULL, NULL, NULL};
    if (bounds) { bt[0] = bounds->abs_sum; bt[1] = bounds->n_terms; bt[2] = bounds->pos_err; bt[3] = bounds->ambig; }
    for (int64_t i = 0; i < n; i++) {
        grad_input[i] = 0.0;
        for (int t = 0; t < 4; t++) if (bt[t]) bt[t][i] = 0.0;
    }
    for (int64_t k = 0; k < p->K; k++) {
        roi_geom g = roi_geometry(p, rois + 5 * k, pre);
        if (g.b < 0) continue;
        for (int64_t c = 0; c < p->C; c++) {
            plane_out o = {plane_of(grad_input, g.b, c, p), plane_of(bt[0], g.b, c, p),
                           plane_of(bt[1], g.b, c, p), plane_of(bt[2], g.b, c, p),
                           plane_of(bt[3], g.b, c, p)};
            for (int64_t ph = 0; ph < PH; ph++)
                for (int64_t pw = 0; pw < PW; pw++) {
                    double go = grad_output[((k * p->C + c) * PH + ph) * PW + pw];
                    backward_bin(p, &g, &o, go, ph, pw, g.gh, g.gw, pre, 0);
                    if (!bounds || !count_ambiguous(&g)) continue;
                    if (!countable_alternatives(&g)) { /* rounding spans many counts */
                        if (o.ambig) for (int64_t q = 0; q < p->H * p->W; q++) o.ambig[q] = INFINITY;
                        continue;
                    }
                    /* any sample count within rounding may be the one used: widen every pixel
                       either sampling touches by both contributions */
                    for (int64_t gh = g.gh_lo; gh <= g.gh_hi; gh++)
                        for (int64_t gw = g.gw_lo; gw <= g.gw_hi; gw++) {
                            backward_bin(p, &g, &o, go, ph, pw, gh, gw, pre, 1);
                        }
                }
        }
    }
}
