/* roi_end_mode (the Ascend ROIAlign attribute) of roi_align and roi_align_v2_backward: the
 * kernels' end_plus_one switch against a hand-checked vector, the attribute's validation, and
 * proofs that catch a reference reading a mode wrongly. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conform_opt.h"
#include "conform_ref.h"
#include "verify.h"


/* ---- the kernels: mode 1 on the torch_npu document's problem, by hand ------------------------ */

/* F[y][x] = 6y + x + 1 on 6 x 6, roi (-2, -2, 22, 22) at scale 0.25, 3 x 3 bins of 2 x 2 samples:
 * with the end + 1 the roi spans [-0.5, 5.75], samples at (1, 51, ..., 251) / 48 per axis, the last
 * read as 5 (beyond W - 1); bin means of x (and y) 13/24, 2.625, 4.59375. */
Test(roi_end_mode, end_plus_one_forward_by_hand)
{
    double x[36], y[9];
    const double roi[5] = {0, -2, -2, 22, 22}, mean[3] = {13.0 / 24, 2.625, 4.59375};
    for (int i = 0; i < 36; i++) x[i] = i + 1;
    ref_roi_align_params p = {1, 1, 6, 6, 1, 3, 3, 0.25, 2, 0, 1};
    f64_roi_align_fwd__ref(&p, x, roi, y, NULL);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            const double want = 6 * mean[i] + mean[j] + 1;
            cr_assert(fabs(y[i * 3 + j] - want) <= 1e-14 * want, "y[%d][%d] = %.17g, want %.17g", i, j, y[i * 3 + j], want);
        }
    /* the float32 path, on every ISA the CPU has, within a few float32 roundings of it */
    const float xf[36] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
                          19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36};
    const float rf[5] = {0, -2, -2, 22, 22};
    f32_roi_align_params f = {1, 1, 6, 6, 1, 3, 3, 0.25f, 2, 0, 1};
    for (int isa = CONFORM_ISA_SCALAR; isa < CONFORM_ISA_COUNT; isa++) {
        if (!conform_isa_available((conform_isa)isa)) continue;
        float yo[9];
        conform_exec ex = {(conform_isa)isa, 1};
        cr_assert_eq(f32_roi_align_fwd(&f, xf, rf, yo, &ex), CONFORM_OK);
        for (int i = 0; i < 9; i++) /* 1e-5: tens of float32 roundings of values below 40 */
            cr_assert(fabs(yo[i] - y[i]) <= 1e-5 * fabs(y[i]), "%s y[%d] = %.9g, want %.17g",
                      conform_isa_name((conform_isa)isa), i, yo[i], y[i]);
    }
}

/* the gradient of the sum: per-axis weights (47, 46, 46, 46, 46, 57) / 48, over 4 samples a bin */
Test(roi_end_mode, end_plus_one_backward_by_hand)
{
    double g[9], gx[36];
    const double roi[5] = {0, -2, -2, 22, 22}, w[6] = {47, 46, 46, 46, 46, 57};
    for (int i = 0; i < 9; i++) g[i] = 1;
    ref_roi_align_params p = {1, 1, 6, 6, 1, 3, 3, 0.25, 2, 0, 1};
    f64_roi_align_bwd__ref(&p, g, roi, gx, NULL);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            const double want = w[i] * w[j] / (48.0 * 48.0 * 4.0);
            cr_assert(fabs(gx[i * 6 + j] - want) <= 1e-15, "gx[%d][%d] = %.17g, want %.17g", i, j, gx[i * 6 + j], want);
        }
}

/* ---- the attribute: range, contradiction with aligned, defaults ------------------------------ */

/* NULL when roi_align accepts attrs on a [1,1,6,6] input with 2 rois; else the error */
static const char *validate(const op_desc *op, const char *const *attrs, char *err, size_t len)
{
    problem_t p;
    problem_init(&p, op);
    int rc = 0;
    for (int i = 0; attrs[i] && !rc; i++) {
        char name[64];
        const char *eq = strchr(attrs[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - attrs[i]), attrs[i]);
        rc = problem_set_attr_text(&p, name, eq + 1, err, len);
    }
    if (!rc) rc = problem_finish_attrs(&p, err, len);
    const int fwd = op == op_find("roi_align");
    const int64_t x[4] = {1, 1, 6, 6}, g[4] = {2, 1, 2, 2}, r[2] = {2, 5};
    p.in[0].shape = shape_make(4, fwd ? x : g);
    p.in[1].shape = shape_make(2, r);
    if (!rc) rc = op->validate(&p, err, len);
    problem_free(&p);
    return rc ? err : NULL;
}

Test(roi_end_mode, out_of_range_and_contradictions_are_refused_by_name)
{
    char err[CONFORM_ERR_LEN];
    const char *five[] = {"pooled_h=2", "pooled_w=2", "roi_end_mode=5", NULL};
    const char *mode1_aligned[] = {"pooled_h=2", "pooled_w=2", "aligned=true", "roi_end_mode=1", NULL};
    const char *mode3_unaligned[] = {"pooled_h=2", "pooled_w=2", "aligned=false", "roi_end_mode=3", NULL};
    cr_assert_str_eq(validate(op_find("roi_align"), five, err, sizeof err),
                     "roi_align: roi_end_mode = 5: must be 0, 1, 2 or 3 (the Ascend ROIAlign modes), or -1 for not given");
    cr_assert_not_null(strstr(validate(op_find("roi_align"), mode1_aligned, err, sizeof err),
                              "roi_align: roi_end_mode = 1 contradicts aligned = true"));
    cr_assert_not_null(strstr(validate(op_find("roi_align"), mode3_unaligned, err, sizeof err),
                              "roi_end_mode = 3 contradicts aligned = false"));
    const char *bwd_bad[] = {"pooled_height=2", "pooled_width=2", "input_shape=1,1,6,6", "roi_end_mode=-3", NULL};
    cr_assert_not_null(strstr(validate(op_find("roi_align_v2_backward"), bwd_bad, err, sizeof err),
                              "roi_align_v2_backward: roi_end_mode = -3"));
}

