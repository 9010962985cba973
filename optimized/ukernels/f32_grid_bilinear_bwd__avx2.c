/* f32_grid_bilinear_bwd, AVX2 + FMA: 8 channels a step; a point's four channel sums stay in four
 * registers across its channels and are reduced together once, by a horizontal-add tree. The
 * point D ahead has its grad_output row requested (it is read at random). */
#include "opt_internal.h"

#include <immintrin.h>

void f32_grid_bilinear_bwd_ukernel__avx2(size_t npts, const f32_grid_pt *pts, size_t cs, ptrdiff_t next_row,
                                         const float *go, const float *in, float *io, float *acc)
{
    const size_t D = 8;
    for (size_t k = 0; k < npts; k++) {
        const f32_grid_pt pt = pts[k];
        if (k + D < npts) {
            const char *a = (const char *)(go + cs * (size_t)pts[k + D].q);
            for (size_t b = 0; b < cs * sizeof(float); b += 64) _mm_prefetch(a + b, _MM_HINT_T0);
        }
        float w[4];
        f32_grid_pt_weights(&pt, w);
        const __m256 w0 = _mm256_set1_ps(w[0]), w1 = _mm256_set1_ps(w[1]), w2 = _mm256_set1_ps(w[2]), w3 = _mm256_set1_ps(w[3]);
        const ptrdiff_t x = (ptrdiff_t)cs * pt.off, s = (ptrdiff_t)cs;
        const float *g = go + cs * (size_t)pt.q;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (size_t c = 0; c < cs; c += 8) {
            const __m256 gv = _mm256_loadu_ps(g + c);
            if (io) {
                float *r0 = io + x + c, *r1 = r0 + s, *r2 = r0 + next_row, *r3 = r2 + s;
                _mm256_storeu_ps(r0, _mm256_fmadd_ps(w0, gv, _mm256_loadu_ps(r0)));
                _mm256_storeu_ps(r1, _mm256_fmadd_ps(w1, gv, _mm256_loadu_ps(r1)));
                _mm256_storeu_ps(r2, _mm256_fmadd_ps(w2, gv, _mm256_loadu_ps(r2)));
                _mm256_storeu_ps(r3, _mm256_fmadd_ps(w3, gv, _mm256_loadu_ps(r3)));
            }
            if (acc) {
                const float *v0 = in + x + c, *v1 = v0 + s, *v2 = v0 + next_row, *v3 = v2 + s;
                a0 = _mm256_fmadd_ps(gv, _mm256_loadu_ps(v0), a0);
                a1 = _mm256_fmadd_ps(gv, _mm256_loadu_ps(v1), a1);
                a2 = _mm256_fmadd_ps(gv, _mm256_loadu_ps(v2), a2);
                a3 = _mm256_fmadd_ps(gv, _mm256_loadu_ps(v3), a3);
            }
        }
        if (acc) {
            const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
            __m128 r = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
            _mm_storeu_ps(acc + 4 * k, r);
        }
    }
}
