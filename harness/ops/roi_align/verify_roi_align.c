/* Proofs of the roi_align and roi_align_v2_backward references (see verify.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fill.h"
#include "verify.h"

extern const op_desc op_roi_align, op_roi_align_v2_backward;
/* verify_roi_end_mode.c: the modes of the Ascend attribute, for either op */
int roi_end_mode_end_pixel(const op_desc *op, proof_result *r);
int roi_end_mode_identities(const op_desc *op, proof_result *r);

/* metamorphic relations are exact in real arithmetic; double rounding of the shifted
   coordinates moves results by a few ulps of the output scale at most */
#define RELATION_LIMIT 1e-12
/* the adjoint identity compares two sums of the same products taken in different orders */
#define ADJOINT_LIMIT 1e-12



/* ---- roi_align ------------------------------------------------------------------------------ */

/* A roi over an integer block of pixels with one sample per pixel centre reproduces the block. */
static int identity_window(const op_desc *op, proof_result *r)
{
    gsl_rng *rng = conform_rng(0); /* GSL's default seed */
    r->limit = 0; /* the weights are exactly 0 and 1 */
    const int64_t B = 2, C = 3, H = 11, W = 13, PH = 4, PW = 5;
    shape_t xs = shape4(B, C, H, W);
    double *x = proof_random_values(B * C * H * W, rng);
    int rc = 0;
    for (int aligned = 0; aligned <= 1 && rc == 0; aligned++) {
        const double s = 0.5;
        double rois[5 * 6];
        for (int k = 0; k < 6; k++) {
            int64_t y0 = (int64_t)gsl_rng_uniform_int(rng, (unsigned long)(H - PH + 1));
            int64_t x0 = (int64_t)gsl_rng_uniform_int(rng, (unsigned long)(W - PW + 1));
            /* sample at x1*s - off + (pw + 0.5) = x0 + pw: x1 = (x0 - 0.5 + off) / s */
            double off = aligned ? 0.5 : 0.0;
            double *b = rois + 5 * k;
            b[0] = (double)(k % B);
            b[1] = ((double)x0 - 0.5 + off) / s;
            b[2] = ((double)y0 - 0.5 + off) / s;
            b[3] = b[1] + (double)PW / s;
            b[4] = b[2] + (double)PH / s;
        }
        char a0[40];
        snprintf(a0, sizeof a0, "aligned=%s", aligned ? "true" : "false");
        const char *attrs[] = {"pooled_h=4", "pooled_w=5", "spatial_scale=0.5", "sampling_ratio=1", a0, NULL};
        double *y[1] = {0};
        int64_t ny;
        const shape_t shapes[2] = {xs, shape2(6, 5)};
        const double *data[2] = {x, rois};
        rc = proof_run(op, &(proof_run_spec){attrs, shapes, data}, y, &ny, r);
        for (int64_t k = 0; k < 6 && rc == 0; k++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t i = 0; i < PH; i++)
                    for (int64_t j = 0; j < PW; j++) {
                        const double *b = rois + 5 * k;
                        int64_t y0 = (int64_t)llround(b[2] * s + 0.5 - (aligned ? 0.5 : 0.0));
                        int64_t x0 = (int64_t)llround(b[1] * s + 0.5 - (aligned ? 0.5 : 0.0));
                        double want = x[(((int64_t)b[0] * C + c) * H + y0 + i) * W + x0 + j];
                        proof_note(r, fabs(y[0][((k * C + c) * PH + i) * PW + j] - want));
                    }
        proof_free_outputs(y, 1);
    }
    free(x);
    gsl_rng_free(rng);
    return rc ? rc : proof_verdict(r, "pixels reproduced (aligned and not)");
}

/* Rois and image translated together by whole pixels give the same outputs, for rois whose
 * samples stay in [0, H-1] x [0, W-1] (where rule A reads the same pixels in both images). */
