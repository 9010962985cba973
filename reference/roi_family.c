/* The RoIAlign family's bins (roi_align, roi_align_rotated): rule-A samples summed per bin, forward
 * and backward, with their bounds. An op gives its roi geometry and the samples of a bin in the
 * spec's order (ref_roi_op). What no channel changes (each sample's corners, weights, position
 * errors and reach) is set up once for a chunk of a roi's bins, then run over every channel plane:
 * every element still sums the same terms in the spec's order, so the numbers are bitwise those of
 * the plain golden's sample-by-sample loops (reference/plain/roi_family.c), for every thread count:
 * make check-golden compares them. The bounds' long arithmetic is the shared roi_bounds.h. */
#include "roi_bounds.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int64_t ref_adaptive_count(double q)
{
    if (!isfinite(q)) return 0;
    if (q > 1e9) return 1000000000; /* the harness refuses such rois before they get here */
    if (q < -1e9) return -1000000000; /* a negative count samples nothing; keep the cast defined */
    return (int64_t)ceil(q);
}

double ref_sample_count(int64_t gh, int64_t gw)
{
    double c = (double)gh * (double)gw;
    return c > 1.0 ? c : 1.0;
}

/* ---- set-up chunks: a growing array, and the bins of a chunk ------------------------------------ */

enum { CHUNK_TAPS = 4096 }; /* samples a chunk sets up before its bins run: its set-up stays in cache */

typedef struct {
    char *p;
    size_t n, cap, size;
    int failed; /* out of memory: the op's outputs become NaN */
} vec;

static void *vec_push(vec *v)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 256;
        char *p = v->failed ? NULL : realloc(v->p, cap * v->size);
        if (!p) { v->failed = 1; return NULL; }
        v->p = p;
        v->cap = cap;
    }
    return v->p + v->size * v->n++;
}

/* bin (ph, pw)'s samples in the chunk: taps [first, end); inf_ambig: its ambiguity is unbounded */
typedef struct {
    int64_t ph, pw;
    size_t first, end;
    int inf_ambig;
} bin_span;

typedef struct {
    const ref_roi_op *op;
    const char *geo; /* K geometries of op->geo_size bytes */
    const double *in; /* features (forward) or grad_output (backward) */
    double *out;
    ref_bounds *bounds;
    double pre;
    int64_t cb, nblk; /* channels per item, items per roi (forward) or image (backward) */
    atomic_int failed;
} roi_ctx;

static const ref_roi_head *geometry_at(const roi_ctx *x, int64_t k)
{
    return (const ref_roi_head *)(x->geo + (size_t)k * x->op->geo_size);
}

/* Every roi's geometry, then body over N x (blocks of channels) items (N: rois or images); NaN
 * outputs when memory ran out. */
static void roi_run(const ref_roi_op *op, const double *in, const double *rois, double *out, int64_t n_out,
                    ref_bounds *bounds, int64_t N, ref_item_fn body)
{
    const int64_t cb = ref_channel_block(N, op->C), nblk = (op->C + cb - 1) / cb;
    roi_ctx x = {op, NULL, in, out, bounds, bounds ? bounds->pos_rel_err : 0.0, cb, nblk, 0};
    char *geo = malloc(op->geo_size * (size_t)(op->K > 0 ? op->K : 1));
    if (geo) {
        for (int64_t k = 0; k < op->K; k++) op->geometry(op->op, rois + op->roi_len * k, x.pre, geo + (size_t)k * op->geo_size);
        x.geo = geo;
        ref_parallel_for(N * nblk, body, &x);
    }
    if (!geo || atomic_load(&x.failed)) /* out of memory: a reference that cannot run says so loudly */
        for (int64_t i = 0; i < n_out; i++) out[i] = NAN;
    free(geo);
}

/* ---- forward: what one sample adds to one plane's bin ------------------------------------------- */

/* Adds sample s of one plane (pixel (r, c) at plane[(r W + c) cs]) to a: rule A's value (spec A) and,
 * through the shared bound helper, its bounds */
static void fwd_tap_add(const double *plane, int64_t H, int64_t W, int64_t cs, const ref_fwd_tap *s, ref_bin_acc *a)
{
    const ref_bilinear *r = &s->r;
    double v = 0, av = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            double t = r->wy[i] * r->wx[j] * plane[(r->y[i] * W + r->x[j]) * cs];
            v += t;
            av += fabs(t);
        }
    ref_roi_fwd_sample_add(plane, H, W, cs, s, v, av, a);
}

/* ---- forward: a chunk's samples over LANES channels at a time ------------------------------------ */

/* Channels taken at a time: lane l runs channel c + l through fwd_tap_add's steps, in its order */
enum { LANES = 8 };

/* A sample as the lanes read it: its 4x4 window, rows y0 - 1 .. y0 + 2 and columns x0 - 1 .. x0 + 2
 * clamped onto the plane (a repeated edge row or column adds differences of 0, which no slope
 * exceeds: ref_local_slopes' window), corner (i, j) at (1 + i, 1 + j) */
typedef struct {
    int64_t row[4], col[4]; /* rows and columns; once its chunk is set up, offsets: cell (a, b) at
                               row[a] + col[b] of the plane or of the chunk's tile */
    double w[4];            /* corner weights wy[i] wx[j] */
    double dy, dx;
    ref_tap_rect reach, read, core; /* switched: read holds taps outside core (ref_fwd_tap) */
    unsigned reach_bits; /* the reach rectangle's cells 4 a + b of the window; 0: it is not within */
    int inside, ambiguous, far, switched;
    int full; /* the window lies in the plane: no edge repeated */
} fwd_ltap;

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static void fwd_ltap_of(int64_t H, int64_t W, const ref_fwd_tap *s, fwd_ltap *d)
{
    const ref_bilinear *r = &s->r;
    const ref_tap_rect *t = &s->reach;
    for (int a = 0; a < 4; a++) {
        d->row[a] = clamp64(r->y[0] - 1 + a, 0, H - 1);
        d->col[a] = clamp64(r->x[0] - 1 + a, 0, W - 1);
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) d->w[2 * i + j] = r->wy[i] * r->wx[j];
    d->dy = s->dy;
    d->dx = s->dx;
    d->reach = *t;
    d->read = s->read;
    d->core = s->core;
    d->switched = s->switched;
    d->inside = s->inside;
    d->ambiguous = s->ambiguous;
    d->far = s->far;
    d->reach_bits = 0;
    d->full = d->row[3] - d->row[0] == 3 && d->col[3] - d->col[0] == 3;
    /* the reach's rows and columns ascending are its window cells' ascending: the same order */
    if (!t->zero && t->r0 <= t->r1 && t->c0 <= t->c1 && t->r0 >= r->y[0] - 1 && t->r1 <= r->y[0] + 2 &&
        t->c0 >= r->x[0] - 1 && t->c1 <= r->x[0] + 2)
        for (int64_t y = t->r0; y <= t->r1; y++)
            for (int64_t x = t->c0; x <= t->c1; x++) d->reach_bits |= 1u << (4 * (y - r->y[0] + 1) + x - r->x[0] + 1);
}

