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

typedef struct {
    f32_bilerp_bin_fn bin;
    f32_grid_bwd_fn bwd;
    f32_transpose_fn tr;
    f32_grid_bilinear_bwd_fn bil;
    f32_unpack8_zero_fn unpack;
} kernel_set;

static kernel_set kernels_for(conform_isa isa)
{
    kernel_set k;
    switch (isa) {
    case CONFORM_ISA_AVX512:
        k.bin = f32_bilerp_bin_ukernel__avx512;
        k.bwd = f32_grid_bwd_ukernel__avx512;
        k.tr = f32_transpose_ukernel__avx2; /* 8 x 8 tiles: AVX2 is wide enough */
        k.bil = f32_grid_bilinear_bwd_ukernel__avx512;
        k.unpack = f32_unpack8_zero_ukernel__avx2; /* store-bound: AVX2 is wide enough */
        break;
    case CONFORM_ISA_AVX2:
        k.bin = f32_bilerp_bin_ukernel__avx2;
        k.bwd = f32_grid_bwd_ukernel__avx2;
        k.tr = f32_transpose_ukernel__avx2;
        k.bil = f32_grid_bilinear_bwd_ukernel__avx2;
        k.unpack = f32_unpack8_zero_ukernel__avx2;
        break;
    default:
        k.bin = f32_bilerp_bin_ukernel__scalar;
        k.bwd = f32_grid_bwd_ukernel__scalar;
        k.tr = f32_transpose_ukernel__scalar;
        k.bil = f32_grid_bilinear_bwd_ukernel__scalar;
        k.unpack = f32_unpack8_zero_ukernel__scalar;
        break;
    }
    return k;
}

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

int f32_grid_sampler_2d_fwd(const f32_grid_sampler_params *p, const float *input, const float *grid,
                            float *output, const conform_exec *ex)
{
    conform_isa isa;
    if (conform_opt_resolve_isa(ex, &isa) != CONFORM_OK) return CONFORM_E_ISA;
    const int64_t N = p->N, C = p->C, H = p->H, W = p->W, Ho = p->Ho, Wo = p->Wo, HW = H * W, P = Ho * Wo;
    if (N <= 0 || C <= 0 || P <= 0) return CONFORM_OK;
    const kernel_set kn = kernels_for(isa);
    const int64_t cc = pick_chunk(C, HW, 2 << 20), nchunks = (C + cc - 1) / cc, units = N * nchunks;
    if (!conform_sizes_ok(HW, Wo, cc)) return CONFORM_E_NOMEM;
    int err = 0;

#pragma omp parallel num_threads(conform_threads(ex))
    {
        float *plane = conform_alloc_floats((size_t)HW * (size_t)cc), *tile = conform_alloc_floats((size_t)Wo * (size_t)cc);
        int mine = !plane || !tile;
        if (mine) {
#pragma omp atomic write
            err = 1;
        }
#pragma omp barrier
        int failed;
#pragma omp atomic read
        failed = err;
#pragma omp for schedule(dynamic, 1)
        for (int64_t u = 0; u < (failed ? 0 : units); u++) {
            const int64_t n = u / nchunks, c0 = (u % nchunks) * cc, cn = C - c0 < cc ? C - c0 : cc;
            kn.tr((size_t)cn, (size_t)HW, input + ((size_t)n * C + c0) * HW, (size_t)HW, plane, (size_t)cc);
            for (int64_t h = 0; h < Ho; h++) {
                for (int64_t w = 0; w < Wo; w++) {
                    const float *g = grid + ((size_t)(n * Ho + h) * Wo + w) * 2;
                    taps tx, ty;
                    axis_taps(p, g[0], W, cc, &tx);
                    axis_taps(p, g[1], H, W * cc, &ty);
                    kn.bin((size_t)cn, ty.n, ty.off, ty.w, tx.n, tx.off, tx.w, plane, tile + (size_t)w * cc);
                }
                kn.tr((size_t)Wo, (size_t)cn, tile, (size_t)cc, output + (((size_t)n * C + c0) * Ho + h) * Wo, (size_t)P);
            }
        }
        free(plane);
        free(tile);
    }
    return err ? CONFORM_E_NOMEM : CONFORM_OK;
}

/* ---- backward --------------------------------------------------------------------------------- */

