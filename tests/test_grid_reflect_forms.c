/* The grid sampler's position term at huge coordinates, against kernels we did not write (docs/ops/
 * grid_sampler_2d.md, "Huge coordinates: why err/tol reaches 0.999996"). Correct float32 kernels
 * compute spec 7.1 in different orders: the unnormalize of the spec (ours, PyTorch) or as one FMA;
 * the reflection's fold count as a correctly rounded quotient with fmod's remainder (PyTorch's
 * scalar code), or as floor(t * (1/span)) with the remainder t - k span (Ascend CANN's vector code),
 * or by folding over the double period. Where a float32 coordinate cannot hold the position to a
 * cell (|i| near 2^23 and beyond) they land on different pixels for the same grid value, none of
 * them the golden's. The bound there is the farthest value of the taps the position box reaches;
 * every form must stay inside it, a kernel landing on the extreme tap sits on its edge (the 0.999996
 * of grid_fwd_huge_coords), and a wrong reflection must still fail where float32 holds the position. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "compare.h"
#include "conform_ref.h"
#include "op.h"
#include "ref_check.h"

enum { FORM_SPEC, FORM_FMA, NUN };                                       /* unnormalize orders */
enum { REF_PYTORCH, REF_ASCEND, REF_FOLD2, REF_BUG_PARITY, REF_BUG_SPAN, REF_BUG_NOABS, REF_BUG_AC, NREF };
#define NGOOD 3 /* the first NGOOD reflections are correct forms, the rest planted bugs */
#define MIN_BAND_FAIL 5 /* of 100: the fewest measured is 8 (bilinear, align_corners, no |t|) */

static float unnorm(float g, int64_t S, int ac, int form)
{
    if (form == FORM_FMA) return ac ? fmaf(g, (float)(S - 1) / 2, (float)(S - 1) / 2) : fmaf(g, (float)S / 2, (float)(S - 1) / 2);
    return ac ? (g + 1) / 2 * (float)(S - 1) : ((g + 1) * (float)S - 1) / 2;
}

/* spec 7.1's reflection (then the clip) in float32, in one of the forms above, or a planted bug */
static float reflect_f32(float i, int64_t S, int ac, int form)
{
    if (form == REF_BUG_AC) ac = !ac;                                     /* the other convention's fold points */
    float lo = ac ? 0.0f : -1.0f, hi = ac ? 2.0f * (float)(S - 1) : 2.0f * (float)S - 1.0f;
    if (form == REF_BUG_SPAN) hi += 2;                                    /* a period one pixel too long */
    if (lo == hi) return 0;
    const float mn = lo / 2, span = (hi - lo) / 2;
    float t = form == REF_BUG_NOABS ? i - mn : fabsf(i - mn), r;
    if (form == REF_ASCEND) {
        const float k = floorf(t * (1.0f / span)), extra = t - k * span;
        r = fmodf(k, 2) == 0 ? extra + mn : span - extra + mn;
    } else if (form == REF_FOLD2) {
        const float u = fmodf(t, 2 * span);
        r = u <= span ? u + mn : 2 * span - u + mn;
    } else {
        const float extra = fmodf(t, span);
        int even = fmodf(floorf(t / span), 2) == 0;
        if (form == REF_BUG_PARITY) even = !even;
        r = even ? extra + mn : span - extra + mn;
    }
    return fminf(fmaxf(r, 0), (float)(S - 1));
}

static float pad_f32(float i, int64_t S, int pad, int ac, int form)
{
    if (pad == 2) return reflect_f32(i, S, ac, form);
    if (pad == 1) return fminf(fmaxf(i, 0), (float)(S - 1));
    return i;
}

static float tap(const double *plane, int64_t H, int64_t W, float y, float x)
{
    return y >= 0 && y < (float)H && x >= 0 && x < (float)W ? (float)plane[(int64_t)y * W + (int64_t)x] : 0.0f;
}

