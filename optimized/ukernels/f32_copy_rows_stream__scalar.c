/* f32_copy_rows_stream, portable C: plain row copies (the compiler has no streaming store). */
#include "opt_internal.h"

#include <string.h>

void f32_copy_rows_stream_ukernel__scalar(size_t rows, size_t n, const float *src, size_t src_stride, float *dst,
                                          size_t dst_stride)
{
    for (size_t r = 0; r < rows; r++) memcpy(dst + r * dst_stride, src + r * src_stride, n * sizeof(float));
}
