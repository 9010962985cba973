/* The tolerance models hold for every reasonable float32 evaluation of the spec, and ambiguity
 * never hides a real mismatch: the two field examples as regressions, then, for every
 * ambiguity class, a real bug confined to the elements that class flags, which must be caught. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "ref_check.h"
#include "compare.h"
#include "dtype.h"


/* the verdict on got, with the op's model and the reference's bounds */
static compare_result judge(const double *ref, const float *got, int64_t n, const ref_bounds *b, const tol_model *m)
{
    tol_inputs t = {DTYPE_FLOAT32, m, b->abs_sum, b->n_terms, b->pos_err, b->ambig};
    compare_result r;
    compare_f32(ref, got, n, &t, &r);
    return r;
}

static ref_bounds bounds_for(const tol_model *m, int64_t n) { return bounds_alloc(m->k_pos * CONFORM_U_F32, n); }

/* ---- bicubic as the spec writes it, in float32 (PyTorch's order) ----------------------------- */

/* every operation rounded to float32 (volatile: no contraction into an FMA, which errs less) */
static float cc1_f32(float x)
{
    volatile float a = 1.25f * x, b = a - 2.25f, c = b * x, d = c * x;
    return d + 1.0f;
}

static float cc2_f32(float x)
{
    const float A = -0.75f;
    volatile float a = A * x, b = a - 5 * A, c = b * x, d = c + 8 * A, e = d * x;
    return e - 4 * A;
}

/* weights of taps floor(i)-1 .. floor(i)+2: cc2(t+1), cc1(t), cc1(1-t), cc2((1-t)+1) */
static void spec_weights_f32(float i, float w[4])
{
    volatile float t = i - floorf(i), s = 1.0f - t, t1 = t + 1.0f, s1 = s + 1.0f;
    w[0] = cc2_f32(t1);
    w[1] = cc1_f32(t);
    w[2] = cc1_f32(s);
    w[3] = cc2_f32(s1);
}

/* unnormalized coordinate, align_corners false, in float32 */
static float unnorm_f32(float c, int64_t S)
{
    volatile float a = c + 1.0f, b = a * (float)S, d = b - 1.0f;
    return d / 2.0f;
}

#define BH 7
#define BW 8

static void bicubic_problem(double *x, double grid[2])
{
    for (int k = 0; k < BH * BW; k++) x[k] = (double)(float)sin(1.7 * k + 0.3);
    grid[0] = 0.3f;
    /* 1.4275 + 1 ulp, iy = 7.996: only row 6 is in bounds, with weight cc2(1.996) ~ -1e-5, which
       the spec's Horner form in float32 gets 4% wrong (err/tol 5.9 under the old per-factor model) */
    grid[1] = nextafterf(1.4275f, 2.0f);
}

/* forward value at one point, zeros padding: along x per row, then along y (PyTorch's nesting) */
static float bicubic_f32(const double *x, const double grid[2], int broken)
{
    float ix = unnorm_f32((float)grid[0], BW), iy = unnorm_f32((float)grid[1], BH), wx[4], wy[4];
    spec_weights_f32(ix, wx);
    spec_weights_f32(iy, wy);
    if (broken) wy[0] = cc2_f32(iy - floorf(iy)); /* the bug: cc2(t) for the far tap, not cc2(t+1) */
    int64_t x0 = (int64_t)floorf(ix) - 1, y0 = (int64_t)floorf(iy) - 1;
    float out = 0;
    for (int j = 0; j < 4; j++) {
        int64_t r = y0 + j;
        if (r < 0 || r >= BH) continue;
        float row = 0;
        for (int i = 0; i < 4; i++) {
            int64_t c = x0 + i;
            if (c >= 0 && c < BW) row += wx[i] * (float)x[r * BW + c];
        }
        out += wy[j] * row;
    }
    return out;
}

