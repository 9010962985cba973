/* Proofs of the roi_align_rotated and roi_align_rotated_grad references (see verify.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fill.h"
#include "verify.h"

extern const op_desc op_roi_align_rotated, op_roi_align_rotated_grad;

/* relations exact in real arithmetic; double rounding of the moved coordinates (and of cos/sin
   of a shifted angle) moves results by a few ulps of the output scale at most */
#define RELATION_LIMIT 1e-12
/* the adjoint identity compares two sums of the same products taken in different orders */
#define ADJOINT_LIMIT 1e-12


/* [N, C, S] -> [N, S, C] */
static double *to_channels_last(const double *src, int64_t N, int64_t C, int64_t S)
{
    const int64_t total = N * C * S;
    double *d = malloc(sizeof(double) * (size_t)(total > 0 ? total : 1));
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < S; i++) d[(n * S + i) * C + c] = src[(n * C + c) * S + i];
    return d;
}

/* [K, 6] -> [6, K] */
static double *field_major(const double *rois, int64_t K)
{
    double *d = malloc(sizeof(double) * 6 * (size_t)(K ? K : 1));
    for (int64_t k = 0; k < K; k++)
        for (int f = 0; f < 6; f++) d[f * K + k] = rois[6 * k + f];
    return d;
}

/* K random rotated rois over an H x W map at scale s: centres inside or partly outside, any angle */
static void random_rois(gsl_rng *rng, double *rois, int64_t K, int64_t B, int64_t H, int64_t W, double s)
{
    for (int64_t k = 0; k < K; k++) {
        double *q = rois + 6 * k;
        q[0] = (double)(k % B);
        q[1] = fill_uniform(rng, -2 / s, (W + 2) / s);
        q[2] = fill_uniform(rng, -2 / s, (H + 2) / s);
        q[3] = fill_uniform(rng, 1.5 / s, (double)W / s);
        q[4] = fill_uniform(rng, 1.5 / s, (double)H / s);
        q[5] = fill_uniform(rng, -7, 7);
    }
}

static const char *fmt_attr(char *buf, size_t n, const char *name, const char *v)
{
    snprintf(buf, n, "%s=%s", name, v);
    return buf;
}

/* ---- roi_align_rotated ------------------------------------------------------------------------ */

/* Angle 0 with centre/size of an axis-aligned roi is roi_align (from the op table) on that roi,
 * aligned or not (unaligned rois kept >= 1 px so max(., 1), which grows a rotated roi about its
 * centre and an axis-aligned one from its corner, does not act). */
static int angle_zero_is_roi_align(const op_desc *op, proof_result *r)
{
    const op_desc *ra = op_find("roi_align");
    if (!ra) { snprintf(r->detail, sizeof r->detail, "roi_align is not in the op table"); return -1; }
    gsl_rng *rng = conform_rng(31);
    r->limit = RELATION_LIMIT;
    const int64_t B = 2, C = 3, H = 11, W = 9, K = 12;
    const double s = 0.5;
    shape_t xs = shape4(B, C, H, W);
    double *x = proof_random_values(B * C * H * W, rng);
    double rot[6 * K], box[5 * K];
    int rc = 0;
    for (int variant = 0; variant < 4 && rc == 0; variant++) {
        int aligned = variant & 1, sr = variant & 2 ? 2 : 0;
        random_rois(rng, rot, K, B, H, W, s);
        for (int64_t k = 0; k < K; k++) {
            double *q = rot + 6 * k, *b = box + 5 * k;
            q[5] = 0;
            b[0] = q[0];
            b[1] = q[1] - q[3] / 2; b[2] = q[2] - q[4] / 2;
            b[3] = q[1] + q[3] / 2; b[4] = q[2] + q[4] / 2;
        }
        char a[4][48];
        snprintf(a[0], 48, "aligned=%s", aligned ? "true" : "false");
        snprintf(a[1], 48, "sampling_ratio=%d", sr);
        const char *attrs[] = {"pooled_h=3", "pooled_w=4", "spatial_scale=0.5", a[0], a[1], NULL};
        shape_t sr_shapes[2] = {xs, shape2(K, 6)}, sa_shapes[2] = {xs, shape2(K, 5)};
        const double *dr[2] = {x, rot}, *da[2] = {x, box};
        double *yr[1] = {0}, *ya[1] = {0};
        int64_t nr, na;
        rc = proof_run(op, &(proof_run_spec){attrs, sr_shapes, dr}, yr, &nr, r);
        if (!rc) rc = proof_run(ra, &(proof_run_spec){attrs, sa_shapes, da}, ya, &na, r);
        if (!rc) proof_note(r, nr == na ? rel_diff(yr[0], ya[0], nr) : INFINITY);
        proof_free_outputs(yr, 1);
        proof_free_outputs(ya, 1);
    }
    free(x);
    gsl_rng_free(rng);
    return rc ? rc : proof_verdict(r, "angle-0 problems against roi_align (aligned x sampling_ratio)");
}

