/* grid_sampler_2d (ops.md 7) and grid_sampler_2d_backward (ops.md 8 = 7's backward) as the spec's
 * straight loops: the plain golden, which the fast one (reference/grid_sampler.c) equals bit for
 * bit, values and bounds (make check-golden).
 *
 * The values are the spec's lines: 7.1 and 7.2 (coordinates), 7.3 (bilinear's four corners), 7.4
 * (nearest), 7.5 (bicubic's 16 taps), per point (n, h, w) of the grid and channel c. Where the spec
 * leaves a product's order open, it is fixed to the fast golden's (input_grad: g times the y
 * factor times the x factor; bicubic's giy: v xc yg g): a product of three roundings is not
 * associative, and the two goldens must agree to the bit.
 *
 * The bounds (ref_bounds) come from the helpers of grid_bounds.h, one per bound, which the fast
 * golden calls too, over the point's stencil (grid_point_at: its in-bounds taps along x and y,
 * with weights, derivatives and the magnitudes their float32 evaluation is relative to), summed
 * beside the values in the same order: a forward element over its taps; an input_grad element over
 * the points in grid order, each point's taps in stencil order (nw, ne, sw, se); a grid_grad
 * element over the channels, each channel's taps in stencil order. */
#include "../grid_bounds.h"
#include "conform_plain.h"

#include <math.h>
#include <stdlib.h>

#define CUBIC_A (-0.75)
#define INT32_LIMIT 2147483647.0

/* ---- 7.1 and 7.2: coordinates and their derivative multiplier ------------------------------ */

static double unnormalize(double c, int64_t S, int ac, double *mult)
{
    if (ac) {
        *mult = (double)(S - 1) / 2.0;
        return (c + 1.0) / 2.0 * (double)(S - 1);
    }
    *mult = (double)S / 2.0;
    return ((c + 1.0) * (double)S - 1.0) / 2.0;
}

static double clip(double i, int64_t S, double *d)
{
    if (i <= 0) { *d = 0; return 0; }
    if (i >= (double)(S - 1)) { *d = 0; return (double)(S - 1); }
    *d = 1;
    return i;
}

static double reflect(double i, int64_t S, int ac, double *dr)
{
    const double lo = ac ? 0.0 : -1.0, hi = ac ? 2.0 * (double)(S - 1) : 2.0 * (double)S - 1.0;
    if (lo == hi) { *dr = 0; return 0; }
    const double mn = lo / 2.0, span = (hi - lo) / 2.0;
    double t = i - mn;
    const double sgn = t < 0 ? -1.0 : 1.0;
    t = fabs(t);
    const double extra = fmod(t, span);
    /* floor(t / span), exactly: t - extra is a multiple of span (a rounded t / span just below a
       fold can reach the next one) */
    const double flips = rint((t - extra) / span);
    if (fmod(flips, 2.0) == 0) { *dr = sgn; return extra + mn; }
    *dr = -sgn;
    return span - extra + mn;
}

/* the padding of 7.1, then 7.2's rule (NaN, infinite or beyond int32: -100, out of bounds) */
static double pad(const ref_grid_sampler_params *p, double i, int64_t S, double *d)
{
    *d = 1;
    if (p->padding_mode == 2) {
        double dr, dc;
        i = clip(reflect(i, S, p->align_corners, &dr), S, &dc);
        *d = dr * dc;
    } else if (p->padding_mode == 1) {
        i = clip(i, S, d);
    }
    if (!isfinite(i) || i < -INT32_LIMIT - 1.0 || i > INT32_LIMIT) { i = -100; *d = 0; }
    return i;
}

/* grid value c on an axis of S pixels: the coordinate the taps are read at and its multiplier
 * d coordinate / d c (bicubic: unnormalize alone, 7.5 pads each tap) */
static double coordinate(const ref_grid_sampler_params *p, double c, int64_t S, double *mult)
{
    double m, d, i = unnormalize(c, S, p->align_corners, &m);
    *mult = m;
    if (p->interpolation_mode == 2) return i;
    i = pad(p, i, S, &d);
    *mult = m * d;
    return i;
}