Test(tolerance_regression, bicubic_as_the_spec_writes_it_passes_and_a_wrong_tap_fails)
{
    double x[BH * BW], grid[2], ref;
    bicubic_problem(x, grid);
    ref_grid_sampler_params p = {1, 1, BH, BW, 1, 1, 2, 0, 0, {1, 1}};
    const tol_model *m = &op_find("grid_sampler_2d")->tol[0];
    ref_bounds b = bounds_for(m, 1);
    f64_grid_sampler_2d_fwd__ref(&p, x, grid, &ref, &b);
    float got = bicubic_f32(x, grid, 0);
    /* the cancellation is real: cc2(t+1) loses digits of a 1e-5 weight */
    cr_assert(fabs(got - ref) > 1e-2 * fabs(ref), "ref %.9g got %.9g: the example should cancel", ref, (double)got);
    compare_result r = judge(&ref, &got, 1, &b, m);
    cr_assert_eq(r.n_over, 0, "the spec's own formulas in float32 must pass: err/tol %g", r.max_err_over_tol);
    float bad = bicubic_f32(x, grid, 1);
    r = judge(&ref, &bad, 1, &b, m);
    cr_assert_gt(r.n_over, 0, "cc2(t) for the far tap must fail: ref %.9g got %.9g", ref, (double)bad);
    bounds_free(&b);
}

Test(tolerance_regression, bicubic_input_grad_as_the_spec_writes_it_passes)
{
    double x[BH * BW], grid[2], gi[BH * BW], gg[2];
    const double go = -0.8125;
    bicubic_problem(x, grid);
    ref_grid_sampler_params p = {1, 1, BH, BW, 1, 1, 2, 0, 0, {1, 0}};
    ref_bounds b[2] = {bounds_for(&op_find("grid_sampler_2d_backward")->tol[0], BH * BW), bounds_alloc(0, 2)};
    f64_grid_sampler_2d_bwd__ref(&p, &go, x, grid, gi, gg, b);
    float ix = unnorm_f32((float)grid[0], BW), iy = unnorm_f32((float)grid[1], BH), wx[4], wy[4], got[BH * BW] = {0};
    spec_weights_f32(ix, wx);
    spec_weights_f32(iy, wy);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) {
            int64_t r = (int64_t)floorf(iy) - 1 + j, c = (int64_t)floorf(ix) - 1 + i;
            if (r >= 0 && r < BH && c >= 0 && c < BW) got[r * BW + c] += (float)go * wy[j] * wx[i];
        }
    compare_result res = judge(gi, got, BH * BW, &b[0], &op_find("grid_sampler_2d_backward")->tol[0]);
    cr_assert_eq(res.n_over, 0, "input_grad by the spec's formulas must pass: err/tol %g", res.max_err_over_tol);
    bounds_free(&b[0]);
    bounds_free(&b[1]);
}

/* ---- nearest, border, align_corners, a single-row plane ------------------------------------ */

/* 1 x 10 input, 4 x 4 grid: x beyond +-1 and exactly on +-1 (the clip points), y anywhere (H = 1:
   every y sits on the clip point, which moves no sample) */
static const double row10[10] = {0.3, -0.7, 0.1, 0.9, -0.2, 0.5, -0.4, 0.8, -0.6, 0.25};
static const double grid16[32] = {1.0,   0.2,  -0.19, -0.5, 1.19,  0.7, -0.32, 0.1,  0.53, -0.9, -1.0, 0.0,
                                  1.14,  0.4,  0.54,  -0.3, -0.82, 0.6, 1.12,  -0.8, 0.62, 0.05, 0.01, 1.0,
                                  -0.89, -1.0, 0.92,  0.3,  -1.05, 0.9, -0.15, -0.6};
static const double go16[16] = {0.5, -0.25, 0.75, 1.0, -0.5, 0.125, 0.875, -1.0,
                                0.625, 0.375, -0.75, 0.25, -0.125, 1.0, -0.375, 0.5};

Test(tolerance_regression, nearest_zeros_padding_judged_as_border_fails)
{
    ref_grid_sampler_params border = {1, 1, 1, 10, 4, 4, 1, 1, 1, {1, 1}}, zeros = border;
    zeros.padding_mode = 0;
    double want[10], gg[32], wrong[10], gg0[32];
    const tol_model *m = &op_find("grid_sampler_2d_backward")->tol[0];
    ref_bounds b[2] = {bounds_for(m, 10), bounds_for(&op_find("grid_sampler_2d_backward")->tol[1], 32)};
    f64_grid_sampler_2d_bwd__ref(&border, go16, row10, grid16, want, gg, b);
    f64_grid_sampler_2d_bwd__ref(&zeros, go16, row10, grid16, wrong, gg0, NULL);
    float ok[10], bad[10];
    for (int k = 0; k < 10; k++) { ok[k] = (float)want[k]; bad[k] = (float)wrong[k]; }
    compare_result r = judge(want, ok, 10, &b[0], m);
    cr_assert_eq(r.n_over, 0, "border's own result passes");
    cr_assert_eq(r.n_ambiguous, 0, "under border no clip point moves a sample: nothing is ambiguous");
    r = judge(want, bad, 10, &b[0], m);
    cr_assert_gt(r.n_over, 0, "zeros padding's input_grad must fail as border (the clipped samples are missing)");
    bounds_free(&b[0]);
    bounds_free(&b[1]);
}

