/* f32_grid_bilinear_fwd, AVX2 + FMA: 8 channels a step, the four taps chained by FMAs. */
#include "opt_internal.h"

#include <immintrin.h>

void f32_grid_bilinear_fwd_ukernel__avx2(size_t npts, const f32_grid_pt *pts, size_t cs, ptrdiff_t next_row,
                                         const float *in, float *out)
{
    for (size_t k = 0; k < npts; k++) {
        const f32_grid_pt pt = pts[k];
        float w[4];
        f32_grid_pt_weights(&pt, w);
        const __m256 w0 = _mm256_set1_ps(w[0]), w1 = _mm256_set1_ps(w[1]), w2 = _mm256_set1_ps(w[2]), w3 = _mm256_set1_ps(w[3]);
        const float *v0 = in + (ptrdiff_t)cs * pt.off, *v1 = v0 + cs, *v2 = v0 + next_row, *v3 = v2 + cs;
        float *r = out + cs * (size_t)pt.q;
        for (size_t c = 0; c < cs; c += 8) {
            __m256 a = _mm256_mul_ps(w0, _mm256_loadu_ps(v0 + c));
            a = _mm256_fmadd_ps(w1, _mm256_loadu_ps(v1 + c), a);
            a = _mm256_fmadd_ps(w2, _mm256_loadu_ps(v2 + c), a);
            _mm256_storeu_ps(r + c, _mm256_fmadd_ps(w3, _mm256_loadu_ps(v3 + c), a));
        }
    }
}