/* pixel (x, y) of a plane of W columns, or -1 when it is out of bounds */
static int64_t pixel(const ref_grid_sampler_params *p, double x, double y)
{
    return x >= 0 && x < (double)p->W && y >= 0 && y < (double)p->H ? (int64_t)y * p->W + (int64_t)x : -1;
}

/* ---- 7.5: bicubic's coefficients (A = -0.75) and their derivatives ------------------------- */

static void cubic_coeffs(double t, double c[4])
{
    const double A = CUBIC_A, s = 1.0 - t;
    c[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A; /* cc2(t + 1) */
    c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;                         /* cc1(t) */
    c[2] = ((A + 2) * s - (A + 3)) * s * s + 1;                         /* cc1(1 - t) */
    c[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A; /* cc2(2 - t) */
}

static void cubic_derivs(double t, double g[4])
{
    const double A = CUBIC_A, x0 = -1 - t, x1 = -t, x2 = 1 - t, x3 = 2 - t;
    g[0] = (-3 * A * x0 - 10 * A) * x0 - 8 * A;
    g[1] = (-3 * (A + 2) * x1 - 2 * (A + 3)) * x1;
    g[2] = (3 * (A + 2) * x2 - 2 * (A + 3)) * x2;
    g[3] = (3 * A * x3 - 10 * A) * x3 + 8 * A;
}

/* bicubic's taps along an axis of S pixels at coordinate i: k[a] the pixel of tap x_nw - 1 + a
 * after padding, -1 out of bounds; none (all -1) where 7.2 takes i (not finite, beyond int32) */
static void cubic_taps(const ref_grid_sampler_params *p, double i, int64_t S, int64_t k[4])
{
    for (int a = 0; a < 4; a++) {
        double d;
        const int64_t t = isfinite(i) && fabs(i) <= INT32_LIMIT ? (int64_t)pad(p, floor(i) - 1 + a, S, &d) : -1;
        k[a] = t >= 0 && t < S ? t : -1;
    }
}

/* ---- a point's corners or taps, the same in every channel ---------------------------------- */

/* The coordinates (ix, iy) of a point after 7.1 and 7.2 and what 7.3 to 7.5 read there: bilinear's
 * corners (the pixel of each, -1 out of bounds), nearest's pixel, bicubic's coefficients, their
 * derivatives and its padded taps */
typedef struct {
    double ix, iy, gx_mult, gy_mult;
    double x_nw, y_nw, x_ne, y_ne, x_sw, y_sw, x_se, y_se;
    int64_t nw, ne, sw, se;
    int64_t nearest;
    double xc[4], yc[4], xg[4], yg[4];
    int64_t kx[4], ky[4];
} corners;

static void corners_of(const ref_grid_sampler_params *p, const double *g, corners *k)
{
    const double ix = k->ix = coordinate(p, g[0], p->W, &k->gx_mult), iy = k->iy = coordinate(p, g[1], p->H, &k->gy_mult);
    if (p->interpolation_mode == 0) {
        k->x_nw = floor(ix); k->y_nw = floor(iy);
        k->x_ne = k->x_nw + 1; k->y_ne = k->y_nw;
        k->x_sw = k->x_nw;     k->y_sw = k->y_nw + 1;
        k->x_se = k->x_nw + 1; k->y_se = k->y_nw + 1;
        k->nw = pixel(p, k->x_nw, k->y_nw); k->ne = pixel(p, k->x_ne, k->y_ne);
        k->sw = pixel(p, k->x_sw, k->y_sw); k->se = pixel(p, k->x_se, k->y_se);
    } else if (p->interpolation_mode == 1) {
        k->nearest = pixel(p, rint(ix), rint(iy)); /* half to even */
    } else {
        cubic_coeffs(ix - floor(ix), k->xc);
        cubic_coeffs(iy - floor(iy), k->yc);
        cubic_derivs(ix - floor(ix), k->xg);
        cubic_derivs(iy - floor(iy), k->yg);
        cubic_taps(p, ix, p->W, k->kx);
        cubic_taps(p, iy, p->H, k->ky);
    }
}

/* ---- the forward ---------------------------------------------------------------------------- */

/* output[n, c, h, w] of the point k in one plane: the sum over its in-bounds corners (7.3) or
 * taps (7.5) of their weight times the input there; nearest's pixel (7.4) */
static double sample_value(const ref_grid_sampler_params *p, const double *plane, const corners *k)
{
    const double ix = k->ix, iy = k->iy;
    double out = 0;
    if (p->interpolation_mode == 0) {
        const double nw_w = (k->x_se - ix) * (k->y_se - iy), ne_w = (ix - k->x_sw) * (k->y_sw - iy);
        const double sw_w = (k->x_ne - ix) * (iy - k->y_ne), se_w = (ix - k->x_nw) * (iy - k->y_nw);
        if (k->nw >= 0) out += nw_w * plane[k->nw];
        if (k->ne >= 0) out += ne_w * plane[k->ne];
        if (k->sw >= 0) out += sw_w * plane[k->sw];
        if (k->se >= 0) out += se_w * plane[k->se];
    } else if (p->interpolation_mode == 1) {
        if (k->nearest >= 0) out += plane[k->nearest];
    } else {
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 4; i++)
                if (k->kx[i] >= 0 && k->ky[j] >= 0) out += k->yc[j] * k->xc[i] * plane[k->ky[j] * p->W + k->kx[i]];
    }
    return out;
}

/* max |v| of every plane of input (bicubic's bounds read it); NULL where none is needed */
static double *plane_maxima(const ref_grid_sampler_params *p, const double *input, int needed)
{
    const int64_t HW = p->H * p->W;
    double *m = needed ? malloc(sizeof(double) * (size_t)(p->N * p->C + 1)) : NULL;
    for (int64_t k = 0; m && k < p->N * p->C; k++) m[k] = grid_plane_max(input + k * HW, HW);
    return m;
}

/* output[n, c, h, w] for every point of the grid and channel; with bounds, the terms' magnitudes
 * and position terms over the point's stencil, then grid_forward_bounds */
void f64_grid_sampler_2d_fwd__plain(const ref_grid_sampler_params *p, const double *input, const double *grid,
                                    double *output, ref_bounds *bounds)
{
    const int64_t HW = p->H * p->W, P = p->Ho * p->Wo;
    const double pre = bounds ? bounds->pos_rel_err : 0.0;
    double *vmax = plane_maxima(p, input, bounds && p->interpolation_mode == 2);
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t q = 0; q < P; q++) { /* q = h Wo + w */
            const double *g = grid + (n * P + q) * 2;
            corners k;
            corners_of(p, g, &k);
            point pt;
            box_taps alt;
            grid_fwd_geo geo;
            const int has_alt = bounds ? grid_fwd_geo_of(p, g, pre, 1, &pt, &alt, &geo) : 0;
            for (int64_t c = 0; c < p->C; c++) {
                const double *plane = input + (n * p->C + c) * HW;
                const int64_t e = (n * p->C + c) * P + q;
                output[e] = sample_value(p, plane, &k);
                if (!bounds) continue;
                double abs_sum = 0, pe_taps = 0, sy = 0, sx = 0;
                int unbounded = 0; /* an infinite value at a tap whose weight's sign rounding may change */
                for (int j = 0; j < pt.y.n; j++)
                    for (int i = 0; i < pt.x.n; i++) {
                        const double x = plane[pt.y.idx[j] * p->W + pt.x.idx[i]];
                        abs_sum += grid_tap_cross(&pt, j, i) * fabs(x);
                        pe_taps += fabs(x) * grid_tap_kp(&pt, j, i);
                        unbounded |= isinf(x) && grid_tap_sign_free(p, &pt, pre, j, i);
                    }
                if (geo.slope) grid_slopes(plane, p->H, p->W, geo.ybase, geo.xbase, &sy, &sx);
                grid_forward_bounds(p, &geo, has_alt ? &alt : NULL, plane, pe_taps, sy, sx, vmax ? vmax[n * p->C + c] : 0,
                                    output[e], abs_sum, e, bounds);
                if (unbounded && bounds->ambig) bounds->ambig[e] = INFINITY;
            }
        }
    free(vmax);
}

