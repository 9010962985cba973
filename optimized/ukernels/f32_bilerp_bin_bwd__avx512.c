/* f32_bilerp_bin_bwd, AVX-512: 64 channels per pass, then 16, then a masked tail. */
#include "opt_internal.h"

#include <immintrin.h>

void f32_bilerp_bin_bwd_ukernel__avx512(size_t channels, size_t nr, const int64_t *roff,
                                            const float *wy, size_t nc, const int64_t *coff,
                                            const float *wx, const float *g, float *io)
{
    size_t j = 0;
    for (; j + 64 <= channels; j += 64) {
        const __m512 g0 = _mm512_loadu_ps(g + j), g1 = _mm512_loadu_ps(g + j + 16);
        const __m512 g2 = _mm512_loadu_ps(g + j + 32), g3 = _mm512_loadu_ps(g + j + 48);
        for (size_t r = 0; r < nr; r++) {
            float *row = io + roff[r] + j;
            const float wr = wy[r];
            for (size_t c = 0; c < nc; c++) {
                const __m512 w = _mm512_set1_ps(wr * wx[c]);
                float *p = row + coff[c];
                _mm512_storeu_ps(p, _mm512_fmadd_ps(w, g0, _mm512_loadu_ps(p)));
                _mm512_storeu_ps(p + 16, _mm512_fmadd_ps(w, g1, _mm512_loadu_ps(p + 16)));
                _mm512_storeu_ps(p + 32, _mm512_fmadd_ps(w, g2, _mm512_loadu_ps(p + 32)));
                _mm512_storeu_ps(p + 48, _mm512_fmadd_ps(w, g3, _mm512_loadu_ps(p + 48)));
            }
        }
    }
    for (; j < channels; j += 16) {
        const size_t n = channels - j < 16 ? channels - j : 16;
        const __mmask16 m = _cvtu32_mask16((uint32_t)((1u << n) - 1u));
        const __m512 g0 = _mm512_maskz_loadu_ps(m, g + j);
        for (size_t r = 0; r < nr; r++) {
            float *row = io + roff[r] + j;
            const float wr = wy[r];
            for (size_t c = 0; c < nc; c++) {
                float *p = row + coff[c];
                _mm512_mask_storeu_ps(p, m, _mm512_fmadd_ps(_mm512_set1_ps(wr * wx[c]), g0,
                                                            _mm512_maskz_loadu_ps(m, p)));
            }
        }
    }
}
