/* f32_stream_fence, x86: the streaming stores of the kernels before it are ordered before every
 * later store (and so visible to the other threads after the region's barrier). */
#include "opt_internal.h"

#include <immintrin.h>

void f32_stream_fence_ukernel__avx2(void)
{
    _mm_sfence();
}
