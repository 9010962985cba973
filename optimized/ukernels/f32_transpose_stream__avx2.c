/* f32_transpose_stream, avx2 build: two 8 x 8 register tiles stacked along the rows, so each
 * destination row gets 16 consecutive floats = one whole aligned 64-byte line, written with
 * streaming stores (no read for ownership of a destination written once). Scalar plain stores
 * for the rows before the first whole line, the edges, and destination rows of different alignments. */
#include "opt_internal.h"

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "tile8x8__avx2.h"

/* zero: also clear the elements of src that were read (the caller's accumulator rows, ready for
 * their next use while their lines are still in L1) */
static inline __attribute__((always_inline)) void transpose_stream(size_t rows, size_t cols, float *src, size_t src_stride,
                                                                   float *dst, size_t dst_stride, const int zero)
{
    /* rows [h, h + 16 k) of every destination row start on a 64-byte line when the rows share
       one alignment (dst_stride a multiple of 16 floats) */
    const size_t h = (size_t)((64 - ((uintptr_t)dst & 63)) & 63) / sizeof(float);
    if (((uintptr_t)dst & 3) || (dst_stride & 15) || h >= rows) {
        f32_transpose_ukernel__avx2(rows, cols, src, src_stride, dst, dst_stride);
        if (zero)
            for (size_t i = 0; i < rows; i++) memset(src + i * src_stride, 0, cols * sizeof(float));
        return;
    }
    const size_t rend = h + ((rows - h) & ~(size_t)15), cols8 = cols & ~(size_t)7;
    const __m256 z = _mm256_setzero_ps();
    /* walk dst contiguously: 8 output rows per column group, 16 floats of each per step */
    for (size_t j = 0; j < cols8; j += 8) {
        for (size_t jj = j; jj < j + 8; jj++)
            for (size_t i = 0; i < h; i++) {
                dst[jj * dst_stride + i] = src[i * src_stride + jj];
                if (zero) src[i * src_stride + jj] = 0.0f;
            }
        for (size_t i = h; i < rend; i += 16) {
            __m256 a[8], b[8];
            f32_tile8x8_load_transposed__avx2(src + i * src_stride + j, src_stride, a);
            f32_tile8x8_load_transposed__avx2(src + (i + 8) * src_stride + j, src_stride, b);
            if (zero)
                for (size_t r = 0; r < 16; r++) _mm256_storeu_ps(src + (i + r) * src_stride + j, z);
            for (size_t r = 0; r < 8; r++) {
                float *d = dst + (j + r) * dst_stride + i;
                _mm256_stream_ps(d, a[r]);
                _mm256_stream_ps(d + 8, b[r]);
            }
        }
        for (size_t jj = j; jj < j + 8; jj++)
            for (size_t i = rend; i < rows; i++) {
                dst[jj * dst_stride + i] = src[i * src_stride + jj];
                if (zero) src[i * src_stride + jj] = 0.0f;
            }
    }
    for (size_t j = cols8; j < cols; j++)
        for (size_t i = 0; i < rows; i++) {
            dst[j * dst_stride + i] = src[i * src_stride + j];
            if (zero) src[i * src_stride + j] = 0.0f;
        }
    _mm_sfence(); /* the streamed lines are globally visible before the caller goes on */
}

void f32_transpose_stream_ukernel__avx2(size_t rows, size_t cols, const float *src, size_t src_stride,
                                        float *dst, size_t dst_stride)
{
    transpose_stream(rows, cols, (float *)src, src_stride, dst, dst_stride, 0); /* src is only read */
}

void f32_transpose_stream_zero_ukernel__avx2(size_t rows, size_t cols, float *src, size_t src_stride, float *dst,
                                             size_t dst_stride)
{
    transpose_stream(rows, cols, src, src_stride, dst, dst_stride, 1);
}