/* one output element in float32: bilinear in the spec's weight order, or nearest */
static float sample_f32(const double *plane, int64_t H, int64_t W, int mode, float iy, float ix)
{
    if (!(fabsf(ix) <= 2147483647.0f && fabsf(iy) <= 2147483647.0f)) return 0;
    if (mode == 1) return tap(plane, H, W, rintf(iy), rintf(ix));
    const float x0 = floorf(ix), y0 = floorf(iy), x1 = x0 + 1, y1 = y0 + 1;
    return (x1 - ix) * (y1 - iy) * tap(plane, H, W, y0, x0) + (ix - x0) * (y1 - iy) * tap(plane, H, W, y0, x1) +
           (x1 - ix) * (iy - y0) * tap(plane, H, W, y1, x0) + (ix - x0) * (iy - y0) * tap(plane, H, W, y1, x1);
}

typedef struct {
    ref_grid_sampler_params p;
    double *x, *grid, *ref;
    ref_bounds b;
    tol_inputs t;
} fwd_case;

static void fwd_run(fwd_case *c, const double *x, const double *grid)
{
    const op_desc *op = op_find("grid_sampler_2d");
    const int64_t n = c->p.N * c->p.C * c->p.Ho * c->p.Wo;
    c->ref = malloc(sizeof(double) * (size_t)n);
    c->b = bounds_alloc(op->tol[0].k_pos * CONFORM_U_F32, n);
    f64_grid_sampler_2d_fwd__ref(&c->p, x, grid, c->ref, &c->b);
    c->t = (tol_inputs){dtype_find("float32"), &op->tol[0], c->b.abs_sum, c->b.n_terms, c->b.pos_err, c->b.ambig};
    c->x = (double *)x;
    c->grid = (double *)grid;
}

static void fwd_free(fwd_case *c)
{
    free(c->ref);
    bounds_free(&c->b);
}

/* the element (n = 0) of point q in channel ch as a kernel of unnormalize form un and padding form rf computes it */
static float kernel_value(const fwd_case *c, int64_t q, int64_t ch, int un, int rf)
{
    const ref_grid_sampler_params *p = &c->p;
    const float ix = pad_f32(unnorm((float)c->grid[2 * q], p->W, p->align_corners, un), p->W, p->padding_mode, p->align_corners, rf);
    const float iy = pad_f32(unnorm((float)c->grid[2 * q + 1], p->H, p->align_corners, un), p->H, p->padding_mode, p->align_corners, rf);
    return sample_f32(c->x + ch * p->H * p->W, p->H, p->W, p->interpolation_mode, iy, ix);
}

/* err / (tol + ambig) of element e for value v */
static double ratio(const fwd_case *c, int64_t e, float v)
{
    double ambig, tol = compare_tolerance(&c->t, e, &ambig);
    return fabs((double)v - c->ref[e]) / (tol + ambig);
}

/* grid_fwd_huge_coords (default suite, seed 20261123), bilinear, reflection, align_corners false,
 * channel 1, point (5, 0): grid (52175324, -6/7) on a 7 x 8 plane. Exactly i = 4g + 3.5, whose
 * nearest float32 is 4g (ulp 16): every form folds 4g + 1/2 -> 4g onto the clip point -0.5, column
 * 0, while the golden folds 4g + 4 to x = 3.5. Row 0 here: the golden (3 + 2) / 2 = 2.5, every
 * kernel 19, and the bound is the reach of row 0 (t is past 2^24, where a rounded quotient may
 * count a fold more than fmod's remainder: the x box takes every column): 19 - 2.5, plus the value
 * term of a twin anywhere in the box, u (28 + 4) 19 (its 4 taps on pixels up to 19). So err/tol =
 * 1 - 2.2e-6. */
