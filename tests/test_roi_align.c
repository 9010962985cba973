/* roi_align and roi_align_v2_backward: published vectors, the adjoint identity, and the
 * optimized path on every ISA this CPU has, against the reference with derived tolerances. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_check.h"
#include "compare.h"
#include "conform_opt.h"
#include "conform_ref.h"


static const double doc_roi[5] = {0, -2, -2, 22, 22};

static void iota36(double *x) { for (int i = 0; i < 36; i++) x[i] = i + 1; }

static ref_roi_align_params doc_params(int aligned)
{
    ref_roi_align_params p = {1, 1, 6, 6, 1, 3, 3, 0.25, 2, aligned, 0};
    return p;
}

Test(roi_align_published, torch_npu_doc_forward_unaligned)
{
    double x[36], y[9];
    const double want[9] = {4.5, 6.5, 8.5, 16.5, 18.5, 20.5, 28.5, 30.5, 32.5};
    iota36(x);
    ref_roi_align_params p = doc_params(0);
    f64_roi_align_fwd__ref(&p, x, doc_roi, y, NULL);
    for (int i = 0; i < 9; i++) cr_assert(fabs(y[i] - want[i]) <= 1e-12 * fabs(want[i]), "y[%d] = %.17g", i, y[i]);
}

Test(roi_align_published, torch_npu_doc_forward_aligned)
{
    double x[36], y[9];
    const double want[9] = {2.75, 4.5, 6.5, 13.25, 15, 17, 25.25, 27, 29};
    iota36(x);
    ref_roi_align_params p = doc_params(1);
    f64_roi_align_fwd__ref(&p, x, doc_roi, y, NULL);
    for (int i = 0; i < 9; i++) cr_assert(fabs(y[i] - want[i]) <= 1e-12 * fabs(want[i]), "y[%d] = %.17g", i, y[i]);
}

Test(roi_align_published, torch_npu_doc_gradient_of_sum)
{
    double g[9], gx[36];
    for (int i = 0; i < 9; i++) g[i] = 1;
    ref_roi_align_params p = doc_params(0);
    f64_roi_align_bwd__ref(&p, g, doc_roi, gx, NULL);
    for (int i = 0; i < 36; i++) cr_assert(fabs(gx[i] - 0.25) <= 1e-15, "gx[%d] = %.17g", i, gx[i]);
    const double edge[6] = {.5625, .375, .375, .375, .375, .1875}, mid[6] = {.375, .25, .25, .25, .25, .125},
                 last[6] = {.1875, .125, .125, .125, .125, .0625};
    p = doc_params(1);
    f64_roi_align_bwd__ref(&p, g, doc_roi, gx, NULL);
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++) {
            double want = r == 0 ? edge[c] : r == 5 ? last[c] : mid[c];
            cr_assert(fabs(gx[r * 6 + c] - want) <= 1e-15, "gx[%d][%d] = %.17g, want %g", r, c, gx[r * 6 + c], want);
        }
}

Test(roi_align_published, aclnn_doc_backward)
{
    const double go[9] = {4.5, 6.5, 8.5, 16.5, 18.5, 20.5, 28.5, 30.5, 32.5};
    double gx[36];
    ref_roi_align_params p = doc_params(0);
    f64_roi_align_bwd__ref(&p, go, doc_roi, gx, NULL);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            cr_assert(fabs(gx[i * 6 + j] - 0.25 * go[(i / 2) * 3 + j / 2]) <= 1e-12, "gx[%d][%d] = %.17g", i, j, gx[i * 6 + j]);
}

/* ---- random problems ---------------------------------------------------------------------- */

typedef struct {
    ref_roi_align_params p;
    double *x, *rois, *g; /* input [B,C,H,W], rois [K,5], grad_output [K,C,PH,PW] */
} problem;

static double f32_uniform(gsl_rng *r, double lo, double hi) { return (double)(float)(lo + (hi - lo) * gsl_rng_uniform(r)); }

static problem make_problem(unsigned long seed, int aligned, int sr, int64_t C)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    problem q;
    q.p = (ref_roi_align_params){2, C, 13, 17, 11, 3, 4, 0.5, sr, aligned, 0};
    int64_t nx = q.p.B * q.p.C * q.p.H * q.p.W, ng = q.p.K * q.p.C * q.p.pooled_h * q.p.pooled_w;
    q.x = malloc(sizeof(double) * (size_t)(nx ? nx : 1));
    q.g = malloc(sizeof(double) * (size_t)(ng ? ng : 1));
    q.rois = malloc(sizeof(double) * 5 * (size_t)q.p.K);
    for (int64_t i = 0; i < nx; i++) q.x[i] = f32_uniform(r, -1, 1);
    for (int64_t i = 0; i < ng; i++) q.g[i] = f32_uniform(r, -1, 1);
    for (int64_t k = 0; k < q.p.K; k++) {
        double *b = q.rois + 5 * k;
        b[0] = (double)gsl_rng_uniform_int(r, 2);
        double cx = f32_uniform(r, -8, 42), cy = f32_uniform(r, -8, 34), w = f32_uniform(r, 1, 30), h = f32_uniform(r, 1, 30);
        b[1] = (double)(float)(cx - w / 2); b[2] = (double)(float)(cy - h / 2);
        b[3] = (double)(float)(cx + w / 2); b[4] = (double)(float)(cy + h / 2);
    }
    gsl_rng_free(r);
    return q;
}

