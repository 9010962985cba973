/* grid_sampler_2d forward / backward drivers: coordinates, padding, tap tables, threading and
 * dispatch to the per-ISA microkernels.
 *
 * Algorithm. Every mode is a separable stencil: up to 4 taps along x (column, weight, d weight)
 * times up to 4 along y, out-of-bounds taps dropped. A point's taps are computed once per work
 * unit in float32 (section 7.1 order, bicubic coefficients in the factored forms A t s^2,
 * s (1 + t - (A+2) t^2), t (1 + s - (A+2) s^2), A t^2 s, s = 1 - t, which the tolerance model
 * assumes) and shared by all the unit's channels: each tap is one multiply-add of a contiguous
 * channel vector in a channels-last plane.
 *
 * Work units are (image n, chunk of cc channels). cc depends only on C and H*W (never on the
 * thread count): a multiple of 16 with the private plane about 2 MiB (at 128x128 and a random grid
 * 32 channels measured faster than 16 (per-point overhead) and 64 (cache misses)), or all of C.
 * Forward: the unit transposes its [cn][H*W] slice of the input into a [H*W][cc] plane, computes
 * one output row at a time into a [Wo][cc] tile and transposes it back.
 * Backward (nearest, bicubic; bilinear has its own path below): the unit owns a zeroed private
 * input_grad plane (no other unit touches those channels of image n: no races, no atomics),
 * scatters every point of image n in row order and transposes the plane back once. The grid gradient of a point sums over all channels: each unit
 * writes its chunk's partial sum, and after the parallel region the partials are added in chunk
 * order and multiplied by the coordinate multiplier. Every element is therefore summed in a fixed
 * order, identical for any thread count. */
#include "opt_internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

int64_t conform_opt_grid_sampler_chunk = 0;

#define CUBIC_A (-0.75f)


/* ---- coordinates ---------------------------------------------------------------------------- */

typedef struct {
    size_t n;         /* in-bounds taps */
    int64_t off[4];   /* element offset in the channels-last plane */
    float w[4], dw[4];
    float mult;       /* d coordinate / d grid value */
} taps;

static float clipf(float i, int64_t S, float *d)
{
    if (i <= 0.0f) { *d = 0.0f; return 0.0f; }
    if (i >= (float)(S - 1)) { *d = 0.0f; return (float)(S - 1); }
    *d = 1.0f;
    return i;
}

static float reflectf(float i, int64_t S, int ac, float *dr)
{
    const float lo = ac ? 0.0f : -1.0f, hi = ac ? 2.0f * (float)(S - 1) : 2.0f * (float)S - 1.0f;
    if (lo == hi) { *dr = 0.0f; return 0.0f; }
    const float mn = lo * 0.5f, span = (hi - lo) * 0.5f;
    float t = i - mn;
    const float sgn = t < 0.0f ? -1.0f : 1.0f;
    t = fabsf(t);
    const float extra = fmodf(t, span);
    /* t - extra is a multiple of span: its quotient is exact after rounding, unlike t / span */
    const float flips = rintf((t - extra) / span);
    if (fmodf(flips, 2.0f) == 0.0f) { *dr = sgn; return extra + mn; }
    *dr = -sgn;
    return span - extra + mn;
}

/* integer tap of bicubic under padding: the same map as reflect/clip on integers */
static int64_t pad_tap(int64_t k, int64_t S, int pad, int ac)
{
    if (pad == 2) {
        if (S == 1) return 0;
        const int64_t period = ac ? 2 * (S - 1) : 2 * S;
        if (k < 0) k = ac ? -k : -k - 1;
        k %= period;
        if (k >= S) k = ac ? period - k : period - 1 - k;
    }
    if (pad >= 1) k = k < 0 ? 0 : k >= S ? S - 1 : k;
    return k;
}

/* the unnormalized coordinate of grid value c and d i / d c (section 7.1) */
static inline float unnormalize(float c, int64_t S, int ac, float *mult)
{
    if (ac) {
        *mult = (float)(S - 1) * 0.5f;
        return (c + 1.0f) * 0.5f * (float)(S - 1);
    }
    *mult = (float)S * 0.5f;
    return ((c + 1.0f) * (float)S - 1.0f) * 0.5f;
}

static void axis_taps(const f32_grid_sampler_params *p, float c, int64_t S, int64_t stride, taps *t)
{
    const int ac = p->align_corners, pad = p->padding_mode;
    float mult, i = unnormalize(c, S, ac, &mult);
    t->n = 0;
    if (p->interpolation_mode == 2) {
        t->mult = mult;
        if (!isfinite(i) || fabsf(i) > 2147483647.0f) return;
        const float x0 = floorf(i), tt = i - x0, s = 1.0f - tt, A = CUBIC_A;
        const float w[4] = {A * tt * s * s, s * (1.0f + tt - (A + 2.0f) * tt * tt),
                            tt * (1.0f + s - (A + 2.0f) * s * s), A * tt * tt * s};
        const float dw[4] = {A * s * (1.0f - 3.0f * tt), tt * (3.0f * (A + 2.0f) * tt - 2.0f * (A + 3.0f)),
                             -s * (3.0f * (A + 2.0f) * s - 2.0f * (A + 3.0f)), A * tt * (2.0f - 3.0f * tt)};
        const int64_t k0 = (int64_t)x0 - 1;
        for (int k = 0; k < 4; k++) {
            const int64_t q = pad_tap(k0 + k, S, pad, ac);
            if (q < 0 || q >= S) continue;
            t->off[t->n] = q * stride;
            t->w[t->n] = w[k];
            t->dw[t->n] = dw[k];
            t->n++;
        }
        return;
    }
    float d = 1.0f;
    if (pad == 2) {
        float dr, dc;
        i = reflectf(i, S, ac, &dr);
        i = clipf(i, S, &dc);
        d = dr * dc;
    } else if (pad == 1) {
        i = clipf(i, S, &d);
    }
    if (!isfinite(i) || i < -2147483648.0f || i >= 2147483648.0f) { i = -100.0f; d = 0.0f; }
    t->mult = mult * d;
    if (p->interpolation_mode == 1) {
        const int64_t q = (int64_t)rintf(i);
        if (q >= 0 && q < S) {
            t->off[0] = q * stride;
            t->w[0] = 1.0f;
            t->dw[0] = 0.0f;
            t->n = 1;
        }
        return;
    }
    const float x0 = floorf(i), l = i - x0;
    const int64_t q = (int64_t)x0;
    if (q >= 0 && q < S) {
        t->off[t->n] = q * stride;
        t->w[t->n] = 1.0f - l;
        t->dw[t->n] = -1.0f;
        t->n++;
    }
    if (q + 1 >= 0 && q + 1 < S) {
        t->off[t->n] = (q + 1) * stride;
        t->w[t->n] = l;
        t->dw[t->n] = 1.0f;
        t->n++;
    }
}

