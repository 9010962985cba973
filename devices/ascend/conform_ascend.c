/* conform-ascend: an ABI-2 conform plugin that runs the eight ops on an Ascend NPU through the
 * interfaces the seed documents describe (docs/ascend.md, with the public source of each call):
 *   roi_align               aclnnRoiAlignV2 (roi_end_mode 1: graph op ROIAlign)
 *   roi_align_v2_backward   aclnnRoiAlignV2Backward (roi_end_mode 1: graph op ROIAlignGrad)
 *   roi_align_rotated(_grad) aclnnRoiAlignRotated(Grad) where the toolkit ships the header, else
 *                           the graph ops RoiAlignRotated(Grad) (aclnn removed in ops-cv 9.0, 1809a439)
 *   grid_sampler_2d(_backward) aclnnGridSampler2D(Backward), every dtype they list
 *   deformable_offsets(_grad) graph ops DeformableOffsets(Grad) (no aclnn on A2/A3)
 * Graph ops go through aclopCompileAndExecute. conform's layouts are marshalled to each kernel's:
 * the rotated kernels take x NHWC and rois [6, n]; the deformable ones NHWC with strides and
 * dilations in NHWC order.
 *
 * Built against the CANN toolkit (make ascend-plugin) or, to test the marshalling on a host
 * without an NPU, against the stand-in tests/ascend_standin (make ascend-standin); its version
 * string says which. Not yet run on an NPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_op_compiler.h"
#include "aclnnop/aclnn_grid_sampler2d.h"
#include "aclnnop/aclnn_grid_sampler2d_backward.h"
#include "aclnnop/aclnn_roi_align_v2.h"
#include "aclnnop/aclnn_roi_align_v2_backward.h"
#include "conform_plugin.h"

#if !defined(CONFORM_ASCEND_ROTATED_ACLOP) && __has_include("aclnnop/aclnn_roi_align_rotated_grad.h")
#define ROTATED_ACLNN 1
#include "aclnnop/aclnn_roi_align_rotated.h"
#include "aclnnop/aclnn_roi_align_rotated_grad.h"
#else
#define ROTATED_ACLNN 0
#endif

/* Planted marshalling faults (tests/ascend_standin/faults.sh builds one plugin per fault and
   requires the smoke suite to fail): 0 in every real build. */
#ifndef ASCEND_FAULT
#define ASCEND_FAULT 0
#endif
#define FAULT_POOLED_SWAP 1   /* roi_align: pooledHeight and pooledWidth exchanged */
#define FAULT_NCHW_FOR_NHWC 2 /* roi_align_rotated(_grad): NCHW data where the kernel takes NHWC */
#define FAULT_ROIS_NOT_T 3    /* roi_align_rotated(_grad): rois left [n, 6], not transposed to [6, n] */
#define FAULT_ATTR_ORDER 4    /* deformable_offsets(_grad): strides in NCHW order under data_format NHWC */

#define MAXR 8

/* ---- the device session: one per process (conform runs a plugin in a child per case) ---------- */
static aclrtStream stream;
static int session = -1; /* -1 not tried, 0 ready, else the failed call's code */

static int open_session(void)
{
    if (session >= 0) return session;
    const char *dev = getenv("CONFORM_ASCEND_DEVICE");
    int rc = aclInit(NULL);
    if (!rc) rc = aclrtSetDevice(dev ? atoi(dev) : 0);
    if (!rc) rc = aclrtCreateStream(&stream);
    if (rc) fprintf(stderr, "conform-ascend: ACL initialisation failed with %d\n", rc);
    session = rc ? rc : 0;
    return session;
}

/* ---- arguments by name ------------------------------------------------------------------------ */
typedef struct {
    int n_attrs, n_inputs, n_outputs;
    const conform_plugin_attr *attrs;
    const conform_tensor_in *in;
    conform_tensor_out *out;
} call_t;

