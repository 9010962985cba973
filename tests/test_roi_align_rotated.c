/* roi_align_rotated and roi_align_rotated_grad: the mmcv vectors, the optimized path on every ISA
 * this CPU has against the reference with derived tolerances (both layouts, 1 and 2 threads,
 * bitwise thread- and layout-independence), validation errors, and every kind of proof catching
 * a deliberately broken reference. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_check.h"
#include "compare.h"
#include "conform_opt.h"
#include "conform_ref.h"
#include "opt_internal.h"
#include "verify.h"


/* ---- mmcv vectors (ops.md section 9) -------------------------------------------------------- */

static ref_roi_align_rotated_params mmcv_params(int64_t n, int nhwc)
{
    ref_roi_align_rotated_params p = {1, 1, n, n, 1, 2, 2, 1.0, 2, 1, 0, nhwc};
    return p;
}

Test(roi_align_rotated_published, mmcv_vectors_both_layouts)
{
    const double x2[4] = {1, 2, 3, 4}, x4[16] = {1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16};
    const double g2[4] = {3.0625, .4375, .4375, .0625};
    const double g4[16] = {.47265625, .4296875, .4296875, .04296875, .4296875, .390625, .390625, .0390625,
                           .4296875, .390625, .390625, .0390625, .04296875, .0390625, .0390625, .00390625};
    struct { int64_t n; const double *x, *g; double roi[6], y[4]; } v[4] = {
        {2, x2, g2, {0, .5, .5, 1, 1, 0}, {1, 1.25, 1.5, 1.75}},
        {2, x2, g2, {0, .5, .5, 1, 1, M_PI / 2}, {1.5, 1, 1.75, 1.25}},
        {4, x4, g4, {0, 1.5, 1.5, 3, 3, 0}, {1.9375, 4.75, 7.5625, 10.375}},
        {4, x4, g4, {0, 1.5, 1.5, 3, 3, M_PI / 2}, {7.5625, 1.9375, 10.375, 4.75}},
    };
    const double ones[4] = {1, 1, 1, 1};
    for (int nhwc = 0; nhwc <= 1; nhwc++) /* one channel, one roi: the same flat data in both layouts */
        for (int i = 0; i < 4; i++) {
            ref_roi_align_rotated_params p = mmcv_params(v[i].n, nhwc);
            double y[4], gx[16];
            f64_roi_align_rotated_fwd__ref(&p, v[i].x, v[i].roi, y, NULL);
            for (int e = 0; e < 4; e++)
                cr_assert(fabs(y[e] - v[i].y[e]) <= 1e-12 * fabs(v[i].y[e]), "vector %d nhwc %d: y[%d] = %.17g", i, nhwc,
                          e, y[e]);
            f64_roi_align_rotated_bwd__ref(&p, ones, v[i].roi, gx, NULL);
            for (int e = 0; e < v[i].n * v[i].n; e++)
                cr_assert(fabs(gx[e] - v[i].g[e]) <= 1e-12, "vector %d nhwc %d: grad[%d] = %.17g", i, nhwc, e, gx[e]);
        }
}

/* ---- random problems ---------------------------------------------------------------------- */

typedef struct {
    ref_roi_align_rotated_params p;
    double *x, *rois, *g; /* in the layout of p.nhwc */
} problem;

static double f32_uniform(gsl_rng *r, double lo, double hi) { return (double)(float)(lo + (hi - lo) * gsl_rng_uniform(r)); }

