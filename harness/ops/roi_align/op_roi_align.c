/* roi_align (spec 1) and roi_align_v2_backward (spec 2): problem description, input filling,
 * reference and optimized calls, tolerance model. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fill.h"
#include "op.h"
#include "plain/conform_plain.h"

extern const proof_desc roi_align_proofs[], roi_align_bwd_proofs[];
extern const hunt_desc hunt_roi_align, hunt_roi_align_bwd; /* hunt_<family>.c */

/* ---- tolerance model (both ops, both directions) ---------------------------------------- */

/* the derivation of both constants: docs/ops/roi_align.md, "Tolerance" */
static const tol_model roi_align_tol = {
    /* 3 in the weight, 1 weight*value, 2 the 1/count scale */
    .k_val = 6,
    .k_val_why = "per term: 3 roundings in the weight, 1 in weight*value, 2 in the 1/count scale; plus 1 per "
                 "term summed (docs/ops/roi_align.md)",
    /* 13 roundings in a sample position at first order, gamma_13 < 14u */
    .k_pos = 14,
    .k_pos_why = "13 float32 roundings in a sample position, each at most u times its magnitude, and "
                 "gamma_13 = 13u/(1-13u) < 14u (docs/ops/roi_align.md)",
};

static void params(const problem_t *p, ref_roi_align_params *r);

/* ---- the roi generator ------------------------------------------------------------------- */

/* One axis of a roi whose samples land exactly on -1 and on n (first and last sample), when the
 * sampling ratio is fixed; returns (lo, hi) in image coordinates. */
static void edge_axis(double n, int64_t pooled, const ref_roi_align_params *r, double s, double *lo, double *hi)
{
    const double off = r->aligned ? 0.5 : 0.0, plus = r->end_plus_one ? 1.0 : 0.0;
    double start, end;
    fill_edge_span(n, pooled, r->sampling_ratio, &start, &end);
    *lo = round_f32((start + off) / s);
    *hi = round_f32((end + off) / s - plus);
}

/* Fills rois [K, 5] = (batch, x1, y1, x2, y2), input index of p; g may be NULL (defaults). */
static int fill_rois(problem_t *p, int index, const cJSON *g, gsl_rng *rng, char *err, size_t errlen)
{
    ref_roi_align_params params_of_p, *r = &params_of_p;
    params(p, r);
    tensor_t *rois = &p->in[index];
    const cJSON *data = g ? cJSON_GetObjectItemCaseSensitive(g, "data") : NULL;
    if (data) return fill_from_json(rois->data, tensor_numel(rois), data, "rois", err, errlen);
    if (rois->shape.rank != 2 || rois->shape.dims[1] != 5) return 0; /* validation names the problem */
    const int64_t B = r->B;
    const double s = r->spatial_scale > 0 ? r->spatial_scale : 1.0;
    double img_h, img_w, size_lo, size_hi;
    fill_roi_frame(g, r->H, r->W, s, &img_h, &img_w, &size_lo, &size_hi);
    double outside = json_number(g, "outside_frac", 0.0), degenerate = json_number(g, "degenerate_frac", 0.0);
    double inverted = json_number(g, "inverted_frac", 0.0), oob = json_number(g, "oob_batch_frac", 0.0);
    double fracb = json_number(g, "frac_batch_frac", 0.0), nanf = json_number(g, "nan_frac", 0.0);
    double edge = json_number(g, "edge_frac", 0.0), huge, huge_lo, huge_hi;
    if (fill_huge_range(g, &huge, &huge_lo, &huge_hi, "rois", err, errlen)) return -1;
    int64_t K = rois->shape.dims[0];
    for (int64_t k = 0; k < K; k++) {
        double *q = rois->data + 5 * k;
        double b = B > 0 ? (double)gsl_rng_uniform_int(rng, (unsigned long)B) : 0.0;
        if (fill_pick(rng, oob)) b = gsl_rng_uniform(rng) < 0.5 ? -1.0 : (double)B;
        else if (fill_pick(rng, fracb)) b += 0.5;
        q[0] = b;
        double bw = fill_uniform(rng, size_lo, size_hi), bh = fill_uniform(rng, size_lo, size_hi);
        double lo = fill_pick(rng, outside) ? -0.5 : 0.0, hi = lo < 0 ? 1.5 : 1.0;
        double cx = fill_uniform(rng, lo * img_w, hi * img_w), cy = fill_uniform(rng, lo * img_h, hi * img_h);
        q[1] = round_f32(cx - bw / 2);
        q[2] = round_f32(cy - bh / 2);
        q[3] = round_f32(cx + bw / 2);
        q[4] = round_f32(cy + bh / 2);
        if (fill_pick(rng, degenerate)) { q[3] = q[1]; if (gsl_rng_uniform(rng) < 0.5) q[4] = q[2]; }
        else if (fill_pick(rng, inverted)) { double t = q[1]; q[1] = q[3]; q[3] = t; }
        if (fill_pick(rng, edge)) {
            edge_axis((double)r->H, r->pooled_h, r, s, &q[2], &q[4]);
            edge_axis((double)r->W, r->pooled_w, r, s, &q[1], &q[3]);
        }
        for (int i = 1; i <= 4; i++) /* a corner far out (either sign): the roi may still span the plane */
            if (fill_pick(rng, huge)) q[i] = (gsl_rng_uniform(rng) < 0.5 ? -1 : 1) * fill_log_magnitude(rng, huge_lo, huge_hi);
        if (fill_pick(rng, nanf)) q[1 + gsl_rng_uniform_int(rng, 4)] = NAN;
    }
    return 0;
}