static void free_problem(problem *q) { free(q->x); free(q->g); free(q->rois); }

Test(roi_align_adjoint, forward_and_backward_are_adjoint)
{
    for (int aligned = 0; aligned <= 1; aligned++)
        for (int sr = 0; sr <= 2; sr += 2) {
            problem q = make_problem(100 + (unsigned long)(aligned * 10 + sr), aligned, sr, 3);
            int64_t nx = q.p.B * q.p.C * q.p.H * q.p.W, ny = q.p.K * q.p.C * q.p.pooled_h * q.p.pooled_w;
            double *y = malloc(sizeof(double) * (size_t)ny), *gx = malloc(sizeof(double) * (size_t)nx);
            f64_roi_align_fwd__ref(&q.p, q.x, q.rois, y, NULL);
            f64_roi_align_bwd__ref(&q.p, q.g, q.rois, gx, NULL);
            double lhs = 0, rhs = 0, mag = 0;
            for (int64_t i = 0; i < ny; i++) { lhs += q.g[i] * y[i]; mag += fabs(q.g[i] * y[i]); }
            for (int64_t i = 0; i < nx; i++) rhs += gx[i] * q.x[i];
            cr_assert(mag > 1.0, "the identity must not be vacuous");
            cr_assert(fabs(lhs - rhs) <= 1e-12 * mag, "aligned %d sr %d: <g,Fx> = %.17g, <F'g,x> = %.17g", aligned, sr, lhs, rhs);
            free(y); free(gx); free_problem(&q);
        }
}

/* ---- the optimized path on every ISA ------------------------------------------------------ */

static const tol_model tol = {6, "", 16, ""};

Test(roi_align_optimized, every_isa_and_thread_count_matches_the_reference)
{
    const int64_t channels[] = {1, 3, 16, 17, 40};
    int tested = 0;
    for (int isa = CONFORM_ISA_SCALAR; isa < CONFORM_ISA_COUNT; isa++) {
        if (!conform_isa_available((conform_isa)isa)) continue;
        tested++;
        for (int ci = 0; ci < 5; ci++)
            for (int mode = 0; mode <= 2; mode++) /* the roi_end_mode geometries (3 is 2) */
                for (int sr = 0; sr <= 2; sr += 2) {
                    const int aligned = mode == 2;
                    problem q = make_problem(7 + (unsigned long)(ci * 4 + aligned * 2 + sr), aligned, sr, channels[ci]);
                    q.p.end_plus_one = mode == 1;
                    ref_roi_align_params *p = &q.p;
                    int64_t nx = p->B * p->C * p->H * p->W, ny = p->K * p->C * p->pooled_h * p->pooled_w;
                    f32_roi_align_params f = {p->B, p->C, p->H, p->W, p->K, p->pooled_h, p->pooled_w,
                                              (float)p->spatial_scale, p->sampling_ratio, p->aligned,
                                              p->end_plus_one};
                    double *y = malloc(8 * (size_t)ny), *gx = malloc(8 * (size_t)nx);
                    ref_bounds by = bounds_alloc(16 * CONFORM_U_F32, ny), bx = bounds_alloc(16 * CONFORM_U_F32, nx);
                    f64_roi_align_fwd__ref(p, q.x, q.rois, y, &by);
                    f64_roi_align_bwd__ref(p, q.g, q.rois, gx, &bx);
                    float *xf = to_float(q.x, nx), *gf = to_float(q.g, ny), *rf = to_float(q.rois, 5 * p->K);
                    float *yo[2], *gxo[2];
                    for (int t = 0; t < 2; t++) {
                        conform_exec ex = {(conform_isa)isa, t + 1};
                        yo[t] = malloc(4 * (size_t)ny);
                        gxo[t] = malloc(4 * (size_t)nx);
                        cr_assert_eq(f32_roi_align_fwd(&f, xf, rf, yo[t], &ex), CONFORM_OK);
                        cr_assert_eq(f32_roi_align_bwd(&f, gf, rf, gxo[t], &ex), CONFORM_OK);
                        char what[96];
                        snprintf(what, sizeof what, "%s C=%lld roi_end_mode=%d sr=%d threads=%d fwd",
                                 conform_isa_name((conform_isa)isa), (long long)p->C, mode, sr, t + 1);
                        check_against_bounds(y, yo[t], ny, &by, &tol, what);
                        what[strlen(what) - 3] = 'b';
                        check_against_bounds(gx, gxo[t], nx, &bx, &tol, what);
                    }
                    cr_assert(!memcmp(yo[0], yo[1], 4 * (size_t)ny), "forward differs between 1 and 2 threads");
                    cr_assert(!memcmp(gxo[0], gxo[1], 4 * (size_t)nx), "backward differs between 1 and 2 threads");
                    for (int t = 0; t < 2; t++) { free(yo[t]); free(gxo[t]); }
                    free(xf); free(gf); free(rf); free(y); free(gx);
                    bounds_free(&by); bounds_free(&bx); free_problem(&q);
                }
    }
    cr_assert(tested >= 1);
    cr_assert(conform_isa_available(CONFORM_ISA_SCALAR));
}