/* ---- the backward --------------------------------------------------------------------------- */

/* 7.3 for one channel: with g = grad_output[n, c, h, w] and v the input at a corner (in-bounds
 * corners only), input_grad (ig, NULL: not asked for) receives corner_w g and
 *   nw: gix -= v (y_se - iy) g ; giy -= v (x_se - ix) g
 *   ne: gix += v (y_sw - iy) g ; giy -= v (ix - x_sw) g
 *   sw: gix -= v (iy - y_ne) g ; giy += v (x_ne - ix) g
 *   se: gix += v (iy - y_nw) g ; giy += v (ix - x_nw) g */
static void bilinear_backward(const corners *k, const double *plane, double *ig, double g, double *gix, double *giy)
{
    const double ix = k->ix, iy = k->iy;
    if (k->nw >= 0) {
        if (ig) ig[k->nw] += g * (k->y_se - iy) * (k->x_se - ix);
        *gix -= plane[k->nw] * (k->y_se - iy) * g;
        *giy -= plane[k->nw] * (k->x_se - ix) * g;
    }
    if (k->ne >= 0) {
        if (ig) ig[k->ne] += g * (k->y_sw - iy) * (ix - k->x_sw);
        *gix += plane[k->ne] * (k->y_sw - iy) * g;
        *giy -= plane[k->ne] * (ix - k->x_sw) * g;
    }
    if (k->sw >= 0) {
        if (ig) ig[k->sw] += g * (iy - k->y_ne) * (k->x_ne - ix);
        *gix -= plane[k->sw] * (iy - k->y_ne) * g;
        *giy += plane[k->sw] * (k->x_ne - ix) * g;
    }
    if (k->se >= 0) {
        if (ig) ig[k->se] += g * (iy - k->y_nw) * (ix - k->x_nw);
        *gix += plane[k->se] * (iy - k->y_nw) * g;
        *giy += plane[k->se] * (ix - k->x_nw) * g;
    }
}