/* clockwise with angle a is counter-clockwise with angle -a */
static int clockwise_is_negated_angle(const op_desc *op, proof_result *r)
{
    gsl_rng *rng = conform_rng(32);
    r->limit = 0; /* theta = -angle exactly, the same computation follows */
    const int64_t B = 1, C = 2, H = 8, W = 10, K = 9;
    shape_t shapes[2] = {shape4(B, C, H, W), shape2(K, 6)};
    double *x = proof_random_values(B * C * H * W, rng);
    double rois[6 * K], neg[6 * K];
    random_rois(rng, rois, K, B, H, W, 1.0);
    memcpy(neg, rois, sizeof rois);
    for (int64_t k = 0; k < K; k++) neg[6 * k + 5] = -rois[6 * k + 5];
    const char *cw[] = {"pooled_h=2", "pooled_w=3", "sampling_ratio=0", "clockwise=true", NULL};
    const char *ccw[] = {"pooled_h=2", "pooled_w=3", "sampling_ratio=0", "clockwise=false", NULL};
    const double *d1[2] = {x, rois}, *d2[2] = {x, neg};
    double *y1[1] = {0}, *y2[1] = {0};
    int64_t n1, n2;
    int rc = proof_run(op, &(proof_run_spec){cw, shapes, d1}, y1, &n1, r);
    if (!rc) rc = proof_run(op, &(proof_run_spec){ccw, shapes, d2}, y2, &n2, r);
    if (!rc) proof_note(r, rel_diff(y1[0], y2[0], n1));
    /* and the angle matters at all: clockwise(a) differs from counter-clockwise(a) */
    double *y3[1] = {0};
    int64_t n3;
    if (!rc) rc = proof_run(op, &(proof_run_spec){ccw, shapes, d1}, y3, &n3, r);
    int distinct = !rc && rel_diff(y1[0], y3[0], n1) > 1e-6;
    proof_free_outputs(y1, 1);
    proof_free_outputs(y2, 1);
    proof_free_outputs(y3, 1);
    free(x);
    gsl_rng_free(rng);
    if (rc) return rc;
    if (!distinct) proof_note(r, INFINITY);
    return proof_verdict(r, "clockwise(a) vs counter-clockwise(-a) (and clockwise(a) != counter-clockwise(a))");
}

