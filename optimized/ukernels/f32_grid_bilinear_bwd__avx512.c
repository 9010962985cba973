/* f32_grid_bilinear_bwd, AVX-512: 16 channels a step; a point's four channel sums stay in four
 * registers across its channels and are reduced together once (halves folded pairwise, then
 * within 128-bit blocks). The point D ahead has its grad_output row requested (it is read at
 * random, from a buffer larger than L2).
 *
 * input_grad, up to 64 lanes: a row's points come sorted by column, so about 3 in 4 share a tap
 * column with the point before (same column 37%, next column 39% for a uniform grid). The right
 * column (both rows) stays in registers until a point no longer touches it, and a point that
 * does adds into it without a load and a store (a 512-bit store takes two cycles on Zen 4).
 * Measured on Zen 4, 64 lanes: 28.5 instead of 40.8 cycles a point alone; in the whole backward
 * 4% at 32x32 and 64x64, no change at 128x128, where memory bounds the sweep. Each element still
 * receives its points' terms one at a time in point order: the bits of the plain loop. */
#include "opt_internal.h"

#include <immintrin.h>

/* point k's four tap weights; the grad_output row of the point D ahead is asked for */
static inline __attribute__((always_inline)) void point_start(size_t k, size_t npts, const f32_grid_pt *pts, size_t cs,
                                                             const float *go, __m512 *w0, __m512 *w1, __m512 *w2,
                                                             __m512 *w3)
{
    const size_t D = 8;
    if (k + D < npts) {
        const char *a = (const char *)(go + cs * (size_t)pts[k + D].q);
        for (size_t b = 0; b < cs * sizeof(float); b += 64) _mm_prefetch(a + b, _MM_HINT_T0);
    }
    float w[4];
    f32_grid_pt_weights(&pts[k], w);
    *w0 = _mm512_set1_ps(w[0]);
    *w1 = _mm512_set1_ps(w[1]);
    *w2 = _mm512_set1_ps(w[2]);
    *w3 = _mm512_set1_ps(w[3]);
}

/* the four per-tap channel sums of a point into acc[0..3] */
static inline __attribute__((always_inline)) void reduce4(__m512 a0, __m512 a1, __m512 a2, __m512 a3, float *acc)
{
    const __m512i ifin = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 8, 4, 0);
    /* 256-bit halves: p0 = [a0 | a1], p1 = [a2 | a3], 8 partial lanes each */
    const __m512 p0 = _mm512_add_ps(_mm512_shuffle_f32x4(a0, a1, _MM_SHUFFLE(1, 0, 1, 0)),
                                    _mm512_shuffle_f32x4(a0, a1, _MM_SHUFFLE(3, 2, 3, 2)));
    const __m512 p1 = _mm512_add_ps(_mm512_shuffle_f32x4(a2, a3, _MM_SHUFFLE(1, 0, 1, 0)),
                                    _mm512_shuffle_f32x4(a2, a3, _MM_SHUFFLE(3, 2, 3, 2)));
    /* 128-bit blocks: [t0 t1 t2 t3], 4 partial lanes each, then within the blocks */
    __m512 r = _mm512_add_ps(_mm512_shuffle_f32x4(p0, p1, _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_f32x4(p0, p1, _MM_SHUFFLE(3, 1, 3, 1)));
    r = _mm512_add_ps(r, _mm512_permute_ps(r, _MM_SHUFFLE(1, 0, 3, 2)));
    r = _mm512_add_ps(r, _mm512_permute_ps(r, _MM_SHUFFLE(2, 3, 0, 1)));
    _mm_storeu_ps(acc, _mm512_castps512_ps128(_mm512_permutexvar_ps(ifin, r)));
}

/* the carried column cx (both rows) back to io; cx < 0: none */
static inline __attribute__((always_inline)) void store_column(const size_t nb, float *io, ptrdiff_t cx,
                                                              ptrdiff_t next_row, const __m512 *ct, const __m512 *cb)
{
    if (cx < 0) return;
    float *ft = io + (ptrdiff_t)(16 * nb) * cx, *fb = ft + next_row;
#pragma GCC unroll 4
    for (size_t j = 0; j < nb; j++) {
        _mm512_storeu_ps(ft + 16 * j, ct[j]);
        _mm512_storeu_ps(fb + 16 * j, cb[j]);
    }
}

