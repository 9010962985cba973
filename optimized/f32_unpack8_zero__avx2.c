/* f32_unpack8_zero, AVX2: 8 x 8 register transposes, non-temporal 256-bit stores when all 8 planes
 * are 32-byte aligned; otherwise the portable loop. */
#include "opt_internal.h"

#include <immintrin.h>
#include <string.h>

void f32_unpack8_zero_ukernel__avx2(size_t n, size_t planes, float *buf8, float *dst, size_t dst_stride)
{
    size_t i = 0;
    if (planes == 8 && ((uintptr_t)dst & 31) == 0 && (dst_stride & 7) == 0) {
        const __m256 z = _mm256_setzero_ps();
        for (; i + 8 <= n; i += 8) {
            float *s = buf8 + 8 * i;
            const __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + 8);
            const __m256 r2 = _mm256_loadu_ps(s + 16), r3 = _mm256_loadu_ps(s + 24);
            const __m256 r4 = _mm256_loadu_ps(s + 32), r5 = _mm256_loadu_ps(s + 40);
            const __m256 r6 = _mm256_loadu_ps(s + 48), r7 = _mm256_loadu_ps(s + 56);
            for (int k = 0; k < 8; k++) _mm256_storeu_ps(s + 8 * k, z);
            const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
            const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
            const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
            const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
            const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
            const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
            const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
            const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
            float *d = dst + i;
            _mm256_stream_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
            _mm256_stream_ps(d + dst_stride, _mm256_permute2f128_ps(u1, u5, 0x20));
            _mm256_stream_ps(d + 2 * dst_stride, _mm256_permute2f128_ps(u2, u6, 0x20));
            _mm256_stream_ps(d + 3 * dst_stride, _mm256_permute2f128_ps(u3, u7, 0x20));
            _mm256_stream_ps(d + 4 * dst_stride, _mm256_permute2f128_ps(u0, u4, 0x31));
            _mm256_stream_ps(d + 5 * dst_stride, _mm256_permute2f128_ps(u1, u5, 0x31));
            _mm256_stream_ps(d + 6 * dst_stride, _mm256_permute2f128_ps(u2, u6, 0x31));
            _mm256_stream_ps(d + 7 * dst_stride, _mm256_permute2f128_ps(u3, u7, 0x31));
        }
        _mm_sfence();
    }
    for (size_t j = 0; j < planes; j++)
        for (size_t r = i; r < n; r++) dst[j * dst_stride + r] = buf8[8 * r + j];
    memset(buf8 + 8 * i, 0, sizeof(float) * 8 * (n - i));
}
