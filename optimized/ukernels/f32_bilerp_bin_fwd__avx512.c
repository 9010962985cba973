/* f32_bilerp_bin_fwd, AVX-512: 64 channels per pass in 4 accumulators, then 16, then a masked tail. */
#include "opt_internal.h"

#include <immintrin.h>

void f32_bilerp_bin_fwd_ukernel__avx512(size_t channels, size_t nr, const int64_t *roff, const float *wy,
                                    size_t nc, const int64_t *coff, const float *wx,
                                    const float *in, float *out)
{
    size_t j = 0;
    for (; j + 64 <= channels; j += 64) {
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
        __m512 a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
        for (size_t r = 0; r < nr; r++) {
            const float *row = in + roff[r] + j;
            const float wr = wy[r];
            for (size_t c = 0; c < nc; c++) {
                const __m512 w = _mm512_set1_ps(wr * wx[c]);
                const float *p = row + coff[c];
                a0 = _mm512_fmadd_ps(w, _mm512_loadu_ps(p), a0);
                a1 = _mm512_fmadd_ps(w, _mm512_loadu_ps(p + 16), a1);
                a2 = _mm512_fmadd_ps(w, _mm512_loadu_ps(p + 32), a2);
                a3 = _mm512_fmadd_ps(w, _mm512_loadu_ps(p + 48), a3);
            }
        }
        _mm512_storeu_ps(out + j, a0);
        _mm512_storeu_ps(out + j + 16, a1);
        _mm512_storeu_ps(out + j + 32, a2);
        _mm512_storeu_ps(out + j + 48, a3);
    }
    for (; j < channels; j += 16) {
        const size_t n = channels - j < 16 ? channels - j : 16;
        const __mmask16 m = _cvtu32_mask16((uint32_t)((1u << n) - 1u));
        __m512 a0 = _mm512_setzero_ps();
        for (size_t r = 0; r < nr; r++) {
            const float *row = in + roff[r] + j;
            const float wr = wy[r];
            for (size_t c = 0; c < nc; c++)
                a0 = _mm512_fmadd_ps(_mm512_set1_ps(wr * wx[c]), _mm512_maskz_loadu_ps(m, row + coff[c]), a0);
        }
        _mm512_mask_storeu_ps(out + j, m, a0);
    }
}