/* ---- every ambiguity class: a real bug confined to its flagged elements is caught ---------- */

/* flagged elements only differ between ref-as-float and bad; at least one is flagged */
static void assert_confined(const ref_bounds *b, const double *ref, const float *bad, int64_t n)
{
    int flagged = 0;
    for (int64_t k = 0; k < n; k++) {
        if (b->ambig[k] > 0) flagged++;
        else cr_assert_eq(bad[k], (float)ref[k], "the bug touches element %lld, which is not flagged", (long long)k);
    }
    cr_assert_gt(flagged, 0, "the class flags something");
}

/* nearest: near the rint tie at i = 1.5 float32 may pick pixel 1 or 2; a kernel off by one picks
   3. x = -2^-26 (W = 4): exactly i = 1.5 - 2^-25, pixel 1; PyTorch's float32 form rounds x + 1 to 1,
   i to the tie and picks pixel 2. (An exact tie, x = 0, is no ambiguity: test_grid_sampler.c.) */
Test(ambiguity_class, nearest_tie_allows_the_other_rounding_but_not_a_wrong_pixel)
{
    const double x[4] = {0, 1, 1.25, 4}, grid[2] = {-0x1p-26, 0}, go = 1; /* align_corners false: y i = 0 */
    ref_grid_sampler_params p = {1, 1, 1, 4, 1, 1, 1, 0, 0, {1, 0}};
    const tol_model *m = &op_find("grid_sampler_2d_backward")->tol[0];
    double gi[4], gg[2];
    ref_bounds b[2] = {bounds_for(m, 4), bounds_alloc(0, 2)};
    f64_grid_sampler_2d_bwd__ref(&p, &go, x, grid, gi, gg, b);
    cr_assert_eq(gi[1], 1.0, "just below the tie: pixel 1");
    float other[4] = {0, 0, 1, 0}, off_by_one[4] = {0, 0, 0, 1};
    cr_assert_eq(judge(gi, other, 4, &b[0], m).n_over, 0, "the tie's other rounding is allowed");
    cr_assert_gt(judge(gi, off_by_one, 4, &b[0], m).n_over, 0, "pixel 3 is no rounding of 1.5");
    /* forward: ambig is the other pixel's difference (0.25), the bug's 3 is caught */
    const tol_model *mf = &op_find("grid_sampler_2d")->tol[0];
    ref_bounds bf = bounds_for(mf, 1);
    double y;
    f64_grid_sampler_2d_fwd__ref(&p, x, grid, &y, &bf);
    float bad = 4;
    assert_confined(&bf, &y, &bad, 1);
    cr_assert_gt(bf.ambig[0], 0);
    cr_assert_gt(judge(&y, &bad, 1, &bf, mf).n_over, 0);
    bounds_free(&b[0]);
    bounds_free(&b[1]);
    bounds_free(&bf);
}

/* bilinear grid gradient at a cell edge (integer i). Where float32 may round the position onto the
   edge, the slope of either cell is allowed; a kernel whose x1 = ceil(x) collapses the cell there
   and returns 0 is caught. Where every float32 form computes i exactly, spec 7.3's floor picks
   the right-hand cell in every form, so the left cell's slope is caught too. */
static void cell_edge_case(double gx, double *gg, ref_bounds b[2])
{
    const double x[8] = {0, 10, 21, 33, 0, 10, 21, 33}, go = 1;
    const double grid[2] = {gx, 0}; /* align_corners false, W = 4: i = 1 at gx = -0.25; H = 2: 0.5 */
    ref_grid_sampler_params p = {1, 1, 2, 4, 1, 1, 0, 0, 0, {0, 1}};
    const tol_model *m = &op_find("grid_sampler_2d_backward")->tol[1];
    double gi[8];
    b[0] = bounds_for(m, 8);
    b[1] = bounds_for(m, 2);
    f64_grid_sampler_2d_bwd__ref(&p, &go, x, grid, gi, gg, b);
}

