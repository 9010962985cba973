"""conform.torch: the op table of conform-torch (tools/torch_runner.py) as a library.

For every op, a Route turns a case's inputs (in the layout the op's documentation gives, the one
`conform export` writes) and attributes into one call of a PyTorch-side kernel and back into the
op's outputs: layout conversions (NHWC/NCHW, rois [6, n]), attribute mapping (roi_end_mode,
grid modes, deformable geometry), output_mask, autograd for the backward ops. There is one table
per device (TABLES): cpu and cuda call torchvision / PyTorch / mmcv, npu calls torch_npu's own
functions (each entry names its public source; docs/devices.md).

    import conform, conform.torch, torchvision
    suite = conform.suite("smoke", op="roi_align")
    out = conform.torch.call(suite.cases[0], torchvision.ops.roi_align)   # {"output": tensor}
    suite.run({"roi_align": my_roi_align})                                 # every case, written

A kernel given to call() or Suite.run() replaces the library function of the cpu/cuda route and
must take that function's arguments (SIGNATURES below): for roi_align and roi_align_v2_backward
torchvision.ops.roi_align(input, boxes, output_size, spatial_scale, sampling_ratio, aligned); for
the grid ops F.grid_sample(input, grid, mode, padding_mode, align_corners); for the rotated ops
mmcv.ops.roi_align_rotated(input, rois, output_size, spatial_scale, sampling_ratio, aligned,
clockwise); for the deformable ops torchvision.ops.deform_conv2d(input, offset, weight, bias,
stride, padding, dilation, mask). A backward op differentiates that forward kernel with autograd.
A kernel on the exported layout instead: conform.raw(fn) (see conform's docstring).
"""
import os
import platform
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

from ._manifest import confined, deform_geometry

# manifest dtype -> (torch dtype, numpy dtype of the .npy files)
DTYPES = {
    "float32": (torch.float32, "<f4"),
    "float16": (torch.float16, "<f2"),
    "bfloat16": (torch.bfloat16, "<u2"),   # raw bits: NumPy has no bfloat16
    "float64": (torch.float64, "<f8"),
}


class Skip(Exception):
    """A case this device or this mapping cannot take; the message says why."""


def optional_import(name):
    try:
        return __import__(name)
    except Exception:   # any failure to import means the op is not available here
        return None


torchvision = optional_import("torchvision")
mmcv = optional_import("mmcv")
mmcv_ops, MMCV_WHY_NOT = None, "mmcv is not installed"
if mmcv is not None:
    try:
        from mmcv import ops as mmcv_ops   # noqa: E402  (mmcv-full builds only)
        MMCV_WHY_NOT = None
    except Exception as e:
        MMCV_WHY_NOT = "mmcv %s has no ops (mmcv-lite?): %s" % (getattr(mmcv, "__version__", "?"), e)


def need(module, what):
    if module is None:
        raise Skip("%s is not importable here" % what)
    return module


# ---- tensors in and out ---------------------------------------------------------------------------
def load_input(path, dtype_name, device, compute_dtype):
    arr = np.load(path, allow_pickle=False)
    want = np.dtype(DTYPES[dtype_name][1])
    if arr.dtype != want:
        raise Skip("%s: dtype %s, the manifest says %s (%s)" % (path, arr.dtype, dtype_name, want.str))
    arr = np.ascontiguousarray(arr)
    if dtype_name == "bfloat16":
        t = torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16)
    else:
        t = torch.from_numpy(arr)
    return t.to(device=device, dtype=compute_dtype or t.dtype)


def to_numpy(t, dtype_name):
    t = t.detach().to("cpu").to(DTYPES[dtype_name][0]).contiguous()
    if dtype_name == "bfloat16":
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.numpy()


