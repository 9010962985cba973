/* Property tests of the caps for the RoIAlign family (roi_align, roi_align_v2_backward,
 * roi_align_rotated, roi_align_rotated_grad): rois whose coordinates are extreme but finite (up
 * to 1e9, around 2^24, near the int32 limits, both signs) or on the plane, on planes of values in
 * [1, 20]. Every element's pos_err + ambig stays within what the element can change by, and an
 * output moved by that much (and its own rounding) fails.
 *
 * What an element can change by:
 *   forward: a bin's value is the mean of samples that are each 0 (outside) or a convex
 *     combination of taps in [1, 20]: it lies in [0, 20], whatever the positions.
 *   backward: a bin adds go w / count to a pixel for each of its samples, w in [0, 1] the pixel's
 *     weight in that sample (clamped corners that coincide still sum to at most 1), so a bin moves
 *     a pixel's gradient by at most |go|, on every branch (another sample count, a sample kept or
 *     dropped at the window). Only a bin some sample of which can reach the pixel counts: the
 *     pixels within its rectangle grown by its samples' rounding box (2 k_pos u times the
 *     position's magnitude: twice the model's) and 2 pixels (the two taps, and the clamp of rule
 *     A from y in [-1, 0) onto row 0). The reach of a pixel is the sum of |go| over those bins.
 * Adaptive sample counts are not drawn: a huge roi would need up to 1e17 samples a bin, which the
 * harness refuses before the reference runs. */
#include "tolerance_caps.h"

#define CAP_B 100
#define CAP_C 2
#define CAP_H 9
#define CAP_W 7
#define CAP_K 1000

/* a roi coordinate in image pixels: extreme, or on the plane (or just off it) */
static double roi_coord(unsigned *s, int64_t n, double scale)
{
    return rand_r(s) % 2 ? extreme(s) : (double)(float)((-3.0 + ((double)n + 5.0) * uniform(s)) / scale);
}

/* the margin of a bin's rectangle (centre v, half-extent half): its samples' rounding box (twice the
   model's k_pos u (mag + |sample|)) and 2 pixels of taps and clamp */
static double margin(const op_desc *op, double mag, double v, double half)
{
    return 2.0 + 2.0 * op->tol[0].k_pos * ldexp(1.0, -24) * (mag + fabs(v) + half);
}

/* ---- one property loop, a family's geometry in callbacks ---------------------------------- */

typedef struct {
    int aligned, sr, pooled, clockwise;
    double scale;
} roi_cfg;

typedef struct {
    const char *fwd, *bwd; /* the two ops */
    unsigned seed;
    int fields; /* per roi: batch index first */
    roi_cfg (*config)(int cfg);
    void (*draw)(unsigned *s, double *r, double scale); /* fields 1.. of a roi */
    void (*reference)(const roi_cfg *c, int backward, const double *in, const double *rois, double *out, ref_bounds *b);
    /* bin (ph, pw) of roi r: the centre and the half-extents of where its samples can reach */
    void (*reach)(const op_desc *op, const roi_cfg *c, const double *r, int ph, int pw, double *yc, double *xc,
                  double *hy, double *hx);
} roi_family;

/* the reach of every pixel of the backward: the sum of |go| over the bins that can touch it */
static double *backward_reach(const roi_family *f, const op_desc *op, const roi_cfg *c, const double *rois,
                              const double *go)
{
    double *reach = calloc((size_t)(CAP_B * CAP_C * CAP_H * CAP_W), sizeof(double));
    for (int64_t k = 0; k < CAP_K; k++) {
        const double *r = rois + f->fields * k;
        for (int ph = 0; ph < c->pooled; ph++)
            for (int pw = 0; pw < c->pooled; pw++) {
                double yc, xc, hy, hx;
                f->reach(op, c, r, ph, pw, &yc, &xc, &hy, &hx);
                for (int64_t ch = 0; ch < CAP_C; ch++) {
                    double g = fabs(go[((k * CAP_C + ch) * c->pooled + ph) * c->pooled + pw]);
                    add_rect(reach + ((int64_t)r[0] * CAP_C + ch) * CAP_H * CAP_W, CAP_H, CAP_W, 1, yc, xc, hy, hx, g);
                }
            }
    }
    return reach;
}

