/* f32_grid_bilinear_keys, portable C (the reference of the SIMD variants' arithmetic). */
#include "opt_internal.h"

void f32_grid_bilinear_keys_ukernel__scalar(size_t n, const float *grid, const f32_grid_keys_params *kp,
                                            int32_t *key, int32_t *x0, float *lx, float *ly)
{
    for (size_t q = 0; q < n; q++) {
        const float gx = grid[2 * q], gy = grid[2 * q + 1];
        const float ix = kp->align_corners ? (gx + 1.0f) * 0.5f * kp->wm1 : ((gx + 1.0f) * kp->w - 1.0f) * 0.5f;
        const float iy = kp->align_corners ? (gy + 1.0f) * 0.5f * kp->hm1 : ((gy + 1.0f) * kp->h - 1.0f) * 0.5f;
        const int in = ix >= 0.0f && ix < kp->wm1 && iy >= 0.0f && iy < kp->hm1;
        const float ixs = in ? ix : 0.0f, iys = in ? iy : 0.0f;
        const int32_t x = (int32_t)ixs, y = (int32_t)iys;
        key[q] = in ? y * kp->xb + (x >> kp->xshift) : -1;
        x0[q] = x;
        lx[q] = ixs - (float)x;
        ly[q] = iys - (float)y;
    }
}