/* the range [lo, hi] of the reach's taps per lane: ref_tap_rect_range's (a NaN tap makes both NaN,
 * whatever its place) */
static void fwd_lanes_range(const double *const pl[LANES], int64_t W, int64_t cs, const fwd_ltap *s,
                            const double *const v[16], double lo[LANES], double hi[LANES])
{
    if (!s->reach_bits) {
        for (int l = 0; l < LANES; l++) ref_tap_rect_range(pl[l], W, cs, &s->reach, &lo[l], &hi[l]);
        return;
    }
    double mn[LANES], mx[LANES], nan[LANES];
    for (int l = 0; l < LANES; l++) { mn[l] = INFINITY; mx[l] = -INFINITY; nan[l] = 0; }
    for (unsigned bits = s->reach_bits; bits; bits &= bits - 1) {
        const double *u = v[__builtin_ctz(bits)];
        for (int l = 0; l < LANES; l++) {
            mn[l] = u[l] < mn[l] ? u[l] : mn[l];
            mx[l] = u[l] > mx[l] ? u[l] : mx[l];
            nan[l] = isnan(u[l]) ? 1.0 : nan[l];
        }
    }
    for (int l = 0; l < LANES; l++) {
        lo[l] = nan[l] != 0 ? NAN : mn[l]; /* nothing bounds a NaN tap: no cap */
        hi[l] = nan[l] != 0 ? NAN : mx[l];
    }
}

/* the lanes' sums of one bin: a ref_bin_acc a lane */
typedef struct {
    double sum[LANES], abs_sum[LANES], n_terms[LANES], pos_err[LANES], ambig[LANES];
} lanes_acc;

static ref_bin_acc lane_get(const lanes_acc *a, int l)
{
    return (ref_bin_acc){a->sum[l], a->abs_sum[l], a->n_terms[l], a->pos_err[l], a->ambig[l]};
}

static void lane_put(lanes_acc *a, int l, ref_bin_acc b)
{
    a->sum[l] = b.sum;
    a->abs_sum[l] = b.abs_sum;
    a->n_terms[l] = b.n_terms;
    a->pos_err[l] = b.pos_err;
    a->ambig[l] = b.ambig;
}

/* fwd_acc of every lane; an inside sample far from the window's edges (most) without its branches */
static void fwd_lanes_acc(const fwd_ltap *s, const double val[LANES], const double av[LANES], const double sy[LANES],
                          const double sx[LANES], const double lo[LANES], const double hi[LANES], lanes_acc *a)
{
    if (!s->inside || s->ambiguous) {
        for (int l = 0; l < LANES; l++) {
            ref_bin_acc b = lane_get(a, l);
            ref_roi_fwd_acc(s->inside, s->ambiguous, s->far, s->dy, s->dx, val[l], av[l], sy[l], sx[l], lo[l], hi[l],
                            &b);
            lane_put(a, l, b);
        }
        return;
    }
    for (int l = 0; l < LANES; l++) {
        a->sum[l] += val[l];
        a->abs_sum[l] += av[l];
        a->n_terms[l] += 4;
        a->pos_err[l] += ref_roi_fwd_pos_term(s->far, sy[l], sx[l], s->dy, s->dx, lo[l], hi[l]);
    }
}

/* What the lanes read: their planes (row length W, pixel stride cs) or their chunk's tile, and the
 * slopes of the tile's full windows (NULL: none) */
typedef struct {
    const double *pl[LANES];
    const double *tile, *sy, *sx;
    int64_t W, cs;
} lanes_src;

/* Adds sample s of the lanes to their bins a (pos: with slopes and ranges) */
static void fwd_lanes_add(const lanes_src *src, const fwd_ltap *s, int pos, lanes_acc *a)
{
    const double *const *pl = src->pl, *tile = src->tile;
    double buf[16][LANES], val[LANES], av[LANES], sy[LANES], sx[LANES], lo[LANES], hi[LANES];
    const double *v[16]; /* cell k of the window, lane by lane */
    for (int k = 0; k < 16; k++) {
        const int64_t o = s->row[k / 4] + s->col[k % 4];
        if (tile) {
            v[k] = tile + o * LANES;
            continue;
        }
        for (int l = 0; l < LANES; l++) buf[k][l] = pl[l][o];
        v[k] = buf[k];
    }
    static const int corner[4] = {5, 6, 9, 10};
    for (int l = 0; l < LANES; l++) val[l] = av[l] = sy[l] = sx[l] = lo[l] = hi[l] = 0;
    for (int k = 0; k < 4; k++)
        for (int l = 0; l < LANES; l++) {
            double t = s->w[k] * v[corner[k]][l];
            val[l] += t;
            av[l] += fabs(t);
        }
    if (pos && src->sy && s->full) {
        const int64_t o = (s->row[0] + s->col[0]) * LANES;
        memcpy(sy, src->sy + o, sizeof sy);
        memcpy(sx, src->sx + o, sizeof sx);
    } else if (pos)
        ref_window_slopes(v, LANES, sy, sx);
    if (pos) fwd_lanes_range(pl, src->W, src->cs, s, v, lo, hi);
    fwd_lanes_acc(s, val, av, sy, sx, lo, hi, a);
    for (int l = 0; pos && s->switched && l < LANES; l++) /* ref_roi_fwd_sample_add's last step */
        if (ref_roi_fwd_switched_nonfinite(pl[l], src->W, src->cs, &s->read, &s->core)) a->ambig[l] += INFINITY;
}

/* ---- forward: elements -------------------------------------------------------------------------- */

/* one bin of one plane with other sample counts: set up and added sample by sample */
typedef struct {
    const ref_roi_op *op;
    const ref_roi_head *g;
    const double *plane;
    int64_t cs, ph, pw;
    double pre;
    ref_bin_acc a;
} alt_bin;

static void alt_sample(void *ctx, double y, double x, double dy, double dx)
{
    alt_bin *b = ctx;
    ref_fwd_tap s;
    if (ref_roi_fwd_tap_of(b->op->H, b->op->W, y, x, dy, dx, &s)) fwd_tap_add(b->plane, b->op->H, b->op->W, b->cs, &s, &b->a);
}

static ref_bin_acc alt_bin_acc(alt_bin *b, int64_t gh, int64_t gw)
{
    b->a = (ref_bin_acc){0, 0, 0, 0, 0};
    b->op->bin(b->op->op, b->g, b->ph, b->pw, gh, gw, b->pre, alt_sample, b);
    return b->a;
}

/* Element e: out[e] = a.sum / count(gh, gw) and, with bounds, its abs_sum, n_terms, pos_err and
 * ambiguity. When rounding may pick other sample counts, the ambiguity covers each of them (alt:
 * the bin to evaluate with those counts; NULL: nothing sampled). */
