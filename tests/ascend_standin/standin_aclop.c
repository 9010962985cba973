/* HOST STAND-IN (not CANN): aclopCompileAndExecute for the graph-IR ops the plugin runs that way.
 * The op type, the inputs and outputs in their IR order and the attributes by name (with the
 * proto's defaults) are the contract; sources above each op. */
#include <stdlib.h>
#include <string.h>

#include "conform_ref.h"
#include "standin.h"

#define CHECK(x) do { int rc_ = (x); if (rc_) return rc_; } while (0)
#define BAD ACL_ERROR_INVALID_PARAM

/* attribute `name` of kind, or its default (required: no default) */
static int get_attr(const aclopAttr *a, const char *op, const char *name, int kind, int required, const si_attr **out)
{
    const si_attr *s = si_attr_get(a, name);
    *out = NULL;
    if (!s && required) return si_fail(BAD, "%s: attribute %s is required", op, name);
    if (s && (int)s->kind != kind) return si_fail(BAD, "%s: attribute %s has the wrong type", op, name);
    *out = s;
    return 0;
}

static int attr_int(const aclopAttr *a, const char *op, const char *name, int required, int64_t dflt, int64_t *v)
{
    const si_attr *s = NULL;
    CHECK(get_attr(a, op, name, SI_INT, required, &s));
    *v = s ? s->i : dflt;
    return 0;
}

static int attr_list(const aclopAttr *a, const char *op, const char *name, int n, const int64_t *dflt, int64_t *v)
{
    const si_attr *s = NULL;
    CHECK(get_attr(a, op, name, SI_LIST, dflt == NULL, &s));
    if (s && s->n != n) return si_fail(BAD, "%s: attribute %s holds %d values, the proto says %d", op, name, s->n, n);
    memcpy(v, s ? s->list : dflt, sizeof(int64_t) * (size_t)n);
    return 0;
}

static int attr_bool(const aclopAttr *a, const char *op, const char *name, int required, int dflt, bool *v)
{
    const si_attr *s = NULL;
    CHECK(get_attr(a, op, name, SI_BOOL, required, &s));
    *v = s ? s->i != 0 : dflt;
    return 0;
}

static int attr_float(const aclopAttr *a, const char *op, const char *name, double *v)
{
    const si_attr *s = NULL;
    CHECK(get_attr(a, op, name, SI_FLOAT, 1, &s));
    *v = s->f;
    return 0;
}

/* ---- DeformableOffsets(x, offsets) -> y and DeformableOffsetsGrad(grad, x, offsets) -> (grad_x,
   grad_offsets) (hicann/ops-nn conv/deformable_offsets/op_graph/deformable_offsets_proto.h and
   conv/deformable_offsets_grad/op_graph/deformable_offsets_grad_proto.h:54-67): x NHWC, offsets
   [N, Ho, Wo, 3*dg*kh*kw] (x offsets, y offsets, masks); strides (4), pads (4, top bottom left
   right), ksize (2) required; dilations default 1,1,1,1; data_format default "NHWC" for the
   forward and "NCHW" for the grad (it picks the H, W entries of strides and dilations);
   deformable_groups default 1; modulated default true, only true supported; fp16/fp32. ---- */
static int deform_params(const aclopAttr *a, const char *op, const aclTensor *x, const aclTensor *off, int grad,
                         ref_deformable_params *p)
{
    int64_t st[4], pads[4], ks[2], dil[4];
    const int64_t ones[4] = {1, 1, 1, 1};
    const si_attr *fmt = NULL;
    bool modulated;
    int64_t dg;
    CHECK(attr_list(a, op, "strides", 4, NULL, st));
    CHECK(attr_list(a, op, "pads", 4, NULL, pads));
    CHECK(attr_list(a, op, "ksize", 2, NULL, ks));
    CHECK(attr_list(a, op, "dilations", 4, ones, dil));
    CHECK(get_attr(a, op, "data_format", SI_STRING, 0, &fmt));
    CHECK(attr_int(a, op, "deformable_groups", 0, 1, &dg));
    CHECK(attr_bool(a, op, "modulated", 0, 1, &modulated));
    const char *df = fmt ? fmt->s : grad ? "NCHW" : "NHWC";
    int h = !strcmp(df, "NHWC") ? 1 : 2;
    if (strcmp(df, "NHWC") && strcmp(df, "NCHW")) return si_fail(BAD, "%s: data_format %s", op, df);
    if (!modulated) return si_fail(BAD, "%s: modulated = false is not supported", op);
    if (x->dt != ACL_FLOAT && x->dt != ACL_FLOAT16) return si_fail(BAD, "%s: fp16 or fp32", op);
    if (x->rank != 4 || off->rank != 4 || off->dims[0] != x->dims[0] || dg < 1 || off->dims[3] != 3 * dg * ks[0] * ks[1])
        return si_fail(BAD, "%s: x [N, H, W, C], offsets [N, Ho, Wo, 3*dg*kh*kw]", op);
    *p = (ref_deformable_params){x->dims[0], x->dims[1], x->dims[2], x->dims[3], ks[0], ks[1], st[h], st[h + 1],
                                 dil[h], dil[h + 1], pads[0], pads[1], pads[2], pads[3], dg, off->dims[1], off->dims[2]};
    return 0;
}