static problem make_problem(unsigned long seed, int aligned, int sr, int clockwise, int nhwc, int64_t C)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    problem q;
    q.p = (ref_roi_align_rotated_params){2, C, 13, 17, 11, 3, 4, 0.5, sr, aligned, clockwise, nhwc};
    int64_t nx = q.p.B * q.p.C * q.p.H * q.p.W, ng = q.p.K * q.p.C * q.p.pooled_h * q.p.pooled_w;
    q.x = malloc(sizeof(double) * (size_t)(nx ? nx : 1));
    q.g = malloc(sizeof(double) * (size_t)(ng ? ng : 1));
    q.rois = malloc(sizeof(double) * 6 * (size_t)q.p.K);
    for (int64_t i = 0; i < nx; i++) q.x[i] = f32_uniform(r, -1, 1);
    for (int64_t i = 0; i < ng; i++) q.g[i] = f32_uniform(r, -1, 1);
    for (int64_t k = 0; k < q.p.K; k++) {
        double f[6] = {(double)gsl_rng_uniform_int(r, 2), f32_uniform(r, -8, 42), f32_uniform(r, -8, 34),
                       f32_uniform(r, 1, 30), f32_uniform(r, 1, 30), f32_uniform(r, -7, 7)};
        for (int j = 0; j < 6; j++) q.rois[nhwc ? j * q.p.K + k : 6 * k + j] = f[j];
    }
    gsl_rng_free(r);
    return q;
}

static void free_problem(problem *q) { free(q->x); free(q->g); free(q->rois); }

static const tol_model tol = {6, "", 16, ""};

static f32_roi_align_rotated_params f32_of(const ref_roi_align_rotated_params *p)
{
    f32_roi_align_rotated_params f = {p->B, p->C, p->H, p->W, p->K, p->pooled_h, p->pooled_w, (float)p->spatial_scale,
                                      p->sampling_ratio, p->aligned, p->clockwise, p->nhwc};
    return f;
}

/* [N, C, S] -> [N, S, C] of float32 */
static float *permuted(const float *src, int64_t N, int64_t C, int64_t S)
{
    float *d = malloc(sizeof(float) * (size_t)(N * C * S + 1));
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < S; i++) d[(n * S + i) * C + c] = src[(n * C + c) * S + i];
    return d;
}

Test(roi_align_rotated_optimized, every_isa_thread_count_and_layout_matches_the_reference)
{
    const int64_t channels[] = {1, 3, 16, 17, 40};
    int tested = 0;
    for (int isa = CONFORM_ISA_SCALAR; isa < CONFORM_ISA_COUNT; isa++) {
        if (!conform_isa_available((conform_isa)isa)) continue;
        tested++;
        for (int ci = 0; ci < 5; ci++)
            for (int v = 0; v < 8; v++) {
                const int aligned = v & 1, sr = v & 2 ? 2 : 0, clockwise = (v >> 2) & 1;
                float *yo_nchw = NULL, *gxo_nchw = NULL;
                for (int nhwc = 0; nhwc <= 1; nhwc++) {
                    problem q = make_problem(7 + (unsigned long)(ci * 8 + v), aligned, sr, clockwise, nhwc, channels[ci]);
                    ref_roi_align_rotated_params *p = &q.p;
                    const int64_t S = p->H * p->W, P = p->pooled_h * p->pooled_w;
                    int64_t nx = p->B * p->C * S, ny = p->K * p->C * P;
                    if (nhwc) { /* the same numbers as the NCHW problem, permuted */
                        problem c = make_problem(7 + (unsigned long)(ci * 8 + v), aligned, sr, clockwise, 0, channels[ci]);
                        for (int64_t b = 0; b < p->B; b++)
                            for (int64_t ch = 0; ch < p->C; ch++)
                                for (int64_t i = 0; i < S; i++) q.x[(b * S + i) * p->C + ch] = c.x[(b * p->C + ch) * S + i];
                        for (int64_t k = 0; k < p->K; k++)
                            for (int64_t ch = 0; ch < p->C; ch++)
                                for (int64_t i = 0; i < P; i++) q.g[(k * P + i) * p->C + ch] = c.g[(k * p->C + ch) * P + i];
                        free_problem(&c);
                    }
                    f32_roi_align_rotated_params f = f32_of(p);
                    double *y = malloc(8 * (size_t)ny), *gx = malloc(8 * (size_t)nx);
                    ref_bounds by = bounds_alloc(16 * CONFORM_U_F32, ny), bx = bounds_alloc(16 * CONFORM_U_F32, nx);
                    f64_roi_align_rotated_fwd__ref(p, q.x, q.rois, y, &by);
                    f64_roi_align_rotated_bwd__ref(p, q.g, q.rois, gx, &bx);
                    float *xf = to_float(q.x, nx), *gf = to_float(q.g, ny), *rf = to_float(q.rois, 6 * p->K);
                    float *yo[2], *gxo[2];
                    for (int t = 0; t < 2; t++) {
                        conform_exec ex = {(conform_isa)isa, t + 1};
                        yo[t] = malloc(4 * (size_t)ny);
                        gxo[t] = malloc(4 * (size_t)nx);
                        cr_assert_eq(f32_roi_align_rotated_fwd(&f, xf, rf, yo[t], &ex), CONFORM_OK);
                        cr_assert_eq(f32_roi_align_rotated_bwd(&f, gf, rf, gxo[t], &ex), CONFORM_OK);
                        char what[128];
                        snprintf(what, sizeof what, "%s C=%lld aligned=%d sr=%d cw=%d nhwc=%d threads=%d fwd",
                                 conform_isa_name((conform_isa)isa), (long long)p->C, aligned, sr, clockwise, nhwc, t + 1);
                        check_against_bounds(y, yo[t], ny, &by, &tol, what);
                        what[strlen(what) - 3] = 'b';
                        check_against_bounds(gx, gxo[t], nx, &bx, &tol, what);
                    }
                    cr_assert(!memcmp(yo[0], yo[1], 4 * (size_t)ny), "forward differs between 1 and 2 threads");
                    cr_assert(!memcmp(gxo[0], gxo[1], 4 * (size_t)nx), "backward differs between 1 and 2 threads");
                    if (!nhwc) {
                        yo_nchw = permuted(yo[0], p->K, p->C, P);
                        gxo_nchw = permuted(gxo[0], p->B, p->C, S);
                    } else { /* same tap order, same weights, same per-channel arithmetic */
                        cr_assert(!memcmp(yo[0], yo_nchw, 4 * (size_t)ny), "forward NHWC != permuted NCHW");
                        cr_assert(!memcmp(gxo[0], gxo_nchw, 4 * (size_t)nx), "backward NHWC != permuted NCHW");
                    }
                    for (int t = 0; t < 2; t++) { free(yo[t]); free(gxo[t]); }
                    free(xf); free(gf); free(rf); free(y); free(gx);
                    bounds_free(&by); bounds_free(&bx); free_problem(&q);
                }
                free(yo_nchw);
                free(gxo_nchw);
            }
    }
    cr_assert(tested >= 1);
}