/* ---- shared checks ------------------------------------------------------------------------ */

static int check_common_attrs(const char *op, const char *ph_name, int64_t PH, const char *pw_name, int64_t PW,
                              double s, int64_t sr, char *err, size_t errlen)
{
    if (PH < 1) FAIL("%s: %s = %lld: must be >= 1", op, ph_name, (long long)PH);
    if (PW < 1) FAIL("%s: %s = %lld: must be >= 1", op, pw_name, (long long)PW);
    if (PH > 4096 || PW > 4096) FAIL("%s: %s x %s = %lld x %lld: the harness accepts at most 4096", op, ph_name,
                                     pw_name, (long long)PH, (long long)PW);
    if (!(s > 0) || !isfinite(s)) FAIL("%s: spatial_scale = %g: must be > 0 and finite", op, s);
    if (sr < 0) FAIL("%s: sampling_ratio = %lld: must be >= 0", op, (long long)sr);
    if (sr > 1024) FAIL("%s: sampling_ratio = %lld: the harness accepts at most 1024", op, (long long)sr);
    return 0;
}

/* The reference loops over every sample: rois that would need absurd numbers of them (adaptive
 * counts of huge rois) are refused up front, against the work budget. */
static int check_adaptive_samples(const char *op, const tensor_t *rois, double s, int64_t PH, int64_t PW, int64_t C,
                                  int64_t sr, int aligned, int end_plus_one, char *err, size_t errlen)
{
    if (!rois->data) return 0; /* no data yet: shapes-only check of a suite */
    double off = aligned ? 0.5 : 0, plus = end_plus_one ? 1.0 : 0.0, total = 0;
    for (int64_t k = 0; k < rois->shape.dims[0]; k++) {
        const double *r = rois->data + 5 * k;
        double rw = ((r[3] + plus) * s - off) - (r[1] * s - off), rh = ((r[4] + plus) * s - off) - (r[2] * s - off);
        if (!aligned) { if (rw < 1) rw = 1; if (rh < 1) rh = 1; }
        double gh = sr > 0 ? (double)sr : ceil(rh / (double)PH), gw = sr > 0 ? (double)sr : ceil(rw / (double)PW);
        if (isfinite(gh) && isfinite(gw) && gh > 0 && gw > 0) total += gh * gw;
    }
    return problem_check_samples(op, total * (double)PH * (double)PW * (double)(C > 0 ? C : 1), err, errlen);
}

/* ---- roi_end_mode ---------------------------------------------------------------------------- */

