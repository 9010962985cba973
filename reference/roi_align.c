/* roi_align (spec 1) and roi_align_v2_backward (spec 2) in double.
 * The fast golden's half of the op: roi geometry and the samples of a bin for roi_family.c's
 * shared loops; the spec's loops whole are reference/plain/roi_family.c. */
#include "roi_bounds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One roi after the formulas of spec 1. */
typedef struct {
    ref_roi_head h;         /* image and sample counts: first, for the shared backward loop */
    double sy, sx, bin_h, bin_w;
    ref_roi_axes ax;        /* the bounds' inputs of its axes (roi_bounds.h) */
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

    ref_roi_align_axes(p, roi, rh, rw, g.h.gh, g.h.gw, pos_rel_err, &g.ax, &g.h.cr);
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

/* ---- the samples of a bin ------------------------------------------------------------------ */

/* The gh x gw samples of bin (ph, pw), in the spec's order, with their position errors: the one
 * loop both directions run (roi_family.c sums them forward and scatters them backward). */
static void bin_samples(const void *op, const ref_roi_head *head, int64_t ph, int64_t pw, int64_t gh, int64_t gw,
                        double pos_rel_err, ref_sample_fn emit, void *ctx)
{
    const roi_geom *g = (const roi_geom *)head;
    if (gh <= 0 || gw <= 0) return; /* no samples (a negative count on one axis must not loop on the other) */
    for (int64_t iy = 0; iy < gh; iy++) {
        double y = sample_y(g, ph, iy, gh);
        double dy = ref_sample_pos_err(g->ax.exact_y, gh, g->h.gh, pos_rel_err, g->ax.mag_y, y);
        for (int64_t ix = 0; ix < gw; ix++) {
            double x = sample_x(g, pw, ix, gw);
            double dx = ref_sample_pos_err(g->ax.exact_x, gw, g->h.gw, pos_rel_err, g->ax.mag_x, x);
            emit(ctx, y, x, dy, dx);
        }
    }
}

static void geometry_of(const void *op, const double *roi, double pos_rel_err, void *g)
{
    *(roi_geom *)g = roi_geometry(op, roi, pos_rel_err);
}

static ref_roi_op family_op(const ref_roi_align_params *p)
{
    return (ref_roi_op){p, p->B, p->C, p->H, p->W, p->K, p->pooled_h, p->pooled_w, 5, geometry_of, sizeof(roi_geom),
                        bin_samples, 0};
}

void f64_roi_align_fwd__ref(const ref_roi_align_params *p, const double *input, const double *rois,
                            double *output, ref_bounds *bounds)
{
    const ref_roi_op op = family_op(p);
    ref_roi_forward(&op, input, rois, output, bounds);
}

void f64_roi_align_bwd__ref(const ref_roi_align_params *p, const double *grad_output,
                            const double *rois, double *grad_input, ref_bounds *bounds)
{
    const ref_roi_op op = family_op(p);
    ref_roi_backward(&op, grad_output, rois, grad_input, bounds);
}

ref_roi_op ref_roi_align_family(const ref_roi_align_params *p) { return family_op(p); }
