/* f32_grid_bilinear_keys, AVX-512: 16 points a step (x and y split by one two-source permute
 * each), the same operations in the same order as the portable C, so the same bits; masked tail. */
#include "opt_internal.h"

#include <immintrin.h>

void f32_grid_bilinear_keys_ukernel__avx512(size_t n, const float *grid, const f32_grid_keys_params *kp,
                                            int32_t *key, int32_t *x0, float *lx, float *ly)
{
    const __m512i ex = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i ey = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const __m512 one = _mm512_set1_ps(1.0f), half = _mm512_set1_ps(0.5f), zero = _mm512_setzero_ps();
    const __m512 w = _mm512_set1_ps(kp->w), h = _mm512_set1_ps(kp->h);
    const __m512 wm1 = _mm512_set1_ps(kp->wm1), hm1 = _mm512_set1_ps(kp->hm1);
    const __m512i xb = _mm512_set1_epi32(kp->xb), none = _mm512_set1_epi32(-1);
    const __m128i sh = _mm_cvtsi32_si128(kp->xshift);
    for (size_t q = 0; q < n; q += 16) {
        const size_t m = n - q < 16 ? n - q : 16;
        const __mmask16 lanes = (__mmask16)((1u << m) - 1u);
        const __mmask16 lo = (__mmask16)(m >= 8 ? 0xFFFF : (1u << (2 * m)) - 1u);
        const __mmask16 hi = (__mmask16)(m <= 8 ? 0 : (1u << (2 * (m - 8))) - 1u);
        /* the grid is read once, from memory: ask for it 2 KiB ahead (measured: the key pass took
         * 2.5x as long waiting for it) */
        _mm_prefetch((const char *)(grid + 2 * q + 512), _MM_HINT_T0);
        _mm_prefetch((const char *)(grid + 2 * q + 528), _MM_HINT_T0);
        const __m512 a = _mm512_maskz_loadu_ps(lo, grid + 2 * q), b = _mm512_maskz_loadu_ps(hi, grid + 2 * q + 16);
        const __m512 gx = _mm512_permutex2var_ps(a, ex, b), gy = _mm512_permutex2var_ps(a, ey, b);
        __m512 ix, iy;
        if (kp->align_corners) {
            ix = _mm512_mul_ps(_mm512_mul_ps(_mm512_add_ps(gx, one), half), wm1);
            iy = _mm512_mul_ps(_mm512_mul_ps(_mm512_add_ps(gy, one), half), hm1);
        } else {
            ix = _mm512_mul_ps(_mm512_sub_ps(_mm512_mul_ps(_mm512_add_ps(gx, one), w), one), half);
            iy = _mm512_mul_ps(_mm512_sub_ps(_mm512_mul_ps(_mm512_add_ps(gy, one), h), one), half);
        }
        const __mmask16 in = _mm512_cmp_ps_mask(ix, zero, _CMP_GE_OQ) & _mm512_cmp_ps_mask(ix, wm1, _CMP_LT_OQ) &
                             _mm512_cmp_ps_mask(iy, zero, _CMP_GE_OQ) & _mm512_cmp_ps_mask(iy, hm1, _CMP_LT_OQ);
        const __m512 ixs = _mm512_maskz_mov_ps(in, ix), iys = _mm512_maskz_mov_ps(in, iy);
        const __m512i x = _mm512_cvttps_epi32(ixs), y = _mm512_cvttps_epi32(iys);
        const __m512i k = _mm512_add_epi32(_mm512_mullo_epi32(y, xb), _mm512_srl_epi32(x, sh));
        const __m512i kv = _mm512_mask_mov_epi32(none, in, k);
        const __m512 fx = _mm512_sub_ps(ixs, _mm512_cvtepi32_ps(x)), fy = _mm512_sub_ps(iys, _mm512_cvtepi32_ps(y));
        if (m == 16) { /* whole vectors: masked stores are slower on Zen 4 (measured: this pass 1.7x) */
            _mm512_storeu_si512(key + q, kv);
            _mm512_storeu_si512(x0 + q, x);
            _mm512_storeu_ps(lx + q, fx);
            _mm512_storeu_ps(ly + q, fy);
        } else {
            _mm512_mask_storeu_epi32(key + q, lanes, kv);
            _mm512_mask_storeu_epi32(x0 + q, lanes, x);
            _mm512_mask_storeu_ps(lx + q, lanes, fx);
            _mm512_mask_storeu_ps(ly + q, lanes, fy);
        }
    }
}
