"""A RECORDING STAND-IN for torch_npu, NOT torch_npu: it runs on the host CPU and has no Ascend code.

tools/torch_runner.py loads it for --device npu when CONFORM_TORCH_NPU_STANDIN names this file, so
that the runner's npu table is tested without an NPU (tests/python/test_torch_npu_routes.py).
Each function checks the documented signature of the torch_npu function it stands for (argument
order, layouts, mode values), computes the documented contract with PyTorch/torchvision on the
CPU, and appends one JSON line per call to $CONFORM_STANDIN_LOG. runner.json and every report
name it as a stand-in (STANDIN below). What only an Ascend run can confirm is listed in
docs/ascend.md.
"""
import json
import os
import sys

import torch
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import torch_runner  # noqa: E402  (its CPU deformable route is the DeformableOffsets contract here)

STANDIN = {"device": "cpu",
           "device_name": "host CPU: recording stand-in for torch_npu (tests/python/torch_npu_standin.py), NOT an NPU",
           "what": "tests/python/torch_npu_standin.py (recording stand-in, not torch_npu)"}
__version__ = "stand-in"


class ContractError(RuntimeError):
    """An argument the documented signature does not allow."""


def _summary(v):
    if isinstance(v, torch.Tensor):
        return {"shape": list(v.shape), "dtype": str(v.dtype), "device": str(v.device)}
    return v