#define END_MODE_DOC "Ascend ROIAlign mode: 0 unaligned; 1 unaligned, ends + 1 pixel; 2 aligned; 3 computed " \
                     "as 2 (docs/ops/roi_align.md); -1 = not given: aligned decides"

/* The two kernel switches a roi_end_mode stands for; -1 leaves aligned as given. Mode 3 is mode 2:
 * the TBE ROIAlign / ROIAlignGrad kernels, ops-cv's Ascend 950 kernels and torch_npu's own test
 * of ROIAlign(aligned=True) (which passes mode 3) all compute it so (docs/ops/roi_align.md). */
static void apply_end_mode(int64_t mode, ref_roi_align_params *r)
{
    r->end_plus_one = mode == 1;
    if (mode >= 0) r->aligned = mode >= 2;
}

/* roi_end_mode in -1..3, and not contradicting an aligned that was given as well */
static int check_end_mode(const problem_t *p, int mode_at, int aligned_at, char *err, size_t errlen)
{
    const char *op = p->op->name;
    const int64_t mode = p->attr[mode_at].i;
    if (mode < -1 || mode > 3)
        FAIL("%s: roi_end_mode = %lld: must be 0, 1, 2 or 3 (the Ascend ROIAlign modes), or -1 for not given",
             op, (long long)mode);
    const int aligned = (int)p->attr[aligned_at].i;
    if (mode >= 0 && p->attr_set[aligned_at] == 1 && aligned != (mode >= 2))
        FAIL("%s: roi_end_mode = %lld contradicts aligned = %s: modes 0 and 1 are unaligned, 2 and 3 aligned; "
             "give one of the two", op, (long long)mode, aligned ? "true" : "false");
    return 0;
}

/* ---- both ops ---------------------------------------------------------------------------- */

/* Both ops read input 0 (the feature map or its gradient) and input 1 (the rois) alike; the
 * backward's attributes are the forward's behind input_shape. */
enum { R_DATA, R_ROIS };
enum { RA_PH, RA_PW, RA_SCALE, RA_SR, RA_ALIGNED, RA_END_MODE };

/* by name, not address: tests judge copies of a descriptor with a broken reference */
static int backward(const problem_t *p) { return !strcmp(p->op->name, "roi_align_v2_backward"); }

static void params(const problem_t *p, ref_roi_align_params *r)
{
    const int bwd = backward(p);
    const attr_value *a = p->attr + bwd, *s = &p->attr[0]; /* s: the backward's input_shape */
    int64_t d[4];
    for (int i = 0; i < 4; i++) d[i] = !bwd ? p->in[R_DATA].shape.dims[i] : s->n > i ? s->list[i] : 0;
    r->B = d[0]; r->C = d[1]; r->H = d[2]; r->W = d[3];
    r->K = p->in[R_ROIS].shape.rank > 0 ? p->in[R_ROIS].shape.dims[0] : 0;
    r->pooled_h = a[RA_PH].i;
    r->pooled_w = a[RA_PW].i;
    r->spatial_scale = a[RA_SCALE].f;
    r->sampling_ratio = a[RA_SR].i;
    r->aligned = (int)a[RA_ALIGNED].i;
    apply_end_mode(a[RA_END_MODE].i, r);
}

static void reference(const problem_t *p, double **out, ref_bounds *bounds)
{
    ref_roi_align_params r;
    params(p, &r);
    (backward(p) ? f64_roi_align_bwd__ref : f64_roi_align_fwd__ref)(&r, p->in[R_DATA].data, p->in[R_ROIS].data,
                                                                    out[0], bounds);
}

/* the plain golden (reference/plain/roi_family.c), held bitwise equal to reference by make check-golden */
static void plain(const problem_t *p, double **out, ref_bounds *bounds)
{
    ref_roi_align_params r;
    params(p, &r);
    (backward(p) ? f64_roi_align_bwd__plain : f64_roi_align_fwd__plain)(&r, p->in[R_DATA].data, p->in[R_ROIS].data, out[0], bounds);
}

