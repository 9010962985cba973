/* f32_grid_bilinear_bwd, portable C: per point the four weights once, then per tap 8 channels. */
#include "opt_internal.h"

void f32_grid_bilinear_bwd_ukernel__scalar(size_t npts, const f32_grid_pt *pts, size_t W, const float *go8,
                                           const float *in8, float *io8, float *acc, int acc_init)
{
    for (size_t k = 0; k < npts; k++) {
        const f32_grid_pt pt = pts[k];
        const float ax = 1.0f - pt.lx, ay = 1.0f - pt.ly;
        const float w[4] = {ay * ax, ay * pt.lx, pt.ly * ax, pt.ly * pt.lx};
        const size_t o[4] = {(size_t)pt.off, (size_t)pt.off + 1, (size_t)pt.off + W, (size_t)pt.off + W + 1};
        const float *g = go8 + 8 * (size_t)pt.q;
        for (int t = 0; t < 4; t++) {
            if (io8) {
                float *r = io8 + 8 * o[t];
                for (int c = 0; c < 8; c++) r[c] += w[t] * g[c];
            }
            if (acc) {
                const float *v = in8 + 8 * o[t];
                float s = 0.0f;
                for (int c = 0; c < 8; c++) s += g[c] * v[c];
                acc[4 * k + t] = acc_init ? s : acc[4 * k + t] + s;
            }
        }
    }
}
