/* The grid sampler's per-point rules (spec 7.1 to 7.5) and its bound helpers, shared by the fast
 * golden (grid_sampler.c) and the plain one (plain/grid_sampler.c), so the two cannot drift on
 * them: a point's stencils, its rounding box and what the box may change, and one function per
 * bound that combines a point's sums into an element's four ref_bounds entries. Internal to
 * reference/. */
#ifndef CONFORM_GRID_BOUNDS_H
#define CONFORM_GRID_BOUNDS_H

#include "ref_internal.h"

#include <math.h>

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

/* Weight bounds of the cubic convolution (A = -0.75), per axis, maxima over t in [0, 1] (at t =
 * 1/2, found numerically on 2e5 points and checked by hand there): sum |c_k| <= 11/8, sum |c_k'|
 * <= 3; every c_k lies in [-1/9, 1] (cc2's minimum A (x-1)(x-2)^2 at x = 4/3). Bilinear weights: sum
 * 1, slopes sum 2, each in [0, 1]. */
#define CUBIC_ABS_SUM 1.375
#define CUBIC_DABS_SUM 3.0
#define CUBIC_W_SPREAD (10.0 / 9.0)
/* What one pixel may receive per |g| from one point whose box is wide (reflected past 2^23): the
 * taps of an axis may fold onto one pixel in any subset, and a subset of c_k sums to within
 * [c0 + c3, c1 + c2] = [-3/16, 19/16] (c0 + c3 = A t (1 - t), extreme at t = 1/2), so a pixel takes
 * X Y with X, Y in that range: [-57/256, 361/256], a spread of 418/256 (a single product: 10/9).
 * Its terms' magnitude (the twin rounds them): sum_k M_k <= 55 (t = 0 or 1: 13.5 + 1 + 4.5 + 36)
 * on one axis times sum |c_k| <= 11/8 on the other, the cross form of grid_cross. */
#define CUBIC_WIDE_SPREAD (418.0 / 256.0)
#define CUBIC_WIDE_MAG (55.0 * 1.375)
/* The same twin's grid-gradient terms v xg_i yc_j g (and v xc_i yg_j g), per |g| max |v|: their
 * magnitude, grid_cross(D_i, yc_j, M_j, xg_i) summed over the 16 taps, is at most
 * (sum_i D_i sum_j |yc_j| + sum_i |xg_i| sum_j M_j) / 2 <= (54 x 11/8 + 3 x 55) / 2, with sum_i D_i
 * (the derivative polynomials' sum of |term| at t+1, t, 1-t, 2-t: 3.75 (t^2 + (1-t)^2) + 2.25 ((t+1)^2
 * + (2-t)^2) + 39, convex in t) <= 54 at t = 0 or 1 and sum |xg| <= 3 (CUBIC_DABS_SUM). */
#define CUBIC_WIDE_GG_MAG (0.5 * (54.0 * 1.375 + 3.0 * 55.0))

/* the box's corners and edge midpoints, in units of its half-widths */
extern const double grid_shifts[8][2];

/* The stencils of the point at its box's corners and edge midpoints (grid_shifts[a]), per axis at -1, 0
 * and +1 half-widths ([1] the point's own): only the stencils move with the shift, and box point a
 * is grid_box_x(a) by grid_box_y(a) */
typedef struct {
    axis_taps x[3], y[3];
} box_taps;

static inline const axis_taps *grid_box_x(const box_taps *b, int a) { return &b->x[(int)grid_shifts[a][0] + 1]; }
static inline const axis_taps *grid_box_y(const box_taps *b, int a) { return &b->y[(int)grid_shifts[a][1] + 1]; }

/* Magnitude of a product of two weights a b, each evaluated with an error of at most its count of
 * roundings times its magnitude (ma, mb): the error of the product is within
 * k (ma |b| + |a| mb) = 2k cross, and |a b| <= cross, so the tolerance model counts roundings
 * relative to cross = (ma |b| + |a| mb) / 2 (|a b| itself when ma = |a| and mb = |b|). */
