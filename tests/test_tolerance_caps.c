/* Property tests: no tolerance term wider than what it stands for. Random inputs with
 * extreme but finite coordinates (up to 1e9, around 2^24, near the int32 limits, both signs) on
 * planes of known range [1, 20]: every element's pos_err + ambig stays within the range its value can
 * reach, so an output moved by that range (and its own rounding) fails. The RoIAlign family and the
 * deformable ops: test_tolerance_caps_roi.c, test_tolerance_caps_deform.c. */
#include "tolerance_caps.h"

/* the grid sampler at extreme coordinates: forward values, and the backward's grid gradient */
static int64_t grid_property(int backward)
{
    const op_desc *op = op_find(backward ? "grid_sampler_2d_backward" : "grid_sampler_2d");
    unsigned seed = 24;
    int64_t total = 0;
    for (int im = 0; im < 3; im++)
        for (int pad = 0; pad < 3; pad++)
            for (int ac = 0; ac < 2; ac++) {
                if (backward && im == 1) continue; /* nearest has no grid gradient */
                ref_grid_sampler_params p = {1, 2, 7, 9, 100, 100, im, pad, ac, {1, 1}};
                const int64_t np = p.Ho * p.Wo, n = p.C * np;
                double *x = plane_values(p.C * p.H * p.W, &seed), *grid = malloc(sizeof(double) * (size_t)(2 * np));
                double *go = plane_values(n, &seed);
                for (int64_t k = 0; k < 2 * np; k++) {
                    /* one axis in four stays on the plane, so the other's extreme coordinate shows */
                    double S = k % 2 ? (double)p.H : (double)p.W;
                    grid[k] = rand_r(&seed) % 4 == 0 ? (double)(float)(2.4 * uniform(&seed) - 1.2)
                                                     : (double)(float)(extreme(&seed) * 2.0 / S);
                }
                char what[64];
                snprintf(what, sizeof what, "grid %s mode %d pad %d ac %d", backward ? "grid_grad" : "output", im, pad, ac);
                if (!backward) {
                    double *y = malloc(sizeof(double) * (size_t)n);
                    ref_bounds b = bounds_alloc(op->tol[0].k_pos * CONFORM_U_F32, n);
                    f64_grid_sampler_2d_fwd__ref(&p, x, grid, y, &b);
                    /* bilinear, nearest: convex in the taps, within [0, 20]; bicubic: within
                       (11/8)^2 times half the spread 20 of the middle */
                    assert_below_reach(op, 0, y, &b, n, NULL, im == 2 ? 1.890625 * 20 : PLANE_HI, what);
                    bounds_free(&b);
                    free(y);
                    total += n;
                } else {
                    double *ig = malloc(sizeof(double) * (size_t)(p.C * p.H * p.W)), *gg = malloc(sizeof(double) * (size_t)(2 * np));
                    double *reach = malloc(sizeof(double) * (size_t)(2 * np));
                    ref_bounds b[2] = {bounds_alloc(op->tol[0].k_pos * CONFORM_U_F32, p.C * p.H * p.W),
                                       bounds_alloc(op->tol[1].k_pos * CONFORM_U_F32, 2 * np)};
                    f64_grid_sampler_2d_bwd__ref(&p, go, x, grid, ig, gg, b);
                    /* a grid gradient component lies within +-M sum_c |g_c| k 20 anywhere (M the
                       coordinate multiplier, k the slope bound: 1 bilinear, 3/2 * 11/8 bicubic) */
                    const double k = im == 2 ? 1.5 * 1.375 : 1.0;
                    for (int64_t q = 0; q < np; q++) {
                        double sg = 0;
                        for (int64_t c = 0; c < p.C; c++) sg += fabs(go[c * np + q]);
                        reach[2 * q] = 2 * (ac ? (p.W - 1) / 2.0 : p.W / 2.0) * sg * k * PLANE_HI;
                        reach[2 * q + 1] = 2 * (ac ? (p.H - 1) / 2.0 : p.H / 2.0) * sg * k * PLANE_HI;
                    }
                    assert_below_reach(op, 1, gg, &b[1], 2 * np, reach, 0, what);
                    bounds_free(&b[0]); bounds_free(&b[1]);
                    free(ig); free(gg); free(reach);
                    total += 2 * np;
                }
                free(x); free(grid); free(go);
            }
    return total;
}

Test(tolerance_caps, grid_sampler_values_at_extreme_coordinates_stay_within_the_plane_range)
{
    cr_assert_geq(grid_property(0), 100000);
}

Test(tolerance_caps, grid_sampler_grid_gradients_at_extreme_coordinates_stay_within_their_reach)
{
    cr_assert_geq(grid_property(1), 100000);
}

/* Bicubic samples nothing beyond the int32 range of its unpadded coordinate (spec 7.2), padding
 * after: with border padding at W = 25, grid x = 171798688 is 2147483612 in double (a border value)
 * and fl(fl(fl((g + 1) 25) - 1) / 2) = 2^31 in float32 (nothing, 0). tol + ambig must allow both. */
Test(tolerance_caps, bicubic_border_across_the_int32_limit_allows_nothing_sampled)
{
    const op_desc *op = op_find("grid_sampler_2d");
    ref_grid_sampler_params p = {1, 1, 4, 25, 1, 1, 2, 1, 0, {1, 1}};
    double x[100], grid[2] = {171798688.0, 0.0}, y;
    for (int i = 0; i < 100; i++) x[i] = 5.0 + i % 25;
    volatile float g0 = (float)grid[0], fx = ((g0 + 1.0f) * 25.0f - 1.0f) / 2.0f;
    cr_assert(fx >= 2147483648.0f && ((grid[0] + 1) * 25 - 1) / 2 < 2147483647.0, "the premise: %g", (double)fx);
    ref_bounds b = bounds_alloc(op->tol[0].k_pos * CONFORM_U_F32, 1);
    f64_grid_sampler_2d_fwd__ref(&p, x, grid, &y, &b);
    tol_inputs t = {DTYPE_FLOAT32, &op->tol[0], b.abs_sum, b.n_terms, b.pos_err, b.ambig};
    double ambig, tol = compare_tolerance(&t, 0, &ambig);
    cr_assert(y > 10.0, "the reference samples the border: %g", y);
    cr_assert(tol + ambig >= y, "tol %g + ambig %g does not reach 0 from %g", tol, ambig, y);
    bounds_free(&b);
}