static void roi_element(ref_bin_acc a, const ref_roi_head *g, alt_bin *alt, double *out, int64_t e, ref_bounds *bounds)
{
    double count = ref_sample_count(g->gh, g->gw);
    const ref_count_range *c = &g->cr;
    out[e] = a.sum / count;
    if (!bounds) return;
    double ambig = a.ambig / count, abs_sum = a.abs_sum / count, n_terms = a.n_terms;
    if (alt && ref_counts_ambiguous(c) && !ref_counts_enumerable(c))
        ambig = INFINITY; /* rounding spans many counts: any value is possible */
    else if (alt && ref_counts_ambiguous(c)) {
        /* every sample count within rounding: the element may be any of them, rounded as that
           count's sum is (abs_sum and n_terms of the largest) */
        for (int64_t h = c->gh_lo; h <= c->gh_hi; h++)
            for (int64_t w = c->gw_lo; w <= c->gw_hi; w++) {
                const ref_bin_acc o = alt_bin_acc(alt, h, w);
                ref_roi_fwd_widen(&o, ref_sample_count(h, w), out[e], &ambig, &abs_sum, &n_terms);
            }
    }
    if (bounds->abs_sum) bounds->abs_sum[e] = abs_sum;
    if (bounds->n_terms) bounds->n_terms[e] = n_terms;
    if (bounds->pos_err) bounds->pos_err[e] = a.pos_err / count;
    if (bounds->ambig) bounds->ambig[e] = ambig;
}

enum { FWD_CHUNK_TAPS = 1024 }; /* a chunk's set-up and tile stay in L2 */
/* a chunk maps its windows' slopes when its tile has at most MAP_AREA pixels a sample (sr0's
   samples are about a pixel apart; 4 made sr2's sparser ones no faster) */
enum { MAP_AREA = 2 };

/* A forward chunk: its samples, bins and the rectangle [r0, r1] x [c0, c1] their windows cover;
 * tiled: the lanes read a tile of it (pixel-major, LANES values a pixel) built once a block;
 * mapped: with the slopes of its full windows (dense samples share their cells) */
typedef struct {
    vec taps, bins, tile; /* tile: the tile, then its windows' slopes sy and sx, each area pixels */
    int64_t r0, r1, c0, c1;
    int tiled, mapped;
} fwd_chunk;

typedef struct {
    fwd_chunk *ch;
    int64_t H, W;
} fwd_setup_ctx;

static void fwd_sample(void *ctx, double y, double x, double dy, double dx)
{
    fwd_setup_ctx *f = ctx;
    fwd_chunk *ch = f->ch;
    ref_fwd_tap s;
    fwd_ltap *d;
    if (!ref_roi_fwd_tap_of(f->H, f->W, y, x, dy, dx, &s) || !(d = vec_push(&ch->taps))) return;
    fwd_ltap_of(f->H, f->W, &s, d);
    if (d->row[0] < ch->r0) ch->r0 = d->row[0];
    if (d->row[3] > ch->r1) ch->r1 = d->row[3];
    if (d->col[0] < ch->c0) ch->c0 = d->col[0];
    if (d->col[3] > ch->c1) ch->c1 = d->col[3];
}

/* Turns the chunk's rows and columns into offsets: of its tile when that costs less than reading
 * the planes tap by tap (a tile pixel is read once a block, a tap's window 16 times), else of the
 * planes (row length W, pixel stride cs) */
static void fwd_offsets(fwd_chunk *ch, int64_t W, int64_t cs)
{
    const int64_t tw = ch->c1 - ch->c0 + 1, area = ch->taps.n > 0 ? (ch->r1 - ch->r0 + 1) * tw : 0;
    ch->tiled = ch->taps.n > 0 && area <= 8 * (int64_t)ch->taps.n;
    ch->mapped = ch->tiled && area <= MAP_AREA * (int64_t)ch->taps.n;
    if (ch->tiled && ch->tile.cap < (size_t)area) {
        double *p = realloc(ch->tile.p, 3 * (size_t)area * LANES * sizeof(double));
        if (p) {
            ch->tile.p = (char *)p;
            ch->tile.cap = (size_t)area;
        } else
            ch->tiled = 0;
    }
    for (size_t t = 0; t < ch->taps.n; t++) {
        fwd_ltap *d = (fwd_ltap *)ch->taps.p + t;
        for (int a = 0; a < 4; a++) {
            d->row[a] = ch->tiled ? (d->row[a] - ch->r0) * tw : d->row[a] * W * cs;
            d->col[a] = ch->tiled ? d->col[a] - ch->c0 : d->col[a] * cs;
        }
    }
}

/* Sets up the bins of roi g from bin0 on until the chunk is full; returns the next bin. */
static int64_t fwd_setup(const roi_ctx *x, const ref_roi_head *g, int64_t bin0, fwd_chunk *ch)
{
    const ref_roi_op *op = x->op;
    fwd_setup_ctx f = {ch, op->H, op->W};
    ch->taps.n = ch->bins.n = 0;
    ch->r0 = ch->c0 = INT64_MAX;
    ch->r1 = ch->c1 = -1;
    int64_t bin = bin0;
    for (; bin < op->PH * op->PW && (bin == bin0 || ch->taps.n < FWD_CHUNK_TAPS); bin++) {
        bin_span *s = vec_push(&ch->bins);
        if (!s) break;
        *s = (bin_span){bin / op->PW, bin % op->PW, ch->taps.n, 0, 0};
        if (g->b >= 0) op->bin(op->op, g, s->ph, s->pw, g->gh, g->gw, x->pre, fwd_sample, &f);
        s->end = ch->taps.n;
    }
    fwd_offsets(ch, op->W, op->nhwc ? op->C : 1);
    return bin;
}

typedef double pair_d __attribute__((vector_size(2 * sizeof(double))));

/* lanes l, l + 1 of a tile row from two plane rows a, b: two columns at a time, 2x2 transposed
   (__builtin_shufflevector: gcc >= 12 and clang both have it; gcc's __builtin_shuffle is gcc only) */
static void tile_pair(double *tile, int l, const double *a, const double *b, int64_t tw)
{
    int64_t c = 0;
    for (; c + 1 < tw; c += 2) {
        pair_d u, v;
        memcpy(&u, a + c, sizeof u);
        memcpy(&v, b + c, sizeof v);
        const pair_d c0 = __builtin_shufflevector(u, v, 0, 2), c1 = __builtin_shufflevector(u, v, 1, 3);
        memcpy(tile + c * LANES + l, &c0, sizeof c0);
        memcpy(tile + (c + 1) * LANES + l, &c1, sizeof c1);
    }
    for (; c < tw; c++) {
        tile[c * LANES + l] = a[c];
        tile[c * LANES + l + 1] = b[c];
    }
}

/* the chunk's tile of the lanes' planes (pixel stride cs): pixel (r, c) of it at ((r - r0) tw + c - c0) LANES */
static void fwd_tile(const fwd_chunk *ch, const double *const pl[LANES], int64_t W, int64_t cs)
{
    double *tile = (double *)ch->tile.p;
    const int64_t tw = ch->c1 - ch->c0 + 1;
    /* channels-last with a channel a lane: a pixel's lanes already lie side by side */
    const int packed = cs > 1 && pl[LANES - 1] == pl[0] + (LANES - 1);
    for (int64_t r = ch->r0; r <= ch->r1; r++, tile += tw * LANES) { /* a row of the tile stays in L1 */
        const int64_t p0 = r * W + ch->c0;
        if (packed)
            for (int64_t c = 0; c < tw; c++) memcpy(tile + c * LANES, pl[0] + (p0 + c) * cs, LANES * sizeof(double));
        else if (cs == 1)
            for (int l = 0; l < LANES; l += 2) tile_pair(tile, l, pl[l] + p0, pl[l + 1] + p0, tw);
        else
            for (int l = 0; l < LANES; l++)
                for (int64_t c = 0; c < tw; c++) tile[c * LANES + l] = pl[l][(p0 + c) * cs];
    }
}