Test(grid_reflect_forms, huge_coordinate_bound_is_the_reach_and_every_form_sits_inside)
{
    for (int mode = 0; mode < 2; mode++) {
        double x[56], grid[2] = {52175324.0, (double)(-6.0f / 7.0f)};
        const double row0[8] = {19, 5, 6, 3, 2, 7, 8, 9};
        for (int k = 0; k < 56; k++) x[k] = k < 8 ? row0[k] : 10;
        fwd_case c = {.p = {1, 1, 7, 8, 1, 1, mode, 2, 0, {1, 1}}};
        fwd_run(&c, x, grid);
        /* nearest: the golden's x = 3.5 is a rint tie (4g + 3.5 exactly), it picks column 4 */
        const double golden = mode ? 2 : 2.5, pe = c.b.pos_err[0] + c.b.ambig[0];
        cr_assert_float_eq(c.ref[0], golden, 1e-12, "mode %d: golden %.17g", mode, c.ref[0]);
        cr_assert_float_eq(pe, 19 - golden, 1e-12, "mode %d: pos_err + ambig %.17g, the reach is %g", mode, pe, 19 - golden);
        for (int un = 0; un < NUN; un++)
            for (int rf = 0; rf < NGOOD; rf++) {
                const float v = kernel_value(&c, 0, 0, un, rf);
                cr_assert_eq(v, 19.0f, "mode %d form %d/%d: %.9g, not column 0", mode, un, rf, (double)v);
                const double r = ratio(&c, 0, v);
                cr_assert(r <= 1 && r > 1 - 3e-6, "mode %d form %d/%d: err/tol %.9f", mode, un, rf, r);
            }
        fwd_free(&c);
    }
}

/* Where float32 cannot hold the position to a cell, correct forms disagree on the pixel: grid
 * -18302318 on W = 8 with align_corners (span 7): our form and PyTorch's fold 4g to column 2 (its
 * quotient is exact), Ascend's t (1/7) rounds to the next fold: column 0. A bound around one form's
 * pixel fails the other; the bound on the whole reach passes both. */
Test(grid_reflect_forms, correct_forms_disagree_on_the_pixel_at_huge_coordinates)
{
    double x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, grid[2] = {-18302318.0, 0.0};
    fwd_case c = {.p = {1, 1, 1, 8, 1, 1, 0, 2, 1, {1, 1}}};
    fwd_run(&c, x, grid);
    const float ours = kernel_value(&c, 0, 0, FORM_SPEC, REF_PYTORCH), ascend = kernel_value(&c, 0, 0, FORM_SPEC, REF_ASCEND);
    cr_assert(fabsf(ours - ascend) >= 2, "forms at %.9g and %.9g", (double)ours, (double)ascend);
    cr_assert(ratio(&c, 0, ours) <= 1 && ratio(&c, 0, ascend) <= 1, "ours %.6f, Ascend's %.6f", ratio(&c, 0, ours),
              ratio(&c, 0, ascend));
    fwd_free(&c);
}

/* grid values whose unnormalized |i| is log-uniform in [lo, hi), either sign, float32 numbers */
static double *huge_grid(int64_t np, int64_t H, int64_t W, double lo, double hi, unsigned *s)
{
    double *g = malloc(sizeof(double) * (size_t)(2 * np));
    for (int64_t k = 0; k < 2 * np; k++) {
        const double S = k % 2 ? (double)H : (double)W, m = lo * pow(hi / lo, (double)rand_r(s) / RAND_MAX);
        g[k] = (double)(float)((rand_r(s) % 2 ? m : -m) * 2.0 / S);
    }
    return g;
}

/* Every correct form, every padding and align_corners, bilinear and nearest, |i| from 1e2 to 2^31:
 * within tol + ambig at every element. */
