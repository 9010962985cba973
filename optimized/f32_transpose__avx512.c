/* f32_transpose, avx512 build: 8 x 8 register tiles (unpack / shuffle / permute), scalar edges. */
#include "opt_internal.h"

#include <immintrin.h>

static inline void tile8x8(const float *s, size_t ss, float *d, size_t ds)
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
    _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(d + ds, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(d + 2 * ds, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(d + 3 * ds, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(d + 4 * ds, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(d + 5 * ds, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(d + 6 * ds, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(d + 7 * ds, _mm256_permute2f128_ps(u3, u7, 0x31));
}

void f32_transpose_ukernel__avx512(size_t rows, size_t cols, const float *src, size_t src_stride,
                                 float *dst, size_t dst_stride)
{
    const size_t rows8 = rows & ~(size_t)7, cols8 = cols & ~(size_t)7;
    if (dst_stride > src_stride) {
        /* walk dst contiguously (8 output streams): the strided side stays in cache */
        for (size_t j = 0; j < cols8; j += 8) {
            for (size_t i = 0; i < rows8; i += 8)
                tile8x8(src + i * src_stride + j, src_stride, dst + j * dst_stride + i, dst_stride);
            for (size_t jj = j; jj < j + 8; jj++)
                for (size_t i = rows8; i < rows; i++) dst[jj * dst_stride + i] = src[i * src_stride + jj];
        }
        for (size_t j = cols8; j < cols; j++)
            for (size_t i = 0; i < rows; i++) dst[j * dst_stride + i] = src[i * src_stride + j];
        return;
    }
    /* walk src contiguously (8 input streams) */
    for (size_t i = 0; i < rows8; i += 8) {
        size_t j = 0;
        for (; j < cols8; j += 8) tile8x8(src + i * src_stride + j, src_stride, dst + j * dst_stride + i, dst_stride);
        for (; j < cols; j++)
            for (size_t ii = i; ii < i + 8; ii++) dst[j * dst_stride + ii] = src[ii * src_stride + j];
    }
    for (size_t i = rows8; i < rows; i++)
        for (size_t j = 0; j < cols; j++) dst[j * dst_stride + i] = src[i * src_stride + j];
}