/* ---- backward, bilinear: sorted points, 8-channel blocks ---------------------------------------
 *
 * A unit (image n, block of channels) tables the points of image n once (offset, fractions,
 * multipliers) sorted by their top row y0 (a stable counting sort). Per 8 channels it transposes
 * grad_output and input into [pixel][8] blocks and sweeps the sorted points: the input and
 * input_grad blocks are then visited row by row (the taps hit L1) and only the grad_output reads
 * are scattered, within a 512 KiB block. input_grad accumulates in a private block written out
 * once with non-temporal stores, so the big tensors cross DRAM about once each. Points whose
 * stencil leaves the plane (or is clipped) are few: they follow the sorted ones, tap by tap. The
 * grid gradient of a point keeps per tap the sum over channels of g * v (fixed order, in acc) and
 * applies the derivative weights once. Blocks are a function of N and C only; with several, their
 * partial sums are added in block order after the parallel region, as the general path. */

typedef struct {
    int32_t q, nt;
    int32_t off[4];
    float w[4], wdx[4], wdy[4];
} edge_pt;

typedef struct {
    f32_grid_pt pt;
    int32_t key;
    float mx, my;
} pt_tmp;

typedef struct {
    f32_grid_pt *pts;   /* in-plane points sorted by y0 */
    edge_pt *edge;      /* the others, in point order */
    float *mult;        /* [nfast + nedge][2]: d coordinate / d grid value, table order */
    pt_tmp *tmp;
    int64_t *start;     /* [H + 1] */
    size_t nfast, nedge;
} bil_table;

static void bil_table_build(const f32_grid_sampler_params *p, const float *grid_n, bil_table *t)
{
    const int64_t H = p->H, W = p->W, P = p->Ho * p->Wo;
    const int ac = p->align_corners, quick = p->padding_mode == 0;
    const float xmax = (float)(W - 1), ymax = (float)(H - 1);
    size_t nf = 0, ne = 0;
    memset(t->start, 0, sizeof(int64_t) * (size_t)(H + 1));
    for (int64_t q = 0; q < P; q++) {
        const float gx = grid_n[2 * q], gy = grid_n[2 * q + 1];
        if (quick) { /* zeros padding: axis_taps's arithmetic for a point with all four taps inside */
            float mx, my;
            const float ix = unnormalize(gx, W, ac, &mx), iy = unnormalize(gy, H, ac, &my);
            if (ix >= 0.0f && ix < xmax && iy >= 0.0f && iy < ymax) {
                const int32_t x0 = (int32_t)ix, y0 = (int32_t)iy;
                t->tmp[nf] = (pt_tmp){{(int32_t)(y0 * W + x0), (int32_t)q, ix - (float)x0, iy - (float)y0}, y0, mx, my};
                t->start[y0 + 1]++;
                nf++;
                continue;
            }
        }
        taps tx, ty;
        axis_taps(p, gx, W, 1, &tx);
        axis_taps(p, gy, H, W, &ty);
        if (tx.n == 2 && ty.n == 2) {
            const int32_t y0 = (int32_t)(ty.off[0] / W);
            t->tmp[nf] = (pt_tmp){{(int32_t)(ty.off[0] + tx.off[0]), (int32_t)q, tx.w[1], ty.w[1]}, y0, tx.mult, ty.mult};
            t->start[y0 + 1]++;
            nf++;
            continue;
        }
        edge_pt *e = &t->edge[ne++];
        e->q = (int32_t)q;
        e->nt = 0;
        for (size_t r = 0; r < ty.n; r++)
            for (size_t c = 0; c < tx.n; c++, e->nt++) {
                e->off[e->nt] = (int32_t)(ty.off[r] + tx.off[c]);
                e->w[e->nt] = ty.w[r] * tx.w[c];
                e->wdx[e->nt] = ty.w[r] * tx.dw[c];
                e->wdy[e->nt] = ty.dw[r] * tx.w[c];
            }
        /* the edge points' multipliers fill mult from its end (the sorted ones fill the front) */
        t->mult[2 * (size_t)(P - 1 - (int64_t)(ne - 1))] = tx.mult;
        t->mult[2 * (size_t)(P - 1 - (int64_t)(ne - 1)) + 1] = ty.mult;
    }
    for (int64_t y = 0; y < H; y++) t->start[y + 1] += t->start[y];
    for (size_t k = 0; k < nf; k++) {
        const size_t d = (size_t)t->start[t->tmp[k].key]++;
        t->pts[d] = t->tmp[k].pt;
        t->mult[2 * d] = t->tmp[k].mx;
        t->mult[2 * d + 1] = t->tmp[k].my;
    }
    /* nf + ne == P: the edge multipliers fill [nf, P) in reverse order; put them in order */
    for (size_t a = nf, z = (size_t)P - 1; a < z; a++, z--)
        for (int i = 0; i < 2; i++) {
            const float m = t->mult[2 * a + i];
            t->mult[2 * a + i] = t->mult[2 * z + i];
            t->mult[2 * z + i] = m;
        }
    t->nfast = nf;
    t->nedge = ne;
}

