/* grid_sampler_2d (ops.md 7) and grid_sampler_2d_backward (ops.md 8 = 7's backward) as the spec's
 * straight loops: the plain golden, which the fast one (reference/grid_sampler.c) equals bit for
 * bit, values and bounds (make check-golden).
 *
 * A point (n, h, w) of the grid is a separable stencil (grid_point_at, reference/grid_bounds.c):
 * along x its in-bounds taps pt.x.idx[i] with weights pt.x.w[i] and their derivatives pt.x.dw[i]
 * in the padded coordinate, likewise along y, and the multipliers pt.x.mult, pt.y.mult of 7.1
 * (unnormalize times the padding's derivative). Bilinear (7.3): taps floor(ix), floor(ix) + 1 with
 * weights (x_se - ix), (ix - x_nw) and derivatives -1, +1, so the stencil's corners in order are
 * nw, ne, sw, se and w_y[j] w_x[i] is the spec's corner weight. Nearest (7.4): one tap, weight 1,
 * derivative 0. Bicubic (7.5): four taps, the cubic coefficients and their derivatives.
 *
 * Every element sums its terms in the spec's order: a forward element over its taps; an input_grad
 * element over the points in grid order, each point's taps in stencil order; a grid_grad element
 * over the channels, each channel's taps in stencil order. The bounds (ref_bounds) are the
 * helpers of grid_bounds.h, one per bound, which the fast golden calls too. */
#include "../grid_bounds.h"
#include "conform_plain.h"

#include <math.h>
#include <stdlib.h>

/* max |v| of every plane of input (bicubic's bounds read it); NULL where none is needed */
static double *plane_maxima(const ref_grid_sampler_params *p, const double *input, int needed)
{
    const int64_t HW = p->H * p->W;
    double *m = needed ? malloc(sizeof(double) * (size_t)(p->N * p->C + 1)) : NULL;
    for (int64_t k = 0; m && k < p->N * p->C; k++) m[k] = grid_plane_max(input + k * HW, HW);
    return m;
}

/* output[n, c, h, w] = sum over the in-bounds taps of w_y w_x input[n, c, tap] (7.3, 7.4, 7.5) */
void f64_grid_sampler_2d_fwd__plain(const ref_grid_sampler_params *p, const double *input, const double *grid,
                                    double *output, ref_bounds *bounds)
{
    const int64_t HW = p->H * p->W, P = p->Ho * p->Wo;
    const double pre = bounds ? bounds->pos_rel_err : 0.0;
    double *vmax = plane_maxima(p, input, bounds && p->interpolation_mode == 2);
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t q = 0; q < P; q++) { /* q = h Wo + w */
            point pt;
            box_taps alt;
            grid_fwd_geo geo;
            const int has_alt = grid_fwd_geo_of(p, grid + (n * P + q) * 2, pre, bounds != NULL, &pt, &alt, &geo);
            for (int64_t c = 0; c < p->C; c++) {
                const double *plane = input + (n * p->C + c) * HW;
                const int64_t e = (n * p->C + c) * P + q;
                double v = 0, abs_sum = 0, pe_taps = 0;
                for (int j = 0; j < pt.y.n; j++)
                    for (int i = 0; i < pt.x.n; i++) {
                        const double x = plane[pt.y.idx[j] * p->W + pt.x.idx[i]];
                        v += pt.y.w[j] * pt.x.w[i] * x;
                        abs_sum += grid_tap_cross(&pt, j, i) * fabs(x);
                        pe_taps += fabs(x) * grid_tap_kp(&pt, j, i);
                    }
                output[e] = v;
                if (!bounds) continue;
                double sy = 0, sx = 0;
                if (geo.slope) grid_slopes(plane, p->H, p->W, geo.ybase, geo.xbase, &sy, &sx);
                grid_forward_bounds(p, &geo, has_alt ? &alt : NULL, plane, pe_taps, sy, sx, vmax ? vmax[n * p->C + c] : 0,
                                    v, abs_sum, e, bounds);
            }
        }
    free(vmax);
}

