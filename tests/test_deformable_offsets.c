/* deformable_offsets and deformable_offsets_grad: hand-checked and torchvision vectors, the
 * optimized path on every ISA at 1 and 2 threads against the reference with derived tolerances,
 * bitwise thread independence, validation errors, ambiguity detection, and every kind of proof
 * catching a deliberately broken reference. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_check.h"
#include "compare.h"
#include "conform_opt.h"
#include "conform_ref.h"
#include "verify.h"


/* ---- hand-checked vectors ------------------------------------------------------------------ */

/* x 1x2x2x1 = [[1,2],[3,4]], ksize 1x1: Ho = Wo = 2, one sample per output pixel */
static ref_deformable_params tiny(void)
{
    ref_deformable_params p = {1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 2, 2};
    return p;
}

Test(deformable_published, channel_order_x_then_y_then_mask)
{
    const double x[4] = {1, 2, 3, 4};
    double off[12] = {0}, y[4];
    /* (0,0): x offset 0.5 -> between 1 and 2; (0,1): y offset 0.5 -> between 2 and 4; masks 2, 1 */
    off[0] = 0.5; off[2] = 2.0;
    off[3 + 1] = 0.5; off[3 + 2] = 1.0;
    off[6 + 2] = 1.0; off[9 + 2] = -1.0;
    ref_deformable_params p = tiny();
    f64_deformable_offsets_fwd__ref(&p, x, off, y, NULL);
    cr_assert_float_eq(y[0], 2.0 * 1.5, 1e-15, "y[0] = %g", y[0]);
    cr_assert_float_eq(y[1], 3.0, 1e-15, "y[1] = %g", y[1]);
    cr_assert_float_eq(y[2], 3.0, 1e-15, "y[2] = %g", y[2]);
    cr_assert_float_eq(y[3], -4.0, 1e-15, "y[3] = %g", y[3]);
}

Test(deformable_published, gradients_of_one_sample)
{
    const double x[4] = {1, 2, 3, 4};
    double off[12] = {0}, g[4] = {1, 0, 0, 0}, gx[4], go[12];
    off[0] = 0.5; off[1] = 0.0; off[2] = 2.0; /* px = 0.5, py = 0, m = 2 */
    for (int q = 1; q < 4; q++) off[3 * q + 2] = 1.0;
    ref_deformable_params p = tiny();
    f64_deformable_offsets_bwd__ref(&p, g, x, off, gx, go, NULL, NULL);
    /* grad_x = m * weights: 1 and 1 on pixels 1, 2 (weights 0.5 each) */
    const double wgx[4] = {1, 1, 0, 0};
    for (int i = 0; i < 4; i++) cr_assert_float_eq(gx[i], wgx[i], 1e-15, "grad_x[%d] = %g", i, gx[i]);
    cr_assert_float_eq(go[0], 2.0 * (2 - 1), 1e-15, "x-offset gradient %g", go[0]);          /* m*(v2-v1) */
    cr_assert_float_eq(go[1], 2.0 * (0.5 * 2 + 0.5 * 2), 1e-15, "y-offset gradient %g", go[1]); /* m*rows */
    cr_assert_float_eq(go[2], 1.5, 1e-15, "mask gradient %g", go[2]);                          /* value */
}

Test(deformable_published, window_lines_give_zero_offset_gradients)
{
    const double x[4] = {1, 2, 3, 4};
    double off[12] = {0}, g[4] = {1, 1, 1, 1}, gx[4], go[12];
    for (int q = 0; q < 4; q++) off[3 * q + 2] = 1.0;
    off[1] = -1.0;      /* (0,0): py = -1 exactly */
    off[3 + 0] = 1.0;   /* (0,1): px = 2 = W exactly */
    ref_deformable_params p = tiny();
    f64_deformable_offsets_bwd__ref(&p, g, x, off, gx, go, NULL, NULL);
    for (int t = 0; t < 6; t++) cr_assert_eq(go[t], 0.0, "offset gradient %d of a sample on a window line", t);
    cr_assert_neq(go[6 + 2], 0.0); /* an ordinary sample still has a gradient */
}

