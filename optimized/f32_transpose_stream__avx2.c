/* f32_transpose_stream, avx2 build: two 8 x 8 register tiles stacked along the rows, so each
 * destination row gets 16 consecutive floats = one whole aligned 64-byte line, written with
 * streaming stores (no read for ownership of a destination written once). Scalar plain stores
 * for the rows before the first whole line, the edges, and destination rows of different alignments. */
#include "opt_internal.h"

#include <immintrin.h>
#include <stdint.h>

static inline void tile8x8_regs(const float *s, size_t ss, __m256 o[8])
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

void f32_transpose_stream_ukernel__avx2(size_t rows, size_t cols, const float *src, size_t src_stride,
                                        float *dst, size_t dst_stride)
{
    /* rows [h, h + 16 k) of every destination row start on a 64-byte line when the rows share
       one alignment (dst_stride a multiple of 16 floats) */
    const size_t h = (size_t)((64 - ((uintptr_t)dst & 63)) & 63) / sizeof(float);
    if (((uintptr_t)dst & 3) || (dst_stride & 15) || h >= rows) {
        f32_transpose_ukernel__avx2(rows, cols, src, src_stride, dst, dst_stride);
        return;
    }
    const size_t rend = h + ((rows - h) & ~(size_t)15), cols8 = cols & ~(size_t)7;
    /* walk dst contiguously: 8 output rows per column group, 16 floats of each per step */
    for (size_t j = 0; j < cols8; j += 8) {
        for (size_t jj = j; jj < j + 8; jj++)
            for (size_t i = 0; i < h; i++) dst[jj * dst_stride + i] = src[i * src_stride + jj];
        for (size_t i = h; i < rend; i += 16) {
            __m256 a[8], b[8];
            tile8x8_regs(src + i * src_stride + j, src_stride, a);
            tile8x8_regs(src + (i + 8) * src_stride + j, src_stride, b);
            for (size_t r = 0; r < 8; r++) {
                float *d = dst + (j + r) * dst_stride + i;
                _mm256_stream_ps(d, a[r]);
                _mm256_stream_ps(d + 8, b[r]);
            }
        }
        for (size_t jj = j; jj < j + 8; jj++)
            for (size_t i = rend; i < rows; i++) dst[jj * dst_stride + i] = src[i * src_stride + jj];
    }
    for (size_t j = cols8; j < cols; j++)
        for (size_t i = 0; i < rows; i++) dst[j * dst_stride + i] = src[i * src_stride + j];
    _mm_sfence(); /* the streamed lines are globally visible before the caller goes on */
}
