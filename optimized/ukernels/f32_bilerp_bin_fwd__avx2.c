/* f32_bilerp_bin_fwd, AVX2 + FMA: 32 channels per pass in 4 accumulators, then 8, then a masked tail. */
#include "opt_internal.h"

#include <immintrin.h>

static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

void f32_bilerp_bin_fwd_ukernel__avx2(size_t channels, size_t nr, const int64_t *roff, const float *wy,
                                  size_t nc, const int64_t *coff, const float *wx,
                                  const float *in, float *out)
{
    size_t j = 0;
    for (; j + 32 <= channels; j += 32) {
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        __m256 a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
        for (size_t r = 0; r < nr; r++) {
            const float *row = in + roff[r] + j;
            const float wr = wy[r];
            for (size_t c = 0; c < nc; c++) {
                const __m256 w = _mm256_set1_ps(wr * wx[c]);
                const float *p = row + coff[c];
                a0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(p), a0);
                a1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(p + 8), a1);
                a2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(p + 16), a2);
                a3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(p + 24), a3);
            }
        }
        _mm256_storeu_ps(out + j, a0);
        _mm256_storeu_ps(out + j + 8, a1);
        _mm256_storeu_ps(out + j + 16, a2);
        _mm256_storeu_ps(out + j + 24, a3);
    }
    for (; j + 8 <= channels; j += 8) {
        __m256 a0 = _mm256_setzero_ps();
        for (size_t r = 0; r < nr; r++) {
            const float *row = in + roff[r] + j;
            const float wr = wy[r];
            for (size_t c = 0; c < nc; c++)
                a0 = _mm256_fmadd_ps(_mm256_set1_ps(wr * wx[c]), _mm256_loadu_ps(row + coff[c]), a0);
        }
        _mm256_storeu_ps(out + j, a0);
    }
    if (j < channels) {
        const __m256i m = _mm256_loadu_si256((const __m256i *)(mask_table + 8 - (channels - j)));
        __m256 a0 = _mm256_setzero_ps();
        for (size_t r = 0; r < nr; r++) {
            const float *row = in + roff[r] + j;
            const float wr = wy[r];
            for (size_t c = 0; c < nc; c++)
                a0 = _mm256_fmadd_ps(_mm256_set1_ps(wr * wx[c]), _mm256_maskload_ps(row + coff[c], m),
                                     a0);
        }
        _mm256_maskstore_ps(out + j, m, a0);
    }
}
