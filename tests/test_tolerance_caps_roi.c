/* Property tests of issue 24 for the RoIAlign family (roi_align, roi_align_v2_backward,
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

/* ---- roi_align, roi_align_v2_backward ------------------------------------------------------- */

static int64_t roi_align_property(int backward)
{
    const op_desc *op = op_find(backward ? "roi_align_v2_backward" : "roi_align");
    unsigned seed = 2401;
    int64_t total = 0;
    for (int cfg = 0; cfg < 8; cfg++) {
        const int aligned = cfg & 1, sr = 1 + (cfg >> 1 & 1), pooled = 2 + (cfg >> 2);
        const double scale = (cfg >> 1 & 1) ? 0.125 : 1.0;
        ref_roi_align_params p = {CAP_B, CAP_C, CAP_H, CAP_W, CAP_K, pooled, pooled, scale, sr, aligned, 0};
        const int64_t nx = p.B * p.C * p.H * p.W, ny = p.K * p.C * pooled * pooled;
        double *rois = malloc(sizeof(double) * (size_t)(5 * p.K));
        for (int64_t k = 0; k < p.K; k++) {
            double *r = rois + 5 * k;
            r[0] = (double)(rand_r(&seed) % p.B);
            r[1] = roi_coord(&seed, p.W, scale); r[2] = roi_coord(&seed, p.H, scale);
            r[3] = roi_coord(&seed, p.W, scale); r[4] = roi_coord(&seed, p.H, scale);
        }
        char what[80];
        snprintf(what, sizeof what, "%s aligned %d sr %d pooled %d scale %g", op->name, aligned, sr, pooled, scale);
        if (!backward) {
            double *x = plane_values(nx, &seed), *y = malloc(sizeof(double) * (size_t)ny);
            ref_bounds b = bounds_alloc(op->tol[0].k_pos * CONFORM_U_F32, ny);
            f64_roi_align_fwd__ref(&p, x, rois, y, &b);
            assert_below_reach(op, 0, y, &b, ny, NULL, PLANE_HI, what);
            bounds_free(&b); free(x); free(y);
            total += ny;
        } else {
            double *go = plane_values(ny, &seed), *gi = malloc(sizeof(double) * (size_t)nx);
            double *reach = calloc((size_t)nx, sizeof(double));
            ref_bounds b = bounds_alloc(op->tol[0].k_pos * CONFORM_U_F32, nx);
            f64_roi_align_bwd__ref(&p, go, rois, gi, &b);
            const double off = aligned ? 0.5 : 0.0;
            for (int64_t k = 0; k < p.K; k++) {
                const double *r = rois + 5 * k;
                double sy = r[2] * scale - off, sx = r[1] * scale - off;
                double rh = r[4] * scale - off - sy, rw = r[3] * scale - off - sx;
                if (!aligned) { rh = fmax(rh, 1.0); rw = fmax(rw, 1.0); }
                double bh = rh / pooled, bw = rw / pooled;
                double my = fabs(r[2] * scale) + fabs(r[4] * scale) + off, mx = fabs(r[1] * scale) + fabs(r[3] * scale) + off;
                for (int64_t c = 0; c < p.C; c++)
                    for (int ph = 0; ph < pooled; ph++)
                        for (int pw = 0; pw < pooled; pw++) {
                            double yc = sy + (ph + 0.5) * bh, xc = sx + (pw + 0.5) * bw;
                            double g = fabs(go[((k * p.C + c) * pooled + ph) * pooled + pw]);
                            add_rect(reach + ((int64_t)r[0] * p.C + c) * p.H * p.W, p.H, p.W, 1, yc, xc,
                                     fabs(bh) / 2 + margin(op, my, yc, fabs(bh) / 2),
                                     fabs(bw) / 2 + margin(op, mx, xc, fabs(bw) / 2), g);
                        }
            }
            assert_below_reach(op, 0, gi, &b, nx, reach, 0, what);
            bounds_free(&b); free(go); free(gi); free(reach);
            total += nx;
        }
        free(rois);
    }
    return total;
}

Test(tolerance_caps, roi_align_values_at_extreme_rois_stay_within_the_plane_range)
{
    cr_assert_geq(roi_align_property(0), 100000);
}

Test(tolerance_caps, roi_align_v2_backward_gradients_at_extreme_rois_stay_within_their_bins)
{
    cr_assert_geq(roi_align_property(1), 100000);
}

/* ---- roi_align_rotated, roi_align_rotated_grad ---------------------------------------------- */