Test(roi_end_mode, a_mode_alone_or_agreeing_with_aligned_is_accepted)
{
    char err[CONFORM_ERR_LEN];
    for (int mode = -1; mode <= 3; mode++) {
        char m[32];
        snprintf(m, sizeof m, "roi_end_mode=%d", mode);
        const char *alone[] = {"pooled_h=2", "pooled_w=2", m, NULL}; /* aligned's default true is not given */
        const char *agree[] = {"pooled_h=2", "pooled_w=2", m, mode >= 2 ? "aligned=true" : "aligned=false", NULL};
        const char *bwd[] = {"pooled_height=2", "pooled_width=2", "input_shape=1,1,6,6", m, NULL};
        cr_assert_null(validate(op_find("roi_align"), alone, err, sizeof err), "mode %d alone: %s", mode, err);
        cr_assert_null(validate(op_find("roi_align"), agree, err, sizeof err), "mode %d with aligned: %s", mode, err);
        cr_assert_null(validate(op_find("roi_align_v2_backward"), bwd, err, sizeof err), "backward mode %d: %s", mode, err);
    }
}

Test(roi_end_mode, defaults_are_told_from_given_attributes)
{
    char err[CONFORM_ERR_LEN];
    problem_t p;
    problem_init(&p, op_find("roi_align"));
    cr_assert_eq(problem_set_attr_text(&p, "pooled_h", "2", err, sizeof err), 0);
    cr_assert_eq(problem_set_attr_text(&p, "pooled_w", "2", err, sizeof err), 0);
    cr_assert_eq(problem_finish_attrs(&p, err, sizeof err), 0);
    cr_assert_eq(p.attr_set[op_attr_index(op_find("roi_align"), "pooled_h")], 1);
    cr_assert_eq(p.attr_set[op_attr_index(op_find("roi_align"), "aligned")], 2);
    cr_assert_eq(problem_int(&p, "roi_end_mode"), -1);
    problem_free(&p);
}

/* ---- the proofs catch a reference that reads a mode wrongly --------------------------------- */

/* the reference with roi_end_mode `from` read as `to` */
static void read_mode_as(const op_desc *real, const problem_t *p, double **out, ref_bounds *b, int from, int to)
{
    problem_t q = *p;
    const int i = op_attr_index(p->op, "roi_end_mode");
    if (q.attr[i].i == from) q.attr[i].i = to;
    real->reference(&q, out, b);
}

static void fwd_mode1_as_0(const problem_t *p, double **out, ref_bounds *b) { read_mode_as(op_find("roi_align"), p, out, b, 1, 0); }
static void fwd_mode3_as_1(const problem_t *p, double **out, ref_bounds *b) { read_mode_as(op_find("roi_align"), p, out, b, 3, 1); }
static void bwd_mode1_as_0(const problem_t *p, double **out, ref_bounds *b)
{
    read_mode_as(op_find("roi_align_v2_backward"), p, out, b, 1, 0);
}
static void bwd_mode3_as_1(const problem_t *p, double **out, ref_bounds *b)
{
    read_mode_as(op_find("roi_align_v2_backward"), p, out, b, 3, 1);
}

Test(roi_end_mode, a_forgotten_end_pixel_fails_the_relations_and_the_hand_vector)
{
    op_desc broken = *op_find("roi_align");
    broken.reference = fwd_mode1_as_0;
    int ran;
    cr_assert_gt(verify_kind(&broken, "metamorphic", &ran), 0);
    cr_assert_gt(verify_kind(&broken, "golden", &ran), 0);
    op_desc bwd = *op_find("roi_align_v2_backward");
    bwd.reference = bwd_mode1_as_0;
    cr_assert_gt(verify_kind(&bwd, "adjoint", &ran), 0);
    cr_assert_gt(verify_kind(&bwd, "metamorphic", &ran), 0);
    cr_assert_gt(verify_kind(&bwd, "golden", &ran), 0);
}

/* MMDetection v0.6's rounding (end + 1, no shift), the other reading of mode 3, is refuted by
 * torch_npu's own test vectors and by every Ascend kernel */
Test(roi_end_mode, mode3_read_as_end_plus_one_fails_the_identities_and_torch_npu_vectors)
{
    op_desc broken = *op_find("roi_align");
    broken.reference = fwd_mode3_as_1;
    int ran;
    cr_assert_gt(verify_kind(&broken, "metamorphic", &ran), 0);
    cr_assert_gt(verify_kind(&broken, "golden", &ran), 0);
    op_desc bwd = *op_find("roi_align_v2_backward");
    bwd.reference = bwd_mode3_as_1;
    cr_assert_gt(verify_kind(&bwd, "adjoint", &ran), 0);
    cr_assert_gt(verify_kind(&bwd, "golden", &ran), 0);
}