Test(roi_align_rotated_optimized, results_do_not_depend_on_the_channel_chunk)
{
    for (int nhwc = 0; nhwc <= 1; nhwc++) {
        problem q = make_problem(99, 1, 2, 0, nhwc, 40);
        ref_roi_align_rotated_params *p = &q.p;
        int64_t nx = p->B * p->C * p->H * p->W, ny = p->K * p->C * p->pooled_h * p->pooled_w;
        f32_roi_align_rotated_params f = f32_of(p);
        float *xf = to_float(q.x, nx), *gf = to_float(q.g, ny), *rf = to_float(q.rois, 6 * p->K);
        float *y[2] = {malloc(4 * (size_t)ny), malloc(4 * (size_t)ny)}, *gx[2] = {malloc(4 * (size_t)nx), malloc(4 * (size_t)nx)};
        conform_exec ex = {CONFORM_ISA_AUTO, 2};
        for (int t = 0; t < 2; t++) {
            conform_opt_roi_align_rotated_chunk = t ? 16 : 0; /* 16: three chunks of 40, the last a tail */
            cr_assert_eq(f32_roi_align_rotated_fwd(&f, xf, rf, y[t], &ex), CONFORM_OK);
            cr_assert_eq(f32_roi_align_rotated_bwd(&f, gf, rf, gx[t], &ex), CONFORM_OK);
        }
        conform_opt_roi_align_rotated_chunk = 0;
        cr_assert(!memcmp(y[0], y[1], 4 * (size_t)ny), "nhwc %d: forward depends on the chunk", nhwc);
        cr_assert(!memcmp(gx[0], gx[1], 4 * (size_t)nx), "nhwc %d: backward depends on the chunk", nhwc);
        for (int t = 0; t < 2; t++) { free(y[t]); free(gx[t]); }
        free(xf); free(gf); free(rf); free_problem(&q);
    }
}

