/* f32_bilerp_row_bwd, AVX2 + FMA: 32 channels per pass, then 8, then a masked tail; a column's sum
 * stays in registers for all its rows. */
#include "opt_internal.h"

#include <immintrin.h>

static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

void f32_bilerp_row_bwd_ukernel__avx2(size_t channels, size_t nr, const int64_t *roff, const float *wy,
                                      size_t ncol, const int64_t *coff, const size_t *cs, const int64_t *goff,
                                      const float *cw, const float *g, float *io)
{
    size_t j = 0;
    for (; j + 32 <= channels; j += 32) {
        for (size_t i = 0; i < ncol; i++) {
            __m256 t0 = _mm256_setzero_ps(), t1 = _mm256_setzero_ps();
            __m256 t2 = _mm256_setzero_ps(), t3 = _mm256_setzero_ps();
            for (size_t e = cs[i]; e < cs[i + 1]; e++) {
                const __m256 w = _mm256_set1_ps(cw[e]);
                const float *q = g + goff[e] + j;
                t0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(q), t0);
                t1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(q + 8), t1);
                t2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(q + 16), t2);
                t3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(q + 24), t3);
            }
            for (size_t r = 0; r < nr; r++) {
                const __m256 w = _mm256_set1_ps(wy[r]);
                float *p = io + roff[r] + coff[i] + j;
                _mm256_storeu_ps(p, _mm256_fmadd_ps(w, t0, _mm256_loadu_ps(p)));
                _mm256_storeu_ps(p + 8, _mm256_fmadd_ps(w, t1, _mm256_loadu_ps(p + 8)));
                _mm256_storeu_ps(p + 16, _mm256_fmadd_ps(w, t2, _mm256_loadu_ps(p + 16)));
                _mm256_storeu_ps(p + 24, _mm256_fmadd_ps(w, t3, _mm256_loadu_ps(p + 24)));
            }
        }
    }
    for (; j < channels; j += 8) {
        const size_t n = channels - j < 8 ? channels - j : 8;
        const __m256i m = _mm256_loadu_si256((const __m256i *)(mask_table + 8 - n));
        for (size_t i = 0; i < ncol; i++) {
            __m256 t0 = _mm256_setzero_ps();
            for (size_t e = cs[i]; e < cs[i + 1]; e++)
                t0 = _mm256_fmadd_ps(_mm256_set1_ps(cw[e]), _mm256_maskload_ps(g + goff[e] + j, m), t0);
            for (size_t r = 0; r < nr; r++) {
                float *p = io + roff[r] + coff[i] + j;
                _mm256_maskstore_ps(p, m, _mm256_fmadd_ps(_mm256_set1_ps(wy[r]), t0, _mm256_maskload_ps(p, m)));
            }
        }
    }
}