/* the forward's reachable range (conform_range.h): the mean of its samples' tap ranges */
static int range(const problem_t *p, int o, ref_range *rg)
{
    ref_roi_align_params r;
    if (backward(p) || o != 0) return -1;
    params(p, &r);
    f64_roi_align_fwd__range(&r, p->in[R_DATA].data, p->in[R_ROIS].data, rg);
    return 0;
}

static int optimized(const problem_t *p, const float **in, float **out, const conform_exec *ex)
{
    ref_roi_align_params r;
    params(p, &r);
    const f32_roi_align_params f = {
        .B = r.B, .C = r.C, .H = r.H, .W = r.W, .K = r.K, .pooled_h = r.pooled_h, .pooled_w = r.pooled_w,
        .spatial_scale = (float)r.spatial_scale, .sampling_ratio = r.sampling_ratio, .aligned = r.aligned,
        .end_plus_one = r.end_plus_one,
    };
    return (backward(p) ? f32_roi_align_bwd : f32_roi_align_fwd)(&f, in[R_DATA], in[R_ROIS], out[0], ex);
}

/* what both ops share: the kernels and the tolerance model */
#define ROI_ALIGN_FAMILY .reference = reference, .plain = plain, .optimized = optimized, .tol = &roi_align_tol

/* ---- roi_align --------------------------------------------------------------------------- */

static const tensor_spec roi_align_inputs[] = {
    {"input", "[B, C, H, W] feature map"},
    {"rois", "[K, 5] (batch_index, x1, y1, x2, y2) in image coordinates"},
};
static const tensor_spec roi_align_outputs[] = {{"output", "[K, C, pooled_h, pooled_w]"}};
static const attr_spec roi_align_attrs[] = {
    {"pooled_h", ATTR_INT, NULL, "output height, >= 1"},
    {"pooled_w", ATTR_INT, NULL, "output width, >= 1"},
    {"spatial_scale", ATTR_FLOAT, "1.0", "image-to-feature scale, > 0"},
    {"sampling_ratio", ATTR_INT, "0", "samples per bin per axis, 0 = adaptive"},
    {"aligned", ATTR_BOOL, "true", "half-pixel offset (torch_npu's default true)"},
    {"roi_end_mode", ATTR_INT, "-1", END_MODE_DOC},
};

static int roi_align_validate(problem_t *p, char *err, size_t errlen)
{
    const char *op = p->op->name;
    char buf[128];
    const shape_t *x = &p->in[R_DATA].shape, *rois = &p->in[R_ROIS].shape;
    if (x->rank != 4) FAIL("%s: input must have shape [B,C,H,W], got %s", op, shape_str(x, buf, sizeof buf));
    if (rois->rank != 2 || rois->dims[1] != 5)
        FAIL("%s: rois must have shape [K,5], got %s", op, shape_str(rois, buf, sizeof buf));
    if (check_end_mode(p, RA_END_MODE, RA_ALIGNED, err, errlen)) return -1;
    ref_roi_align_params r;
    params(p, &r);
    if (check_common_attrs(op, "pooled_h", r.pooled_h, "pooled_w", r.pooled_w, r.spatial_scale, r.sampling_ratio,
                           err, errlen) ||
        check_adaptive_samples(op, &p->in[R_ROIS], r.spatial_scale, r.pooled_h, r.pooled_w, r.C, r.sampling_ratio,
                               r.aligned, r.end_plus_one, err, errlen))
        return -1;
    const int64_t d[4] = {r.K, r.C, r.pooled_h, r.pooled_w};
    return problem_set_output(p, 0, 4, d, err, errlen);
}

const op_desc op_roi_align = {
    .name = "roi_align",
    .range = range,
    .summary = "RoIAlign forward (torch_npu ROIAlign, aclnnRoiAlignV2 forward)",
    .spec = "ops.md sections 0, A, 1",
    OP_TENSORS(roi_align_inputs, roi_align_outputs),
    OP_ATTRS(roi_align_attrs),
    .gen = {"rois", fill_rois},
    .validate = roi_align_validate, .proofs = roi_align_proofs, .hunt = &hunt_roi_align,
    ROI_ALIGN_FAMILY,
};

/* ---- roi_align_v2_backward --------------------------------------------------------------- */