static void max0_lanes(double *m, const double *d)
{
    for (int l = 0; l < LANES; l++) m[l] = d[l] > m[l] ? d[l] : m[l];
}

/* The slopes of the tile t's full windows by their first pixel p (lane by lane): sy[p] the largest
 * |difference| of vertical neighbours of the window, sx[p] of horizontal ones, 0 and NaN ones
 * passed over as in ref_local_slopes (the largest of a set: any order, in steps). In place: each
 * step reads only pixels at or after its own. */
static void fwd_maps(int64_t th, int64_t tw, const double *t, double *sy, double *sx)
{
    const int64_t n = th * tw, L = LANES;
    for (int64_t p = 0; p < n; p++)
        for (int l = 0; l < L; l++) {
            sy[p * L + l] = p + tw < n ? fabs(t[(p + tw) * L + l] - t[p * L + l]) : 0;
            sx[p * L + l] = p % tw + 1 < tw ? fabs(t[(p + 1) * L + l] - t[p * L + l]) : 0;
        }
    double m[LANES];
    for (int64_t i = 0; i < th; i++)
        for (int64_t p = i * tw; p < i * tw + tw; p++) {
            if (i + 3 < th) { /* sy: 3 rows of differences */
                memset(m, 0, sizeof m);
                for (int a = 0; a < 3; a++) max0_lanes(m, sy + (p + a * tw) * L);
                memcpy(sy + p * L, m, sizeof m);
            }
            if (p - i * tw + 3 < tw) { /* sx: 3 columns of differences */
                memset(m, 0, sizeof m);
                for (int b = 0; b < 3; b++) max0_lanes(m, sx + (p + b) * L);
                memcpy(sx + p * L, m, sizeof m);
            }
        }
    for (int64_t i = 0; i + 3 < th; i++)
        for (int64_t p = i * tw; p < i * tw + tw - 3; p++) {
            memset(m, 0, sizeof m); /* sy: then 4 columns */
            for (int b = 0; b < 4; b++) max0_lanes(m, sy + (p + b) * L);
            memcpy(sy + p * L, m, sizeof m);
            memset(m, 0, sizeof m); /* sx: then 4 rows */
            for (int a = 0; a < 4; a++) max0_lanes(m, sx + (p + a * tw) * L);
            memcpy(sx + p * L, m, sizeof m);
        }
}

/* element (k, c, ph, pw) of the output and its bounds: [K, C, PH, PW], or [K, PH, PW, C] channels-last */
static int64_t fwd_out_at(const ref_roi_op *op, int64_t k, int64_t c, int64_t ph, int64_t pw)
{
    return op->nhwc ? ((k * op->PH + ph) * op->PW + pw) * op->C + c : ((k * op->C + c) * op->PH + ph) * op->PW + pw;
}

/* the chunk's elements of roi k, channels [c, c + nl) (nl <= LANES; the lanes past nl repeat the
 * last channel's plane and are dropped) */
static void fwd_run_lanes(const roi_ctx *x, const ref_roi_head *g, int64_t k, int64_t c, int nl, const fwd_chunk *ch)
{
    const ref_roi_op *op = x->op;
    const int pos = x->bounds != NULL;
    const int64_t th = ch->r1 - ch->r0 + 1, tw = ch->c1 - ch->c0 + 1, HW = op->H * op->W;
    lanes_src src = {{NULL}, NULL, NULL, NULL, op->W, op->nhwc ? op->C : 1};
    for (int l = 0; l < LANES; l++) {
        const int64_t cl = c + (l < nl ? l : nl - 1);
        src.pl[l] = g->b < 0 ? NULL : x->in + (op->nhwc ? g->b * HW * op->C + cl : (g->b * op->C + cl) * HW);
    }
    if (ch->tiled) {
        double *tile = (double *)ch->tile.p, *sy = tile + th * tw * LANES, *sx = sy + th * tw * LANES;
        fwd_tile(ch, src.pl, op->W, src.cs);
        src.tile = tile;
        if (ch->mapped && pos) fwd_maps(th, tw, tile, sy, sx);
        if (ch->mapped && pos) { src.sy = sy; src.sx = sx; }
    }
    for (size_t i = 0; i < ch->bins.n; i++) {
        const bin_span *s = (const bin_span *)ch->bins.p + i;
        lanes_acc a;
        memset(&a, 0, sizeof a);
        for (size_t t = s->first; t < s->end; t++) fwd_lanes_add(&src, (const fwd_ltap *)ch->taps.p + t, pos, &a);
        for (int l = 0; l < nl; l++) {
            alt_bin alt = {op, g, src.pl[l], src.cs, s->ph, s->pw, x->pre, {0, 0, 0, 0, 0}};
            roi_element(lane_get(&a, l), g, src.pl[l] ? &alt : NULL, x->out, fwd_out_at(op, k, c + l, s->ph, s->pw),
                        x->bounds);
        }
    }
}

/* Every element of roi k = item / nblk in one block of channels: independent of every other item */
static void forward_item(void *ctx, int64_t item)
{
    roi_ctx *x = ctx;
    const int64_t k = item / x->nblk, c0 = item % x->nblk * x->cb, c1 = c0 + x->cb < x->op->C ? c0 + x->cb : x->op->C;
    const ref_roi_head *g = geometry_at(x, k);
    fwd_chunk ch = {{NULL, 0, 0, sizeof(fwd_ltap), 0}, {NULL, 0, 0, sizeof(bin_span), 0}, {NULL, 0, 0, 0, 0}, 0, 0, 0, 0, 0, 0};
    for (int64_t bin = 0; bin < x->op->PH * x->op->PW;) {
        bin = fwd_setup(x, g, bin, &ch);
        if (ch.taps.failed || ch.bins.failed) { atomic_store(&x->failed, 1); break; }
        for (int64_t c = c0; c < c1; c += LANES) fwd_run_lanes(x, g, k, c, c1 - c < LANES ? (int)(c1 - c) : LANES, &ch);
    }
    free(ch.taps.p);
    free(ch.bins.p);
    free(ch.tile.p);
}

void ref_roi_forward(const ref_roi_op *op, const double *input, const double *rois, double *output,
                     ref_bounds *bounds)
{
    roi_run(op, input, rois, output, op->K * op->C * op->PH * op->PW, bounds, op->K, forward_item);
}

/* ---- backward: one sample's set-up, and what it scatters into one plane --------------------------- */

typedef struct {
    vec *taps, *nbs;
    int64_t H, W;
    double count;
    int as_alternative;
} bwd_setup_ctx;