Test(deformable_published, torchvision_vectors_through_the_reference)
{
    const op_desc *ops[2] = {op_find("deformable_offsets"), op_find("deformable_offsets_grad")};
    for (int o = 0; o < 2; o++) {
        proof_result r;
        memset(&r, 0, sizeof r);
        cr_assert_eq(proof_golden(ops[o], &r), 0, "%s: %s", ops[o]->name, r.detail);
        cr_assert_geq(r.checks, 12, "%s: %s", ops[o]->name, r.detail);
    }
}

/* ---- random problems: the optimized path on every ISA ------------------------------------- */

typedef struct {
    ref_deformable_params p;
    double *x, *off, *g;
    int64_t nx, no, ny;
} problem;

static double f32u(gsl_rng *r, double lo, double hi) { return (double)(float)(lo + (hi - lo) * gsl_rng_uniform(r)); }

static problem make_problem(unsigned long seed, int64_t C, int64_t dg, int kind)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    problem q;
    /* kh != kw, asymmetric pads, stride and dilation per axis */
    q.p = (ref_deformable_params){2, 9, 8, C, 3, 2, 1, 2, 2, 1, 2, 1, 0, 1, dg, 0, 0};
    q.p.Ho = (q.p.H + q.p.pt + q.p.pb - (q.p.dh * (q.p.kh - 1) + 1)) / q.p.sh + 1;
    q.p.Wo = (q.p.W + q.p.pl + q.p.pr - (q.p.dw * (q.p.kw - 1) + 1)) / q.p.sw + 1;
    const int64_t K = q.p.kh * q.p.kw, dgK = dg * K;
    q.nx = q.p.N * q.p.H * q.p.W * C;
    q.no = q.p.N * q.p.Ho * q.p.Wo * 3 * dgK;
    q.ny = q.p.N * q.p.Ho * q.p.kh * q.p.Wo * q.p.kw * C;
    q.x = malloc(8 * (size_t)(q.nx + 1));
    q.off = malloc(8 * (size_t)(q.no + 1));
    q.g = malloc(8 * (size_t)(q.ny + 1));
    for (int64_t i = 0; i < q.nx; i++) q.x[i] = f32u(r, -1, 1);
    for (int64_t i = 0; i < q.ny; i++) q.g[i] = f32u(r, -1, 1);
    for (int64_t i = 0; i < q.no; i++) {
        const int t = (int)((i % (3 * dgK)) / dgK);
        double v = t == 2 ? f32u(r, -1, 1) : f32u(r, -3, 3);
        if (kind == 1 && t < 2) v = nearbyint(v);              /* integer offsets */
        if (kind == 2 && t < 2 && i % 7 == 0) v = NAN;         /* NaN offsets */
        q.off[i] = v;
    }
    gsl_rng_free(r);
    return q;
}

static void free_problem(problem *q) { free(q->x); free(q->off); free(q->g); }

static const tol_model tol = {6, "", 1, ""};

static f32_deformable_params f32_of(const ref_deformable_params *p)
{
    f32_deformable_params f = {p->N, p->H, p->W, p->C, p->kh, p->kw, p->sh, p->sw, p->dh, p->dw,
                               p->pt, p->pb, p->pl, p->pr, p->dg, p->Ho, p->Wo};
    return f;
}

