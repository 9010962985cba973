/* HOST STAND-IN (not CANN): the six aclnn entry points the plugin calls, each a two-stage call
 * (GetWorkspaceSize checks the contract and records it, the second stage computes it over
 * conform's reference), as in every ops-cv example (e.g. objdetect/roi_align_grad/examples/
 * test_aclnn_roi_align_v2_backward.cpp). Contracts and their sources are above each function. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_grid_sampler2d.h"
#include "aclnnop/aclnn_grid_sampler2d_backward.h"
#include "aclnnop/aclnn_roi_align_rotated.h"
#include "aclnnop/aclnn_roi_align_rotated_grad.h"
#include "aclnnop/aclnn_roi_align_v2.h"
#include "aclnnop/aclnn_roi_align_v2_backward.h"
#include "conform_ref.h"
#include "standin.h"

#define SI_WORKSPACE 256 /* asked of every call, so the plugin's workspace path runs */
#define CHECK(x) do { int rc_ = (x); if (rc_) return rc_; } while (0)

static aclnnStatus first_stage(aclOpExecutor *e, uint64_t *ws, aclOpExecutor **executor)
{
    if (!e || !ws || !executor) { free(e); return si_fail(ACLNN_ERR_PARAM_NULLPTR, "no executor or workspace pointer"); }
    *ws = SI_WORKSPACE;
    *executor = e;
    return ACLNN_SUCCESS;
}

static aclnnStatus second_stage(void *ws, uint64_t n, aclOpExecutor *e, const char *name)
{
    if (!e) return si_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: no executor", name);
    if (n < SI_WORKSPACE || !si_on_device(ws, n)) {
        free(e);
        return si_fail(ACLNN_ERR_PARAM_INVALID, "%s: workspace of %llu bytes not in device memory", name, (unsigned long long)n);
    }
    aclnnStatus st = e->run(e);
    free(e);
    return st;
}

static int same_dtype(const aclTensor *a, const aclTensor *b, const char *what)
{
    return a->dt == b->dt ? ACLNN_SUCCESS : si_fail(ACLNN_ERR_PARAM_INVALID, "%s: dtype %d, expected %d", what, (int)b->dt, (int)a->dt);
}

/* ---- aclnnRoiAlignV2 / aclnnRoiAlignV2Backward (hicann/ops-cv objdetect/roi_align/op_host/op_api/
   aclnn_roi_align_v2.cpp:40, 61-62, 200; objdetect/roi_align_grad/op_api/aclnn_roi_align_v2_backward.cpp:
   40, 63-66, 232): features and out in storage format NCHW, boxes ND [K, 5] (batch, x1, y1, x2, y2);
   FLOAT or FLOAT16 forward, FLOAT only backward; spatialScale > FLT_MIN, samplingRatio >= 0 (0 =
   adaptive); aligned is sent to the kernel as roi_end_mode 2, !aligned as 0. ---- */

static ref_roi_align_params roi_params(const aclOpExecutor *e, const int64_t *bchw, int64_t K)
{
    return (ref_roi_align_params){bchw[0], bchw[1], bchw[2], bchw[3], K, e->i[0], e->i[1], e->f, e->i[2], e->b[0], 0};
}

static int roi_attrs(int64_t ph, int64_t pw, float scale, int64_t sr, const aclTensor *boxes, const aclTensor *feat)
{
    if (!(scale > FLT_MIN)) return si_fail(ACLNN_ERR_PARAM_INVALID, "spatialScale %g must be > FLT_MIN", scale);
    if (sr < 0 || ph < 1 || pw < 1) return si_fail(ACLNN_ERR_PARAM_INVALID, "samplingRatio %lld, pooled %lldx%lld", (long long)sr, (long long)ph, (long long)pw);
    if (boxes->rank != 2 || boxes->dims[1] != 5) return si_fail(ACLNN_ERR_PARAM_INVALID, "boxes must be [K, 5]");
    if (boxes->format != ACL_FORMAT_ND) return si_fail(ACLNN_ERR_PARAM_INVALID, "boxes must be format ND");
    if (feat->rank != 4 || feat->format != ACL_FORMAT_NCHW) return si_fail(ACLNN_ERR_PARAM_INVALID, "features must be 4-D, format NCHW");
    return same_dtype(feat, boxes, "boxes");
}

