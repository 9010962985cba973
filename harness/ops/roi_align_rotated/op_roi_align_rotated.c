/* roi_align_rotated (spec 3) and roi_align_rotated_grad (spec 4): problem description, input
 * filling, reference and optimized calls, tolerance model. Both layouts of spec 3 through the
 * attribute data_format: "NCHW" (as documented: rois [n, 6]) and "NHWC" (as the Ascend kernel
 * implements: rois [6, n], features and per-roi tensors channels-last). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fill.h"
#include "op.h"
#include "plain/conform_plain.h"

extern const proof_desc roi_align_rotated_proofs[], roi_align_rotated_grad_proofs[];
extern const hunt_desc hunt_roi_align_rotated, hunt_roi_align_rotated_grad; /* hunt_<family>.c */

#define DOC_LIMIT 1024 /* C, pooled_h, pooled_w: the documented limits of RoiAlignRotatedGrad */

/* ---- tolerance model (both ops) ----------------------------------------------------------- */

/* the derivation of both constants: docs/ops/roi_align_rotated.md, "Tolerance model" */
static const tol_model rotated_tol = {
    /* 3 in the weight, 1 weight*value, 2 the 1/count scale and merged pixels */
    .k_val = 6,
    .k_val_why = "per term: 3 roundings in the weight, 1 in weight*value, 2 for the 1/count scale and merging "
                 "equal pixels of a bin; plus 1 per term summed (docs/ops/roi_align_rotated.md)",
    /* 13 roundings in a rotated sample position at first order, gamma_13 < 14u */
    .k_pos = 14,
    .k_pos_why = "13 float32 roundings in a rotated sample position, each at most u times its magnitude, and "
                 "gamma_13 = 13u/(1-13u) < 14u (docs/ops/roi_align_rotated.md)",
};

static void params(const problem_t *p, ref_roi_align_rotated_params *r);

/* ---- the roi generator ------------------------------------------------------------------- */

/* special angles: 0, +-pi/2, pi, and beyond +-2 pi (radians, rounded to float32) */
static const double special_angles[] = {0.0, M_PI / 2, -M_PI / 2, M_PI, -M_PI, 2 * M_PI + 0.3, -2 * M_PI - 1.1,
                                        7.5, -9.25, 4 * M_PI};

/* One axis of an angle-0 roi whose samples land exactly on -1 and on n (first and last sample),
 * when the sampling ratio is fixed: centre and extent in image coordinates. */
static void edge_axis(double n, int64_t pooled, int64_t sr, double s, double off, double *centre, double *extent)
{
    double start, end;
    fill_edge_span(n, pooled, sr, &start, &end);
    *centre = round_f32(((start + end) / 2 + off) / s);
    *extent = round_f32((end - start) / s);
}

/* Fills rois [K, 6] (nhwc: [6, K]) = (batch, cx, cy, w, h, angle), input index of prob; g may be NULL
 * (defaults). */
