/* f32_bilerp_row_bwd, AVX-512: 64 channels per pass, then 16, then a masked tail; a column's sum
 * stays in registers for all its rows. */
#include "opt_internal.h"

#include <immintrin.h>

void f32_bilerp_row_bwd_ukernel__avx512(size_t channels, size_t nr, const int64_t *roff, const float *wy,
                                        size_t ncol, const int64_t *coff, const size_t *cs, const int64_t *goff,
                                        const float *cw, const float *g, float *io)
{
    size_t j = 0;
    for (; j + 64 <= channels; j += 64) {
        for (size_t i = 0; i < ncol; i++) {
            __m512 t0 = _mm512_setzero_ps(), t1 = _mm512_setzero_ps();
            __m512 t2 = _mm512_setzero_ps(), t3 = _mm512_setzero_ps();
            for (size_t e = cs[i]; e < cs[i + 1]; e++) {
                const __m512 w = _mm512_set1_ps(cw[e]);
                const float *q = g + goff[e] + j;
                t0 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q), t0);
                t1 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q + 16), t1);
                t2 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q + 32), t2);
                t3 = _mm512_fmadd_ps(w, _mm512_loadu_ps(q + 48), t3);
            }
            for (size_t r = 0; r < nr; r++) {
                const __m512 w = _mm512_set1_ps(wy[r]);
                float *p = io + roff[r] + coff[i] + j;
                _mm512_storeu_ps(p, _mm512_fmadd_ps(w, t0, _mm512_loadu_ps(p)));
                _mm512_storeu_ps(p + 16, _mm512_fmadd_ps(w, t1, _mm512_loadu_ps(p + 16)));
                _mm512_storeu_ps(p + 32, _mm512_fmadd_ps(w, t2, _mm512_loadu_ps(p + 32)));
                _mm512_storeu_ps(p + 48, _mm512_fmadd_ps(w, t3, _mm512_loadu_ps(p + 48)));
            }
        }
    }
    for (; j < channels; j += 16) {
        const size_t n = channels - j < 16 ? channels - j : 16;
        const __mmask16 m = _cvtu32_mask16((uint32_t)((1u << n) - 1u));
        for (size_t i = 0; i < ncol; i++) {
            __m512 t0 = _mm512_setzero_ps();
            for (size_t e = cs[i]; e < cs[i + 1]; e++)
                t0 = _mm512_fmadd_ps(_mm512_set1_ps(cw[e]), _mm512_maskz_loadu_ps(m, g + goff[e] + j), t0);
            for (size_t r = 0; r < nr; r++) {
                float *p = io + roff[r] + coff[i] + j;
                _mm512_mask_storeu_ps(p, m, _mm512_fmadd_ps(_mm512_set1_ps(wy[r]), t0, _mm512_maskz_loadu_ps(m, p)));
            }
        }
    }
}