/* One channel's terms of the grid gradient of the stencil x by y (7.3; 7.5 alike): with v the
 * input at a tap and g = grad_output, gix += v dw_x w_y g and giy += v w_x dw_y g, which for
 * bilinear's corners are the spec's
 *   nw: gix -= v (y_se - iy) g ; giy -= v (x_se - ix) g
 *   ne: gix += v (y_sw - iy) g ; giy -= v (ix - x_sw) g
 *   sw: gix -= v (iy - y_ne) g ; giy += v (x_ne - ix) g
 *   se: gix += v (iy - y_nw) g ; giy += v (ix - x_nw) g
 * (dw = -1 only flips a sign, exactly). Nearest has no grid gradient (7.4). With bounds, the terms'
 * magnitudes and position terms (grid_gg_tap) and sum |g| max |v| (vm) beside them. */
static void channel_terms(const ref_grid_sampler_params *p, const axis_taps *x, const axis_taps *y, double dx,
                          double dy, const double *plane, double g, double vm, int bounds, gg_sums *s)
{
    if (bounds) s->sg += fabs(g) * vm;
    for (int j = 0; j < y->n; j++)
        for (int i = 0; i < x->n; i++) {
            const double v = plane[y->idx[j] * p->W + x->idx[i]];
            if (p->interpolation_mode != 1) {
                s->gix += v * x->dw[i] * y->w[j] * g;
                s->giy += v * x->w[i] * y->dw[j] * g;
            }
            if (!bounds) continue;
            gg_tap t;
            grid_gg_tap(x, i, y, j, dx, dy, p->W, &t);
            const double va = fabs(v) * fabs(g);
            s->abs_x += va * t.kax;
            s->abs_y += va * t.kay;
            s->pe_x += va * t.kpx;
            s->pe_y += va * t.kpy;
        }
}

/* grid_grad[n, h, w] = (gx_mult gix, gy_mult giy), gix and giy summed over the channels of image n
 * (7.3). With bounds, the same sums at the point's box points (where its grid gradient may jump
 * there: r[1 .. 8]) and sum |g| slope_reach, for grid_grad_bounds. */
static void grid_grad_point(const ref_grid_sampler_params *p, const double *grad_output, const double *input,
                            const double *vmax, int64_t n, int64_t q, const point_work *w, double *grid_grad,
                            const ref_bounds *bg)
{
    const int64_t HW = p->H * p->W, P = p->Ho * p->Wo, e = (n * P + q) * 2;
    const int bounds = bg != NULL;
    gg_rec r[9];
    gg_sums s[9] = {{0}};
    grid_gg_rec_of(p, w, &w->pt.x, &w->pt.y, 0, bounds, &r[0]);
    for (int a = 0; a < r[0].nalt; a++) grid_gg_rec_of(p, w, grid_box_x(&w->box, a), grid_box_y(&w->box, a), 1, bounds, &r[1 + a]);
    for (int64_t c = 0; c < p->C; c++) {
        const double g = grad_output[(n * p->C + c) * P + q], *plane = input + (n * p->C + c) * HW;
        const double vm = vmax ? vmax[n * p->C + c] : 0;
        channel_terms(p, &w->pt.x, &w->pt.y, w->pt.pdx, w->pt.pdy, plane, g, vm, bounds, &s[0]);
        if (bounds) s[0].r += fabs(g) * grid_slope_reach(p, &r[0].rect, plane, 1);
        for (int a = 0; a < r[0].nalt; a++)
            channel_terms(p, grid_box_x(&w->box, a), grid_box_y(&w->box, a), w->pt.pdx, w->pt.pdy, plane, g, vm, bounds,
                          &s[1 + a]);
    }
    grid_gg_value(p, &r[0], &s[0], &grid_grad[e]);
    if (bounds) grid_grad_bounds(p, r, s, &grid_grad[e], e, bg);
}

/* input_grad[n, c, tap] += w_y w_x g for every in-bounds tap of the point (7.3, 7.4, 7.5), g =
 * grad_output[n, c, h, w]. With bounds: each term's abs_sum (grid_tap_cross), n_terms and pos_err
 * (grid_tap_fm); the pixels a float twin may reach across a cell edge (pos_err, w->extra_*); a wide
 * box's whole reach and nearest's ties (ambig; a tie's gained sample is a term too). */