static int fill_rois(problem_t *prob, int index, const cJSON *g, gsl_rng *rng, char *err, size_t errlen)
{
    ref_roi_align_rotated_params pr, *p = &pr;
    params(prob, p);
    tensor_t *rois = &prob->in[index];
    const int nhwc = p->nhwc;
    const int64_t B = p->B, H = p->H, W = p->W, PH = p->pooled_h, PW = p->pooled_w, sr = p->sampling_ratio;
    const double s = p->spatial_scale > 0 ? p->spatial_scale : 1.0;
    const cJSON *data = g ? cJSON_GetObjectItemCaseSensitive(g, "data") : NULL;
    if (data) return fill_from_json(rois->data, tensor_numel(rois), data, "rois", err, errlen);
    if (rois->shape.rank != 2 || rois->shape.dims[nhwc ? 0 : 1] != 6) return 0; /* validation names it */
    double img_h, img_w, size_lo, size_hi, ang_lo = -M_PI, ang_hi = M_PI;
    fill_roi_frame(g, H, W, s, &img_h, &img_w, &size_lo, &size_hi);
    json_range(g, "angle", &ang_lo, &ang_hi);
    double outside = json_number(g, "outside_frac", 0.0), degenerate = json_number(g, "degenerate_frac", 0.0);
    double negative = json_number(g, "negative_frac", 0.0), oob = json_number(g, "oob_batch_frac", 0.0);
    double fracb = json_number(g, "frac_batch_frac", 0.0), nanf = json_number(g, "nan_frac", 0.0);
    double edge = json_number(g, "edge_frac", 0.0), special = json_number(g, "special_angle_frac", 0.0);
    double huge, huge_lo, huge_hi;
    if (fill_huge_range(g, &huge, &huge_lo, &huge_hi, "rois", err, errlen)) return -1;
    double off = p->aligned ? 0.5 : 0.0;
    int64_t K = rois->shape.dims[nhwc ? 1 : 0];
    for (int64_t k = 0; k < K; k++) {
        double r[6];
        double b = B > 0 ? (double)gsl_rng_uniform_int(rng, (unsigned long)B) : 0.0;
        if (fill_pick(rng, oob)) b = gsl_rng_uniform(rng) < 0.5 ? -1.0 : (double)B;
        else if (fill_pick(rng, fracb)) b += 0.5;
        r[0] = b;
        double lo = fill_pick(rng, outside) ? -0.5 : 0.0, hi = lo < 0 ? 1.5 : 1.0;
        r[1] = fill_uniform(rng, lo * img_w, hi * img_w);
        r[2] = fill_uniform(rng, lo * img_h, hi * img_h);
        r[3] = fill_uniform(rng, size_lo, size_hi);
        r[4] = fill_uniform(rng, size_lo, size_hi);
        r[5] = fill_uniform(rng, ang_lo, ang_hi);
        if (fill_pick(rng, special))
            r[5] = round_f32(special_angles[gsl_rng_uniform_int(rng, sizeof special_angles / sizeof special_angles[0])]);
        if (fill_pick(rng, degenerate)) { r[3] = 0; if (gsl_rng_uniform(rng) < 0.5) r[4] = 0; }
        else if (fill_pick(rng, negative)) { r[3] = -r[3]; if (gsl_rng_uniform(rng) < 0.5) r[4] = -r[4]; }
        if (fill_pick(rng, edge)) {
            edge_axis((double)H, PH, sr, s, off, &r[2], &r[4]);
            edge_axis((double)W, PW, sr, s, off, &r[1], &r[3]);
            r[5] = 0;
        }
        /* a centre far out (either sign), or an extent that huge (its sign kept): the roi may still
           cover the plane */
        for (int i = 1; i <= 4; i++)
            if (fill_pick(rng, huge)) r[i] = (i <= 2 ? (gsl_rng_uniform(rng) < 0.5 ? -1 : 1) : r[i] < 0 ? -1 : 1) *
                                        fill_log_magnitude(rng, huge_lo, huge_hi);
        if (fill_pick(rng, nanf)) r[1 + gsl_rng_uniform_int(rng, 5)] = NAN;
        for (int f = 0; f < 6; f++) rois->data[nhwc ? f * K + k : 6 * k + f] = r[f];
    }
    return 0;
}

/* ---- shared checks ------------------------------------------------------------------------ */

static int parse_format(const char *op, const char *v, int *nhwc, char *err, size_t errlen)
{
    if (!strcmp(v, "NCHW")) *nhwc = 0;
    else if (!strcmp(v, "NHWC")) *nhwc = 1;
    else FAIL("%s: data_format = '%s': must be \"NCHW\" or \"NHWC\"", op, v);
    return 0;
}

/* rois [n, 6] (NCHW) or [6, n] (NHWC); returns n or -1 */
static int64_t check_rois(const char *op, const shape_t *rois, int nhwc, char *err, size_t errlen)
{
    char buf[128];
    if (rois->rank != 2 || rois->dims[nhwc ? 0 : 1] != 6)
        FAIL("%s: rois must have shape %s for data_format %s, got %s", op, nhwc ? "[6,n]" : "[n,6]",
             nhwc ? "NHWC" : "NCHW", shape_str(rois, buf, sizeof buf));
    return rois->dims[nhwc ? 1 : 0];
}

/* empty: the per-roi tensor is empty anyway (n = 0 or C = 0): pooled sizes of 0 are documented
 * as allowed only then */
static int check_attrs(const char *op, int64_t PH, int64_t PW, double s, int64_t sr, int64_t C, int empty,
                       char *err, size_t errlen)
{
    if (C < 0 || C > DOC_LIMIT) FAIL("%s: C = %lld channels: must be in [0, %d] (documented limit)", op, (long long)C, DOC_LIMIT);
    const char *names[2] = {"pooled_h", "pooled_w"};
    const int64_t v[2] = {PH, PW};
    for (int i = 0; i < 2; i++) {
        if (v[i] > DOC_LIMIT || v[i] < 0)
            FAIL("%s: %s = %lld: must be in [1, %d] (documented limit)", op, names[i], (long long)v[i], DOC_LIMIT);
        if (v[i] == 0 && !empty)
            FAIL("%s: %s = 0: must be >= 1 (0 is allowed only when there are no rois or no channels)", op, names[i]);
    }
    if (!(s > 0) || !isfinite(s)) FAIL("%s: spatial_scale = %g: must be > 0 and finite", op, s);
    if (sr < 0) FAIL("%s: sampling_ratio = %lld: must be >= 0", op, (long long)sr);
    if (sr > 1024) FAIL("%s: sampling_ratio = %lld: the harness accepts at most 1024", op, (long long)sr);
    return 0;
}

