/* grid_sampler_2d forward and backward (spec 7) in double.
 *
 * Every sample point is reduced to a separable stencil: in-bounds taps along x (pixel column,
 * weight, d weight / d coordinate) times in-bounds taps along y, plus the coordinate multipliers of
 * section 7.1. The value loops read like the spec on top of it; the ref_bounds bookkeeping sits
 * beside them.
 *
 * Tolerance inputs. A float32 implementation samples at a position whose error, pulled back to the
 * unpadded coordinate, is at most d per axis (the "box" half-width, ref_grid_sampler_box: each
 * rounding charged at its own magnitude, d about u (3|i| + 1/2) to u (6|i| + 1)); pos_err is
 * the first-order (plus a second-order remainder) change of an element within that box. Where the
 * box holds a discontinuity the element is ambiguous and ambig is the largest change among the
 * evaluations at the box's corners and edge midpoints:
 *   nearest: the rint tie (output and input_grad);
 *   bilinear: the cell switch at integer coordinates, clip points of border/reflection (not where
 *             every float32 form computes the position exactly: exact_cell) and the reflection
 *             folds (grid_grad only: the values are continuous there);
 *   bicubic: none (the cubic convolution is C1 in the coordinate; taps are fixed per integer). */
#include "ref_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CUBIC_A (-0.75)
#define INT32_LIMIT 2147483647.0

/* ---- coordinates (spec 7.1, 7.2) ------------------------------------------------------------ */

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
    *d = 1; /* NaN lands here and stays NaN: the -100 rule takes it */
    return i;
}

static double reflect(double i, int64_t S, int ac, double *dr)
{
    double lo = ac ? 0.0 : -1.0, hi = ac ? 2.0 * (double)(S - 1) : 2.0 * (double)S - 1.0;
    if (lo == hi) { *dr = 0; return 0; }
    double mn = lo / 2.0, span = (hi - lo) / 2.0, t = i - mn, sgn = t < 0 ? -1.0 : 1.0;
    t = fabs(t);
    double extra = fmod(t, span);
    /* the mathematical floor(t / span): t - extra is an exact multiple of span, whereas
       floor(t / span) in floating point can round up to the next fold just below it */
    double flips = rint((t - extra) / span);
    if (fmod(flips, 2.0) == 0) { *dr = sgn; return extra + mn; }
    *dr = -sgn;
    return span - extra + mn;
}

/* Padding of a coordinate, then the -100 rule; *d: the padding's derivative factor. */
static double pad_coord(double i, int64_t S, int pad, int ac, double *d)
{
    *d = 1;
    if (pad == 2) {
        double dr, dc;
        i = reflect(i, S, ac, &dr);
        i = clip(i, S, &dc);
        *d = dr * dc;
    } else if (pad == 1) {
        i = clip(i, S, d);
    }
    if (!isfinite(i) || i < -INT32_LIMIT - 1.0 || i > INT32_LIMIT) { i = -100; *d = 0; }
    return i;
}

/* ---- stencils ----------------------------------------------------------------------------------- */

typedef struct {
    int n;                /* in-bounds taps */
    int64_t idx[4];       /* pixel along the axis */
    double w[4], dw[4];   /* weight and its derivative in the (padded) coordinate */
    double d2w[4];        /* second derivative (bicubic) */
    double m[4], dm[4];   /* magnitudes the float32 evaluation of w, dw is relative to */
    double mult;          /* d coordinate / d grid value (unnormalize x padding) */
    int64_t base;         /* bilinear: floor of the padded coordinate; nearest: the rounded one */
} axis_taps;

static void push(axis_taps *a, int64_t S, int64_t k, double w, double dw, double d2w, double m, double dm)
{
    if (k < 0 || k >= S) return;
    a->idx[a->n] = k; a->w[a->n] = w; a->dw[a->n] = dw; a->d2w[a->n] = d2w;
    a->m[a->n] = m; a->dm[a->n] = dm;
    a->n++;
}

/* Sums of |term| of the spec's cubic convolution polynomials (7.5) and of their derivatives:
   cc1(x) = (A+2) x^3 - (A+3) x^2 + 1, cc2(x) = A x^3 - 5A x^2 + 8A x - 4A (x >= 0). */
static double cubic_mag1(double x) { return ((fabs(CUBIC_A + 2) * x + fabs(CUBIC_A + 3)) * x) * x + 1; }
static double cubic_mag2(double x) { return ((fabs(CUBIC_A) * x + 5 * fabs(CUBIC_A)) * x + 8 * fabs(CUBIC_A)) * x + 4 * fabs(CUBIC_A); }
static double cubic_dmag1(double x) { return (3 * fabs(CUBIC_A + 2) * x + 2 * fabs(CUBIC_A + 3)) * x; }
static double cubic_dmag2(double x) { return (3 * fabs(CUBIC_A) * x + 10 * fabs(CUBIC_A)) * x + 8 * fabs(CUBIC_A); }