def save_atomic(path, arr):
    """Temporary file, then rename: a killed runner never leaves a half-written output."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, arr, allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


# ---- attributes -----------------------------------------------------------------------------------
def attr(attrs, name, default=None):
    if name in attrs:
        return attrs[name]
    if default is None:
        raise Skip("attribute %s missing from the manifest" % name)
    return default


def check_batch_indices(rois, col, batch):
    """torchvision and mmcv index the feature map with the truncated batch index and no range
    check: an index outside [0, B) after truncation (or NaN) would read or write outside the
    tensor, so such a case is not run (conform floors and skips those rois, ops.md section 10)."""
    if rois.numel() == 0:
        return
    b = rois[:, col].double().cpu()
    bad = ~torch.isfinite(b) | (torch.trunc(b) < 0) | (torch.trunc(b) >= batch)
    if bool(bad.any()):
        i = int(bad.nonzero()[0, 0])
        raise Skip("roi %d has batch index %r, B = %d: %s" % (i, float(b[i]), batch, UNSAFE_BATCH))


# the reasons a case cannot be run on any torch device here (an input the library has no defined
# result for): such a case is left unwritten and reported missing, not run, with its reason, and
# tests/python/test_torch_runner.py accepts no other reason for a missing case
UNSAFE_BATCH = ("a batch index outside [0, B) after truncation, or not finite: the torch kernel would read "
                "or write outside its tensors")
CANNOT_RUN = (UNSAFE_BATCH,)


# ---- roi_align, roi_align_v2_backward: torchvision.ops.roi_align and its autograd -------------------
def roi_align_call(x, rois, a, ph_name, pw_name, fn=None):
    fn = fn or need(torchvision, "torchvision").ops.roi_align
    check_batch_indices(rois, 0, x.shape[0])
    aligned = bool(attr(a, "aligned", True))
    # Ascend's roi_end_mode, when given (docs/ops/roi_align.md): 0 = aligned false, 1 = aligned false
    # with the roi's end pixel counted in (x2 + 1, y2 + 1), 2 and 3 = aligned true
    mode = int(attr(a, "roi_end_mode", -1))
    if mode >= 0:
        aligned = mode >= 2
    if mode == 1:
        rois = rois.clone()
        rois[:, 3:5] += 1
    return fn(x, rois, output_size=(int(attr(a, ph_name)), int(attr(a, pw_name))),
              spatial_scale=float(attr(a, "spatial_scale", 1.0)),
              sampling_ratio=int(attr(a, "sampling_ratio", 0)),
              aligned=aligned)


def run_roi_align(t, a, fn=None):
    return {"output": roi_align_call(t["input"], t["rois"], a, "pooled_h", "pooled_w", fn)}


def run_roi_align_v2_backward(t, a, fn=None):
    go = t["grad_output"]
    x = torch.zeros(attr(a, "input_shape"), dtype=go.dtype, device=go.device, requires_grad=True)
    roi_align_call(x, t["boxes"], a, "pooled_height", "pooled_width", fn).backward(go)
    return {"grad_input": x.grad}


# ---- roi_align_rotated(_grad): mmcv.ops.roi_align_rotated (NCHW, rois [n, 6]) -----------------------
def rotated_call(x, rois, a, fn=None):
    fn = fn or need(mmcv_ops, "mmcv.ops").roi_align_rotated
    nhwc = attr(a, "data_format", "NCHW") == "NHWC"
    if nhwc:   # the Ascend kernel's layout: x NHWC, rois [6, n]
        x, rois = x.permute(0, 3, 1, 2), rois.t()
    check_batch_indices(rois, 0, x.shape[0])
    y = fn(x, rois, (attr(a, "pooled_h"), attr(a, "pooled_w")),
                              float(attr(a, "spatial_scale", 1.0)), int(attr(a, "sampling_ratio", 0)),
                              bool(attr(a, "aligned", True)), bool(attr(a, "clockwise", False)))
    return y.permute(0, 2, 3, 1) if nhwc else y


def run_roi_align_rotated(t, a, fn=None):
    return {"y": rotated_call(t["x"], t["rois"], a, fn)}


def run_roi_align_rotated_grad(t, a, fn=None):
    g = t["x_grad"]
    x = torch.zeros(attr(a, "y_grad_shape"), dtype=g.dtype, device=g.device, requires_grad=True)
    rotated_call(x, t["rois"], a, fn).backward(g)
    return {"y_grad": x.grad}


# ---- grid_sampler_2d(_backward): torch.nn.functional.grid_sample and its autograd -------------------
GRID_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
GRID_PADDINGS = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sample(x, grid, a, fn=None):
    mode, pad = int(attr(a, "interpolation_mode", 0)), int(attr(a, "padding_mode", 0))
    if mode not in GRID_MODES or pad not in GRID_PADDINGS:
        raise Skip("interpolation_mode %d / padding_mode %d have no grid_sample equivalent" % (mode, pad))
    return (fn or F.grid_sample)(x, grid, mode=GRID_MODES[mode], padding_mode=GRID_PADDINGS[pad],
                         align_corners=bool(attr(a, "align_corners", False)))


def run_grid_sampler_2d(t, a, fn=None):
    return {"output": grid_sample(t["input"], t["grid"], a, fn)}


def run_grid_sampler_2d_backward(t, a, fn=None):
    mask = attr(a, "output_mask", [1, 1])
    x = t["input"].clone().requires_grad_(bool(mask[0]))
    grid = t["grid"].clone().requires_grad_(bool(mask[1]))
    if not (mask[0] or mask[1]):
        return {}
    grid_sample(x, grid, a, fn).backward(t["grad_output"])
    out = {}
    if mask[0]:
        out["input_grad"] = x.grad if x.grad is not None else torch.zeros_like(x)
    if mask[1]:
        out["grid_grad"] = grid.grad if grid.grad is not None else torch.zeros_like(grid)
    return out


# ---- deformable_offsets(_grad): torchvision.ops.deform_conv2d, one kernel point per call ------------
def deformable_y(x_nhwc, offsets, a, fn=None):
    """y[n, ho*kh+i, wo*kw+j, c] of spec 5 through deform_conv2d.

    One call per kernel point (i, j), with an (i+1) x (j+1) kernel, groups = C and a weight that is
    1 at (i, j) only: torchvision then forms the sample position exactly as the op does,
    (ho*sh - pt) + i*dh + offset (one rounding), and the other kernel points, sent outside the
    plane with mask 0, add exact zeros. A full kh x kw one-hot weight would also multiply the other
    points' samples by 0, and 0 * NaN would spread one NaN pixel to every kernel point.
    Bottom/right padding is explicit zero rows/columns: torchvision pads symmetrically, and the
    window test at H, W sees the same zeros either way (same values and gradients)."""
    fn = fn or need(torchvision, "torchvision").ops.deform_conv2d
    if bool(attr(a, "modulated", True)) is not True:
        raise Skip("modulated = false has no deform_conv2d equivalent here")
    kh, kw, sh, sw, dh, dw, (pt, pb, pl, pr), dg = deform_geometry(a)
    N, H, W, C = x_nhwc.shape
    _, Ho, Wo, OC = offsets.shape
    K = kh * kw
    if OC != 3 * dg * K or C % dg:
        raise Skip("offsets [.., %d] / C = %d do not fit dg = %d, ksize %dx%d" % (OC, C, dg, kh, kw))
    if bool(torch.isnan(offsets[..., :2 * dg * K]).any()):
        # torchvision 0.14: a NaN position passes the window test, floor(NaN) becomes a huge
        # negative index and the corner reads are only bounded above: a segfault (measured)
        raise Skip("a NaN offset: torchvision's deform_conv2d would read outside its input")
    x = F.pad(x_nhwc.permute(0, 3, 1, 2), (0, pr, 0, pb))
    Hp, Wp = H + pb, W + pr
    off = offsets.permute(0, 3, 1, 2).reshape(N, 3, dg, K, Ho, Wo)   # x offsets, y offsets, masks
    far = -float(2 * (Hp + Wp + pt + pl + (kh + kw) * (dh + dw)) + 16)   # puts a sample below -1
    rows = []
    for i in range(kh):
        cols = []
        for j in range(kw):
            k, K2 = i * kw + j, (i + 1) * (j + 1)
            Ht = (Hp + 2 * pt - (dh * i + 1)) // sh + 1   # torchvision's output size, >= Ho
            Wt = (Wp + 2 * pl - (dw * j + 1)) // sw + 1
            tv_off = torch.full((N, dg, K2, 2, Ht, Wt), far, dtype=x.dtype, device=x.device)
            tv_mask = torch.zeros((N, dg, K2, Ht, Wt), dtype=x.dtype, device=x.device)
            tv_off[:, :, K2 - 1, 0, :Ho, :Wo] = off[:, 1, :, k]     # (dy, dx) per kernel point
            tv_off[:, :, K2 - 1, 1, :Ho, :Wo] = off[:, 0, :, k]
            tv_mask[:, :, K2 - 1, :Ho, :Wo] = off[:, 2, :, k]
            weight = torch.zeros((C, 1, i + 1, j + 1), dtype=x.dtype, device=x.device)
            weight[:, 0, i, j] = 1
            out = fn(x, tv_off.reshape(N, dg * K2 * 2, Ht, Wt), weight, None,
                     stride=(sh, sw), padding=(pt, pl), dilation=(dh, dw),
                     mask=tv_mask.reshape(N, dg * K2, Ht, Wt))
            cols.append(out[:, :, :Ho, :Wo])
        rows.append(torch.stack(cols))
    # [kh, kw, N, C, Ho, Wo] -> [N, Ho, kh, Wo, kw, C]
    return torch.stack(rows).permute(2, 4, 0, 5, 1, 3).reshape(N, Ho * kh, Wo * kw, C)


def run_deformable_offsets(t, a, fn=None):
    return {"y": deformable_y(t["x"], t["offsets"], a, fn)}


def run_deformable_offsets_grad(t, a, fn=None):
    x = t["x"].clone().requires_grad_(True)
    off = t["offsets"].clone().requires_grad_(True)
    deformable_y(x, off, a, fn).backward(t["grad"])
    return {"grad_x": x.grad, "grad_offsets": off.grad}


# ---- the npu table: torch_npu's own functions (each entry names its public source) ------------------
# torch_npu registers no torchvision:: kernel, so torchvision's roi_align and deform_conv2d would run
# on the host through its CPU fallback (Ascend/pytorch torch_npu/csrc/aten/VariableFallbackKernel.cpp):
# these functions call the NPU ops instead. NPU is the torch_npu module, or the test's recording
# stand-in (tests/python/torch_npu_standin.py), set by open_device.
NPU = None


def npu_roi_end_mode(a):
    """The manifest's roi_end_mode when it gives one (ROIAlign takes it natively), else 2 for aligned
    and 0 otherwise: aclnnRoiAlignV2(Backward)'s own mapping (hicann/ops-cv
    objdetect/roi_align/op_host/op_api/aclnn_roi_align_v2.cpp:200, aclnn_roi_align_v2_backward.cpp:232)."""
    mode = int(attr(a, "roi_end_mode", -1))
    return mode if mode >= 0 else (2 if bool(attr(a, "aligned", True)) else 0)


def npu_roi_align(t, a):
    """torch_npu.npu_roi_align(self, rois, spatial_scale, pooled_height, pooled_width, sample_num,
    roi_end_mode) (Ascend/op-plugin op_plugin/config/op_plugin_functions.yaml:6877): IR ROIAlign."""
    x, rois = t["input"], t["rois"]
    check_batch_indices(rois, 0, x.shape[0])   # what the kernel does with such a roi is unknown
    return {"output": NPU.npu_roi_align(x, rois, float(attr(a, "spatial_scale", 1.0)), int(attr(a, "pooled_h")),
                                        int(attr(a, "pooled_w")), int(attr(a, "sampling_ratio", 0)),
                                        npu_roi_end_mode(a))}


def npu_roi_align_v2_backward(t, a):
    """torch_npu.npu_roi_alignbk(grad, rois, xdiff_shape, pooled_width, pooled_height, spatial_scale,
    sample_num, roi_end_mode): width BEFORE height (op_plugin_functions.yaml:6882), IR ROIAlignGrad.
    Never torch_npu.contrib's ROIAlign backward, which passes height in the width slot
    (Ascend/pytorch torch_npu/contrib/module/roi_align.py:45-48)."""
    shape = [int(v) for v in attr(a, "input_shape")]
    check_batch_indices(t["boxes"], 0, shape[0])
    return {"grad_input": NPU.npu_roi_alignbk(t["grad_output"], t["boxes"], shape, int(attr(a, "pooled_width")),
                                              int(attr(a, "pooled_height")), float(attr(a, "spatial_scale", 1.0)),
                                              int(attr(a, "sampling_ratio", 0)), npu_roi_end_mode(a))}


def npu_grid_sampler_2d_backward(t, a):
    """aten grid_sampler_2d_backward with the output mask: op-plugin registers it as
    aclnnGridSampler2DBackward (op_plugin_functions.yaml:2486-2496), mask passed through."""
    mask = [bool(m) for m in attr(a, "output_mask", [1, 1])]
    if not any(mask):
        return {}
    mode, pad = int(attr(a, "interpolation_mode", 0)), int(attr(a, "padding_mode", 0))
    if mode not in GRID_MODES or pad not in GRID_PADDINGS:
        raise Skip("interpolation_mode %d / padding_mode %d are not aten modes" % (mode, pad))
    gi, gg = torch.ops.aten.grid_sampler_2d_backward(t["grad_output"], t["input"], t["grid"], mode, pad,
                                                     bool(attr(a, "align_corners", False)), mask)
    return dict(([("input_grad", gi)] if mask[0] else []) + ([("grid_grad", gg)] if mask[1] else []))


def npu_deform_args(x, off, a, groups):
    """The argument tail of npu_deformable_conv2d(bk) for spec 5's attributes: kernel_size [kh, kw],
    stride and dilation in NCHW order [1, 1, h, w], padding [top, bottom, left, right]
    (op_plugin/ops/aclops/DeformableConv2dKernelNpu.cpp:71-123 reorders them to NHWC for the IR op)."""
    if bool(attr(a, "modulated", True)) is not True:
        raise Skip("modulated = false: the DeformableOffsets kernel only supports modulated = true "
                   "(hicann/ops-nn conv/deformable_offsets/op_graph/deformable_offsets_proto.h)")
    kh, kw, sh, sw, dh, dw, pads, dg = deform_geometry(a)
    C = x.shape[3]
    if kh * kw > 2048 or kh * kw * C // groups > 65535:   # npu_deformable_conv2d's documented limits
        raise Skip("ksize %dx%d with C = %d exceeds npu_deformable_conv2d's K_H*K_W <= 2048, "
                   "K_H*K_W*C/groups <= 65535" % (kh, kw, C))
    return ([kh, kw], [1, 1, sh, sw], [int(p) for p in pads], [1, 1, dh, dw], groups, dg, True)


def npu_deformable_offsets(t, a):
    """Output [1] of torch_npu.npu_deformable_conv2d(input NCHW, weight, offset NCHW, None, ...) is the
    DeformableOffsets result, NCHW [N, C, Ho*kh, Wo*kw] (DeformableConv2dKernelNpu.cpp:255-277); the
    offset channels are [x, y, mask][dg][kh][kw], conform's order (op-plugin
    test/test_base_ops/test_deformable_conv2d.py:30-42). The weight is irrelevant to output [1]."""
    x, off = t["x"], t["offsets"]
    tail = npu_deform_args(x, off, a, 1)
    kh, kw = tail[0]
    w = torch.zeros((1, x.shape[3], kh, kw), dtype=x.dtype, device=x.device)
    _, y = NPU.npu_deformable_conv2d(x.permute(0, 3, 1, 2), w, off.permute(0, 3, 1, 2), None, *tail)
    return {"y": y.permute(0, 2, 3, 1)}


def npu_deformable_offsets_grad(t, a):
    """npu_deformable_conv2dbk(input, grad_output, offset_out, weight, offset, ...) takes the gradient
    of output [0] = conv(offset_out, weight, stride = ksize) (op_plugin/config/derivatives.yaml:112-114;
    DeformableConv2dKernelNpu.cpp:175-252): grad y is injected through a grouped one-hot weight,
    groups = C, w[c*K + i*kw + j, 0, i, j] = 1, so the conv's input gradient is exactly grad y and
    feeds DeformableOffsetsGrad. Conv HF32 is off (open_device)."""
    x, off, g = t["x"], t["offsets"], t["grad"]
    if not bool(torch.isfinite(g).all()):
        raise Skip("a non-finite grad: the one-hot conv this route passes it through spreads it as "
                   "0 * NaN over each (c, ho, wo) block (docs/devices.md)")
    N, H, W, C = x.shape
    tail = npu_deform_args(x, off, a, C)
    kh, kw = tail[0]
    K, Ho, Wo = kh * kw, off.shape[1], off.shape[2]
    w = torch.eye(K, dtype=x.dtype, device=x.device).reshape(K, 1, kh, kw).repeat(C, 1, 1, 1)
    go = g.reshape(N, Ho, kh, Wo, kw, C).permute(0, 5, 2, 4, 1, 3).reshape(N, C * K, Ho, Wo)
    x_nchw, off_nchw = x.permute(0, 3, 1, 2), off.permute(0, 3, 1, 2)
    _, y = NPU.npu_deformable_conv2d(x_nchw, w, off_nchw, None, *tail)
    gx, _, goff, _ = NPU.npu_deformable_conv2dbk(x_nchw, go, y, w, off_nchw, *tail)
    return {"grad_x": gx.permute(0, 2, 3, 1), "grad_offsets": goff.permute(0, 2, 3, 1)}


def rotated_backward_ext():
    """mmcv's compiled roi_align_rotated_backward (mmcv/ops/roi_align_rotated.py's ext_module)"""
    import importlib
    return importlib.import_module("mmcv.ops.roi_align_rotated").ext_module


def npu_roi_align_rotated_grad(t, a):
    """mmcv's NPU backward sends pooled_h = aligned_width and pooled_w = aligned_height to
    RoiAlignRotatedGrad (open-mmlab/mmcv mmcv/ops/csrc/pytorch/npu/roi_align_rotated_npu.cpp,
    roi_align_rotated_backward_npu, at main 15e67ca6): calling it with the pooled sizes exchanged
    cancels the swap."""
    g = t["x_grad"]
    nhwc = attr(a, "data_format", "NCHW") == "NHWC"
    shape = [int(v) for v in attr(a, "y_grad_shape")]
    rois = t["rois"].t() if nhwc else t["rois"]
    if nhwc:
        g, shape = g.permute(0, 3, 1, 2), [shape[0], shape[3], shape[1], shape[2]]
    check_batch_indices(rois, 0, shape[0])
    ph, pw = int(attr(a, "pooled_h")), int(attr(a, "pooled_w"))
    gi = torch.zeros(shape, dtype=g.dtype, device=g.device)
    rotated_backward_ext().roi_align_rotated_backward(
        g.contiguous(), rois.contiguous(), gi, pooled_height=pw, pooled_width=ph,   # exchanged: see above
        spatial_scale=float(attr(a, "spatial_scale", 1.0)), sampling_ratio=int(attr(a, "sampling_ratio", 0)),
        aligned=bool(attr(a, "aligned", True)), clockwise=bool(attr(a, "clockwise", False)))
    return {"y_grad": gi.permute(0, 2, 3, 1) if nhwc else gi}


# ---- op tables per device ---------------------------------------------------------------------------
class Route:
    """One op on one device: fn(tensors, attrs[, fn=kernel]) -> {output: tensor}, the exact call it
    makes (for runner.json and the reports), why_not() -> None or why the op cannot run here, and
    takes_kernel: whether fn accepts a kernel of SIGNATURES in place of its library call."""
    def __init__(self, fn, call, why_not=lambda: None, takes_kernel=False):
        self.fn, self.call, self.why_not, self.takes_kernel = fn, call, why_not, takes_kernel


# the signature a kernel given to call() / Suite.run() must have, per op (the cpu and cuda routes)
SIGNATURES = {
    "roi_align": "torchvision.ops.roi_align(input, boxes, output_size, spatial_scale, sampling_ratio, aligned)",
    "roi_align_v2_backward": "torchvision.ops.roi_align(...) as for roi_align: the backward is its autograd",
    "roi_align_rotated": "mmcv.ops.roi_align_rotated(input, rois, output_size, spatial_scale, sampling_ratio, "
                         "aligned, clockwise)",
    "roi_align_rotated_grad": "mmcv.ops.roi_align_rotated(...) as for roi_align_rotated: its autograd",
    "grid_sampler_2d": "torch.nn.functional.grid_sample(input, grid, mode, padding_mode, align_corners)",
    "grid_sampler_2d_backward": "torch.nn.functional.grid_sample(...) as for grid_sampler_2d: its autograd",
    "deformable_offsets": "torchvision.ops.deform_conv2d(input, offset, weight, bias, stride, padding, dilation, mask)",
    "deformable_offsets_grad": "torchvision.ops.deform_conv2d(...) as for deformable_offsets: its autograd",
}


def lacks(module, what):
    return lambda: None if module is not None else "%s is not installed" % what


def mmcv_why_not():
    return MMCV_WHY_NOT


# mmcv's NPU roi_align_rotated adapter is right (x NHWC, rois [6, n]) only after mmcv commits
# 6ba6b7e6 (#3238, 2025-02-18) and a5d21aae (2025-03-24), in no release: v2.2.0 passes NCHW and
# [n, 6] (docs/devices.md). The version string of a build from main still reads 2.2.0, so the
# user attests the build with --mmcv-from-main.
MMCV_LAST_WRONG_RELEASE = (2, 2, 0)
MMCV_FROM_MAIN = False


def mmcv_npu_why_not():
    if MMCV_WHY_NOT:
        return MMCV_WHY_NOT
    v = getattr(mmcv, "__version__", "0")
    nums = tuple(int(p) for p in v.split("+")[0].split(".")[:3] if p.isdigit())
    if nums <= MMCV_LAST_WRONG_RELEASE and not MMCV_FROM_MAIN:
        return ("mmcv %s: its NPU roi_align_rotated adapter passes NCHW and [n, 6] rois where the kernel "
                "takes NHWC and [6, n] (fixed only in mmcv main after 6ba6b7e6); build mmcv from main "
                "with FORCE_NPU=1 and pass --mmcv-from-main" % v)
    return None


ROTATED_CALL = ("mmcv.ops.roi_align_rotated(x NCHW, rois [n, 6], (pooled_h, pooled_w), spatial_scale, "
                "sampling_ratio, aligned, clockwise)")
COMMON_ROUTES = {
    "grid_sampler_2d": Route(run_grid_sampler_2d, "torch.nn.functional.grid_sample(input, grid, mode, padding_mode, "
                             "align_corners)"),
}
CPU_TABLE = dict(COMMON_ROUTES, **{
    "roi_align": Route(run_roi_align, "torchvision.ops.roi_align(input, rois, (pooled_h, pooled_w), spatial_scale, "
                       "sampling_ratio, aligned) (roi_end_mode 1: rois x2, y2 + 1, aligned false)",
                       lacks(torchvision, "torchvision")),
    "roi_align_v2_backward": Route(run_roi_align_v2_backward, "autograd of torchvision.ops.roi_align",
                                   lacks(torchvision, "torchvision")),
    "roi_align_rotated": Route(run_roi_align_rotated, ROTATED_CALL, mmcv_why_not),
    "roi_align_rotated_grad": Route(run_roi_align_rotated_grad, "autograd of " + ROTATED_CALL, mmcv_why_not),
    "grid_sampler_2d_backward": Route(run_grid_sampler_2d_backward, "autograd of torch.nn.functional.grid_sample "
                                      "(requires_grad from output_mask)"),
    "deformable_offsets": Route(run_deformable_offsets, "torchvision.ops.deform_conv2d, one call per kernel point "
                                "with a one-hot grouped weight", lacks(torchvision, "torchvision")),
    "deformable_offsets_grad": Route(run_deformable_offsets_grad, "autograd of the deformable_offsets route",
                                     lacks(torchvision, "torchvision")),
})


def npu_has(name):
    return lambda: None if hasattr(NPU, name) else "this torch_npu has no %s" % name


NPU_TABLE = dict(COMMON_ROUTES, **{
    "roi_align": Route(npu_roi_align, "torch_npu.npu_roi_align(input, rois, spatial_scale, pooled_h, pooled_w, "
                       "sampling_ratio, roi_end_mode if given else 2 if aligned else 0)", npu_has("npu_roi_align")),
    "roi_align_v2_backward": Route(npu_roi_align_v2_backward, "torch_npu.npu_roi_alignbk(grad_output, boxes, "
                                   "input_shape, pooled_width, pooled_height, spatial_scale, sampling_ratio, "
                                   "roi_end_mode if given else 2 if aligned else 0)", npu_has("npu_roi_alignbk")),
    "roi_align_rotated": Route(run_roi_align_rotated, ROTATED_CALL + " (mmcv NPU: RoiAlignRotated, NHWC, [6, n])",
                               mmcv_npu_why_not),
    "roi_align_rotated_grad": Route(npu_roi_align_rotated_grad, "mmcv ext roi_align_rotated_backward(grad NCHW, rois, "
                                    "grad_input, pooled_height=pooled_w, pooled_width=pooled_h, ...): exchanged to "
                                    "cancel mmcv's pooled swap (RoiAlignRotatedGrad)", mmcv_npu_why_not),
    "grid_sampler_2d_backward": Route(npu_grid_sampler_2d_backward, "torch.ops.aten.grid_sampler_2d_backward(grad_output, "
                                      "input, grid, interpolation_mode, padding_mode, align_corners, output_mask)"),
    "deformable_offsets": Route(npu_deformable_offsets, "torch_npu.npu_deformable_conv2d(x NCHW, zeros [1, C, kh, kw], "
                                "offsets NCHW, None, [kh, kw], [1, 1, sh, sw], [pt, pb, pl, pr], [1, 1, dh, dw], 1, "
                                "deformable_groups, True)[1], NHWC", npu_has("npu_deformable_conv2d")),
    "deformable_offsets_grad": Route(npu_deformable_offsets_grad, "torch_npu.npu_deformable_conv2dbk(x NCHW, grad y "
                                     "as [N, C*kh*kw, Ho, Wo], offset_out, one-hot weight [C*kh*kw, 1, kh, kw], "
                                     "offsets NCHW, [kh, kw], [1, 1, sh, sw], pads, [1, 1, dh, dw], groups C, "
                                     "deformable_groups, True), conv HF32 off", npu_has("npu_deformable_conv2dbk")),
})
TABLES = {"cpu": CPU_TABLE, "cuda": CPU_TABLE, "npu": NPU_TABLE}
for _route in list(CPU_TABLE.values()) + [NPU_TABLE["roi_align_rotated"]]:
    _route.takes_kernel = True   # these call a torchvision / PyTorch / mmcv function a kernel can replace


# ---- one case -------------------------------------------------------------------------------------
class Unsupported(Skip):
    """The op cannot run on this device at all (declared in runner.json; conform: not_implemented)."""


class DeviceError(Exception):
    """The device asked for cannot be opened here (no torch_npu, no CUDA): a usage error."""


def inside(root, rel):
    """root/rel under the manifest path rule (_manifest.confined), or Skip with the rule broken"""
    try:
        return confined(root, rel)
    except ValueError as e:
        raise Skip(str(e))


def compute(op, tensors, attrs, dev, kernel=None):
    """The route of op on dev = (torch.device, table, unsupported) called on tensors: {output: tensor}.
    kernel replaces the route's library function (SIGNATURES); Skip with the reason if it cannot run."""
    device, table, unsupported = dev
    if op not in table:
        raise Unsupported("no %s mapping for op %r" % (device.type, op))
    route = table[op]
    if kernel is not None and not route.takes_kernel:
        raise ValueError("the %s route of %s calls %s and takes no kernel of yours: use device cpu or cuda "
                         "(the torch signatures), or conform.raw(fn) on the exported layout" % (device.type, op, route.call))
    if kernel is None and op in unsupported:
        raise Unsupported(unsupported[op])
    try:
        return route.fn(tensors, attrs) if kernel is None else route.fn(tensors, attrs, fn=kernel)
    except Skip:
        raise
    except Exception as e:   # the device refused the case: its reason, never a crash
        msg = str(e).strip().splitlines()
        raise Skip("%s: %s" % (type(e).__name__, msg[0] if msg else ""))