/* ---- shared scaffolding ----------------------------------------------------------------------- */

/* channels per unit: independent of the thread count (the grid gradient's partial sums follow
 * the chunks), a multiple of 16, one plane of about budget bytes */
static int64_t pick_chunk(int64_t C, int64_t HW, int64_t budget)
{
    int64_t cc;
    if (conform_opt_grid_sampler_chunk > 0) cc = (conform_opt_grid_sampler_chunk + 15) / 16 * 16;
    else cc = 16 * (budget / (HW * 64) > 1 ? budget / (HW * 64) : 1);
    return cc >= C ? C : cc;
}

/* ---- forward ---------------------------------------------------------------------------------- */

static int fwd_bilinear(const f32_grid_sampler_params *p, const conform_ukernels *kn, const float *input, const float *grid,
                        float *output, const conform_exec *ex);

int f32_grid_sampler_2d_fwd(const f32_grid_sampler_params *p, const float *input, const float *grid,
                            float *output, const conform_exec *ex)
{
    conform_isa isa;
    if (conform_opt_resolve_isa(ex, &isa) != CONFORM_OK) return CONFORM_E_ISA;
    const int64_t N = p->N, C = p->C, H = p->H, W = p->W, Ho = p->Ho, Wo = p->Wo, HW = H * W, P = Ho * Wo;
    if (N <= 0 || C <= 0 || P <= 0) return CONFORM_OK;
    const conform_ukernels kn = *conform_ukernels_for(isa);
    if (p->interpolation_mode == 0 && HW > 0 && HW <= INT32_MAX / 2 && P <= INT32_MAX)
        return fwd_bilinear(p, &kn, input, grid, output, ex);
    const int64_t cc = pick_chunk(C, HW, 2 << 20), nchunks = (C + cc - 1) / cc, units = N * nchunks;
    if (!conform_sizes_ok(HW, Wo, cc)) return CONFORM_E_NOMEM;
    const int nt = conform_threads(ex);
    const size_t bytes[2] = {sizeof(float) * (size_t)HW * (size_t)cc, sizeof(float) * (size_t)Wo * (size_t)cc};
    void **bufs = conform_thread_bufs(nt, 2, bytes);
    if (!bufs) return CONFORM_E_NOMEM;

#pragma omp parallel num_threads(nt)
    {
        float *plane = bufs[2 * omp_get_thread_num()], *tile = bufs[2 * omp_get_thread_num() + 1];
#pragma omp for schedule(dynamic, 1)
        for (int64_t u = 0; u < units; u++) {
            const int64_t n = u / nchunks, c0 = (u % nchunks) * cc, cn = C - c0 < cc ? C - c0 : cc;
            kn.transpose((size_t)cn, (size_t)HW, input + ((size_t)n * C + c0) * HW, (size_t)HW, plane, (size_t)cc);
            for (int64_t h = 0; h < Ho; h++) {
                for (int64_t w = 0; w < Wo; w++) {
                    const float *g = grid + ((size_t)(n * Ho + h) * Wo + w) * 2;
                    taps tx, ty;
                    axis_taps(p, g[0], W, cc, &tx);
                    axis_taps(p, g[1], H, W * cc, &ty);
                    kn.bilerp_bin_fwd((size_t)cn, ty.n, ty.off, ty.w, tx.n, tx.off, tx.w, plane, tile + (size_t)w * cc);
                }
                kn.transpose((size_t)Wo, (size_t)cn, tile, (size_t)cc, output + (((size_t)n * C + c0) * Ho + h) * Wo, (size_t)P);
            }
        }
    }
    conform_thread_bufs_free(bufs, nt, 2);
    return CONFORM_OK;
}

/* ---- backward --------------------------------------------------------------------------------- */

/* grid_grad[e] (the multipliers, written by the chunk-0 units) times the sum of the nparts
 * per-chunk partial sums of element e ([nparts][np]), added in chunk order */
static void add_partials(float *grid_grad, const float *partial, int64_t nparts, int64_t np, const conform_exec *ex)
{
#pragma omp parallel for num_threads(conform_threads(ex)) schedule(dynamic, 4096)
    for (int64_t e = 0; e < np; e++) {
        float sum = partial[e];
        for (int64_t k = 1; k < nparts; k++) sum += partial[(size_t)k * (size_t)np + (size_t)e];
        grid_grad[e] *= sum;
    }
}

/* ---- backward, bilinear: points sorted by row, channels-last rows ----------------------------------
 *
 * A unit (image n, block of up to 64 channels, cs lanes a pixel: a multiple of 16) tables the
 * points of image n once (column, fractions, multipliers) sorted by their top tap row y0 (a stable
 * counting sort). It packs the block's grad_output channels-last ([pixel][cs], 4 MiB at 128x128:
 * the only buffer read at random; the kernel asks for a point's row a few points ahead) and sweeps
 * the rows: before row y0's points it packs input row y0 + 1 into a two-row ring, after them
 * input_grad row y0 is final and leaves its two-row ring. So input is read and input_grad written
 * once, in row order, and a point's taps touch rows that are in cache; a point's per-tap sums stay
 * in registers across all the block's channels. Points with a tap outside the plane (or clipped)
 * are few: they are bucketed by the same row and follow that row's in-plane points, tap by tap.
 * The grid gradient of a point keeps per tap the sum over channels of g * v (fixed order, in acc)
 * and applies the derivative weights once. Blocks are a function of N and C only; with several,
 * their partial sums are added in block order after the parallel region, as in the general path.
 * Every element is therefore summed in an order fixed for any thread count. */