static int translation(const op_desc *op, proof_result *r)
{
    gsl_rng *rng = conform_rng(2);
    r->limit = RELATION_LIMIT;
    const int64_t B = 2, C = 2, H = 12, W = 10, K = 8, TY = 3, TX = 5;
    const double s = 0.25;
    shape_t xs = shape4(B, C, H, W), xs2 = shape4(B, C, H + TY + 2, W + TX + 1);
    double *x = proof_random_values(B * C * H * W, rng);
    double *x2 = calloc((size_t)shape_numel(&xs2), sizeof(double));
    for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < H; i++)
                for (int64_t j = 0; j < W; j++)
                    x2[((b * C + c) * (H + TY + 2) + i + TY) * (W + TX + 1) + j + TX] = x[((b * C + c) * H + i) * W + j];
    double rois[5 * K], rois2[5 * K];
    int rc = 0;
    for (int variant = 0; variant < 4 && rc == 0; variant++) {
        int aligned = variant & 1, sr = variant & 2 ? 2 : 0;
        double off = aligned ? 0.5 : 0.0;
        for (int64_t k = 0; k < K; k++) {
            /* feature-coordinate corners inside [0.5, H-1.5] so every sample lies in [0, H-1] */
            double ya = fill_uniform(rng, 0.5, (double)H - 1.5), yb = fill_uniform(rng, 0.5, (double)H - 1.5);
            double xa = fill_uniform(rng, 0.5, (double)W - 1.5), xb = fill_uniform(rng, 0.5, (double)W - 1.5);
            if (!aligned) { /* keep rw, rh >= 1 so the max(., 1) clamp cannot push samples out */
                if (fabs(yb - ya) < 1) { ya = 1; yb = 3; }
                if (fabs(xb - xa) < 1) { xa = 2; xb = 4.5; }
            }
            double *q = rois + 5 * k, *q2 = rois2 + 5 * k;
            q[0] = q2[0] = (double)(k % B);
            q[1] = (fmin(xa, xb) + off) / s; q[3] = (fmax(xa, xb) + off) / s;
            q[2] = (fmin(ya, yb) + off) / s; q[4] = (fmax(ya, yb) + off) / s;
            q2[1] = q[1] + TX / s; q2[3] = q[3] + TX / s;
            q2[2] = q[2] + TY / s; q2[4] = q[4] + TY / s;
        }
        char a0[32], a1[32];
        snprintf(a0, sizeof a0, "aligned=%s", aligned ? "true" : "false");
        snprintf(a1, sizeof a1, "sampling_ratio=%d", sr);
        const char *attrs[] = {"pooled_h=3", "pooled_w=2", "spatial_scale=0.25", a0, a1, NULL};
        const shape_t s1[2] = {xs, shape2(K, 5)}, s2[2] = {xs2, shape2(K, 5)};
        const double *d1[2] = {x, rois}, *d2[2] = {x2, rois2};
        rc = proof_same_output(op, &(proof_run_spec){attrs, s1, d1}, &(proof_run_spec){attrs, s2, d2}, r);
    }
    free(x);
    free(x2);
    gsl_rng_free(rng);
    return rc ? rc : proof_verdict(r, "translated problems (aligned x sampling_ratio)");
}

/* aligned = true is aligned = false with the rois moved by half a feature pixel (-0.5/s), as
 * long as the max(., 1) clamp of the unaligned mode does not act (rois >= 1 px). */