/* t[0] the input (features or gradOutput), t[1] boxes, t[2] the output; i[3]: the backward */
static aclnnStatus roi_align_v2_run(aclOpExecutor *e)
{
    const aclTensor *in = &e->t[0], *boxes = &e->t[1], *out = &e->t[2];
    ref_roi_align_params p = roi_params(e, e->i[3] ? out->dims : in->dims, boxes->dims[0]);
    double *vi = si_load(in), *vb = si_load(boxes), *vo = calloc((size_t)(si_numel(4, out->dims) + 1), sizeof(double));
    if (vi && vb && vo) {
        if (e->i[3]) f64_roi_align_bwd__ref(&p, vi, vb, vo, NULL);
        else f64_roi_align_fwd__ref(&p, vi, vb, vo, NULL);
    }
    if (vo) si_store(out, vo);
    free(vi); free(vb); free(vo);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnRoiAlignV2GetWorkspaceSize(const aclTensor *self, const aclTensor *boxes, int64_t pooledHeight,
                                            int64_t pooledWidth, float spatialScale, int64_t samplingRatio, bool aligned,
                                            aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    CHECK(si_check_tensor(self, "aclnnRoiAlignV2 self"));
    CHECK(si_check_tensor(boxes, "aclnnRoiAlignV2 boxes"));
    CHECK(si_check_tensor(out, "aclnnRoiAlignV2 out"));
    if (self->dt != ACL_FLOAT && self->dt != ACL_FLOAT16) return si_fail(ACLNN_ERR_PARAM_INVALID, "aclnnRoiAlignV2: FLOAT or FLOAT16");
    CHECK(roi_attrs(pooledHeight, pooledWidth, spatialScale, samplingRatio, boxes, self));
    if (out->format != ACL_FORMAT_NCHW) return si_fail(ACLNN_ERR_PARAM_INVALID, "aclnnRoiAlignV2 out: format NCHW");
    CHECK(same_dtype(self, out, "aclnnRoiAlignV2 out"));
    CHECK(si_dims_are(out, "aclnnRoiAlignV2 out", 4, (int64_t[]){boxes->dims[0], self->dims[1], pooledHeight, pooledWidth}));
    aclOpExecutor *e = si_executor(roi_align_v2_run);
    if (e) {
        e->t[0] = *self; e->t[1] = *boxes; e->t[2] = *out;
        e->i[0] = pooledHeight; e->i[1] = pooledWidth; e->i[2] = samplingRatio; e->f = spatialScale; e->b[0] = aligned;
    }
    return first_stage(e, workspaceSize, executor);
}

aclnnStatus aclnnRoiAlignV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return second_stage(workspace, workspaceSize, executor, "aclnnRoiAlignV2");
}

aclnnStatus aclnnRoiAlignV2BackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *boxes,
                                                    const aclIntArray *inputShape, int64_t pooledHeight, int64_t pooledWidth,
                                                    float spatialScale, int64_t samplingRatio, bool aligned,
                                                    aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    CHECK(si_check_tensor(gradOutput, "aclnnRoiAlignV2Backward gradOutput"));
    CHECK(si_check_tensor(boxes, "aclnnRoiAlignV2Backward boxes"));
    CHECK(si_check_tensor(gradInput, "aclnnRoiAlignV2Backward gradInput"));
    if (!inputShape || inputShape->n != 4) return si_fail(ACLNN_ERR_PARAM_INVALID, "inputShape must hold exactly 4 values");
    if (gradOutput->dt != ACL_FLOAT) return si_fail(ACLNN_ERR_PARAM_INVALID, "aclnnRoiAlignV2Backward: FLOAT only");
    CHECK(roi_attrs(pooledHeight, pooledWidth, spatialScale, samplingRatio, boxes, gradOutput));
    if (gradInput->format != ACL_FORMAT_NCHW) return si_fail(ACLNN_ERR_PARAM_INVALID, "gradInput: format NCHW");
    CHECK(same_dtype(gradOutput, gradInput, "gradInput"));
    CHECK(si_dims_are(gradOutput, "gradOutput", 4,
                      (int64_t[]){boxes->dims[0], inputShape->v[1], pooledHeight, pooledWidth}));
    CHECK(si_dims_are(gradInput, "gradInput", 4, inputShape->v));
    aclOpExecutor *e = si_executor(roi_align_v2_run);
    if (e) {
        e->t[0] = *gradOutput; e->t[1] = *boxes; e->t[2] = *gradInput;
        e->i[0] = pooledHeight; e->i[1] = pooledWidth; e->i[2] = samplingRatio; e->i[3] = 1;
        e->f = spatialScale; e->b[0] = aligned;
    }
    return first_stage(e, workspaceSize, executor);
}

