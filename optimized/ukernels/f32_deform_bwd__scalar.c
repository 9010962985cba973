/* f32_deform_bwd, portable C. */
#include "opt_internal.h"

void f32_deform_bwd_ukernel__scalar(size_t channels, const float *g, const float *const *v, float *const *io,
                                    const float *wg, const float *cf, float *acc)
{
    const float hh = cf[0], lh = cf[1], hw = cf[2], lw = cf[3];
    float ax = 0, ay = 0, am = 0;
    for (size_t j = 0; j < channels; j++) {
        const float G = g[j], v0 = v[0][j], v1 = v[1][j], v2 = v[2][j], v3 = v[3][j];
        io[0][j] += wg[0] * G;
        io[1][j] += wg[1] * G;
        io[2][j] += wg[2] * G;
        io[3][j] += wg[3] * G;
        ax += G * (hh * (v1 - v0) + lh * (v3 - v2));
        ay += G * (hw * (v2 - v0) + lw * (v3 - v1));
        am += G * (hh * (hw * v0 + lw * v1) + lh * (hw * v2 + lw * v3));
    }
    acc[0] = ax;
    acc[1] = ay;
    acc[2] = am;
}