/* The same problem in NCHW ([n,6] rois) and NHWC ([6,n] rois) gives the permuted output. */
static int layouts_agree(const op_desc *op, proof_result *r)
{
    gsl_rng *rng = conform_rng(33);
    r->limit = 0; /* the math does not depend on the layout */
    const int64_t B = 2, C = 5, H = 7, W = 9, K = 10, PH = 2, PW = 3;
    double *x = proof_random_values(B * C * H * W, rng), *xl = to_channels_last(x, B, C, H * W);
    double rois[6 * K];
    random_rois(rng, rois, K, B, H, W, 0.5);
    double *rl = field_major(rois, K);
    shape_t s1[2] = {shape4(B, C, H, W), shape2(K, 6)}, s2[2] = {shape4(B, H, W, C), shape2(6, K)};
    const char *a1[] = {"pooled_h=2", "pooled_w=3", "spatial_scale=0.5", "sampling_ratio=2", "data_format=NCHW", NULL};
    const char *a2[] = {"pooled_h=2", "pooled_w=3", "spatial_scale=0.5", "sampling_ratio=2", "data_format=NHWC", NULL};
    const double *d1[2] = {x, rois}, *d2[2] = {xl, rl};
    double *y1[1] = {0}, *y2[1] = {0};
    int64_t n1, n2;
    int rc = proof_run(op, &(proof_run_spec){a1, s1, d1}, y1, &n1, r);
    if (!rc) rc = proof_run(op, &(proof_run_spec){a2, s2, d2}, y2, &n2, r);
    if (!rc) {
        double *perm = to_channels_last(y1[0], K, C, PH * PW);
        proof_note(r, n1 == n2 ? rel_diff(y2[0], perm, n1) : INFINITY);
        free(perm);
    }
    proof_free_outputs(y1, 1);
    proof_free_outputs(y2, 1);
    free(x); free(xl); free(rl);
    gsl_rng_free(rng);
    return rc ? rc : proof_verdict(r, "NHWC outputs against permuted NCHW outputs");
}

/* A quarter turn of the image (F'[i][j] = F[j][W-1-i], H' = W, W' = H) with every roi centre
 * carried along (Cy' = W-1-Cx, Cx' = Cy) and angle + pi/2 gives the same outputs: the rotation
 * turns the right way (a sign error in sin or cos breaks it). Rule A is symmetric under the
 * map, its window bounds included. */
static int quarter_turn(const op_desc *op, proof_result *r)
{
    gsl_rng *rng = conform_rng(34);
    r->limit = RELATION_LIMIT;
    const int64_t B = 2, C = 2, H = 7, W = 11, K = 12;
    double *x = proof_random_values(B * C * H * W, rng), *xt = malloc(sizeof(double) * (size_t)(B * C * H * W));
    for (int64_t bc = 0; bc < B * C; bc++)
        for (int64_t i = 0; i < W; i++)
            for (int64_t j = 0; j < H; j++) xt[(bc * W + i) * H + j] = x[(bc * H + j) * W + (W - 1 - i)];
    double rois[6 * K], turned[6 * K];
    int rc = 0;
    for (int variant = 0; variant < 4 && rc == 0; variant++) {
        int aligned = variant & 1, sr = variant & 2 ? 2 : 0;
        const double s = 0.5, off = aligned ? 0.5 : 0.0;
        random_rois(rng, rois, K, B, H, W, s);
        for (int64_t k = 0; k < K; k++) {
            const double *q = rois + 6 * k;
            double *t = turned + 6 * k;
            t[0] = q[0];
            t[1] = q[2];                                /* Cx' = Cy */
            t[2] = ((double)W - 1 + 2 * off) / s - q[1]; /* Cy' = W-1-Cx */
            t[3] = q[3];
            t[4] = q[4];
            t[5] = q[5] + M_PI / 2;
        }
        char a[2][48];
        snprintf(a[0], 48, "aligned=%s", aligned ? "true" : "false");
        snprintf(a[1], 48, "sampling_ratio=%d", sr);
        const char *attrs[] = {"pooled_h=3", "pooled_w=2", "spatial_scale=0.5", a[0], a[1], NULL};
        shape_t s1[2] = {shape4(B, C, H, W), shape2(K, 6)}, s2[2] = {shape4(B, C, W, H), shape2(K, 6)};
        const double *d1[2] = {x, rois}, *d2[2] = {xt, turned};
        rc = proof_same_output(op, &(proof_run_spec){attrs, s1, d1}, &(proof_run_spec){attrs, s2, d2}, r);
    }
    free(x);
    free(xt);
    gsl_rng_free(rng);
    return rc ? rc : proof_verdict(r, "quarter-turned problems (aligned x sampling_ratio)");
}