Test(deformable_optimized, every_isa_and_thread_count_matches_the_reference, .timeout = 120)
{
    /* channel counts hit every tail and the multi-chunk reduction (cpg 200 > 128) */
    const int64_t cs[][2] = {{1, 1}, {3, 1}, {17, 1}, {40, 2}, {64, 1}, {200, 1}, {6, 3}};
    int tested = 0;
    for (int isa = CONFORM_ISA_SCALAR; isa < CONFORM_ISA_COUNT; isa++) {
        if (!conform_isa_available((conform_isa)isa)) continue;
        tested++;
        for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
            for (int kind = 0; kind < 3; kind++) {
                problem q = make_problem(11 + ci * 3 + (unsigned long)kind, cs[ci][0], cs[ci][1], kind);
                double *y = malloc(8 * (size_t)q.ny), *gx = malloc(8 * (size_t)q.nx), *go = malloc(8 * (size_t)q.no);
                ref_bounds by = bounds_alloc(1 * CONFORM_U_F32, q.ny), bx = bounds_alloc(1 * CONFORM_U_F32, q.nx), bo = bounds_alloc(1 * CONFORM_U_F32, q.no);
                f64_deformable_offsets_fwd__ref(&q.p, q.x, q.off, y, &by);
                f64_deformable_offsets_bwd__ref(&q.p, q.g, q.x, q.off, gx, go, &bx, &bo);
                float *xf = to_float(q.x, q.nx), *of = to_float(q.off, q.no), *gf = to_float(q.g, q.ny);
                f32_deformable_params f = f32_of(&q.p);
                float *yo[2], *gxo[2], *goo[2];
                for (int t = 0; t < 2; t++) {
                    conform_exec ex = {(conform_isa)isa, t + 1};
                    yo[t] = malloc(4 * (size_t)q.ny);
                    gxo[t] = malloc(4 * (size_t)q.nx);
                    goo[t] = malloc(4 * (size_t)q.no);
                    cr_assert_eq(f32_deformable_offsets_fwd(&f, xf, of, yo[t], &ex), CONFORM_OK);
                    cr_assert_eq(f32_deformable_offsets_bwd(&f, gf, xf, of, gxo[t], goo[t], &ex), CONFORM_OK);
                    char what[128];
                    snprintf(what, sizeof what, "%s C=%lld dg=%lld kind=%d threads=%d", conform_isa_name((conform_isa)isa),
                             (long long)q.p.C, (long long)q.p.dg, kind, t + 1);
                    check_against_bounds(y, yo[t], q.ny, &by, &tol, what);
                    check_against_bounds(gx, gxo[t], q.nx, &bx, &tol, what);
                    check_against_bounds(go, goo[t], q.no, &bo, &tol, what);
                }
                cr_assert(!memcmp(yo[0], yo[1], 4 * (size_t)q.ny), "forward differs between 1 and 2 threads");
                cr_assert(!memcmp(gxo[0], gxo[1], 4 * (size_t)q.nx), "grad_x differs between 1 and 2 threads");
                cr_assert(!memcmp(goo[0], goo[1], 4 * (size_t)q.no), "grad_offsets differs between 1 and 2 threads");
                for (int t = 0; t < 2; t++) { free(yo[t]); free(gxo[t]); free(goo[t]); }
                free(xf); free(of); free(gf); free(y); free(gx); free(go);
                bounds_free(&by); bounds_free(&bx); bounds_free(&bo); free_problem(&q);
            }
    }
    cr_assert(tested >= 1);
}

Test(deformable_optimized, empty_tensors_give_zero_gradients)
{
    f32_deformable_params f = {0, 4, 4, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 4};
    float gx[1] = {NAN}, go[1] = {NAN}, y[1] = {NAN};
    cr_assert_eq(f32_deformable_offsets_fwd(&f, NULL, NULL, y, NULL), CONFORM_OK);
    cr_assert_eq(f32_deformable_offsets_bwd(&f, NULL, NULL, NULL, gx, go, NULL), CONFORM_OK);
    cr_assert(isnan(y[0]) && isnan(gx[0]) && isnan(go[0]), "nothing may be written for N = 0");
    /* C = 0: grad_offsets all zeros */
    f32_deformable_params g = {1, 2, 2, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 2, 2};
    float off[12], goff[12];
    for (int i = 0; i < 12; i++) { off[i] = 0.25f; goff[i] = NAN; }
    cr_assert_eq(f32_deformable_offsets_bwd(&g, NULL, NULL, off, NULL, goff, NULL), CONFORM_OK);
    for (int i = 0; i < 12; i++) cr_assert_eq(goff[i], 0.0f);
}

/* ---- bounds: ambiguity where rounding can flip the floor branch ----------------------------- */

