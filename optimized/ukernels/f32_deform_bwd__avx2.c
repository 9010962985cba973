/* f32_deform_bwd, AVX2 + FMA: 8 channels per step, masked tail; three vector accumulators. */
#include "opt_internal.h"

#include <immintrin.h>

static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

static inline float hsum(__m256 a)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

void f32_deform_bwd_ukernel__avx2(size_t channels, const float *g, const float *const *v, float *const *io,
                                  const float *wg, const float *cf, float *acc)
{
    const float *v0 = v[0], *v1 = v[1], *v2 = v[2], *v3 = v[3];
    float *o0 = io[0], *o1 = io[1], *o2 = io[2], *o3 = io[3];
    const __m256 w0 = _mm256_set1_ps(wg[0]), w1 = _mm256_set1_ps(wg[1]);
    const __m256 w2 = _mm256_set1_ps(wg[2]), w3 = _mm256_set1_ps(wg[3]);
    const __m256 hh = _mm256_set1_ps(cf[0]), lh = _mm256_set1_ps(cf[1]);
    const __m256 hw = _mm256_set1_ps(cf[2]), lw = _mm256_set1_ps(cf[3]);
    __m256 ax = _mm256_setzero_ps(), ay = _mm256_setzero_ps(), am = _mm256_setzero_ps();
    size_t j = 0;
    for (; j + 8 <= channels; j += 8) {
        const __m256 G = _mm256_loadu_ps(g + j);
        const __m256 a = _mm256_loadu_ps(v0 + j), b = _mm256_loadu_ps(v1 + j);
        const __m256 c = _mm256_loadu_ps(v2 + j), d = _mm256_loadu_ps(v3 + j);
        _mm256_storeu_ps(o0 + j, _mm256_fmadd_ps(w0, G, _mm256_loadu_ps(o0 + j)));
        _mm256_storeu_ps(o1 + j, _mm256_fmadd_ps(w1, G, _mm256_loadu_ps(o1 + j)));
        _mm256_storeu_ps(o2 + j, _mm256_fmadd_ps(w2, G, _mm256_loadu_ps(o2 + j)));
        _mm256_storeu_ps(o3 + j, _mm256_fmadd_ps(w3, G, _mm256_loadu_ps(o3 + j)));
        const __m256 top = _mm256_fmadd_ps(hw, a, _mm256_mul_ps(lw, b)); /* row h0 at px */
        const __m256 bot = _mm256_fmadd_ps(hw, c, _mm256_mul_ps(lw, d)); /* row h1 at px */
        const __m256 dx = _mm256_fmadd_ps(hh, _mm256_sub_ps(b, a), _mm256_mul_ps(lh, _mm256_sub_ps(d, c)));
        ax = _mm256_fmadd_ps(G, dx, ax);
        ay = _mm256_fmadd_ps(G, _mm256_sub_ps(bot, top), ay);
        am = _mm256_fmadd_ps(G, _mm256_fmadd_ps(hh, top, _mm256_mul_ps(lh, bot)), am);
    }
    if (j < channels) {
        const __m256i m = _mm256_loadu_si256((const __m256i *)(mask_table + 8 - (channels - j)));
        const __m256 G = _mm256_maskload_ps(g + j, m);
        const __m256 a = _mm256_maskload_ps(v0 + j, m), b = _mm256_maskload_ps(v1 + j, m);
        const __m256 c = _mm256_maskload_ps(v2 + j, m), d = _mm256_maskload_ps(v3 + j, m);
        _mm256_maskstore_ps(o0 + j, m, _mm256_fmadd_ps(w0, G, _mm256_maskload_ps(o0 + j, m)));
        _mm256_maskstore_ps(o1 + j, m, _mm256_fmadd_ps(w1, G, _mm256_maskload_ps(o1 + j, m)));
        _mm256_maskstore_ps(o2 + j, m, _mm256_fmadd_ps(w2, G, _mm256_maskload_ps(o2 + j, m)));
        _mm256_maskstore_ps(o3 + j, m, _mm256_fmadd_ps(w3, G, _mm256_maskload_ps(o3 + j, m)));
        const __m256 top = _mm256_fmadd_ps(hw, a, _mm256_mul_ps(lw, b));
        const __m256 bot = _mm256_fmadd_ps(hw, c, _mm256_mul_ps(lw, d));
        const __m256 dx = _mm256_fmadd_ps(hh, _mm256_sub_ps(b, a), _mm256_mul_ps(lh, _mm256_sub_ps(d, c)));
        ax = _mm256_fmadd_ps(G, dx, ax);
        ay = _mm256_fmadd_ps(G, _mm256_sub_ps(bot, top), ay);
        am = _mm256_fmadd_ps(G, _mm256_fmadd_ps(hh, top, _mm256_mul_ps(lh, bot)), am);
    }
    acc[0] = hsum(ax);
    acc[1] = hsum(ay);
    acc[2] = hsum(am);
}