static const conform_plugin_attr *attr(const call_t *c, const char *name)
{
    for (int a = 0; a < c->n_attrs; a++)
        if (!strcmp(c->attrs[a].name, name)) return &c->attrs[a];
    return NULL;
}
static int64_t ival(const call_t *c, const char *name, int64_t dflt) { const conform_plugin_attr *a = attr(c, name); return a ? a->i : dflt; }
static double fval(const call_t *c, const char *name, double dflt) { const conform_plugin_attr *a = attr(c, name); return a ? a->f : dflt; }
static const int64_t *lval(const call_t *c, const char *name) { const conform_plugin_attr *a = attr(c, name); return a ? a->list : NULL; }
static int nhwc(const call_t *c) { const conform_plugin_attr *a = attr(c, "data_format"); return a && a->s && !strcmp(a->s, "NHWC"); }

static aclDataType acl_dtype(conform_dtype d)
{
    return d == CONFORM_DTYPE_FLOAT16 ? ACL_FLOAT16 : d == CONFORM_DTYPE_BFLOAT16 ? ACL_BF16 : d == CONFORM_DTYPE_FLOAT64 ? ACL_DOUBLE : ACL_FLOAT;
}
static size_t itemsize(conform_dtype d) { return d == CONFORM_DTYPE_FLOAT64 ? 8 : d == CONFORM_DTYPE_FLOAT32 ? 4 : 2; }

/* ---- device tensors --------------------------------------------------------------------------- */
typedef struct {
    int rank;
    int64_t dims[MAXR];
    conform_dtype dt;
    void *dev;
    size_t bytes;
} dtensor;

static int64_t numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    return n;
}

/* host data (C order, dims) permuted by perm (out dim d = in dim perm[d]) into dst */
static void permute(const void *src, void *dst, int rank, const int64_t *dims, const int *perm, size_t item)
{
    int64_t n = numel(rank, dims), in_stride[MAXR], idx[MAXR] = {0}, odims[MAXR];
    for (int d = rank - 1, s = 1; d >= 0; s *= (int)dims[d], d--) in_stride[d] = s;
    for (int d = 0; d < rank; d++) odims[d] = dims[perm[d]];
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int d = 0; d < rank; d++) off += idx[d] * in_stride[perm[d]];
        memcpy((char *)dst + (size_t)k * item, (const char *)src + (size_t)off * item, item);
        for (int d = rank - 1; d >= 0 && ++idx[d] == odims[d]; d--) idx[d] = 0;
    }
}