Test(deformable_bounds, position_within_rounding_of_a_line_is_ambiguous)
{
    const double x[4] = {1, 2, 3, 4};
    double off[12] = {0}, g[4] = {1, 1, 1, 1}, gx[4], go[12];
    for (int q = 0; q < 4; q++) off[3 * q + 2] = 1.0;
    off[3 * 3 + 1] = -1e-8; /* (1,1): py = 1 - 1e-8, which float32 rounds to 1 */
    ref_deformable_params p = tiny();
    ref_bounds bx = bounds_alloc(1 * CONFORM_U_F32, 4), bo = bounds_alloc(1 * CONFORM_U_F32, 12);
    f64_deformable_offsets_bwd__ref(&p, g, x, off, gx, go, &bx, &bo);
    cr_assert_gt(bo.ambig[9 + 1], 0.0, "the y-offset gradient of a sample within rounding of py = 1");
    cr_assert_eq(bo.ambig[9 + 0], 0.0, "the x-offset gradient does not jump with py");
    cr_assert_eq(bo.ambig[9 + 2], 0.0, "the mask gradient is continuous");
    /* exactly on the line: float32 computes it exactly, nothing is ambiguous */
    off[3 * 3 + 1] = 0.0;
    f64_deformable_offsets_bwd__ref(&p, g, x, off, gx, go, &bx, &bo);
    for (int i = 0; i < 12; i++) cr_assert_eq(bo.ambig[i], 0.0, "element %d", i);
    bounds_free(&bx);
    bounds_free(&bo);
}

/* ---- non-finite inputs within rounding of a cell line (minimal cases of conform hunt) -------- */

/* The reference with bounds and the optimized path on every ISA, judged as run judges them */
static void judge_every_isa(const ref_deformable_params *p, const double *x, const double *off, const double *g,
                            int64_t nx, int64_t no, int64_t ny, double *y, double *gx, double *go, ref_bounds *by,
                            ref_bounds *bx, ref_bounds *bo)
{
    f64_deformable_offsets_fwd__ref(p, x, off, y, by);
    f64_deformable_offsets_bwd__ref(p, g, x, off, gx, go, bx, bo);
    float *xf = to_float(x, nx), *of = to_float(off, no), *gf = to_float(g, ny);
    float *yo = malloc(4 * (size_t)ny), *gxo = malloc(4 * (size_t)nx), *goo = malloc(4 * (size_t)no);
    const f32_deformable_params f = f32_of(p);
    for (int isa = CONFORM_ISA_SCALAR; isa < CONFORM_ISA_COUNT; isa++) {
        if (!conform_isa_available((conform_isa)isa)) continue;
        conform_exec ex = {(conform_isa)isa, 1};
        cr_assert_eq(f32_deformable_offsets_fwd(&f, xf, of, yo, &ex), CONFORM_OK);
        cr_assert_eq(f32_deformable_offsets_bwd(&f, gf, xf, of, gxo, goo, &ex), CONFORM_OK);
        check_against_bounds(y, yo, ny, by, &tol, conform_isa_name((conform_isa)isa));
        check_against_bounds(gx, gxo, nx, bx, &tol, conform_isa_name((conform_isa)isa));
        check_against_bounds(go, goo, no, bo, &tol, conform_isa_name((conform_isa)isa));
    }
    free(xf); free(of); free(gf); free(yo); free(gxo); free(goo);
}

/* x = [0, inf] (1x2), pads 1, 1x1 kernel: y[0,2,1,0] samples at px = 0, py = 1 - 4.3e-9. The exact
   position's cell reads the infinite pixel at weight 0 (NaN); float32 rounds py to 1 and the cell
   below the plane reads nothing (0). Either is the spec at some float32 rounding of the position. */
Test(deformable_nonfinite, forward_reading_an_infinity_or_not_is_ambiguous)
{
    const ref_deformable_params p = {1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 4};
    double x[2] = {0, INFINITY}, off[36] = {0}, g[12] = {0}, y[12], gx[2], go[36];
    off[28] = -4.255122476592987e-09; /* (ho 2, wo 1): the y offset */
    ref_bounds by = bounds_alloc(CONFORM_U_F32, 12), bx = bounds_alloc(CONFORM_U_F32, 2), bo = bounds_alloc(CONFORM_U_F32, 36);
    judge_every_isa(&p, x, off, g, 2, 36, 12, y, gx, go, &by, &bx, &bo);
    cr_assert(isnan(y[9]) && by.ambig[9] == INFINITY, "y[9] = %g, ambig %g", y[9], by.ambig[9]);
    /* (ho 1, wo 1): py = px = 0 exactly, the infinity read at weight 0 in every form: NaN, no ambiguity */
    cr_assert(isnan(y[5]) && by.ambig[5] == 0, "y[5] = %g, ambig %g", y[5], by.ambig[5]);
    bounds_free(&by); bounds_free(&bx); bounds_free(&bo);
}

