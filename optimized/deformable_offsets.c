/* deformable_offsets forward / backward drivers: sample geometry, threading and dispatch to the
 * per-ISA microkernels.
 *
 * Layout. Everything is NHWC, so the C channels of a pixel are contiguous: a sample's four
 * corners are four contiguous channel vectors of x (grad_x), its output (grad) one contiguous
 * vector of y (grad). The position, cell and weights of a sample are computed once in float32 in
 * the spec's order (px = (wo*sw - pl + j*dw) + offset: the integer base is exact, one rounding)
 * and shared by every channel of its group; corners outside the plane point at a zero vector
 * (reads) or a per-thread sink (writes), so the microkernels never branch.
 *
 * Forward: work units are output rows (n, ho); each y element is written once.
 * Backward: work units are (n, group, channel chunk); a unit owns the grad_x channel slice
 * [c0, c0+nc) of image n, zeroes it, and scatters every sample of its group into it in the fixed
 * order (ho, i, wo, j): no two threads touch the same grad_x element, no atomics. The offset
 * gradients are sums over the group's channels: a unit writes its chunk's three partial sums per
 * sample into a buffer that is reduced afterwards in chunk order. The chunking depends on the
 * shape only, never on the thread count, so results are bitwise the same for any thread count. */
#include "opt_internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>


/* One sample's geometry: corner pixel indices (-1: outside the plane) and weights. */
typedef struct {
    int64_t pix[4];   /* (h0,w0) (h0,w1) (h1,w0) (h1,w1) as h*W + w, or -1 */
    float hh, lh, hw, lw;
} sample_geom;

/* floor of a finite position as an index, clamped far outside the plane (where every corner is
 * outside anyway) so it fits an int64 */
static inline int64_t floor_index(float v, int64_t n, float *frac)
{
    const float f = floorf(v);
    *frac = v - f;
    if (f < -3.0f) return -3;
    if (f > (float)n + 2.0f) return n + 2;
    return (int64_t)f;
}

static inline void geom_at(int64_t H, int64_t W, float py, float px, sample_geom *s)
{
    const int64_t h0 = floor_index(py, H, &s->lh), w0 = floor_index(px, W, &s->lw);
    s->hh = 1.0f - s->lh;
    s->hw = 1.0f - s->lw;
    const int hin[2] = {h0 >= 0 && h0 < H, h0 + 1 >= 0 && h0 + 1 < H};
    const int win[2] = {w0 >= 0 && w0 < W, w0 + 1 >= 0 && w0 + 1 < W};
    for (int u = 0; u < 2; u++)
        for (int v = 0; v < 2; v++)
            s->pix[2 * u + v] = hin[u] && win[v] ? (h0 + u) * W + (w0 + v) : -1;
}

/* ---- forward ---------------------------------------------------------------------------- */

/* An infinite mask: m times the bilinear sum, grouped as spec 5 writes it. The weights scaled by m
 * first (the finite path) would turn a zero corner into inf x 0 and opposite-signed corners into
 * inf - inf, a NaN where the spec gives +-inf. Rare: plain stores, no microkernel. */
static void fwd_infinite_mask(size_t nc, const float *const *v, const sample_geom *s, float m, float *dst)
{
    const float w0 = s->hh * s->hw, w1 = s->hh * s->lw, w2 = s->lh * s->hw, w3 = s->lh * s->lw;
    for (size_t j = 0; j < nc; j++) dst[j] = m * (w0 * v[0][j] + w1 * v[1][j] + w2 * v[2][j] + w3 * v[3][j]);
}

