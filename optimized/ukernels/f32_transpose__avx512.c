/* f32_transpose, AVX-512 build: the AVX2 kernel's 8 x 8 register tiles, stacked two high when
 * the source is walked contiguously, so that each destination row gets 16 consecutive floats in
 * one 512-bit store: a whole line when the destination is 64-byte aligned. Measured on Zen 4
 * (64 planes of 128 x 128 into [pixel][64]): 0.74 instead of 0.93 ms for 4 images on one core;
 * two 256-bit stores to the same line do not get this. Other shapes go to the AVX2 kernel. */
#include "opt_internal.h"

#include <immintrin.h>
#include <stdint.h>

#include "tile8x8__avx2.h"

void f32_transpose_ukernel__avx512(size_t rows, size_t cols, const float *src, size_t src_stride, float *dst,
                                   size_t dst_stride)
{
    const size_t rows16 = rows & ~(size_t)15, cols8 = cols & ~(size_t)7;
    /* whole lines only: dst on a line and its rows a multiple of 16 floats apart (a 512-bit store
       across two lines was slower than two 256-bit ones: roi_align_rotated's 49-float tiles);
       when dst rows are the longer ones the AVX2 kernel walks dst contiguously */
    if (dst_stride > src_stride || rows16 == 0 || (dst_stride & 15) || ((uintptr_t)dst & 63)) {
        f32_transpose_ukernel__avx2(rows, cols, src, src_stride, dst, dst_stride);
        return;
    }
    for (size_t i = 0; i < rows16; i += 16) {
        size_t j = 0;
        for (; j < cols8; j += 8) {
            __m256 a[8], b[8];
            f32_tile8x8_load_transposed__avx2(src + i * src_stride + j, src_stride, a);
            f32_tile8x8_load_transposed__avx2(src + (i + 8) * src_stride + j, src_stride, b);
            for (size_t r = 0; r < 8; r++)
                _mm512_storeu_ps(dst + (j + r) * dst_stride + i,
                                 _mm512_insertf32x8(_mm512_castps256_ps512(a[r]), b[r], 1));
        }
        for (; j < cols; j++)
            for (size_t ii = i; ii < i + 16; ii++) dst[j * dst_stride + ii] = src[ii * src_stride + j];
    }
    if (rows16 < rows) /* the last rows are the last columns of dst */
        f32_transpose_ukernel__avx2(rows - rows16, cols, src + rows16 * src_stride, src_stride, dst + rows16, dst_stride);
}