static inline double grid_cross(double ma, double b, double mb, double a) { return 0.5 * (ma * fabs(b) + fabs(a) * mb); }

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

/* A point's stencil and what rounding may change about it: the backward's work per point */
typedef struct {
    point pt;
    box_taps box;
    int amb;            /* grid_ambiguity(); box is set when it can be nonzero or extras were asked for */
    int n_tie;          /* nearest's tie: the pixels another rounding may pick */
    int64_t tie_pix[9];
    int crosses;        /* extras: some box point's stencil differs from the point's */
    unsigned vanish;    /* extras: own taps (bit j x.n + i) whose weight is 0 at one position of the
                           box and not at another, the stencil the same (grid_vanishing_taps) */
    int n_extra;        /* pixels a float twin may reach that the point does not: the largest weight */
    int64_t extra_idx[8 * 16];  /* there, the largest sum of magnitudes (grid_cross) and count of */
    double extra_w[8 * 16], extra_m[8 * 16], extra_n[8 * 16]; /* the twin's terms on it */
    /* per own tap (y j, x i at [j x.n + i]): its abs_sum term per |g|, the largest magnitude the
       point or a box point whose stencil differs gives that pixel (a twin on the other branch
       evaluates other polynomials there, bicubic's of up to 36 near an integer) */
    double tap_cr[16];
} point_work;

/* ---- a point and its box ---------------------------------------------------------------------- */

/* the stencils of grid value g = (x, y), its rounding box for unit roundoff pos_rel_err and what
 * the box reaches after padding */
void grid_point_at(const ref_grid_sampler_params *p, const double *g, double pos_rel_err, point *pt);
/* the point at its box's corners and edge midpoints (what grid_ambiguity compares it with) */
void grid_box_points(const ref_grid_sampler_params *p, const double *g, const point *pt, box_taps *b);
/* bit 0: the values (output, input_grad) may jump within the box; bit 1: the grid gradient may */
int grid_ambiguity(const ref_grid_sampler_params *p, const point *c, const box_taps *b);
/* same pixels (with_mult: and the same coordinate multiplier) */
int grid_same_taps(const axis_taps *a, const axis_taps *b, int with_mult);
/* the point, its box points where the bounds read them, its ambiguity, nearest's ties and (extras)
 * the taps a float twin may reach beyond its own */
void grid_point_setup(const ref_grid_sampler_params *p, const double *g, double pre, int with_bounds, int extras,
                      point_work *w);
/* nearest: the in-bounds pixels the point and its box points pick, 0 when they all pick one */
int grid_nearest_choices(const ref_grid_sampler_params *p, const point *pt, const box_taps *b, int64_t pix[9]);

/* ---- a point in one plane -------------------------------------------------------------------- */

/* the taps the point's box reaches, the same rectangle in every plane */
void grid_reach_rect(const ref_grid_sampler_params *p, const point *pt, ref_tap_rect *t);
/* the most the position can move a sampled value v of the plane */
double grid_value_reach(const ref_grid_sampler_params *p, int past_int32, const ref_tap_rect *reach,
                        const double *plane, double v);
/* Whether the box holds an integer coordinate on an axis (and is not a point): there a bilinear or
 * bicubic tap's weight is exactly 0 at one legal position and not at the next, so a non-finite
 * value the tap reads (a pixel, or g scattered) makes NaN (0 x inf) at one and not at the other:
 * the element's finiteness is ambiguous, and so is its value */
int grid_box_holds_int(const point *pt);
/* Whether tap (y j, x i)'s bicubic weight product may take the other sign, or 0, in a legal
 * float32 evaluation (unit roundoff u) at a position in the box: an infinite value there makes the
 * element +inf, -inf or NaN by rounding alone (ops.md 10), and the element is unbounded */