/* x = NaN (1x1), pads 1: the sample (0, 0) at px = 0, py = -1 + 1.6e-8 is inside the window and reads
   the NaN exactly, outside at py = fl(-1 + 1.6e-8) = -1: its three offset gradients are NaN or 0 */
Test(deformable_nonfinite, offset_gradients_on_the_window_line_beside_a_nan_are_ambiguous)
{
    const ref_deformable_params p = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3};
    double x[1] = {NAN}, off[27] = {0}, g[9] = {0}, y[9], gx[1], go[27];
    off[0] = 1.0;
    off[1] = 1.6319024354061185e-08;
    ref_bounds by = bounds_alloc(CONFORM_U_F32, 9), bx = bounds_alloc(CONFORM_U_F32, 1), bo = bounds_alloc(CONFORM_U_F32, 27);
    judge_every_isa(&p, x, off, g, 1, 27, 9, y, gx, go, &by, &bx, &bo);
    for (int t = 0; t < 3; t++) cr_assert(isnan(go[t]) && bo.ambig[t] == INFINITY, "grad_offsets[%d]", t);
    bounds_free(&by); bounds_free(&bx); bounds_free(&bo);
}

/* x 1x12, grad inf at wo = 10 with mask 1 and px = 10 - 2.3e-8: exactly, columns 9 and 10 get inf;
   at fl(px) = 10, column 10 gets inf and column 11 inf x 0 = NaN. At wo = 0, px = -1 - 2.3e-8 is
   outside in every form (fl(px) <= -1): column 0 stays 0, not ambiguous. */
Test(deformable_nonfinite, an_infinite_gradient_on_a_cell_line_makes_grad_x_ambiguous)
{
    const ref_deformable_params p = {1, 1, 12, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 12};
    double x[12] = {0}, off[36] = {0}, g[12] = {0}, y[12], gx[12], go[36];
    x[11] = -1;
    g[10] = g[0] = INFINITY;
    off[30] = -2.34955557232297e-08;
    off[32] = off[2] = 1.0;
    off[0] = -1.0000000234955557;
    ref_bounds by = bounds_alloc(CONFORM_U_F32, 12), bx = bounds_alloc(CONFORM_U_F32, 12), bo = bounds_alloc(CONFORM_U_F32, 36);
    judge_every_isa(&p, x, off, g, 12, 36, 12, y, gx, go, &by, &bx, &bo);
    for (int k = 9; k <= 11; k++) cr_assert_eq(bx.ambig[k], INFINITY, "grad_x[%d]", k);
    cr_assert_eq(bx.ambig[8], 0.0, "a pixel the box does not reach");
    cr_assert(gx[0] == 0 && bx.ambig[0] == 0, "beyond the window line: grad_x[0] %g, ambig %g", gx[0], bx.ambig[0]);
    bounds_free(&by); bounds_free(&bx); bounds_free(&bo);
}

/* An infinite grad times mask 0 at a sample exactly on px = -1 adds nothing; beside it a sample at
   (0, 0) gives grad_x[0] = -0.449 x 0.474. Before, the first one's bound term was inf x 0 = NaN,
   grad_x[0]'s tolerance 0, and a correct float32 value one ULP away failed. */
Test(deformable_nonfinite, an_infinite_gradient_that_adds_nothing_leaves_the_bound_finite)
{
    const ref_deformable_params p = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3};
    double x[1] = {0}, off[27] = {0}, g[9] = {0}, y[9], gx[1], go[27];
    g[3] = INFINITY;
    g[4] = -0.44921875;
    off[14] = 0.473757266998291;
    ref_bounds by = bounds_alloc(CONFORM_U_F32, 9), bx = bounds_alloc(CONFORM_U_F32, 1), bo = bounds_alloc(CONFORM_U_F32, 27);
    judge_every_isa(&p, x, off, g, 1, 27, 9, y, gx, go, &by, &bx, &bo);
    cr_assert(isfinite(gx[0]) && isfinite(bx.pos_err[0]) && bx.ambig[0] == 0, "grad_x[0] %g, pos_err %g", gx[0], bx.pos_err[0]);
    bounds_free(&by); bounds_free(&bx); bounds_free(&bo);
}