/* 7.4 and 7.5 for one channel: nearest adds g to its pixel (no grid gradient); bicubic's 16 taps
 * add g yc xc to input_grad, gix -= v xg yc g, giy -= v xc yg g */
static void other_backward(const ref_grid_sampler_params *p, const corners *k, const double *plane, double *ig,
                           double g, double *gix, double *giy)
{
    if (p->interpolation_mode == 1) {
        if (k->nearest >= 0 && ig) ig[k->nearest] += g;
        return;
    }
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) {
            if (k->kx[i] < 0 || k->ky[j] < 0) continue;
            const int64_t t = k->ky[j] * p->W + k->kx[i];
            if (ig) ig[t] += g * k->yc[j] * k->xc[i];
            *gix -= plane[t] * k->xg[i] * k->yc[j] * g;
            *giy -= plane[t] * k->xc[i] * k->yg[j] * g;
        }
}

/* One channel's sums for grid_grad's bounds over the stencil x by y (its terms' magnitudes and
 * position terms, grid_gg_tap; sum |g| max |v| in sg); with values (a box point, whose grid
 * gradient the bounds compare), its gix and giy too, in the stencil's form of 7.3 and 7.5:
 * gix += v dw_x w_y g, giy += v w_x dw_y g (nearest: none) */
static void channel_terms(const ref_grid_sampler_params *p, const axis_taps *x, const axis_taps *y, double dx,
                          double dy, const double *plane, double g, double vm, int values, gg_sums *s)
{
    s->sg += fabs(g) * vm;
    for (int j = 0; j < y->n; j++)
        for (int i = 0; i < x->n; i++) {
            const double v = plane[y->idx[j] * p->W + x->idx[i]];
            if (values && p->interpolation_mode != 1) {
                s->gix += v * x->dw[i] * y->w[j] * g;
                s->giy += v * x->w[i] * y->dw[j] * g;
            }
            gg_tap t;
            grid_gg_tap(x, i, y, j, dx, dy, p->W, &t);
            const double va = fabs(v) * fabs(g);
            s->abs_x += va * t.kax;
            s->abs_y += va * t.kay;
            s->pe_x += va * t.kpx;
            s->pe_y += va * t.kpy;
        }
}

