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
 * Backward: the unit owns a zeroed private input_grad plane (no other unit touches those
 * channels of image n: no races, no atomics), scatters every point of image n in row order and
 * transposes the plane back once. The grid gradient of a point sums over all channels: each unit
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
} kernel_set;

static kernel_set kernels_for(conform_isa isa)
{
    kernel_set k;
    switch (isa) {
    case CONFORM_ISA_AVX512:
        k.bin = f32_bilerp_bin_ukernel__avx512;
        k.bwd = f32_grid_bwd_ukernel__avx512;
        k.tr = f32_transpose_ukernel__avx512;
        break;
    case CONFORM_ISA_AVX2:
        k.bin = f32_bilerp_bin_ukernel__avx2;
        k.bwd = f32_grid_bwd_ukernel__avx2;
        k.tr = f32_transpose_ukernel__avx2;
        break;
    default:
        k.bin = f32_bilerp_bin_ukernel__scalar;
        k.bwd = f32_grid_bwd_ukernel__scalar;
        k.tr = f32_transpose_ukernel__scalar;
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

static void axis_taps(const f32_grid_sampler_params *p, float c, int64_t S, int64_t stride, taps *t)
{
    const int ac = p->align_corners, pad = p->padding_mode;
    float i, mult;
    if (ac) {
        mult = (float)(S - 1) * 0.5f;
        i = (c + 1.0f) * 0.5f * (float)(S - 1);
    } else {
        mult = (float)S * 0.5f;
        i = ((c + 1.0f) * (float)S - 1.0f) * 0.5f;
    }
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

static void *alloc_floats(size_t n)
{
    size_t bytes = (n ? n : 1) * sizeof(float);
    bytes = (bytes + 63) & ~(size_t)63;
    return aligned_alloc(64, bytes);
}

/* channels per unit: independent of the thread count (the grid gradient's partial sums follow
 * the chunks), a multiple of 16, one plane of about budget bytes */
static int64_t pick_chunk(int64_t C, int64_t HW, int64_t budget)
{
    int64_t cc;
    if (conform_opt_grid_sampler_chunk > 0) cc = (conform_opt_grid_sampler_chunk + 15) / 16 * 16;
    else cc = 16 * (budget / (HW * 64) > 1 ? budget / (HW * 64) : 1);
    return cc >= C ? C : cc;
}

static int sizes_ok(int64_t HW, int64_t Wo, int64_t cc)
{
    const size_t big = SIZE_MAX / 4 / 64;
    return (size_t)HW <= big / (size_t)cc && (size_t)Wo <= big / (size_t)cc;
}

static int threads_of(const conform_exec *ex)
{
    int nt = (ex && ex->threads > 0) ? ex->threads : omp_get_max_threads();
    return nt < 1 ? 1 : nt;
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
    if (!sizes_ok(HW, Wo, cc)) return CONFORM_E_NOMEM;
    int err = 0;

#pragma omp parallel num_threads(threads_of(ex))
    {
        float *plane = alloc_floats((size_t)HW * (size_t)cc), *tile = alloc_floats((size_t)Wo * (size_t)cc);
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

int f32_grid_sampler_2d_bwd(const f32_grid_sampler_params *p, const float *grad_output,
                            const float *input, const float *grid, float *input_grad,
                            float *grid_grad, const conform_exec *ex)
{
    conform_isa isa;
    if (conform_opt_resolve_isa(ex, &isa) != CONFORM_OK) return CONFORM_E_ISA;
    const int64_t N = p->N, C = p->C, H = p->H, W = p->W, Ho = p->Ho, Wo = p->Wo, HW = H * W, P = Ho * Wo;
    const int want_in = p->output_mask[0], want_grid = p->output_mask[1];
    if (want_in && N > 0 && C > 0 && HW > 0) memset(input_grad, 0, sizeof(float) * (size_t)(N * C * HW));
    if (want_grid && N > 0 && P > 0) memset(grid_grad, 0, sizeof(float) * (size_t)(N * P * 2));
    if (N <= 0 || C <= 0 || P <= 0 || HW <= 0 || (!want_in && !want_grid)) return CONFORM_OK;
    const kernel_set kn = kernels_for(isa);
    const int64_t cc = pick_chunk(C, HW, 2 << 20), nchunks = (C + cc - 1) / cc, units = N * nchunks;
    if (!sizes_ok(HW, Wo, cc)) return CONFORM_E_NOMEM;
    /* partial grid gradients per chunk: [nchunks][N * P * 2] */
    float *partial = want_grid ? alloc_floats((size_t)nchunks * (size_t)(N * P * 2)) : NULL;
    if (want_grid && !partial) return CONFORM_E_NOMEM;
    int err = 0;

#pragma omp parallel num_threads(threads_of(ex))
    {
        float *plane = want_grid ? alloc_floats((size_t)HW * (size_t)cc) : NULL;
        float *io = want_in ? alloc_floats((size_t)HW * (size_t)cc) : NULL;
        float *gtile = alloc_floats((size_t)Wo * (size_t)cc);
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
#pragma omp parallel for num_threads(threads_of(ex)) schedule(static)
        for (int64_t e = 0; e < np; e++) {
            float s = partial[e];
            for (int64_t k = 1; k < nchunks; k++) s += partial[(size_t)k * (size_t)np + (size_t)e];
            grid_grad[e] *= s;
        }
    }
    free(partial);
    return err ? CONFORM_E_NOMEM : CONFORM_OK;
}
