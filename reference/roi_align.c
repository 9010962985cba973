/* roi_align (spec 1) and roi_align_v2_backward (spec 2) in double.
 * The value loops read like the spec; the ref_bounds bookkeeping sits beside them. */
#include "ref_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One roi after the formulas of spec 1. */
typedef struct {
    ref_roi_head h;         /* image and sample counts: first, for the shared backward loop */
    double sy, sx, bin_h, bin_w;
    double mag_y, mag_x;  /* |y1 s| + |y2 s| + off: magnitude behind every sample position */
    int exact_y, exact_x; /* with gh, gw samples, every position of the axis is exact in every float32 form */
} roi_geom;

static roi_geom roi_geometry(const ref_roi_align_params *p, const double *roi, double pos_rel_err)
{
    roi_geom g;
    memset(&g, 0, sizeof g);
    double bf = floor(roi[0]);
    g.h.b = (isfinite(bf) && bf >= 0 && bf < (double)p->B) ? (int64_t)bf : -1;

    /* aligned: every corner shifted by -0.5; end_plus_one: the end pixel counted in (x2 + 1) */
    double s = p->spatial_scale, off = p->aligned ? 0.5 : 0.0, plus = p->end_plus_one ? 1.0 : 0.0;
    g.sx = roi[1] * s - off;
    g.sy = roi[2] * s - off;
    double ex = (roi[3] + plus) * s - off, ey = (roi[4] + plus) * s - off;
    double rw = ex - g.sx, rh = ey - g.sy;
    /* max(r, 1) as torchvision writes it: a NaN extent stays NaN (its samples are empty) */
    if (!p->aligned) { if (rw < 1.0) rw = 1.0; if (rh < 1.0) rh = 1.0; }
    g.bin_h = rh / (double)p->pooled_h;
    g.bin_w = rw / (double)p->pooled_w;
    int adaptive = p->sampling_ratio <= 0;
    g.h.gh = adaptive ? ref_adaptive_count(rh / (double)p->pooled_h) : p->sampling_ratio;
    g.h.gw = adaptive ? ref_adaptive_count(rw / (double)p->pooled_w) : p->sampling_ratio;

    g.mag_y = fabs(roi[2] * s) + fabs(roi[4] * s) + plus * s + off;
    g.mag_x = fabs(roi[1] * s) + fabs(roi[3] * s) + plus * s + off;
    g.exact_y = ref_axis_exact(roi[2], roi[4], s, plus, off, g.mag_y, p->pooled_h, g.h.gh);
    g.exact_x = ref_axis_exact(roi[1], roi[3], s, plus, off, g.mag_x, p->pooled_w, g.h.gw);
    g.h.cr.gh_lo = g.h.cr.gh_hi = g.h.gh;
    g.h.cr.gw_lo = g.h.cr.gw_hi = g.h.gw;
    /* rh/PH carries the rounding of rh: ceil may land on the next integer. Equal corners give
       an extent of exactly 0 in any precision (not so with end_plus_one): nothing to flip there. */
    if (adaptive && isfinite(rh) && (roi[2] != roi[4] || plus != 0)) {
        double dq = pos_rel_err * 2.0 * g.mag_y / (double)p->pooled_h;
        g.h.cr.gh_lo = ref_adaptive_count(rh / (double)p->pooled_h - dq);
        g.h.cr.gh_hi = ref_adaptive_count(rh / (double)p->pooled_h + dq);
    }
    if (adaptive && isfinite(rw) && (roi[1] != roi[3] || plus != 0)) {
        double dr = pos_rel_err * 2.0 * g.mag_x / (double)p->pooled_w;
        g.h.cr.gw_lo = ref_adaptive_count(rw / (double)p->pooled_w - dr);
        g.h.cr.gw_hi = ref_adaptive_count(rw / (double)p->pooled_w + dr);
    }
    return g;
}

static double sample_y(const roi_geom *g, int64_t ph, int64_t iy, int64_t gh)
{
    return g->sy + (double)ph * g->bin_h + ((double)iy + 0.5) * g->bin_h / (double)gh;
}

static double sample_x(const roi_geom *g, int64_t pw, int64_t ix, int64_t gw)
{
    return g->sx + (double)pw * g->bin_w + ((double)ix + 0.5) * g->bin_w / (double)gw;
}

/* ---- forward ---------------------------------------------------------------------------- */