static void input_grad_point(const ref_grid_sampler_params *p, const double *grad_output, int64_t n, int64_t q,
                             const point_work *w, double *input_grad, const ref_bounds *bi)
{
    const int64_t HW = p->H * p->W, P = p->Ho * p->Wo;
    const point *pt = &w->pt;
    for (int64_t c = 0; c < p->C; c++) {
        const int64_t base = (n * p->C + c) * HW;
        const double g = grad_output[(n * p->C + c) * P + q], ag = fabs(g);
        for (int j = 0; j < pt->y.n; j++)
            for (int i = 0; i < pt->x.n; i++) {
                const int64_t k = base + pt->y.idx[j] * p->W + pt->x.idx[i];
                input_grad[k] += g * pt->y.w[j] * pt->x.w[i];
                if (!bi) continue;
                if (bi->abs_sum) bi->abs_sum[k] += ag * grid_tap_cross(pt, j, i);
                if (bi->n_terms) bi->n_terms[k] += 1;
                if (bi->pos_err) bi->pos_err[k] += ag * grid_tap_fm(p, pt, j, i);
            }
        if (!bi) continue;
        for (int x = 0; x < w->n_extra; x++)
            if (isfinite(g)) bi->pos_err[base + w->extra_idx[x]] += ag * w->extra_w[x];
        if (!bi->ambig) continue;
        int64_t r0 = 0, r1 = -1, c0 = 0, c1 = -1;
        if (pt->wide) grid_wide_rect(p, pt, &r0, &r1, &c0, &c1);
        for (int64_t y = r0; y <= r1; y++)
            for (int64_t x = c0; x <= c1; x++) bi->ambig[base + y * p->W + x] += ag * grid_w_spread(p);
        for (int t = 0; t < w->n_tie; t++) {
            const int64_t k = base + w->tie_pix[t];
            bi->ambig[k] += ag;
            if (!grid_tie_counts(p, pt, w->tie_pix[t])) continue;
            if (bi->abs_sum) bi->abs_sum[k] += ag;
            if (bi->n_terms) bi->n_terms[k] += 1;
        }
    }
}

static void zero_with_bounds(double *t, const ref_bounds *b, int64_t n)
{
    grid_zero(t, n);
    if (b) { grid_zero(b->abs_sum, n); grid_zero(b->n_terms, n); grid_zero(b->pos_err, n); grid_zero(b->ambig, n); }
}

/* input_grad and grid_grad from zeros, point by point in grid order; an output whose output_mask
 * flag is 0 stays zero. bounds: NULL or two (input_grad, grid_grad). */
void f64_grid_sampler_2d_bwd__plain(const ref_grid_sampler_params *p, const double *grad_output,
                                    const double *input, const double *grid, double *input_grad,
                                    double *grid_grad, ref_bounds *bounds)
{
    const int64_t P = p->Ho * p->Wo;
    const double pre = bounds ? bounds->pos_rel_err : 0.0;
    const ref_bounds *bi = bounds ? &bounds[0] : NULL, *bg = bounds ? &bounds[1] : NULL;
    zero_with_bounds(input_grad, bi, p->N * p->C * p->H * p->W);
    zero_with_bounds(grid_grad, bg, p->N * P * 2);
    double *vmax = plane_maxima(p, input, bounds && p->interpolation_mode == 2);
    /* input_grad's pos_err reaches the taps across a cell edge */
    const int extras = bi && bi->pos_err && p->interpolation_mode != 1;
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t q = 0; q < P; q++) {
            point_work w;
            grid_point_setup(p, grid + (n * P + q) * 2, pre, bounds != NULL, extras, &w);
            if (p->output_mask[1]) grid_grad_point(p, grad_output, input, vmax, n, q, &w, grid_grad, bg);
            if (p->output_mask[0]) input_grad_point(p, grad_output, n, q, &w, input_grad, bi);
        }
    free(vmax);
}
