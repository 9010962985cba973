/* f32_bilerp_bin_bwd, portable C. */
#include "opt_internal.h"

void f32_bilerp_bin_bwd_ukernel__scalar(size_t channels, size_t nr, const int64_t *roff,
                                            const float *wy, size_t nc, const int64_t *coff,
                                            const float *wx, const float *g, float *io)
{
    for (size_t r = 0; r < nr; r++) {
        float *row = io + roff[r];
        for (size_t c = 0; c < nc; c++) {
            const float w = wy[r] * wx[c];
            float *p = row + coff[c];
            for (size_t j = 0; j < channels; j++) p[j] += w * g[j];
        }
    }
}