/* One channel's input_grad bounds of point w (its plane starts at base): each term's abs_sum
 * (tap_cr: grid_tap_cross, or a twin's larger one), n_terms and pos_err (grid_tap_fm) at the
 * stencil's taps; the pixels a float twin may reach across a cell edge (pos_err, and the twin's
 * terms there: abs_sum, n_terms); a wide box's whole reach and nearest's ties (ambig;
 * a tie's gained sample is a term too) */
static void input_grad_bounds(const ref_grid_sampler_params *p, const point_work *w, double g, int64_t base,
                              const ref_bounds *bi)
{
    const point *pt = &w->pt;
    const double ag = fabs(g);
    for (int j = 0; j < pt->y.n; j++)
        for (int i = 0; i < pt->x.n; i++) {
            const int64_t k = base + pt->y.idx[j] * p->W + pt->x.idx[i];
            if (bi->abs_sum) bi->abs_sum[k] += ag * w->tap_cr[j * pt->x.n + i];
            if (bi->n_terms) bi->n_terms[k] += 1;
            if (bi->pos_err) bi->pos_err[k] += ag * grid_tap_fm(p, pt, j, i);
        }
    for (int x = 0; x < w->n_extra && isfinite(g); x++) {
        const int64_t k = base + w->extra_idx[x];
        bi->pos_err[k] += ag * w->extra_w[x];
        if (bi->abs_sum) bi->abs_sum[k] += ag * w->extra_m[x];
        if (bi->n_terms) bi->n_terms[k] += w->extra_n[x];
    }
    if (!bi->ambig) return;
    int64_t r0 = 0, r1 = -1, c0 = 0, c1 = -1;
    if (pt->wide) grid_wide_rect(p, pt, &r0, &r1, &c0, &c1);
    for (int64_t y = r0; y <= r1; y++)
        for (int64_t x = c0; x <= c1; x++) {
            const grid_wide_gain wg = grid_wide_gain_of(p);
            bi->ambig[base + y * p->W + x] += ag * wg.spread;
            if (bi->abs_sum) bi->abs_sum[base + y * p->W + x] += ag * wg.mag;
            if (bi->n_terms) bi->n_terms[base + y * p->W + x] += wg.nt;
        }
    for (int t = 0; t < w->n_tie; t++) {
        const int64_t k = base + w->tie_pix[t];
        bi->ambig[k] += ag;
        if (!grid_tie_counts(p, pt, w->tie_pix[t])) continue;
        if (bi->abs_sum) bi->abs_sum[k] += ag;
        if (bi->n_terms) bi->n_terms[k] += 1;
    }
    /* an infinite g on a tap whose weight vanishes within the box: NaN at one legal position, an
       infinity at another (grid_vanishing_taps) */
    for (int t = 0; isinf(g) && t < pt->x.n * pt->y.n; t++)
        if (w->vanish >> t & 1) bi->ambig[base + pt->y.idx[t / pt->x.n] * p->W + pt->x.idx[t % pt->x.n]] += INFINITY;
    /* a non-finite g where the box crosses a cell edge: a tap's weight is 0 at one legal position
       (NaN there) and not at another (an infinity): any value at its taps and the twin's */
    if (isfinite(g) || !w->crosses) return;
    for (int j = 0; j < pt->y.n; j++)
        for (int i = 0; i < pt->x.n; i++) bi->ambig[base + pt->y.idx[j] * p->W + pt->x.idx[i]] += INFINITY;
    for (int x = 0; x < w->n_extra; x++) bi->ambig[base + w->extra_idx[x]] += INFINITY;
}

static void zero_with_bounds(double *t, const ref_bounds *b, int64_t n)
{
    grid_zero(t, n);
    if (b) { grid_zero(b->abs_sum, n); grid_zero(b->n_terms, n); grid_zero(b->pos_err, n); grid_zero(b->ambig, n); }
}

/* What grid_grad's bounds of a point sum over the channels: its record and its box points' (where
 * its grid gradient may jump: r[1 .. 8]), and their sums */
typedef struct {
    gg_rec r[9];
    gg_sums s[9];
} gg_point;

static void gg_point_init(const ref_grid_sampler_params *p, const point_work *w, gg_point *b)
{
    grid_gg_rec_of(p, w, &w->pt.x, &w->pt.y, 0, 1, &b->r[0]);
    for (int a = 0; a < b->r[0].nalt; a++) grid_gg_rec_of(p, w, grid_box_x(&w->box, a), grid_box_y(&w->box, a), 1, 1, &b->r[1 + a]);
    for (int a = 0; a < 9; a++) b->s[a] = (gg_sums){0};
}