aclnnStatus aclnnRoiAlignV2Backward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return second_stage(workspace, workspaceSize, executor, "aclnnRoiAlignV2Backward");
}

/* ---- aclnnGridSampler2D / aclnnGridSampler2DBackward (hicann/ops-cv image/grid_sample/op_api/
   aclnn_grid_sampler2d.cpp:52-53, 211-231, 296-331; image/grid_sampler2_d_grad/op_host/op_api/
   aclnn_grid_sampler2d_backward.cpp:56-60, 166-168, 231-247): input [N, C, H, W], grid
   [N, Ho, Wo, 2] (x, y), out [N, C, Ho, Wo]; FLOAT, FLOAT16, BF16 or DOUBLE, one dtype for all;
   interpolationMode 0 bilinear, 1 nearest, 2 bicubic (bicubic + DOUBLE rejected); paddingMode
   0 zeros, 1 border, 2 reflection; the backward's outputMask holds 2 flags. ---- */

static int grid_contract(const aclTensor *in, const aclTensor *grid, int64_t interp, int64_t pad, const char *name)
{
    if (in->dt != ACL_FLOAT && in->dt != ACL_FLOAT16 && in->dt != ACL_BF16 && in->dt != ACL_DOUBLE)
        return si_fail(ACLNN_ERR_PARAM_INVALID, "%s: dtype %d", name, (int)in->dt);
    CHECK(same_dtype(in, grid, "grid"));
    if (interp < 0 || interp > 2 || pad < 0 || pad > 2)
        return si_fail(ACLNN_ERR_PARAM_INVALID, "%s: interpolationMode %lld, paddingMode %lld", name, (long long)interp, (long long)pad);
    if (interp == 2 && in->dt == ACL_DOUBLE) return si_fail(ACLNN_ERR_PARAM_INVALID, "%s: bicubic with DOUBLE", name);
    if (in->rank != 4 || grid->rank != 4 || grid->dims[0] != in->dims[0] || grid->dims[3] != 2)
        return si_fail(ACLNN_ERR_PARAM_INVALID, "%s: input [N, C, H, W] and grid [N, Ho, Wo, 2]", name);
    return ACLNN_SUCCESS;
}

static ref_grid_sampler_params grid_params(const aclOpExecutor *e)
{
    const aclTensor *in = &e->t[0], *grid = &e->t[1];
    return (ref_grid_sampler_params){in->dims[0], in->dims[1], in->dims[2], in->dims[3], grid->dims[1], grid->dims[2],
                                     (int)e->i[0], (int)e->i[1], e->b[0], {e->b[1], e->b[2]}};
}

