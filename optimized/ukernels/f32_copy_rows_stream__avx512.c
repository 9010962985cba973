/* f32_copy_rows_stream, AVX-512: 64-byte streaming stores from the first aligned float of a row,
 * plain (masked) stores for the unaligned head and the tail; one fence at the end. */
#include "opt_internal.h"

#include <immintrin.h>
#include <stdint.h>

void f32_copy_rows_stream_ukernel__avx512(size_t rows, size_t n, const float *src, size_t src_stride, float *dst,
                                          size_t dst_stride)
{
    for (size_t r = 0; r < rows; r++) {
        const float *s = src + r * src_stride;
        float *d = dst + r * dst_stride;
        size_t j = ((64 - ((uintptr_t)d & 63)) & 63) / sizeof(float);
        if ((uintptr_t)d & 3) j = n; /* not float-aligned: never the case for a float array */
        if (j > n) j = n;
        if (j) {
            const __mmask16 m = _cvtu32_mask16((uint32_t)((1u << j) - 1u));
            _mm512_mask_storeu_ps(d, m, _mm512_maskz_loadu_ps(m, s));
        }
        for (; j + 16 <= n; j += 16) _mm512_stream_ps(d + j, _mm512_loadu_ps(s + j));
        if (j < n) {
            const __mmask16 m = _cvtu32_mask16((uint32_t)((1u << (n - j)) - 1u));
            _mm512_mask_storeu_ps(d + j, m, _mm512_maskz_loadu_ps(m, s + j));
        }
    }
    _mm_sfence();
}