/* one channel's terms of the sums of grid_grad's bounds */
static void gg_point_add(const ref_grid_sampler_params *p, const point_work *w, const double *plane, double g,
                         double vm, gg_point *b)
{
    channel_terms(p, &w->pt.x, &w->pt.y, w->pt.pdx, w->pt.pdy, plane, g, vm, 0, &b->s[0]);
    grid_gg_reach_add(p, &b->r[0], plane, 1, fabs(g), &b->s[0]);
    for (int a = 0; a < b->r[0].nalt; a++)
        channel_terms(p, grid_box_x(&w->box, a), grid_box_y(&w->box, a), w->pt.pdx, w->pt.pdy, plane, g, vm, 1, &b->s[1 + a]);
}

/* The backward of 7.3 (7.4, 7.5) per point (n, h, w) of the grid, in grid order: gix = giy = 0;
 * for each channel c, with g = grad_output[n, c, h, w], input_grad[n, c, corner] += corner_w g and
 * gix, giy take the corners' terms (bilinear_backward, other_backward); then
 * grid_grad[n, h, w] = (gx_mult gix, gy_mult giy) (nearest: 0). An output whose output_mask flag
 * is 0 stays zero. bounds: NULL or two (input_grad, grid_grad), summed beside the values. */
void f64_grid_sampler_2d_bwd__plain(const ref_grid_sampler_params *p, const double *grad_output,
                                    const double *input, const double *grid, double *input_grad,
                                    double *grid_grad, ref_bounds *bounds)
{
    const int64_t HW = p->H * p->W, P = p->Ho * p->Wo;
    const double pre = bounds ? bounds->pos_rel_err : 0.0;
    const ref_bounds *bi = bounds ? &bounds[0] : NULL, *bg = bounds ? &bounds[1] : NULL;
    zero_with_bounds(input_grad, bi, p->N * p->C * HW);
    zero_with_bounds(grid_grad, bg, p->N * P * 2);
    double *vmax = plane_maxima(p, input, bounds && p->interpolation_mode == 2);
    /* input_grad's pos_err reaches the taps across a cell edge */
    const int extras = bi && bi->pos_err && p->interpolation_mode != 1;
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t q = 0; q < P; q++) {
            const double *gv = grid + (n * P + q) * 2;
            double gix = 0, giy = 0;
            corners k;
            corners_of(p, gv, &k);
            point_work w;
            gg_point b;
            if (bounds) grid_point_setup(p, gv, pre, 1, extras, &w);
            if (bounds && p->output_mask[1]) gg_point_init(p, &w, &b);
            for (int64_t c = 0; c < p->C; c++) {
                const int64_t base = (n * p->C + c) * HW;
                const double g = grad_output[(n * p->C + c) * P + q], *plane = input + base;
                double *ig = p->output_mask[0] ? input_grad + base : NULL;
                if (p->interpolation_mode == 0) bilinear_backward(&k, plane, ig, g, &gix, &giy);
                else other_backward(p, &k, plane, ig, g, &gix, &giy);
                if (bounds && p->output_mask[0]) input_grad_bounds(p, &w, g, base, bi);
                if (bounds && p->output_mask[1]) gg_point_add(p, &w, plane, g, vmax ? vmax[n * p->C + c] : 0, &b);
            }
            if (!p->output_mask[1]) continue;
            const int64_t e = (n * P + q) * 2;
            grid_grad[e] = p->interpolation_mode == 1 ? 0 : k.gx_mult * gix;
            grid_grad[e + 1] = p->interpolation_mode == 1 ? 0 : k.gy_mult * giy;
            if (!bounds) continue;
            b.s[0].gix = gix;
            b.s[0].giy = giy;
            grid_grad_bounds(p, b.r, b.s, &grid_grad[e], e, bg);
        }
    if (bi && p->output_mask[0]) grid_ambig_unbounded(bi->ambig, p->N * p->C * HW);
    free(vmax);
}
