/* The bicubic grid gradient where a tap enters the stencil: W'' of the cubic convolution jumps by
 * |2A| = 1.5 at |x| = 2, so a position error that carries the coordinate across an integer changes
 * the gradient at first order, from a pixel the nominal stencil does not hold. The bounds at the
 * nominal point must cover the gradient at every position of its rounding box. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "compare.h"
#include "conform_ref.h"
#include "op.h"
#include "ref_check.h"

/* grid_grad[0] of one point at x-coordinate gx (y at the centre) over a 9x9 plane that is 0 but for
 * a large value at column 2, with its bounds when b is given */
static double grid_grad_x(double gx, ref_bounds *b)
{
    ref_grid_sampler_params p = {1, 1, 9, 9, 1, 1, 2, 0, 1, {0, 1}}; /* bicubic, zeros, align_corners */
    double x[81] = {0}, grid[2] = {gx, 0}, go[1] = {1}, ig[81], gg[2];
    for (int r = 0; r < 9; r++) x[r * 9 + 2] = 1e6;
    ref_bounds bb[2] = {{b ? b->pos_rel_err : 0, NULL, NULL, NULL, NULL}, b ? *b : (ref_bounds){0, NULL, NULL, NULL, NULL}};
    f64_grid_sampler_2d_bwd__ref(&p, go, x, grid, ig, gg, b ? bb : NULL);
    return gg[0];
}

Test(cubic_knot, grid_gradient_bounds_cover_a_tap_entering_the_stencil)
{
    const op_desc *op = op_find("grid_sampler_2d_backward");
    /* ix = 4 (gx + 1): 2^-21 above 4, where column 2 lies just beyond the stencil's reach (|x| > 2) */
    const double g0 = ldexp(1.0, -23), ix0 = 4 * (g0 + 1);
    ref_bounds b = bounds_alloc(op->tol[1].k_pos * CONFORM_U_F32, 2);
    const double at0 = grid_grad_x(g0, &b);
    const ref_grid_sampler_params p = {1, 1, 9, 9, 1, 1, 2, 0, 1, {0, 1}};
    const double dx = ref_grid_sampler_box(&p, g0, 9, op->tol[1].k_pos * CONFORM_U_F32);
    cr_assert(ix0 - dx < 4, "the rounding box must hold the integer 4 (dx %g)", dx);
    tol_inputs t = {DTYPE_FLOAT32, &op->tol[1], b.abs_sum, b.n_terms, b.pos_err, b.ambig};
    double ambig, tol = compare_tolerance(&t, 0, &ambig);
    int checked = 0;
    /* positions across the integer, within the box: column 2 enters with W'(2 - d) ~ 1.5 d */
    for (double f = 0.25; f <= 1.0; f += 0.25) {
        const double ix = ix0 - f * dx, at = grid_grad_x(ix / 4 - 1, NULL);
        if (!(ix < 4)) continue;
        cr_assert(fabs(at - at0) <= tol + ambig, "at ix = 4 - %.3g: the gradient moves by %.6g, beyond tol %.6g + ambig %.6g",
                  4 - ix, fabs(at - at0), tol, ambig);
        checked++;
    }
    cr_assert_geq(checked, 2);
    bounds_free(&b);
}