def computed_outputs(got, outputs, device):
    """{name: tensor} of the computed outputs of a manifest entry's `outputs`, checked: each produced,
    on the device (a host fallback must never pass as a device run), of the manifest's shape."""
    results = {}
    for name, o in outputs.items():
        if not o.get("computed", True):
            continue
        if name not in got or got[name] is None:
            raise Skip("output %s was not produced" % name)
        if got[name].device.type != device.type:
            raise Skip("output %s is on %s, not on %s" % (name, got[name].device, device))
        if list(got[name].shape) != list(o["shape"]):
            raise Skip("output %s has shape %s, the manifest says %s" % (name, list(got[name].shape), o["shape"]))
        results[name] = got[name]
    return results


def case_skip(case):
    """Why a manifest entry must not be run (expect_error, invalid, not_applicable), or None."""
    if "expect_error" in case:
        return "the case expects a validation error (%s); nothing to compute" % case["expect_error"]
    if "invalid" in case:
        return "conform refuses the case: %s" % case["invalid"]
    if "not_applicable" in case:   # conform exported no data: an input overflows the dtype
        return case["not_applicable"]
    return None


def run_case(root, case, dtype_name, dev, compute_dtype, kernel=None):
    """Writes the computed outputs of one case; returns None, or raises Skip with the reason.
    dev: (torch.device, op table, unsupported {op: reason})."""
    outputs = case.get("outputs", {})
    for o in outputs.values():   # a stale file from an earlier run must not be judged
        p = inside(root, o.get("path"))
        if os.path.exists(p):
            os.unlink(p)
    why = case_skip(case)
    if why:
        raise Skip(why)
    op = case.get("op")
    if op not in dev[1] or (kernel is None and op in dev[2]):
        compute(op, {}, {}, dev, kernel)   # raises Unsupported before any input is read
    try:
        tensors = {name: load_input(inside(root, rel), dtype_name, dev[0], compute_dtype)
                   for name, rel in case.get("inputs", {}).items()}
    except Skip:
        raise
    except Exception as e:
        raise Skip("%s: %s" % (type(e).__name__, str(e).strip()))
    got = computed_outputs(compute(op, tensors, case.get("attrs", {}), dev, kernel), outputs, dev[0])
    results = {name: to_numpy(t, dtype_name) for name, t in got.items()}
    for name, arr in results.items():   # all or nothing per case
        save_atomic(inside(root, outputs[name]["path"]), arr)