int f32_deformable_offsets_fwd(const f32_deformable_params *p, const float *x, const float *offsets, float *y,
                               const conform_exec *ex)
{
    conform_isa isa;
    if (conform_opt_resolve_isa(ex, &isa) != CONFORM_OK) return CONFORM_E_ISA;
    if (p->N <= 0 || p->C <= 0 || p->Ho <= 0 || p->Wo <= 0 || p->kh <= 0 || p->kw <= 0 || p->dg <= 0)
        return CONFORM_OK; /* y is empty */
    const conform_ukernels kn = *conform_ukernels_for(isa);
    const int64_t N = p->N, H = p->H, W = p->W, C = p->C, kh = p->kh, kw = p->kw, Ho = p->Ho, Wo = p->Wo;
    const int64_t K = kh * kw, dgK = p->dg * K, cpg = C / p->dg, YW = Wo * kw;
    float *zero = calloc((size_t)C, sizeof(float));
    if (!zero) return CONFORM_E_NOMEM;
    const int nt = conform_threads(ex);

    /* rows in small dynamic chunks: a thread on a core another process holds takes fewer; y is
     * streamed (deform_fwd), each thread fences its stores before the region ends */
#pragma omp parallel num_threads(nt)
    {
#pragma omp for schedule(dynamic, 4) nowait
        for (int64_t row = 0; row < N * Ho; row++) {
            const int64_t n = row / Ho, ho = row % Ho;
            const float *xn = x + (size_t)n * H * W * C;
            for (int64_t wo = 0; wo < Wo; wo++) {
                const float *o = offsets + ((size_t)(n * Ho + ho) * Wo + wo) * 3 * dgK;
                for (int64_t g = 0; g < p->dg; g++)
                    for (int64_t i = 0; i < kh; i++) {
                        const float by = (float)(ho * p->sh - p->pt + i * p->dh);
                        float *yrow = y + ((size_t)(n * Ho + ho) * kh + i) * YW * C;
                        for (int64_t j = 0; j < kw; j++) {
                            const int64_t k = g * K + i * kw + j;
                            const float px = (float)(wo * p->sw - p->pl + j * p->dw) + o[k];
                            const float py = by + o[dgK + k], m = o[2 * dgK + k];
                            float *dst = yrow + (size_t)(wo * kw + j) * C + g * cpg;
                            if (!isfinite(px) || !isfinite(py)) { /* spec 0: samples nothing */
                                memset(dst, 0, (size_t)cpg * sizeof(float));
                                continue;
                            }
                            sample_geom s;
                            geom_at(H, W, py, px, &s);
                            const float w[4] = {m * (s.hh * s.hw), m * (s.hh * s.lw), m * (s.lh * s.hw),
                                                m * (s.lh * s.lw)};
                            const float *v[4];
                            for (int c = 0; c < 4; c++)
                                v[c] = s.pix[c] >= 0 ? xn + (size_t)s.pix[c] * C + g * cpg : zero;
                            if (isinf(m)) fwd_infinite_mask((size_t)cpg, v, &s, m, dst);
                            else kn.deform_fwd((size_t)cpg, v, w, dst);
                        }
                    }
            }
        }
        kn.stream_fence();
    }
    free(zero);
    return CONFORM_OK;
}

/* ---- backward --------------------------------------------------------------------------- */

#define PF_SAMPLES 8
/* grad is read once, in order, a vector per sample between random reads and writes of x and
 * grad_x that the hardware prefetcher does not tell from it: its lines 8 samples ahead are asked
 * for (perf: 35% of the kernel's samples waited on this load before) */
static inline void prefetch_ahead(const float *g, size_t C, size_t nc)
{
    const char *a = (const char *)(g + PF_SAMPLES * C);
    for (size_t b = 0; b < nc * sizeof(float); b += 64) __builtin_prefetch(a + b, 0, 3);
}

/* Channel chunks per group: about 128 channels each (a multiple of 16), and at least 2 units in
 * all when the channels allow it, so a single image still feeds two threads. Depends on the
 * shape only. Several chunks cost a partial-sum buffer and a reduction pass, so no more. */
static int64_t chunks_per_group(int64_t N, int64_t dg, int64_t cpg)
{
    int64_t nch = (cpg + 127) / 128;
    while (N * dg * nch < 2 && cpg / (nch + 1) >= 16) nch++;
    return nch < 1 ? 1 : nch;
}

/* One backward call: its shape, microkernels and buffers, shared by its units. */
typedef struct {
    const f32_deformable_params *p;
    conform_ukernels kn;
    const float *grad, *x, *offsets, *zero;
    float *grad_x, *grad_offsets, *part; /* part: [unit][P][K][3] partial sums, or NULL (one chunk) */
    int64_t cc, nchunk;                  /* channels per chunk (the last may be short), chunks per group */
} df_bwd;

/* The offset gradients of a sample with an infinite mask, G*m per channel as spec 6 groups them:
 * the channel sum times m (the finite path) is +-inf where the channels' terms are opposite
 * infinities or a 0 x inf, NaN in the spec */
