/* f32_grid_bwd, portable C. */
#include "opt_internal.h"

void f32_grid_bwd_ukernel__scalar(size_t channels, size_t nr, const int64_t *roff, const float *wy,
                                  const float *dwy, size_t nc, const int64_t *coff, const float *wx,
                                  const float *dwx, const float *in, const float *g, float *io,
                                  float *gxy)
{
    float sx = 0.0f, sy = 0.0f;
    for (size_t r = 0; r < nr; r++)
        for (size_t c = 0; c < nc; c++) {
            const int64_t o = roff[r] + coff[c];
            if (io) {
                const float w = wy[r] * wx[c];
                for (size_t j = 0; j < channels; j++) io[o + (int64_t)j] += w * g[j];
            }
            if (gxy) {
                const float wdx = wy[r] * dwx[c], wdy = dwy[r] * wx[c];
                float vg = 0.0f; /* <v, g> of the tap, then both weights: one pass */
                for (size_t j = 0; j < channels; j++) vg += in[o + (int64_t)j] * g[j];
                sx += wdx * vg;
                sy += wdy * vg;
            }
        }
    if (gxy) {
        gxy[0] = sx;
        gxy[1] = sy;
    }
}
