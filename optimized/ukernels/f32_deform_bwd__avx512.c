/* f32_deform_bwd, AVX-512: 16 channels per step, masked tail; three vector accumulators.
 * The main loop is unmasked: neighbouring samples share corners, and a masked store followed by
 * a load of the same vector cannot be store-forwarded (a stall per read-modify-write). */
#include "opt_internal.h"

#include <immintrin.h>

#define STEP(LOAD, STORE)                                                                              \
    do {                                                                                               \
        const __m512 G = LOAD(g + j);                                                                  \
        const __m512 a = LOAD(v0 + j), b = LOAD(v1 + j), c = LOAD(v2 + j), d = LOAD(v3 + j);          \
        STORE(o0 + j, _mm512_fmadd_ps(w0, G, LOAD(o0 + j)));                                          \
        STORE(o1 + j, _mm512_fmadd_ps(w1, G, LOAD(o1 + j)));                                          \
        STORE(o2 + j, _mm512_fmadd_ps(w2, G, LOAD(o2 + j)));                                          \
        STORE(o3 + j, _mm512_fmadd_ps(w3, G, LOAD(o3 + j)));                                          \
        const __m512 top = _mm512_fmadd_ps(hw, a, _mm512_mul_ps(lw, b)); /* row h0 at px */           \
        const __m512 bot = _mm512_fmadd_ps(hw, c, _mm512_mul_ps(lw, d)); /* row h1 at px */           \
        const __m512 dx = _mm512_fmadd_ps(hh, _mm512_sub_ps(b, a), _mm512_mul_ps(lh, _mm512_sub_ps(d, c))); \
        ax = _mm512_fmadd_ps(G, dx, ax);                                                               \
        ay = _mm512_fmadd_ps(G, _mm512_sub_ps(bot, top), ay);                                          \
        am = _mm512_fmadd_ps(G, _mm512_fmadd_ps(hh, top, _mm512_mul_ps(lh, bot)), am);                 \
    } while (0)

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
    size_t j = 0;
#define FULL_LOAD(p) _mm512_loadu_ps(p)
#define FULL_STORE(p, x) _mm512_storeu_ps(p, x)
    for (; j + 16 <= channels; j += 16) STEP(FULL_LOAD, FULL_STORE);
    if (j < channels) {
        const __mmask16 m = _cvtu32_mask16((uint32_t)((1u << (channels - j)) - 1u));
#define TAIL_LOAD(p) _mm512_maskz_loadu_ps(m, p)
#define TAIL_STORE(p, x) _mm512_mask_storeu_ps(p, m, x)
        STEP(TAIL_LOAD, TAIL_STORE);
    }
    acc[0] = _mm512_reduce_add_ps(ax);
    acc[1] = _mm512_reduce_add_ps(ay);
    acc[2] = _mm512_reduce_add_ps(am);
}