Test(ambiguity_class, coordinate_gradient_jump_allows_either_slope_not_zero)
{
    const tol_model *m = &op_find("grid_sampler_2d_backward")->tol[1];
    double gg[2];
    ref_bounds b[2];
    cell_edge_case(-0.25 - 0x1p-30, gg, b); /* i = 1 - 2^-29: float32 rounds it onto the edge */
    cr_assert_gt(b[1].ambig[0], 0, "the x gradient jumps at i = 1");
    cr_assert_lt(b[1].ambig[0], 3.0, "slopes 10 and 11 (x 2): the jump is 2, not the gradient");
    float left[2] = {20, (float)gg[1]}, right[2] = {22, (float)gg[1]}, collapsed[2] = {0, (float)gg[1]};
    cr_assert_eq(judge(gg, left, 2, &b[1], m).n_over, 0, "the left cell's slope is allowed");
    cr_assert_eq(judge(gg, right, 2, &b[1], m).n_over, 0, "the right cell's slope is allowed");
    assert_confined(&b[1], gg, collapsed, 2);
    cr_assert_gt(judge(gg, collapsed, 2, &b[1], m).n_over, 0, "a zero gradient is no cell's slope");
    bounds_free(&b[0]);
    bounds_free(&b[1]);
}

Test(ambiguity_class, exact_cell_edge_takes_the_spec_cell_only)
{
    const tol_model *m = &op_find("grid_sampler_2d_backward")->tol[1];
    double gg[2];
    ref_bounds b[2];
    cell_edge_case(-0.25, gg, b); /* i = 1 exactly in every float32 form */
    cr_assert_eq(b[1].ambig[0], 0, "no rounding can move an exact i off the edge");
    cr_assert_float_eq(gg[0], 22.0, 1e-9, "floor(1) = 1: the right cell's slope 11, times W/2");
    float left[2] = {20, (float)gg[1]}, right[2] = {22, (float)gg[1]};
    cr_assert_eq(judge(gg, right, 2, &b[1], m).n_over, 0, "the spec's cell passes");
    cr_assert_gt(judge(gg, left, 2, &b[1], m).n_over, 0, "the left cell's slope is caught");
    bounds_free(&b[0]);
    bounds_free(&b[1]);
}

/* border padding's clip point (i = S-1, align_corners), and reflection's fold there: at grid value
   exactly 1 every float32 form gives i = S-1 itself, so the gradient is the spec's 0 only and both
   the inner slope and the zeros-padding gradient (slope towards the zero beyond) are caught; just
   inside (1 - 2^-22, which float32 may round onto the clip point) it is the inner slope or the
   clipped branch's */
static void clip_or_fold(int padding_mode)
{
    const double x[4] = {0, 10, 21, 33}, go = 1;
    ref_grid_sampler_params p = {1, 1, 1, 4, 1, 1, 0, padding_mode, 1, {0, 1}}, z = p;
    z.padding_mode = 0;
    const tol_model *m = &op_find("grid_sampler_2d_backward")->tol[1];
    double gi[4], gg[2], gz[2];
    ref_bounds b[2] = {bounds_for(m, 4), bounds_for(m, 2)};
    for (int exact = 1; exact >= 0; exact--) {
        const double grid[2] = {exact ? 1 : 1 - 0x1p-22, 0}; /* i = 3 = S-1 (or just below); H = 1 */
        f64_grid_sampler_2d_bwd__ref(&p, &go, x, grid, gi, gg, b);
        f64_grid_sampler_2d_bwd__ref(&z, &go, x, grid, gi, gz, NULL);
        float bad[2] = {(float)gz[0], (float)gg[1]}, inner[2] = {12 * 1.5f, (float)gg[1]};
        if (exact) {
            cr_assert_eq(gg[0], 0.0);
            cr_assert_eq(b[1].ambig[0], 0.0, "an exact clip point has one legal x gradient: ambig %g", b[1].ambig[0]);
            cr_assert_gt(judge(gg, inner, 2, &b[1], m).n_over, 0, "the inner slope at an exact clip point must fail");
            cr_assert_gt(judge(gg, bad, 2, &b[1], m).n_over, 0, "zeros padding's gradient %g (ref %g) must fail", gz[0], gg[0]);
        } else { /* the reference is the inner slope 12 (x 1.5) here; border's 0 (reflection: -18) is legal too */
            float clipped[2] = {0, (float)gg[1]};
            cr_assert_gt(b[1].ambig[0], 0, "near the clip point the x gradient is ambiguous");
            cr_assert_leq(b[1].ambig[0], 1.5 * 2 * 18, "at most the inner slope's sign flip: %g", b[1].ambig[0]);
            cr_assert_eq(judge(gg, clipped, 2, &b[1], m).n_over, 0, "the clipped branch is allowed near the clip point");
        }
    }
    bounds_free(&b[0]);
    bounds_free(&b[1]);
}