static int64_t roi_property(const roi_family *f, int backward)
{
    const op_desc *op = op_find(backward ? f->bwd : f->fwd);
    unsigned seed = f->seed;
    int64_t total = 0;
    for (int cfg = 0; cfg < 8; cfg++) {
        const roi_cfg c = f->config(cfg);
        const int64_t nx = CAP_B * CAP_C * CAP_H * CAP_W, ny = CAP_K * CAP_C * c.pooled * c.pooled;
        double *rois = malloc(sizeof(double) * (size_t)(f->fields * CAP_K));
        for (int64_t k = 0; k < CAP_K; k++) {
            double *r = rois + f->fields * k;
            r[0] = (double)(rand_r(&seed) % CAP_B);
            f->draw(&seed, r, c.scale);
        }
        char what[96];
        snprintf(what, sizeof what, "%s aligned %d sr %d pooled %d clockwise %d scale %g", op->name, c.aligned, c.sr,
                 c.pooled, c.clockwise, c.scale);
        const int64_t n_in = backward ? ny : nx, n_out = backward ? nx : ny;
        double *in = plane_values(n_in, &seed), *out = malloc(sizeof(double) * (size_t)n_out);
        ref_bounds b = bounds_alloc(op->tol[0].k_pos * CONFORM_U_F32, n_out);
        f->reference(&c, backward, in, rois, out, &b);
        double *reach = backward ? backward_reach(f, op, &c, rois, in) : NULL;
        assert_below_reach(op, 0, out, &b, n_out, reach, backward ? 0 : PLANE_HI, what);
        bounds_free(&b); free(in); free(out); free(reach); free(rois);
        total += n_out;
    }
    return total;
}

/* ---- roi_align, roi_align_v2_backward ------------------------------------------------------- */

static roi_cfg roi_align_config(int cfg)
{
    return (roi_cfg){cfg & 1, 1 + (cfg >> 1 & 1), 2 + (cfg >> 2), 0, (cfg >> 1 & 1) ? 0.125 : 1.0};
}

static void roi_align_draw(unsigned *s, double *r, double scale)
{
    r[1] = roi_coord(s, CAP_W, scale); r[2] = roi_coord(s, CAP_H, scale);
    r[3] = roi_coord(s, CAP_W, scale); r[4] = roi_coord(s, CAP_H, scale);
}

static void roi_align_reference(const roi_cfg *c, int backward, const double *in, const double *rois, double *out,
                                ref_bounds *b)
{
    ref_roi_align_params p = {CAP_B, CAP_C, CAP_H, CAP_W, CAP_K, c->pooled, c->pooled, c->scale, c->sr, c->aligned, 0};
    (backward ? f64_roi_align_bwd__ref : f64_roi_align_fwd__ref)(&p, in, rois, out, b);
}

static void roi_align_reach(const op_desc *op, const roi_cfg *c, const double *r, int ph, int pw, double *yc,
                            double *xc, double *hy, double *hx)
{
    const double scale = c->scale, off = c->aligned ? 0.5 : 0.0;
    double sy = r[2] * scale - off, sx = r[1] * scale - off;
    double rh = r[4] * scale - off - sy, rw = r[3] * scale - off - sx;
    if (!c->aligned) { rh = fmax(rh, 1.0); rw = fmax(rw, 1.0); }
    double bh = rh / c->pooled, bw = rw / c->pooled;
    double my = fabs(r[2] * scale) + fabs(r[4] * scale) + off, mx = fabs(r[1] * scale) + fabs(r[3] * scale) + off;
    *yc = sy + (ph + 0.5) * bh;
    *xc = sx + (pw + 0.5) * bw;
    *hy = fabs(bh) / 2 + margin(op, my, *yc, fabs(bh) / 2);
    *hx = fabs(bw) / 2 + margin(op, mx, *xc, fabs(bw) / 2);
}