static void cubic(double t, double c[4], double dc[4], double d2c[4], double m[4], double dm[4])
{
    const double A = CUBIC_A, s = 1.0 - t;
    /* spec 7.5: [cc2(t+1), cc1(t), cc1(1-t), cc2(2-t)] */
    c[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
    c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    c[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
    c[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A;
    /* d c / d t */
    dc[0] = (3 * A * (t + 1) - 10 * A) * (t + 1) + 8 * A;
    dc[1] = (3 * (A + 2) * t - 2 * (A + 3)) * t;
    dc[2] = -(3 * (A + 2) * s - 2 * (A + 3)) * s;
    dc[3] = -((3 * A * (2 - t) - 10 * A) * (2 - t) + 8 * A);
    d2c[0] = A * (6 * t - 4);
    d2c[1] = 6 * (A + 2) * t - 2 * (A + 3);
    d2c[2] = 6 * (A + 2) * s - 2 * (A + 3);
    d2c[3] = A * (2 - 6 * t);
    /* Magnitudes the float32 evaluation of each weight is relative to: the sum of |term| of the
       spec's polynomials at their arguments t+1, t, 1-t, 2-t (an evaluation in any order, Horner or
       powers, FMA or not, errs by at most its count of roundings times this; the argument's own
       roundings, e.g. (1-t)+1, move it by at most 3 (cc1, cc2) resp. 2 (derivatives) times this
       per rounding, as x |p'(x)| <= 3 M(x) coefficient-wise). The factored forms our kernels use
       (A t s^2, s (1 + t - (A+2) t^2), ...) are smaller, so these cover them too. */
    m[0] = cubic_mag2(t + 1);
    m[1] = cubic_mag1(t);
    m[2] = cubic_mag1(s);
    m[3] = cubic_mag2(2 - t);
    dm[0] = cubic_dmag2(t + 1);
    dm[1] = cubic_dmag1(t);
    dm[2] = cubic_dmag1(s);
    dm[3] = cubic_dmag2(2 - t);
}

/* The taps of one axis for the unnormalized coordinate i (multiplier mult0 from unnormalize). */
static void axis_stencil(const ref_grid_sampler_params *p, double i, double mult0, int64_t S, axis_taps *a)
{
    a->n = 0; /* the arrays are read only up to n: no memset (a third of the stencil's time) */
    a->base = 0;
    const int pad = p->padding_mode, ac = p->align_corners;
    if (p->interpolation_mode == 2) {
        a->mult = mult0;
        /* spec 7.2 for bicubic: a non-finite (or int32-overflowing) coordinate samples nothing */
        if (!isfinite(i) || fabs(i) > INT32_LIMIT) return;
        double x0 = floor(i), t = i - x0, c[4], dc[4], d2c[4], m[4], dm[4];
        cubic(t, c, dc, d2c, m, dm);
        for (int k = 0; k < 4; k++) {
            double d, tap = pad_coord(x0 - 1 + k, S, pad, ac, &d);
            push(a, S, (int64_t)tap, c[k], dc[k], d2c[k], m[k], dm[k]);
        }
        return;
    }
    double d, ip = pad_coord(i, S, pad, ac, &d);
    a->mult = mult0 * d;
    if (p->interpolation_mode == 1) {
        double r = rint(ip); /* round half to even in the default rounding mode */
        a->base = (int64_t)r;
        push(a, S, a->base, 1, 0, 0, 1, 0);
        return;
    }
    double x0 = floor(ip), x1 = x0 + 1;
    a->base = (int64_t)x0;
    push(a, S, a->base, x1 - ip, -1, 0, fabs(x1 - ip), 1);
    push(a, S, a->base + 1, ip - x0, 1, 0, fabs(ip - x0), 1);
}

typedef struct {
    axis_taps x, y;
    double ix, iy;       /* unnormalized coordinates */
    double mx, my;       /* their multipliers from unnormalize */
    double dx, dy;       /* their float32 rounding box half-widths */
    /* the box after padding, [lo, hi] per axis (bicubic: the span of every tap it reaches), and the
       half-widths the values see: bilinear and nearest sample at the padded coordinate, so a
       coordinate clipped by border padding (or reflection's clip) beyond its box has none left */
    double px_lo, px_hi, py_lo, py_hi, pdx, pdy;
    /* the box spans more than one cell (|coordinate| near 2^24 and beyond, reflected): the probes
       at its corners and edge midpoints miss cells in between, so the point may take any value
       (and scatter to any pixel) within its reach */
    int wide;
} point;

/* q >= 0 with 2^-q the lowest set bit of a finite g (0 for an integer): read off its bits, as a
 * loop of doublings until g 2^q is an integer was a tenth of the backward's time */
static int frac_bits(double g)
{
    uint64_t b;
    memcpy(&b, &g, sizeof b);
    const int e = (int)(b >> 52 & 0x7ff);
    const uint64_t m = (b & ((UINT64_C(1) << 52) - 1)) | (e ? UINT64_C(1) << 52 : 0);
    if (!m) return 0;
    const int lsb = (e ? e : 1) - 1075 + __builtin_ctzll(m); /* g = m 2^((e or 1) - 1075) */
    return lsb < 0 ? -lsb : 0;
}

/* Whether every float32 evaluation form of spec 7.1 computes the unnormalized coordinate of the
 * grid value g exactly. Let 2^-q be g's lowest set bit (g 2^q is an integer). The forms in use,
 * ((g+1) S - 1) / 2 (PyTorch, ours), g S/2 + (S-1)/2 (with or without FMA), (g+1)/2 (S-1) (PyTorch
 * and ours with align_corners), g (S-1)/2 + (S-1)/2 and ((g+1)(S-1))/2, build every intermediate
 * from g, 1, S, S-1 and halvings, so each one is an integer multiple of 2^-(q+1) and at most
 * M = (|g|+1) S + 1 in magnitude. When M 2^(q+1) <= 2^24 each is an integer of at most 24 bits
 * times a power of two, a float32 number: no rounding of any form (FMA or not, any order) changes
 * anything, so the position has no error box and a tie there is a tie in every form. */
static int exact_in_f32(double g, int64_t S)
{
    if (!isfinite(g)) return 0;
    const int q = frac_bits(g);
    if (q > 24) return 0; /* no room left */
    return ((fabs(g) + 1) * (double)S + 1) * (double)(1 << (q + 1)) <= 16777216.0; /* 2^24 */
}

/* Nearest's coordinate box is 0 where the position is exact in every form (the rint tie is then a
 * real tie, whose half-to-even rounding spec 7.4 fixes). Reflection is left boxed: its fold count
 * floor(t / span) rounds a quotient, which may land on the next fold in float32 (PyTorch's form). */
static int exact_position(const ref_grid_sampler_params *p, double g, int64_t S)
{
    return p->interpolation_mode == 1 && p->padding_mode != 2 && exact_in_f32(g, S);
}

/* Bilinear's branch where the position is exact. Spec 7.3 takes the cell x_nw = floor(ip) and
 * clips (d = 0) at ip <= 0 and ip >= S-1; at an integer ip the grid gradient jumps between two
 * branches (two cells' slopes, or a slope and the clip's 0). Where every float32 form of 7.1
 * computes the unnormalized i exactly (exact_in_f32) and the padding keeps it exact, every form
 * takes the spec's branch, so it is the only legal one and the box must not offer the other (the
 * mutant `i <= 0 -> i < 0` moved grid_grad by up to 10 within it, docs/zoo.md). Zeros keeps i;
 * border clamps it, exactly. Reflection's fold may round (exact_position), so only its clip
 * points are settled: it lands on 0 or S-1 only from t = |i - mn| = k span (align_corners) or
 * t = k span + 1/2, (k+1) span - 1/2 (not): fmod and the sums around it are exact in the 24 bits
 * exact_in_f32 leaves, and the fold count floor(t / span) is exact where t / span is an integer,
 * else its quotient lies at least 1/(2 span) below the next integer, many ulps more than a float32
 * division (or a multiplication by a rounded reciprocal) can move it while t span < 2^23; checked
 * below all the same. */
static int exact_cell(const ref_grid_sampler_params *p, double g, int64_t S)
{
    if (p->interpolation_mode != 0 || !exact_in_f32(g, S)) return 0;
    if (p->padding_mode != 2) return 1;
    const int ac = p->align_corners;
    double m, d, i = unnormalize(g, S, ac, &m), ip = pad_coord(i, S, p->padding_mode, ac, &d);
    if (ip != 0 && ip != (double)(S - 1)) return 0;
    double span = ac ? (double)(S - 1) : (double)S;
    if (span > 0) {
        double q = fabs(i - (ac ? 0.0 : -0.5)) / span, k = floor(q);
        if (q != k && (k + 1) - q <= ldexp(k + 1, -21)) return 0; /* four roundings could reach the next fold */
    }
    return 1;
}

/* The padded image [*lo, *hi] of the coordinates [a, b] (padding is continuous and monotone
 * piecewise: the image is spanned by the ends and the fold points between them). */
static void padded_span(const ref_grid_sampler_params *p, double a, double b, int64_t S, double *lo, double *hi)
{
    double d, pa = pad_coord(a, S, p->padding_mode, p->align_corners, &d);
    double pb = pad_coord(b, S, p->padding_mode, p->align_corners, &d);
    *lo = fmin(pa, pb);
    *hi = fmax(pa, pb);
    if (p->padding_mode != 2) return;
    const int ac = p->align_corners;
    double mn = ac ? 0.0 : -0.5, span = ac ? (double)(S - 1) : (double)S;
    if (!(b - a < span)) { *lo = 0; *hi = (double)(S - 1); return; } /* the box folds over everything */
    double fold = mn + ceil((a - mn) / span) * span; /* the first fold point at or after a */
    if (fold <= b) {
        double f = pad_coord(fold, S, 2, ac, &d);
        *lo = fmin(*lo, f);
        *hi = fmax(*hi, f);
    }
}

/* ---- the rounding box --------------------------------------------------------------------------
 * d bounds how far the position a float32 kernel samples at lies from the exact one, pulled back to
 * the unpadded coordinate: reflection and clip are 1-Lipschitz, and an error after them is one of
 * the same size before them, or is cut off by the clip. Each rounding is charged at u times its own
 * result's magnitude, and its error carried forward through the later steps, which are exact or
 * charged in turn. The grid sampler's k_pos is 1: pos_rel_err is u itself, the terms are here.
 *   Unnormalize, every order in use (exact_in_f32's list, FMA or not). ((c+1) S - 1) / 2 is the
 *     widest: c+1 errs by u|c+1|, times S; the product rounds by u|c+1| S, the -1 by u|2i|, the
 *     halving is exact: u ((|c|+1) S + |i|). (c+1)/2 (S-1) and ((c+1)(S-1))/2 give
 *     u ((|c|+1)(S-1)/2 + |i|), c S/2 + (S-1)/2 gives u (|c| S/2 + |i|), an FMA u|i|.     [(|c|+1) S, |i|]
 *   Bilinear's weights i - floor(i), floor(i) + 1 - i, bicubic's fraction: exact (Sterbenz) but
 *     for |i| < 1, where a result below 1 rounds by at most u/2 (nearest has none).           [1/2]
 *   Reflection (clip and border are exact): t = |i - mn| rounds by u|i + 1/2| without
 *     align_corners (mn = -1/2; with it mn = 0, exact).                                   [|i + 1/2|]
 *     fmod is exact. Once a fold is taken (t >= span) the remainder and t are multiples of ulp(t),
 *     which is <= 1/2 below 2^23 (integers beyond), so span - extra and + mn are float32 numbers,
 *     exact; before the first fold t + mn rounds only for t < 1/4, where the clip takes it to 0.
 *     The fold count: a correctly rounded t / span with fmod's remainder (PyTorch) never takes the
 *     next fold below t = 2^24: the fold lies j / span above the quotient, j = span - extra a
 *     multiple of ulp(t), so j >= ulp(t) > u t / (1 - u), more than half a float spacing below
 *     k + 1 (at most (k+1) u = (t + j) u / span). floor(t * (1/span)) with its own remainder
 *     t - k span (exact; Ascend) rounds twice and may, from at most 2u t below a fold: the result
 *     lies beyond the fold and the clip takes it to the fold's pixel, 2u t from the exact position
 *     with align_corners, 2u t - 1/2 without (the fold points lie 1/2 beyond the clip).
 *                                                                      [fold: 2u t, or 2u t - 1/2]
 *     Beyond t = 2^24 a rounded quotient may count one fold more than fmod's remainder took: the
 *     position may be anywhere in the row (fold_may_cross).
 *   Bicubic reflects integer taps x (up to 2 beyond i): x + 1/2 is exact below 2^23 (u|x + 1/2|
 *     beyond), and a fold lies at least 1/2 (align_corners: 1) from a tap, so the reciprocal's
 *     fold count moves a tap only where 2u t reaches that; by the same terms at the farthest tap.
 * Second order: a rounding's argument is a computed value, at most 6u (relative) beyond the exact
 * magnitude charged: the factor 1 + 8u. No term is spare. */
double ref_grid_sampler_box(const ref_grid_sampler_params *p, double g, int64_t S, double u)
{
    const int ac = p->align_corners, cubic = p->interpolation_mode == 2;
    double m, i = unnormalize(g, S, ac, &m);
    double x = (fabs(g) + 1) * (double)S + fabs(i) + (p->interpolation_mode == 1 ? 0.0 : 0.5), fold = 0;
    if (p->padding_mode == 2) {
        const double ti = fabs(i - (ac ? 0.0 : -0.5)) + (cubic ? 2 : 0);
        if (!ac && (!cubic || ti + (1 + 8 * u) * u * x >= 0x1p23)) x += ti;
        const double t = ti + (1 + 8 * u) * u * x;
        fold = ac ? 2 * u * t : fmax(0, 2 * u * t - 0.5);
        if (cubic && ac && 2 * u * t < 1) fold = 0;
    }
    return (1 + 8 * u) * (u * x + fold);
}

/* Whether a reflection's fold count may disagree with its remainder somewhere within reach r of
 * the coordinate i (t >= 2^24, ref_grid_sampler_box): the position may then be anywhere. */
static int fold_may_cross(const ref_grid_sampler_params *p, double i, double r)
{
    return p->padding_mode == 2 && fabs(i - (p->align_corners ? 0.0 : -0.5)) + r >= 16777216.0;
}

/* the taps of axis x (0) or y (1) at s box half-widths from the point's coordinate */
static void shifted_stencil(const ref_grid_sampler_params *p, const point *pt, int axis, double s, axis_taps *a)
{
    if (axis == 0) axis_stencil(p, pt->ix + s * pt->dx, pt->mx, p->W, a);
    else axis_stencil(p, pt->iy + s * pt->dy, pt->my, p->H, a);
}

static void point_at(const ref_grid_sampler_params *p, const double *g, double pos_rel_err, point *pt)
{
    pt->ix = unnormalize(g[0], p->W, p->align_corners, &pt->mx);
    pt->iy = unnormalize(g[1], p->H, p->align_corners, &pt->my);
    pt->dx = ref_grid_sampler_box(p, g[0], p->W, pos_rel_err);
    pt->dy = ref_grid_sampler_box(p, g[1], p->H, pos_rel_err);
    if (!isfinite(pt->dx) || exact_position(p, g[0], p->W)) pt->dx = 0;
    if (!isfinite(pt->dy) || exact_position(p, g[1], p->H)) pt->dy = 0;
    shifted_stencil(p, pt, 0, 0, &pt->x);
    shifted_stencil(p, pt, 1, 0, &pt->y);
    /* bicubic reaches taps floor(i) - 1 .. floor(i) + 2 of every i in the box */
    const double reach_lo = p->interpolation_mode == 2 ? 1.0 : 0.0, reach_hi = p->interpolation_mode == 2 ? 2.0 : 0.0;
    padded_span(p, pt->ix - pt->dx - reach_lo, pt->ix + pt->dx + reach_hi, p->W, &pt->px_lo, &pt->px_hi);
    padded_span(p, pt->iy - pt->dy - reach_lo, pt->iy + pt->dy + reach_hi, p->H, &pt->py_lo, &pt->py_hi);
    if (pos_rel_err > 0 && fold_may_cross(p, pt->ix, pt->dx + reach_hi)) { pt->px_lo = 0; pt->px_hi = (double)(p->W - 1); }
    if (pos_rel_err > 0 && fold_may_cross(p, pt->iy, pt->dy + reach_hi)) { pt->py_lo = 0; pt->py_hi = (double)(p->H - 1); }
    double d, cx = pad_coord(pt->ix, p->W, p->padding_mode, p->align_corners, &d);
    double cy = pad_coord(pt->iy, p->H, p->padding_mode, p->align_corners, &d);
    pt->pdx = p->interpolation_mode == 2 ? pt->dx : fmin(pt->dx, fmax(cx - pt->px_lo, pt->px_hi - cx));
    pt->pdy = p->interpolation_mode == 2 ? pt->dy : fmin(pt->dy, fmax(cy - pt->py_lo, pt->py_hi - cy));
    pt->wide = p->interpolation_mode == 2 ? !(2 * pt->dx < 1 && 2 * pt->dy < 1)
                                          : !(pt->px_hi - pt->px_lo < 1 && pt->py_hi - pt->py_lo < 1);
}

/* Weight bounds of the cubic convolution (A = -0.75), per axis, maxima over t in [0, 1] (at t =
 * 1/2, found numerically on 2e5 points and checked by hand there): sum |c_k| <= 11/8, sum |c_k'|
 * <= 3; every c_k lies in [-1/9, 1] (cc2's minimum A (x-1)(x-2)^2 at x = 4/3). Bilinear weights: sum
 * 1, slopes sum 2, each in [0, 1]. */
#define CUBIC_ABS_SUM 1.375
#define CUBIC_DABS_SUM 3.0
#define CUBIC_W_SPREAD (10.0 / 9.0)

/* The taps the point's box reaches (zeros padding: 0 joins when a tap leaves the plane): the same
 * rectangle in every plane, so it is found once per point (ref_tap_range in two steps) */
static void reach_rect(const ref_grid_sampler_params *p, const point *pt, ref_tap_rect *t)
{
    ref_tap_rect_of(p->H, p->W, 0.5 * (pt->py_lo + pt->py_hi), 0.5 * (pt->px_lo + pt->px_hi),
                    0.5 * (pt->py_hi - pt->py_lo), 0.5 * (pt->px_hi - pt->px_lo), p->padding_mode != 0, t);
}

/* The most the position can move a sampled value v: to any value a position in the box may take,
 * which is a convex combination of the reached taps [lo, hi] of the plane (bilinear, nearest), or
 * within 11/8 squared times half their spread of its middle (bicubic: the weights sum to 1) */
static double value_reach(const ref_grid_sampler_params *p, int past_int32, const ref_tap_rect *reach,
                          const double *plane, double v)
{
    double lo, hi;
    ref_tap_rect_range(plane, p->W, 1, reach, &lo, &hi);
    if (p->interpolation_mode == 2) {
        double mid = 0.5 * (lo + hi), half = 0.5 * (hi - lo) * CUBIC_ABS_SUM * CUBIC_ABS_SUM;
        lo = mid - half;
        hi = mid + half;
        /* bicubic samples nothing (0) beyond the int32 range of its unpadded coordinate (7.2), and
           pads only after that test: a box across +-2^31 may give 0 or the padded taps' value (a
           float32 coordinate just below 2^31 rounds onto it: past_int32, see box_past_int32) */
        if (past_int32) {
            lo = fmin(lo, 0);
            hi = fmax(hi, 0);
        }
    }
    double r = fmax(hi - v, v - lo);
    return isnan(r) ? INFINITY : r;
}

/* whether the point's box reaches beyond the int32 range of an unpadded coordinate */
static int box_past_int32(const point *pt)
{
    return fabs(pt->ix) + pt->dx > INT32_LIMIT || fabs(pt->iy) + pt->dy > INT32_LIMIT;
}

/* The most a channel's value slope along one axis can be anywhere in the box, per unit of |g|:
 * bilinear, a difference of two reached taps (pixel (r, c) at plane[(r W + c) cs]); bicubic, sum |c'| / 2 times their spread (the
 * slopes sum to 0) times sum |c| of the other axis */
static double slope_reach(const ref_grid_sampler_params *p, const ref_tap_rect *reach, const double *plane, int64_t cs)
{
    double lo, hi;
    ref_tap_rect_range(plane, p->W, cs, reach, &lo, &hi);
    double k = p->interpolation_mode == 2 ? 0.5 * CUBIC_DABS_SUM * CUBIC_ABS_SUM : 1.0;
    return isnan(hi - lo) ? INFINITY : k * (hi - lo);
}

/* the box's corners and edge midpoints, in units of its half-widths */
static const double shifts[8][2] = {{-1, -1}, {-1, 0}, {-1, 1}, {0, -1}, {0, 1}, {1, -1}, {1, 0}, {1, 1}};

/* Same taps (pixels) within the box; with_mult: the coordinate multiplier too (it only enters the
 * grid gradient, which nearest does not have: a clip point that moves no sample, like every y of a
 * single-row plane under border padding, flips nothing there). */
static int same_taps(const axis_taps *a, const axis_taps *b, int with_mult)
{
    if (a->n != b->n || (with_mult && a->mult != b->mult)) return 0;
    for (int k = 0; k < a->n; k++) if (a->idx[k] != b->idx[k]) return 0;
    return 1;
}

/* The stencils of the point at its box's corners and edge midpoints (shifts[a]), per axis at -1, 0
 * and +1 half-widths ([1] the point's own): only the stencils move with the shift, and box point a
 * is box_x(a) by box_y(a) */
typedef struct {
    axis_taps x[3], y[3];
} box_taps;

static const axis_taps *box_x(const box_taps *b, int a) { return &b->x[(int)shifts[a][0] + 1]; }
static const axis_taps *box_y(const box_taps *b, int a) { return &b->y[(int)shifts[a][1] + 1]; }

/* Which outputs of the point are ambiguous: bit 0 the values (output, input_grad), bit 1 the
 * grid gradient. Nearest: when the picked pixel differs within the box; bilinear: when its
 * cell or multiplier does (the values are continuous there, the grid gradient is not). */
static int ambiguity(const ref_grid_sampler_params *p, const point *c, const box_taps *b)
{
    if (p->interpolation_mode == 2) return 0;
    const int bilinear = p->interpolation_mode == 0;
    int jump = 0; /* every box point has one of these stencils, or the point's own, per axis */
    for (int s = 0; s < 3 && !jump; s += 2)
        jump = !same_taps(&c->x, &b->x[s], bilinear) || !same_taps(&c->y, &b->y[s], bilinear);
    if (!jump) return 0;
    return bilinear ? 2 : 1;
}

/* the point at its box's corners and edge midpoints (what ambiguity() compares it with); not
 * moved along an axis whose cell and clip decision every float32 form makes the same (exact_cell) */
static void box_points(const ref_grid_sampler_params *p, const double *g, const point *pt, box_taps *b)
{
    const double kx = exact_cell(p, g[0], p->W) ? 0 : 1, ky = exact_cell(p, g[1], p->H) ? 0 : 1;
    b->x[1] = pt->x;
    b->y[1] = pt->y;
    for (int s = 0; s < 3; s += 2) {
        shifted_stencil(p, pt, 0, kx * (s - 1.0), &b->x[s]);
        shifted_stencil(p, pt, 1, ky * (s - 1.0), &b->y[s]);
    }
}

/* sum over the stencil of w_y * w_x * plane value */
static double sample(const axis_taps *x, const axis_taps *y, const double *plane, int64_t W)
{
    double v = 0;
    for (int j = 0; j < y->n; j++)
        for (int i = 0; i < x->n; i++) v += y->w[j] * x->w[i] * plane[y->idx[j] * W + x->idx[i]];
    return v;
}

/* Magnitude of a product of two weights a b, each evaluated with an error of at most its count of
 * roundings times its magnitude (ma, mb): the error of the product is within
 * k (ma |b| + |a| mb) = 2k cross, and |a b| <= cross, so the tolerance model counts roundings
 * relative to cross = (ma |b| + |a| mb) / 2 (|a b| itself when ma = |a| and mb = |b|). */
static double cross(double ma, double b, double mb, double a) { return 0.5 * (ma * fabs(b) + fabs(a) * mb); }

/* sum of |term| of the point's value: each weight product at its evaluation magnitude */
static double sample_abs_sum(const axis_taps *x, const axis_taps *y, const double *plane, int64_t W)
{
    double s = 0;
    for (int j = 0; j < y->n; j++)
        for (int i = 0; i < x->n; i++)
            s += cross(y->m[j], x->w[i], x->m[i], y->w[j]) * fabs(plane[y->idx[j] * W + x->idx[i]]);
    return s;
}

static double plane_max(const double *plane, int64_t n)
{
    double m = 0;
    for (int64_t k = 0; k < n; k++) if (fabs(plane[k]) > m) m = fabs(plane[k]);
    return m;
}

/* Largest |difference| of neighbouring pixels (out of bounds = 0) around a bilinear cell, along y
 * and x: bounds the slope of the piecewise bilinear value also in the neighbouring cells. */
static void slopes(const double *plane, int64_t H, int64_t W, int64_t y0, int64_t x0, double *sy, double *sx)
{
    double t[4][4]; /* rows y0 - 1 .. y0 + 2, columns x0 - 1 .. x0 + 2 (0 out of bounds) */
    const int inside = y0 >= 1 && y0 + 2 < H && x0 >= 1 && x0 + 2 < W;
    for (int64_t a = 0; a < 4; a++)
        for (int64_t b = 0; b < 4; b++) {
            const int64_t r = y0 - 1 + a, c = x0 - 1 + b;
            t[a][b] = inside || (r >= 0 && r < H && c >= 0 && c < W) ? plane[r * W + c] : 0;
        }
    double my = 0, mx = 0; /* the largest |difference|; a NaN one is passed over */
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++) {
            const double d = fabs(t[a + 1][b] - t[a][b]);
            my = d > my ? d : my;
        }
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++) {
            const double d = fabs(t[a][b + 1] - t[a][b]);
            mx = d > mx ? d : mx;
        }
    *sy = my;
    *sx = mx;
}

/* Second-order remainder constant of the cubic weights (A = -0.75). Per axis, with t in [0, 1], the
 * four taps' sums (maxima on 2e5 points of t, at the t named; per-tap bounds in brackets):
 *   S0 = sum |W|    <= 1.375 (t = 1/2)
 *   S1 = sum |W'|   <= 3     (t = 1/2)   [1.35 inner, 0.75 outer]
 *   S2 = sum |W''|  <= 12    (t = 0)     [4.5 inner: |7.5 t - 4.5|; 3 outer: |4.5 t - 7.5| on [1, 2]]
 *   S3 = sum |W'''| =  24                [6 (A + 2) = 7.5 inner; 6 |A| = 4.5 outer]
 * and a dx^2 + 2 b dx dy + c dy^2 <= max(a, b, c) (dx + dy)^2.
 * Value (forward): the 2-D Taylor remainder of sum v Wx Wy for position errors dx, dy is at most
 *   1/2 (S2 S0 dx^2 + 2 S1^2 dx dy + S0 S2 dy^2) max|v| = 1/2 (16.5 dx^2 + 18 dx dy + 16.5 dy^2) max|v|
 *   <= 8.25 (dx + dy)^2 max|v|. W is C1 with W'' bounded on each piece, so Lagrange's form holds
 *   across the knots too.
 * input_grad, per term g Wx Wy (its first-order terms and the dx dy cross term are written out): the
 *   rest is 1/2 (4.5 dx^2 + 4.5 dy^2) plus third- and fourth-order terms, below 2.5 (dx + dy)^2 while
 *   dx + dy < 0.24; beyond that K2 (dx + dy)^2 passes the cap 10/9 the term is held to anyway.
 * grid_grad (sum v W'x Wy and sum v Wx W'y), the third-derivative use: the remainder of their
 *   first-order terms is 1/2 (S3 S0 dx^2 + 2 S2 S1 dx dy + S1 S2 dy^2) max|v|
 *   = 1/2 (33 dx^2 + 72 dx dy + 36 dy^2) max|v| <= 18 (dx + dy)^2 max|v|, within the 2 K2 = 40 used
 *   there. Lagrange's form needs W'' continuous along the way: it is at |x| = 0 (-4.5) and 1 (3),
 *   but jumps by |2A| = 1.5 at |x| = 2, where a tap leaves the stencil as another enters; a box
 *   holding an integer coordinate adds a first-order term for that (CUBIC_KNOT).
 * K2 = 20 holds all three (8.25, 2.5, 18/2). */
#define CUBIC_K2 20.0
/* The first-order change, per unit of position error and per |g| max|v|, of a bicubic grid-gradient
 * component whose box holds an integer coordinate on its axis: the tap entering the stencil there
 * has W' = 0 at |x| = 2 and |W''| <= |2A| = 1.5 just inside, times sum |W| <= 11/8 on the other axis. */
#define CUBIC_KNOT (1.5 * 1.375)

static void zero(double *t, int64_t n)
{
    if (t) memset(t, 0, sizeof(double) * (size_t)n);
}

/* ---- forward: a chunk of points set up once, then each channel takes them in turn -------------
 *
 * Output element (n, c, q) is point q of image n sampled in plane (n, c); the elements are
 * independent. Walking the channels inside each point touched every plane at every point (a cache
 * miss per tap and plane), so, as for input_grad below, the points of a chunk are set up once
 * (fwd_point: the taps with their weights and the channel-independent bound factors) and each
 * plane then takes the chunk's points while it stays in cache; the per-plane quantities of the
 * bounds (bilinear slopes, bicubic's max |v|) are found once per plane. The same numbers for any
 * chunk. */

typedef struct {
    int64_t pix;     /* y W + x */
    double w;        /* w_y w_x: the sample is the sum of w v over the taps, in stencil order */
    double cr;       /* per |v|: its abs_sum term (the weights at their evaluation magnitudes) */
    double kp;       /* per |v|: its first-order position term (bicubic) */
} fwd_tap;

typedef struct {
    int64_t tap0, ntap;
    int64_t q;             /* the point's index in its chunk */
    int64_t alt0;          /* -1, or its box points' stencils (set when ambiguous or wide) */
    int amb, wide, slope;  /* slope: bilinear with a tap on some axis: the 4x4 slopes bound it */
    int past_int32;        /* box_past_int32 */
    int64_t ybase, xbase;  /* bilinear: the cell */
    double pdy, pdx;       /* bilinear: the box half-widths the value sees */
    double k2;             /* bicubic: its second-order term per max |v| of the plane */
    ref_tap_rect rect;     /* the taps its box reaches */
} fwd_point;

/* a chunk's records; cap_*: room (a point has at most 16 taps) */
typedef struct {
    fwd_point *pt;
    fwd_tap *tap;
    box_taps *alt;
    int64_t npt, ntap, nalt, cap_pt, cap_tap, cap_alt;
} fwd_chunk;

static int fwd_chunk_room(const fwd_chunk *k)
{
    return k->npt < k->cap_pt && k->ntap + 16 <= k->cap_tap && k->nalt < k->cap_alt;
}

/* appends point g's record (its box points only where the bounds need them: nearest's
   ambiguity, a wide box) */
static void fwd_point_add(const ref_grid_sampler_params *p, const double *g, double pre, int bounds, fwd_chunk *k)
{
    point pt;
    box_taps *alt = &k->alt[k->nalt];
    point_at(p, g, pre, &pt);
    const int need_alt = bounds && (p->interpolation_mode == 1 || pt.wide);
    if (need_alt) box_points(p, g, &pt, alt);
    fwd_point *r = &k->pt[k->npt++];
    *r = (fwd_point){.tap0 = k->ntap, .q = k->npt - 1, .alt0 = -1, .wide = pt.wide, .past_int32 = box_past_int32(&pt),
                     .ybase = pt.y.base, .xbase = pt.x.base, .pdy = pt.pdy, .pdx = pt.pdx};
    r->amb = need_alt ? ambiguity(p, &pt, alt) & 1 : 0;
    if (r->amb || r->wide) r->alt0 = k->nalt++;
    r->slope = p->interpolation_mode == 0 && (pt.x.n || pt.y.n);
    r->k2 = CUBIC_K2 * (pt.dx + pt.dy) * (pt.dx + pt.dy);
    if (bounds) reach_rect(p, &pt, &r->rect);
    for (int j = 0; j < pt.y.n; j++)
        for (int i = 0; i < pt.x.n; i++) {
            fwd_tap *t = &k->tap[k->ntap++];
            t->pix = pt.y.idx[j] * p->W + pt.x.idx[i];
            t->w = pt.y.w[j] * pt.x.w[i];
            t->cr = cross(pt.y.m[j], pt.x.w[i], pt.x.m[i], pt.y.w[j]);
            t->kp = fabs(pt.x.dw[i] * pt.y.w[j]) * pt.dx + fabs(pt.x.w[i] * pt.y.dw[j]) * pt.dy;
        }
    r->ntap = k->ntap - r->tap0;
}

/* tap t's term of abs_sum at plane value x: its weights at their evaluation magnitudes */
static double tap_abs(const fwd_tap *t, double x) { return t->cr * fabs(x); }

/* Record r in a plane: the sum over the stencil of w_y * w_x * plane value (sample() on a record),
 * and beside it the abs_sum of its bounds, in one walk over the taps (each tap read once) */
static double fwd_sample(const fwd_chunk *k, const fwd_point *r, const double *plane, double *abs_sum)
{
    double v = 0, a = 0;
    for (const fwd_tap *t = k->tap + r->tap0, *end = t + r->ntap; t < end; t++) {
        const double x = plane[t->pix];
        v += t->w * x;
        a += tap_abs(t, x);
    }
    *abs_sum = a;
    return v;
}

/* The bilinear slopes of one plane (slopes()) at every cell (y0, x0) of [-2, H] x [-2, W], found
 * once per plane for a chunk's points; beyond that range the 4x4 window lies off the plane: 0.
 * Each is the largest of some neighbour differences (NaN ones passed over), found here as a
 * largest over columns, then over rows: a largest does not depend on the order it is taken in, so
 * the numbers are slopes()'s. */
typedef struct {
    double *sy, *sx;   /* (H + 3) x (W + 3), cell (y0, x0) at (y0 + 2) (W + 3) + x0 + 2 */
    double *rows;      /* scratch: a largest per row r in [-3, H + 2] and cell column, (H + 6) x (W + 3) */
    double *diff;      /* scratch: one row's differences at columns [-3, W + 2], then W zeros */
    int64_t H, W;
} slope_map;

static double max_nan0(double m, double d) { return d > m ? d : m; }

/* rows[r] at cell column x0 in [-2, W]: the largest of diff at columns x0 - 1 .. x0 - 2 + span */
static void window_row(const slope_map *m, int64_t r, int span)
{
    const int64_t W3 = m->W + 3;
    double *restrict out = m->rows + (r + 3) * W3;
    const double *restrict d = m->diff; /* d[x]: column x - 3 */
    if (span == 4) {
#pragma omp simd
        for (int64_t x = 0; x < W3; x++) out[x] = max_nan0(max_nan0(d[x], d[x + 1]), max_nan0(d[x + 2], d[x + 3]));
    } else {
#pragma omp simd
        for (int64_t x = 0; x < W3; x++) out[x] = max_nan0(max_nan0(d[x], d[x + 1]), d[x + 2]);
    }
}

/* out at cell (y0, x0): the largest of rows y0 - 1 .. y0 - 2 + span at x0 */
static void window_cols(const slope_map *m, int span, double *restrict out)
{
    const int64_t W3 = m->W + 3, n = (m->H + 3) * W3;
    const double *restrict r = m->rows; /* row y0 - 1 of cell row y0 */
    if (span == 4) {
#pragma omp simd
        for (int64_t k = 0; k < n; k++) out[k] = max_nan0(max_nan0(r[k], r[k + W3]), max_nan0(r[k + 2 * W3], r[k + 3 * W3]));
    } else {
#pragma omp simd
        for (int64_t k = 0; k < n; k++) out[k] = max_nan0(max_nan0(r[k], r[k + W3]), r[k + 2 * W3]);
    }
}

static void slope_map_fill(const slope_map *m, const double *plane)
{
    const int64_t H = m->H, W = m->W, W3 = W + 3;
    const double *zeros = m->diff + W + 6;
    double *d = m->diff + 3; /* d[c], c in [-3, W + 2] */
    /* sy: |v(r + 1, c) - v(r, c)| for rows r in [-1, H - 1] (0 off the plane) at 4 columns, then 3 rows */
    zero(m->rows, 3 * W3); /* rows -3 .. -1 and H .. H + 2 hold no differences */
    zero(m->rows + (H + 3) * W3, 3 * W3);
    for (int64_t c = -3; c < W + 3; c++) d[c] = 0;
    for (int64_t r = -1; r < H; r++) {
        const double *up = r >= 0 ? plane + r * W : zeros, *dn = r + 1 < H ? plane + (r + 1) * W : zeros;
#pragma omp simd
        for (int64_t c = 0; c < W; c++) d[c] = max_nan0(0, fabs(dn[c] - up[c]));
        window_row(m, r, 4);
    }
    window_cols(m, 3, m->sy);
    /* sx: |v(r, c + 1) - v(r, c)| for columns c in [-1, W - 1] at 3 columns, then 4 rows */
    zero(m->rows + 2 * W3, W3); /* row -1 */
    for (int64_t r = 0; r < H; r++) {
        const double *v = plane + r * W;
        d[-1] = max_nan0(0, fabs(v[0] - 0));
#pragma omp simd
        for (int64_t c = 0; c < W - 1; c++) d[c] = max_nan0(0, fabs(v[c + 1] - v[c]));
        d[W - 1] = max_nan0(0, fabs(0 - v[W - 1]));
        window_row(m, r, 3);
    }
    window_cols(m, 4, m->sx);
}

/* slopes() of the plane at cell (y0, x0): from the map when there is one */
static void plane_slopes(const slope_map *m, const double *plane, int64_t H, int64_t W, int64_t y0, int64_t x0,
                         double *sy, double *sx)
{
    if (!m->sy) {
        slopes(plane, H, W, y0, x0, sy, sx);
    } else if (y0 < -2 || y0 > H || x0 < -2 || x0 > W) {
        *sy = *sx = 0;
    } else {
        *sy = m->sy[(y0 + 2) * (W + 3) + x0 + 2];
        *sx = m->sx[(y0 + 2) * (W + 3) + x0 + 2];
    }
}

/* A plane's quantities for the bounds of a chunk's points: the slope map, max |v| (bicubic) */
typedef struct {
    slope_map map;
    double vmax;
} fwd_plane;

/* The bounds of output element e = fwd_sample of record r in one plane, whose value is value with
 * that abs_sum (the box points, set when r->amb or r->wide; rect: the taps its box reaches) */
static void forward_bounds(const ref_grid_sampler_params *p, const fwd_chunk *k, const fwd_point *r,
                           const fwd_plane *pl, const double *plane, double value, double abs_sum, int64_t e,
                           ref_bounds *bounds)
{
    const box_taps *alt = r->alt0 >= 0 ? &k->alt[r->alt0] : NULL;
    double n_terms = (double)r->ntap, pos_err = 0, ambig = 0;
    for (int64_t t = r->tap0; p->interpolation_mode == 2 && t < r->tap0 + r->ntap; t++)
        pos_err += fabs(plane[k->tap[t].pix]) * k->tap[t].kp;
    if (r->slope) {
        double sy, sx;
        plane_slopes(&pl->map, plane, p->H, p->W, r->ybase, r->xbase, &sy, &sx);
        pos_err = ref_value_pos_err(sy, sx, r->pdy, r->pdx);
    } else if (p->interpolation_mode == 2 && r->ntap) {
        pos_err += r->k2 * pl->vmax;
    }
    /* caps: no position in the box moves the value further than value_reach; the
       ambiguity covers the rest of that reach beyond the position term */
    const double reach = (pos_err > 0 || r->amb || r->wide) ? value_reach(p, r->past_int32, &r->rect, plane, value) : 0;
    pos_err = fmin(pos_err, reach);
    for (int a = 0; r->amb && a < 8; a++) ambig = fmax(ambig, fabs(sample(box_x(alt, a), box_y(alt, a), plane, p->W) - value) + pos_err);
    if (r->wide) ambig = fmax(reach - pos_err, 0);
    if (ambig > 0) ambig = fmin(ambig, fmax(reach - pos_err, 0));
    /* a kernel on another branch rounds that branch's terms: abs_sum and n_terms of
       the largest */
    for (int a = 0; ambig > 0 && a < 8; a++) {
        abs_sum = fmax(abs_sum, sample_abs_sum(box_x(alt, a), box_y(alt, a), plane, p->W));
        n_terms = fmax(n_terms, (double)(box_x(alt, a)->n * box_y(alt, a)->n));
    }
    if (bounds->abs_sum) bounds->abs_sum[e] = abs_sum;
    if (bounds->n_terms) bounds->n_terms[e] = n_terms;
    if (bounds->pos_err) bounds->pos_err[e] = pos_err;
    if (bounds->ambig) bounds->ambig[e] = ambig;
}

/* The forward's tensors, for one range of points of one image */
typedef struct {
    const ref_grid_sampler_params *p;
    const double *input, *grid;
    double *output;
    ref_bounds *bounds;
    int64_t per_n, len; /* per_n ranges of len points per image */
} fwd_ctx;

/* the chunk's points (the first is q0 of image n) in every plane of the image */
static void forward_chunk(const fwd_ctx *f, const fwd_chunk *k, int64_t n, int64_t q0, fwd_plane *pl)
{
    const ref_grid_sampler_params *p = f->p;
    const int64_t HW = p->H * p->W, P = p->Ho * p->Wo;
    for (int64_t c = 0; c < p->C; c++) {
        const double *plane = f->input + (n * p->C + c) * HW;
        if (f->bounds && pl->map.sy) slope_map_fill(&pl->map, plane);
        if (f->bounds && p->interpolation_mode == 2) pl->vmax = plane_max(plane, HW);
        for (int64_t i = 0; i < k->npt; i++) {
            const int64_t e = (n * p->C + c) * P + q0 + k->pt[i].q;
            double abs_sum;
            f->output[e] = fwd_sample(k, &k->pt[i], plane, &abs_sum);
            if (f->bounds) forward_bounds(p, k, &k->pt[i], pl, plane, f->output[e], abs_sum, e, f->bounds);
        }
    }
}

/* room for a chunk of up to len points (a point at a time when there is no memory for more) */
static int fwd_chunk_alloc(fwd_chunk *k, int64_t len, fwd_point *pt1, fwd_tap *tap1, box_taps *alt1)
{
    enum { ALT = 64 };
    *k = (fwd_chunk){malloc(sizeof(fwd_point) * (size_t)len), malloc(sizeof(fwd_tap) * (size_t)(4 * len + 16)),
                     malloc(sizeof(box_taps) * ALT), 0, 0, 0, len, 4 * len + 16, ALT};
    if (k->pt && k->tap && k->alt) return 1;
    free(k->pt); free(k->tap); free(k->alt);
    *k = (fwd_chunk){pt1, tap1, alt1, 0, 0, 0, 1, 16, 1};
    return 0;
}

/* The slope map, where a chunk of len points takes slopes in planes of H x W: when they are many
 * against the plane's pixels (else each point finds its own) and it fits in a few MB */
static void slope_map_alloc(slope_map *m, const ref_grid_sampler_params *p, int64_t len)
{
    const int64_t cells = (p->H + 3) * (p->W + 3);
    *m = (slope_map){NULL, NULL, NULL, NULL, p->H, p->W};
    if (p->interpolation_mode != 0 || 8 * len < p->H * p->W || (p->H + 6) * (p->W + 3) > (1 << 20)) return;
    m->sy = malloc(sizeof(double) * (size_t)cells);
    m->sx = malloc(sizeof(double) * (size_t)cells);
    m->rows = malloc(sizeof(double) * (size_t)((p->H + 6) * (p->W + 3)));
    m->diff = calloc((size_t)(2 * p->W + 6), sizeof(double));
    if (m->sy && m->sx && m->rows && m->diff) return;
    free(m->sy); free(m->sx); free(m->rows); free(m->diff);
    m->sy = NULL;
}

static void slope_map_free(slope_map *m)
{
    if (m->sy) { free(m->sy); free(m->sx); free(m->rows); free(m->diff); }
}

/* Room to reorder a chunk's records: a copy of them and a count per row */
typedef struct {
    fwd_point *pt;
    fwd_tap *tap;
    int64_t *start; /* H + 2 */
} fwd_sorter;

static int fwd_sorter_alloc(fwd_sorter *s, const fwd_chunk *k, int64_t H)
{
    *s = (fwd_sorter){malloc(sizeof(fwd_point) * (size_t)k->cap_pt), malloc(sizeof(fwd_tap) * (size_t)k->cap_tap),
                      malloc(sizeof(int64_t) * (size_t)(H + 2))};
    if (s->pt && s->tap && s->start) return 1;
    free(s->pt); free(s->tap); free(s->start);
    s->pt = NULL;
    return 0;
}

/* The records in the order of their first tap's row (no tap first): each plane is then swept top
 * to bottom instead of at random (a grid need not be smooth), so its taps, slopes and reach come
 * from L1. Only the order of independent elements changes: each record keeps its point's q. */
static int64_t row_key(const fwd_chunk *k, const fwd_point *r, int64_t W)
{
    return r->ntap ? k->tap[r->tap0].pix / W + 1 : 0; /* in [0, H] */
}

static void fwd_chunk_sort(fwd_chunk *k, fwd_sorter *s, int64_t H, int64_t W)
{
    for (int64_t b = 0; b < H + 2; b++) s->start[b] = 0;
    for (int64_t i = 0; i < k->npt; i++) s->start[row_key(k, &k->pt[i], W) + 1]++;
    for (int64_t b = 1; b < H + 2; b++) s->start[b] += s->start[b - 1]; /* start[b]: records of keys below b */
    for (int64_t i = 0; i < k->npt; i++) s->pt[s->start[row_key(k, &k->pt[i], W)]++] = k->pt[i];
    int64_t nt = 0;
    for (int64_t i = 0; i < k->npt; i++) {
        fwd_point *r = &s->pt[i];
        memcpy(&s->tap[nt], &k->tap[r->tap0], sizeof(fwd_tap) * (size_t)r->ntap);
        r->tap0 = nt;
        nt += r->ntap;
    }
    fwd_point *pt = k->pt; fwd_tap *tap = k->tap;
    k->pt = s->pt; k->tap = s->tap;
    s->pt = pt; s->tap = tap;
}

/* Points [q0, q0 + len) of image n in every plane, as one chunk where memory allows */
static void forward_range(void *ctx, int64_t item)
{
    const fwd_ctx *f = ctx;
    const ref_grid_sampler_params *p = f->p;
    const int64_t P = p->Ho * p->Wo, n = item / f->per_n, q0 = item % f->per_n * f->len;
    const int64_t q1 = q0 + f->len < P ? q0 + f->len : P;
    fwd_point pt1;
    fwd_tap tap1[16];
    box_taps alt1;
    fwd_chunk k;
    const int big = fwd_chunk_alloc(&k, f->len, &pt1, tap1, &alt1);
    fwd_plane pl = {{NULL, NULL, NULL, NULL, p->H, p->W}, 0};
    if (f->bounds && big) slope_map_alloc(&pl.map, p, f->len);
    fwd_sorter so = {NULL, NULL, NULL};
    const int sorted = big && fwd_sorter_alloc(&so, &k, p->H);
    const double pre = f->bounds ? f->bounds->pos_rel_err : 0.0;
    for (int64_t c0 = q0, q = q0; c0 < q1; c0 = q) {
        k.npt = k.ntap = k.nalt = 0;
        for (; q < q1 && fwd_chunk_room(&k); q++) fwd_point_add(p, f->grid + (n * P + q) * 2, pre, f->bounds != NULL, &k);
        if (sorted) fwd_chunk_sort(&k, &so, p->H, p->W);
        forward_chunk(f, &k, n, c0, &pl);
    }
    slope_map_free(&pl.map);
    if (sorted) { free(so.pt); free(so.tap); free(so.start); }
    if (big) { free(k.pt); free(k.tap); free(k.alt); }
}

/* ranges of points: about four a thread over the images (one thread: an image), at most 16384
   points each: per_n ranges of len points per image */
static void point_ranges(const ref_grid_sampler_params *p, int64_t *per_n, int64_t *len)
{
    const int64_t P = p->Ho * p->Wo, want = ref_get_threads() > 1 ? 4 * (int64_t)ref_get_threads() : 1;
    *per_n = p->N > 0 ? (want + p->N - 1) / p->N : 1;
    if (*per_n < (P + 16383) / 16384) *per_n = (P + 16383) / 16384;
    if (*per_n > P) *per_n = P > 0 ? P : 1;
    *len = (P + *per_n - 1) / *per_n;
}

void f64_grid_sampler_2d_fwd__ref(const ref_grid_sampler_params *p, const double *input, const double *grid,
                                  double *output, ref_bounds *bounds)
{
    fwd_ctx f = {p, input, grid, output, bounds, 0, 0};
    point_ranges(p, &f.per_n, &f.len);
    ref_parallel_for(p->N * f.per_n, forward_range, &f);
}

/* ---- backward ----------------------------------------------------------------------------------- */

/* The distinct pixels nearest picks at the point and at the corners and edge midpoints of its
 * rounding box, -1 for none (out of bounds). One choice means nothing can flip: 0 returned;
 * otherwise the in-bounds pixels among them, each of which may gain or lose the sample. */
static int nearest_choices(const ref_grid_sampler_params *p, const point *pt, const box_taps *b, int64_t pix[9])
{
    int64_t seen[9];
    int n_seen = 0, n = 0;
    for (int a = -1; a < 8; a++) {
        const axis_taps *x = a < 0 ? &pt->x : box_x(b, a), *y = a < 0 ? &pt->y : box_y(b, a);
        int64_t e = x->n && y->n ? y->idx[0] * p->W + x->idx[0] : -1;
        int k = 0;
        while (k < n_seen && seen[k] != e) k++;
        if (k < n_seen) continue;
        seen[n_seen++] = e;
        if (e >= 0) pix[n++] = e;
    }
    return n_seen > 1 ? n : 0;
}

/* A point's stencil and what rounding may change about it: the backward's work per point */
typedef struct {
    point pt;
    box_taps box;
    int amb;            /* ambiguity(); box is set when it can be nonzero or extras were asked for */
    int n_tie;          /* nearest's tie: the pixels another rounding may pick */
    int64_t tie_pix[9];
    int n_extra;        /* taps a float twin may reach that the point does not, largest weight */
    int64_t extra_idx[8 * 16];
    double extra_w[8 * 16];
} point_work;

static void point_setup(const ref_grid_sampler_params *p, const double *g, double pre, int with_bounds, int extras,
                        point_work *w)
{
    point_at(p, g, pre, &w->pt);
    if ((with_bounds && p->interpolation_mode != 2) || extras) box_points(p, g, &w->pt, &w->box);
    w->amb = with_bounds ? ambiguity(p, &w->pt, &w->box) : 0;
    w->n_tie = (w->amb & 1) ? nearest_choices(p, &w->pt, &w->box, w->tie_pix) : 0;
    w->n_extra = 0;
    if (!extras) return;
    /* taps a float twin may reach that the double point does not (its coordinate crosses
       a cell edge within the rounding box): the stencils at the box's corners and edge
       midpoints beyond the point's own taps, with the largest weight they get there */
    const point *pt = &w->pt;
    for (int a = 0; a < 8; a++) {
        const axis_taps *bx = box_x(&w->box, a), *by = box_y(&w->box, a);
        if (same_taps(bx, &pt->x, 0) && same_taps(by, &pt->y, 0)) continue; /* every tap its own */
        for (int j = 0; j < by->n; j++)
            for (int i = 0; i < bx->n; i++) {
                int64_t pix = by->idx[j] * p->W + bx->idx[i];
                int own = 0;
                for (int jj = 0; jj < pt->y.n && !own; jj++)
                    for (int ii = 0; ii < pt->x.n && !own; ii++)
                        own = pt->y.idx[jj] * p->W + pt->x.idx[ii] == pix;
                double wt = fabs(by->w[j] * bx->w[i]);
                if (own || !(wt > 0)) continue;
                int k = 0;
                while (k < w->n_extra && w->extra_idx[k] != pix) k++;
                if (k == w->n_extra) { w->extra_idx[w->n_extra] = pix; w->extra_w[w->n_extra++] = wt; }
                else if (wt > w->extra_w[k]) w->extra_w[k] = wt;
            }
    }
}

/* ---- input_grad: a point's taps, built once, then scattered into every channel of a block ---------
 *
 * A channel's input_grad (and bound) planes are read and written at the taps of every point, in
 * point order. Walking the channels inside each point touched 256 planes per point (a cache miss
 * per tap and plane); so the points of a chunk are set up once (ig_point: the taps with their
 * weights and the channel-independent bound factors) and then each channel takes the chunk's
 * points in order. Every element still receives its terms in point order, with the same values:
 * the same bits for any chunk. */

typedef struct {
    int64_t pix;     /* y W + x */
    double wy, wx;   /* the tap's weights: it receives g * w_y * w_x */
    double cr, fm;   /* per |g|: its abs_sum term, and its position error (capped) */
} ig_tap;

typedef struct {
    int64_t pix;
    double w;        /* extras: the largest weight; ties: 1 when it also counts as a term */
} ig_pix;

typedef struct {
    int64_t tap0, extra0, tie0;
    int ntap, nextra, ntie, wide;
    int64_t r0, r1, c0, c1; /* wide: the rectangle its box reaches */
} ig_point;

/* a chunk of points' records; cap_* room for them (a point needs at most 16 taps, 8 x 16 extras
   and 9 ties) */
typedef struct {
    ig_point *pt;
    ig_tap *tap;
    ig_pix *extra, *tie;
    int64_t npt, ntap, nextra, ntie, cap_pt, cap_tap, cap_extra, cap_tie;
} ig_chunk;

static int ig_chunk_room(const ig_chunk *k)
{
    return k->npt < k->cap_pt && k->ntap + 16 <= k->cap_tap && k->nextra + 8 * 16 <= k->cap_extra &&
           k->ntie + 9 <= k->cap_tie;
}

/* appends the point's record: its taps, and with bounds their factors and what its rounding may
   reach beyond them (the taps a float twin may reach, a wide box's reach, nearest's ties) */
static void ig_point_add(const ref_grid_sampler_params *p, const point_work *w, int bounds, ig_chunk *k)
{
    const point *pt = &w->pt;
    const double dx = pt->pdx, dy = pt->pdy, k2 = p->interpolation_mode == 2 ? CUBIC_K2 : 0;
    /* a weight product stays in [0, 1] (bilinear) or [-1/9, 1] (bicubic) wherever the point
       moves: its change, and so a term's position error, is at most that spread times |g| */
    const double w_spread = p->interpolation_mode == 2 ? CUBIC_W_SPREAD : 1.0;
    ig_point *r = &k->pt[k->npt++];
    *r = (ig_point){.tap0 = k->ntap, .extra0 = k->nextra, .tie0 = k->ntie};
    for (int j = 0; j < pt->y.n; j++)
        for (int i = 0; i < pt->x.n; i++) {
            ig_tap *t = &k->tap[k->ntap++];
            t->pix = pt->y.idx[j] * p->W + pt->x.idx[i];
            t->wy = pt->y.w[j];
            t->wx = pt->x.w[i];
            t->cr = cross(pt->y.m[j], pt->x.w[i], pt->x.m[i], pt->y.w[j]);
            t->fm = fmin(fabs(pt->x.dw[i]) * (fabs(pt->y.w[j]) + fabs(pt->y.dw[j]) * dy) * dx +
                         fabs(pt->x.w[i] * pt->y.dw[j]) * dy + k2 * (dx + dy) * (dx + dy), w_spread);
        }
    r->ntap = (int)(k->ntap - r->tap0);
    if (!bounds) return;
    for (int e = 0; e < w->n_extra; e++) k->extra[k->nextra++] = (ig_pix){w->extra_idx[e], w->extra_w[e]};
    r->nextra = w->n_extra;
    for (int e = 0; e < w->n_tie; e++) {
        /* a gained sample is summed in with the others: its rounding too (not the point's own tap) */
        const int own = pt->x.n && pt->y.n && w->tie_pix[e] == pt->y.idx[0] * p->W + pt->x.idx[0];
        k->tie[k->ntie++] = (ig_pix){w->tie_pix[e], own ? 0.0 : 1.0};
    }
    r->ntie = w->n_tie;
    r->wide = pt->wide;
    if (pt->wide) {
        ref_clip_taps(floor(pt->py_lo), floor(pt->py_hi) + 1, p->H, &r->r0, &r->r1);
        ref_clip_taps(floor(pt->px_lo), floor(pt->px_hi) + 1, p->W, &r->c0, &r->c1);
    }
}

/* The input_grad planes of a block of channels being scattered into: field f (0 input_grad, then
 * abs_sum, n_terms, pos_err, ambig; NULL where that array is not asked for) of pixel pix in
 * channel c at f[pix ps + c]. A scratch copy, pixel-major with a pixel's fields side by side, so a
 * tap reaches all the block's channels in a few neighbouring cache lines; or, without the memory
 * for it, the planes themselves, a channel at a time (ps 1). */
enum { IG_CB = 8 };
typedef struct {
    double *f[5];
    int64_t ps, cb;
    double *buf; /* the scratch: HW x 5 x IG_CB */
    int direct;  /* the planes themselves */
    double *go;  /* the chunk's grad_output in the block's channels, point-major (chunk x IG_CB) */
} ig_block;

/* input_grad of point r of the chunk in the block's channels, whose grad_output values are go:
 * every in-bounds tap receives g * w_y * w_x; with bounds, its terms' abs_sum, n_terms and pos_err,
 * the taps a float twin may reach, a wide box's reach, and nearest's ties */
static void ig_scatter(const ref_grid_sampler_params *p, const ig_chunk *k, const ig_point *r, const double *go,
                       const ig_block *b, int bounds)
{
    const double w_spread = p->interpolation_mode == 2 ? CUBIC_W_SPREAD : 1.0;
    const int64_t ps = b->ps, cb = b->cb;
    for (const ig_tap *tp = &k->tap[r->tap0]; tp < &k->tap[r->tap0 + r->ntap]; tp++) {
        double *ig = b->f[0] + tp->pix * ps;
        for (int64_t c = 0; c < cb; c++) ig[c] += go[c] * tp->wy * tp->wx;
        for (int64_t c = 0; bounds && b->f[1] && c < cb; c++) b->f[1][tp->pix * ps + c] += fabs(go[c]) * tp->cr;
        for (int64_t c = 0; bounds && b->f[2] && c < cb; c++) b->f[2][tp->pix * ps + c] += 1;
        for (int64_t c = 0; bounds && b->f[3] && c < cb; c++) b->f[3][tp->pix * ps + c] += fabs(go[c]) * tp->fm;
    }
    if (!bounds) return;
    for (const ig_pix *e = &k->extra[r->extra0]; e < &k->extra[r->extra0 + r->nextra]; e++)
        for (int64_t c = 0; c < cb; c++)
            if (isfinite(go[c])) b->f[3][e->pix * ps + c] += fabs(go[c]) * e->w;
    if (!b->f[4]) return;
    /* a wide box: every pixel it reaches may gain or lose a weight of the point */
    for (int64_t y = r->r0; r->wide && y <= r->r1; y++)
        for (int64_t x = r->c0; x <= r->c1; x++)
            for (int64_t c = 0; c < cb; c++) b->f[4][(y * p->W + x) * ps + c] += fabs(go[c]) * w_spread;
    /* a tie of nearest: the pixel another rounding picks may get g instead (each pixel reachable
       within the box gains or loses g once, at most); a gained sample is summed in with the others */
    for (const ig_pix *tie = &k->tie[r->tie0]; tie < &k->tie[r->tie0 + r->ntie]; tie++)
        for (int64_t c = 0; c < cb; c++) {
            b->f[4][tie->pix * ps + c] += fabs(go[c]);
            if (tie->w == 0) continue;
            if (b->f[1]) b->f[1][tie->pix * ps + c] += fabs(go[c]);
            if (b->f[2]) b->f[2][tie->pix * ps + c] += 1;
        }
}

/* The block over channels [c0, c0 + cb) of image n (IG_LOAD) and back (IG_STORE): the scratch copied
 * from and to the planes, or the planes themselves. IG_FRESH loads planes nothing has written yet:
 * zeros, without reading them (the bwd leaves them unset; a copy of zeros was a third of the
 * memory the input_grad pass moved) */
enum { IG_STORE, IG_LOAD, IG_FRESH };
static void ig_block_move(const ref_grid_sampler_params *p, double *input_grad, const ref_bounds *bi, int64_t n,
                          int64_t c0, int64_t cb, ig_block *b, int how)
{
    const int64_t HW = p->H * p->W;
    double *arr[5] = {input_grad, bi ? bi->abs_sum : NULL, bi ? bi->n_terms : NULL, bi ? bi->pos_err : NULL,
                      bi ? bi->ambig : NULL};
    b->cb = cb;
    for (int f = 0; f < 5; f++) {
        double *planes = arr[f] ? arr[f] + (n * p->C + c0) * HW : NULL;
        if (b->direct) {
            b->f[f] = planes;
            if (how == IG_FRESH) zero(planes, cb * HW);
            continue;
        }
        b->f[f] = arr[f] ? b->buf + f * IG_CB : NULL;
        if (!arr[f]) continue;
        /* pixel by pixel: a pixel's channels share a line of the scratch, which a channel at a
           time walked cb times over (from memory: the scratch outgrows the cache) */
        double *sc = b->f[f];
        const int64_t ps = b->ps;
        if (how == IG_FRESH)
            for (int64_t k = 0; k < HW; k++) memset(sc + k * ps, 0, sizeof(double) * (size_t)cb);
        else if (how == IG_LOAD)
            for (int64_t k = 0; k < HW; k++)
                for (int64_t c = 0; c < cb; c++) sc[k * ps + c] = planes[c * HW + k];
        else
            for (int64_t k = 0; k < HW; k++)
                for (int64_t c = 0; c < cb; c++) planes[c * HW + k] = sc[k * ps + c];
    }
}

/* input_grad of the chunk's points (the first is point q0 of image n) on channels [c0, c1), a
 * block at a time: every element receives its terms in point order (the planes hold nothing yet
 * at q0 = 0) */
static void input_grad_chunk(const ref_grid_sampler_params *p, const ig_chunk *k, const double *grad_output,
                             int64_t n, int64_t q0, int64_t c0, int64_t c1, double *input_grad, const ref_bounds *bi,
                             ig_block *b)
{
    /* the scratch where the points are many against the pixels it copies in and out */
    b->direct = !b->buf || 4 * k->npt < p->H * p->W;
    b->ps = b->direct ? 1 : 5 * IG_CB;
    const int64_t P = p->Ho * p->Wo, width = b->direct ? 1 : IG_CB;
    for (int64_t s = c0; s < c1; s += width) {
        ig_block_move(p, input_grad, bi, n, s, s + width < c1 ? width : c1 - s, b, q0 ? IG_LOAD : IG_FRESH);
        const double *go = grad_output + (n * p->C + s) * P + q0;
        for (int64_t c = 0; !b->direct && c < b->cb; c++)
            for (int64_t i = 0; i < k->npt; i++) b->go[i * IG_CB + c] = go[c * P + i];
        for (int64_t i = 0; i < k->npt; i++) {
            /* the fields of a point's taps a few ahead, whose lines lie anywhere in the block */
            for (int64_t t = 0; !b->direct && i + 4 < k->npt && t < k->pt[i + 4].ntap; t++)
                for (int f = 0; f < 4; f++) __builtin_prefetch(b->buf + k->tap[k->pt[i + 4].tap0 + t].pix * b->ps + f * IG_CB, 1);
            ig_scatter(p, k, &k->pt[i], b->direct ? go + i : b->go + i * IG_CB, b, bi != NULL);
        }
        if (!b->direct) ig_block_move(p, input_grad, bi, n, s, b->cb, b, IG_STORE);
    }
}

/* ---- grid_grad: a range of points set up once, then each channel plane adds its terms ----------
 *
 * grid_grad of a point is a sum over the channels (each channel's taps in stencil order), and so are
 * the sums its bounds take. Walking the channels inside each point touched every plane at every
 * point (a cache miss per tap and plane, three times over with the bounds); so, as in the forward,
 * the points of a chunk are set up once (gg_tap: the taps with their channel-independent factors)
 * and each plane then adds its terms to every point's running sums (gg_sums). Every sum still takes
 * its terms in channel order, then stencil order, with the same values: the same bits for any
 * chunk. The box points of a point whose grid gradient is ambiguous ride along as records of their
 * own, right after it. */

typedef struct {
    int64_t pix;               /* y W + x */
    double dwx, wy, wx, dwy;   /* its terms: v dw_x w_y g (x), v w_x dw_y g (y) */
    double kax, kay, kpx, kpy; /* per |v g|: its abs_sum terms at the weights' evaluation magnitudes
                                  and its position terms (before the multipliers) */
} gg_tap;

/* a point, or one of its box points (the nalt records after it) */
typedef struct {
    int64_t tap0, ntap, qi;    /* its taps; qi: its point's index in the chunk */
    int reach, amb, wide, nalt;/* reach: a point with bounds, which sums |g| slope_reach over rect */
    double mult[2];            /* the coordinate multipliers (x, y) */
    double ix, iy, pdx, pdy;   /* a point: its coordinates and the half-widths its values see */
    ref_tap_rect rect;
} gg_rec;

/* a record's running sums over the channels */
typedef struct {
    double gix, giy;           /* the grid gradient before the multipliers */
    double abs_x, abs_y;       /* its sums of |term| (before |mult|) */
    double pe_x, pe_y, sg;     /* position terms; sg = sum |g| max|plane| (bicubic) */
    double r;                  /* sum |g| slope_reach (grid_reach) */
} gg_sums;

typedef struct {
    gg_rec *rec;
    gg_tap *tap;
    gg_sums *sum;
    int64_t nrec, ntap, cap_rec, cap_tap;
} gg_chunk;

static int gg_chunk_room(const gg_chunk *k) { return k->nrec + 9 <= k->cap_rec && k->ntap + 9 * 16 <= k->cap_tap; }

/* appends a record of the stencil x by y of point pt (qi: its index in the chunk) */
static gg_rec *gg_rec_add(const ref_grid_sampler_params *p, const point *pt, const axis_taps *x, const axis_taps *y,
                          int64_t qi, gg_chunk *k)
{
    const double dx = pt->pdx, dy = pt->pdy;
    gg_rec *r = &k->rec[k->nrec++];
    *r = (gg_rec){.tap0 = k->ntap, .qi = qi, .mult = {x->mult, y->mult}};
    for (int j = 0; j < y->n; j++)
        for (int i = 0; i < x->n; i++) {
            gg_tap *t = &k->tap[k->ntap++];
            t->pix = y->idx[j] * p->W + x->idx[i];
            t->dwx = x->dw[i];
            t->wy = y->w[j];
            t->wx = x->w[i];
            t->dwy = y->dw[j];
            t->kax = cross(x->dm[i], y->w[j], y->m[j], x->dw[i]);
            t->kay = cross(x->m[i], y->dw[j], y->dm[j], x->w[i]);
            t->kpx = fabs(x->d2w[i] * y->w[j]) * dx + fabs(x->dw[i] * y->dw[j]) * dy;
            t->kpy = fabs(x->dw[i] * y->dw[j]) * dx + fabs(x->w[i] * y->d2w[j]) * dy;
        }
    r->ntap = k->ntap - r->tap0;
    return r;
}

/* appends point g's record (index qi in the chunk), and its box points' where its grid gradient is
   ambiguous */
static void gg_point_add(const ref_grid_sampler_params *p, const double *g, double pre, int bounds, int64_t qi,
                         gg_chunk *k)
{
    point_work w;
    point_setup(p, g, pre, bounds, 0, &w);
    gg_rec *r = gg_rec_add(p, &w.pt, &w.pt.x, &w.pt.y, qi, k);
    r->reach = bounds;
    r->amb = w.amb;
    r->wide = w.pt.wide;
    r->ix = w.pt.ix;
    r->iy = w.pt.iy;
    r->pdx = w.pt.pdx;
    r->pdy = w.pt.pdy;
    if (bounds) reach_rect(p, &w.pt, &r->rect);
    r->nalt = (w.amb & 2) ? 8 : 0;
    for (int a = 0; a < r->nalt; a++) gg_rec_add(p, &w.pt, box_x(&w.box, a), box_y(&w.box, a), qi, k);
}

/* A block of cb channels of image n, pixel-major (in[pix cb + c]), and the chunk's grad_output in
 * them, point-major: each tap then reads its channels from one or two cache lines where a
 * plane at a time read one line per tap and channel */
enum { GG_CB = 8 }; /* 8 doubles: a cache line */
typedef struct {
    const double *in, *go;
    double *in_buf, *go_buf; /* NULL: no memory for them */
    int direct;              /* blocks of one channel, read in place */
    double vm[GG_CB];        /* max |plane| (bicubic), else 0 */
    int64_t cb;
} gg_block;

/* channels [c0, c0 + b->cb) of image n into the block (the chunk: npt points from q0) */
static void gg_block_fill(const ref_grid_sampler_params *p, const double *input, const double *grad_output,
                          const double *vmax, int64_t n, int64_t q0, int64_t npt, int64_t c0, gg_block *b)
{
    const int64_t HW = p->H * p->W, P = p->Ho * p->Wo, cb = b->cb;
    const double *in = input + (n * p->C + c0) * HW, *go = grad_output + (n * p->C + c0) * P + q0;
    for (int64_t c = 0; c < cb; c++) b->vm[c] = vmax ? vmax[n * p->C + c0 + c] : 0;
    if (b->direct) { b->in = in; b->go = go; return; } /* one channel */
    b->in = b->in_buf;
    b->go = b->go_buf;
    /* pixel by pixel: a channel at a time walked the whole copy (beyond the cache) cb times */
    for (int64_t k = 0; k < HW; k++)
        for (int64_t c = 0; c < cb; c++) b->in_buf[k * cb + c] = in[c * HW + k];
    for (int64_t k = 0; k < npt; k++)
        for (int64_t c = 0; c < cb; c++) b->go_buf[k * cb + c] = go[c * P + k];
}

/* the block's channels added to every record's sums, in channel order */
static void gg_channels(const ref_grid_sampler_params *p, gg_chunk *k, const gg_block *b, int bounds)
{
    /* spec 7.4: nearest has no grid gradient at all, not a sum of zero slopes */
    const int grads = p->interpolation_mode != 1;
    const int64_t cb = b->cb;
    for (int64_t i = 0; i < k->nrec; i++) {
        const gg_rec *r = &k->rec[i];
        gg_sums *s = &k->sum[i];
        /* the taps of a record a few ahead, whose lines lie anywhere in the block */
        for (int64_t t = 0; i + 4 < k->nrec && t < k->rec[i + 4].ntap; t++)
            __builtin_prefetch(b->in + k->tap[k->rec[i + 4].tap0 + t].pix * cb);
        for (int64_t c = 0; c < cb; c++) {
            const double g = b->go[r->qi * cb + c], ag = fabs(g);
            if (bounds) s->sg += ag * b->vm[c];
            for (const gg_tap *t = &k->tap[r->tap0]; t < &k->tap[r->tap0 + r->ntap]; t++) {
                const double v = b->in[t->pix * cb + c];
                if (grads) {
                    s->gix += v * t->dwx * t->wy * g;
                    s->giy += v * t->wx * t->dwy * g;
                }
                if (!bounds) continue;
                const double va = fabs(v) * ag;
                s->abs_x += va * t->kax;
                s->abs_y += va * t->kay;
                s->pe_x += va * t->kpx;
                s->pe_y += va * t->kpy;
            }
            if (r->reach) s->r += ag * slope_reach(p, &r->rect, b->in + c, cb);
        }
    }
}

/* the grid gradient of a record (spec 7: mult_x * gix, mult_y * giy; nearest: none) */
static void gg_value(const ref_grid_sampler_params *p, const gg_rec *r, const gg_sums *s, double out[2])
{
    out[0] = p->interpolation_mode == 1 ? 0 : r->mult[0] * s->gix;
    out[1] = p->interpolation_mode == 1 ? 0 : r->mult[1] * s->giy;
}

/* grid_grad's bounds of the point of record i (elements e, e + 1), whose value is gg: the position
 * term pe and the ambiguity am per component, with abs_sum and n_terms of the largest branch where
 * ambiguous */
static void grid_grad_bounds(const ref_grid_sampler_params *p, const gg_chunk *k, int64_t i, const double gg[2],
                             int64_t e, const ref_bounds *bg)
{
    const gg_rec *r = &k->rec[i];
    const gg_sums *s = &k->sum[i];
    const double dx = r->pdx, dy = r->pdy, sum_g = s->sg, ax[2] = {fabs(r->mult[0]) * s->abs_x, fabs(r->mult[1]) * s->abs_y};
    /* bilinear: d gix / d iy = sum of +-v g (and likewise), already in pe_x / pe_y through
       |dw_x dw_y| = 1; bicubic adds the remainder of its third derivatives */
    double rem = p->interpolation_mode == 2 ? 2 * CUBIC_K2 * (dx + dy) * (dx + dy) * sum_g : 0;
    /* bicubic: a tap may enter the stencil where the box holds an integer (see CUBIC_KNOT) */
    const double knot_x = p->interpolation_mode == 2 && floor(r->ix - dx) < floor(r->ix + dx) ? CUBIC_KNOT * dx * sum_g : 0;
    const double knot_y = p->interpolation_mode == 2 && floor(r->iy - dy) < floor(r->iy + dy) ? CUBIC_KNOT * dy * sum_g : 0;
    double pe[2] = {fabs(r->mult[0]) * (s->pe_x + rem + knot_x), fabs(r->mult[1]) * (s->pe_y + rem + knot_y)};
    /* caps: anywhere in the box the grid gradient of an axis lies within +-M R, M the largest
       |multiplier| (padding only flips or zeroes it) and R the sum over channels of |g| times the
       most the value slope can be (slope_reach); a change of it is at most M R + |its value|,
       position term and ambiguity together */
    const double mx = p->align_corners ? (double)(p->W - 1) / 2.0 : (double)p->W / 2.0;
    const double my = p->align_corners ? (double)(p->H - 1) / 2.0 : (double)p->H / 2.0;
    const double reach[2] = {isnan(s->r) ? INFINITY : mx * s->r + fabs(gg[0]), isnan(s->r) ? INFINITY : my * s->r + fabs(gg[1])};
    for (int c = 0; c < 2; c++) pe[c] = fmin(pe[c], reach[c]);
    double nt = (double)(p->C * r->ntap) + 1;
    double am[2] = {0, 0}, alt_ax[2] = {0, 0}, alt_nt = 0;
    /* a wide box: any value of its reach (nearest has no grid gradient) */
    for (int c = 0; c < 2 && r->wide && p->interpolation_mode != 1; c++) am[c] = fmax(reach[c] - pe[c], 0);
    for (int64_t a = i + 1; a <= i + r->nalt; a++) {
        const gg_rec *ra = &k->rec[a];
        double ga[2];
        gg_value(p, ra, &k->sum[a], ga);
        const double aa[2] = {fabs(ra->mult[0]) * k->sum[a].abs_x, fabs(ra->mult[1]) * k->sum[a].abs_y};
        for (int c = 0; c < 2; c++) {
            am[c] = fmax(am[c], fmin(fabs(ga[c] - gg[c]) + pe[c], fmax(reach[c] - pe[c], 0)));
            alt_ax[c] = fmax(alt_ax[c], aa[c]);
        }
        alt_nt = fmax(alt_nt, (double)(p->C * ra->ntap) + 1);
    }
    for (int c = 0; c < 2; c++) {
        /* a kernel on another branch rounds that branch's terms: an ambiguous element's
           abs_sum and n_terms are those of the largest branch */
        if (bg->abs_sum) bg->abs_sum[e + c] = am[c] > 0 ? fmax(ax[c], alt_ax[c]) : ax[c];
        if (bg->n_terms) bg->n_terms[e + c] = am[c] > 0 ? fmax(nt, alt_nt) : nt;
        if (bg->pos_err) bg->pos_err[e + c] = pe[c];
        if (bg->ambig) bg->ambig[e + c] = am[c];
    }
}
/* The backward's tensors, for one output row (grid_grad) or one block of channels (input_grad) */
typedef struct {
    const ref_grid_sampler_params *p;
    const double *grad_output, *input, *grid;
    double *input_grad, *grid_grad;
    const ref_bounds *bi, *bg;
    const double *vmax;
    double pre;
    int extras;     /* input_grad's pos_err reaches the taps across a cell edge */
    int64_t cb, nb; /* input_grad: nb blocks of cb channels per image */
    int64_t per_n, len; /* grid_grad: per_n ranges of len points per image */
} bwd_ctx;

/* the chunk's points (the first is q0 of image n) through every channel, a block at a time */
static void grid_grad_chunk(const bwd_ctx *x, gg_chunk *k, gg_block *b, int64_t n, int64_t q0)
{
    const ref_grid_sampler_params *p = x->p;
    const int64_t P = p->Ho * p->Wo, npt = k->rec[k->nrec - 1].qi + 1;
    const int bounds = x->bg != NULL;
    /* the copies where the points are many against the pixels they copy */
    b->direct = !b->in_buf || 4 * npt < p->H * p->W;
    const int64_t cb = b->direct ? 1 : GG_CB;
    memset(k->sum, 0, sizeof(gg_sums) * (size_t)k->nrec);
    for (int64_t c = 0; c < p->C; c += b->cb) {
        b->cb = c + cb < p->C ? cb : p->C - c;
        gg_block_fill(p, x->input, x->grad_output, x->vmax, n, q0, npt, c, b);
        gg_channels(p, k, b, bounds);
    }
    for (int64_t i = 0; i < k->nrec; i += 1 + k->rec[i].nalt) {
        const int64_t e = (n * P + q0 + k->rec[i].qi) * 2;
        gg_value(p, &k->rec[i], &k->sum[i], &x->grid_grad[e]);
        if (bounds) grid_grad_bounds(p, k, i, &x->grid_grad[e], e, x->bg);
    }
}

/* Points [q0, q0 + len) of image n: chunks of them, each taking the channels in blocks */
static void grid_grad_range(void *ctx, int64_t item)
{
    const bwd_ctx *x = ctx;
    const ref_grid_sampler_params *p = x->p;
    const int64_t P = p->Ho * p->Wo, n = item / x->per_n, q0 = item % x->per_n * x->len;
    const int64_t q1 = q0 + x->len < P ? q0 + x->len : P, cap = x->len + 9;
    gg_rec rec1[9]; /* one point and its box points at a time, without the memory for more */
    gg_tap tap1[9 * 16];
    gg_sums sum1[9];
    gg_chunk k = {malloc(sizeof(gg_rec) * (size_t)cap), malloc(sizeof(gg_tap) * (size_t)(4 * cap + 9 * 16)),
                  malloc(sizeof(gg_sums) * (size_t)cap), 0, 0, cap, 4 * cap + 9 * 16};
    const int big = k.rec && k.tap && k.sum;
    if (!big) {
        free(k.rec); free(k.tap); free(k.sum);
        k = (gg_chunk){rec1, tap1, sum1, 0, 0, 9, 9 * 16};
    }
    /* the copies only where a chunk's points are many against the pixels (grid_grad_chunk) */
    const int copies = 4 * (q1 - q0) >= p->H * p->W;
    gg_block b = {.in_buf = copies ? malloc(sizeof(double) * (size_t)(p->H * p->W * GG_CB)) : NULL,
                  .go_buf = copies ? malloc(sizeof(double) * (size_t)(k.cap_rec * GG_CB)) : NULL};
    if (!b.in_buf || !b.go_buf) { free(b.in_buf); free(b.go_buf); b.in_buf = b.go_buf = NULL; }
    for (int64_t c0 = q0, q = q0; c0 < q1; c0 = q) {
        k.nrec = k.ntap = 0;
        for (; q < q1 && gg_chunk_room(&k); q++) gg_point_add(p, x->grid + (n * P + q) * 2, x->pre, x->bg != NULL, q - c0, &k);
        grid_grad_chunk(x, &k, &b, n, c0);
    }
    free(b.in_buf);
    free(b.go_buf);
    if (big) { free(k.rec); free(k.tap); free(k.sum); }
}

static void input_grad_block(void *ctx, int64_t nc)
{
    const bwd_ctx *x = ctx;
    const ref_grid_sampler_params *p = x->p;
    const int64_t P = p->Ho * p->Wo, n = nc / x->nb, c0 = nc % x->nb * x->cb, c1 = c0 + x->cb < p->C ? c0 + x->cb : p->C;
    /* chunks of up to 65536 points (up to 16 MB of records: an image of most cases, so each block
       of channels is copied in and out once); one point at a time without the memory */
    const int64_t CHUNK = P < 65536 ? P + 1 : 65536;
    ig_point pt1;
    ig_tap tap1[16];
    ig_pix extra1[8 * 16], tie1[9];
    ig_chunk k = {malloc(sizeof(ig_point) * CHUNK), malloc(sizeof(ig_tap) * (4 * CHUNK + 16)),
                  malloc(sizeof(ig_pix) * (CHUNK + 8 * 16)), malloc(sizeof(ig_pix) * (CHUNK + 9)),
                  0, 0, 0, 0, CHUNK, 4 * CHUNK + 16, CHUNK + 8 * 16, CHUNK + 9};
    const int big = k.pt && k.tap && k.extra && k.tie;
    if (!big) {
        free(k.pt); free(k.tap); free(k.extra); free(k.tie);
        k = (ig_chunk){&pt1, tap1, extra1, tie1, 0, 0, 0, 0, 1, 16, 8 * 16, 9};
    }
    /* the scratch only where a chunk's points are many against the pixels (input_grad_chunk) */
    const int scratch = 4 * (CHUNK - 1) >= p->H * p->W;
    ig_block b = {{NULL}, 1, 0, scratch ? malloc(sizeof(double) * (size_t)(p->H * p->W * 5 * IG_CB)) : NULL, 1,
                  scratch ? malloc(sizeof(double) * (size_t)(CHUNK * IG_CB)) : NULL};
    if (!b.go) { free(b.buf); b.buf = NULL; }
    for (int64_t q0 = 0, q = 0; q0 < P; q0 = q) {
        k.npt = k.ntap = k.nextra = k.ntie = 0;
        for (; q < P && ig_chunk_room(&k); q++) {
            point_work w;
            point_setup(p, x->grid + (n * P + q) * 2, x->pre, x->bi != NULL, x->extras, &w);
            ig_point_add(p, &w, x->bi != NULL, &k);
        }
        input_grad_chunk(p, &k, x->grad_output, n, q0, c0, c1, x->input_grad, x->bi, &b);
    }
    free(b.buf);
    free(b.go);
    if (big) { free(k.pt); free(k.tap); free(k.extra); free(k.tie); }
}

void f64_grid_sampler_2d_bwd__ref(const ref_grid_sampler_params *p, const double *grad_output,
                                  const double *input, const double *grid, double *input_grad,
                                  double *grid_grad, ref_bounds *bounds)
{
    const int64_t HW = p->H * p->W, P = p->Ho * p->Wo, nin = p->N * p->C * HW, ngr = p->N * P * 2;
    const double pre = bounds ? bounds->pos_rel_err : 0.0;
    ref_bounds *bi = bounds ? &bounds[0] : NULL, *bg = bounds ? &bounds[1] : NULL;
    /* input_grad_block zeroes (or overwrites) its planes when it has points */
    if (!p->output_mask[0] || P == 0) {
        zero(input_grad, nin);
        if (bi) { zero(bi->abs_sum, nin); zero(bi->n_terms, nin); zero(bi->pos_err, nin); zero(bi->ambig, nin); }
    }
    zero(grid_grad, ngr);
    if (bg) { zero(bg->abs_sum, ngr); zero(bg->n_terms, ngr); zero(bg->pos_err, ngr); zero(bg->ambig, ngr); }
    double *vmax = NULL;
    if (bounds && p->interpolation_mode == 2) {
        vmax = malloc(sizeof(double) * (size_t)(p->N * p->C + 1));
        for (int64_t k = 0; vmax && k < p->N * p->C; k++) vmax[k] = plane_max(input + k * HW, HW);
    }
    bwd_ctx x = {p, grad_output, input, grid, input_grad, grid_grad, bi, bg, vmax, pre,
                 bi && bi->pos_err && p->interpolation_mode != 1, 0, 0, 0, 0};
    /* grid_grad: every point writes its own two elements, so ranges of points are independent */
    if (p->output_mask[1]) {
        point_ranges(p, &x.per_n, &x.len);
        ref_parallel_for(p->N * x.per_n, grid_grad_range, &x);
    }
    /* input_grad: blocks of channels of one image, every point in order within a block, so each
       pixel sums its terms in point order whatever thread runs the block */
    if (p->output_mask[0]) {
        x.cb = ref_channel_block(p->N, p->C);
        x.nb = (p->C + x.cb - 1) / x.cb;
        ref_parallel_for(p->N * x.nb, input_grad_block, &x);
    }
    free(vmax);
}

/* ---- the reachable range (range.c) -------------------------------------------------------------- */

void ref_grid_sampler_reach(const ref_grid_sampler_params *p, const double *g, double pos_rel_err, ref_tap_rect *t,
                            int *past_int32)
{
    point pt;
    point_at(p, g, pos_rel_err, &pt);
    reach_rect(p, &pt, t);
    *past_int32 = box_past_int32(&pt);
}