const proof_desc roi_align_rotated_proofs[] = {
    {"metamorphic", "angle 0 equals roi_align on the axis-aligned roi of the same centre and size", angle_zero_is_roi_align},
    {"metamorphic", "clockwise(angle) equals counter-clockwise(-angle)", clockwise_is_negated_angle},
    {"metamorphic", "NCHW with rois [n,6] equals NHWC with rois [6,n] up to the permutation", layouts_agree},
    {"metamorphic", "a quarter turn of image and rois (angle + pi/2) leaves the output unchanged", quarter_turn},
    {"golden", "mmcv RoIAlignRotated test vectors (ops.md section 9)", proof_golden},
    {NULL, NULL, NULL},
};

/* ---- roi_align_rotated_grad ----------------------------------------------------------------- */

typedef struct {
    int aligned, sr, clockwise, nhwc;
    int64_t B, C, H, W, K, PH, PW;
    double s;
} family_case;

static const family_case family_cases[] = {
    {1, 2, 0, 0, 2, 3, 9, 11, 7, 3, 2, 0.5},
    {0, 0, 1, 0, 1, 2, 12, 8, 6, 2, 4, 0.25},
    {1, 0, 0, 1, 2, 2, 7, 7, 9, 3, 3, 1.0},
    {0, 1, 1, 1, 1, 4, 5, 13, 5, 1, 5, 0.5},
};

/* The forward (from the table) and the backward under proof on random problem i. */
static int make_pair(const op_desc *bwd, size_t i, unsigned long seed, proof_pair *pr, proof_result *r)
{
    const family_case *fc = &family_cases[i];
    char a[7][64];
    snprintf(a[0], 64, "aligned=%s", fc->aligned ? "true" : "false");
    snprintf(a[1], 64, "sampling_ratio=%d", fc->sr);
    snprintf(a[2], 64, "spatial_scale=%.17g", fc->s);
    snprintf(a[3], 64, "pooled_h=%lld", (long long)fc->PH);
    snprintf(a[4], 64, "pooled_w=%lld", (long long)fc->PW);
    snprintf(a[5], 64, "clockwise=%s", fc->clockwise ? "true" : "false");
    fmt_attr(a[6], 64, "data_format", fc->nhwc ? "NHWC" : "NCHW");
    const char *fa[] = {a[0], a[1], a[2], a[3], a[4], a[5], a[6], NULL};
    shape_t xs = fc->nhwc ? shape4(fc->B, fc->H, fc->W, fc->C) : shape4(fc->B, fc->C, fc->H, fc->W);
    shape_t rs = fc->nhwc ? shape2(6, fc->K) : shape2(fc->K, 6);
    shape_t gs = fc->nhwc ? shape4(fc->K, fc->PH, fc->PW, fc->C) : shape4(fc->K, fc->C, fc->PH, fc->PW);
    shape_t fs[2] = {xs, rs}, bs[2] = {gs, rs};
    memset(pr, 0, sizeof *pr);
    if (proof_problem(&op_roi_align_rotated, fa, fs, "{\"rois\": {\"outside_frac\": 0.3, \"size\": [1, 40]}}", seed,
                      &pr->fwd, r))
        return -1;
    char ys[96];
    snprintf(ys, sizeof ys, "y_grad_shape=%lld,%lld,%lld,%lld", (long long)xs.dims[0], (long long)xs.dims[1],
             (long long)xs.dims[2], (long long)xs.dims[3]);
    const char *ba[] = {a[0], a[1], a[2], a[3], a[4], a[5], a[6], ys, NULL};
    return proof_pair_finish(pr, bwd, ba, bs, seed + 1, 1, 1, 1, r); /* the same rois */
}

#define N_CASES (sizeof family_cases / sizeof family_cases[0])

static int adjoint(const op_desc *op, proof_result *r)
{
    r->limit = ADJOINT_LIMIT;
    return proof_adjoint_pairs(op, make_pair, N_CASES, 40,
                               "random problems (both layouts), |<g,Fx> - <F'g,x>| / sum of |products|", r);
}