static aclnnStatus grid_run(aclOpExecutor *e)
{
    ref_grid_sampler_params p = grid_params(e);
    double *vi = si_load(&e->t[0]), *vg = si_load(&e->t[1]), *vo = calloc((size_t)(si_numel(4, e->t[2].dims) + 1), sizeof(double));
    if (vi && vg && vo) f64_grid_sampler_2d_fwd__ref(&p, vi, vg, vo, NULL);
    if (vo) si_store(&e->t[2], vo);
    free(vi); free(vg); free(vo);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnGridSampler2DGetWorkspaceSize(const aclTensor *input, const aclTensor *grid, int64_t interpolationMode,
                                              int64_t paddingMode, bool alignCorners, aclTensor *out, uint64_t *workspaceSize,
                                              aclOpExecutor **executor)
{
    CHECK(si_check_tensor(input, "aclnnGridSampler2D input"));
    CHECK(si_check_tensor(grid, "aclnnGridSampler2D grid"));
    CHECK(si_check_tensor(out, "aclnnGridSampler2D out"));
    CHECK(grid_contract(input, grid, interpolationMode, paddingMode, "aclnnGridSampler2D"));
    CHECK(same_dtype(input, out, "out"));
    CHECK(si_dims_are(out, "aclnnGridSampler2D out", 4, (int64_t[]){input->dims[0], input->dims[1], grid->dims[1], grid->dims[2]}));
    aclOpExecutor *e = si_executor(grid_run);
    if (e) {
        e->t[0] = *input; e->t[1] = *grid; e->t[2] = *out;
        e->i[0] = interpolationMode; e->i[1] = paddingMode; e->b[0] = alignCorners;
    }
    return first_stage(e, workspaceSize, executor);
}

aclnnStatus aclnnGridSampler2D(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return second_stage(workspace, workspaceSize, executor, "aclnnGridSampler2D");
}

static aclnnStatus grid_backward_run(aclOpExecutor *e)
{
    ref_grid_sampler_params p = grid_params(e);
    const aclTensor *go = &e->t[2], *gi = &e->t[3], *gg = &e->t[4];
    double *vi = si_load(&e->t[0]), *vg = si_load(&e->t[1]), *vgo = si_load(go);
    double *oi = calloc((size_t)(si_numel(4, gi->dims) + 1), sizeof(double));
    double *og = calloc((size_t)(si_numel(4, gg->dims) + 1), sizeof(double));
    if (vi && vg && vgo && oi && og) f64_grid_sampler_2d_bwd__ref(&p, vgo, vi, vg, oi, og, NULL);
    if (oi && p.output_mask[0]) si_store(gi, oi);
    if (og && p.output_mask[1]) si_store(gg, og);
    free(vi); free(vg); free(vgo); free(oi); free(og);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnGridSampler2DBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *input,
                                                      const aclTensor *grid, int64_t interpolationMode, int64_t paddingMode,
                                                      bool alignCorners, const aclBoolArray *outputMask, aclTensor *inputGrad,
                                                      aclTensor *gridGrad, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *n = "aclnnGridSampler2DBackward";
    CHECK(si_check_tensor(gradOutput, "gradOutput"));
    CHECK(si_check_tensor(input, "input"));
    CHECK(si_check_tensor(grid, "grid"));
    CHECK(si_check_tensor(inputGrad, "inputGrad"));
    CHECK(si_check_tensor(gridGrad, "gridGrad"));
    if (!outputMask || outputMask->n != 2) return si_fail(ACLNN_ERR_PARAM_INVALID, "%s: outputMask must hold 2 flags", n);
    CHECK(grid_contract(input, grid, interpolationMode, paddingMode, n));
    CHECK(same_dtype(input, gradOutput, "gradOutput"));
    CHECK(si_dims_are(gradOutput, "gradOutput", 4, (int64_t[]){input->dims[0], input->dims[1], grid->dims[1], grid->dims[2]}));
    CHECK(si_dims_are(inputGrad, "inputGrad", 4, input->dims));
    CHECK(si_dims_are(gridGrad, "gridGrad", 4, grid->dims));
    aclOpExecutor *e = si_executor(grid_backward_run);
    if (e) {
        e->t[0] = *input; e->t[1] = *grid; e->t[2] = *gradOutput; e->t[3] = *inputGrad; e->t[4] = *gridGrad;
        e->i[0] = interpolationMode; e->i[1] = paddingMode;
        e->b[0] = alignCorners; e->b[1] = outputMask->v[0]; e->b[2] = outputMask->v[1];
    }
    return first_stage(e, workspaceSize, executor);
}

aclnnStatus aclnnGridSampler2DBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return second_stage(workspace, workspaceSize, executor, "aclnnGridSampler2DBackward");
}

/* ---- aclnnRoiAlignRotated(Grad): auto-generated from the OpDef (hicann/ops-cv
   objdetect/roi_align_rotated{,_grad}/op_host/roi_align_rotated{,_grad}_def.cpp: DT_FLOAT only, format ND; attributes
   pooled_h, pooled_w, spatial_scale, sampling_ratio, aligned, clockwise, and y_grad_shape for the
   grad); the kernels read x NHWC [B, H, W, C] and rois [6, n] (roi_align_rotated_infershape.cpp:
   C from dim 3, n from rois dim 1), y NHWC [n, pooled_h, pooled_w, C]. Shared with the graph
   ops RoiAlignRotated(Grad) in standin_aclop.c. ---- */

static ref_roi_align_rotated_params rotated_params(const int64_t *bhwc, int64_t n, const int64_t *ints, double scale,
                                                   const bool *flags)
{
    return (ref_roi_align_rotated_params){bhwc[0], bhwc[3], bhwc[1], bhwc[2], n, ints[0], ints[1], scale, ints[2],
                                          flags[0], flags[1], 1};
}

