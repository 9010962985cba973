/* f32_grid_bwd, AVX-512: 16 channels per vector, a masked tail; the grid-gradient partial sums
 * stay in two vector accumulators until one horizontal sum at the end. */
#include "opt_internal.h"

#include <immintrin.h>

void f32_grid_bwd_ukernel__avx512(size_t channels, size_t nr, const int64_t *roff, const float *wy,
                                  const float *dwy, size_t nc, const int64_t *coff, const float *wx,
                                  const float *dwx, const float *in, const float *g, float *io,
                                  float *gxy)
{
    int64_t off[16];
    float w[16], wdx[16], wdy[16];
    size_t nt = 0;
    for (size_t r = 0; r < nr; r++)
        for (size_t c = 0; c < nc; c++, nt++) {
            off[nt] = roff[r] + coff[c];
            w[nt] = wy[r] * wx[c];
            wdx[nt] = wy[r] * dwx[c];
            wdy[nt] = dwy[r] * wx[c];
        }
    __m512 px = _mm512_setzero_ps(), py = _mm512_setzero_ps();
    for (size_t j = 0; j < channels; j += 16) {
        const size_t n = channels - j < 16 ? channels - j : 16;
        const __mmask16 m = _cvtu32_mask16((uint32_t)((1u << n) - 1u));
        const __m512 gv = _mm512_maskz_loadu_ps(m, g + j);
        if (io)
            for (size_t t = 0; t < nt; t++) {
                float *q = io + off[t] + j;
                _mm512_mask_storeu_ps(q, m, _mm512_fmadd_ps(_mm512_set1_ps(w[t]), gv, _mm512_maskz_loadu_ps(m, q)));
            }
        if (gxy) {
            __m512 ax = _mm512_setzero_ps(), ay = _mm512_setzero_ps();
            for (size_t t = 0; t < nt; t++) {
                const __m512 v = _mm512_maskz_loadu_ps(m, in + off[t] + j);
                ax = _mm512_fmadd_ps(_mm512_set1_ps(wdx[t]), v, ax);
                ay = _mm512_fmadd_ps(_mm512_set1_ps(wdy[t]), v, ay);
            }
            px = _mm512_fmadd_ps(ax, gv, px);
            py = _mm512_fmadd_ps(ay, gv, py);
        }
    }
    if (gxy) {
        gxy[0] = _mm512_reduce_add_ps(px);
        gxy[1] = _mm512_reduce_add_ps(py);
    }
}