/* the sample's set-up (the shared ref_roi_bwd_tap_of), its neighbours appended to the group's list */
static void bwd_sample(void *ctx, double y, double x, double dy, double dx)
{
    bwd_setup_ctx *b = ctx;
    ref_bwd_tap s;
    ref_bwd_neighbour nb[REF_BWD_MAX_NB];
    if (!ref_roi_bwd_tap_of(b->H, b->W, y, x, dy, dx, b->count, b->as_alternative, &s, nb)) return;
    s.nb = b->nbs->n;
    for (size_t n = 0; n < s.n_nb; n++) {
        ref_bwd_neighbour *d = vec_push(b->nbs);
        if (d) *d = nb[n];
    }
    s.n_nb = b->nbs->n - s.nb;
    ref_bwd_tap *d = vec_push(b->taps);
    if (d) *d = s;
}

/* Scatters go / count of sample s into o (spec 2: each corner receives go w / count), its bounds
 * through the shared ref_roi_bwd_bounds. */
static void bwd_tap_add(const ref_plane_out *o, const ref_bwd_tap *s, const ref_bwd_neighbour *nbs, double go)
{
    for (int i = 0; i < 2 && s->nominal && o->grad; i++)
        for (int j = 0; j < 2; j++) o->grad[s->e[2 * i + j] * o->ps] += go * s->wy[i] * s->wx[j] / s->count;
    ref_roi_bwd_bounds(o, s, nbs + s->nb, go);
}

/* ---- backward: planes of the gradient, rois in order --------------------------------------------- */

/* samples a group sets up before its channels run (about 30 MB: a models case's image of rois) */
enum { GROUP_TAPS = 200000 };

/* bin (ph, pw) of roi k: its samples are taps [first, end); inf_ambig: its ambiguity is unbounded */
typedef struct {
    int64_t k, ph, pw;
    size_t first, end;
    int inf_ambig;
} bwd_bin;

/* Sets up the bins of roi k (geometry g) from bin0 on, after those already in the group, until it
 * holds limit samples, each bin with the samples of every count rounding may pick after its own;
 * returns the next bin. */
static int64_t bwd_setup(const roi_ctx *x, const ref_roi_head *g, int64_t k, int64_t bin0, vec *taps, vec *nbs,
                         vec *bins, size_t limit)
{
    const ref_roi_op *op = x->op;
    bwd_setup_ctx b = {taps, nbs, op->H, op->W, ref_sample_count(g->gh, g->gw), 0};
    int64_t bin = bin0;
    for (; bin < op->PH * op->PW && (bin == bin0 || taps->n < limit); bin++) {
        bwd_bin *s = vec_push(bins);
        if (!s) break;
        *s = (bwd_bin){k, bin / op->PW, bin % op->PW, taps->n, 0, 0};
        b.count = ref_sample_count(g->gh, g->gw);
        b.as_alternative = 0;
        op->bin(op->op, g, s->ph, s->pw, g->gh, g->gw, x->pre, bwd_sample, &b);
        if (x->bounds && ref_counts_ambiguous(&g->cr)) {
            if (!ref_counts_enumerable(&g->cr)) s->inf_ambig = 1; /* rounding spans many counts */
            else /* any sample count within rounding may be the one used: widen every pixel either
                    sampling touches by both contributions */
                for (int64_t gh = g->cr.gh_lo; gh <= g->cr.gh_hi; gh++)
                    for (int64_t gw = g->cr.gw_lo; gw <= g->cr.gw_hi; gw++) {
                        b.count = ref_sample_count(gh, gw);
                        b.as_alternative = 1;
                        op->bin(op->op, g, s->ph, s->pw, gh, gw, x->pre, bwd_sample, &b);
                    }
        }
        s->end = taps->n;
    }
    return bin;
}

/* grad_output of bin s in channel c: [K, C, PH, PW], or channels-last [K, PH, PW, C] */
static int64_t go_at(const ref_roi_op *op, const bwd_bin *s, int64_t c)
{
    return op->nhwc ? ((s->k * op->PH + s->ph) * op->PW + s->pw) * op->C + c : ((s->k * op->C + c) * op->PH + s->ph) * op->PW + s->pw;
}

/* the group's bins scattered into plane o of channel c */
static void bwd_run_plane(const roi_ctx *x, const ref_plane_out *o, int64_t c, const vec *taps, const vec *nbs,
                          const vec *bins)
{
    const ref_roi_op *op = x->op;
    for (size_t i = 0; i < bins->n; i++) {
        const bwd_bin *s = (const bwd_bin *)bins->p + i;
        const double go = x->in[go_at(op, s, c)];
        for (size_t t = s->first; t < s->end; t++)
            bwd_tap_add(o, (const ref_bwd_tap *)taps->p + t, (const ref_bwd_neighbour *)nbs->p, go);
        if (s->inf_ambig && o->ambig)
            for (int64_t q = 0; q < op->H * op->W; q++) o->ambig[q * o->ps] = INFINITY;
    }
}

/* plane (b, c)'s gradient and bounds (channels-last: every C-th element from (b, 0, 0, c) on) */
static ref_plane_out plane_at(const roi_ctx *x, int64_t bc)
{
    const int64_t HW = x->op->H * x->op->W, C = x->op->C;
    const ref_bounds *bd = x->bounds;
    double *p[5] = {x->out, bd ? bd->abs_sum : NULL, bd ? bd->n_terms : NULL, bd ? bd->pos_err : NULL,
                    bd ? bd->ambig : NULL};
    for (int t = 0; t < 5; t++)
        if (p[t]) p[t] += x->op->nhwc ? bc / C * HW * C + bc % C : bc * HW;
    return (ref_plane_out){p[0], p[1], p[2], p[3], p[4], x->op->nhwc ? C : 1, x->op->W};
}

static void plane_zero(const roi_ctx *x, int64_t bc)
{
    const ref_plane_out o = plane_at(x, bc);
    double *p[5] = {o.grad, o.abs_sum, o.n_terms, o.pos_err, o.ambig};
    for (int t = 0; t < 5; t++)
        if (p[t] && o.ps == 1) memset(p[t], 0, sizeof(double) * (size_t)(x->op->H * x->op->W));
        else for (int64_t q = 0; p[t] && q < x->op->H * x->op->W; q++) p[t][q * o.ps] = 0;
}

/* ---- backward: a block of 8 channels as lanes of a pixel-major tile ------------------------------- */

/* The group's pixels (the rectangle its taps and neighbours reach) copied for 8 channels at once,
 * a pixel's 5 fields (gradient, abs_sum, n_terms, pos_err, ambig) of the 8 channels side by side:
 * a tap's channel-free work is done once for the 8, its terms reach them in a few cache lines, and
 * each lane takes the steps of bwd_tap_add in its order, so every element gets the same terms in
 * the same order (the tile starts as a copy of the planes and is copied back). A group of a whole
 * image's rois copies each plane in and out once, in long rows. */
/* LANES (8): the forward's channels at a time */
enum { HALVES = LANES / 2, PIX = 5 * LANES, TILE_MAX = 1 << 17 /* pixels: 42 MB */, PREFETCH_AHEAD = 4 };

typedef struct {
    int64_t r0, q0, th, tw; /* rows r0 .. r0 + th, columns q0 .. q0 + tw */
    double *buf;            /* th x tw x PIX doubles */
    int64_t cap;            /* pixels buf holds; 0: no memory, plane by plane */
} bwd_tile;

