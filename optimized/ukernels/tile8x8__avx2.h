/* The 8 x 8 register transpose of the AVX2 transposing kernels (included by *__avx2.c files only):
 * o[j] = column j of the 8 rows s, s + ss, ..., s + 7 ss (unpack / shuffle / permute). */
#ifndef CONFORM_TILE8X8_AVX2_H
#define CONFORM_TILE8X8_AVX2_H

#include <immintrin.h>
#include <stddef.h>

static inline __attribute__((always_inline)) void f32_tile8x8_load_transposed__avx2(const float *s, size_t ss, __m256 o[8])
{
    const __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ss);
    const __m256 r2 = _mm256_loadu_ps(s + 2 * ss), r3 = _mm256_loadu_ps(s + 3 * ss);
    const __m256 r4 = _mm256_loadu_ps(s + 4 * ss), r5 = _mm256_loadu_ps(s + 5 * ss);
    const __m256 r6 = _mm256_loadu_ps(s + 6 * ss), r7 = _mm256_loadu_ps(s + 7 * ss);
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    o[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    o[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    o[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    o[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    o[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    o[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    o[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    o[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

#endif
