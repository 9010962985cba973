/* f32_grid_bilinear_bwd, AVX-512: 16 channels a step; a point's four channel sums stay in four
 * registers across its channels and are reduced together once (halves folded pairwise, then
 * within 128-bit blocks). The point D ahead has its grad_output row requested (it is read at
 * random, from a buffer larger than L2). */
#include "opt_internal.h"

#include <immintrin.h>

void f32_grid_bilinear_bwd_ukernel__avx512(size_t npts, const f32_grid_pt *pts, size_t cs, ptrdiff_t next_row,
                                           const float *go, const float *in, float *io, float *acc)
{
    const size_t D = 8;
    const __m512i ifin = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 8, 4, 0);
    for (size_t k = 0; k < npts; k++) {
        const f32_grid_pt pt = pts[k];
        if (k + D < npts) {
            const char *a = (const char *)(go + cs * (size_t)pts[k + D].q);
            for (size_t b = 0; b < cs * sizeof(float); b += 64) _mm_prefetch(a + b, _MM_HINT_T0);
        }
        const float ax = 1.0f - pt.lx, ay = 1.0f - pt.ly;
        const __m512 w0 = _mm512_set1_ps(ay * ax), w1 = _mm512_set1_ps(ay * pt.lx);
        const __m512 w2 = _mm512_set1_ps(pt.ly * ax), w3 = _mm512_set1_ps(pt.ly * pt.lx);
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
        if (acc) {
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
            __m128 v = _mm512_castps512_ps128(_mm512_permutexvar_ps(ifin, r));
            _mm_storeu_ps(acc + 4 * k, v);
        }
    }
}
