/* f32_grid_bilinear_bwd, AVX2 + FMA: one 8-channel vector per tap; the four taps' channel sums
 * reduced together by a horizontal-add tree. */
#include "opt_internal.h"

#include <immintrin.h>

void f32_grid_bilinear_bwd_ukernel__avx2(size_t npts, const f32_grid_pt *pts, size_t W, const float *go8,
                                         const float *in8, float *io8, float *acc, int acc_init)
{
    for (size_t k = 0; k < npts; k++) {
        const f32_grid_pt pt = pts[k];
        const float ax = 1.0f - pt.lx, ay = 1.0f - pt.ly;
        const float w[4] = {ay * ax, ay * pt.lx, pt.ly * ax, pt.ly * pt.lx};
        const size_t o[4] = {(size_t)pt.off, (size_t)pt.off + 1, (size_t)pt.off + W, (size_t)pt.off + W + 1};
        const __m256 g = _mm256_loadu_ps(go8 + 8 * (size_t)pt.q);
        if (io8)
            for (int t = 0; t < 4; t++) {
                float *r = io8 + 8 * o[t];
                _mm256_storeu_ps(r, _mm256_fmadd_ps(_mm256_set1_ps(w[t]), g, _mm256_loadu_ps(r)));
            }
        if (acc) {
            const __m256 p0 = _mm256_mul_ps(g, _mm256_loadu_ps(in8 + 8 * o[0]));
            const __m256 p1 = _mm256_mul_ps(g, _mm256_loadu_ps(in8 + 8 * o[1]));
            const __m256 p2 = _mm256_mul_ps(g, _mm256_loadu_ps(in8 + 8 * o[2]));
            const __m256 p3 = _mm256_mul_ps(g, _mm256_loadu_ps(in8 + 8 * o[3]));
            const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(p0, p1), _mm256_hadd_ps(p2, p3));
            __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
            if (!acc_init) s = _mm_add_ps(_mm_loadu_ps(acc + 4 * k), s);
            _mm_storeu_ps(acc + 4 * k, s);
        }
    }
}