int si_rotated_contract(const aclTensor *feat, const aclTensor *rois, const aclTensor *per_roi, int64_t ph, int64_t pw,
                        const int64_t *bhwc, const char *name)
{
    if (feat->dt != ACL_FLOAT || rois->dt != ACL_FLOAT || per_roi->dt != ACL_FLOAT)
        return si_fail(ACLNN_ERR_PARAM_INVALID, "%s: DT_FLOAT only", name);
    if (rois->rank != 2 || rois->dims[0] != 6) return si_fail(ACLNN_ERR_PARAM_INVALID, "%s: rois must be [6, n]", name);
    if (ph < 1 || pw < 1) return si_fail(ACLNN_ERR_PARAM_INVALID, "%s: pooled %lldx%lld", name, (long long)ph, (long long)pw);
    return si_dims_are(per_roi, name, 4, (int64_t[]){rois->dims[1], ph, pw, bhwc[3]});
}

aclnnStatus si_rotated_compute(int grad, const aclTensor *in, const aclTensor *rois, const aclTensor *out,
                               const int64_t *ints, double scale, const bool *flags)
{
    const int64_t *bhwc = grad ? out->dims : in->dims;
    ref_roi_align_rotated_params p = rotated_params(bhwc, rois->dims[1], ints, scale, flags);
    double *vi = si_load(in), *vr = si_load(rois), *vo = calloc((size_t)(si_numel(4, out->dims) + 1), sizeof(double));
    if (vi && vr && vo) {
        if (grad) f64_roi_align_rotated_bwd__ref(&p, vi, vr, vo, NULL);
        else f64_roi_align_rotated_fwd__ref(&p, vi, vr, vo, NULL);
    }
    if (vo) si_store(out, vo);
    free(vi); free(vr); free(vo);
    return ACLNN_SUCCESS;
}

static aclnnStatus rotated_run(aclOpExecutor *e)
{
    return si_rotated_compute((int)e->i[3], &e->t[0], &e->t[1], &e->t[2], e->i, e->f, e->b);
}

static aclnnStatus rotated_stage(const aclTensor *in, const aclTensor *rois, aclTensor *out, int grad, int64_t ph, int64_t pw,
                                 float scale, int64_t sr, bool aligned, bool clockwise, uint64_t *ws, aclOpExecutor **executor)
{
    const char *name = grad ? "aclnnRoiAlignRotatedGrad" : "aclnnRoiAlignRotated";
    CHECK(si_check_tensor(in, name));
    CHECK(si_check_tensor(rois, "rois"));
    CHECK(si_check_tensor(out, name));
    CHECK(si_rotated_contract(grad ? out : in, rois, grad ? in : out, ph, pw, grad ? out->dims : in->dims, name));
    aclOpExecutor *e = si_executor(rotated_run);
    if (e) {
        e->t[0] = *in; e->t[1] = *rois; e->t[2] = *out;
        e->i[0] = ph; e->i[1] = pw; e->i[2] = sr; e->i[3] = grad; e->f = scale; e->b[0] = aligned; e->b[1] = clockwise;
    }
    return first_stage(e, ws, executor);
}

aclnnStatus aclnnRoiAlignRotatedGetWorkspaceSize(const aclTensor *x, const aclTensor *rois, int64_t pooledH, int64_t pooledW,
                                                float spatialScale, int64_t samplingRatio, bool aligned, bool clockwise,
                                                aclTensor *y, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    return rotated_stage(x, rois, y, 0, pooledH, pooledW, spatialScale, samplingRatio, aligned, clockwise, workspaceSize, executor);
}

aclnnStatus aclnnRoiAlignRotated(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return second_stage(workspace, workspaceSize, executor, "aclnnRoiAlignRotated");
}

aclnnStatus aclnnRoiAlignRotatedGradGetWorkspaceSize(const aclTensor *xGrad, const aclTensor *rois,
                                                    const aclIntArray *yGradShape, int64_t pooledH, int64_t pooledW,
                                                    float spatialScale, int64_t samplingRatio, bool aligned, bool clockwise,
                                                    aclTensor *yGrad, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (!yGradShape || !yGrad || yGradShape->n != 4) return si_fail(ACLNN_ERR_PARAM_INVALID, "yGradShape must hold 4 values");
    CHECK(si_dims_are(yGrad, "aclnnRoiAlignRotatedGrad yGrad (yGradShape, NHWC)", 4, yGradShape->v));
    return rotated_stage(xGrad, rois, yGrad, 1, pooledH, pooledW, spatialScale, samplingRatio, aligned, clockwise,
                         workspaceSize, executor);
}

aclnnStatus aclnnRoiAlignRotatedGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return second_stage(workspace, workspaceSize, executor, "aclnnRoiAlignRotatedGrad");
}