static int half_pixel(const op_desc *op, proof_result *r)
{
    gsl_rng *rng = conform_rng(3);
    r->limit = RELATION_LIMIT;
    const int64_t B = 1, C = 3, H = 9, W = 9, K = 10;
    const double s = 0.5;
    shape_t xs = shape4(B, C, H, W);
    double *x = proof_random_values(B * C * H * W, rng);
    double rois[5 * K], moved[5 * K];
    for (int64_t k = 0; k < K; k++) {
        double cx = fill_uniform(rng, -4, 22), cy = fill_uniform(rng, -4, 22);
        double w = fill_uniform(rng, 2.5, 14), h = fill_uniform(rng, 2.5, 14);
        double *q = rois + 5 * k, *m = moved + 5 * k;
        q[0] = m[0] = 0;
        q[1] = cx - w / 2; q[2] = cy - h / 2; q[3] = cx + w / 2; q[4] = cy + h / 2;
        for (int i = 1; i < 5; i++) m[i] = q[i] - 0.5 / s;
    }
    int rc = 0;
    for (int sr = 0; sr <= 2 && rc == 0; sr += 2) {
        char a1[32];
        snprintf(a1, sizeof a1, "sampling_ratio=%d", sr);
        const char *al[] = {"pooled_h=3", "pooled_w=3", "spatial_scale=0.5", "aligned=true", a1, NULL};
        const char *un[] = {"pooled_h=3", "pooled_w=3", "spatial_scale=0.5", "aligned=false", a1, NULL};
        const shape_t sh[2] = {xs, shape2(K, 5)};
        const double *da[2] = {x, rois}, *du[2] = {x, moved};
        rc = proof_same_output(op, &(proof_run_spec){al, sh, da}, &(proof_run_spec){un, sh, du}, r);
    }
    free(x);
    gsl_rng_free(rng);
    return rc ? rc : proof_verdict(r, "aligned vs shifted unaligned problems");
}

/* roi_align is linear in the feature map: F(a x + b z) = a F(x) + b F(z). */
static int linearity(const op_desc *op, proof_result *r)
{
    gsl_rng *rng = conform_rng(4);
    r->limit = RELATION_LIMIT;
    const int64_t B = 2, C = 2, H = 8, W = 7, K = 9;
    shape_t xs = shape4(B, C, H, W), shapes[2] = {xs, shape2(K, 5)};
    const char *attrs[] = {"pooled_h=2", "pooled_w=3", "spatial_scale=0.5", "sampling_ratio=0", NULL};
    problem_t p;
    if (proof_problem(op, attrs, shapes, "{\"rois\": {\"outside_frac\": 0.3}}", 4, &p, r)) { gsl_rng_free(rng); return -1; }
    int64_t n = shape_numel(&xs);
    double *x = proof_random_values(n, rng), *z = proof_random_values(n, rng);
    const int rc = proof_linearity(op, &p, x, z, r);
    problem_free(&p);
    free(x);
    free(z);
    gsl_rng_free(rng);
    return rc ? rc : proof_verdict(r, "linear combinations");
}

const proof_desc roi_align_proofs[] = {
    {"metamorphic", "a roi over a pixel block with one sample per pixel centre reproduces the block", identity_window},
    {"metamorphic", "translating rois and image together leaves the output unchanged", translation},
    {"metamorphic", "aligned rois = unaligned rois moved by -0.5/spatial_scale", half_pixel},
    {"metamorphic", "linear in the feature map", linearity},
    {"metamorphic", "roi_end_mode 1 = mode 0 with the roi ends moved by +1", roi_end_mode_end_pixel},
    {"metamorphic", "roi_end_mode 0 = aligned false, 2 = aligned true, 3 = 2", roi_end_mode_identities},
    {"golden", "torchvision 0.14, the torch_npu document's and test's vectors", proof_golden},
    {NULL, NULL, NULL},
};

/* ---- roi_align_v2_backward ------------------------------------------------------------------- */

typedef struct {
    int aligned, sr, mode; /* mode: roi_end_mode, -1 not given */
    int64_t B, C, H, W, K, PH, PW;
    double s;
} family_case;

static const family_case family_cases[] = {
    {1, 2, -1, 2, 3, 9, 11, 7, 3, 2, 0.5},
    {0, 0, -1, 1, 2, 12, 8, 6, 2, 4, 0.25},
    {1, 0, -1, 2, 2, 7, 7, 9, 3, 3, 1.0},
    {0, 1, -1, 1, 4, 5, 13, 5, 1, 5, 0.5},
    {0, 0, 1, 2, 2, 9, 10, 7, 2, 3, 0.5},  /* roi_end_mode 1: the end pixel counted in */
    {0, 2, 1, 1, 3, 8, 8, 5, 3, 2, 0.25},
    {1, 0, 3, 1, 2, 9, 9, 6, 2, 2, 0.5},   /* roi_end_mode 3, computed as 2 */
};

