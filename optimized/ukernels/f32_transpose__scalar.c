/* f32_transpose, portable C (8 x 8 blocks for locality). */
#include "opt_internal.h"

void f32_transpose_ukernel__scalar(size_t rows, size_t cols, const float *src, size_t src_stride,
                                   float *dst, size_t dst_stride)
{
    for (size_t i0 = 0; i0 < rows; i0 += 8) {
        const size_t i1 = rows - i0 < 8 ? rows : i0 + 8;
        for (size_t j0 = 0; j0 < cols; j0 += 8) {
            const size_t j1 = cols - j0 < 8 ? cols : j0 + 8;
            for (size_t j = j0; j < j1; j++)
                for (size_t i = i0; i < i1; i++) dst[j * dst_stride + i] = src[i * src_stride + j];
        }
    }
}