/* ---- bounds ---------------------------------------------------------------------------------- */

Test(roi_align_rotated_bounds, adaptive_count_at_an_integer_is_ambiguous)
{
    /* unaligned, h*s / PH = 4 / 2 exactly: ceil may flip to 3 in another precision */
    double x[64], rois[6] = {0, 4, 4, 3.5, 4, 0.3}, y[4];
    for (int i = 0; i < 64; i++) x[i] = (double)((i * 37) % 11);
    ref_roi_align_rotated_params p = {1, 1, 8, 8, 1, 2, 2, 1.0, 0, 0, 0, 0};
    ref_bounds b = bounds_alloc(16 * CONFORM_U_F32, 4);
    f64_roi_align_rotated_fwd__ref(&p, x, rois, y, &b);
    for (int i = 0; i < 4; i++) cr_assert(b.ambig[i] > 0, "bin %d", i);
    rois[4] = 4.5; /* 2.25: no integer within rounding (w / PW = 1.75 neither) */
    f64_roi_align_rotated_fwd__ref(&p, x, rois, y, &b);
    for (int i = 0; i < 4; i++) cr_assert_eq(b.ambig[i], 0.0, "bin %d", i);
    bounds_free(&b);
}

/* ---- validation: every rule refuses with the cause named ------------------------------------ */

static const char *refusal(const op_desc *op, const char *const *attrs, const int64_t *s0, int r0, const int64_t *s1,
                           int r1, char *err, size_t len)
{
    problem_t p;
    problem_init(&p, op);
    err[0] = 0;
    for (int i = 0; attrs[i]; i++) {
        char name[64];
        const char *eq = strchr(attrs[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - attrs[i]), attrs[i]);
        if (problem_set_attr_text(&p, name, eq + 1, err, len)) return err;
    }
    if (problem_finish_attrs(&p, err, len)) return err;
    p.in[0].shape = shape_make(r0, s0);
    p.in[1].shape = shape_make(r1, s1);
    int rc = op->validate(&p, err, len);
    problem_free(&p);
    return rc ? err : NULL;
}

