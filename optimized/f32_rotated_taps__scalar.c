/* f32_rotated_taps, portable C: per bin at most 16 corners, merged by a search of the bin's taps
 * so far (the reference order of the SIMD variant). */
#include "opt_internal.h"

size_t f32_rotated_taps_ukernel__scalar(const f32_rotated_roi *g, size_t base, size_t *starts, int32_t *pix, float *w)
{
    const int32_t H = g->H, W = g->W, HW = H * W;
    const float ghf = (float)g->gh, gwf = (float)g->gw, Hf = (float)H, Wf = (float)W, c = g->cos_t, s = g->sin_t;
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
                    const float yy = by + oy[iy], xx = bx + ox[ix];
                    float y = yy * c - xx * s + g->Cy;
                    float x = yy * s + xx * c + g->Cx;
                    if (!(y >= -1.0f && y <= Hf && x >= -1.0f && x <= Wf)) continue; /* NaN too */
                    if (y <= 0.0f) y = 0.0f;
                    if (x <= 0.0f) x = 0.0f;
                    int32_t y0 = (int32_t)y, x0 = (int32_t)x, y1, x1;
                    if (y0 >= H - 1) { y0 = y1 = H - 1; y = (float)y0; } else y1 = y0 + 1;
                    if (x0 >= W - 1) { x0 = x1 = W - 1; x = (float)x0; } else x1 = x0 + 1;
                    const float ly = y - (float)y0, lx = x - (float)x0, hy = 1.0f - ly, hx = 1.0f - lx;
                    const int32_t cp[4] = {y0 * W + x0, y0 * W + x1, y1 * W + x0, y1 * W + x1};
                    const float cw[4] = {hy * hx * g->inv_count, hy * lx * g->inv_count, ly * hx * g->inv_count,
                                         ly * lx * g->inv_count};
                    for (int t = 0; t < 4; t++) {
                        const int32_t k = cp[t] + (cw[t] == 0.0f ? HW : 0); /* weight 0: its own class */
                        size_t j = b0;
                        while (j < n && key[j - b0] != k) j++;
                        if (j < n) {
                            w[j] += cw[t];
                        } else {
                            key[n - b0] = k;
                            pix[n] = cp[t];
                            w[n] = cw[t];
                            n++;
                        }
                    }
                }
        }
    starts[g->PH * g->PW] = base + n;
    return n;
}
