/* f32_transpose_stream, portable C: no streaming stores in C, the plain transpose. */
#include "opt_internal.h"

void f32_transpose_stream_ukernel__scalar(size_t rows, size_t cols, const float *src, size_t src_stride,
                                          float *dst, size_t dst_stride)
{
    f32_transpose_ukernel__scalar(rows, cols, src, src_stride, dst, dst_stride);
}

void f32_transpose_stream_zero_ukernel__scalar(size_t rows, size_t cols, float *src, size_t src_stride, float *dst,
                                               size_t dst_stride)
{
    f32_transpose_ukernel__scalar(rows, cols, src, src_stride, dst, dst_stride);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) src[i * src_stride + j] = 0.0f;
}