typedef struct {
    int32_t q, nt;
    int32_t row[4], col[4];
    float w[4], wdx[4], wdy[4];
    float mx, my;
} edge_pt;

typedef struct {
    f32_grid_pt pt;
    int32_t key;
    float mx, my;
} pt_tmp;

typedef struct {
    f32_grid_pt *pts;   /* in-plane points sorted by key(y0, x0) = y0 xb + (x0 >> xshift) */
    edge_pt *edge;      /* the others; top row y (-1 <= y < H)'s are [estart[y + 1], estart[y + 2]) */
    float *mult;        /* [nfast][2]: d coordinate / d grid value of pts (unless mult_const) */
    pt_tmp *tmp;
    edge_pt *etmp;
    int32_t *ekey;
    int32_t *skey, *sx0; /* zeros padding: per grid point its key (-1: not in-plane) and x0 */
    float *slx, *sly;
    int32_t *start;     /* [H xb + 1]: row y's points are [start[y xb], start[(y + 1) xb]) */
    int64_t *estart;    /* [H + 2] */
    int64_t xb;
    int xshift, mult_const;
    float mxc, myc;
    size_t nfast, nedge;
} bil_table;

/* Key columns: in-plane points are sorted by row and then by column bucket (x0 >> xshift), so a
 * row's points visit its taps left to right and they stay in L1; the buckets are at most about
 * max(4 P, 64 Ki) in all, whatever the plane. */
static void bil_table_keys(int64_t H, int64_t W, int64_t P, int *xshift, int64_t *xb)
{
    int64_t cap = 4 * P > 65536 ? 4 * P : 65536;
    cap = cap < INT32_MAX / 2 ? cap : INT32_MAX / 2; /* keys and bucket starts are int32 */
    int sh = 0;
    while (sh < 30 && H * ((W + ((int64_t)1 << sh) - 1) >> sh) > cap) sh++;
    *xshift = sh;
    *xb = (W + ((int64_t)1 << sh) - 1) >> sh;
}

static void bil_edge_add(const f32_grid_sampler_params *p, float gx, float gy, int64_t q, bil_table *t, size_t *ne)
{
    taps tx, ty;
    axis_taps(p, gx, p->W, 1, &tx);
    axis_taps(p, gy, p->H, 1, &ty);
    /* the taps of a bilinear point are rows y0, y0 + 1 (d weight -1, +1), either possibly out */
    const int32_t key = ty.n == 0 ? -1 : (int32_t)ty.off[0] - (ty.dw[0] < 0.0f ? 0 : 1);
    edge_pt *e = &t->etmp[*ne];
    t->ekey[(*ne)++] = key;
    t->estart[key + 2]++;
    e->q = (int32_t)q;
    e->nt = 0;
    e->mx = tx.mult;
    e->my = ty.mult;
    for (size_t r = 0; r < ty.n; r++)
        for (size_t c = 0; c < tx.n; c++, e->nt++) {
            e->row[e->nt] = (int32_t)ty.off[r];
            e->col[e->nt] = (int32_t)tx.off[c];
            e->w[e->nt] = ty.w[r] * tx.w[c];
            e->wdx[e->nt] = ty.w[r] * tx.dw[c];
            e->wdy[e->nt] = ty.dw[r] * tx.w[c];
        }
}

static void bil_table_build(const f32_grid_sampler_params *p, const conform_ukernels *kn, const float *grid_n, bil_table *t)
{
    const int64_t H = p->H, W = p->W, P = p->Ho * p->Wo, xb = t->xb, nkeys = H * xb;
    const int ac = p->align_corners, sh = t->xshift;
    size_t nf = 0, ne = 0;
    memset(t->start, 0, sizeof(int32_t) * (size_t)(nkeys + 1));
    memset(t->estart, 0, sizeof(int64_t) * (size_t)(H + 2));
    t->mult_const = p->padding_mode == 0;
    if (t->mult_const) {
        /* zeros padding: a point is in-plane iff all four taps are inside, and its multipliers are
         * constants; axis_taps's arithmetic, in a loop without branches the compiler vectorizes */
        const f32_grid_keys_params kp = {(float)W, (float)H, (float)(W - 1), (float)(H - 1), ac, (int32_t)xb, sh};
        unnormalize(0.0f, W, ac, &t->mxc);
        unnormalize(0.0f, H, ac, &t->myc);
        kn->grid_bilinear_keys((size_t)P, grid_n, &kp, t->skey, t->sx0, t->slx, t->sly);
        for (int64_t q = 0; q < P; q++) {
            const int32_t k = t->skey[q];
            if (k >= 0) {
                t->start[k + 1]++;
                nf++;
            } else
                bil_edge_add(p, grid_n[2 * q], grid_n[2 * q + 1], q, t, &ne);
        }
        for (int64_t k = 0; k < nkeys; k++) t->start[k + 1] += t->start[k];
        for (int64_t q = 0; q < P; q++) {
            const int32_t k = t->skey[q];
            if (k >= 0) t->pts[t->start[k]++] = (f32_grid_pt){t->sx0[q], (int32_t)q, t->slx[q], t->sly[q]};
        }
    } else {
        for (int64_t q = 0; q < P; q++) {
            const float gx = grid_n[2 * q], gy = grid_n[2 * q + 1];
            taps tx, ty;
            axis_taps(p, gx, W, 1, &tx);
            axis_taps(p, gy, H, 1, &ty);
            if (tx.n == 2 && ty.n == 2) {
                const int32_t key = (int32_t)(ty.off[0] * xb + (tx.off[0] >> sh));
                t->tmp[nf++] = (pt_tmp){{(int32_t)tx.off[0], (int32_t)q, tx.w[1], ty.w[1]}, key, tx.mult, ty.mult};
                t->start[key + 1]++;
            } else
                bil_edge_add(p, gx, gy, q, t, &ne);
        }
        for (int64_t k = 0; k < nkeys; k++) t->start[k + 1] += t->start[k];
        for (size_t k = 0; k < nf; k++) {
            const size_t d = (size_t)t->start[t->tmp[k].key]++;
            t->pts[d] = t->tmp[k].pt;
            t->mult[2 * d] = t->tmp[k].mx;
            t->mult[2 * d + 1] = t->tmp[k].my;
        }
    }
    for (int64_t y = 0; y <= H; y++) t->estart[y + 1] += t->estart[y];
    for (size_t k = 0; k < ne; k++) t->edge[t->estart[t->ekey[k] + 1]++] = t->etmp[k];
    /* the placement loops advanced each bucket's start to its end: shift back by one bucket */
    memmove(t->start + 1, t->start, sizeof(int32_t) * (size_t)nkeys);
    t->start[0] = 0;
    for (int64_t y = H + 1; y > 0; y--) t->estart[y] = t->estart[y - 1];
    t->estart[0] = 0;
    t->nfast = nf;
    t->nedge = ne;
}