def call(case, kernel=None, device="cpu", compute_dtype=None):
    """Runs one case of a conform.suite() (a conform.Case) through its op's route on device and
    returns {output name: tensor} of its computed outputs (case.write() takes it as it is). kernel:
    your function with the signature of the route's library call (SIGNATURES), or None for the
    library itself. compute_dtype: a torch dtype or dtype name to compute in (e.g. "float32" for a
    float16 export); default the export's dtype. Raises Skip (with the reason) for a case a kernel
    must not run or the route cannot take, ValueError for misuse."""
    if getattr(case, "skip", None):
        raise Skip(case.skip)
    dev = device_table(device)
    if isinstance(compute_dtype, str):
        compute_dtype = DTYPES[compute_dtype][0]
    tensors = {}
    for name, arr in case.inputs.items():
        t = from_numpy(arr, case.dtype)
        tensors[name] = t.to(device=dev[0], dtype=compute_dtype or t.dtype)
    entry = case.entry
    got = compute(case.op, tensors, case.attrs, dev, kernel)
    return computed_outputs(got, entry.get("outputs", {}), dev[0])


def from_numpy(arr, dtype_name):
    """An exported input (numpy, the export's dtype; bfloat16 as its raw '<u2' bits) as a tensor."""
    arr = np.ascontiguousarray(arr)
    if dtype_name == "bfloat16" and arr.dtype == np.uint16:
        return torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16)
    t = torch.from_numpy(arr)
    return t.to(DTYPES[dtype_name][0]) if dtype_name in DTYPES else t