static int64_t rotated_property(int backward)
{
    const op_desc *op = op_find(backward ? "roi_align_rotated_grad" : "roi_align_rotated");
    unsigned seed = 2402;
    int64_t total = 0;
    for (int cfg = 0; cfg < 8; cfg++) {
        const int aligned = cfg & 1, sr = 1 + (cfg >> 1 & 1), pooled = 2 + (cfg >> 2), clockwise = cfg >> 1 & 1;
        const double scale = (cfg >> 2 & 1) ? 0.125 : 1.0;
        ref_roi_align_rotated_params p = {CAP_B, CAP_C, CAP_H, CAP_W, CAP_K, pooled, pooled, scale, sr, aligned, clockwise, 0};
        const int64_t nx = p.B * p.C * p.H * p.W, ny = p.K * p.C * pooled * pooled;
        double *rois = malloc(sizeof(double) * (size_t)(6 * p.K));
        for (int64_t k = 0; k < p.K; k++) {
            double *r = rois + 6 * k;
            r[0] = (double)(rand_r(&seed) % p.B);
            r[1] = roi_coord(&seed, p.W, scale); r[2] = roi_coord(&seed, p.H, scale);
            /* extents: extreme, or up to twice the plane; angles exactly 0 in one roi of four */
            r[3] = rand_r(&seed) % 2 ? (double)(float)extreme_mag(&seed) : (double)(float)(2.0 * p.W * uniform(&seed) / scale);
            r[4] = rand_r(&seed) % 2 ? (double)(float)extreme_mag(&seed) : (double)(float)(2.0 * p.H * uniform(&seed) / scale);
            r[5] = rand_r(&seed) % 4 == 0 ? 0.0 : (double)(float)(6.4 * uniform(&seed) - 3.2);
        }
        char what[96];
        snprintf(what, sizeof what, "%s aligned %d sr %d pooled %d clockwise %d scale %g", op->name, aligned, sr,
                 pooled, clockwise, scale);
        if (!backward) {
            double *x = plane_values(nx, &seed), *y = malloc(sizeof(double) * (size_t)ny);
            ref_bounds b = bounds_alloc(op->tol[0].k_pos * CONFORM_U_F32, ny);
            f64_roi_align_rotated_fwd__ref(&p, x, rois, y, &b);
            assert_below_reach(op, 0, y, &b, ny, NULL, PLANE_HI, what);
            bounds_free(&b); free(x); free(y);
            total += ny;
        } else {
            double *go = plane_values(ny, &seed), *gi = malloc(sizeof(double) * (size_t)nx);
            double *reach = calloc((size_t)nx, sizeof(double));
            ref_bounds b = bounds_alloc(op->tol[0].k_pos * CONFORM_U_F32, nx);
            f64_roi_align_rotated_bwd__ref(&p, go, rois, gi, &b);
            const double off = aligned ? 0.5 : 0.0;
            for (int64_t k = 0; k < p.K; k++) {
                const double *r = rois + 6 * k;
                double Cy = r[2] * scale - off, Cx = r[1] * scale - off, Hr = r[4] * scale, Wr = r[3] * scale;
                if (!aligned) { Hr = fmax(Hr, 1.0); Wr = fmax(Wr, 1.0); }
                double th = clockwise ? -r[5] : r[5], ct = cos(th), st = sin(th), bh = Hr / pooled, bw = Wr / pooled;
                /* a bin is a rectangle of half-extents bh/2, bw/2 turned about its centre: within
                   (|bh| + |bw|) / 2 of it along either axis */
                double rad = (fabs(bh) + fabs(bw)) / 2, ext = fabs(Hr) + fabs(Wr);
                for (int64_t c = 0; c < p.C; c++)
                    for (int ph = 0; ph < pooled; ph++)
                        for (int pw = 0; pw < pooled; pw++) {
                            double yy = -Hr / 2 + (ph + 0.5) * bh, xx = -Wr / 2 + (pw + 0.5) * bw;
                            double yc = yy * ct - xx * st + Cy, xc = yy * st + xx * ct + Cx;
                            double g = fabs(go[((k * p.C + c) * pooled + ph) * pooled + pw]);
                            add_rect(reach + ((int64_t)r[0] * p.C + c) * p.H * p.W, p.H, p.W, 1, yc, xc,
                                     rad + margin(op, fabs(r[2] * scale) + off + ext, yc, rad),
                                     rad + margin(op, fabs(r[1] * scale) + off + ext, xc, rad), g);
                        }
            }
            assert_below_reach(op, 0, gi, &b, nx, reach, 0, what);
            bounds_free(&b); free(go); free(gi); free(reach);
            total += nx;
        }
        free(rois);
    }
    return total;
}

Test(tolerance_caps, roi_align_rotated_values_at_extreme_rois_stay_within_the_plane_range)
{
    cr_assert_geq(rotated_property(0), 100000);
}

Test(tolerance_caps, roi_align_rotated_grad_gradients_at_extreme_rois_stay_within_their_bins)
{
    cr_assert_geq(rotated_property(1), 100000);
}