/* nb = cs / 16 vectors a pixel (a constant after inlining); io != NULL */
static inline __attribute__((always_inline)) void bwd_carry(const size_t nb, size_t npts, const f32_grid_pt *pts,
                                                           ptrdiff_t next_row, const float *go, const float *in,
                                                           float *io, float *acc)
{
    const size_t cs = 16 * nb;
    __m512 ct[4] = {0}, cb[4] = {0}; /* the carried column: top row, bottom row */
    ptrdiff_t cx = -2;               /* its column (-2: none) */
    for (size_t k = 0; k < npts; k++) {
        const f32_grid_pt pt = pts[k];
        __m512 w0, w1, w2, w3;
        point_start(k, npts, pts, cs, go, &w0, &w1, &w2, &w3);
        const ptrdiff_t L = pt.off;
        const float *g = go + cs * (size_t)pt.q;
        float *t0 = io + (ptrdiff_t)cs * L, *b0 = t0 + next_row, *t1 = t0 + cs, *b1 = b0 + cs;
        __m512 gv[4];
#pragma GCC unroll 4
        for (size_t j = 0; j < nb; j++) gv[j] = _mm512_loadu_ps(g + 16 * j);
        if (cx == L) { /* the carried column is this point's left one: it is final for now */
#pragma GCC unroll 4
            for (size_t j = 0; j < nb; j++) {
                _mm512_storeu_ps(t0 + 16 * j, _mm512_fmadd_ps(w0, gv[j], ct[j]));
                _mm512_storeu_ps(b0 + 16 * j, _mm512_fmadd_ps(w2, gv[j], cb[j]));
                ct[j] = _mm512_fmadd_ps(w1, gv[j], _mm512_loadu_ps(t1 + 16 * j));
                cb[j] = _mm512_fmadd_ps(w3, gv[j], _mm512_loadu_ps(b1 + 16 * j));
            }
        } else if (cx == L + 1) { /* this point's right column */
#pragma GCC unroll 4
            for (size_t j = 0; j < nb; j++) {
                _mm512_storeu_ps(t0 + 16 * j, _mm512_fmadd_ps(w0, gv[j], _mm512_loadu_ps(t0 + 16 * j)));
                _mm512_storeu_ps(b0 + 16 * j, _mm512_fmadd_ps(w2, gv[j], _mm512_loadu_ps(b0 + 16 * j)));
                ct[j] = _mm512_fmadd_ps(w1, gv[j], ct[j]);
                cb[j] = _mm512_fmadd_ps(w3, gv[j], cb[j]);
            }
        } else {
            store_column(nb, io, cx, next_row, ct, cb);
#pragma GCC unroll 4
            for (size_t j = 0; j < nb; j++) {
                _mm512_storeu_ps(t0 + 16 * j, _mm512_fmadd_ps(w0, gv[j], _mm512_loadu_ps(t0 + 16 * j)));
                _mm512_storeu_ps(b0 + 16 * j, _mm512_fmadd_ps(w2, gv[j], _mm512_loadu_ps(b0 + 16 * j)));
                ct[j] = _mm512_fmadd_ps(w1, gv[j], _mm512_loadu_ps(t1 + 16 * j));
                cb[j] = _mm512_fmadd_ps(w3, gv[j], _mm512_loadu_ps(b1 + 16 * j));
            }
        }
        cx = L + 1;
        if (acc) {
            const float *v0 = in + (ptrdiff_t)cs * L, *v1 = v0 + cs, *v2 = v0 + next_row, *v3 = v2 + cs;
            __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
#pragma GCC unroll 4
            for (size_t j = 0; j < nb; j++) {
                a0 = _mm512_fmadd_ps(gv[j], _mm512_loadu_ps(v0 + 16 * j), a0);
                a1 = _mm512_fmadd_ps(gv[j], _mm512_loadu_ps(v1 + 16 * j), a1);
                a2 = _mm512_fmadd_ps(gv[j], _mm512_loadu_ps(v2 + 16 * j), a2);
                a3 = _mm512_fmadd_ps(gv[j], _mm512_loadu_ps(v3 + 16 * j), a3);
            }
            reduce4(a0, a1, a2, a3, acc + 4 * k);
        }
    }
    store_column(nb, io, cx, next_row, ct, cb);
}

void f32_grid_bilinear_bwd_ukernel__avx512(size_t npts, const f32_grid_pt *pts, size_t cs, ptrdiff_t next_row,
                                           const float *go, const float *in, float *io, float *acc)
{
    if (io && cs <= 64) {
        switch (cs / 16) {
        case 1: bwd_carry(1, npts, pts, next_row, go, in, io, acc); return;
        case 2: bwd_carry(2, npts, pts, next_row, go, in, io, acc); return;
        case 3: bwd_carry(3, npts, pts, next_row, go, in, io, acc); return;
        case 4: bwd_carry(4, npts, pts, next_row, go, in, io, acc); return;
        default: break;
        }
    }
    for (size_t k = 0; k < npts; k++) {
        const f32_grid_pt pt = pts[k];
        __m512 w0, w1, w2, w3;
        point_start(k, npts, pts, cs, go, &w0, &w1, &w2, &w3);
        const ptrdiff_t x = (ptrdiff_t)cs * pt.off, s = (ptrdiff_t)cs;
        const float *g = go + cs * (size_t)pt.q;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (size_t c = 0; c < cs; c += 16) {
            const __m512 gv = _mm512_loadu_ps(g + c);
            if (io) {
                float *r0 = io + x + c, *r1 = r0 + s, *r2 = r0 + next_row, *r3 = r2 + s;
                _mm512_storeu_ps(r0, _mm512_fmadd_ps(w0, gv, _mm512_loadu_ps(r0)));
                _mm512_storeu_ps(r1, _mm512_fmadd_ps(w1, gv, _mm512_loadu_ps(r1)));
                _mm512_storeu_ps(r2, _mm512_fmadd_ps(w2, gv, _mm512_loadu_ps(r2)));
                _mm512_storeu_ps(r3, _mm512_fmadd_ps(w3, gv, _mm512_loadu_ps(r3)));
            }
            if (acc) {
                const float *v0 = in + x + c, *v1 = v0 + s, *v2 = v0 + next_row, *v3 = v2 + s;
                a0 = _mm512_fmadd_ps(gv, _mm512_loadu_ps(v0), a0);
                a1 = _mm512_fmadd_ps(gv, _mm512_loadu_ps(v1), a1);
                a2 = _mm512_fmadd_ps(gv, _mm512_loadu_ps(v2), a2);
                a3 = _mm512_fmadd_ps(gv, _mm512_loadu_ps(v3), a3);
            }
        }
        if (acc) reduce4(a0, a1, a2, a3, acc + 4 * k);
    }
}