Test(ambiguity_class, border_clip_point_catches_the_zeros_gradient) { clip_or_fold(1); }
Test(ambiguity_class, reflection_fold_point_catches_the_zeros_gradient) { clip_or_fold(2); }

/* rule A window line: a sample on y = -1 the model cannot prove exact (corners -1.5 + 2^-23 and
   -0.5 - 2^-23: 24-bit values) may be kept (row 0) or dropped; a kernel that clamps it to row H-1
   is caught (forward and backward). An exact one is not ambiguous: test_roi_align.c. */
Test(ambiguity_class, window_line_allows_dropping_the_sample_not_a_wrong_row)
{
    double x[16], rois[5] = {0, 1, -1.5 + 0x1p-23, 2, -0.5 - 0x1p-23}, y, gi[16];
    for (int i = 0; i < 16; i++) x[i] = i + 1;
    ref_roi_align_params p = {1, 1, 4, 4, 1, 1, 1, 1.0, 1, 0, 0};
    const tol_model *m = &op_find("roi_align")->tol[0];
    ref_bounds b = bounds_for(m, 1);
    f64_roi_align_fwd__ref(&p, x, rois, &y, &b);
    float dropped = 0, wrong_row = 14.5f; /* row 3 at x = 1.5 */
    cr_assert_eq(judge(&y, &dropped, 1, &b, m).n_over, 0, "dropping the sample is allowed");
    assert_confined(&b, &y, &wrong_row, 1);
    cr_assert_gt(judge(&y, &wrong_row, 1, &b, m).n_over, 0);
    const double go = 1;
    const tol_model *mb = &op_find("roi_align_v2_backward")->tol[0];
    ref_bounds bb = bounds_for(mb, 16);
    f64_roi_align_bwd__ref(&p, &go, rois, gi, &bb);
    float bad[16];
    for (int i = 0; i < 16; i++) bad[i] = (float)gi[i];
    /* row 3 instead of row 0 */
    bad[13] = bad[1];
    bad[14] = bad[2];
    bad[1] = bad[2] = 0;
    cr_assert_gt(judge(gi, bad, 16, &bb, mb).n_over, 0, "the gradient in the wrong row is caught");
    bounds_free(&b);
    bounds_free(&bb);
}

/* adaptive count at an integer (rh / PH = 2): 2 or 3 samples per axis; on a ramp both means are the
   bin centre, so little can flip; a kernel that samples 2 x 2 but divides by 3 x 3 is caught */
Test(ambiguity_class, adaptive_count_on_a_ramp_catches_a_mismatched_divisor)
{
    double x[64], rois[5] = {0, 0.25, 0.25, 4.25, 4.25}, y[4];
    for (int i = 0; i < 64; i++) x[i] = (double)(i % 8);
    ref_roi_align_params p = {1, 1, 8, 8, 1, 2, 2, 1.0, 0, 0, 0};
    const tol_model *m = &op_find("roi_align")->tol[0];
    ref_bounds b = bounds_for(m, 4);
    f64_roi_align_fwd__ref(&p, x, rois, y, &b);
    float bad[4];
    for (int i = 0; i < 4; i++) {
        cr_assert_gt(b.ambig[i], 0, "bin %d: the count may flip", i);
        cr_assert_lt(b.ambig[i], 0.01 * fabs(y[i]) + 1e-6, "bin %d: equal means on a ramp: ambig %g", i, b.ambig[i]);
        bad[i] = (float)(y[i] * 4.0 / 9.0);
    }
    assert_confined(&b, y, bad, 4);
    cr_assert_gt(judge(y, bad, 4, &b, m).n_over, 0);
    bounds_free(&b);
}