/* The forward (from the table) and the backward under proof on random problem i. */
static int make_pair(const op_desc *bwd, size_t i, unsigned long seed, proof_pair *pr, proof_result *r)
{
    const family_case *fc = &family_cases[i];
    char a[6][48];
    snprintf(a[0], 48, "aligned=%s", fc->aligned ? "true" : "false");
    snprintf(a[5], 48, "roi_end_mode=%d", fc->mode);
    snprintf(a[1], 48, "sampling_ratio=%d", fc->sr);
    snprintf(a[2], 48, "spatial_scale=%.17g", fc->s);
    snprintf(a[3], 48, "pooled_h=%lld", (long long)fc->PH);
    snprintf(a[4], 48, "pooled_w=%lld", (long long)fc->PW);
    const char *fa[] = {a[0], a[1], a[2], a[3], a[4], a[5], NULL};
    shape_t fs[2] = {shape4(fc->B, fc->C, fc->H, fc->W), shape2(fc->K, 5)};
    memset(pr, 0, sizeof *pr);
    if (proof_problem(&op_roi_align, fa, fs, "{\"rois\": {\"outside_frac\": 0.3, \"size\": [1, 40]}}", seed, &pr->fwd, r))
        return -1;
    char b[4][64];
    snprintf(b[0], 64, "pooled_height=%lld", (long long)fc->PH);
    snprintf(b[1], 64, "pooled_width=%lld", (long long)fc->PW);
    snprintf(b[2], 64, "input_shape=%lld,%lld,%lld,%lld", (long long)fc->B, (long long)fc->C, (long long)fc->H,
             (long long)fc->W);
    const char *ba[] = {a[0], a[1], a[2], a[5], b[0], b[1], b[2], NULL};
    shape_t bs[2] = {shape4(fc->K, fc->C, fc->PH, fc->PW), shape2(fc->K, 5)};
    return proof_pair_finish(pr, bwd, ba, bs, seed + 1, 1, 1, 1, r); /* the same rois */
}

#define N_CASES (sizeof family_cases / sizeof family_cases[0])

static int adjoint(const op_desc *op, proof_result *r)
{
    r->limit = ADJOINT_LIMIT;
    return proof_adjoint_pairs(op, make_pair, N_CASES, 10, "random problems, |<g,Fx> - <F'g,x>| / sum of |products|",
                               r);
}

static int finite_difference(const op_desc *op, proof_result *r)
{
    /* central differences of a linear function with h = 1e-2 are exact but for rounding,
       about 1e-16 * |loss| / h ~ 1e-13 of the gradient scale here; every 7th element, so
       touched and untouched pixels are both probed: both the discrepancy and GSL's own error
       estimate must be tiny against the gradient scale */
    r->limit = 1e-10;
    const proof_fd_plan plan = {&op_roi_align, 0, 7, 1e-2, 1e-300, 1,
                                "elements, max(|fd - grad|, GSL error estimate) / gradient scale"};
    return proof_fd_pairs(op, make_pair, N_CASES, 20, &plan, r);
}

