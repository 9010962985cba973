/* f32_bilerp_row_bwd, portable C (a column's sum is formed again for each of its rows: the same
 * operations, so the same value). */
#include "opt_internal.h"

void f32_bilerp_row_bwd_ukernel__scalar(size_t channels, size_t nr, const int64_t *roff, const float *wy,
                                        size_t ncol, const int64_t *coff, const size_t *cs, const int64_t *goff,
                                        const float *cw, const float *g, float *io)
{
    for (size_t i = 0; i < ncol; i++)
        for (size_t r = 0; r < nr; r++) {
            float *p = io + roff[r] + coff[i];
            for (size_t j = 0; j < channels; j++) {
                float s = 0.0f;
                for (size_t e = cs[i]; e < cs[i + 1]; e++) s += cw[e] * g[goff[e] + j];
                p[j] += wy[r] * s;
            }
        }
}
