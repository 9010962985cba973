/* grid_sampler_2d forward and backward (spec 7) in double: the fast golden.
 *
 * Every sample point is reduced to a separable stencil (grid_bounds.c: in-bounds taps along x
 * times in-bounds taps along y, plus the coordinate multipliers of section 7.1, and the bound
 * helpers). This file runs them over the tensors fast: chunks of points set up once, planes
 * swept in row order, pixel-major blocks of channels, threads. reference/plain/grid_sampler.c is
 * the same computation as the spec's straight loops; make check-golden holds the two bitwise
 * equal, values and bounds. */
#include "grid_bounds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    int sign_free;   /* grid_tap_sign_free: an infinite value here makes the element unbounded */
} fwd_tap;

typedef struct {
    grid_fwd_geo geo;      /* what its bounds read */
    int64_t tap0;
    int64_t q;             /* the point's index in its chunk */
    int64_t alt0;          /* -1, or its box points' stencils (set when ambiguous or wide) */
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
    fwd_point *r = &k->pt[k->npt++];
    *r = (fwd_point){.tap0 = k->ntap, .q = k->npt - 1, .alt0 = -1};
    if (grid_fwd_geo_of(p, g, pre, bounds, &pt, &k->alt[k->nalt], &r->geo)) r->alt0 = k->nalt++;
    for (int j = 0; j < pt.y.n; j++)
        for (int i = 0; i < pt.x.n; i++) {
            fwd_tap *t = &k->tap[k->ntap++];
            t->pix = pt.y.idx[j] * p->W + pt.x.idx[i];
            t->w = pt.y.w[j] * pt.x.w[i];
            t->cr = grid_tap_cross(&pt, j, i);
            t->kp = grid_tap_kp(&pt, j, i);
            t->sign_free = bounds && grid_tap_sign_free(p, &pt, pre, j, i);
        }
}

/* tap t's term of abs_sum at plane value x: its weights at their evaluation magnitudes */
static double tap_abs(const fwd_tap *t, double x) { return t->cr * fabs(x); }

/* Record r in a plane: the sum over the stencil of w_y * w_x * plane value (grid_sample() on a record),
 * and beside it the abs_sum of its bounds, in one walk over the taps (each tap read once) */
static double fwd_sample(const fwd_chunk *k, const fwd_point *r, const double *plane, double *abs_sum)
{
    double v = 0, a = 0;
    for (const fwd_tap *t = k->tap + r->tap0, *end = t + r->geo.ntap; t < end; t++) {
        const double x = plane[t->pix];
        v += t->w * x;
        a += tap_abs(t, x);
    }
    *abs_sum = a;
    return v;
}

/* The bilinear slopes of one plane (grid_slopes()) at every cell (y0, x0) of [-2, H] x [-2, W], found
 * once per plane for a chunk's points; beyond that range the 4x4 window lies off the plane: 0.
 * Each is the largest of some neighbour differences (NaN ones passed over), found here as a
 * largest over columns, then over rows: a largest does not depend on the order it is taken in, so
 * the numbers are grid_slopes()'s. */
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
    grid_zero(m->rows, 3 * W3); /* rows -3 .. -1 and H .. H + 2 hold no differences */
    grid_zero(m->rows + (H + 3) * W3, 3 * W3);
    for (int64_t c = -3; c < W + 3; c++) d[c] = 0;
    for (int64_t r = -1; r < H; r++) {
        const double *up = r >= 0 ? plane + r * W : zeros, *dn = r + 1 < H ? plane + (r + 1) * W : zeros;
#pragma omp simd
        for (int64_t c = 0; c < W; c++) d[c] = max_nan0(0, fabs(dn[c] - up[c]));
        window_row(m, r, 4);
    }
    window_cols(m, 3, m->sy);
    /* sx: |v(r, c + 1) - v(r, c)| for columns c in [-1, W - 1] at 3 columns, then 4 rows */
    grid_zero(m->rows + 2 * W3, W3); /* row -1 */
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