/* The reference loops over every sample: rois that would need absurd numbers of them (adaptive
 * counts of huge rois) are refused up front, against the work budget. */
static int check_adaptive_samples(const char *op, const tensor_t *rois, int nhwc, int64_t K, double s, int64_t PH,
                                  int64_t PW, int64_t C, int64_t sr, int aligned, char *err, size_t errlen)
{
    if (!rois->data || PH <= 0 || PW <= 0) return 0; /* no data yet: shapes-only check of a suite */
    double total = 0;
    for (int64_t k = 0; k < K; k++) {
        double w = rois->data[nhwc ? 3 * K + k : 6 * k + 3] * s, h = rois->data[nhwc ? 4 * K + k : 6 * k + 4] * s;
        if (!aligned) { if (w < 1) w = 1; if (h < 1) h = 1; }
        double gh = sr > 0 ? (double)sr : ceil(h / (double)PH), gw = sr > 0 ? (double)sr : ceil(w / (double)PW);
        if (isfinite(gh) && isfinite(gw) && gh > 0 && gw > 0) total += gh * gw;
    }
    return problem_check_samples(op, total * (double)PH * (double)PW * (double)(C > 0 ? C : 1), err, errlen);
}

/* ---- roi_align_rotated --------------------------------------------------------------------- */

enum { RF_X, RF_ROIS };
enum { RF_SCALE, RF_SR, RF_PH, RF_PW, RF_ALIGNED, RF_CLOCKWISE, RF_FORMAT };

static const tensor_spec fwd_inputs[] = {
    {"x", "[B, C, H, W] (NCHW) or [B, H, W, C] (NHWC) feature map"},
    {"rois", "[n, 6] (NCHW) or [6, n] (NHWC): (batch_idx, center_x, center_y, width, height, angle in radians)"},
};
static const tensor_spec fwd_outputs[] = {{"y", "[n, C, pooled_h, pooled_w] (NCHW) or [n, pooled_h, pooled_w, C] (NHWC)"}};
#define COMMON_ATTRS                                                                                       \
    {"spatial_scale", ATTR_FLOAT, "1.0", "image-to-feature scale, > 0"},                                   \
    {"sampling_ratio", ATTR_INT, "0", "samples per bin per axis, 0 = adaptive"},                           \
    {"pooled_h", ATTR_INT, NULL, "output height, in [1, 1024]"},                                           \
    {"pooled_w", ATTR_INT, NULL, "output width, in [1, 1024]"},                                            \
    {"aligned", ATTR_BOOL, "true", "half-pixel offset of the centre (mmcv's default true)"},               \
    {"clockwise", ATTR_BOOL, "false", "true: the angle turns clockwise (theta = -angle)"},                 \
    {"data_format", ATTR_STRING, "NCHW", "\"NCHW\" (documented: rois [n,6]) or \"NHWC\" (Ascend kernel: rois [6,n])"}
static const attr_spec fwd_attrs[] = {COMMON_ATTRS};

/* Both ops read input 0 (x or x_grad) and input 1 (the rois) alike; the backward has one
 * attribute more, y_grad_shape, where the forward reads x's shape. */
/* by name, not address: tests judge copies of a descriptor with a broken reference */
static int backward(const problem_t *p) { return !strcmp(p->op->name, "roi_align_rotated_grad"); }

static void params(const problem_t *p, ref_roi_align_rotated_params *r)
{
    r->spatial_scale = p->attr[RF_SCALE].f;
    r->sampling_ratio = p->attr[RF_SR].i;
    r->pooled_h = p->attr[RF_PH].i;
    r->pooled_w = p->attr[RF_PW].i;
    r->aligned = (int)p->attr[RF_ALIGNED].i;
    r->clockwise = (int)p->attr[RF_CLOCKWISE].i;
    r->nhwc = !strcmp(p->attr[RF_FORMAT].s, "NHWC");
    const shape_t *rs = &p->in[RF_ROIS].shape;
    r->K = rs->rank == 2 ? rs->dims[r->nhwc ? 1 : 0] : 0;
    const attr_value *s = &p->attr[RF_FORMAT + 1]; /* the backward's y_grad_shape */
    int64_t d[4];
    for (int i = 0; i < 4; i++) d[i] = !backward(p) ? p->in[RF_X].shape.dims[i] : s->n > i ? s->list[i] : 0;
    r->B = d[0];
    r->C = d[r->nhwc ? 3 : 1];
    r->H = d[r->nhwc ? 1 : 2];
    r->W = d[r->nhwc ? 2 : 3];
}

