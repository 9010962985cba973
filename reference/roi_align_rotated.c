/* roi_align_rotated (spec 3) and roi_align_rotated_grad (spec 4) in double.
 * The kernels compute in the documented layout (NCHW features, rois [K, 6]); data_format NHWC is
 * the same math read and written channels-last (rois [6, K] are transposed first): every element
 * sums the same terms in the same order, so the two layouts give identical numbers.
 * The fast golden's half of the op: roi geometry and the samples of a bin for roi_family.c's
 * shared loops; the spec's loops whole are reference/plain/roi_family.c. */
#include "roi_bounds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One roi after the formulas of spec 3. */
typedef struct {
    ref_roi_head h;         /* image and sample counts: first, for the shared backward loop */
    double Cy, Cx, Hr, Wr;  /* centre (shifted by the aligned offset) and extent in feature pixels */
    double bin_h, bin_w, cos_t, sin_t;
    ref_roi_axes ax;        /* the bounds' inputs of its axes (roi_bounds.h) */
} roi_geom;

/* An extent after the unaligned max(r, 1) (a NaN extent stays NaN, as in roi_align). */
static double clamp_extent(double r, int aligned) { return (!aligned && r < 1.0) ? 1.0 : r; }

static roi_geom roi_geometry(const ref_roi_align_rotated_params *p, const double *roi, double pos_rel_err)
{
    roi_geom g;
    memset(&g, 0, sizeof g);
    double bf = floor(roi[0]);
    g.h.b = (isfinite(bf) && bf >= 0 && bf < (double)p->B) ? (int64_t)bf : -1;

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
    g.h.gh = adaptive ? ref_adaptive_count(g.Hr / (double)p->pooled_h) : p->sampling_ratio;
    g.h.gw = adaptive ? ref_adaptive_count(g.Wr / (double)p->pooled_w) : p->sampling_ratio;

    ref_roi_rotated_axes(p, roi, g.Hr, g.Wr, g.h.gh, g.h.gw, pos_rel_err, &g.ax, &g.h.cr);
    return g;
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

/* ---- the samples of a bin (NCHW, rois [K, 6]) ---------------------------------------------- */

/* The gh x gw samples of bin (ph, pw), in the spec's order, with their position errors: the one
 * loop both directions run (roi_family.c sums them forward and scatters them backward). */
static void bin_samples(const void *op, const ref_roi_head *head, int64_t ph, int64_t pw, int64_t gh, int64_t gw,
                        double pos_rel_err, ref_sample_fn emit, void *ctx)
{
    const roi_geom *g = (const roi_geom *)head;
    if (gh <= 0 || gw <= 0) return; /* no samples (a negative count on one axis must not loop on the other) */
    for (int64_t iy = 0; iy < gh; iy++)
        for (int64_t ix = 0; ix < gw; ix++) {
            double y, x;
            sample_pos(g, ph, pw, iy, ix, gh, gw, &y, &x);
            double dy = ref_sample_pos_err(g->ax.exact_y, gh, g->h.gh, pos_rel_err, g->ax.mag_y, y);
            double dx = ref_sample_pos_err(g->ax.exact_x, gw, g->h.gw, pos_rel_err, g->ax.mag_x, x);
            emit(ctx, y, x, dy, dx);
        }
}

static void geometry_of(const void *op, const double *roi, double pos_rel_err, void *g)
{
    *(roi_geom *)g = roi_geometry(op, roi, pos_rel_err);
}

static ref_roi_op family_op(const ref_roi_align_rotated_params *p)
{
    return (ref_roi_op){p, p->B, p->C, p->H, p->W, p->K, p->pooled_h, p->pooled_w, 6, geometry_of, sizeof(roi_geom),
                        bin_samples, 0};
}

static void forward_nchw(const ref_roi_align_rotated_params *p, const double *x, const double *rois, double *y,
                         ref_bounds *bounds)
{
    const ref_roi_op op = family_op(p);
    ref_roi_forward(&op, x, rois, y, bounds);
}

static void backward_nchw(const ref_roi_align_rotated_params *p, const double *x_grad, const double *rois,
                          double *y_grad, ref_bounds *bounds)
{
    const ref_roi_op op = family_op(p);
    ref_roi_backward(&op, x_grad, rois, y_grad, bounds);
}

/* ---- data_format NHWC: the shared loops read and write channels-last themselves ----------- */

static double *alloc_doubles(int64_t n) { return malloc(sizeof(double) * (size_t)(n > 0 ? n : 1)); }

/* The family's forward (fwd) or backward on NHWC tensors: only the rois are permuted, [6, K] -> [K, 6]
 * (a pixel's channels side by side serve the 8 lanes of a tile directly) */
static void run_nhwc(const ref_roi_align_rotated_params *p, const double *in, const double *rois, double *out,
                     ref_bounds *bounds, int fwd)
{
    double *croi = alloc_doubles(6 * p->K);
    ref_roi_op op = family_op(p);
    op.nhwc = 1;
    if (croi) {
        for (int64_t k = 0; k < p->K; k++)
            for (int f = 0; f < 6; f++) croi[6 * k + f] = rois[f * p->K + k];
        if (fwd) ref_roi_forward(&op, in, croi, out, bounds);
        else ref_roi_backward(&op, in, croi, out, bounds);
    } else { /* out of memory: a reference that cannot run says so loudly */
        const int64_t n = fwd ? p->K * p->pooled_h * p->pooled_w * p->C : p->B * p->H * p->W * p->C;
        for (int64_t i = 0; i < n; i++) out[i] = NAN;
    }
    free(croi);
}

void f64_roi_align_rotated_fwd__ref(const ref_roi_align_rotated_params *p, const double *x, const double *rois,
                                    double *y, ref_bounds *bounds)
{
    if (!p->nhwc) forward_nchw(p, x, rois, y, bounds);
    else run_nhwc(p, x, rois, y, bounds, 1);
}

void f64_roi_align_rotated_bwd__ref(const ref_roi_align_rotated_params *p, const double *x_grad,
                                    const double *rois, double *y_grad, ref_bounds *bounds)
{
    if (!p->nhwc) backward_nchw(p, x_grad, rois, y_grad, bounds);
    else run_nhwc(p, x_grad, rois, y_grad, bounds, 0);
}

ref_roi_op ref_roi_align_rotated_family(const ref_roi_align_rotated_params *p)
{
    ref_roi_op op = family_op(p);
    op.nhwc = p->nhwc;
    return op;
}