/* grad_input of translated problems is the translated grad_input. */
static int backward_translation(const op_desc *op, proof_result *r)
{
    gsl_rng *rng = conform_rng(6);
    r->limit = RELATION_LIMIT;
    const int64_t B = 1, C = 2, H = 9, W = 8, K = 6, TY = 2, TX = 3, H2 = H + TY + 1, W2 = W + TX + 2;
    const double s = 0.5;
    double rois[5 * K], rois2[5 * K];
    for (int64_t k = 0; k < K; k++) {
        double ya = fill_uniform(rng, 0.5, H - 1.5), yb = fill_uniform(rng, 0.5, H - 1.5);
        double xa = fill_uniform(rng, 0.5, W - 1.5), xb = fill_uniform(rng, 0.5, W - 1.5);
        double *q = rois + 5 * k, *q2 = rois2 + 5 * k;
        q[0] = q2[0] = 0;
        q[1] = (fmin(xa, xb) + 0.5) / s; q[3] = (fmax(xa, xb) + 0.5) / s;
        q[2] = (fmin(ya, yb) + 0.5) / s; q[4] = (fmax(ya, yb) + 0.5) / s;
        q2[1] = q[1] + TX / s; q2[3] = q[3] + TX / s; q2[2] = q[2] + TY / s; q2[4] = q[4] + TY / s;
    }
    char shape1[64], shape2s[64];
    snprintf(shape1, sizeof shape1, "input_shape=%lld,%lld,%lld,%lld", (long long)B, (long long)C, (long long)H, (long long)W);
    snprintf(shape2s, sizeof shape2s, "input_shape=%lld,%lld,%lld,%lld", (long long)B, (long long)C, (long long)H2, (long long)W2);
    const char *a1[] = {"pooled_height=2", "pooled_width=3", "spatial_scale=0.5", "sampling_ratio=2", shape1, NULL};
    const char *a2[] = {"pooled_height=2", "pooled_width=3", "spatial_scale=0.5", "sampling_ratio=2", shape2s, NULL};
    shape_t sh[2] = {shape4(K, C, 2, 3), shape2(K, 5)};
    problem_t p1, p2;
    int rc = 0;
    if (proof_problem(op, a1, sh, NULL, 6, &p1, r)) { gsl_rng_free(rng); return -1; }
    if (proof_problem(op, a2, sh, NULL, 6, &p2, r)) { problem_free(&p1); gsl_rng_free(rng); return -1; }
    memcpy(p2.in[0].data, p1.in[0].data, sizeof(double) * (size_t)tensor_numel(&p1.in[0]));
    memcpy(p1.in[1].data, rois, sizeof rois);
    memcpy(p2.in[1].data, rois2, sizeof rois2);
    double *g1[1] = {0}, *g2[1] = {0};
    rc = proof_reference(op, &p1, g1);
    if (!rc) rc = proof_reference(op, &p2, g2);
    if (!rc) {
        double *moved = calloc((size_t)(B * C * H * W), sizeof(double));
        double outside = 0;
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < H2; i++)
                for (int64_t j = 0; j < W2; j++) {
                    double v = g2[0][(c * H2 + i) * W2 + j];
                    if (i >= TY && i < TY + H && j >= TX && j < TX + W) moved[(c * H + i - TY) * W + j - TX] = v;
                    else outside = fmax(outside, fabs(v));
                }
        proof_note(r, rel_diff(moved, g1[0], B * C * H * W));
        proof_note(r, outside); /* nothing may land outside the translated image */
        free(moved);
    }
    proof_free_outputs(g1, 1);
    proof_free_outputs(g2, 1);
    problem_free(&p1);
    problem_free(&p2);
    gsl_rng_free(rng);
    return rc ? rc : proof_verdict(r, "comparisons of translated gradients");
}

const proof_desc roi_align_bwd_proofs[] = {
    {"adjoint", "<g, roi_align(x)> = <roi_align_v2_backward(g), x>", adjoint},
    {"finite difference", "central differences of <g, roi_align(x)> in x equal grad_input", finite_difference},
    {"metamorphic", "translating rois and image together translates grad_input", backward_translation},
    {"metamorphic", "roi_end_mode 1 = mode 0 with the roi ends moved by +1", roi_end_mode_end_pixel},
    {"metamorphic", "roi_end_mode 0 = aligned false, 2 = aligned true, 3 = 2", roi_end_mode_identities},
    {"golden", "torchvision 0.14 autograd, the aclnn/torch_npu documents' and torch_npu test's vectors", proof_golden},
    {NULL, NULL, NULL},
};