static const roi_family roi_align_family = {"roi_align", "roi_align_v2_backward", 2401, 5, roi_align_config,
                                            roi_align_draw, roi_align_reference, roi_align_reach};

Test(tolerance_caps, roi_align_values_at_extreme_rois_stay_within_the_plane_range)
{
    cr_assert_geq(roi_property(&roi_align_family, 0), 100000);
}

Test(tolerance_caps, roi_align_v2_backward_gradients_at_extreme_rois_stay_within_their_bins)
{
    cr_assert_geq(roi_property(&roi_align_family, 1), 100000);
}

/* ---- roi_align_rotated, roi_align_rotated_grad ---------------------------------------------- */

static roi_cfg rotated_config(int cfg)
{
    return (roi_cfg){cfg & 1, 1 + (cfg >> 1 & 1), 2 + (cfg >> 2), cfg >> 1 & 1, (cfg >> 2 & 1) ? 0.125 : 1.0};
}

static void rotated_draw(unsigned *s, double *r, double scale)
{
    r[1] = roi_coord(s, CAP_W, scale); r[2] = roi_coord(s, CAP_H, scale);
    /* extents: extreme, or up to twice the plane; angles exactly 0 in one roi of four */
    r[3] = rand_r(s) % 2 ? (double)(float)extreme_mag(s) : (double)(float)(2.0 * CAP_W * uniform(s) / scale);
    r[4] = rand_r(s) % 2 ? (double)(float)extreme_mag(s) : (double)(float)(2.0 * CAP_H * uniform(s) / scale);
    r[5] = rand_r(s) % 4 == 0 ? 0.0 : (double)(float)(6.4 * uniform(s) - 3.2);
}

static void rotated_reference(const roi_cfg *c, int backward, const double *in, const double *rois, double *out,
                              ref_bounds *b)
{
    ref_roi_align_rotated_params p = {CAP_B,     CAP_C,    CAP_H, CAP_W,      CAP_K,        c->pooled,
                                      c->pooled, c->scale, c->sr, c->aligned, c->clockwise, 0};
    (backward ? f64_roi_align_rotated_bwd__ref : f64_roi_align_rotated_fwd__ref)(&p, in, rois, out, b);
}

static void rotated_reach(const op_desc *op, const roi_cfg *c, const double *r, int ph, int pw, double *yc,
                          double *xc, double *hy, double *hx)
{
    const double scale = c->scale, off = c->aligned ? 0.5 : 0.0;
    double Cy = r[2] * scale - off, Cx = r[1] * scale - off, Hr = r[4] * scale, Wr = r[3] * scale;
    if (!c->aligned) { Hr = fmax(Hr, 1.0); Wr = fmax(Wr, 1.0); }
    double th = c->clockwise ? -r[5] : r[5], ct = cos(th), st = sin(th), bh = Hr / c->pooled, bw = Wr / c->pooled;
    /* a bin is a rectangle of half-extents bh/2, bw/2 turned about its centre: within
       (|bh| + |bw|) / 2 of it along either axis */
    double rad = (fabs(bh) + fabs(bw)) / 2, ext = fabs(Hr) + fabs(Wr);
    double yy = -Hr / 2 + (ph + 0.5) * bh, xx = -Wr / 2 + (pw + 0.5) * bw;
    *yc = yy * ct - xx * st + Cy;
    *xc = yy * st + xx * ct + Cx;
    *hy = rad + margin(op, fabs(r[2] * scale) + off + ext, *yc, rad);
    *hx = rad + margin(op, fabs(r[1] * scale) + off + ext, *xc, rad);
}

static const roi_family rotated_family = {"roi_align_rotated", "roi_align_rotated_grad", 2402, 6, rotated_config,
                                          rotated_draw, rotated_reference, rotated_reach};

Test(tolerance_caps, roi_align_rotated_values_at_extreme_rois_stay_within_the_plane_range)
{
    cr_assert_geq(roi_property(&rotated_family, 0), 100000);
}

Test(tolerance_caps, roi_align_rotated_grad_gradients_at_extreme_rois_stay_within_their_bins)
{
    cr_assert_geq(roi_property(&rotated_family, 1), 100000);
}
