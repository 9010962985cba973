/* Proofs of roi_end_mode (the Ascend ROIAlign attribute) in the roi_align and
 * roi_align_v2_backward references: each mode against a problem it must equal. Both ops take
 * (values, rois [K, 5]) inputs, so one set of relations serves both (see verify.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fill.h"
#include "verify.h"

/* both sides compute the same corners: (x2 + 1) * s is the same double product on either side;
   aligned = mode 2 = mode 3 are the same code path; so the outputs agree to rounding at most */
#define RELATION_LIMIT 1e-12

enum { B_ = 2, C_ = 2, H_ = 9, W_ = 11, K_ = 12, PH_ = 2, PW_ = 3 };

static int is_forward(const op_desc *op) { return op_attr_index(op, "pooled_h") >= 0; }

/* One problem of either op on given rois (values drawn from seed): attrs end with `mode_attr`
 * ("roi_end_mode=1", "aligned=true", ...). Output 0 into *y. */
static int solve(const op_desc *op, const char *mode_attr, int sr, const double *rois, unsigned long seed, double **y,
                 int64_t *n, proof_result *r)
{
    char a[6][64];
    const int fwd = is_forward(op);
    snprintf(a[0], 64, "%s=%d", fwd ? "pooled_h" : "pooled_height", PH_);
    snprintf(a[1], 64, "%s=%d", fwd ? "pooled_w" : "pooled_width", PW_);
    snprintf(a[2], 64, "sampling_ratio=%d", sr);
    snprintf(a[3], 64, "input_shape=%d,%d,%d,%d", B_, C_, H_, W_);
    const char *attrs[] = {a[0], a[1], a[2], "spatial_scale=0.5", mode_attr, fwd ? NULL : a[3], NULL};
    shape_t shapes[2] = {fwd ? shape4(B_, C_, H_, W_) : shape4(K_, C_, PH_, PW_), shape2(K_, 5)};
    problem_t p;
    if (proof_problem(op, attrs, shapes, NULL, seed, &p, r)) return -1;
    memcpy(p.in[1].data, rois, sizeof(double) * 5 * K_);
    int rc = proof_reference(op, &p, y);
    *n = shape_numel(&p.out_shape[0]);
    problem_free(&p);
    return rc;
}

/* Rois of every kind the modes treat differently: below one feature pixel (the clamp of modes
 * 0 and 1), degenerate, inverted, partly outside; batch 0 or 1; float32-representable. */
static void draw_rois(gsl_rng *rng, double *rois)
{
    for (int k = 0; k < K_; k++) {
        double *q = rois + 5 * k;
        const double cx = fill_uniform(rng, -4, 2.0 * W_ + 4), cy = fill_uniform(rng, -4, 2.0 * H_ + 4);
        const double w = k % 3 == 0 ? fill_uniform(rng, 0, 1.5) : fill_uniform(rng, 1.5, 16);
        const double h = k % 4 == 0 ? fill_uniform(rng, 0, 1.5) : fill_uniform(rng, 1.5, 16);
        q[0] = (double)(k % B_);
        q[1] = (double)(float)(cx - w / 2); q[3] = (double)(float)(cx + w / 2);
        q[2] = (double)(float)(cy - h / 2); q[4] = (double)(float)(cy + h / 2);
        if (k == 5) q[3] = q[1];                                         /* degenerate */
        if (k == 7) { const double t = q[2]; q[2] = q[4]; q[4] = t; }   /* inverted */
    }
}

/* output of (mode_a, rois_a) against (mode_b, rois_b) over sampling ratios 0 and 2 */
static int compare_modes(const op_desc *op, const char *mode_a, const double *rois_a, const char *mode_b,
                         const double *rois_b, proof_result *r)
{
    for (int sr = 0; sr <= 2; sr += 2) {
        double *ya[1] = {0}, *yb[1] = {0};
        int64_t na = 0, nb = 0;
        int rc = solve(op, mode_a, sr, rois_a, 31, ya, &na, r);
        if (!rc) rc = solve(op, mode_b, sr, rois_b, 31, yb, &nb, r);
        if (!rc) proof_note(r, rel_diff(ya[0], yb[0], na));
        proof_free_outputs(ya, 1);
        proof_free_outputs(yb, 1);
        if (rc) return rc;
    }
    return 0;
}

/* roi_end_mode 1 is mode 0 on rois whose ends moved one image pixel out (x2 + 1, y2 + 1): the
 * max(., 1) clamp then acts on the same extent, so rois below a pixel are covered too. */
int roi_end_mode_end_pixel(const op_desc *op, proof_result *r)
{
    gsl_rng *rng = conform_rng(41);
    r->limit = RELATION_LIMIT;
    double rois[5 * K_], moved[5 * K_];
    int rc = 0;
    for (int round = 0; round < 3 && rc == 0; round++) {
        draw_rois(rng, rois);
        memcpy(moved, rois, sizeof rois);
        for (int k = 0; k < K_; k++) { moved[5 * k + 3] += 1; moved[5 * k + 4] += 1; }
        rc = compare_modes(op, "roi_end_mode=1", rois, "roi_end_mode=0", moved, r);
    }
    gsl_rng_free(rng);
    return rc ? rc : proof_verdict(r, "mode 1 vs mode 0 on rois with ends + 1 (sampling_ratio 0 and 2)");
}

/* roi_end_mode 0 = aligned false, 2 = aligned true, 3 = 2 (the Ascend kernels' reading,
 * docs/ops/roi_align.md), on rois small enough that a max(., 1) clamp would show. */
int roi_end_mode_identities(const op_desc *op, proof_result *r)
{
    gsl_rng *rng = conform_rng(43);
    r->limit = RELATION_LIMIT;
    double rois[5 * K_];
    static const char *const pairs[][2] = {{"roi_end_mode=0", "aligned=false"},
                                           {"roi_end_mode=2", "aligned=true"},
                                           {"roi_end_mode=3", "roi_end_mode=2"}};
    int rc = 0;
    for (int round = 0; round < 2 && rc == 0; round++) {
        draw_rois(rng, rois);
        for (int i = 0; i < 3 && rc == 0; i++) rc = compare_modes(op, pairs[i][0], rois, pairs[i][1], rois, r);
    }
    gsl_rng_free(rng);
    return rc ? rc : proof_verdict(r, "mode 0 = unaligned, 2 = aligned, 3 = 2 (sampling_ratio 0 and 2)");
}