/* two lanes of a field (SSE2's width: GCC vector extensions, each lane takes the same IEEE operations
   as a double), and a lane mask (all bits set where true) */
typedef double v2d __attribute__((vector_size(2 * sizeof(double))));
typedef int64_t v2m __attribute__((vector_size(2 * sizeof(double))));

static inline v2d sel(v2m m, v2d a, v2d b) { return (v2d)(((v2m)a & m) | ((v2m)b & ~m)); }
static inline v2d v2_abs(v2d a) { return (v2d)((v2m)a & INT64_MAX); }
/* fmin, fmax as glibc computes them on the quiet NaNs arising here: the other operand when one is
   NaN, the first when both, minsd / maxsd otherwise (a NaN b replaced by a first: two selects, where
   three nested ones make GCC go through general registers) */
static inline v2d vmin(v2d a, v2d b)
{
    const v2d c = sel(b != b, a, b);
    return sel(a < c, a, c);
}
static inline v2d vmax(v2d a, v2d b)
{
    const v2d c = sel(b != b, a, b);
    return sel(a > c, a, c);
}

/* the group's rectangle and its taps' tile offsets; 0 when it is worth no tile: too big for it, or
   too many pixels to copy in and out against the terms scattered */
static int bwd_tile_fit(int64_t W, vec *taps, vec *nbs, bwd_tile *t)
{
    int64_t r0 = INT64_MAX, r1 = -1, q0 = INT64_MAX, q1 = -1;
    ref_bwd_tap *tp = (ref_bwd_tap *)taps->p;
    ref_bwd_neighbour *nb = (ref_bwd_neighbour *)nbs->p;
    for (size_t i = 0; i < taps->n + nbs->n; i++)
        for (int j = 0; j < (i < taps->n ? 4 : 1); j++) {
            const int64_t e = i < taps->n ? tp[i].e[j] : nb[i - taps->n].e, r = e / W, q = e % W;
            r0 = r < r0 ? r : r0, r1 = r > r1 ? r : r1, q0 = q < q0 ? q : q0, q1 = q > q1 ? q : q1;
        }
    for (size_t i = 0; i < taps->n; i++) /* a far sample's reach (its rectangle holds its slots) */
        if (tp[i].far) {
            const int64_t *a = tp[i].reach;
            r0 = a[0] < r0 ? a[0] : r0, r1 = a[1] > r1 ? a[1] : r1, q0 = a[2] < q0 ? a[2] : q0, q1 = a[3] > q1 ? a[3] : q1;
        } else if (tp[i].switched) { /* its read taps (within its slots' rectangle: kept for safety) */
            const ref_tap_rect *a = &tp[i].read;
            r0 = a->r0 < r0 ? a->r0 : r0, r1 = a->r1 > r1 ? a->r1 : r1, q0 = a->c0 < q0 ? a->c0 : q0;
            q1 = a->c1 > q1 ? a->c1 : q1;
        }
    if (r1 < 0) return 0;
    *t = (bwd_tile){r0, q0, r1 - r0 + 1, q1 - q0 + 1, t->buf, t->cap};
    if (t->th * t->tw > t->cap || t->th * t->tw > 8 * (int64_t)taps->n) return 0;
    for (size_t i = 0; i < taps->n; i++)
        for (int j = 0; j < 4; j++) tp[i].te[j] = (uint32_t)((tp[i].e[j] / W - r0) * t->tw + tp[i].e[j] % W - q0);
    for (size_t i = 0; i < nbs->n; i++) nb[i].te = (uint32_t)((nb[i].e / W - r0) * t->tw + nb[i].e % W - q0);
    return 1;
}

/* the tile of channels [cs, cs + n) of image b copied from the planes (load) or back, a row of
   the rectangle at a time, a pixel's lanes together; lanes and fields without a plane are zeros */
static void bwd_tile_move(const roi_ctx *x, int64_t b, int64_t cs, int n, const bwd_tile *t, int load)
{
    const int64_t W = x->op->W;
    double *plane[5][LANES];
    int64_t ps = 1;
    int whole = n == LANES;
    for (int l = 0; l < n; l++) {
        const ref_plane_out o = plane_at(x, b * x->op->C + cs + l);
        double *p[5] = {o.grad, o.abs_sum, o.n_terms, o.pos_err, o.ambig};
        for (int f = 0; f < 5; f++) {
            plane[f][l] = p[f] ? p[f] + (t->r0 * W + t->q0) * o.ps : NULL;
            whole = whole && p[f];
        }
        ps = o.ps;
    }
    if (load && !whole) memset(t->buf, 0, sizeof(double) * PIX * (size_t)(t->th * t->tw));
    for (int64_t r = 0; r < t->th; r++)
        for (int f = 0; f < 5 && n > 0; f++) {
            double *d = t->buf + r * t->tw * PIX + f * LANES;
            const int64_t row = r * W * ps;
            if (plane[f][0] && load)
                for (int64_t q = 0; q < t->tw; q++)
                    for (int l = 0; l < n; l++) d[q * PIX + l] = plane[f][l][row + q * ps];
            else if (plane[f][0])
                for (int64_t q = 0; q < t->tw; q++)
                    for (int l = 0; l < n; l++) plane[f][l][row + q * ps] = d[q * PIX + l];
        }
}

/* ref_roi_bwd_bounds' far pixels for the lanes of tile t: the reach's pixels that are none of the
   slots px get the cap, in pos_err (field 3) on the nominal branch, in ambig (4) off it */
static void bwd_lanes_far(const bwd_tile *t, const ref_bwd_tap *s, const uint32_t px[16], const v2d *cap)
{
    const int f = s->nominal ? 3 : 4;
    for (int64_t r = s->reach[0]; r <= s->reach[1]; r++)
        for (int64_t c = s->reach[2]; c <= s->reach[3]; c++) {
            const uint32_t q = (uint32_t)((r - t->r0) * t->tw + c - t->q0);
            int k = 0;
            while (k < s->n_slots && px[k] != q) k++;
            if (k < s->n_slots) continue;
            v2d *p = (v2d *)(t->buf + (size_t)q * PIX + f * LANES);
            for (int h = 0; h < HALVES; h++) {
                const v2m add = (cap[h] > 0) & (cap[h] <= DBL_MAX);
                p[h] = sel(add, p[h] + cap[h], p[h]);
            }
        }
}

/* ref_roi_bwd_bounds' unbounded ambiguity of a sample whose gradient is not finite, for the lanes of
   tile t whose cap is not (bwd_nonfinite in roi_bounds.c: the same pixels, set to INFINITY) */
