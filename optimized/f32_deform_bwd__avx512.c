/* f32_deform_bwd, AVX-512: 16 channels per step, masked tail; three vector accumulators. */
#include "opt_internal.h"

#include <immintrin.h>

void f32_deform_bwd_ukernel__avx512(size_t channels, const float *g, const float *const *v, float *const *io,
                                    const float *wg, const float *cf, float *acc)
{
    const float *v0 = v[0], *v1 = v[1], *v2 = v[2], *v3 = v[3];
    float *o0 = io[0], *o1 = io[1], *o2 = io[2], *o3 = io[3];
    const __m512 w0 = _mm512_set1_ps(wg[0]), w1 = _mm512_set1_ps(wg[1]);
    const __m512 w2 = _mm512_set1_ps(wg[2]), w3 = _mm512_set1_ps(wg[3]);
    const __m512 hh = _mm512_set1_ps(cf[0]), lh = _mm512_set1_ps(cf[1]);
    const __m512 hw = _mm512_set1_ps(cf[2]), lw = _mm512_set1_ps(cf[3]);
    __m512 ax = _mm512_setzero_ps(), ay = _mm512_setzero_ps(), am = _mm512_setzero_ps();
    for (size_t j = 0; j < channels; j += 16) {
        const size_t n = channels - j < 16 ? channels - j : 16;
        const __mmask16 m = _cvtu32_mask16((uint32_t)((1u << n) - 1u));
        const __m512 G = _mm512_maskz_loadu_ps(m, g + j);
        const __m512 a = _mm512_maskz_loadu_ps(m, v0 + j), b = _mm512_maskz_loadu_ps(m, v1 + j);
        const __m512 c = _mm512_maskz_loadu_ps(m, v2 + j), d = _mm512_maskz_loadu_ps(m, v3 + j);
        _mm512_mask_storeu_ps(o0 + j, m, _mm512_fmadd_ps(w0, G, _mm512_maskz_loadu_ps(m, o0 + j)));
        _mm512_mask_storeu_ps(o1 + j, m, _mm512_fmadd_ps(w1, G, _mm512_maskz_loadu_ps(m, o1 + j)));
        _mm512_mask_storeu_ps(o2 + j, m, _mm512_fmadd_ps(w2, G, _mm512_maskz_loadu_ps(m, o2 + j)));
        _mm512_mask_storeu_ps(o3 + j, m, _mm512_fmadd_ps(w3, G, _mm512_maskz_loadu_ps(m, o3 + j)));
        const __m512 top = _mm512_fmadd_ps(hw, a, _mm512_mul_ps(lw, b)); /* row h0 at px */
        const __m512 bot = _mm512_fmadd_ps(hw, c, _mm512_mul_ps(lw, d)); /* row h1 at px */
        const __m512 dx = _mm512_fmadd_ps(hh, _mm512_sub_ps(b, a), _mm512_mul_ps(lh, _mm512_sub_ps(d, c)));
        ax = _mm512_fmadd_ps(G, dx, ax);
        ay = _mm512_fmadd_ps(G, _mm512_sub_ps(bot, top), ay);
        am = _mm512_fmadd_ps(G, _mm512_fmadd_ps(hh, top, _mm512_mul_ps(lh, bot)), am);
    }
    acc[0] = _mm512_reduce_add_ps(ax);
    acc[1] = _mm512_reduce_add_ps(ay);
    acc[2] = _mm512_reduce_add_ps(am);
}
