/* f32_stream_fence, portable C: the scalar kernels store plainly; nothing to order. */
#include "opt_internal.h"

void f32_stream_fence_ukernel__scalar(void)
{
}