/* channels per unit of the bilinear path: a function of N and C only (about 16 units in all, at
 * most 64 channels: the packed grad_output then stays in the last-level cache), or the tuning knob.
 * 16 rather than 8: with one core held by another process, the thread beside it holds a smaller
 * last unit (make bench-contention at N8 C64 128x128, 3 x 5 alternating rounds: forward t2/t1
 * 1.12-1.18 -> 1.07-1.08, backward 1.18-1.23 -> 1.07-1.15), for about 3% more work at one thread
 * (a second table build per image) */
static int64_t pick_block(int64_t N, int64_t C)
{
    int64_t cb;
    if (conform_opt_grid_sampler_chunk > 0) cb = conform_opt_grid_sampler_chunk;
    else {
        const int64_t want = N >= 16 ? 1 : (16 + N - 1) / N;
        cb = (C + want - 1) / want;
    }
    cb = (cb + 15) / 16 * 16;
    cb = cb > 64 ? 64 : cb;
    return cb >= C ? C : cb;
}

/* rows of input asked for ahead of their packing (their lines are spread over cn planes) */
/* input rows packed, and input_grad rows written out, per call: 8-plane groups then read and
 * write longer runs of each plane (plane starts 64 KiB apart share cache sets) */
#define ROW_BATCH 4
#define RING_ROWS (2 * ROW_BATCH)
/* the edge points of top row y (their taps are in rows y and y + 1 of the rings) */
static void bil_edge_row(const bil_table *t, int64_t y, size_t W, size_t cs, const float *go, const float *in2,
                         float *io2, float *acc)
{
    for (int64_t e = t->estart[y + 1]; e < t->estart[y + 2]; e++) {
        const edge_pt *ep = &t->edge[e];
        float *s = acc ? acc + 4 * (t->nfast + (size_t)e) : NULL;
        if (s) s[0] = s[1] = s[2] = s[3] = 0.0f;
        const float *g = go + cs * (size_t)ep->q;
        for (int32_t k = 0; k < ep->nt; k++) {
            /* all cs lanes (unused ones are zeros) */
            const size_t o = cs * (((size_t)ep->row[k] % RING_ROWS) * W + (size_t)ep->col[k]);
            if (io2) {
                float *d = io2 + o;
                const float w = ep->w[k];
#pragma omp simd
                for (size_t j = 0; j < cs; j++) d[j] += w * g[j];
            }
            if (s) {
                const float *v = in2 + o;
                float a = 0.0f;
#pragma omp simd reduction(+ : a)
                for (size_t j = 0; j < cs; j++) a += g[j] * v[j];
                s[k] = a;
            }
        }
    }
}

/* Lines asked for a few at a time while the kernel works, so the next rows' reads overlap it
 * instead of stalling their packing: planes [0, planes) x runs of len floats. */
typedef struct {
    const char *plane;  /* the current plane's run */
    size_t plane_bytes, run_lines, planes_left, line;
} prefetch_cursor;

static void prefetch_start(prefetch_cursor *c, const float *base, size_t planes, size_t plane_stride, size_t len)
{
    c->plane = (const char *)base;
    c->plane_bytes = plane_stride * sizeof(float);
    c->run_lines = (len * sizeof(float) + 63) / 64;
    c->planes_left = c->run_lines ? planes : 0;
    c->line = 0;
}

static void prefetch_step(prefetch_cursor *c, size_t lines)
{
    for (; lines && c->planes_left; lines--) {
        __builtin_prefetch(c->plane + 64 * c->line, 0, 3);
        if (++c->line == c->run_lines) {
            c->line = 0;
            c->plane += c->plane_bytes;
            c->planes_left--;
        }
    }
}

/* grad_output pixels [q0, q1) of a block of cn channels into [pixel][cs] (lanes past cn zero) */
static void pack_go(const conform_ukernels *kn, const float *go, size_t cn, size_t cs, size_t P, float *dst, size_t q0,
                    size_t q1)
{
    if (cn < cs)
        for (size_t q = q0; q < q1; q++) memset(dst + q * cs + cn, 0, sizeof(float) * (cs - cn));
    kn->transpose(cn, q1 - q0, go + q0, P, dst + q0 * cs, cs); /* 8 planes at a time, each read in one run */
}

/* One thread's buffers for the bilinear backward: its point table's arrays, grid_grad sums, input
 * and input_grad row rings, packed grad_output; slots of conform_thread_bufs, a zero size for a
 * buffer the call does not need. */