static void bwd_lanes_nonfinite(const bwd_tile *t, const ref_bwd_tap *s, const ref_bwd_neighbour *nb, const v2d *cap)
{
    uint32_t px[16];
    double w[16], wb[16];
    int set[16];
    for (int k = 0; k < s->n_slots; k++) w[k] = wb[k] = 0, set[k] = 0;
    for (int c = 0; c < 4; c++) {
        px[s->slot[c]] = s->te[c], set[s->slot[c]] = 1;
        w[s->slot[c]] += s->wy[c >> 1] * s->wx[c & 1];
        wb[s->slot[c]] += s->wpe[c];
    }
    for (size_t n = 0; n < s->n_nb; n++) {
        px[nb[n].slot] = nb[n].te, set[nb[n].slot] = 1;
        wb[nb[n].slot] += nb[n].bound;
    }
    v2m nf[HALVES];
    for (int h = 0; h < HALVES; h++) nf[h] = ~(cap[h] <= DBL_MAX); /* NaN or infinite */
    for (int k = 0; k < s->n_slots; k++) {
        if (!set[k] || !(s->widen || (wb[k] > 0 && w[k] <= wb[k]))) continue;
        v2d *p = (v2d *)(t->buf + (size_t)px[k] * PIX + 4 * LANES);
        for (int h = 0; h < HALVES; h++) p[h] = sel(nf[h], (v2d){INFINITY, INFINITY}, p[h]);
    }
    for (int64_t r = s->reach[0]; s->far && r <= s->reach[1]; r++)
        for (int64_t c = s->reach[2]; c <= s->reach[3]; c++) {
            const uint32_t q = (uint32_t)((r - t->r0) * t->tw + c - t->q0);
            int k = 0;
            while (k < s->n_slots && !(set[k] && px[k] == q)) k++;
            if (k < s->n_slots) continue;
            v2d *p = (v2d *)(t->buf + (size_t)q * PIX + 4 * LANES);
            for (int h = 0; h < HALVES; h++) p[h] = sel(nf[h], (v2d){INFINITY, INFINITY}, p[h]);
        }
    for (int64_t r = s->read.r0; s->switched && r <= s->read.r1; r++) /* bwd_nonfinite's read taps */
        for (int64_t c = s->read.c0; c <= s->read.c1; c++) {
            if (r >= s->core.r0 && r <= s->core.r1 && c >= s->core.c0 && c <= s->core.c1) continue;
            v2d *p = (v2d *)(t->buf + (size_t)((r - t->r0) * t->tw + c - t->q0) * PIX + 4 * LANES);
            for (int h = 0; h < HALVES; h++) p[h] = sel(nf[h], (v2d){INFINITY, INFINITY}, p[h]);
        }
}

/* bwd_tap_add of sample s for the 8 lanes of tile t, whose grad_output values are go and caps
   |go| / count are cap; inv: 1 / count when that is exact (a power of 2), else 0 */
static void bwd_lanes_add(const bwd_tile *tl, const ref_bwd_tap *s, const ref_bwd_neighbour *nbs, const v2d *go,
                          const v2d *cap, double inv, int bounds)
{
    double *tile = tl->buf;
    v2d pe_px[16][HALVES], amb_px[16][HALVES];
    uint32_t px[16];
    for (int k = 0; k < s->n_slots; k++)
        for (int h = 0; h < HALVES; h++) pe_px[k][h] = amb_px[k][h] = (v2d){0, 0};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            v2d *p = (v2d *)(tile + (size_t)s->te[2 * i + j] * PIX);
            const int k = s->slot[2 * i + j];
            px[k] = s->te[2 * i + j];
            for (int h = 0; h < HALVES; h++) {
                /* (go wy wx) / count: a power of 2's exact inverse rounds the same quotient */
                const v2d t = inv > 0 ? go[h] * s->wy[i] * s->wx[j] * inv : go[h] * s->wy[i] * s->wx[j] / s->count;
                const v2d at = v2_abs(t), pe = cap[h] * s->wpe[2 * i + j];
                if (s->nominal) {
                    p[h] += t;
                    p[HALVES + h] += at;
                    p[2 * HALVES + h] += 1;
                } else if (bounds) {
                    const v2m add = at > 0;
                    p[HALVES + h] = sel(add, p[HALVES + h] + at, p[HALVES + h]);
                    p[2 * HALVES + h] = sel(add, p[2 * HALVES + h] + 1, p[2 * HALVES + h]);
                }
                pe_px[k][h] += s->nominal ? pe : (v2d){0, 0};
                amb_px[k][h] += s->widen ? at + pe : (v2d){0, 0};
            }
        }
    if (!bounds) return;
    for (size_t n = 0; n < (s->nominal ? s->n_nb : 0); n++) {
        const ref_bwd_neighbour *nb = nbs + s->nb + n;
        px[nb->slot] = nb->te;
        for (int h = 0; h < HALVES; h++) {
            const v2m fin = v2_abs(cap[h]) <= DBL_MAX;
            pe_px[nb->slot][h] = sel(fin, pe_px[nb->slot][h] + cap[h] * nb->bound, pe_px[nb->slot][h]);
            amb_px[nb->slot][h] = sel(fin, amb_px[nb->slot][h] + 0, amb_px[nb->slot][h]);
        }
    }
    for (int k = 0; k < s->n_slots; k++) {
        v2d *p = (v2d *)(tile + (size_t)px[k] * PIX + 3 * LANES);
        for (int h = 0; h < HALVES; h++) {
            const v2d pe = vmin(pe_px[k][h], cap[h]);
            const v2d amb = vmin(amb_px[k][h], s->nominal ? vmax(cap[h] - pe, (v2d){0, 0}) : cap[h]);
            p[h] = sel(pe > 0, p[h] + pe, p[h]);
            p[HALVES + h] = sel(amb > 0, p[HALVES + h] + amb, p[HALVES + h]);
        }
    }
    if (s->far) bwd_lanes_far(tl, s, px, cap);
    int finite = 1;
    for (int h = 0; h < HALVES; h++) finite = finite && cap[h][0] <= DBL_MAX && cap[h][1] <= DBL_MAX;
    if (!finite) bwd_lanes_nonfinite(tl, s, nbs + s->nb, cap);
}

/* bwd_lanes_add of a plain sample (nominal, not widening, no neighbour, four distinct pixels) with
   bounds: each corner's terms go straight to its pixel, and its ambiguity stays 0 (min(0, x >= 0)),
   so the ambig field is left alone. finite: every cap is; then a position term (wpe in [0, 1]) is
   at most its cap and adding a 0 to pos_err (never -0) keeps it: the cap and the test change nothing */
static void bwd_lanes_plain(double *tile, const ref_bwd_tap *s, const v2d *go, const v2d *cap, double inv, int finite)
{
    for (int c = 0; c < 4; c++) {
        v2d *p = (v2d *)(tile + (size_t)s->te[c] * PIX);
        const double wy = s->wy[c >> 1], wx = s->wx[c & 1], wpe = s->wpe[c];
        for (int h = 0; h < HALVES; h++) {
            const v2d t = inv > 0 ? go[h] * wy * wx * inv : go[h] * wy * wx / s->count;
            const v2d pe = (v2d){0, 0} + cap[h] * wpe;
            p[h] += t;
            p[HALVES + h] += v2_abs(t);
            p[2 * HALVES + h] += 1;
            if (finite) p[3 * HALVES + h] += pe;
            else p[3 * HALVES + h] = sel(vmin(pe, cap[h]) > 0, p[3 * HALVES + h] + vmin(pe, cap[h]), p[3 * HALVES + h]);
            /* an infinite or NaN gradient on a weight within its position bound of 0: bwd_nonfinite */
            if (!finite && wpe > 0 && wy * wx <= wpe)
                p[4 * HALVES + h] = sel(~(cap[h] <= DBL_MAX), (v2d){INFINITY, INFINITY}, p[4 * HALVES + h]);
        }
    }
}