static int deformable(const aclopAttr *a, int grad, aclTensor *in, aclTensor *out)
{
    const char *op = grad ? "DeformableOffsetsGrad" : "DeformableOffsets";
    const aclTensor *x = &in[grad], *off = &in[grad + 1];
    ref_deformable_params p;
    CHECK(deform_params(a, op, x, off, grad, &p));
    const int64_t ydims[4] = {p.N, p.Ho * p.kh, p.Wo * p.kw, p.C};
    CHECK(si_dims_are(grad ? &in[0] : &out[0], grad ? "grad" : "y", 4, ydims));
    if (grad) CHECK(si_dims_are(&out[0], "grad_x", 4, x->dims) || si_dims_are(&out[1], "grad_offsets", 4, off->dims));
    double *vx = si_load(x), *vo = si_load(off), *vg = grad ? si_load(&in[0]) : NULL;
    double *o0 = calloc((size_t)(si_numel(4, out[0].dims) + 1), sizeof(double));
    double *o1 = grad ? calloc((size_t)(si_numel(4, out[1].dims) + 1), sizeof(double)) : NULL;
    int ok = vx && vo && o0 && (!grad || (vg && o1));
    if (ok && grad) f64_deformable_offsets_bwd__ref(&p, vg, vx, vo, o0, o1, NULL, NULL);
    else if (ok) f64_deformable_offsets_fwd__ref(&p, vx, vo, o0, NULL);
    if (ok) si_store(&out[0], o0);
    if (ok && grad) si_store(&out[1], o1);
    free(vx); free(vo); free(vg); free(o0); free(o1);
    return ok ? ACL_SUCCESS : si_fail(BAD, "%s: out of memory", op);
}

/* ---- RoiAlignRotated(x, rois) -> y and RoiAlignRotatedGrad(x_grad, rois) -> y_grad (hicann/ops-cv
   objdetect/roi_align_rotated{,_grad}/op_host/roi_align_rotated{,_grad}_def.cpp; mmcv's adapter sets every attribute:
   open-mmlab/mmcv mmcv/ops/csrc/pytorch/npu/roi_align_rotated_npu.cpp): the layouts of
   standin_aclnn.c; y_grad_shape is the NHWC shape of y_grad. ---- */
static int rotated(const aclopAttr *a, int grad, aclTensor *in, aclTensor *out)
{
    const char *op = grad ? "RoiAlignRotatedGrad" : "RoiAlignRotated";
    int64_t ints[3];
    double scale;
    bool flags[2];
    CHECK(attr_int(a, op, "pooled_h", 1, 0, &ints[0]));
    CHECK(attr_int(a, op, "pooled_w", 1, 0, &ints[1]));
    CHECK(attr_int(a, op, "sampling_ratio", 1, 0, &ints[2]));
    CHECK(attr_float(a, op, "spatial_scale", &scale));
    CHECK(attr_bool(a, op, "aligned", 1, 0, &flags[0]));
    CHECK(attr_bool(a, op, "clockwise", 1, 0, &flags[1]));
    if (grad) {
        int64_t shape[4];
        CHECK(attr_list(a, op, "y_grad_shape", 4, NULL, shape));
        CHECK(si_dims_are(&out[0], "y_grad (y_grad_shape, NHWC)", 4, shape));
    }
    const aclTensor *feat = grad ? &out[0] : &in[0], *per_roi = grad ? &in[0] : &out[0];
    CHECK(si_rotated_contract(feat, &in[1], per_roi, ints[0], ints[1], feat->dims, op) ? BAD : 0);
    return si_rotated_compute(grad, &in[0], &in[1], &out[0], ints, scale, flags) ? BAD : ACL_SUCCESS;
}

