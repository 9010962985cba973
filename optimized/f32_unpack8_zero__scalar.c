/* f32_unpack8_zero, portable C. */
#include "opt_internal.h"

#include <string.h>

void f32_unpack8_zero_ukernel__scalar(size_t n, size_t planes, float *buf8, float *dst, size_t dst_stride)
{
    for (size_t j = 0; j < planes; j++)
        for (size_t i = 0; i < n; i++) dst[j * dst_stride + i] = buf8[8 * i + j];
    memset(buf8, 0, sizeof(float) * 8 * n);
}