/* deformable_offsets_grad: the x-offset gradient jumps where px crosses an integer; just below
   px = 1 either cell's slope (10 or 11) is allowed, a kernel that collapses the cell there and
   returns 0 is caught */

Test(ambiguity_class, deformable_offset_gradient_jump_allows_either_slope_not_zero)
{
    const double x[3] = {0, 10, 21}, grad[3] = {1, 1, 1};
    /* positions px = wo + offset: 0.25, 1 - 1e-9 (not a float32 number: rounding may reach 1), 2.5 */
    double off[9] = {0.25, 0, 1, -1e-9, 0, 1, 0.5, 0, 1}, gx[3], go[9];
    ref_deformable_params p = {1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 3};
    const tol_model *m = &op_find("deformable_offsets_grad")->tol[1];
    ref_bounds bx = bounds_for(&op_find("deformable_offsets_grad")->tol[0], 3), bo = bounds_for(m, 9);
    f64_deformable_offsets_bwd__ref(&p, grad, x, off, gx, go, &bx, &bo);
    cr_assert_float_eq(go[3], 10.0, 1e-6, "left cell's slope");
    cr_assert_gt(bo.ambig[3], 0, "the x-offset gradient jumps at px = 1");
    cr_assert_lt(bo.ambig[3], 1.5, "slopes 10 and 11: the jump is 1: ambig %g", bo.ambig[3]);
    float right[9], collapsed[9];
    for (int i = 0; i < 9; i++) right[i] = collapsed[i] = (float)go[i];
    right[3] = 11;
    collapsed[3] = 0;
    cr_assert_eq(judge(go, right, 9, &bo, m).n_over, 0, "the right cell's slope is allowed");
    assert_confined(&bo, go, collapsed, 9);
    cr_assert_gt(judge(go, collapsed, 9, &bo, m).n_over, 0, "a zero gradient is no cell's slope");
    bounds_free(&bx);
    bounds_free(&bo);
}

/* A kernel on the other branch of an ambiguity rounds that branch's value as well: at bfloat16
   the x-offset gradient of a sample just left of the cell edge x = 1 (px = 1 - 1e-9, which float32
   rounds onto the edge, the next cell's slope 1.75) is 1.039 * 1.75 = 1.8184 on that branch, which
   a correct bfloat16 kernel stores as 1.8203: within ambig once the branch's own rounding counts.
   Twice the value is still caught. (A position beyond a window line has no such branch:
   every float32 form keeps it outside.) */
Test(ambiguity_class, the_other_branch_is_held_to_its_own_rounding_at_bfloat16)
{
    const double x[3] = {0.5, -0.25, 1.5}, grad[4] = {1, 1, 1.0390625, 1};
    /* (x offset, y offset, mask) per output column; column 2 samples at px = 1 + offset */
    double off[12] = {0.5, 0, 1, 0.5, 0, 1, -1e-9, 0, 1, 0.25, 0, 1}, gx[3], go[12];
    ref_deformable_params p = {1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1, 1, 4};
    const tol_model *m = &op_find("deformable_offsets_grad")->tol[1];
    ref_bounds bx = bounds_for(&op_find("deformable_offsets_grad")->tol[0], 3), bo = bounds_for(m, 12);
    f64_deformable_offsets_bwd__ref(&p, grad, x, off, gx, go, &bx, &bo);
    cr_assert(fabs(go[6] - 1.0390625 * -0.75) < 1e-6, "the nominal sample is in the cell [0, 1]: %g", go[6]);
    cr_assert_gt(bo.ambig[6], 0, "rounding may put it on the edge");
    tol_inputs t = {dtype_get(CONFORM_DTYPE_BFLOAT16), m, bo.abs_sum, bo.n_terms, bo.pos_err, bo.ambig};
    double kept[12], doubled[12];
    for (int i = 0; i < 12; i++) kept[i] = doubled[i] = dtype_round(CONFORM_DTYPE_BFLOAT16, go[i]);
    kept[6] = dtype_round(CONFORM_DTYPE_BFLOAT16, 1.0390625 * 1.75);
    cr_assert_gt(kept[6], 1.0390625 * 1.75, "bfloat16 rounds this one up: %.9g", kept[6]);
    doubled[6] = 2 * kept[6];
    compare_result r;
    compare_f64(go, kept, 12, &t, &r);
    cr_assert_eq(r.n_over, 0, "the other branch in bfloat16 is allowed (worst err/tol %g)", r.ambiguous_max_err_over_tol);
    compare_f64(go, doubled, 12, &t, &r);
    cr_assert_eq(r.n_over, 1, "twice its value is no branch's");
    bounds_free(&bx);
    bounds_free(&bo);
}