static void bwd_infinite_mask(size_t nc, const float *g, const float *const *v, const sample_geom *s, float m,
                              float acc[2])
{
    float ax = 0, ay = 0;
    for (size_t j = 0; j < nc; j++) {
        const float Gm = g[j] * m, v0 = v[0][j], v1 = v[1][j], v2 = v[2][j], v3 = v[3][j];
        ax += Gm * (s->hh * (v1 - v0) + s->lh * (v3 - v2));
        ay += Gm * (s->hw * (v2 - v0) + s->lw * (v3 - v1));
    }
    acc[0] = ax;
    acc[1] = ay;
}

/* One sample of a unit's nc channels: scatters into gxn (sink for corners outside the plane) and
 * returns its offset and mask gradients over those channels in acc */
static void bwd_sample(const df_bwd *b, const float *xn, float *gxn, float *sink, const float *gsrc, float py,
                       float px, float m, size_t nc, float acc[3])
{
    const int64_t H = b->p->H, W = b->p->W, C = b->p->C;
    acc[0] = acc[1] = acc[2] = 0;
    /* the window test (false for NaN): outside, the sample contributes nothing */
    if (!(py > -1.0f && py < (float)H && px > -1.0f && px < (float)W)) return;
    sample_geom s;
    geom_at(H, W, py, px, &s);
    const float wg[4] = {m * (s.hh * s.hw), m * (s.hh * s.lw), m * (s.lh * s.hw), m * (s.lh * s.lw)};
    const float cf[4] = {s.hh, s.lh, s.hw, s.lw};
    const float *v[4];
    float *io[4];
    for (int c = 0; c < 4; c++) {
        v[c] = s.pix[c] >= 0 ? xn + (size_t)s.pix[c] * C : b->zero;
        io[c] = s.pix[c] >= 0 ? gxn + (size_t)s.pix[c] * C : sink;
    }
    b->kn.deform_bwd(nc, gsrc, v, io, wg, cf, acc);
    if (isinf(m)) bwd_infinite_mask(nc, gsrc, v, &s, m, acc);
    else {
        acc[0] *= m;
        acc[1] *= m;
    }
}

/* Unit u = (image n, group g, chunk ch): zeroes its grad_x channel slice, scatters every sample
 * of the group into it in the order (ho, i, wo, j), and writes the chunk's offset gradients
 * (to grad_offsets when the group is one chunk, else to its partial sums) */
static void bwd_unit(const df_bwd *b, int64_t u, float *sink)
{
    const f32_deformable_params *p = b->p;
    const int64_t H = p->H, W = p->W, C = p->C, kh = p->kh, kw = p->kw, Ho = p->Ho, Wo = p->Wo;
    const int64_t K = kh * kw, dgK = p->dg * K, OC = 3 * dgK, YW = Wo * kw, cpg = C / p->dg;
    const int64_t n = u / (p->dg * b->nchunk), g = (u / b->nchunk) % p->dg, ch = u % b->nchunk;
    const int64_t c0 = g * cpg + ch * b->cc, nc = cpg - ch * b->cc < b->cc ? cpg - ch * b->cc : b->cc;
    const float *xn = b->x + (size_t)n * H * W * C + c0;
    float *gxn = b->grad_x + (size_t)n * H * W * C + c0;
    float *pu = b->part ? b->part + (size_t)u * Ho * Wo * K * 3 : NULL;
    if (nc == C) memset(gxn, 0, (size_t)H * W * C * sizeof(float)); /* the unit's slice */
    else
        for (int64_t q = 0; q < H * W; q++) memset(gxn + (size_t)q * C, 0, (size_t)nc * sizeof(float));
    /* (ho, i) outer: grad is read as one contiguous stream, row ho*kh+i */
    for (int64_t ho = 0; ho < Ho; ho++)
        for (int64_t i = 0; i < kh; i++) {
            const float by = (float)(ho * p->sh - p->pt + i * p->dh);
            const float *grow = b->grad + ((size_t)(n * Ho + ho) * kh + i) * YW * C + c0;
            for (int64_t wo = 0; wo < Wo; wo++) {
                const float *o = b->offsets + ((size_t)(n * Ho + ho) * Wo + wo) * OC;
                float *go = b->grad_offsets + ((size_t)(n * Ho + ho) * Wo + wo) * OC;
                for (int64_t j = 0; j < kw; j++) {
                    const int64_t kk = i * kw + j, k = g * K + kk;
                    const float px = (float)(wo * p->sw - p->pl + j * p->dw) + o[k];
                    const float py = by + o[dgK + k], m = o[2 * dgK + k];
                    float acc[3];
                    prefetch_ahead(grow + (size_t)(wo * kw + j) * C, (size_t)C, (size_t)nc);
                    bwd_sample(b, xn, gxn, sink, grow + (size_t)(wo * kw + j) * C, py, px, m, (size_t)nc, acc);
                    float *q = pu ? pu + ((size_t)(ho * Wo + wo) * K + kk) * 3 : NULL;
                    for (int t = 0; t < 3; t++) *(q ? q + t : go + t * dgK + k) = acc[t];
                }
            }
        }
}