enum { WS_PTS, WS_EDGE, WS_ETMP, WS_EKEY, WS_MULT, WS_TMP, WS_START, WS_SKEY, WS_SX0, WS_SLX, WS_SLY, WS_ESTART,
       WS_ACC, WS_IN2, WS_IO2, WS_GOP, WS_N };

static void bil_ws_bytes(int64_t H, int64_t W, int64_t P, size_t cs, size_t rowf, int want_in, int want_grid,
                         size_t *b)
{
    const size_t np = (size_t)P;
    int xshift;
    int64_t xb;
    bil_table_keys(H, W, P, &xshift, &xb);
    b[WS_PTS] = sizeof(f32_grid_pt) * np;
    b[WS_EDGE] = b[WS_ETMP] = sizeof(edge_pt) * np;
    b[WS_EKEY] = b[WS_SKEY] = b[WS_SX0] = sizeof(int32_t) * np;
    b[WS_MULT] = sizeof(float) * 2 * np;
    b[WS_TMP] = sizeof(pt_tmp) * np;
    b[WS_START] = sizeof(int32_t) * (size_t)(H * xb + 1);
    b[WS_SLX] = b[WS_SLY] = sizeof(float) * np;
    b[WS_ESTART] = sizeof(int64_t) * (size_t)(H + 2);
    b[WS_ACC] = want_grid ? sizeof(float) * 4 * np : 0;
    b[WS_IN2] = want_grid ? sizeof(float) * RING_ROWS * rowf : 0; /* input rows: row r in slot r % RING_ROWS */
    b[WS_IO2] = want_in ? sizeof(float) * RING_ROWS * rowf : 0;   /* input_grad rows, the same slots */
    b[WS_GOP] = sizeof(float) * np * cs;                          /* grad_output, [pixel][cs] */
}

/* a thread's table over its slots mb (the scalars are set by bil_table_build) */
static bil_table bil_table_over(void **mb, int64_t H, int64_t W, int64_t P)
{
    bil_table t = {.pts = mb[WS_PTS], .edge = mb[WS_EDGE], .etmp = mb[WS_ETMP], .ekey = mb[WS_EKEY],
                   .mult = mb[WS_MULT], .tmp = mb[WS_TMP], .start = mb[WS_START], .skey = mb[WS_SKEY],
                   .sx0 = mb[WS_SX0], .slx = mb[WS_SLX], .sly = mb[WS_SLY], .estart = mb[WS_ESTART]};
    bil_table_keys(H, W, P, &t.xshift, &t.xb);
    return t;
}

/* A unit's grid gradients from its per-tap sums acc (table t): into gg (mult x sum), or, when the
 * channel blocks are several, the sums into part and (first block) the multipliers into gg, for
 * add_partials to combine in block order. */
static void bil_grid_grad_out(const bil_table *t, const float *acc, float *gg, float *part, int first)
{
    const size_t nf = t->nfast, ne = t->nedge;
    for (size_t k = 0; k < nf + ne; k++) {
        const float *s = acc + 4 * k;
        float sx, sy, mx, my;
        size_t q;
        if (k < nf) {
            const f32_grid_pt *pt = &t->pts[k];
            const float ax = 1.0f - pt->lx, ay = 1.0f - pt->ly;
            /* wdx = w_y x (-1, 1), wdy = (-1, 1) x w_x, taps in (r, c) order */
            sx = -ay * s[0] + ay * s[1] + -pt->ly * s[2] + pt->ly * s[3];
            sy = -ax * s[0] + -pt->lx * s[1] + ax * s[2] + pt->lx * s[3];
            q = (size_t)pt->q;
            mx = t->mult_const ? t->mxc : t->mult[2 * k];
            my = t->mult_const ? t->myc : t->mult[2 * k + 1];
        } else {
            const edge_pt *ep = &t->edge[k - nf];
            sx = sy = 0.0f;
            for (int32_t i = 0; i < ep->nt; i++) {
                sx += ep->wdx[i] * s[i];
                sy += ep->wdy[i] * s[i];
            }
            q = (size_t)ep->q;
            mx = ep->mx;
            my = ep->my;
        }
        if (part) {
            part[2 * q] = sx;
            part[2 * q + 1] = sy;
            if (first) {
                gg[2 * q] = mx;
                gg[2 * q + 1] = my;
            }
        } else {
            gg[2 * q] = mx * sx;
            gg[2 * q + 1] = my * sy;
        }
    }
}

/* One unit of the bilinear backward (image n, a block of cn channels) with its thread's buffers:
 * what the steps of its row sweep share, so that each step below reads as one thing. */
typedef struct {
    const conform_ukernels *kn;
    const bil_table *t;
    int64_t H;
    size_t W, cn, cs, rowf;   /* rowf: floats in one channels-last row of a ring */
    const float *in;          /* the block's input planes, [cn][H W] */
    float *ig;                /* its input_grad planes, the same */
    float *gop, *in2, *io2, *acc;
} bil_unit;

/* before the sweep: the block's grad_output packed, the first batch of input rows in the ring */
static void bil_unit_start(const bil_unit *u, const float *go, size_t P)
{
    const size_t cn = u->cn, cs = u->cs;
    if (cn < cs && u->in2) /* lanes the block does not fill: zeros, so that whole vectors can be used */
        for (size_t x = 0; x < RING_ROWS * u->W; x++) memset(u->in2 + x * cs + cn, 0, sizeof(float) * (cs - cn));
    pack_go(u->kn, go, cn, cs, P, u->gop, 0, P);
    if (u->in2) u->kn->transpose(cn, (size_t)(u->H < ROW_BATCH ? u->H : ROW_BATCH) * u->W, u->in, u->W * (size_t)u->H, u->in2, cs);
}

/* before row y's points: at a batch's last row the next batch is packed into the ring; at its
 * first the batch after it is asked for, so that those reads overlap this batch's sweep */