/* ---- ROIAlign(features, rois) -> y and ROIAlignGrad(ydiff, rois) -> xdiff (hicann/ops-cv
   objdetect/roi_align/op_graph/roi_align_proto.h; Ascend/op-plugin op_plugin/ops/aclops/
   RoiAlignKernelNpu.cpp:43-84, RoiAlignBackwardKernelNpu.cpp:33-74): rois [K, 5]; spatial_scale,
   pooled_height, pooled_width required; sample_num default 2; roi_end_mode default 1: 0 aligned
   false, 1 aligned false with the end pixel counted in, 2 and 3 aligned (docs/ops/roi_align.md);
   ROIAlignGrad takes xdiff_shape. The proto's features are 5HD; this stand-in reads NCHW. ---- */
static int roi_align_graph(const aclopAttr *a, int grad, aclTensor *in, aclTensor *out)
{
    const char *op = grad ? "ROIAlignGrad" : "ROIAlign";
    int64_t ph, pw, sn, mode, xs[4];
    double scale;
    CHECK(attr_float(a, op, "spatial_scale", &scale));
    CHECK(attr_int(a, op, "pooled_height", 1, 0, &ph));
    CHECK(attr_int(a, op, "pooled_width", 1, 0, &pw));
    CHECK(attr_int(a, op, "sample_num", 0, 2, &sn));
    CHECK(attr_int(a, op, "roi_end_mode", 0, 1, &mode));
    if (grad) CHECK(attr_list(a, op, "xdiff_shape", 4, NULL, xs));
    const aclTensor *rois = &in[1], *feat = grad ? &out[0] : &in[0], *per_roi = grad ? &in[0] : &out[0];
    if (mode < 0 || mode > 3 || rois->rank != 2 || rois->dims[1] != 5 || feat->rank != 4)
        return si_fail(BAD, "%s: roi_end_mode %lld, rois [K, 5], 4-D features", op, (long long)mode);
    if (grad) CHECK(si_dims_are(&out[0], "xdiff (xdiff_shape)", 4, xs) ? BAD : 0);
    CHECK(si_dims_are(per_roi, op, 4, (int64_t[]){rois->dims[0], feat->dims[1], ph, pw}) ? BAD : 0);
    ref_roi_align_params p = {feat->dims[0], feat->dims[1], feat->dims[2], feat->dims[3], rois->dims[0], ph, pw, scale, sn,
                              mode >= 2, mode == 1};
    double *vi = si_load(&in[0]), *vr = si_load(rois), *vo = calloc((size_t)(si_numel(4, out[0].dims) + 1), sizeof(double));
    if (vi && vr && vo) {
        if (grad) f64_roi_align_bwd__ref(&p, vi, vr, vo, NULL);
        else f64_roi_align_fwd__ref(&p, vi, vr, vo, NULL);
        si_store(&out[0], vo);
    }
    free(vi); free(vr); free(vo);
    return ACL_SUCCESS;
}

aclError aclopCompileAndExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                const aclDataBuffer *const inputs[], int numOutputs, const aclTensorDesc *const outputDesc[],
                                aclDataBuffer *const outputs[], const aclopAttr *attr, aclopEngineType engineType,
                                aclopCompileType compileFlag, const char *opPath, aclrtStream stream)
{
    static const struct { const char *name; int n_in, n_out, grad; int (*fn)(const aclopAttr *, int, aclTensor *, aclTensor *); } ops[] = {
        {"DeformableOffsets", 2, 1, 0, deformable}, {"DeformableOffsetsGrad", 3, 2, 1, deformable},
        {"RoiAlignRotated", 2, 1, 0, rotated},      {"RoiAlignRotatedGrad", 2, 1, 1, rotated},
        {"ROIAlign", 2, 1, 0, roi_align_graph},     {"ROIAlignGrad", 2, 1, 1, roi_align_graph}};
    if (!opType) return si_fail(BAD, "aclopCompileAndExecute: no op type");
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        if (strcmp(opType, ops[k].name)) continue;
        if (numInputs != ops[k].n_in || numOutputs != ops[k].n_out)
            return si_fail(BAD, "%s: %d inputs and %d outputs, the IR has %d and %d", opType, numInputs, numOutputs,
                           ops[k].n_in, ops[k].n_out);
        aclTensor in[3], out[2];
        for (int i = 0; i < numInputs; i++) CHECK(si_tensor_of(inputDesc[i], inputs[i], &in[i], opType));
        for (int o = 0; o < numOutputs; o++) CHECK(si_tensor_of(outputDesc[o], outputs[o], &out[o], opType));
        return ops[k].fn(attr, ops[k].grad, in, out);
    }
    return si_fail(BAD, "aclopCompileAndExecute: op type %s is not one the stand-in implements", opType);
}
