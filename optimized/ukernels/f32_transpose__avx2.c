/* f32_transpose, avx2 build: 8 x 8 register tiles (unpack / shuffle / permute), scalar edges. */
#include "opt_internal.h"

#include <immintrin.h>

#include "tile8x8__avx2.h"

static inline __attribute__((always_inline)) void tile8x8(const float *s, size_t ss, float *d, size_t ds)
{
    __m256 o[8];
    f32_tile8x8_load_transposed__avx2(s, ss, o);
    _mm256_storeu_ps(d, o[0]);
    _mm256_storeu_ps(d + ds, o[1]);
    _mm256_storeu_ps(d + 2 * ds, o[2]);
    _mm256_storeu_ps(d + 3 * ds, o[3]);
    _mm256_storeu_ps(d + 4 * ds, o[4]);
    _mm256_storeu_ps(d + 5 * ds, o[5]);
    _mm256_storeu_ps(d + 6 * ds, o[6]);
    _mm256_storeu_ps(d + 7 * ds, o[7]);
}

void f32_transpose_ukernel__avx2(size_t rows, size_t cols, const float *src, size_t src_stride,
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
