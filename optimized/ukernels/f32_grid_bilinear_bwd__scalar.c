/* f32_grid_bilinear_bwd, portable C: per point the four weights once, then per tap cs channels. */
#include "opt_internal.h"

void f32_grid_bilinear_bwd_ukernel__scalar(size_t npts, const f32_grid_pt *pts, size_t cs, ptrdiff_t next_row,
                                           const float *go, const float *in, float *io, float *acc)
{
    for (size_t k = 0; k < npts; k++) {
        const f32_grid_pt pt = pts[k];
        float w[4];
        f32_grid_pt_weights(&pt, w);
        const ptrdiff_t x = (ptrdiff_t)cs * pt.off, s = (ptrdiff_t)cs;
        const ptrdiff_t o[4] = {x, x + s, next_row + x, next_row + x + s};
        const float *g = go + cs * (size_t)pt.q;
        for (int t = 0; t < 4; t++) {
            if (io) {
                float *r = io + o[t];
                for (size_t c = 0; c < cs; c++) r[c] += w[t] * g[c];
            }
            if (acc) {
                const float *v = in + o[t];
                float a = 0.0f;
                for (size_t c = 0; c < cs; c++) a += g[c] * v[c];
                acc[4 * k + t] = a;
            }
        }
    }
}