/* grad_offsets from the partial sums: the chunks of a group summed in chunk order */
static void bwd_sum_chunks(const df_bwd *b, int nt)
{
    const f32_deformable_params *p = b->p;
    const int64_t K = p->kh * p->kw, dg = p->dg, dgK = dg * K, OC = 3 * dgK, P = p->Ho * p->Wo, nchunk = b->nchunk;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 256)
    for (int64_t r = 0; r < p->N * dg * P; r++) {
        const int64_t n = r / (dg * P), g = (r / P) % dg, pos = r % P;
        float *go = b->grad_offsets + ((size_t)n * P + pos) * OC;
        for (int64_t kk = 0; kk < K; kk++) {
            float s[3] = {0, 0, 0};
            for (int64_t ch = 0; ch < nchunk; ch++) {
                const float *q = b->part + ((((size_t)(n * dg + g) * nchunk + ch) * P + pos) * K + kk) * 3;
                s[0] += q[0];
                s[1] += q[1];
                s[2] += q[2];
            }
            const int64_t k = g * K + kk;
            go[k] = s[0];
            go[dgK + k] = s[1];
            go[2 * dgK + k] = s[2];
        }
    }
}

int f32_deformable_offsets_bwd(const f32_deformable_params *p, const float *grad, const float *x,
                               const float *offsets, float *grad_x, float *grad_offsets, const conform_exec *ex)
{
    conform_isa isa;
    if (conform_opt_resolve_isa(ex, &isa) != CONFORM_OK) return CONFORM_E_ISA;
    const int64_t N = p->N, H = p->H, W = p->W, C = p->C, K = p->kh * p->kw;
    const size_t nx = (size_t)(N > 0 && H > 0 && W > 0 && C > 0 ? N * H * W * C : 0);
    const size_t no = (size_t)(N > 0 && p->Ho > 0 && p->Wo > 0 && K > 0 && p->dg > 0 ? N * p->Ho * p->Wo * 3 * p->dg * K : 0);
    if (!nx || !no) { /* nothing to sample, or nowhere to scatter: all zeros */
        if (nx) memset(grad_x, 0, nx * sizeof(float));
        if (no) memset(grad_offsets, 0, no * sizeof(float));
        return CONFORM_OK;
    }
    const int64_t cpg = C / p->dg, nch = chunks_per_group(N, p->dg, cpg);
    df_bwd b = {.p = p, .kn = *conform_ukernels_for(isa), .grad = grad, .x = x, .offsets = offsets,
                .grad_x = grad_x, .grad_offsets = grad_offsets};
    b.cc = ((cpg + nch - 1) / nch + 15) / 16 * 16;
    b.nchunk = (cpg + b.cc - 1) / b.cc;
    const int64_t units = N * p->dg * b.nchunk;
    if (b.nchunk > 1 && !(b.part = conform_scratch_alloc((size_t)units * (size_t)(p->Ho * p->Wo * K) * 3 * sizeof(float))))
        return CONFORM_E_NOMEM;
    float *zero = calloc((size_t)b.cc, sizeof(float));
    const int nt = conform_threads(ex);
    const size_t sink_bytes = (size_t)b.cc * sizeof(float);
    void **bufs = zero ? conform_thread_bufs(nt, 1, &sink_bytes) : NULL;
    if (!bufs) {
        free(zero);
        conform_scratch_free(b.part);
        return CONFORM_E_NOMEM;
    }
    b.zero = zero;

#pragma omp parallel num_threads(nt)
    {
        float *sink = bufs[omp_get_thread_num()];
        memset(sink, 0, sink_bytes);
#pragma omp for schedule(dynamic, 1)
        for (int64_t u = 0; u < units; u++) bwd_unit(&b, u, sink);
    }
    conform_thread_bufs_free(bufs, nt, 1);
    if (b.part) bwd_sum_chunks(&b, nt);
    conform_scratch_free(b.part);
    free(zero);
    return CONFORM_OK;
}