/* channels per unit of the bilinear path: a function of N and C only (about 8 units in all), a
 * multiple of 8, or the tuning knob */
static int64_t pick_block(int64_t N, int64_t C)
{
    int64_t cb;
    if (conform_opt_grid_sampler_chunk > 0) cb = (conform_opt_grid_sampler_chunk + 15) / 16 * 16;
    else {
        const int64_t want = N >= 8 ? 1 : (8 + N - 1) / N;
        cb = ((C + want - 1) / want + 7) / 8 * 8;
    }
    return cb >= C ? C : cb;
}

static int bwd_bilinear(const f32_grid_sampler_params *p, const kernel_set *kn, const float *grad_output,
                        const float *input, const float *grid, float *input_grad, float *grid_grad,
                        const conform_exec *ex)
{
    const int64_t N = p->N, C = p->C, H = p->H, W = p->W, HW = H * W, P = p->Ho * p->Wo;
    const int want_in = p->output_mask[0], want_grid = p->output_mask[1];
    const int64_t cb = pick_block(N, C), nblk = (C + cb - 1) / cb, units = N * nblk;
    float *partial = want_grid && nblk > 1 ? conform_alloc_floats((size_t)nblk * (size_t)(N * P * 2)) : NULL;
    if (want_grid && nblk > 1 && !partial) return CONFORM_E_NOMEM;
    int err = 0;

#pragma omp parallel num_threads(conform_threads(ex))
    {
        bil_table t = {0};
        t.pts = malloc(sizeof(f32_grid_pt) * (size_t)P);
        t.edge = malloc(sizeof(edge_pt) * (size_t)P);
        t.mult = conform_alloc_floats((size_t)P * 2);
        t.tmp = malloc(sizeof(pt_tmp) * (size_t)P);
        t.start = malloc(sizeof(int64_t) * (size_t)(H + 1));
        float *acc = want_grid ? conform_alloc_floats((size_t)P * 4) : NULL;
        float *in8 = want_grid ? conform_alloc_floats((size_t)HW * 8) : NULL;
        float *io8 = want_in ? conform_alloc_floats((size_t)HW * 8) : NULL;
        float *go8 = conform_alloc_floats((size_t)P * 8);
        int mine = !t.pts || !t.edge || !t.mult || !t.tmp || !t.start || !go8 || (want_grid && (!acc || !in8)) ||
                   (want_in && !io8);
        if (io8) memset(io8, 0, sizeof(float) * 8 * (size_t)HW);
        if (mine) {
#pragma omp atomic write
            err = 1;
        }
#pragma omp barrier
        int failed;
#pragma omp atomic read
        failed = err;
        int64_t built = -1;
#pragma omp for schedule(dynamic, 1)
        for (int64_t u = 0; u < (failed ? 0 : units); u++) {
            const int64_t n = u / nblk, b = u % nblk, c0 = b * cb, cn = C - c0 < cb ? C - c0 : cb;
            if (built != n) {
                bil_table_build(p, grid + (size_t)n * (size_t)P * 2, &t);
                built = n;
            }
            const size_t nf = t.nfast, ne = t.nedge;
            for (int64_t c = c0; c < c0 + cn; c += 8) {
                const size_t pl = (size_t)(c0 + cn - c < 8 ? c0 + cn - c : 8);
                const float *go = grad_output + ((size_t)n * C + c) * (size_t)P;
                const float *in = input + ((size_t)n * C + c) * (size_t)HW;
                if (pl < 8) { /* unused lanes are zeros */
                    memset(go8, 0, sizeof(float) * 8 * (size_t)P);
                    if (in8) memset(in8, 0, sizeof(float) * 8 * (size_t)HW);
                }
                kn->tr(pl, (size_t)P, go, (size_t)P, go8, 8);
                if (in8) kn->tr(pl, (size_t)HW, in, (size_t)HW, in8, 8);
                kn->bil(nf, t.pts, (size_t)W, go8, in8, io8, acc, c == c0);
                for (size_t e = 0; e < ne; e++) {
                    const edge_pt *ep = &t.edge[e];
                    float *s = acc ? acc + 4 * (nf + e) : NULL;
                    if (s && c == c0) s[0] = s[1] = s[2] = s[3] = 0.0f;
                    const float *g = go8 + 8 * (size_t)ep->q;
                    for (int32_t k = 0; k < ep->nt; k++) {
                        /* all 8 lanes (unused ones are zeros): fixed-length loops the compiler
                         * vectorizes, and the channel sum in a register */
                        const size_t o = 8 * (size_t)ep->off[k];
                        if (io8)
                            for (size_t j = 0; j < 8; j++) io8[o + j] += ep->w[k] * g[j];
                        if (s) {
                            float a = s[k];
                            for (size_t j = 0; j < 8; j++) a += g[j] * in8[o + j];
                            s[k] = a;
                        }
                    }
                }
                if (io8) kn->unpack((size_t)HW, pl, io8, input_grad + ((size_t)n * C + (size_t)c) * (size_t)HW, (size_t)HW);
            }
            if (!acc) continue;
            float *gg = grid_grad + (size_t)n * (size_t)P * 2;
            float *part = partial ? partial + ((size_t)b * (size_t)N + (size_t)n) * (size_t)P * 2 : NULL;
            for (size_t k = 0; k < nf + ne; k++) {
                const float *s = acc + 4 * k;
                float sx, sy;
                size_t q;
                if (k < nf) {
                    const f32_grid_pt *pt = &t.pts[k];
                    const float ax = 1.0f - pt->lx, ay = 1.0f - pt->ly;
                    /* wdx = w_y x (-1, 1), wdy = (-1, 1) x w_x, taps in (r, c) order */
                    sx = -ay * s[0] + ay * s[1] + -pt->ly * s[2] + pt->ly * s[3];
                    sy = -ax * s[0] + -pt->lx * s[1] + ax * s[2] + pt->lx * s[3];
                    q = (size_t)pt->q;
                } else {
                    const edge_pt *ep = &t.edge[k - nf];
                    sx = sy = 0.0f;
                    for (int32_t i = 0; i < ep->nt; i++) {
                        sx += ep->wdx[i] * s[i];
                        sy += ep->wdy[i] * s[i];
                    }
                    q = (size_t)ep->q;
                }
                if (part) {
                    part[2 * q] = sx;
                    part[2 * q + 1] = sy;
                    if (b == 0) {
                        gg[2 * q] = t.mult[2 * k];
                        gg[2 * q + 1] = t.mult[2 * k + 1];
                    }
                } else {
                    gg[2 * q] = t.mult[2 * k] * sx;
                    gg[2 * q + 1] = t.mult[2 * k + 1] * sy;
                }
            }
        }
        free(t.pts);
        free(t.edge);
        free(t.mult);
        free(t.tmp);
        free(t.start);
        free(acc);
        free(in8);
        free(io8);
        free(go8);
    }
    if (!err && partial) {
        const int64_t np = N * P * 2;
#pragma omp parallel for num_threads(conform_threads(ex)) schedule(static)
        for (int64_t e = 0; e < np; e++) {
            float sum = partial[e];
            for (int64_t k = 1; k < nblk; k++) sum += partial[(size_t)k * (size_t)np + (size_t)e];
            grid_grad[e] *= sum;
        }
    }
    free(partial);
    return err ? CONFORM_E_NOMEM : CONFORM_OK;
}