def _record(fn, *args):
    log = os.environ.get("CONFORM_STANDIN_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"fn": fn, "args": [_summary(a) for a in args]}) + "\n")


def _need(cond, what):
    if not cond:
        raise ContractError(what)


def _roi_align(x, rois, scale, ph, pw, sample_num, mode):
    """IR ROIAlign's roi_end_mode (hicann/ops-cv objdetect/roi_align/op_graph/roi_align_proto.h; conform
    docs/ops/roi_align.md): 0 aligned false; 1 aligned false with the end pixel counted in
    (x2 + 1, y2 + 1); 2 and 3 aligned true (the kernels compute 3 as 2)."""
    if mode == 1:
        rois = rois.clone()
        rois[:, 3:5] += 1
    return torchvision.ops.roi_align(x, rois, (ph, pw), scale, sample_num, mode >= 2)


def npu_roi_align(self, rois, spatial_scale, pooled_height, pooled_width, sample_num, roi_end_mode):
    """torch_npu.npu_roi_align(Tensor self, Tensor rois, float spatial_scale, int pooled_height,
    int pooled_width, int sample_num, int roi_end_mode) (Ascend/op-plugin
    op_plugin/config/op_plugin_functions.yaml:6877): self NCHW, rois [K, 5]."""
    _record("npu_roi_align", self, rois, spatial_scale, pooled_height, pooled_width, sample_num, roi_end_mode)
    _need(self.dim() == 4, "self must be NCHW")
    _need(rois.dim() == 2 and rois.shape[1] == 5, "rois must be [K, 5]")
    _need(isinstance(spatial_scale, float), "spatial_scale is a float")
    _need(all(isinstance(v, int) for v in (pooled_height, pooled_width, sample_num, roi_end_mode)), "int attributes")
    _need(0 <= roi_end_mode <= 3, "roi_end_mode is 0..3 (roi_align_proto.h)")
    return _roi_align(self, rois, spatial_scale, pooled_height, pooled_width, sample_num, roi_end_mode)


def npu_roi_alignbk(self, rois, xdiff_shape, pooled_width, pooled_height, spatial_scale, sample_num,
                    roi_end_mode=None):
    """torch_npu.npu_roi_alignbk(Tensor self, Tensor rois, int[] xdiff_shape, int pooled_width,
    int pooled_height, float spatial_scale, int sample_num, int? roi_end_mode=None): width BEFORE
    height (op_plugin_functions.yaml:6882); self is the gradient [K, C, pooled_height, pooled_width];
    a missing roi_end_mode is 1 (op_plugin/ops/opapi/RoiAlignKernelNpuOpApi.cpp:15-45)."""
    _record("npu_roi_alignbk", self, rois, list(xdiff_shape), pooled_width, pooled_height, spatial_scale,
            sample_num, roi_end_mode)
    mode = 1 if roi_end_mode is None else roi_end_mode
    _need(len(xdiff_shape) == 4, "xdiff_shape holds (B, C, H, W)")
    _need(rois.dim() == 2 and rois.shape[1] == 5, "rois must be [K, 5]")
    _need(0 <= mode <= 3, "roi_end_mode is 0..3")
    # the kernel's output grid comes from the attributes; a gradient of another shape is a caller's bug
    _need(list(self.shape) == [rois.shape[0], xdiff_shape[1], pooled_height, pooled_width],
          "grad %s is not [K, C, pooled_height, pooled_width] = [%d, %d, %d, %d]"
          % (list(self.shape), rois.shape[0], xdiff_shape[1], pooled_height, pooled_width))
    x = torch.zeros(list(xdiff_shape), dtype=self.dtype, requires_grad=True)
    _roi_align(x, rois, spatial_scale, pooled_height, pooled_width, sample_num, mode).backward(self)
    return x.grad


def _deform_attrs(self, weight, offset, kernel_size, stride, padding, dilation, groups, deformable_groups, modulated):
    """Checks npu_deformable_conv2d's documented arguments (op_plugin_functions.yaml:6062 and
    docs/zh/custom_APIs/torch_npu/(beta)torch_npu-npu_deformable_conv2d.md: stride and dilation
    in NCHW order with N and C entries 1, padding [top, bottom, left, right]) and returns conform's
    attributes of the DeformableOffsets it runs (DeformableConv2dKernelNpu.cpp:71-123)."""
    _need(self.dim() == 4 and offset.dim() == 4, "input and offset are NCHW")
    kh, kw = kernel_size
    dg = deformable_groups
    _need(offset.shape[1] == 3 * dg * kh * kw, "offset has 3 * dg * kh * kw channels, got %d" % offset.shape[1])
    _need(len(stride) == 4 and stride[0] == 1 and stride[1] == 1, "stride is [1, 1, sh, sw]: %s" % (stride,))
    _need(len(dilation) == 4 and dilation[0] == 1 and dilation[1] == 1, "dilation is [1, 1, dh, dw]: %s" % (dilation,))
    _need(len(padding) == 4, "padding is [top, bottom, left, right]")
    _need(modulated is True, "modulated must be true (deformable_offsets_proto.h)")
    _need(list(weight.shape[1:]) == [self.shape[1] // groups, kh, kw], "weight is [Co, C / groups, kh, kw]")
    return {"ksize": [kh, kw], "strides": [1, stride[2], stride[3], 1], "pads": list(padding),
            "dilations": [1, dilation[2], dilation[3], 1], "deformable_groups": dg, "data_format": "NHWC",
            "modulated": True}


def _offsets_out(self, offset, a):
    """DeformableOffsets output, NCHW [N, C, Ho*kh, Wo*kw] with Ho, Wo the offset's H, W
    (op_plugin/utils/KernelNpuOutputSize.cpp:738-750)."""
    return torch_runner.deformable_y(self.permute(0, 2, 3, 1), offset.permute(0, 2, 3, 1), a).permute(0, 3, 1, 2)


def npu_deformable_conv2d(input, weight, offset, bias, kernel_size, stride, padding, dilation=(1, 1, 1, 1),
                          groups=1, deformable_groups=1, modulated=True):
    """-> (conv(offset_out, weight, stride = kernel_size), offset_out) (DeformableConv2dKernelNpu.cpp:255-277)"""
    _record("npu_deformable_conv2d", input, weight, offset, bias, list(kernel_size), list(stride), list(padding),
            list(dilation), groups, deformable_groups, modulated)
    a = _deform_attrs(input, weight, offset, kernel_size, stride, padding, dilation, groups, deformable_groups, modulated)
    y = _offsets_out(input, offset, a)
    return F.conv2d(y, weight, bias, stride=list(kernel_size), groups=groups), y


def npu_deformable_conv2dbk(input, grad_output, offset_out, weight, offset, kernel_size, stride, padding,
                            dilation=(1, 1, 1, 1), groups=1, deformable_groups=1, modulated=True):
    """-> (grad_input, grad_weight, grad_offset, grad_bias) for the gradient grad_output of output [0]
    (op_plugin/config/derivatives.yaml:112-114; DeformableConv2dKernelNpu.cpp:175-252)."""
    _record("npu_deformable_conv2dbk", input, grad_output, offset_out, weight, offset, list(kernel_size), list(stride),
            list(padding), list(dilation), groups, deformable_groups, modulated)
    a = _deform_attrs(input, weight, offset, kernel_size, stride, padding, dilation, groups, deformable_groups, modulated)
    x = input.detach().clone().requires_grad_(True)
    off = offset.detach().clone().requires_grad_(True)
    w = weight.detach().clone().requires_grad_(True)
    y = _offsets_out(x, off, a)
    _need(list(offset_out.shape) == list(y.shape), "offset_out is the forward's output [1]")
    F.conv2d(y, w, None, stride=list(kernel_size), groups=groups).backward(grad_output)
    return x.grad, w.grad, off.grad, torch.zeros(weight.shape[0], dtype=weight.dtype)