static int finite_difference(const op_desc *op, proof_result *r)
{
    /* central differences of a linear function with h = 1e-2 are exact but for rounding,
       about 1e-16 * |loss| / h ~ 1e-13 of the gradient scale here; every 5th element, so
       touched and untouched pixels are both probed */
    r->limit = 1e-10;
    const proof_fd_plan plan = {&op_roi_align_rotated, 0, 5, 1e-2, 1e-300, 1,
                                "elements, max(|fd - grad|, GSL error estimate) / gradient scale"};
    return proof_fd_pairs(op, make_pair, N_CASES, 50, &plan, r);
}

/* The grad in NHWC equals the permuted grad in NCHW; clockwise(a) equals counter-clockwise(-a). */
static int grad_relations(const op_desc *op, proof_result *r)
{
    gsl_rng *rng = conform_rng(36);
    r->limit = 0; /* both are the same computation on permuted data / an exactly negated angle */
    const int64_t B = 2, C = 3, H = 8, W = 6, K = 9, PH = 3, PW = 2;
    double *g = proof_random_values(K * C * PH * PW, rng), *gl = to_channels_last(g, K, C, PH * PW);
    double rois[6 * K], neg[6 * K];
    random_rois(rng, rois, K, B, H, W, 1.0);
    memcpy(neg, rois, sizeof rois);
    for (int64_t k = 0; k < K; k++) neg[6 * k + 5] = -rois[6 * k + 5];
    double *rl = field_major(rois, K);
    shape_t s1[2] = {shape4(K, C, PH, PW), shape2(K, 6)}, s2[2] = {shape4(K, PH, PW, C), shape2(6, K)};
    const char *a1[] = {"pooled_h=3", "pooled_w=2", "y_grad_shape=2,3,8,6", "clockwise=true", NULL};
    const char *a2[] = {"pooled_h=3", "pooled_w=2", "y_grad_shape=2,8,6,3", "clockwise=true", "data_format=NHWC", NULL};
    const char *a3[] = {"pooled_h=3", "pooled_w=2", "y_grad_shape=2,3,8,6", "clockwise=false", NULL};
    const double *d1[2] = {g, rois}, *d2[2] = {gl, rl}, *d3[2] = {g, neg};
    double *y1[1] = {0}, *y2[1] = {0}, *y3[1] = {0};
    int64_t n1, n2, n3;
    int rc = proof_run(op, &(proof_run_spec){a1, s1, d1}, y1, &n1, r);
    if (!rc) rc = proof_run(op, &(proof_run_spec){a2, s2, d2}, y2, &n2, r);
    if (!rc) rc = proof_run(op, &(proof_run_spec){a3, s1, d3}, y3, &n3, r);
    if (!rc) {
        double *perm = to_channels_last(y1[0], B, C, H * W);
        proof_note(r, n1 == n2 ? rel_diff(y2[0], perm, n1) : INFINITY);
        proof_note(r, rel_diff(y3[0], y1[0], n1));
        free(perm);
    }
    proof_free_outputs(y1, 1);
    proof_free_outputs(y2, 1);
    proof_free_outputs(y3, 1);
    free(g); free(gl); free(rl);
    gsl_rng_free(rng);
    return rc ? rc : proof_verdict(r, "NHWC vs permuted NCHW, clockwise(a) vs counter-clockwise(-a)");
}

const proof_desc roi_align_rotated_grad_proofs[] = {
    {"adjoint", "<g, roi_align_rotated(x)> = <roi_align_rotated_grad(g), x>", adjoint},
    {"finite difference", "central differences of <g, roi_align_rotated(x)> in x equal y_grad", finite_difference},
    {"metamorphic", "NHWC = permuted NCHW, and clockwise(angle) = counter-clockwise(-angle)", grad_relations},
    {"golden", "mmcv RoIAlignRotated autograd vectors (ops.md section 9)", proof_golden},
    {NULL, NULL, NULL},
};