static void reference(const problem_t *p, double **out, ref_bounds *bounds)
{
    ref_roi_align_rotated_params r;
    params(p, &r);
    (backward(p) ? f64_roi_align_rotated_bwd__ref : f64_roi_align_rotated_fwd__ref)(&r, p->in[RF_X].data,
                                                                                    p->in[RF_ROIS].data, out[0], bounds);
}

/* the plain golden (reference/plain/roi_family.c), held bitwise equal to reference by make check-golden */
static void plain(const problem_t *p, double **out, ref_bounds *bounds)
{
    ref_roi_align_rotated_params r;
    params(p, &r);
    (backward(p) ? f64_roi_align_rotated_bwd__plain : f64_roi_align_rotated_fwd__plain)(&r, p->in[RF_X].data, p->in[RF_ROIS].data, out[0], bounds);
}

/* the forward's reachable range (conform_range.h): the mean of its samples' tap ranges */
static int range(const problem_t *p, int o, ref_range *rg)
{
    ref_roi_align_rotated_params r;
    if (backward(p) || o != 0) return -1;
    params(p, &r);
    f64_roi_align_rotated_fwd__range(&r, p->in[RF_X].data, p->in[RF_ROIS].data, rg);
    return 0;
}

static int optimized(const problem_t *p, const float **in, float **out, const conform_exec *ex)
{
    ref_roi_align_rotated_params r;
    params(p, &r);
    const f32_roi_align_rotated_params f = {
        .B = r.B, .C = r.C, .H = r.H, .W = r.W, .K = r.K, .pooled_h = r.pooled_h, .pooled_w = r.pooled_w,
        .spatial_scale = (float)r.spatial_scale, .sampling_ratio = r.sampling_ratio, .aligned = r.aligned,
        .clockwise = r.clockwise, .nhwc = r.nhwc,
    };
    return (backward(p) ? f32_roi_align_rotated_bwd : f32_roi_align_rotated_fwd)(&f, in[RF_X], in[RF_ROIS], out[0], ex);
}

/* what both ops share: the roi generator, the kernels and the tolerance model */
#define ROTATED_FAMILY .gen = {"rois", fill_rois}, .reference = reference, .plain = plain, .optimized = optimized, .tol = &rotated_tol

static int fwd_validate(problem_t *p, char *err, size_t errlen)
{
    const char *op = p->op->name;
    char buf[128];
    int nhwc;
    if (parse_format(op, p->attr[RF_FORMAT].s, &nhwc, err, errlen)) return -1;
    const shape_t *x = &p->in[RF_X].shape;
    if (x->rank != 4)
        FAIL("%s: x must have shape %s, got %s", op, nhwc ? "[B,H,W,C]" : "[B,C,H,W]", shape_str(x, buf, sizeof buf));
    if (check_rois(op, &p->in[RF_ROIS].shape, nhwc, err, errlen) < 0) return -1;
    ref_roi_align_rotated_params r;
    params(p, &r);
    if (check_attrs(op, r.pooled_h, r.pooled_w, r.spatial_scale, r.sampling_ratio, r.C, r.K == 0 || r.C == 0, err,
                    errlen))
        return -1;
    if (check_adaptive_samples(op, &p->in[RF_ROIS], nhwc, r.K, r.spatial_scale, r.pooled_h, r.pooled_w, r.C,
                               r.sampling_ratio, r.aligned, err, errlen))
        return -1;
    const int64_t d[4] = {r.K, r.C, r.pooled_h, r.pooled_w}, dl[4] = {r.K, r.pooled_h, r.pooled_w, r.C};
    return problem_set_output(p, 0, 4, nhwc ? dl : d, err, errlen);
}

const op_desc op_roi_align_rotated = {
    .name = "roi_align_rotated",
    .range = range,
    .summary = "rotated RoIAlign forward (mmcv RoIAlignRotated, Ascend RoiAlignRotated); known divergences (ops.md 10): "
               "batch index floor + skip (Ascend rounds half to even, mmcv truncates), layout NCHW/[n,6] as documented "
               "vs NHWC/[6,n] as the Ascend kernel implements (attribute data_format)",
    .spec = "ops.md sections 0, A, 3",
    OP_TENSORS(fwd_inputs, fwd_outputs),
    OP_ATTRS(fwd_attrs),
    .validate = fwd_validate, .proofs = roi_align_rotated_proofs, .hunt = &hunt_roi_align_rotated,
    ROTATED_FAMILY,
};