/* The same for rule A's window line: a RoIAlign sample at y = -1 - 2^-23 is dropped by the double
   reference and may be kept (clamped to row 0) by a float32 position; kept, its value 1.8184 is
   stored by a bfloat16 kernel as 1.8203, which its own rounding allows and ambig alone did not. */
Test(ambiguity_class, a_kept_window_line_sample_is_held_to_its_own_rounding_at_bfloat16)
{
    double x[16], rois[5] = {0, 1, -1.5 - 0x1p-23, 2, -0.5 - 0x1p-23}, y;
    for (int i = 0; i < 16; i++) x[i] = 1.0390625 * 1.75;
    ref_roi_align_params p = {1, 1, 4, 4, 1, 1, 1, 1.0, 1, 0, 0};
    const tol_model *m = &op_find("roi_align")->tol[0];
    ref_bounds b = bounds_for(m, 1);
    f64_roi_align_fwd__ref(&p, x, rois, &y, &b);
    cr_assert_eq(y, 0.0, "the nominal sample is outside");
    cr_assert_gt(b.ambig[0], 0, "rounding may keep it");
    tol_inputs t = {dtype_get(CONFORM_DTYPE_BFLOAT16), m, b.abs_sum, b.n_terms, b.pos_err, b.ambig};
    double kept = dtype_round(CONFORM_DTYPE_BFLOAT16, x[0]), doubled = 2 * kept;
    compare_result r;
    compare_f64(&y, &kept, 1, &t, &r);
    cr_assert_eq(r.n_over, 0, "the kept sample in bfloat16 is allowed (err/tol %g)", r.ambiguous_max_err_over_tol);
    compare_f64(&y, &doubled, 1, &t, &r);
    cr_assert_eq(r.n_over, 1, "twice its value is no branch's");
    bounds_free(&b);
}

/* deformable position formed with the pad subtracted last (nnabla: ((wo*sw + j*dw) + offset) - pl):
   its one rounding is at |p + pl|, not |p|. Offset 1e-4 at base 0 gives p = 1e-4, a float32 number
   (exact in the spec's order), but 1 + 1e-4 rounds by 1.7e-8: on a slope of 0.25 that is 4e-9,
   twice the value-only bound of this small output. Held to both forms, it passes. */

Test(tolerance_regression, deformable_position_with_the_pad_subtracted_last_passes)
{
    const double x[3] = {0.0035, 0.25, 0.3};
    const float off1 = 1e-4f;
    double off[12] = {0, 0, 1, off1, 0, 1, 0, 0, 1, 0, 0, 1}, y[4];
    ref_deformable_params p = {1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1, 1, 4};
    const tol_model *m = &op_find("deformable_offsets")->tol[0];
    ref_bounds b = bounds_for(m, 4);
    f64_deformable_offsets_fwd__ref(&p, x, off, y, &b);
    volatile float one = 1.0f, shifted = one + off1; /* (wo*sw + j*dw) + offset, rounded */
    volatile float pn = shifted - one;                 /* - pl: exact */
    cr_assert_neq((double)pn, (double)off1, "the two orders differ here");
    float got[4];
    for (int i = 0; i < 4; i++) got[i] = (float)y[i];
    got[1] = (float)((1 - (double)pn) * x[0] + (double)pn * x[1]);
    compare_result r = judge(y, got, 4, &b, m);
    cr_assert_eq(r.n_over, 0, "pad-last order allowed (err/tol %g)", r.max_err_over_tol);
    /* a position off by 100 times that is not */
    got[1] = (float)((1 - (off1 + 100 * ((double)pn - off1))) * x[0] + (off1 + 100 * ((double)pn - off1)) * x[1]);
    cr_assert_gt(judge(y, got, 4, &b, m).n_over, 0);
    bounds_free(&b);
}
