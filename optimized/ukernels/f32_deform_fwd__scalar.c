/* f32_deform_fwd, portable C. */
#include "opt_internal.h"

void f32_deform_fwd_ukernel__scalar(size_t channels, const float *const *v, const float *w, float *out)
{
    const float *v0 = v[0], *v1 = v[1], *v2 = v[2], *v3 = v[3];
    for (size_t j = 0; j < channels; j++) out[j] = w[0] * v0[j] + w[1] * v1[j] + w[2] * v2[j] + w[3] * v3[j];
}
