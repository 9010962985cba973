/* f32_copy_rows_stream, AVX2: 32-byte streaming stores from the first aligned float of a row,
 * scalar stores for the unaligned head and the tail; one fence at the end. */
#include "opt_internal.h"

#include <immintrin.h>
#include <stdint.h>

void f32_copy_rows_stream_ukernel__avx2(size_t rows, size_t n, const float *src, size_t src_stride, float *dst,
                                        size_t dst_stride)
{
    for (size_t r = 0; r < rows; r++) {
        const float *s = src + r * src_stride;
        float *d = dst + r * dst_stride;
        size_t j = 0;
        if (((uintptr_t)d & 3) == 0)
            while (j < n && ((uintptr_t)(d + j) & 31)) { d[j] = s[j]; j++; }
        else
            for (; j < n; j++) d[j] = s[j];
        for (; j + 8 <= n; j += 8) _mm256_stream_ps(d + j, _mm256_loadu_ps(s + j));
        for (; j < n; j++) d[j] = s[j];
    }
    _mm_sfence();
}
