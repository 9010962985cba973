/* f32_bilerp_bin_bwd, AVX2 + FMA: 32 channels per pass, then 8, then a masked tail. */
#include "opt_internal.h"

#include <immintrin.h>

static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

void f32_bilerp_bin_bwd_ukernel__avx2(size_t channels, size_t nr, const int64_t *roff,
                                          const float *wy, size_t nc, const int64_t *coff,
                                          const float *wx, const float *g, float *io)
{
    size_t j = 0;
    for (; j + 32 <= channels; j += 32) {
        const __m256 g0 = _mm256_loadu_ps(g + j), g1 = _mm256_loadu_ps(g + j + 8);
        const __m256 g2 = _mm256_loadu_ps(g + j + 16), g3 = _mm256_loadu_ps(g + j + 24);
        for (size_t r = 0; r < nr; r++) {
            float *row = io + roff[r] + j;
            const float wr = wy[r];
            for (size_t c = 0; c < nc; c++) {
                const __m256 w = _mm256_set1_ps(wr * wx[c]);
                float *p = row + coff[c];
                _mm256_storeu_ps(p, _mm256_fmadd_ps(w, g0, _mm256_loadu_ps(p)));
                _mm256_storeu_ps(p + 8, _mm256_fmadd_ps(w, g1, _mm256_loadu_ps(p + 8)));
                _mm256_storeu_ps(p + 16, _mm256_fmadd_ps(w, g2, _mm256_loadu_ps(p + 16)));
                _mm256_storeu_ps(p + 24, _mm256_fmadd_ps(w, g3, _mm256_loadu_ps(p + 24)));
            }
        }
    }
    for (; j + 8 <= channels; j += 8) {
        const __m256 g0 = _mm256_loadu_ps(g + j);
        for (size_t r = 0; r < nr; r++) {
            float *row = io + roff[r] + j;
            const float wr = wy[r];
            for (size_t c = 0; c < nc; c++) {
                float *p = row + coff[c];
                _mm256_storeu_ps(p, _mm256_fmadd_ps(_mm256_set1_ps(wr * wx[c]), g0, _mm256_loadu_ps(p)));
            }
        }
    }
    if (j < channels) {
        const __m256i m = _mm256_loadu_si256((const __m256i *)(mask_table + 8 - (channels - j)));
        const __m256 g0 = _mm256_maskload_ps(g + j, m);
        for (size_t r = 0; r < nr; r++) {
            float *row = io + roff[r] + j;
            const float wr = wy[r];
            for (size_t c = 0; c < nc; c++) {
                float *p = row + coff[c];
                _mm256_maskstore_ps(p, m, _mm256_fmadd_ps(_mm256_set1_ps(wr * wx[c]), g0,
                                                          _mm256_maskload_ps(p, m)));
            }
        }
    }
}