/* ---- roi_align_rotated_grad ---------------------------------------------------------------- */

enum { RG_XGRAD, RG_ROIS };
enum { RG_SHAPE = RF_FORMAT + 1 };

static const tensor_spec grad_inputs[] = {
    {"x_grad", "[n, C, pooled_h, pooled_w] (NCHW) or [n, pooled_h, pooled_w, C] (NHWC): gradient of y"},
    {"rois", "[n, 6] (NCHW) or [6, n] (NHWC): (batch_idx, center_x, center_y, width, height, angle in radians)"},
};
static const tensor_spec grad_outputs[] = {{"y_grad", "y_grad_shape: [B, C, H, W] (NCHW) or [B, H, W, C] (NHWC)"}};
static const attr_spec grad_attrs[] = {
    COMMON_ATTRS,
    {"y_grad_shape", ATTR_INT_LIST, NULL, "4 ints, the feature-map shape in data_format order"},
};

static int grad_validate(problem_t *p, char *err, size_t errlen)
{
    const char *op = p->op->name;
    char buf[128];
    int nhwc;
    if (parse_format(op, p->attr[RF_FORMAT].s, &nhwc, err, errlen)) return -1;
    const shape_t *xg = &p->in[RG_XGRAD].shape;
    const attr_value *ys = &p->attr[RG_SHAPE];
    if (xg->rank != 4)
        FAIL("%s: x_grad must have shape %s, got %s", op, nhwc ? "[n,pooled_h,pooled_w,C]" : "[n,C,pooled_h,pooled_w]",
             shape_str(xg, buf, sizeof buf));
    if (check_rois(op, &p->in[RG_ROIS].shape, nhwc, err, errlen) < 0) return -1;
    if (ys->n != 4) FAIL("%s: y_grad_shape must have 4 entries (%s), got %d", op, nhwc ? "B,H,W,C" : "B,C,H,W", ys->n);
    for (int i = 0; i < 4; i++)
        if (ys->list[i] < 0) FAIL("%s: y_grad_shape[%d] = %lld: must be >= 0", op, i, (long long)ys->list[i]);
    ref_roi_align_rotated_params r;
    params(p, &r);
    if (xg->dims[0] != r.K)
        FAIL("%s: x_grad has %lld rois (dim 0) but rois has %lld", op, (long long)xg->dims[0], (long long)r.K);
    const int64_t xc = xg->dims[nhwc ? 3 : 1];
    if (check_attrs(op, r.pooled_h, r.pooled_w, r.spatial_scale, r.sampling_ratio, r.C, r.K == 0 || r.C == 0, err,
                    errlen))
        return -1;
    const int64_t xph = xg->dims[nhwc ? 1 : 2], xpw = xg->dims[nhwc ? 2 : 3];
    if (xph != r.pooled_h || xpw != r.pooled_w)
        FAIL("%s: pooled_h x pooled_w = %lld x %lld must equal x_grad dims %s = %lld x %lld", op, (long long)r.pooled_h,
             (long long)r.pooled_w, nhwc ? "1, 2" : "2, 3", (long long)xph, (long long)xpw);
    if (xc != r.C)
        FAIL("%s: x_grad has %lld channels (dim %d) but y_grad_shape[%d] = %lld", op, (long long)xc, nhwc ? 3 : 1,
             nhwc ? 3 : 1, (long long)r.C);
    if (check_adaptive_samples(op, &p->in[RG_ROIS], nhwc, r.K, r.spatial_scale, r.pooled_h, r.pooled_w, r.C,
                               r.sampling_ratio, r.aligned, err, errlen))
        return -1;
    return problem_set_output(p, 0, 4, ys->list, err, errlen);
}

const op_desc op_roi_align_rotated_grad = {
    .name = "roi_align_rotated_grad",
    .summary = "rotated RoIAlign backward (Ascend RoiAlignRotatedGrad); known divergences (ops.md 10): batch index "
               "floor + skip, NCHW/[n,6] as documented vs NHWC/[6,n] as the kernel implements (data_format), the "
               "mmcv NPU adapter passes pooled_h/pooled_w swapped (right only for square outputs)",
    .spec = "ops.md sections 0, A, 4",
    OP_TENSORS(grad_inputs, grad_outputs),
    OP_ATTRS(grad_attrs),
    .validate = grad_validate, .proofs = roi_align_rotated_grad_proofs, .hunt = &hunt_roi_align_rotated_grad,
    ROTATED_FAMILY,
};