static void bil_row_inputs(const bil_unit *u, int64_t y, prefetch_cursor *pf)
{
    const int64_t H = u->H;
    const size_t W = u->W, HW = (size_t)H * W;
    if (!u->in2) return;
    if (y + 1 < H && (y + 1) % ROW_BATCH == 0) {
        const int64_t m = H - (y + 1) < ROW_BATCH ? H - (y + 1) : ROW_BATCH;
        const size_t next = (size_t)((y + 1) % RING_ROWS) * u->rowf;
        u->kn->transpose(u->cn, (size_t)m * W, u->in + (size_t)(y + 1) * W, HW, u->in2 + next, u->cs);
    }
    if (y % ROW_BATCH == 0) {
        const int64_t r = y + ROW_BATCH, m = H - r < ROW_BATCH ? H - r : ROW_BATCH;
        prefetch_start(pf, u->in + (size_t)(r > H ? H : r) * W, u->cn, HW, m > 0 ? (size_t)(m * (int64_t)W) : 0);
    }
}

/* row y's in-plane points, in chunks of 32, each chunk after its share of the row's prefetches:
 * the next batch's input reads spread over the row's kernel work */
static void bil_row_points(const bil_unit *u, int64_t y, prefetch_cursor *pf)
{
    const bil_table *t = u->t;
    const size_t slot = (size_t)(y % RING_ROWS) * u->rowf, next = (size_t)((y + 1) % RING_ROWS) * u->rowf;
    const int64_t k0 = t->start[y * t->xb], k1 = t->start[(y + 1) * t->xb];
    const size_t per_row = (pf->planes_left * pf->run_lines + ROW_BATCH - 1) / ROW_BATCH, chunk = 32;
    const size_t nchunk = (size_t)(k1 - k0 + (int64_t)chunk - 1) / chunk;
    const size_t share = nchunk ? (per_row + nchunk - 1) / nchunk : per_row;
    if (!nchunk) prefetch_step(pf, per_row);
    for (int64_t kc = k0; kc < k1; kc += (int64_t)chunk) {
        const size_t m = (size_t)(k1 - kc < (int64_t)chunk ? k1 - kc : (int64_t)chunk);
        prefetch_step(pf, share);
        u->kn->grid_bilinear_bwd(m, t->pts + kc, u->cs, (ptrdiff_t)next - (ptrdiff_t)slot, u->gop,
                                 u->in2 ? u->in2 + slot : NULL, u->io2 ? u->io2 + slot : NULL,
                                 u->acc ? u->acc + 4 * (size_t)kc : NULL);
    }
}

/* One unit's sweep: rows in order, each after its input rows are in the ring; at a batch's last
 * row (or the plane's) the batch's input_grad rows are final and streamed out, their slots
 * zeroed for the rows that reuse them. */
static void bil_unit_sweep(const bil_unit *u)
{
    prefetch_cursor pf = {0};
    bil_edge_row(u->t, -1, u->W, u->cs, u->gop, u->in2, u->io2, u->acc);
    for (int64_t y = 0; y < u->H; y++) {
        bil_row_inputs(u, y, &pf);
        bil_row_points(u, y, &pf);
        bil_edge_row(u->t, y, u->W, u->cs, u->gop, u->in2, u->io2, u->acc);
        if (u->io2 && ((y + 1) % ROW_BATCH == 0 || y + 1 == u->H)) {
            const int64_t m = y % ROW_BATCH + 1;
            float *ring = u->io2 + (size_t)((y + 1 - m) % RING_ROWS) * u->rowf;
            u->kn->transpose_stream_zero((size_t)m * u->W, u->cn, ring, u->cs, u->ig + (size_t)(y + 1 - m) * u->W,
                                         (size_t)u->H * u->W);
        }
    }
}

static int bwd_bilinear(const f32_grid_sampler_params *p, const conform_ukernels *kn, const float *grad_output,
                        const float *input, const float *grid, float *input_grad, float *grid_grad,
                        const conform_exec *ex)
{
    const int64_t N = p->N, C = p->C, H = p->H, W = p->W, HW = H * W, P = p->Ho * p->Wo;
    const int want_in = p->output_mask[0], want_grid = p->output_mask[1];
    const int64_t cb = pick_block(N, C), nblk = (C + cb - 1) / cb, units = N * nblk;
    const size_t cs = (size_t)(cb + 15) / 16 * 16; /* lanes a pixel */
    const size_t rowf = cs * (size_t)W;          /* floats in one channels-last row */
    if (!conform_sizes_ok(P, (int64_t)cs, 1) || !conform_sizes_ok(W, (int64_t)cs, 2)) return CONFORM_E_NOMEM;
    float *partial = want_grid && nblk > 1 ? conform_alloc_floats((size_t)nblk * (size_t)(N * P * 2)) : NULL;
    if (want_grid && nblk > 1 && !partial) return CONFORM_E_NOMEM;

    /* every thread's buffers come from the calling thread before the region: nothing in it waits
       for a worker that starts late on a core another process holds (a team barrier after each
       thread's own allocation made every call wait for it) */
    const int nt = conform_threads(ex);
    size_t bytes[WS_N];
    bil_ws_bytes(H, W, P, cs, rowf, want_in, want_grid, bytes);
    void **bufs = conform_thread_bufs(nt, WS_N, bytes);
    if (!bufs) {
        conform_scratch_free(partial);
        return CONFORM_E_NOMEM;
    }

#pragma omp parallel num_threads(nt)
    {
        void **mb = bufs + WS_N * omp_get_thread_num();
        bil_table t = bil_table_over(mb, H, W, P);
        bil_unit un = {.kn = kn, .t = &t, .H = H, .W = (size_t)W, .cs = cs, .rowf = rowf,
                       .gop = mb[WS_GOP], .in2 = mb[WS_IN2], .io2 = mb[WS_IO2], .acc = mb[WS_ACC]};
        if (un.io2) memset(un.io2, 0, sizeof(float) * RING_ROWS * rowf);
        int64_t built = -1;
#pragma omp for schedule(dynamic, 1)
        for (int64_t u = 0; u < units; u++) {
            const int64_t n = u / nblk, b = u % nblk, c0 = b * cb;
            const size_t first = (size_t)n * (size_t)C + (size_t)c0; /* the block's first plane */
            if (built != n) {
                bil_table_build(p, kn, grid + (size_t)n * (size_t)P * 2, &t);
                built = n;
            }
            un.cn = (size_t)(C - c0 < cb ? C - c0 : cb);
            un.in = input + first * (size_t)HW;
            un.ig = input_grad + first * (size_t)HW;
            bil_unit_start(&un, grad_output + first * (size_t)P, (size_t)P);
            bil_unit_sweep(&un);
            if (!un.acc) continue;
            float *part = partial ? partial + ((size_t)b * (size_t)N + (size_t)n) * (size_t)P * 2 : NULL;
            bil_grid_grad_out(&t, un.acc, grid_grad + (size_t)n * (size_t)P * 2, part, b == 0);
        }
    }
    conform_thread_bufs_free(bufs, nt, WS_N);
    if (partial) add_partials(grid_grad, partial, nblk, N * P * 2, ex);
    conform_scratch_free(partial);
    return CONFORM_OK;
}