/* A mask of -inf at px = 0.5, py = 0 on x = [(0, 0), (1, 1)] (1x2, C = 2), grad (1, -0.5): the spec's
   terms G*m*(...) of the x offset gradient are -inf and +inf (NaN), and of the y offset gradient
   too. A sum over the channels times m afterwards gives -inf and +inf: not the spec's value. */
Test(deformable_nonfinite, an_infinite_mask_multiplies_each_channel_term)
{
    const ref_deformable_params p = {1, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2};
    double x[4] = {0, 0, 1, 1}, off[6] = {0.5, 0, -INFINITY, 0, 0, 1}, g[4] = {1, -0.5, 0, 0}, y[4], gx[4], go[6];
    ref_bounds by = bounds_alloc(CONFORM_U_F32, 4), bx = bounds_alloc(CONFORM_U_F32, 4), bo = bounds_alloc(CONFORM_U_F32, 6);
    judge_every_isa(&p, x, off, g, 4, 6, 4, y, gx, go, &by, &bx, &bo);
    cr_assert(isnan(go[0]) && isnan(go[1]) && go[2] == 0.25, "grad_offsets %g %g %g", go[0], go[1], go[2]);
    cr_assert(bo.ambig[0] == 0 && bo.ambig[1] == 0, "an exact position: no ambiguity");
    bounds_free(&by); bounds_free(&bx); bounds_free(&bo);
}

/* ---- validation: each rule of spec 5 named ------------------------------------------------- */

static void expect_refused(const op_desc *op, const char *const *attrs, const shape_t *shapes, const char *want)
{
    problem_t p;
    proof_result r;
    memset(&r, 0, sizeof r);
    int rc = proof_problem(op, attrs, shapes, NULL, 1, &p, &r);
    if (rc == 0) problem_free(&p);
    cr_assert_neq(rc, 0, "%s: accepted, expected '%s'", op->name, want);
    cr_assert(strstr(r.detail, want), "%s: '%s' does not say '%s'", op->name, r.detail, want);
    cr_assert(strstr(r.detail, op->name), "the message must name the op: %s", r.detail);
}

static shape_t s4(int64_t a, int64_t b, int64_t c, int64_t d) { int64_t x[4] = {a, b, c, d}; return shape_make(4, x); }