Test(roi_align_rotated_validate, errors_name_the_tensor_or_attribute_and_the_rule)
{
    char err[CONFORM_ERR_LEN];
    const int64_t x[4] = {1, 4, 8, 8}, xl[4] = {1, 8, 8, 4}, r[2] = {3, 6}, rl[2] = {6, 3}, r5[2] = {3, 5};
    const int64_t c1025[4] = {1, 1025, 2, 2}, g[4] = {3, 4, 2, 2}, gl[4] = {3, 2, 2, 4}, g3[4] = {3, 4, 3, 2};
    const char *ok[] = {"pooled_h=2", "pooled_w=2", NULL};
    const char *nhwc[] = {"pooled_h=2", "pooled_w=2", "data_format=NHWC", NULL};
    cr_assert_null(refusal(op_find("roi_align_rotated"), ok, x, 4, r, 2, err, sizeof err), "%s", err);
    cr_assert_null(refusal(op_find("roi_align_rotated"), nhwc, xl, 4, rl, 2, err, sizeof err), "%s", err);
    cr_assert_str_eq(refusal(op_find("roi_align_rotated"), ok, x, 4, r5, 2, err, sizeof err),
                     "roi_align_rotated: rois must have shape [n,6] for data_format NCHW, got [3,5]");
    cr_assert_str_eq(refusal(op_find("roi_align_rotated"), nhwc, xl, 4, r, 2, err, sizeof err),
                     "roi_align_rotated: rois must have shape [6,n] for data_format NHWC, got [3,6]");
    cr_assert_not_null(strstr(refusal(op_find("roi_align_rotated"), ok, c1025, 4, r, 2, err, sizeof err),
                              "C = 1025 channels: must be in [0, 1024]"));
    const char *big[] = {"pooled_h=1025", "pooled_w=2", NULL}, *zero[] = {"pooled_h=2", "pooled_w=0", NULL};
    const char *fmt[] = {"pooled_h=2", "pooled_w=2", "data_format=nchw", NULL};
    const char *scale[] = {"pooled_h=2", "pooled_w=2", "spatial_scale=0", NULL};
    const char *sr[] = {"pooled_h=2", "pooled_w=2", "sampling_ratio=-1", NULL};
    cr_assert_not_null(strstr(refusal(op_find("roi_align_rotated"), big, x, 4, r, 2, err, sizeof err), "pooled_h = 1025"));
    cr_assert_not_null(strstr(refusal(op_find("roi_align_rotated"), zero, x, 4, r, 2, err, sizeof err), "pooled_w = 0: must be >= 1"));
    const int64_t r0[2] = {0, 6};
    cr_assert_null(refusal(op_find("roi_align_rotated"), zero, x, 4, r0, 2, err, sizeof err), "pooled 0 with no rois: %s", err);
    cr_assert_not_null(strstr(refusal(op_find("roi_align_rotated"), fmt, x, 4, r, 2, err, sizeof err), "data_format = 'nchw'"));
    cr_assert_not_null(strstr(refusal(op_find("roi_align_rotated"), scale, x, 4, r, 2, err, sizeof err), "spatial_scale = 0"));
    cr_assert_not_null(strstr(refusal(op_find("roi_align_rotated"), sr, x, 4, r, 2, err, sizeof err), "sampling_ratio = -1"));

    const char *gok[] = {"pooled_h=2", "pooled_w=2", "y_grad_shape=1,4,8,8", NULL};
    const char *gnhwc[] = {"pooled_h=2", "pooled_w=2", "y_grad_shape=1,8,8,4", "data_format=NHWC", NULL};
    const char *glen[] = {"pooled_h=2", "pooled_w=2", "y_grad_shape=1,4,8", NULL};
    const char *gch[] = {"pooled_h=2", "pooled_w=2", "y_grad_shape=1,5,8,8", NULL};
    cr_assert_null(refusal(op_find("roi_align_rotated_grad"), gok, g, 4, r, 2, err, sizeof err), "%s", err);
    cr_assert_null(refusal(op_find("roi_align_rotated_grad"), gnhwc, gl, 4, rl, 2, err, sizeof err), "%s", err);
    cr_assert_not_null(strstr(refusal(op_find("roi_align_rotated_grad"), gok, g3, 4, r, 2, err, sizeof err),
                              "must equal x_grad dims 2, 3 = 3 x 2"));
    cr_assert_not_null(strstr(refusal(op_find("roi_align_rotated_grad"), gok, g, 4, r0, 2, err, sizeof err),
                              "x_grad has 3 rois (dim 0) but rois has 0"));
    cr_assert_not_null(strstr(refusal(op_find("roi_align_rotated_grad"), glen, g, 4, r, 2, err, sizeof err),
                              "y_grad_shape must have 4 entries"));
    cr_assert_not_null(strstr(refusal(op_find("roi_align_rotated_grad"), gch, g, 4, r, 2, err, sizeof err),
                              "x_grad has 4 channels (dim 1) but y_grad_shape[1] = 5"));
}

/* ---- every kind of proof catches a broken reference ------------------------------------------ */

Test(roi_align_rotated_verify, the_real_references_pass_every_proof)
{
    const op_desc *ops[] = {op_find("roi_align_rotated"), op_find("roi_align_rotated_grad")};
    for (int o = 0; o < 2; o++)
        for (int k = 0; k < PROOF_KINDS; k++) {
            int ran;
            cr_assert_eq(verify_kind(ops[o], proof_kinds[k], &ran), 0, "%s %s", ops[o]->name, proof_kinds[k]);
        }
}

/* Calls the real reference of op on a copy of p whose rois field f is transformed. */
static void with_rois(const op_desc *op, const problem_t *p, double **out, ref_bounds *b, int field, double scale,
                      double shift_over_s)
{
    problem_t q = *p;
    int nhwc = !strcmp(problem_attr(p, "data_format")->s, "NHWC");
    int64_t n = tensor_numel(&p->in[1]), K = n / 6;
    double s = problem_float(p, "spatial_scale");
    q.in[1].data = malloc(sizeof(double) * (size_t)(n ? n : 1));
    memcpy(q.in[1].data, p->in[1].data, sizeof(double) * (size_t)n);
    for (int64_t k = 0; k < K; k++) {
        double *v = &q.in[1].data[nhwc ? field * K + k : 6 * k + field];
        *v = *v * scale + shift_over_s / s;
    }
    op->reference(&q, out, b);
    free(q.in[1].data);
}