/* ---- forward, bilinear: the whole channel block packed, points in output order ---------------
 *
 * A unit (image n, block of up to 64 channels, cs lanes a pixel) packs its input channels-last
 * ([pixel][cs], read at random by the points; the kernel asks for a point's taps a few points
 * ahead), finds each point's base tap and fractions once per image (under zeros padding with the
 * vectorized f32_grid_bilinear_keys, else with axis_taps), computes 4 output rows at a time into a
 * [pixel][cs] tile (in-plane points by f32_grid_bilinear_fwd, the others tap by tap) and writes
 * the tile out with whole-line streaming stores. The per-channel arithmetic and tap order are the
 * general path's: the results are the same bits. */

#define FWD_ROWS 4

static int fwd_bilinear(const f32_grid_sampler_params *p, const conform_ukernels *kn, const float *input, const float *grid,
                        float *output, const conform_exec *ex)
{
    const int64_t N = p->N, C = p->C, H = p->H, W = p->W, HW = H * W, Ho = p->Ho, Wo = p->Wo, P = Ho * Wo;
    const int ac = p->align_corners, quick = p->padding_mode == 0;
    const int64_t cb = pick_block(N, C), nblk = (C + cb - 1) / cb, units = N * nblk;
    const size_t cs = (size_t)(cb + 15) / 16 * 16;
    if (!conform_sizes_ok(HW, (int64_t)cs, 1) || !conform_sizes_ok(Wo * FWD_ROWS, (int64_t)cs, 1)) return CONFORM_E_NOMEM;
    const int nt = conform_threads(ex);
    const size_t bytes[7] = {sizeof(float) * (size_t)HW * cs, sizeof(float) * (size_t)(Wo * FWD_ROWS) * cs,
                             sizeof(int32_t) * (size_t)P, sizeof(int32_t) * (size_t)P, sizeof(float) * (size_t)P,
                             sizeof(float) * (size_t)P, sizeof(f32_grid_pt) * (size_t)(Wo * FWD_ROWS)};
    void **bufs = conform_thread_bufs(nt, 7, bytes);
    if (!bufs) return CONFORM_E_NOMEM;

#pragma omp parallel num_threads(nt)
    {
        void **mb = bufs + 7 * omp_get_thread_num();
        float *inp = mb[0], *tile = mb[1], *lx = mb[4], *ly = mb[5];
        int32_t *base = mb[2], *x0 = mb[3];
        f32_grid_pt *row = mb[6];
        int64_t built = -1;
#pragma omp for schedule(dynamic, 1)
        for (int64_t u = 0; u < units; u++) {
            const int64_t n = u / nblk, c0 = (u % nblk) * cb;
            const size_t cn = (size_t)(C - c0 < cb ? C - c0 : cb);
            const float *grid_n = grid + (size_t)n * (size_t)P * 2;
            if (built != n) { /* each point's base tap (y0 W + x0, or -1: tap by tap) and fractions */
                if (quick) {
                    const f32_grid_keys_params kp = {(float)W, (float)H, (float)(W - 1), (float)(H - 1), ac, (int32_t)W, 0};
                    kn->grid_bilinear_keys((size_t)P, grid_n, &kp, base, x0, lx, ly);
                } else
                    for (int64_t q = 0; q < P; q++) {
                        taps tx, ty;
                        axis_taps(p, grid_n[2 * q], W, 1, &tx);
                        axis_taps(p, grid_n[2 * q + 1], H, 1, &ty);
                        const int fast = tx.n == 2 && ty.n == 2;
                        base[q] = fast ? (int32_t)(ty.off[0] * W + tx.off[0]) : -1;
                        lx[q] = fast ? tx.w[1] : 0.0f;
                        ly[q] = fast ? ty.w[1] : 0.0f;
                    }
                built = n;
            }
            if (cn < cs)
                for (size_t r = 0; r < (size_t)HW; r++) memset(inp + r * cs + cn, 0, sizeof(float) * (cs - cn));
            kn->transpose(cn, (size_t)HW, input + ((size_t)n * C + (size_t)c0) * (size_t)HW, (size_t)HW, inp, cs);
            float *out = output + ((size_t)n * C + (size_t)c0) * (size_t)P;
            for (int64_t h0 = 0; h0 < Ho; h0 += FWD_ROWS) {
                const int64_t rows = Ho - h0 < FWD_ROWS ? Ho - h0 : FWD_ROWS, m = rows * Wo;
                size_t nf = 0;
                for (int64_t j = 0; j < m; j++) {
                    const int64_t q = h0 * Wo + j;
                    if (base[q] >= 0) {
                        row[nf++] = (f32_grid_pt){base[q], (int32_t)j, lx[q], ly[q]};
                        continue;
                    }
                    taps tx, ty; /* a tap outside the plane (or clipped): the general kernel */
                    axis_taps(p, grid_n[2 * q], W, (int64_t)cs, &tx);
                    axis_taps(p, grid_n[2 * q + 1], H, W * (int64_t)cs, &ty);
                    kn->bilerp_bin_fwd(cs, ty.n, ty.off, ty.w, tx.n, tx.off, tx.w, inp, tile + (size_t)j * cs);
                }
                kn->grid_bilinear_fwd(nf, row, cs, (ptrdiff_t)(W * (int64_t)cs), inp, tile);
                kn->transpose_stream((size_t)m, cn, tile, cs, out + (size_t)(h0 * Wo), (size_t)P);
            }
        }
    }
    conform_thread_bufs_free(bufs, nt, 7);
    return CONFORM_OK;
}