int grid_tap_sign_free(const ref_grid_sampler_params *p, const point *pt, double u, int j, int i);
/* whether the box reaches beyond the int32 range of an unpadded coordinate */
int grid_box_past_int32(const point *pt);
/* the most a value slope can be anywhere in the box, per |g| (pixel (r, c) at plane[(r W + c) cs]) */
double grid_slope_reach(const ref_grid_sampler_params *p, const ref_tap_rect *reach, const double *plane, int64_t cs);
/* sum over the stencil of w_y * w_x * plane value, and its sum of |term| */
double grid_sample(const axis_taps *x, const axis_taps *y, const double *plane, int64_t W);
double grid_sample_abs_sum(const axis_taps *x, const axis_taps *y, const double *plane, int64_t W);
double grid_plane_max(const double *plane, int64_t n);
/* largest |neighbour difference| (out of bounds 0) in the 4x4 window of cell (y0, x0), along y and x */
void grid_slopes(const double *plane, int64_t H, int64_t W, int64_t y0, int64_t x0, double *sy, double *sx);
void grid_zero(double *t, int64_t n);

/* ---- the forward's bounds --------------------------------------------------------------------- */

/* what the forward's bounds of a point read, the same in every plane */
typedef struct {
    int64_t ntap;
    int amb, wide, slope;  /* slope: bilinear with a tap on some axis: the 4x4 slopes bound it */
    int zero_w;            /* grid_box_holds_int: a tap's weight is 0 at one position in the box */
    int past_int32;        /* grid_box_past_int32 */
    int64_t ybase, xbase;  /* bilinear: the cell */
    double pdy, pdx;       /* bilinear: the box half-widths the value sees */
    double k2;             /* bicubic: its second-order term per max |v| of the plane */
    ref_tap_rect rect;     /* the taps its box reaches (with bounds) */
} grid_fwd_geo;

/* point g: its stencils (pt) and geometry (r); alt, its box points, is set where the bounds read
 * them (nearest, a wide box); returns whether r reads alt (ambiguous or wide) */
int grid_fwd_geo_of(const ref_grid_sampler_params *p, const double *g, double pre, int bounds, point *pt,
                    box_taps *alt, grid_fwd_geo *r);
/* tap (y j, x i): its abs_sum term per |v| (the weights at their evaluation magnitudes), and its
 * first-order position term per |v| (bicubic) */
static inline double grid_tap_cross(const point *pt, int j, int i)
{
    return grid_cross(pt->y.m[j], pt->x.w[i], pt->x.m[i], pt->y.w[j]);
}
static inline double grid_tap_kp(const point *pt, int j, int i)
{
    return fabs(pt->x.dw[i] * pt->y.w[j]) * pt->dx + fabs(pt->x.w[i] * pt->y.dw[j]) * pt->dy;
}
/* The bounds of output element e, value sampled from plane with that abs_sum; pe_taps: the sum
 * over the taps (in stencil order) of |v| grid_tap_kp; sy, sx: grid_slopes at the cell (read where
 * r->slope); vmax: max |plane| (bicubic); alt: the box points (where grid_fwd_geo_of set them) */
void grid_forward_bounds(const ref_grid_sampler_params *p, const grid_fwd_geo *r, const box_taps *alt,
                         const double *plane, double pe_taps, double sy, double sx, double vmax, double value,
                         double abs_sum, int64_t e, ref_bounds *bounds);

/* ---- input_grad's bounds --------------------------------------------------------------------- */

/* tap (y j, x i)'s position error per |g|: the change of its weight product within the box, capped
 * by the product's spread */
double grid_tap_fm(const ref_grid_sampler_params *p, const point *pt, int j, int i);
/* nearest's tie pixel: whether it also counts as a term (a gained sample, not the point's own tap) */
int grid_tie_counts(const ref_grid_sampler_params *p, const point *pt, int64_t pix);
/* a wide box: the rows [*r0, *r1] and columns [*c0, *c1] of pixels it reaches */
void grid_wide_rect(const ref_grid_sampler_params *p, const point *pt, int64_t *r0, int64_t *r1, int64_t *c0,
                    int64_t *c1);