Test(roi_align_optimized, unavailable_isa_is_refused_and_auto_is_best)
{
    cr_assert(conform_isa_available(conform_isa_best()));
    conform_isa parsed;
    cr_assert_eq(conform_isa_parse("avx512", &parsed), 0);
    cr_assert_eq(parsed, CONFORM_ISA_AVX512);
    cr_assert_neq(conform_isa_parse("sse9", &parsed), 0);
}

/* ---- bounds: ambiguity is found where rounding can flip a sample ------------------------ */

Test(roi_align_bounds, sample_on_the_lower_bound_is_ambiguous_unless_exact)
{
    /* aligned = false, scale 1, one bin, three samples (a count whose reciprocal float32 rounds):
       y = y1 + 0.5 * 3 / 3 = -1, on the bound in double, boxed in float32 */
    double x[16], rois[5] = {0, 1, -1.5, 2, 1.5}, y[1];
    for (int i = 0; i < 16; i++) x[i] = i + 1;
    ref_roi_align_params p = {1, 1, 4, 4, 1, 1, 1, 1.0, 3, 0, 0};
    ref_bounds b = bounds_alloc(16 * CONFORM_U_F32, 1);
    f64_roi_align_fwd__ref(&p, x, rois, y, &b);
    cr_assert(b.ambig[0] > 0, "a sample on y = -1 with 3 samples per bin must be ambiguous");
    /* one sample: y = -1.5 + 0.5 * 1 = -1 in every float32 form (short dyadic values, count 1) */
    p.sampling_ratio = 1;
    rois[4] = -0.5;
    f64_roi_align_fwd__ref(&p, x, rois, y, &b);
    cr_assert_float_eq(y[0], 2.5, 1e-15); /* row 0, x = 1.5: (2 + 3) / 2 */
    cr_assert_eq(b.ambig[0], 0.0, "an exact sample on the bound is inside (rule A's <=), no flip");
    tol_inputs t = {DTYPE_FLOAT32, &op_find("roi_align")->tol[0], b.abs_sum, b.n_terms, b.pos_err, b.ambig};
    compare_result r;
    const float dropped = 0.0f;
    compare_f32(y, &dropped, 1, &t, &r);
    cr_assert_eq(r.n_over, 1, "dropping the sample on the bound (strict comparisons) fails");
    /* moved well inside: not ambiguous either */
    rois[2] = -1.0; rois[4] = 0.0;
    f64_roi_align_fwd__ref(&p, x, rois, y, &b);
    cr_assert_eq(b.ambig[0], 0.0);
    bounds_free(&b);
}

Test(roi_align_bounds, adaptive_count_at_an_integer_is_ambiguous)
{
    /* aligned = false, roi height 4 px over pooled 2: rh / PH = 2 exactly: ceil may flip to 3 */
    double x[64], rois[5] = {0, 0.25, 0.25, 4.25, 4.25}, y[4];
    for (int i = 0; i < 64; i++) x[i] = (double)((i * 37) % 11);
    ref_roi_align_params p = {1, 1, 8, 8, 1, 2, 2, 1.0, 0, 0, 0};
    ref_bounds b = bounds_alloc(16 * CONFORM_U_F32, 4);
    f64_roi_align_fwd__ref(&p, x, rois, y, &b);
    for (int i = 0; i < 4; i++) cr_assert(b.ambig[i] > 0, "bin %d", i);
    rois[3] = rois[4] = 4.75; /* rh / PH = 2.25: no integer within rounding */
    f64_roi_align_fwd__ref(&p, x, rois, y, &b);
    for (int i = 0; i < 4; i++) cr_assert_eq(b.ambig[i], 0.0, "bin %d", i);
    bounds_free(&b);
}

/* found by fuzz_ops: an inverted roi of -7e20 px made the adaptive count's cast undefined */
Test(roi_align_bounds, absurd_inverted_roi_samples_nothing)
{
    double x[16] = {0}, rois[5] = {0, 1e20f, 1e20f, -7e20f, -7e20f}, y[4];
    for (int i = 0; i < 16; i++) x[i] = i;
    ref_roi_align_params p = {1, 1, 4, 4, 1, 2, 2, 1.0, 0, 1, 0};
    f64_roi_align_fwd__ref(&p, x, rois, y, NULL);
    for (int i = 0; i < 4; i++) cr_assert_eq(y[i], 0.0);
}