Test(deformable_validate, every_rule_is_named)
{
    const shape_t ok[2] = {s4(1, 6, 6, 4), s4(1, 6, 6, 27)};
    const char *base[] = {"ksize=3,3", "pads=1,1,1,1", NULL};
    problem_t p;
    proof_result r;
    cr_assert_eq(proof_problem(op_find("deformable_offsets"), base, ok, NULL, 1, &p, &r), 0, "%s", r.detail);
    problem_free(&p);
    struct { const char *a[5]; shape_t s[2]; const char *want; } bad[] = {
        {{"ksize=3", "pads=1,1,1,1", NULL}, {ok[0], ok[1]}, "ksize [3]: must have 2 entries"},
        {{"ksize=3,3", "pads=1,1,1,1", "strides=1,1,1,2", NULL}, {ok[0], ok[1]}, "strides [1,1,1,2]: entries 0 and 3"},
        {{"ksize=3,3", "pads=1,1,1,1", "dilations=1,2,1,1", "data_format=NCHW"}, {ok[0], ok[1]}, "dilations [1,2,1,1]: entries 0 and 1"},
        {{"ksize=3,3", "pads=1,1,-1,1", NULL}, {ok[0], ok[1]}, "pads [1,1,-1,1]"},
        {{"ksize=3,3", "pads=1,1,1,1", "data_format=NDHWC", NULL}, {ok[0], ok[1]}, "data_format \"NDHWC\""},
        {{"ksize=3,3", "pads=1,1,1,1", "deformable_groups=0", NULL}, {ok[0], ok[1]}, "deformable_groups 0"},
        {{"ksize=3,3", "pads=1,1,1,1", "deformable_groups=3", NULL}, {ok[0], s4(1, 6, 6, 81)}, "multiple of deformable_groups"},
        {{"ksize=3,3", "pads=1,1,1,1", "modulated=false", NULL}, {ok[0], ok[1]}, "modulated false"},
        {{"ksize=3,3", "pads=1,1,1,1", NULL}, {ok[0], s4(1, 6, 6, 18)}, "3*deformable_groups*kh*kw = 27"},
        {{"ksize=3,3", "pads=1,1,1,1", NULL}, {ok[0], s4(1, 6, 5, 27)}, "Ho x Wo = 6 x 6"},
        {{"ksize=3,3", "pads=1,1,1,1", NULL}, {ok[0], s4(2, 6, 6, 27)}, "batch 2 must equal x's 1"},
        {{"ksize=7,3", NULL}, {ok[0], s4(1, 1, 4, 63)}, "smaller than the dilated kernel height 7"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_refused(op_find("deformable_offsets"), bad[i].a, bad[i].s, bad[i].want);
    const shape_t g3[3] = {s4(1, 18, 17, 4), ok[0], ok[1]};
    expect_refused(op_find("deformable_offsets_grad"), base, g3, "grad [1,18,17,4]: must have shape");
}

/* ---- each kind of proof catches a broken reference ----------------------------------------- */

static int violated(const op_desc *op, const char *kind)
{
    int ran, bad = verify_kind(op, kind, &ran);
    cr_assert_gt(ran, 0, "no %s proof for %s", kind, op->name);
    return bad;
}

Test(deformable_verify, the_real_references_pass_every_proof)
{
    const op_desc *ops[] = {op_find("deformable_offsets"), op_find("deformable_offsets_grad")};
    const char *kinds[2][4] = {{"metamorphic", "golden", NULL}, {"adjoint", "finite difference", "metamorphic", "golden"}};
    for (int o = 0; o < 2; o++)
        for (int k = 0; k < 4 && kinds[o][k]; k++) cr_assert_eq(violated(ops[o], kinds[o][k]), 0, "%s %s", ops[o]->name, kinds[o][k]);
}

/* broken forwards: x and y offsets swapped; every sample half a pixel to the right */
static void fwd_altered(const problem_t *p, double **out, ref_bounds *b, int how)
{
    problem_t q = *p;
    const int64_t n = tensor_numel(&p->in[1]), OC = p->in[1].shape.dims[3], dgK = OC / 3;
    q.in[1].data = malloc(sizeof(double) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        const int64_t c = i % OC;
        double v = p->in[1].data[i];
        if (how == 0 && c < 2 * dgK) v = p->in[1].data[i - c + (c < dgK ? c + dgK : c - dgK)];
        if (how == 1 && c < dgK) v += 0.5;
        q.in[1].data[i] = v;
    }
    op_find("deformable_offsets")->reference(&q, out, b);
    free(q.in[1].data);
}
static void fwd_swapped_xy(const problem_t *p, double **out, ref_bounds *b) { fwd_altered(p, out, b, 0); }
static void fwd_half_pixel(const problem_t *p, double **out, ref_bounds *b) { fwd_altered(p, out, b, 1); }

Test(deformable_verify, metamorphic_and_golden_catch_swapped_offset_channels)
{
    op_desc broken = *op_find("deformable_offsets");
    broken.reference = fwd_swapped_xy;
    cr_assert_gt(violated(&broken, "metamorphic"), 0);
    cr_assert_gt(violated(&broken, "golden"), 0);
}

Test(deformable_verify, metamorphic_and_golden_catch_a_half_pixel_shift)
{
    op_desc broken = *op_find("deformable_offsets");
    broken.reference = fwd_half_pixel;
    cr_assert_gt(violated(&broken, "metamorphic"), 0);
    cr_assert_gt(violated(&broken, "golden"), 0);
}

/* broken backward: the real one, then grad_x recomputed without the (h1, w1) corner */
static void bwd_dropped_corner(const problem_t *p, double **out, ref_bounds *b)
{
    op_find("deformable_offsets_grad")->reference(p, out, b);
    const shape_t *xs = &p->in[1].shape, *os = &p->in[2].shape;
    const int64_t N = xs->dims[0], H = xs->dims[1], W = xs->dims[2], C = xs->dims[3];
    const int64_t Ho = os->dims[1], Wo = os->dims[2], OC = os->dims[3];
    const attr_value *ks = problem_attr(p, "ksize"), *st = problem_attr(p, "strides"), *dl = problem_attr(p, "dilations"),
                     *pd = problem_attr(p, "pads");
    const int64_t kh = ks->list[0], kw = ks->list[1], dg = problem_int(p, "deformable_groups"), K = kh * kw, dgK = dg * K;
    const int64_t sh = st->list[1], sw = st->list[2], dh = dl->list[1], dw = dl->list[2];
    memset(out[0], 0, sizeof(double) * (size_t)(N * H * W * C));
    for (int64_t n = 0; n < N; n++)
        for (int64_t ho = 0; ho < Ho; ho++)
            for (int64_t wo = 0; wo < Wo; wo++)
                for (int64_t k = 0; k < dgK; k++) {
                    const int64_t i = (k % K) / kw, j = (k % K) % kw, g = k / K;
                    const double *o = p->in[2].data + ((n * Ho + ho) * Wo + wo) * OC;
                    const double px = (double)(wo * sw - pd->list[2] + j * dw) + o[k];
                    const double py = (double)(ho * sh - pd->list[0] + i * dh) + o[dgK + k], m = o[2 * dgK + k];
                    if (!(py > -1 && py < H && px > -1 && px < W)) continue;
                    const int64_t h0 = (int64_t)floor(py), w0 = (int64_t)floor(px);
                    const double lh = py - h0, lw = px - w0;
                    const double wts[3] = {(1 - lh) * (1 - lw), (1 - lh) * lw, lh * (1 - lw)};
                    const int64_t hs[3] = {h0, h0, h0 + 1}, ws[3] = {w0, w0 + 1, w0};
                    for (int64_t c = g * (C / dg); c < (g + 1) * (C / dg); c++) {
                        const double G = p->in[0].data[((n * Ho * kh + ho * kh + i) * Wo * kw + wo * kw + j) * C + c];
                        for (int t = 0; t < 3; t++)
                            if (hs[t] >= 0 && hs[t] < H && ws[t] >= 0 && ws[t] < W)
                                out[0][((n * H + hs[t]) * W + ws[t]) * C + c] += G * m * wts[t];
                    }
                }
}

Test(deformable_verify, adjoint_finite_difference_and_golden_catch_a_dropped_corner)
{
    op_desc broken = *op_find("deformable_offsets_grad");
    broken.reference = bwd_dropped_corner;
    cr_assert_gt(violated(&broken, "adjoint"), 0);
    cr_assert_gt(violated(&broken, "finite difference"), 0);
    cr_assert_gt(violated(&broken, "golden"), 0);
}

/* broken backward: the sign of the y-offset gradient flipped */
static void bwd_wrong_sign(const problem_t *p, double **out, ref_bounds *b)
{
    op_find("deformable_offsets_grad")->reference(p, out, b);
    const int64_t n = shape_numel(&p->out_shape[1]), OC = p->out_shape[1].dims[3], dgK = OC / 3;
    for (int64_t i = 0; i < n; i++)
        if (i % OC >= dgK && i % OC < 2 * dgK) out[1][i] = -out[1][i];
}

Test(deformable_verify, finite_difference_and_golden_catch_a_wrong_coordinate_gradient_sign)
{
    op_desc broken = *op_find("deformable_offsets_grad");
    broken.reference = bwd_wrong_sign;
    cr_assert_gt(violated(&broken, "finite difference"), 0);
    cr_assert_gt(violated(&broken, "golden"), 0);
}

/* broken backward: the mask gradient scaled by the mask (a plausible slip) */
static void bwd_mask_times_mask(const problem_t *p, double **out, ref_bounds *b)
{
    op_find("deformable_offsets_grad")->reference(p, out, b);
    const int64_t n = shape_numel(&p->out_shape[1]), OC = p->out_shape[1].dims[3], dgK = OC / 3;
    for (int64_t i = 0; i < n; i++)
        if (i % OC >= 2 * dgK) out[1][i] *= p->in[2].data[i];
}

Test(deformable_verify, metamorphic_catches_a_wrong_mask_gradient)
{
    op_desc broken = *op_find("deformable_offsets_grad");
    broken.reference = bwd_mask_times_mask;
    cr_assert_gt(violated(&broken, "metamorphic"), 0);
    cr_assert_gt(violated(&broken, "finite difference"), 0);
}