/* half a feature pixel off in x: the centre shift applied twice */
static void fwd_half_pixel_off(const problem_t *p, double **out, ref_bounds *b)
{
    with_rois(op_find("roi_align_rotated"), p, out, b, 1, 1.0, 0.5);
}

Test(roi_align_rotated_verify, metamorphic_and_golden_catch_a_half_pixel_shift)
{
    op_desc broken = *op_find("roi_align_rotated");
    broken.reference = fwd_half_pixel_off;
    int ran;
    cr_assert_gt(verify_kind(&broken, "metamorphic", &ran), 0);
    cr_assert_gt(verify_kind(&broken, "golden", &ran), 0);
}

/* the rotation turning the wrong way: a wrong sign of sin in both coordinates */
static void fwd_wrong_sin_sign(const problem_t *p, double **out, ref_bounds *b)
{
    with_rois(op_find("roi_align_rotated"), p, out, b, 5, -1.0, 0.0);
}

Test(roi_align_rotated_verify, quarter_turn_and_golden_catch_a_wrong_sin_sign)
{
    op_desc broken = *op_find("roi_align_rotated");
    broken.reference = fwd_wrong_sin_sign;
    int ran, bad = 0;
    for (int i = 0; broken.proofs[i].kind; i++)
        if (strstr(broken.proofs[i].what, "quarter turn")) {
            proof_result r;
            memset(&r, 0, sizeof r);
            bad += broken.proofs[i].run(&broken, &r) != 0;
        }
    cr_assert_gt(bad, 0, "the quarter-turn relation must catch a wrong sin sign");
    cr_assert_gt(verify_kind(&broken, "golden", &ran), 0);
}

static void grad_wrong_sin_sign(const problem_t *p, double **out, ref_bounds *b)
{
    with_rois(op_find("roi_align_rotated_grad"), p, out, b, 5, -1.0, 0.0);
}

/* (the mmcv gradients of sum() over a centred square roi are the same at +-pi/2: golden cannot
   see this one, the forward-based proofs do) */
Test(roi_align_rotated_verify, adjoint_and_finite_difference_catch_a_wrong_sin_sign_in_the_grad)
{
    op_desc broken = *op_find("roi_align_rotated_grad");
    broken.reference = grad_wrong_sin_sign;
    int ran;
    cr_assert_gt(verify_kind(&broken, "adjoint", &ran), 0);
    cr_assert_gt(verify_kind(&broken, "finite difference", &ran), 0);
    cr_assert_eq(verify_kind(&broken, "golden", &ran), 0);
}

/* pooled_h and pooled_w swapped: the mmcv NPU adapter's bug (ops.md section 10) */
static void grad_swapped_pooled(const problem_t *p, double **out, ref_bounds *b)
{
    problem_t q = *p;
    int ih = op_attr_index(p->op, "pooled_h"), iw = op_attr_index(p->op, "pooled_w");
    q.attr[ih] = p->attr[iw];
    q.attr[iw] = p->attr[ih];
    op_find("roi_align_rotated_grad")->reference(&q, out, b);
}

Test(roi_align_rotated_verify, adjoint_and_finite_difference_catch_swapped_pooled_sizes)
{
    op_desc broken = *op_find("roi_align_rotated_grad");
    broken.reference = grad_swapped_pooled;
    int ran;
    cr_assert_gt(verify_kind(&broken, "adjoint", &ran), 0);
    cr_assert_gt(verify_kind(&broken, "finite difference", &ran), 0);
}

