/* f32_grid_bilinear_bwd, AVX-512: a point's two taps of a row are adjacent pixels, so one 512-bit
 * vector holds both taps' 8 channels: two read-modify-writes per point for input_grad and two
 * loads for the input; the four channel sums are reduced together. */
#include "opt_internal.h"

#include <immintrin.h>

void f32_grid_bilinear_bwd_ukernel__avx512(size_t npts, const f32_grid_pt *pts, size_t W, const float *go8,
                                           const float *in8, float *io8, float *acc, int acc_init)
{
    const __m512i i01 = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i i23 = _mm512_set_epi32(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2);
    const __m512i ifin = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 8, 4, 0);
    const __m128 one = _mm_set1_ps(1.0f);
    for (size_t k = 0; k < npts; k++) {
        const f32_grid_pt *pt = pts + k;
        /* l = [lx ly lx ly]: w = [1-ly 1-ly ly ly] * [1-lx lx 1-lx lx] */
        const __m128 l = _mm_castpd_ps(_mm_loaddup_pd((const double *)&pt->lx));
        const __m128 a = _mm_sub_ps(one, l);
        const __m128 wx = _mm_shuffle_ps(a, l, _MM_SHUFFLE(0, 0, 0, 0));
        const __m128 w = _mm_mul_ps(_mm_shuffle_ps(a, l, _MM_SHUFFLE(1, 1, 1, 1)),
                                    _mm_shuffle_ps(wx, wx, _MM_SHUFFLE(2, 0, 2, 0)));
        const size_t o0 = 8 * (size_t)pt->off, o1 = o0 + 8 * W;
        const __m512 g = _mm512_broadcast_f32x8(_mm256_loadu_ps(go8 + 8 * (size_t)pt->q));
        if (io8) {
            const __m512 wz = _mm512_castps128_ps512(w);
            _mm512_storeu_ps(io8 + o0, _mm512_fmadd_ps(_mm512_permutexvar_ps(i01, wz), g, _mm512_loadu_ps(io8 + o0)));
            _mm512_storeu_ps(io8 + o1, _mm512_fmadd_ps(_mm512_permutexvar_ps(i23, wz), g, _mm512_loadu_ps(io8 + o1)));
        }
        if (acc) {
            const __m512 p0 = _mm512_mul_ps(g, _mm512_loadu_ps(in8 + o0)); /* taps 0, 1 */
            const __m512 p1 = _mm512_mul_ps(g, _mm512_loadu_ps(in8 + o1)); /* taps 2, 3 */
            /* 128-bit blocks: [t0 t1 t2 t3], 4 partial lanes each, then within the blocks */
            __m512 s = _mm512_add_ps(_mm512_shuffle_f32x4(p0, p1, _MM_SHUFFLE(2, 0, 2, 0)),
                                     _mm512_shuffle_f32x4(p0, p1, _MM_SHUFFLE(3, 1, 3, 1)));
            s = _mm512_add_ps(s, _mm512_permute_ps(s, _MM_SHUFFLE(1, 0, 3, 2)));
            s = _mm512_add_ps(s, _mm512_permute_ps(s, _MM_SHUFFLE(2, 3, 0, 1)));
            __m128 r = _mm512_castps512_ps128(_mm512_permutexvar_ps(ifin, s));
            if (!acc_init) r = _mm_add_ps(_mm_loadu_ps(acc + 4 * k), r);
            _mm_storeu_ps(acc + 4 * k, r);
        }
    }
}
