/* f32_rotated_taps, portable C: per bin at most 16 corners, merged by a search of the bin's taps
 * so far (the reference order of the SIMD variant). */
#include "opt_internal.h"

size_t f32_rotated_taps_ukernel__scalar(const f32_rotated_roi *g, size_t base, size_t *starts, int32_t *pix, float *w)
{
    const int32_t HW = (int32_t)(g->H * g->W);
    const float ghf = (float)g->gh, gwf = (float)g->gw;
    float oy[4], ox[4];
    for (int32_t iy = 0; iy < g->gh && iy < 4; iy++) oy[iy] = ((float)iy + 0.5f) * g->bin_h / ghf;
    for (int32_t ix = 0; ix < g->gw && ix < 4; ix++) ox[ix] = ((float)ix + 0.5f) * g->bin_w / gwf;
    size_t n = 0;
    int32_t key[16];
    for (int32_t ph = 0; ph < g->PH; ph++)
        for (int32_t pw = 0; pw < g->PW; pw++) {
            starts[ph * g->PW + pw] = base + n;
            const size_t b0 = n;
            const float by = -0.5f * g->Hr + (float)ph * g->bin_h, bx = -0.5f * g->Wr + (float)pw * g->bin_w;
            for (int32_t iy = 0; iy < g->gh; iy++)
                for (int32_t ix = 0; ix < g->gw; ix++) {
                    int64_t cp[4];
                    float cw[4];
                    if (!f32_rotated_corners(by + oy[iy], bx + ox[ix], g, cp, cw)) continue;
                    for (int t = 0; t < 4; t++) {
                        const int32_t k = (int32_t)cp[t] + (cw[t] == 0.0f ? HW : 0); /* weight 0: its own class */
                        size_t j = b0;
                        while (j < n && key[j - b0] != k) j++;
                        if (j < n) {
                            w[j] += cw[t];
                        } else {
                            key[n - b0] = k;
                            pix[n] = (int32_t)cp[t];
                            w[n] = cw[t];
                            n++;
                        }
                    }
                }
        }
    starts[g->PH * g->PW] = base + n;
    return n;
}