int f32_grid_sampler_2d_bwd(const f32_grid_sampler_params *p, const float *grad_output,
                            const float *input, const float *grid, float *input_grad,
                            float *grid_grad, const conform_exec *ex)
{
    conform_isa isa;
    if (conform_opt_resolve_isa(ex, &isa) != CONFORM_OK) return CONFORM_E_ISA;
    const int64_t N = p->N, C = p->C, H = p->H, W = p->W, Ho = p->Ho, Wo = p->Wo, HW = H * W, P = Ho * Wo;
    const int want_in = p->output_mask[0], want_grid = p->output_mask[1];
    const kernel_set kn = kernels_for(isa);
    /* bilinear writes every element of both outputs itself (input_grad once, non-temporally) */
    if (p->interpolation_mode == 0 && N > 0 && C > 0 && P > 0 && HW > 0 && (want_in || want_grid) &&
        HW <= INT32_MAX && P <= INT32_MAX)
        return bwd_bilinear(p, &kn, grad_output, input, grid, input_grad, grid_grad, ex);
    if (want_in && N > 0 && C > 0 && HW > 0) memset(input_grad, 0, sizeof(float) * (size_t)(N * C * HW));
    if (want_grid && N > 0 && P > 0) memset(grid_grad, 0, sizeof(float) * (size_t)(N * P * 2));
    if (N <= 0 || C <= 0 || P <= 0 || HW <= 0 || (!want_in && !want_grid)) return CONFORM_OK;
    const int64_t cc = pick_chunk(C, HW, 2 << 20), nchunks = (C + cc - 1) / cc, units = N * nchunks;
    if (!conform_sizes_ok(HW, Wo, cc)) return CONFORM_E_NOMEM;
    /* partial grid gradients per chunk: [nchunks][N * P * 2] */
    float *partial = want_grid ? conform_alloc_floats((size_t)nchunks * (size_t)(N * P * 2)) : NULL;
    if (want_grid && !partial) return CONFORM_E_NOMEM;
    int err = 0;

#pragma omp parallel num_threads(conform_threads(ex))
    {
        float *plane = want_grid ? conform_alloc_floats((size_t)HW * (size_t)cc) : NULL;
        float *io = want_in ? conform_alloc_floats((size_t)HW * (size_t)cc) : NULL;
        float *gtile = conform_alloc_floats((size_t)Wo * (size_t)cc);
        int mine = (want_grid && !plane) || (want_in && !io) || !gtile;
        if (mine) {
#pragma omp atomic write
            err = 1;
        }
#pragma omp barrier
        int failed;
#pragma omp atomic read
        failed = err;
#pragma omp for schedule(dynamic, 1)
        for (int64_t u = 0; u < (failed ? 0 : units); u++) {
            const int64_t n = u / nchunks, k = u % nchunks, c0 = k * cc, cn = C - c0 < cc ? C - c0 : cc;
            if (plane) kn.tr((size_t)cn, (size_t)HW, input + ((size_t)n * C + c0) * HW, (size_t)HW, plane, (size_t)cc);
            if (io)
                for (int64_t r = 0; r < HW; r++) memset(io + (size_t)r * cc, 0, (size_t)cn * sizeof(float));
            float *part = partial ? partial + (size_t)k * (size_t)(N * P * 2) + (size_t)n * P * 2 : NULL;
            for (int64_t h = 0; h < Ho; h++) {
                kn.tr((size_t)cn, (size_t)Wo, grad_output + (((size_t)n * C + c0) * Ho + h) * Wo, (size_t)P, gtile,
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
                    kn.bwd((size_t)cn, ty.n, ty.off, ty.w, ty.dw, tx.n, tx.off, tx.w, tx.dw, plane,
                           gtile + (size_t)w * cc, io, part ? part + q * 2 : NULL);
                    if (part && (ty.n == 0 || tx.n == 0)) part[q * 2] = part[q * 2 + 1] = 0.0f;
                }
            }
            if (io) kn.tr((size_t)HW, (size_t)cn, io, (size_t)cc, input_grad + ((size_t)n * C + c0) * HW, (size_t)HW);
        }
        free(plane);
        free(io);
        free(gtile);
    }
    if (!err && partial) {
        const int64_t np = N * P * 2;
#pragma omp parallel for num_threads(conform_threads(ex)) schedule(static)
        for (int64_t e = 0; e < np; e++) {
            float s = partial[e];
            for (int64_t k = 1; k < nchunks; k++) s += partial[(size_t)k * (size_t)np + (size_t)e];
            grid_grad[e] *= s;
        }
    }
    free(partial);
    return err ? CONFORM_E_NOMEM : CONFORM_OK;
}