int f32_grid_sampler_2d_bwd(const f32_grid_sampler_params *p, const float *grad_output,
                            const float *input, const float *grid, float *input_grad,
                            float *grid_grad, const conform_exec *ex)
{
    conform_isa isa;
    if (conform_opt_resolve_isa(ex, &isa) != CONFORM_OK) return CONFORM_E_ISA;
    const int64_t N = p->N, C = p->C, H = p->H, W = p->W, Ho = p->Ho, Wo = p->Wo, HW = H * W, P = Ho * Wo;
    const int want_in = p->output_mask[0], want_grid = p->output_mask[1];
    const conform_ukernels kn = *conform_ukernels_for(isa);
    /* bilinear writes every element of both outputs itself (input_grad once, non-temporally) */
    if (p->interpolation_mode == 0 && N > 0 && C > 0 && P > 0 && HW > 0 && (want_in || want_grid) &&
        HW <= INT32_MAX / 2 && P <= INT32_MAX)
        return bwd_bilinear(p, &kn, grad_output, input, grid, input_grad, grid_grad, ex);
    if (want_in && N > 0 && C > 0 && HW > 0) memset(input_grad, 0, sizeof(float) * (size_t)(N * C * HW));
    if (want_grid && N > 0 && P > 0) memset(grid_grad, 0, sizeof(float) * (size_t)(N * P * 2));
    if (N <= 0 || C <= 0 || P <= 0 || HW <= 0 || (!want_in && !want_grid)) return CONFORM_OK;
    const int64_t cc = pick_chunk(C, HW, 2 << 20), nchunks = (C + cc - 1) / cc, units = N * nchunks;
    if (!conform_sizes_ok(HW, Wo, cc)) return CONFORM_E_NOMEM;
    /* nearest has no grid gradient (spec 7.4): its grid_grad stays 0, even at a NaN pixel */
    const int grid_slopes = want_grid && p->interpolation_mode != 1;
    /* partial grid gradients per chunk: [nchunks][N * P * 2] */
    float *partial = grid_slopes ? conform_alloc_floats((size_t)nchunks * (size_t)(N * P * 2)) : NULL;
    if (grid_slopes && !partial) return CONFORM_E_NOMEM;
    const int nt = conform_threads(ex);
    const size_t plane_bytes = sizeof(float) * (size_t)HW * (size_t)cc;
    const size_t bytes[3] = {grid_slopes ? plane_bytes : 0, want_in ? plane_bytes : 0, sizeof(float) * (size_t)Wo * (size_t)cc};
    void **bufs = conform_thread_bufs(nt, 3, bytes);
    if (!bufs) {
        conform_scratch_free(partial);
        return CONFORM_E_NOMEM;
    }

#pragma omp parallel num_threads(nt)
    {
        float *plane = bufs[3 * omp_get_thread_num()], *io = bufs[3 * omp_get_thread_num() + 1];
        float *gtile = bufs[3 * omp_get_thread_num() + 2];
#pragma omp for schedule(dynamic, 1)
        for (int64_t u = 0; u < units; u++) {
            const int64_t n = u / nchunks, k = u % nchunks, c0 = k * cc, cn = C - c0 < cc ? C - c0 : cc;
            if (plane) kn.transpose((size_t)cn, (size_t)HW, input + ((size_t)n * C + c0) * HW, (size_t)HW, plane, (size_t)cc);
            if (io)
                for (int64_t r = 0; r < HW; r++) memset(io + (size_t)r * cc, 0, (size_t)cn * sizeof(float));
            float *part = partial ? partial + (size_t)k * (size_t)(N * P * 2) + (size_t)n * P * 2 : NULL;
            for (int64_t h = 0; h < Ho; h++) {
                kn.transpose((size_t)cn, (size_t)Wo, grad_output + (((size_t)n * C + c0) * Ho + h) * Wo, (size_t)P, gtile,
                      (size_t)cc);
                for (int64_t w = 0; w < Wo; w++) {
                    const size_t q = (size_t)(h * Wo + w);
                    const float *g = grid + ((size_t)n * P + q) * 2;
                    taps tx, ty;
                    axis_taps(p, g[0], W, cc, &tx);
                    axis_taps(p, g[1], H, W * cc, &ty);
                    if (part && k == 0) { /* the multipliers, the same for every chunk */
                        grid_grad[((size_t)n * P + q) * 2] = tx.mult;
                        grid_grad[((size_t)n * P + q) * 2 + 1] = ty.mult;
                    }
                    kn.grid_bwd((size_t)cn, ty.n, ty.off, ty.w, ty.dw, tx.n, tx.off, tx.w, tx.dw, plane,
                           gtile + (size_t)w * cc, io, part ? part + q * 2 : NULL);
                    if (part && (ty.n == 0 || tx.n == 0)) part[q * 2] = part[q * 2 + 1] = 0.0f;
                }
            }
            if (io) kn.transpose((size_t)HW, (size_t)cn, io, (size_t)cc, input_grad + ((size_t)n * C + c0) * HW, (size_t)HW);
        }
    }
    conform_thread_bufs_free(bufs, nt, 3);
    if (partial) add_partials(grid_grad, partial, nchunks, N * P * 2, ex);
    conform_scratch_free(partial);
    return CONFORM_OK;
}
