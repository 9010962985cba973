/* f32_grid_bilinear_keys, AVX2: 8 points a step (x and y split by shuffles within 128-bit lanes
 * and one cross-lane permute), the same operations in the same order as the portable C, so the
 * same bits; the tail by the portable C. */
#include "opt_internal.h"

#include <immintrin.h>

void f32_grid_bilinear_keys_ukernel__avx2(size_t n, const float *grid, const f32_grid_keys_params *kp,
                                          int32_t *key, int32_t *x0, float *lx, float *ly)
{
    const __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f), zero = _mm256_setzero_ps();
    const __m256 w = _mm256_set1_ps(kp->w), h = _mm256_set1_ps(kp->h);
    const __m256 wm1 = _mm256_set1_ps(kp->wm1), hm1 = _mm256_set1_ps(kp->hm1);
    const __m256i xb = _mm256_set1_epi32(kp->xb), none = _mm256_set1_epi32(-1);
    const __m128i sh = _mm_cvtsi32_si128(kp->xshift);
    const __m256i order = _mm256_set_epi32(7, 6, 3, 2, 5, 4, 1, 0);
    size_t q = 0;
    for (; q + 8 <= n; q += 8) {
        /* the grid is read once, from memory: asked for 2 KiB ahead, one line per step */
        _mm_prefetch((const char *)(grid + 2 * q + 512), _MM_HINT_T0);
        const __m256 a = _mm256_loadu_ps(grid + 2 * q), b = _mm256_loadu_ps(grid + 2 * q + 8);
        /* [x0 x1 x4 x5 | x2 x3 x6 x7] -> points in order */
        const __m256 gx = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), order);
        const __m256 gy = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)), order);
        __m256 ix, iy;
        if (kp->align_corners) {
            ix = _mm256_mul_ps(_mm256_mul_ps(_mm256_add_ps(gx, one), half), wm1);
            iy = _mm256_mul_ps(_mm256_mul_ps(_mm256_add_ps(gy, one), half), hm1);
        } else {
            ix = _mm256_mul_ps(_mm256_sub_ps(_mm256_mul_ps(_mm256_add_ps(gx, one), w), one), half);
            iy = _mm256_mul_ps(_mm256_sub_ps(_mm256_mul_ps(_mm256_add_ps(gy, one), h), one), half);
        }
        const __m256 in = _mm256_and_ps(_mm256_and_ps(_mm256_cmp_ps(ix, zero, _CMP_GE_OQ), _mm256_cmp_ps(ix, wm1, _CMP_LT_OQ)),
                                        _mm256_and_ps(_mm256_cmp_ps(iy, zero, _CMP_GE_OQ), _mm256_cmp_ps(iy, hm1, _CMP_LT_OQ)));
        const __m256 ixs = _mm256_and_ps(in, ix), iys = _mm256_and_ps(in, iy);
        const __m256i x = _mm256_cvttps_epi32(ixs), y = _mm256_cvttps_epi32(iys);
        const __m256i k = _mm256_add_epi32(_mm256_mullo_epi32(y, xb), _mm256_srl_epi32(x, sh));
        _mm256_storeu_si256((__m256i *)(key + q), _mm256_blendv_epi8(none, k, _mm256_castps_si256(in)));
        _mm256_storeu_si256((__m256i *)(x0 + q), x);
        _mm256_storeu_ps(lx + q, _mm256_sub_ps(ixs, _mm256_cvtepi32_ps(x)));
        _mm256_storeu_ps(ly + q, _mm256_sub_ps(iys, _mm256_cvtepi32_ps(y)));
    }
    if (q < n) f32_grid_bilinear_keys_ukernel__scalar(n - q, grid + 2 * q, kp, key + q, x0 + q, lx + q, ly + q);
}