Test(grid_reflect_forms, every_correct_form_passes_at_extreme_coordinates)
{
    unsigned seed = 25;
    int64_t checked = 0;
    for (int mode = 0; mode < 2; mode++)
        for (int pad = 0; pad < 3; pad++)
            for (int ac = 0; ac < 2; ac++) {
                fwd_case c = {.p = {1, 2, 7, 9, 40, 40, mode, pad, ac, {1, 1}}};
                const int64_t np = c.p.Ho * c.p.Wo;
                double *x = malloc(sizeof(double) * 126), *grid = huge_grid(np, 7, 9, 1e2, 2.1e9, &seed);
                for (int k = 0; k < 126; k++) x[k] = (double)(float)(1 + 19 * (double)rand_r(&seed) / RAND_MAX);
                fwd_run(&c, x, grid);
                for (int64_t ch = 0; ch < 2; ch++)
                    for (int64_t q = 0; q < np; q++)
                        for (int un = 0; un < NUN; un++)
                            for (int rf = 0; rf < (pad == 2 ? NGOOD : 1); rf++) {
                                const double r = ratio(&c, ch * np + q, kernel_value(&c, q, ch, un, rf));
                                cr_assert(r <= 1, "mode %d pad %d ac %d, form %d/%d, point %lld (grid %.9g, %.9g): err/tol %.6f",
                                          mode, pad, ac, un, rf, (long long)q, grid[2 * q], grid[2 * q + 1], r);
                                checked++;
                            }
                fwd_free(&c);
                free(x);
                free(grid);
            }
    cr_assert_geq(checked, 50000);
}

/* the planted wrong reflections at |i| log-uniform in [lo, hi), 100 points per mode, align_corners
 * and bug: the fewest elements any of them fails */
static int64_t planted_fewest_failing(double lo, double hi, unsigned seed)
{
    int64_t fewest = -1;
    for (int mode = 0; mode < 2; mode++)
        for (int ac = 0; ac < 2; ac++)
            for (int rf = NGOOD; rf < NREF; rf++) {
                fwd_case c = {.p = {1, 1, 7, 9, 10, 10, mode, 2, ac, {1, 1}}};
                const int64_t np = c.p.Ho * c.p.Wo;
                double *x = malloc(sizeof(double) * 63), *grid = huge_grid(np, 7, 9, lo, hi, &seed);
                for (int k = 0; k < 63; k++) x[k] = (double)(float)(1 + 19 * (double)rand_r(&seed) / RAND_MAX);
                fwd_run(&c, x, grid);
                float *got = malloc(sizeof(float) * (size_t)np);
                for (int64_t q = 0; q < np; q++) got[q] = kernel_value(&c, q, 0, FORM_SPEC, rf);
                compare_result cr;
                compare_f32(c.ref, got, np, &c.t, &cr);
                if (fewest < 0 || cr.n_over < fewest) fewest = cr.n_over;
                cr_log_info("|i| %g..%g mode %d ac %d bug %d: %lld of %lld fail", lo, hi, mode, ac, rf,
                            (long long)cr.n_over, (long long)np);
                fwd_free(&c);
                free(x);
                free(grid);
                free(got);
            }
    return fewest;
}

/* A wrong reflection fails where float32 still holds the position within a cell (|i| from 1e2 to
 * 2^17, the box 4u|i| to 6u|i| below 0.05): a parity flipped, a period one pixel long, no |t|, the
 * other align_corners' fold points. Beyond 2^23 no test can tell them from a correct form. */
Test(grid_reflect_forms, planted_wrong_reflections_fail_at_large_coordinates)
{
    cr_assert_geq(planted_fewest_failing(1e2, 131072, 26), 5);
}

/* The band where the former box (8 roundings each at u ((|c|+1) S + 1 + |i|), about 24u|i|) passed a
 * cell and the element took its whole reach, while the box of ref_grid_sampler_box (4u|i| to 6u|i|)
 * still holds the position to a fraction of a cell: there a wrong reflection passed. */
Test(grid_reflect_forms, planted_wrong_reflections_fail_in_the_band_below_2_21)
{
    cr_assert_geq(planted_fewest_failing(3.5e5, 3e6, 27), MIN_BAND_FAIL);
}