_DEVICES = {}


def device_table(device):
    """(torch.device, table, unsupported) for a device name or torch.device, opened once."""
    name = torch.device(device).type if not isinstance(device, str) else device
    if name not in _DEVICES:
        _DEVICES[name] = open_device(name)[0]
    dev = _DEVICES[name]
    if not isinstance(device, str):
        dev = (torch.device(device),) + dev[1:]
    return dev


def load_torch_npu():
    """torch_npu, imported after TORCH_NPU_FALLBACK_CPU_DISABLE=1 so that an op without an NPU
    kernel raises instead of running on the host (Ascend/pytorch
    torch_npu/csrc/core/npu/register/OptionsManager.cpp:60-66). CONFORM_TORCH_NPU_STANDIN=FILE loads
    FILE instead: a test's recording stand-in, named as such in runner.json and every report."""
    os.environ["TORCH_NPU_FALLBACK_CPU_DISABLE"] = "1"
    standin = os.environ.get("CONFORM_TORCH_NPU_STANDIN")
    if standin:
        import importlib.util
        spec = importlib.util.spec_from_file_location("torch_npu_standin", standin)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    return optional_import("torch_npu")


def open_device(name):
    """(torch.device, the device's op table, {op: why it cannot run}, provenance) for --device."""
    global NPU
    info = {"device": name}
    if name == "npu":
        NPU = load_torch_npu()
        if NPU is None:
            raise DeviceError("--device npu needs torch_npu (pip install torch-npu matching torch %s)" % torch.__version__)
        standin = getattr(NPU, "STANDIN", None)
        device = torch.device(standin["device"] if standin else "npu")
        info["torch_npu"] = "STAND-IN: %s" % standin["what"] if standin else getattr(NPU, "__version__", "?")
        info["device_name"] = standin["device_name"] if standin else torch.npu.get_device_name(0)
        if not standin:   # fp32 convolutions may run in HF32 by default (torch_npu/npu/npu_config.py:189-200)
            torch.npu.conv.allow_hf32 = False
            info["conv_allow_hf32"] = False
        info["cann"] = cann_version()
    elif name == "cuda":
        if not torch.cuda.is_available():
            raise DeviceError("--device cuda: torch.cuda.is_available() is false")
        device = torch.device("cuda")
        info["device_name"] = torch.cuda.get_device_name(0)
    else:
        device = torch.device("cpu")
        info["device_name"] = cpu_name()
    if name not in TABLES:
        raise DeviceError("device %r: conform.torch has tables for %s" % (name, ", ".join(sorted(TABLES))))
    table = TABLES[name]
    unsupported = {op: r.why_not() for op, r in table.items() if r.why_not()}
    info["ops"] = {op: dict(call=r.call, supported=op not in unsupported,
                            **({"reason": unsupported[op]} if op in unsupported else {}))
                   for op, r in sorted(table.items())}
    return (device, table, unsupported), info


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cann_version():
    """The CANN toolkit's version from its install directory, where readable (set_env.sh exports
    ASCEND_HOME_PATH and ASCEND_TOOLKIT_HOME: hicann/runtime scripts/package/runtime/set_env.sh)."""
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
        root = os.environ.get(var)
        for rel in ("version.cfg", "compiler/version.info", "runtime/version.info"):
            try:
                with open(os.path.join(root or "/nonexistent", rel)) as f:
                    for line in f:
                        if "version=" in line.replace(" ", ""):
                            return line.split("=", 1)[1].strip()
            except OSError:
                continue
    return None