static int bwd_plain(const ref_bwd_tap *s)
{
    return s->nominal && !s->widen && !s->far && !s->switched && !s->n_nb && s->n_slots == 4 && s->wpe[0] >= 0 &&
           s->wpe[0] <= 1 && s->wpe[1] >= 0 && s->wpe[1] <= 1 && s->wpe[2] >= 0 && s->wpe[2] <= 1 && s->wpe[3] >= 0 &&
           s->wpe[3] <= 1;
}

/* the group's bins scattered into channels [cs, cs + n) of image b through the tile; fresh: the
   planes are not zeroed yet, and the tile covers them whole: it starts as zeros */
static void bwd_run_lanes(const roi_ctx *x, int64_t b, int64_t cs, int n, const bwd_tile *t, const vec *taps,
                          const vec *nbs, const vec *bins, int fresh)
{
    const ref_roi_op *op = x->op;
    int inf_ambig = 0, e;
    if (fresh) memset(t->buf, 0, sizeof(double) * PIX * (size_t)(t->th * t->tw));
    else bwd_tile_move(x, b, cs, n, t, 1);
    for (size_t i = 0; i < bins->n; i++) {
        const bwd_bin *s = (const bwd_bin *)bins->p + i;
        double g[LANES] = {0}, count = 0, inv = 0;
        int finite = 0;
        for (int l = 0; l < n; l++) g[l] = x->in[go_at(op, s, cs + l)];
        /* a bin's grad_output lines are 8 short streams apart: the next bins' asked for */
        for (int l = 0; l < n && i + PREFETCH_AHEAD < bins->n; l++)
            __builtin_prefetch(x->in + go_at(op, s + PREFETCH_AHEAD, cs + l));
        v2d go[HALVES], cap[HALVES];
        for (int h = 0; h < HALVES; h++) go[h] = (v2d){g[2 * h], g[2 * h + 1]};
        for (size_t q = s->first; q < s->end; q++) {
            const ref_bwd_tap *tp = (const ref_bwd_tap *)taps->p + q;
            if (tp->count != count) { /* the bin's caps, again for another sample count */
                count = tp->count;
                finite = 1;
                for (int h = 0; h < HALVES; h++) {
                    cap[h] = v2_abs(go[h]) / count;
                    finite = finite && cap[h][0] <= DBL_MAX && cap[h][1] <= DBL_MAX;
                }
                inv = frexp(count, &e) == 0.5 ? 1 / count : 0;
            }
            /* the pixels of a sample a few ahead asked for: the tile is larger than the caches */
            if (q + PREFETCH_AHEAD < taps->n)
                for (int c = 0; c < 4; c++)
                    for (int f = 0; f < PIX; f += 8) __builtin_prefetch(t->buf + (size_t)tp[PREFETCH_AHEAD].te[c] * PIX + f, 1);
            if (x->bounds && bwd_plain(tp)) bwd_lanes_plain(t->buf, tp, go, cap, inv, finite);
            else bwd_lanes_add(t, tp, (const ref_bwd_neighbour *)nbs->p, go, cap, inv, x->bounds != NULL);
        }
        inf_ambig |= s->inf_ambig;
    }
    bwd_tile_move(x, b, cs, n, t, 0);
    /* a bin of unbounded ambiguity set the whole plane's to INFINITY, where every later term keeps it */
    for (int l = 0; l < n && inf_ambig; l++) {
        const ref_plane_out o = plane_at(x, b * op->C + cs + l);
        for (int64_t q = 0; o.ambig && q < op->H * op->W; q++) o.ambig[q * o.ps] = INFINITY;
    }
}

/* The groups of bins of image b from roi *k, bin *bin on, until it holds GROUP_TAPS samples */
static int bwd_group(const roi_ctx *x, int64_t b, int64_t *k, int64_t *bin, vec *taps, vec *nbs, vec *bins)
{
    const ref_roi_op *op = x->op;
    taps->n = nbs->n = bins->n = 0;
    for (; *k < op->K && taps->n < GROUP_TAPS; *bin = 0, ++*k) {
        const ref_roi_head *g = geometry_at(x, *k);
        if (g->b != b) continue;
        *bin = bwd_setup(x, g, *k, *bin, taps, nbs, bins, GROUP_TAPS);
        if (taps->failed || nbs->failed || bins->failed) return 0;
        if (*bin < op->PH * op->PW) break; /* the group is full within roi k */
    }
    return 1;
}

/* The planes of image b = item / nblk in one block of channels: the rois of image b in order, so
 * every pixel sums its terms in the same order whichever thread runs the plane, and however many
 * there are. */
static void backward_item(void *ctx, int64_t item)
{
    roi_ctx *x = ctx;
    const ref_roi_op *op = x->op;
    const int64_t b = item / x->nblk, c0 = item % x->nblk * x->cb, c1 = c0 + x->cb < op->C ? c0 + x->cb : op->C;
    vec taps = {NULL, 0, 0, sizeof(ref_bwd_tap), 0}, nbs = {NULL, 0, 0, sizeof(ref_bwd_neighbour), 0},
        bins = {NULL, 0, 0, sizeof(bwd_bin), 0};
    bwd_tile tile = {.cap = op->H * op->W < TILE_MAX ? op->H * op->W : TILE_MAX};
    tile.buf = aligned_alloc(64, sizeof(double) * PIX * (size_t)tile.cap);
    if (!tile.buf) tile.cap = 0;
    int fresh = 1; /* the planes not zeroed yet: a first group whose tile covers them writes them whole */
    for (int64_t k = 0, bin = 0; k < op->K && !atomic_load(&x->failed);) {
        if (!bwd_group(x, b, &k, &bin, &taps, &nbs, &bins)) { atomic_store(&x->failed, 1); break; }
        const int lanes = bwd_tile_fit(op->W, &taps, &nbs, &tile);
        if (fresh && !(lanes && tile.th == op->H && tile.tw == op->W))
            for (int64_t c = c0; c < c1; c++) plane_zero(x, b * op->C + c);
        if (lanes)
            for (int64_t c = c0; c < c1; c += LANES)
                bwd_run_lanes(x, b, c, c1 - c < LANES ? (int)(c1 - c) : LANES, &tile, &taps, &nbs, &bins, fresh);
        else
            for (int64_t c = c0; c < c1; c++) {
                const ref_plane_out o = plane_at(x, b * op->C + c);
                bwd_run_plane(x, &o, c, &taps, &nbs, &bins);
            }
        fresh = 0;
    }
    for (int64_t c = c0; c < c1 && fresh; c++) plane_zero(x, b * op->C + c);
    free(tile.buf);
    free(taps.p);
    free(nbs.p);
    free(bins.p);
}

void ref_roi_backward(const ref_roi_op *op, const double *grad_output, const double *rois, double *grad,
                      ref_bounds *bounds)
{
    roi_run(op, grad_output, rois, grad, op->B * op->C * op->H * op->W, bounds, op->B, backward_item);
}