/* The mean of rule A over the gh x gw samples of bin (ph, pw) of one plane, with its bounds. */
static ref_bin_acc forward_bin(const ref_roi_align_params *p, const roi_geom *g, const double *plane,
                           int64_t ph, int64_t pw, int64_t gh, int64_t gw, double pos_rel_err)
{
    ref_bin_acc a = {0, 0, 0, 0, 0};
    if (gh <= 0 || gw <= 0) return a; /* no samples (a negative count on one axis must not loop on the other) */
    for (int64_t iy = 0; iy < gh; iy++) {
        double y = sample_y(g, ph, iy, gh);
        double dy = g->exact_y && gh == g->h.gh ? 0.0 : pos_rel_err * (g->mag_y + fabs(y));
        for (int64_t ix = 0; ix < gw; ix++) {
            double x = sample_x(g, pw, ix, gw);
            double dx = g->exact_x && gw == g->h.gw ? 0.0 : pos_rel_err * (g->mag_x + fabs(x));
            ref_roi_sample_fwd(plane, p->H, p->W, y, x, dy, dx, &a);
        }
    }
    return a;
}

/* forward_bin of one element with other sample counts, for ref_roi_element */
typedef struct {
    const ref_roi_align_params *p;
    const roi_geom *g;
    const double *plane;
    int64_t ph, pw;
    double pre;
} bin_ctx;

static ref_bin_acc bin_with_counts(const void *ctx, int64_t gh, int64_t gw)
{
    const bin_ctx *b = ctx;
    return forward_bin(b->p, b->g, b->plane, b->ph, b->pw, gh, gw, b->pre);
}

/* The forward's tensors, for one (roi, channel) of it */
typedef struct {
    const ref_roi_align_params *p;
    const double *input, *rois;
    double *output;
    ref_bounds *bounds;
} fwd_ctx;

/* Every element of roi k, channel c = kc mod C: independent of every other (roi, channel) */
static void forward_roi_channel(void *ctx, int64_t kc)
{
    const fwd_ctx *f = ctx;
    const ref_roi_align_params *p = f->p;
    const int64_t PH = p->pooled_h, PW = p->pooled_w, k = kc / p->C, c = kc % p->C;
    const double pre = f->bounds ? f->bounds->pos_rel_err : 0.0;
    roi_geom g = roi_geometry(p, f->rois + 5 * k, pre);
    const double *plane = g.h.b >= 0 ? f->input + (g.h.b * p->C + c) * p->H * p->W : NULL;
    for (int64_t ph = 0; ph < PH; ph++)
        for (int64_t pw = 0; pw < PW; pw++) {
            const bin_ctx bc = {p, &g, plane, ph, pw, pre};
            const ref_bin_acc a = plane ? bin_with_counts(&bc, g.h.gh, g.h.gw) : (ref_bin_acc){0, 0, 0, 0, 0};
            ref_roi_element(a, g.h.gh, g.h.gw, &g.h.cr, plane ? bin_with_counts : NULL, &bc,
                            f->output, ((k * p->C + c) * PH + ph) * PW + pw, f->bounds);
        }
}

void f64_roi_align_fwd__ref(const ref_roi_align_params *p, const double *input, const double *rois,
                            double *output, ref_bounds *bounds)
{
    fwd_ctx f = {p, input, rois, output, bounds};
    ref_parallel_for(p->K * p->C, forward_roi_channel, &f);
}

/* ---- backward --------------------------------------------------------------------------- */

/* Adds the samples of bin (ph, pw) with gh x gw samples, each corner getting go*w/count.
 * as_alternative: the bin as another sample count would take it; only widens ambig. */
static void backward_bin(const void *op, const ref_roi_head *head, const ref_plane_out *o, double go, int64_t ph,
                         int64_t pw, int64_t gh, int64_t gw, double pos_rel_err, int as_alternative)
{
    const ref_roi_align_params *p = op;
    const roi_geom *g = (const roi_geom *)head;
    if (gh <= 0 || gw <= 0) return; /* no samples */
    double count = ref_sample_count(gh, gw);
    for (int64_t iy = 0; iy < gh; iy++) {
        double y = sample_y(g, ph, iy, gh);
        double dy = g->exact_y && gh == g->h.gh ? 0.0 : pos_rel_err * (g->mag_y + fabs(y));
        for (int64_t ix = 0; ix < gw; ix++) {
            double x = sample_x(g, pw, ix, gw);
            double dx = g->exact_x && gw == g->h.gw ? 0.0 : pos_rel_err * (g->mag_x + fabs(x));
            ref_roi_sample_bwd(o, p->H, p->W, y, x, dy, dx, go, count, as_alternative);
        }
    }
}

static void geometry_of(const void *op, const double *roi, double pos_rel_err, void *g)
{
    *(roi_geom *)g = roi_geometry(op, roi, pos_rel_err);
}

void f64_roi_align_bwd__ref(const ref_roi_align_params *p, const double *grad_output,
                            const double *rois, double *grad_input, ref_bounds *bounds)
{
    const ref_roi_bwd_op op = {p, p->B, p->C, p->H, p->W, p->K, p->pooled_h, p->pooled_w, 5, geometry_of, sizeof(roi_geom),
                               backward_bin};
    ref_roi_backward(&op, grad_output, rois, grad_input, bounds);
}