/* a device tensor of dims; from host data when src (permuted by perm when given), else zeroed */
static int upload(dtensor *t, int rank, const int64_t *dims, conform_dtype dt, const void *src, const int *perm)
{
    *t = (dtensor){rank, {0}, dt, NULL, 0};
    for (int d = 0; d < rank; d++) t->dims[d] = perm ? dims[perm[d]] : dims[d];
    t->bytes = (size_t)numel(rank, dims) * itemsize(dt);
    void *host = calloc(1, t->bytes ? t->bytes : 1);
    if (!host) return -1;
    if (src && perm) permute(src, host, rank, dims, perm, itemsize(dt));
    else if (src) memcpy(host, src, t->bytes);
    int rc = aclrtMalloc(&t->dev, t->bytes ? t->bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST);
    if (!rc && t->bytes) rc = aclrtMemcpy(t->dev, t->bytes, host, t->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    free(host);
    return rc;
}

/* the device tensor into dst (permuted by perm when given) */
static int download(const dtensor *t, void *dst, const int *perm)
{
    if (!dst || !t->bytes) return 0;
    void *host = malloc(t->bytes);
    int rc = host ? aclrtMemcpy(host, t->bytes, t->dev, t->bytes, ACL_MEMCPY_DEVICE_TO_HOST) : -1;
    if (!rc && perm) permute(host, dst, t->rank, t->dims, perm, itemsize(t->dt));
    else if (!rc) memcpy(dst, host, t->bytes);
    free(host);
    return rc;
}

static void release(dtensor *t, int n)
{
    for (int k = 0; k < n; k++)
        if (t[k].dev) aclrtFree(t[k].dev);
}

/* an aclnn tensor over a device tensor: C-order strides, storage dims = view dims, offset 0 */
static aclTensor *nn_tensor(const dtensor *t, aclFormat fmt)
{
    int64_t strides[MAXR];
    for (int d = t->rank - 1, s = 1; d >= 0; s *= (int)t->dims[d], d--) strides[d] = s;
    return aclCreateTensor(t->dims, (uint64_t)t->rank, acl_dtype(t->dt), strides, 0, fmt, t->dims, (uint64_t)t->rank, t->dev);
}

/* The two stages of an aclnn call, then a synchronisation: GetWorkspaceSize's status, else the run's. */
#define ACLNN_RUN(rc, op, ...)                                                                                      \
    do {                                                                                                          \
        uint64_t ws_ = 0;                                                                                         \
        aclOpExecutor *ex_ = NULL;                                                                                \
        void *w_ = NULL;                                                                                          \
        rc = op##GetWorkspaceSize(__VA_ARGS__, &ws_, &ex_);                                                       \
        if (!rc && ws_) rc = aclrtMalloc(&w_, ws_, ACL_MEM_MALLOC_HUGE_FIRST);                                    \
        if (!rc) rc = op(w_, ws_, ex_, stream);                                                                   \
        if (!rc) rc = aclrtSynchronizeStream(stream);                                                             \
        if (w_) aclrtFree(w_);                                                                                    \
        if (rc) fprintf(stderr, "conform-ascend: %s returned %d\n", #op, (int)rc);                               \
    } while (0)

/* A graph-IR op through aclopCompileAndExecute (what torch_npu's OpCommand does: Ascend/pytorch
   torch_npu/csrc/framework/OpParamMaker.cpp:317-345): ACL_ENGINE_SYS, ACL_COMPILE_SYS, no op path. */
static int graph_op(const char *type, int n_in, const dtensor *in, int n_out, const dtensor *out, aclFormat fmt,
                    const aclopAttr *a)
{
    aclTensorDesc *din[3] = {0}, *dout[2] = {0};
    aclDataBuffer *bin[3] = {0}, *bout[2] = {0};
    int rc = 0;
    for (int k = 0; k < n_in; k++) {
        din[k] = aclCreateTensorDesc(acl_dtype(in[k].dt), in[k].rank, in[k].dims, fmt);
        bin[k] = aclCreateDataBuffer(in[k].dev, in[k].bytes);
        rc |= !din[k] || !bin[k];
    }
    for (int k = 0; k < n_out; k++) {
        dout[k] = aclCreateTensorDesc(acl_dtype(out[k].dt), out[k].rank, out[k].dims, fmt);
        bout[k] = aclCreateDataBuffer(out[k].dev, out[k].bytes);
        rc |= !dout[k] || !bout[k];
    }
    if (!rc) rc = aclopCompileAndExecute(type, n_in, (const aclTensorDesc *const *)din, (const aclDataBuffer *const *)bin, n_out,
                                         (const aclTensorDesc *const *)dout, bout, a, ACL_ENGINE_SYS, ACL_COMPILE_SYS, NULL, stream);
    if (!rc) rc = aclrtSynchronizeStream(stream);
    if (rc) fprintf(stderr, "conform-ascend: aclopCompileAndExecute(%s) returned %d\n", type, rc);
    for (int k = 0; k < 3; k++) { if (din[k]) aclDestroyTensorDesc(din[k]); if (bin[k]) aclDestroyDataBuffer(bin[k]); }
    for (int k = 0; k < 2; k++) { if (dout[k]) aclDestroyTensorDesc(dout[k]); if (bout[k]) aclDestroyDataBuffer(bout[k]); }
    return rc;
}

/* ---- roi_align and roi_align_v2_backward ------------------------------------------------------
   aclnnRoiAlignV2(self NCHW, boxes ND [K, 5], pooledHeight, pooledWidth, spatialScale,
   samplingRatio, aligned, out NCHW) and aclnnRoiAlignV2Backward(gradOutput, boxes, inputShape,
   pooledHeight, pooledWidth, ...) (hicann/ops-cv objdetect/roi_align/op_host/op_api/aclnn_roi_align_v2.h,
   objdetect/roi_align_grad/op_api/aclnn_roi_align_v2_backward.h). aclnn maps aligned to
   roi_end_mode 2 / 0 (and conform computes 3 as 2); roi_end_mode 1 has no aclnn form, so it goes to
   the IR ops ROIAlign / ROIAlignGrad, which take it as an attribute (roi_align_proto.h). */
static aclopAttr *roi_graph_attrs(const call_t *c, int64_t ph, int64_t pw, const int64_t *xdiff_shape)
{
    aclopAttr *a = aclopCreateAttr();
    if (!a) return NULL;
    aclopSetAttrFloat(a, "spatial_scale", (float)fval(c, "spatial_scale", 1.0));
    aclopSetAttrInt(a, "pooled_height", ph);
    aclopSetAttrInt(a, "pooled_width", pw);
    aclopSetAttrInt(a, "sample_num", ival(c, "sampling_ratio", 0));
    aclopSetAttrInt(a, "roi_end_mode", 1);
    if (xdiff_shape) aclopSetAttrListInt(a, "xdiff_shape", 4, xdiff_shape);
    return a;
}

static int roi_align_any(const call_t *c, int grad)
{
    const conform_tensor_in *f = &c->in[0], *rois = &c->in[1];
    const conform_tensor_out *o = &c->out[0];
    int64_t ph = ival(c, grad ? "pooled_height" : "pooled_h", 1), pw = ival(c, grad ? "pooled_width" : "pooled_w", 1);
    int64_t mode = ival(c, "roi_end_mode", -1), sr = ival(c, "sampling_ratio", 0);
    bool aligned = mode >= 0 ? mode >= 2 : ival(c, "aligned", 1) != 0;
    float scale = (float)fval(c, "spatial_scale", 1.0);
    dtensor t[3] = {0};
    int rc = upload(&t[0], 4, f->dims, f->dtype, f->data, NULL) || upload(&t[1], 2, rois->dims, rois->dtype, rois->data, NULL) ||
             upload(&t[2], 4, o->dims, o->dtype, NULL, NULL);
    if (!rc && mode == 1) {
        aclopAttr *a = roi_graph_attrs(c, ph, pw, grad ? o->dims : NULL);
        rc = a ? graph_op(grad ? "ROIAlignGrad" : "ROIAlign", 2, t, 1, &t[2], ACL_FORMAT_NCHW, a) : -1;
        if (a) aclopDestroyAttr(a);
    } else if (!rc) {
        int64_t h = ASCEND_FAULT == FAULT_POOLED_SWAP ? pw : ph, w = ASCEND_FAULT == FAULT_POOLED_SWAP ? ph : pw;
        aclTensor *x = nn_tensor(&t[0], ACL_FORMAT_NCHW), *b = nn_tensor(&t[1], ACL_FORMAT_ND), *y = nn_tensor(&t[2], ACL_FORMAT_NCHW);
        aclIntArray *shape = aclCreateIntArray(o->dims, 4);
        if (!x || !b || !y || !shape) rc = -1;
        else if (grad) ACLNN_RUN(rc, aclnnRoiAlignV2Backward, x, b, shape, h, w, scale, sr, aligned, y);
        else ACLNN_RUN(rc, aclnnRoiAlignV2, x, b, h, w, scale, sr, aligned, y);
        if (x) aclDestroyTensor(x);
        if (b) aclDestroyTensor(b);
        if (y) aclDestroyTensor(y);
        if (shape) aclDestroyIntArray(shape);
    }
    if (!rc) rc = download(&t[2], o->data, NULL);
    release(t, 3);
    return rc;
}

/* ---- roi_align_rotated and roi_align_rotated_grad ---------------------------------------------
   The kernels read x (and x_grad, y, y_grad) NHWC and rois [6, n] (hicann/ops-cv
   objdetect/roi_align_rotated/op_host/roi_align_rotated_infershape.cpp; the aclnn example before
   ops-cv 1809a439 creates xGrad {2,2,2,6} and rois {6,2}); conform's data_format NCHW cases are
   permuted here and back. Attribute order of the aclnn: pooledH, pooledW, spatialScale,
   samplingRatio, aligned, clockwise. */
static const int TO_NHWC[4] = {0, 2, 3, 1}, TO_NCHW[4] = {0, 3, 1, 2}, T2[2] = {1, 0};

static int rotated_kernel(const call_t *c, int grad, dtensor *t)
{
    int64_t ph = ival(c, "pooled_h", 1), pw = ival(c, "pooled_w", 1), sr = ival(c, "sampling_ratio", 0);
    float scale = (float)fval(c, "spatial_scale", 1.0);
    bool aligned = ival(c, "aligned", 1) != 0, clockwise = ival(c, "clockwise", 0) != 0;
    int rc = 0;
#if ROTATED_ACLNN
    aclTensor *x = nn_tensor(&t[0], ACL_FORMAT_ND), *r = nn_tensor(&t[1], ACL_FORMAT_ND), *y = nn_tensor(&t[2], ACL_FORMAT_ND);
    aclIntArray *shape = aclCreateIntArray(t[2].dims, 4);
    if (!x || !r || !y || !shape) rc = -1;
    else if (grad) ACLNN_RUN(rc, aclnnRoiAlignRotatedGrad, x, r, shape, ph, pw, scale, sr, aligned, clockwise, y);
    else ACLNN_RUN(rc, aclnnRoiAlignRotated, x, r, ph, pw, scale, sr, aligned, clockwise, y);
    if (x) aclDestroyTensor(x);
    if (r) aclDestroyTensor(r);
    if (y) aclDestroyTensor(y);
    if (shape) aclDestroyIntArray(shape);
#else
    aclopAttr *a = aclopCreateAttr();
    if (!a) return -1;
    if (grad) aclopSetAttrListInt(a, "y_grad_shape", 4, t[2].dims);
    aclopSetAttrInt(a, "pooled_h", ph);
    aclopSetAttrInt(a, "pooled_w", pw);
    aclopSetAttrFloat(a, "spatial_scale", scale);
    aclopSetAttrInt(a, "sampling_ratio", sr);
    aclopSetAttrBool(a, "aligned", aligned);
    aclopSetAttrBool(a, "clockwise", clockwise);
    rc = graph_op(grad ? "RoiAlignRotatedGrad" : "RoiAlignRotated", 2, t, 1, &t[2], ACL_FORMAT_ND, a);
    aclopDestroyAttr(a);
#endif
    return rc;
}

static int rotated_any(const call_t *c, int grad)
{
    const conform_tensor_in *x = &c->in[0], *rois = &c->in[1];
    const conform_tensor_out *o = &c->out[0];
    int nchw = !nhwc(c);
    const int *px = nchw && ASCEND_FAULT != FAULT_NCHW_FOR_NHWC ? TO_NHWC : NULL;
    const int *pr = nchw && ASCEND_FAULT != FAULT_ROIS_NOT_T ? T2 : NULL;
    dtensor t[3] = {0};
    int rc = upload(&t[0], 4, x->dims, x->dtype, x->data, px) || upload(&t[1], 2, rois->dims, rois->dtype, rois->data, pr) ||
             upload(&t[2], 4, o->dims, o->dtype, NULL, nchw ? TO_NHWC : NULL);
    if (!rc) rc = rotated_kernel(c, grad, t);
    if (!rc) rc = download(&t[2], o->data, nchw ? TO_NCHW : NULL);
    release(t, 3);
    return rc;
}

/* ---- grid_sampler_2d and grid_sampler_2d_backward ---------------------------------------------
   aclnnGridSampler2D(input, grid, interpolationMode, paddingMode, alignCorners, out) and
   aclnnGridSampler2DBackward(gradOutput, input, grid, ..., outputMask[2], inputGrad, gridGrad)
   (hicann/ops-cv image/grid_sample/op_api/aclnn_grid_sampler2d.h,
   image/grid_sampler2_d_grad/op_host/op_api/aclnn_grid_sampler2d_backward.h): conform's layouts
   and mode numbers are the kernel's. A gradient not asked for is computed into scratch. */
static int grid_any(const call_t *c, int grad)
{
    const int64_t *mask = lval(c, "output_mask");
    bool m[2] = {mask ? mask[0] != 0 : true, mask ? mask[1] != 0 : true};
    int64_t interp = ival(c, "interpolation_mode", 0), pad = ival(c, "padding_mode", 0);
    bool ac = ival(c, "align_corners", 0) != 0;
    dtensor t[5] = {0};
    int n_in = grad ? 3 : 2, rc = 0, n = n_in + (grad ? 2 : 1);
    for (int k = 0; k < n_in && !rc; k++) rc = upload(&t[k], c->in[k].rank, c->in[k].dims, c->in[k].dtype, c->in[k].data, NULL);
    for (int k = n_in; k < n && !rc; k++) {
        const conform_tensor_in *like = grad ? &c->in[k - 2] : NULL;   /* input_grad like input, grid_grad like grid */
        rc = grad ? upload(&t[k], like->rank, like->dims, like->dtype, NULL, NULL)
                  : upload(&t[k], c->out[0].rank, c->out[0].dims, c->out[0].dtype, NULL, NULL);
    }
    aclTensor *a[5] = {0};
    for (int k = 0; k < n && !rc; k++) rc = !(a[k] = nn_tensor(&t[k], ACL_FORMAT_ND));
    aclBoolArray *mk = grad ? aclCreateBoolArray(m, 2) : NULL;
    if (!rc && grad && (m[0] || m[1])) ACLNN_RUN(rc, aclnnGridSampler2DBackward, a[0], a[1], a[2], interp, pad, ac, mk, a[3], a[4]);
    else if (!rc && !grad) ACLNN_RUN(rc, aclnnGridSampler2D, a[0], a[1], interp, pad, ac, a[2]);
    for (int k = 0; k < n; k++) if (a[k]) aclDestroyTensor(a[k]);
    if (mk) aclDestroyBoolArray(mk);
    for (int o = 0; o < c->n_outputs && !rc; o++) rc = download(&t[n_in + o], c->out[o].data, NULL);
    release(t, n);
    return rc;
}

/* ---- deformable_offsets and deformable_offsets_grad --------------------------------------------
   Graph ops DeformableOffsets(x, offsets) -> y and DeformableOffsetsGrad(grad, x, offsets) ->
   (grad_x, grad_offsets), NHWC (hicann/ops-nn conv/deformable_offsets/op_graph/deformable_offsets_proto.h,
   conv/deformable_offsets_grad/op_graph/deformable_offsets_grad_proto.h:54-67); no aclnn on A2/A3
   (both are aclnn_exclude, ascend950 only: op_host/CMakeLists.txt:10-16). Strides and dilations
   are sent in NHWC order with data_format "NHWC", as torch_npu does
   (op_plugin/ops/aclops/DeformableConv2dKernelNpu.cpp:71-123); the grad's proto defaults to NCHW,
   so data_format is always set. */
static aclopAttr *deform_attrs(const call_t *c)
{
    const int64_t ones[4] = {1, 1, 1, 1}, zeros[4] = {0, 0, 0, 0};
    const int64_t *s = lval(c, "strides"), *d = lval(c, "dilations"), *p = lval(c, "pads"), *k = lval(c, "ksize");
    s = s ? s : ones;
    d = d ? d : ones;
    int h = nhwc(c) || !attr(c, "data_format") ? 1 : 2;   /* where conform's data_format puts H */
    int64_t st[4] = {1, s[h], s[h + 1], 1}, dl[4] = {1, d[h], d[h + 1], 1};
    if (ASCEND_FAULT == FAULT_ATTR_ORDER) { st[1] = 1; st[2] = s[h]; st[3] = s[h + 1]; }
    aclopAttr *a = aclopCreateAttr();
    if (!a || !k) return a;
    aclopSetAttrListInt(a, "strides", 4, st);
    aclopSetAttrListInt(a, "pads", 4, p ? p : zeros);
    aclopSetAttrListInt(a, "ksize", 2, k);
    aclopSetAttrListInt(a, "dilations", 4, dl);
    aclopSetAttrString(a, "data_format", "NHWC");
    aclopSetAttrInt(a, "deformable_groups", ival(c, "deformable_groups", 1));
    aclopSetAttrBool(a, "modulated", (uint8_t)(ival(c, "modulated", 1) != 0));
    return a;
}

static int deformable_any(const call_t *c, int grad)
{
    dtensor t[5] = {0};
    int n_in = grad ? 3 : 2, n_out = grad ? 2 : 1, rc = 0;
    for (int k = 0; k < n_in && !rc; k++) rc = upload(&t[k], 4, c->in[k].dims, c->in[k].dtype, c->in[k].data, NULL);
    for (int o = 0; o < n_out && !rc; o++) rc = upload(&t[n_in + o], 4, c->out[o].dims, c->out[o].dtype, NULL, NULL);
    aclopAttr *a = rc ? NULL : deform_attrs(c);
    if (!rc) rc = a ? graph_op(grad ? "DeformableOffsetsGrad" : "DeformableOffsets", n_in, t, n_out, &t[n_in], ACL_FORMAT_NHWC, a) : -1;
    if (a) aclopDestroyAttr(a);
    for (int o = 0; o < n_out && !rc; o++) rc = download(&t[n_in + o], c->out[o].data, NULL);
    release(t, n_in + n_out);
    return rc;
}

/* ---- the plugin ----------------------------------------------------------------------------- */
#define F32 (1u << CONFORM_DTYPE_FLOAT32)
#define F16 (1u << CONFORM_DTYPE_FLOAT16)
#define BF16 (1u << CONFORM_DTYPE_BFLOAT16)
#define F64 (1u << CONFORM_DTYPE_FLOAT64)

/* op, its route, the dtypes the kernel's contract lists */
static const struct {
    const char *op;
    int (*fn)(const call_t *c, int grad);
    int grad;
    unsigned dtypes;
} OPS[] = {
    {"roi_align", roi_align_any, 0, F32 | F16},                      /* aclnnRoiAlignV2: FLOAT, FLOAT16 */
    {"roi_align_v2_backward", roi_align_any, 1, F32},                /* FLOAT only */
    {"roi_align_rotated", rotated_any, 0, F32},                      /* DT_FLOAT only */
    {"roi_align_rotated_grad", rotated_any, 1, F32},
    {"grid_sampler_2d", grid_any, 0, F32 | F16 | BF16 | F64},        /* bicubic + DOUBLE is refused */
    {"grid_sampler_2d_backward", grid_any, 1, F32 | F16 | BF16 | F64},
    {"deformable_offsets", deformable_any, 0, F32 | F16},            /* outputs fp16 / fp32 */
    {"deformable_offsets_grad", deformable_any, 1, F32 | F16},
};
#define N_OPS (int)(sizeof OPS / sizeof OPS[0])

static int find(const char *op)
{
    for (int k = 0; k < N_OPS; k++)
        if (!strcmp(OPS[k].op, op)) return k;
    return -1;
}

static int supports(const char *op, conform_dtype dtype)
{
    int k = find(op);
    return k >= 0 && (OPS[k].dtypes >> dtype & 1u);
}

static int run(const char *op, int n_attrs, const conform_plugin_attr *attrs, int n_inputs, const conform_tensor_in *inputs,
               int n_outputs, conform_tensor_out *outputs)
{
    int k = find(op);
    if (k < 0) return -1;
    if (open_session()) return -2;
    call_t c = {n_attrs, n_inputs, n_outputs, attrs, inputs, outputs};
    return OPS[k].fn(&c, OPS[k].grad) ? -3 : 0;
}

static const conform_plugin_v2 plugin = {CONFORM_PLUGIN_ABI_V2, "conform-ascend", supports, run};

const conform_plugin *conform_plugin_entry(void) { return (const conform_plugin *)&plugin; }

#if ROTATED_ACLNN
#define ROUTE_ROTATED "aclnnRoiAlignRotated(Grad)"
#else
#define ROUTE_ROTATED "graph ops RoiAlignRotated(Grad)"
#endif
#ifdef CONFORM_ASCEND_STANDIN
#define BUILT_AGAINST "built against the HOST STAND-IN tests/ascend_standin (not CANN, no NPU)"
#else
#define BUILT_AGAINST "built against the CANN toolkit headers"
#endif
#if ASCEND_FAULT
#define FAULT_NOTE ", PLANTED FAULT " STR(ASCEND_FAULT)
#define STR(x) STR_(x)
#define STR_(x) #x
#else
#define FAULT_NOTE ""
#endif

const char *conform_plugin_version(void)
{
    return "0.1 (aclnn and aclopCompileAndExecute; rotated: " ROUTE_ROTATED "), " BUILT_AGAINST FAULT_NOTE;
}