/* grid_slopes() of the plane at cell (y0, x0): from the map when there is one */
static void plane_slopes(const slope_map *m, const double *plane, int64_t H, int64_t W, int64_t y0, int64_t x0,
                         double *sy, double *sx)
{
    if (!m->sy) {
        grid_slopes(plane, H, W, y0, x0, sy, sx);
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
 * that abs_sum (grid_forward_bounds, with the plane's slopes from the map) */
static void forward_bounds(const ref_grid_sampler_params *p, const fwd_chunk *k, const fwd_point *r,
                           const fwd_plane *pl, const double *plane, double value, double abs_sum, int64_t e,
                           ref_bounds *bounds)
{
    double pe_taps = 0, sy = 0, sx = 0;
    int unbounded = 0;
    for (int64_t t = r->tap0; p->interpolation_mode == 2 && t < r->tap0 + r->geo.ntap; t++) {
        pe_taps += fabs(plane[k->tap[t].pix]) * k->tap[t].kp;
        unbounded |= k->tap[t].sign_free && isinf(plane[k->tap[t].pix]);
    }
    if (r->geo.slope) plane_slopes(&pl->map, plane, p->H, p->W, r->geo.ybase, r->geo.xbase, &sy, &sx);
    grid_forward_bounds(p, &r->geo, r->alt0 >= 0 ? &k->alt[r->alt0] : NULL, plane, pe_taps, sy, sx, pl->vmax, value,
                        abs_sum, e, bounds);
    if (unbounded && bounds->ambig) bounds->ambig[e] = INFINITY;
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
        if (f->bounds && p->interpolation_mode == 2) pl->vmax = grid_plane_max(plane, HW);
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
    return r->geo.ntap ? k->tap[r->tap0].pix / W + 1 : 0; /* in [0, H] */
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
        memcpy(&s->tap[nt], &k->tap[r->tap0], sizeof(fwd_tap) * (size_t)r->geo.ntap);
        r->tap0 = nt;
        nt += r->geo.ntap;
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
    int vanish;      /* its weight vanishes within the box (grid_vanishing_taps) */
} ig_tap;

typedef struct {
    int64_t pix;
    double w;        /* extras: the largest weight; ties: 1 when it also counts as a term */
    double m, n;     /* extras: the twin's terms there, their magnitude and count */
} ig_pix;

typedef struct {
    int64_t tap0, extra0, tie0;
    int ntap, nextra, ntie, wide, crosses;
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
    ig_point *r = &k->pt[k->npt++];
    *r = (ig_point){.tap0 = k->ntap, .extra0 = k->nextra, .tie0 = k->ntie};
    for (int j = 0; j < pt->y.n; j++)
        for (int i = 0; i < pt->x.n; i++) {
            ig_tap *t = &k->tap[k->ntap++];
            t->pix = pt->y.idx[j] * p->W + pt->x.idx[i];
            t->wy = pt->y.w[j];
            t->wx = pt->x.w[i];
            t->cr = w->tap_cr[j * pt->x.n + i];
            t->fm = grid_tap_fm(p, pt, j, i);
            t->vanish = (int)(w->vanish >> (j * pt->x.n + i) & 1);
        }
    r->ntap = (int)(k->ntap - r->tap0);
    if (!bounds) return;
    for (int e = 0; e < w->n_extra; e++)
        k->extra[k->nextra++] = (ig_pix){w->extra_idx[e], w->extra_w[e], w->extra_m[e], w->extra_n[e]};
    r->nextra = w->n_extra;
    for (int e = 0; e < w->n_tie; e++)
        k->tie[k->ntie++] = (ig_pix){w->tie_pix[e], grid_tie_counts(p, pt, w->tie_pix[e]) ? 1.0 : 0.0, 0, 0};
    r->ntie = w->n_tie;
    r->wide = pt->wide;
    r->crosses = w->crosses;
    if (pt->wide) grid_wide_rect(p, pt, &r->r0, &r->r1, &r->c0, &r->c1);
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
    const grid_wide_gain wg = grid_wide_gain_of(p);
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
            if (isfinite(go[c])) {
                b->f[3][e->pix * ps + c] += fabs(go[c]) * e->w;
                if (b->f[1]) b->f[1][e->pix * ps + c] += fabs(go[c]) * e->m;
                if (b->f[2]) b->f[2][e->pix * ps + c] += e->n;
            }
    if (!b->f[4]) return;
    /* a wide box: every pixel it reaches may gain or lose the point's taps, and rounds those it gains */
    for (int64_t y = r->r0; r->wide && y <= r->r1; y++)
        for (int64_t x = r->c0; x <= r->c1; x++)
            for (int64_t c = 0; c < cb; c++) {
                const int64_t f = (y * p->W + x) * ps + c;
                b->f[4][f] += fabs(go[c]) * wg.spread;
                if (b->f[1]) b->f[1][f] += fabs(go[c]) * wg.mag;
                if (b->f[2]) b->f[2][f] += wg.nt;
            }
    /* a tie of nearest: the pixel another rounding picks may get g instead (each pixel reachable
       within the box gains or loses g once, at most); a gained sample is summed in with the others */
    for (const ig_pix *tie = &k->tie[r->tie0]; tie < &k->tie[r->tie0 + r->ntie]; tie++)
        for (int64_t c = 0; c < cb; c++) {
            b->f[4][tie->pix * ps + c] += fabs(go[c]);
            if (tie->w == 0) continue;
            if (b->f[1]) b->f[1][tie->pix * ps + c] += fabs(go[c]);
            if (b->f[2]) b->f[2][tie->pix * ps + c] += 1;
        }
    /* an infinite g on a tap whose weight vanishes within the box: any value there */
    for (const ig_tap *tp = &k->tap[r->tap0]; tp < &k->tap[r->tap0 + r->ntap]; tp++)
        for (int64_t c = 0; tp->vanish && c < cb; c++)
            if (isinf(go[c])) b->f[4][tp->pix * ps + c] += INFINITY;
    /* a non-finite g where the box crosses a cell edge: any value at its taps and the twin's */
    for (int64_t c = 0; r->crosses && c < cb; c++) {
        if (isfinite(go[c])) continue;
        for (const ig_tap *tp = &k->tap[r->tap0]; tp < &k->tap[r->tap0 + r->ntap]; tp++) b->f[4][tp->pix * ps + c] += INFINITY;
        for (const ig_pix *e = &k->extra[r->extra0]; e < &k->extra[r->extra0 + r->nextra]; e++)
            b->f[4][e->pix * ps + c] += INFINITY;
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
            if (how == IG_FRESH) grid_zero(planes, cb * HW);
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
    gg_rec *rec;
    gg_tap *tap;
    gg_sums *sum;
    int64_t nrec, ntap, cap_rec, cap_tap;
} gg_chunk;

static int gg_chunk_room(const gg_chunk *k) { return k->nrec + 9 <= k->cap_rec && k->ntap + 9 * 16 <= k->cap_tap; }

/* appends the record of the stencil x by y of point w (box: a box point; qi: its index in the chunk) */
static void gg_rec_add(const ref_grid_sampler_params *p, const point_work *w, const axis_taps *x, const axis_taps *y,
                       int box, int bounds, int64_t qi, gg_chunk *k)
{
    gg_rec *r = &k->rec[k->nrec++];
    grid_gg_rec_of(p, w, x, y, box, bounds, r);
    r->tap0 = k->ntap;
    r->qi = qi;
    for (int j = 0; j < y->n; j++)
        for (int i = 0; i < x->n; i++) grid_gg_tap(x, i, y, j, w->pt.pdx, w->pt.pdy, p->W, &k->tap[k->ntap++]);
}

/* appends point g's record (index qi in the chunk), and its box points' where its grid gradient is
   ambiguous */
static void gg_point_add(const ref_grid_sampler_params *p, const double *g, double pre, int bounds, int64_t qi,
                         gg_chunk *k)
{
    point_work w;
    grid_point_setup(p, g, pre, bounds, 0, &w);
    gg_rec_add(p, &w, &w.pt.x, &w.pt.y, 0, bounds, qi, k);
    const int nalt = k->rec[k->nrec - 1].nalt;
    for (int a = 0; a < nalt; a++) gg_rec_add(p, &w, grid_box_x(&w.box, a), grid_box_y(&w.box, a), 1, bounds, qi, k);
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
            if (r->reach) grid_gg_reach_add(p, r, b->in + c, cb, ag, s);
        }
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
        grid_gg_value(p, &k->rec[i], &k->sum[i], &x->grid_grad[e]);
        if (bounds) grid_grad_bounds(p, &k->rec[i], &k->sum[i], &x->grid_grad[e], e, x->bg);
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
            grid_point_setup(p, x->grid + (n * P + q) * 2, x->pre, x->bi != NULL, x->extras, &w);
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
        grid_zero(input_grad, nin);
        if (bi) { grid_zero(bi->abs_sum, nin); grid_zero(bi->n_terms, nin); grid_zero(bi->pos_err, nin); grid_zero(bi->ambig, nin); }
    }
    grid_zero(grid_grad, ngr);
    if (bg) { grid_zero(bg->abs_sum, ngr); grid_zero(bg->n_terms, ngr); grid_zero(bg->pos_err, ngr); grid_zero(bg->ambig, ngr); }
    double *vmax = NULL;
    if (bounds && p->interpolation_mode == 2) {
        vmax = malloc(sizeof(double) * (size_t)(p->N * p->C + 1));
        for (int64_t k = 0; vmax && k < p->N * p->C; k++) vmax[k] = grid_plane_max(input + k * HW, HW);
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
        if (bi) grid_ambig_unbounded(bi->ambig, nin);
    }
    free(vmax);
}

/* ---- the reachable range (range.c) -------------------------------------------------------------- */

void ref_grid_sampler_reach(const ref_grid_sampler_params *p, const double *g, double pos_rel_err, ref_tap_rect *t,
                            int *past_int32)
{
    point pt;
    grid_point_at(p, g, pos_rel_err, &pt);
    grid_reach_rect(p, &pt, t);
    *past_int32 = grid_box_past_int32(&pt);
}