/* A self-contained grad (NCHW) that forgets the (y1, x1) corner of every sample. */
static void grad_dropped_corner(const problem_t *p, double **out, ref_bounds *bounds)
{
    if (!strcmp(problem_attr(p, "data_format")->s, "NHWC")) { /* only the NCHW cases are broken */
        op_find("roi_align_rotated_grad")->reference(p, out, bounds);
        return;
    }
    const attr_value *ys = problem_attr(p, "y_grad_shape");
    int64_t B = ys->list[0], C = ys->list[1], H = ys->list[2], W = ys->list[3];
    int64_t PH = problem_int(p, "pooled_h"), PW = problem_int(p, "pooled_w"), sr = problem_int(p, "sampling_ratio");
    int64_t K = p->in[1].shape.dims[0];
    int aligned = (int)problem_int(p, "aligned"), cw = (int)problem_int(p, "clockwise");
    double s = problem_float(p, "spatial_scale"), off = aligned ? 0.5 : 0;
    memset(out[0], 0, sizeof(double) * (size_t)(B * C * H * W));
    for (int64_t k = 0; k < K; k++) {
        const double *r = p->in[1].data + 6 * k;
        int64_t b = (int64_t)floor(r[0]);
        if (b < 0 || b >= B) continue;
        double cx = r[1] * s - off, cy = r[2] * s - off, rw = r[3] * s, rh = r[4] * s, th = cw ? -r[5] : r[5];
        if (!aligned) { rw = fmax(rw, 1); rh = fmax(rh, 1); }
        int64_t gh = sr > 0 ? sr : (int64_t)ceil(rh / PH), gw = sr > 0 ? sr : (int64_t)ceil(rw / PW);
        double count = fmax((double)(gh * gw), 1);
        for (int64_t c = 0; c < C; c++)
            for (int64_t ph = 0; ph < PH; ph++)
                for (int64_t pw = 0; pw < PW; pw++) {
                    double g = p->in[0].data[((k * C + c) * PH + ph) * PW + pw];
                    for (int64_t iy = 0; iy < gh; iy++)
                        for (int64_t ix = 0; ix < gw; ix++) {
                            double yy = -rh / 2 + ph * rh / PH + (iy + 0.5) * rh / PH / gh;
                            double xx = -rw / 2 + pw * rw / PW + (ix + 0.5) * rw / PW / gw;
                            ref_bilinear rb;
                            if (!ref_bilinear_rule(H, W, yy * cos(th) - xx * sin(th) + cy, yy * sin(th) + xx * cos(th) + cx, &rb))
                                continue;
                            for (int i = 0; i < 2; i++)
                                for (int j = 0; j < 2; j++)
                                    if (i + j < 2) out[0][((b * C + c) * H + rb.y[i]) * W + rb.x[j]] += g * rb.wy[i] * rb.wx[j] / count;
                        }
                }
    }
}

Test(roi_align_rotated_verify, adjoint_finite_difference_and_golden_catch_a_dropped_corner)
{
    op_desc broken = *op_find("roi_align_rotated_grad");
    broken.reference = grad_dropped_corner;
    int ran;
    cr_assert_gt(verify_kind(&broken, "adjoint", &ran), 0);
    cr_assert_gt(verify_kind(&broken, "finite difference", &ran), 0);
    cr_assert_gt(verify_kind(&broken, "golden", &ran), 0);
}

/* the layout relation catches an NHWC path that mixes up the roi fields ([6,n] read as [n,6]) */
static void fwd_rois_misread(const problem_t *p, double **out, ref_bounds *b)
{
    problem_t q = *p;
    int fi = op_attr_index(p->op, "data_format");
    if (!strcmp(p->attr[fi].s, "NHWC")) {
        int64_t K = tensor_numel(&p->in[1]) / 6;
        q.in[1].data = malloc(sizeof(double) * 6 * (size_t)(K ? K : 1));
        for (int64_t k = 0; k < K; k++) /* read as if [n,6]: transposed again */
            for (int f = 0; f < 6; f++) q.in[1].data[f * K + k] = p->in[1].data[6 * k + f];
        op_find("roi_align_rotated")->reference(&q, out, b);
        free(q.in[1].data);
        return;
    }
    op_find("roi_align_rotated")->reference(p, out, b);
}

Test(roi_align_rotated_verify, layout_relation_catches_misread_rois)
{
    op_desc broken = *op_find("roi_align_rotated");
    broken.reference = fwd_rois_misread;
    int ran;
    cr_assert_gt(verify_kind(&broken, "metamorphic", &ran), 0);
}
