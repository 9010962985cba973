/* f32_grid_bilinear_fwd, portable C. */
#include "opt_internal.h"

void f32_grid_bilinear_fwd_ukernel__scalar(size_t npts, const f32_grid_pt *pts, size_t cs, ptrdiff_t next_row,
                                           const float *in, float *out)
{
    for (size_t k = 0; k < npts; k++) {
        const f32_grid_pt pt = pts[k];
        float w[4];
        f32_grid_pt_weights(&pt, w);
        const ptrdiff_t x = (ptrdiff_t)cs * pt.off, s = (ptrdiff_t)cs;
        const ptrdiff_t o[4] = {x, x + s, next_row + x, next_row + x + s};
        float *r = out + cs * (size_t)pt.q;
        for (size_t c = 0; c < cs; c++) {
            float a = 0.0f;
            for (int t = 0; t < 4; t++) a += w[t] * in[o[t] + (ptrdiff_t)c];
            r[c] = a;
        }
    }
}
