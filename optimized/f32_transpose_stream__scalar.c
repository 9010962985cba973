/* f32_transpose_stream, portable C: no streaming stores in C, the plain transpose. */
#include "opt_internal.h"

void f32_transpose_stream_ukernel__scalar(size_t rows, size_t cols, const float *src, size_t src_stride,
                                          float *dst, size_t dst_stride)
{
    f32_transpose_ukernel__scalar(rows, cols, src, src_stride, dst, dst_stride);
}