/* the weight product's spread, bilinear or bicubic: a wide box may move a tap's weight that far */
double grid_w_spread(const ref_grid_sampler_params *p);
/* a wide box: what a pixel it reaches may gain or lose of one point per |g| (ambig), the magnitude
 * of the terms it may gain (abs_sum) and their count (n_terms) */
typedef struct {
    double spread, mag, nt;
    double gg_mag; /* the twin's grid-gradient terms' magnitude per axis, per |g| max |v| of the reach */
} grid_wide_gain;
grid_wide_gain grid_wide_gain_of(const ref_grid_sampler_params *p);

/* A NaN ambiguity of input_grad is a NaN g in a wide box's or a tie's terms (or in the + INFINITY of
 * a crossing box): its element is unbounded, INFINITY (the judge reads NaN as none) */
void grid_ambig_unbounded(double *ambig, int64_t n);

/* ---- grid_grad's bounds ---------------------------------------------------------------------- */

/* one tap of a stencil: its grid-gradient terms v dw_x w_y g (x), v w_x dw_y g (y), and per |v g|
 * its abs_sum terms at the weights' evaluation magnitudes and its position terms */
typedef struct {
    int64_t pix;               /* y W + x */
    double dwx, wy, wx, dwy;
    double kax, kay, kpx, kpy;
} gg_tap;
void grid_gg_tap(const axis_taps *x, int i, const axis_taps *y, int j, double dx, double dy, int64_t W, gg_tap *t);

/* a point, or one of its box points (the nalt records after it) */
typedef struct {
    int64_t tap0, ntap, qi;    /* its taps; qi: its point's index in a chunk (the fast golden's) */
    int reach, amb, wide, nalt;/* reach: a point with bounds, which sums |g| slope_reach over rect */
    double mult[2];            /* the coordinate multipliers (x, y) */
    double ix, iy, pdx, pdy;   /* a point: its coordinates and the half-widths its values see */
    ref_tap_rect rect;
} gg_rec;

/* the record of the stencil x by y of point w, or of one of its box points (box): its multipliers
 * and tap count, and for the point itself what its bounds read (nalt: 8 where its grid gradient is
 * ambiguous); tap0 and qi are left 0 */
void grid_gg_rec_of(const ref_grid_sampler_params *p, const point_work *w, const axis_taps *x, const axis_taps *y,
                    int box, int bounds, gg_rec *r);

/* a record's running sums over the channels */
typedef struct {
    double gix, giy;           /* the grid gradient before the multipliers */
    double abs_x, abs_y;       /* its sums of |term| (before |mult|) */
    double pe_x, pe_y, sg;     /* position terms; sg = sum |g| max|plane| (bicubic) */
    double r;                  /* sum |g| slope_reach */
    double vw;                 /* a wide box: sum |g| max |v| of the taps it reaches */
} gg_sums;

/* one channel's reach terms of a point's record r (r->reach), with |g| = ag and the plane's pixel
 * (y, x) at plane[(y W + x) cs]: s->r += ag slope_reach, and for a wide box s->vw += ag max |v| */
void grid_gg_reach_add(const ref_grid_sampler_params *p, const gg_rec *r, const double *plane, int64_t cs, double ag,
                       gg_sums *s);
/* the grid gradient of a record (spec 7: mult_x * gix, mult_y * giy; nearest: none) */
void grid_gg_value(const ref_grid_sampler_params *p, const gg_rec *r, const gg_sums *s, double out[2]);
/* grid_grad's bounds of the point of record r[0] with sums s[0] (its box points r[1 .. r->nalt]),
 * elements e, e + 1, whose value is gg */
void grid_grad_bounds(const ref_grid_sampler_params *p, const gg_rec *r, const gg_sums *s, const double gg[2],
                      int64_t e, const ref_bounds *bg);

#endif