static const tensor_spec roi_align_bwd_inputs[] = {
    {"grad_output", "[K, C, pooled_height, pooled_width]"},
    {"boxes", "[K, 5] (image_id, x1, y1, x2, y2)"},
};
static const tensor_spec roi_align_bwd_outputs[] = {{"grad_input", "[B, C, H, W] = input_shape"}};
static const attr_spec roi_align_bwd_attrs[] = {
    {"input_shape", ATTR_INT_LIST, NULL, "4 ints (B, C, H, W)"},
    {"pooled_height", ATTR_INT, NULL, "= grad_output dim 2"},
    {"pooled_width", ATTR_INT, NULL, "= grad_output dim 3"},
    {"spatial_scale", ATTR_FLOAT, "1.0", "> 0 and finite"},
    {"sampling_ratio", ATTR_INT, "0", ">= 0, 0 = adaptive"},
    {"aligned", ATTR_BOOL, "true", "half-pixel offset"},
    {"roi_end_mode", ATTR_INT, "-1", END_MODE_DOC},
};

static int roi_align_bwd_validate(problem_t *p, char *err, size_t errlen)
{
    const char *op = p->op->name;
    char buf[128];
    const shape_t *go = &p->in[R_DATA].shape, *boxes = &p->in[R_ROIS].shape;
    const attr_value *is = &p->attr[0];
    if (go->rank != 4)
        FAIL("%s: grad_output must have shape [K,C,pooled_height,pooled_width], got %s", op,
             shape_str(go, buf, sizeof buf));
    if (boxes->rank != 2 || boxes->dims[1] != 5)
        FAIL("%s: boxes must have shape [K,5], got %s", op, shape_str(boxes, buf, sizeof buf));
    if (is->n != 4) FAIL("%s: input_shape must have 4 entries (B,C,H,W), got %d", op, is->n);
    for (int i = 0; i < 4; i++)
        if (is->list[i] < 0) FAIL("%s: input_shape[%d] = %lld: must be >= 0", op, i, (long long)is->list[i]);
    if (check_end_mode(p, 1 + RA_END_MODE, 1 + RA_ALIGNED, err, errlen)) return -1;
    ref_roi_align_params r;
    params(p, &r);
    if (go->dims[0] != r.K)
        FAIL("%s: grad_output has %lld rois (dim 0) but boxes has %lld", op, (long long)go->dims[0], (long long)r.K);
    if (check_common_attrs(op, "pooled_height", r.pooled_h, "pooled_width", r.pooled_w, r.spatial_scale,
                           r.sampling_ratio, err, errlen))
        return -1;
    if (go->dims[2] != r.pooled_h || go->dims[3] != r.pooled_w)
        FAIL("%s: pooled_height x pooled_width = %lld x %lld must equal grad_output dims 2, 3 = %lld x %lld", op,
             (long long)r.pooled_h, (long long)r.pooled_w, (long long)go->dims[2], (long long)go->dims[3]);
    if (go->dims[1] != r.C)
        FAIL("%s: grad_output has %lld channels (dim 1) but input_shape[1] = %lld", op, (long long)go->dims[1],
             (long long)r.C);
    if (check_adaptive_samples(op, &p->in[R_ROIS], r.spatial_scale, r.pooled_h, r.pooled_w, r.C, r.sampling_ratio,
                               r.aligned, r.end_plus_one, err, errlen))
        return -1;
    return problem_set_output(p, 0, 4, is->list, err, errlen);
}

const op_desc op_roi_align_v2_backward = {
    .name = "roi_align_v2_backward",
    .summary = "RoIAlign backward (aclnnRoiAlignV2Backward)",
    .spec = "ops.md sections 0, A, 2",
    OP_TENSORS(roi_align_bwd_inputs, roi_align_bwd_outputs),
    OP_ATTRS(roi_align_bwd_attrs),
    .gen = {"boxes", fill_rois},
    .validate = roi_align_bwd_validate, .proofs = roi_align_bwd_proofs, .hunt = &hunt_roi_align_bwd,
    ROI_ALIGN_FAMILY,
};
