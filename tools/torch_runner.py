#!/usr/bin/env python3
"""Runs the cases of a `conform export` directory on a PyTorch device and writes their outputs,
for `conform run --impl dir:DIR` to judge (issue 16; the contract is harness.md, "Judging kernels
that run elsewhere").

    build/conform export cases/conformance.json --out /tmp/exp --dtype float32
    /usr/bin/python3 tools/torch_runner.py /tmp/exp --device cpu      # or cuda, or npu (torch_npu)
    build/conform run cases/conformance.json --impl dir:/tmp/exp --report-dir /tmp/exp-report \
        --waivers cases/waivers_pytorch_cpu.json

Needs numpy and torch; torchvision for roi_align and deformable_offsets, mmcv for
roi_align_rotated (cases of an op whose library is missing are left unwritten and counted).
The mapping of every op is in OPS below (one function per op). A case the device cannot take
(an unsupported dtype, an input torch would read out of bounds with, an exception) is skipped
with its reason and left unwritten (conform then reports it missing), never a crash: the cases run
in a forked child, and a kernel that kills it (a segfault) skips its case. Exit 0 after the run whatever the cases did;
2 on misuse (no manifest, a manifest that is not conform-export, a bad option).
"""
import argparse
import fnmatch
import json
import os
import signal
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

from export_dir import deform_geometry  # tools/, beside this script

SCHEMA = "conform-export"
SUPPORTED_SCHEMA_VERSIONS = (1,)

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
mmcv_ops = None
if optional_import("mmcv") is not None:
    try:
        from mmcv import ops as mmcv_ops   # noqa: E402  (mmcv-full builds only)
    except Exception:
        mmcv_ops = None


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
        raise Skip("roi %d has batch index %r outside [0, %d) after truncation: the torch kernel "
                   "would read outside its input" % (i, float(b[i]), batch))


# ---- roi_align, roi_align_v2_backward: torchvision.ops.roi_align and its autograd -------------------
def roi_align_call(x, rois, a, ph_name, pw_name):
    tv = need(torchvision, "torchvision")
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
    return tv.ops.roi_align(x, rois, output_size=(attr(a, ph_name), attr(a, pw_name)),
                            spatial_scale=float(attr(a, "spatial_scale", 1.0)),
                            sampling_ratio=int(attr(a, "sampling_ratio", 0)),
                            aligned=aligned)


def run_roi_align(t, a):
    return {"output": roi_align_call(t["input"], t["rois"], a, "pooled_h", "pooled_w")}


def run_roi_align_v2_backward(t, a):
    go = t["grad_output"]
    x = torch.zeros(attr(a, "input_shape"), dtype=go.dtype, device=go.device, requires_grad=True)
    roi_align_call(x, t["boxes"], a, "pooled_height", "pooled_width").backward(go)
    return {"grad_input": x.grad}


# ---- roi_align_rotated(_grad): mmcv.ops.roi_align_rotated (NCHW, rois [n, 6]) -----------------------
def rotated_call(x, rois, a):
    ops = need(mmcv_ops, "mmcv.ops")
    nhwc = attr(a, "data_format", "NCHW") == "NHWC"
    if nhwc:   # the Ascend kernel's layout: x NHWC, rois [6, n]
        x, rois = x.permute(0, 3, 1, 2), rois.t()
    check_batch_indices(rois, 0, x.shape[0])
    y = ops.roi_align_rotated(x, rois, (attr(a, "pooled_h"), attr(a, "pooled_w")),
                              float(attr(a, "spatial_scale", 1.0)), int(attr(a, "sampling_ratio", 0)),
                              bool(attr(a, "aligned", True)), bool(attr(a, "clockwise", False)))
    return y.permute(0, 2, 3, 1) if nhwc else y


def run_roi_align_rotated(t, a):
    return {"y": rotated_call(t["x"], t["rois"], a)}


def run_roi_align_rotated_grad(t, a):
    g = t["x_grad"]
    x = torch.zeros(attr(a, "y_grad_shape"), dtype=g.dtype, device=g.device, requires_grad=True)
    rotated_call(x, t["rois"], a).backward(g)
    return {"y_grad": x.grad}


# ---- grid_sampler_2d(_backward): torch.nn.functional.grid_sample and its autograd -------------------
GRID_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
GRID_PADDINGS = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sample(x, grid, a):
    mode, pad = int(attr(a, "interpolation_mode", 0)), int(attr(a, "padding_mode", 0))
    if mode not in GRID_MODES or pad not in GRID_PADDINGS:
        raise Skip("interpolation_mode %d / padding_mode %d have no grid_sample equivalent" % (mode, pad))
    return F.grid_sample(x, grid, mode=GRID_MODES[mode], padding_mode=GRID_PADDINGS[pad],
                         align_corners=bool(attr(a, "align_corners", False)))


def run_grid_sampler_2d(t, a):
    return {"output": grid_sample(t["input"], t["grid"], a)}


def run_grid_sampler_2d_backward(t, a):
    mask = attr(a, "output_mask", [1, 1])
    x = t["input"].clone().requires_grad_(bool(mask[0]))
    grid = t["grid"].clone().requires_grad_(bool(mask[1]))
    if not (mask[0] or mask[1]):
        return {}
    grid_sample(x, grid, a).backward(t["grad_output"])
    out = {}
    if mask[0]:
        out["input_grad"] = x.grad if x.grad is not None else torch.zeros_like(x)
    if mask[1]:
        out["grid_grad"] = grid.grad if grid.grad is not None else torch.zeros_like(grid)
    return out


# ---- deformable_offsets(_grad): torchvision.ops.deform_conv2d, one kernel point per call ------------
def deformable_y(x_nhwc, offsets, a):
    """y[n, ho*kh+i, wo*kw+j, c] of spec 5 through deform_conv2d.

    One call per kernel point (i, j), with an (i+1) x (j+1) kernel, groups = C and a weight that is
    1 at (i, j) only: torchvision then forms the sample position exactly as the op does,
    (ho*sh - pt) + i*dh + offset (one rounding), and the other kernel points, sent outside the
    plane with mask 0, add exact zeros. A full kh x kw one-hot weight would also multiply the other
    points' samples by 0, and 0 * NaN would spread one NaN pixel to every kernel point.
    Bottom/right padding is explicit zero rows/columns: torchvision pads symmetrically, and the
    window test at H, W sees the same zeros either way (same values and gradients)."""
    tv = need(torchvision, "torchvision")
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
            out = tv.ops.deform_conv2d(x, tv_off.reshape(N, dg * K2 * 2, Ht, Wt), weight, None,
                                       stride=(sh, sw), padding=(pt, pl), dilation=(dh, dw),
                                       mask=tv_mask.reshape(N, dg * K2, Ht, Wt))
            cols.append(out[:, :, :Ho, :Wo])
        rows.append(torch.stack(cols))
    # [kh, kw, N, C, Ho, Wo] -> [N, Ho, kh, Wo, kw, C]
    return torch.stack(rows).permute(2, 4, 0, 5, 1, 3).reshape(N, Ho * kh, Wo * kw, C)


def run_deformable_offsets(t, a):
    return {"y": deformable_y(t["x"], t["offsets"], a)}


def run_deformable_offsets_grad(t, a):
    x = t["x"].clone().requires_grad_(True)
    off = t["offsets"].clone().requires_grad_(True)
    deformable_y(x, off, a).backward(t["grad"])
    return {"grad_x": x.grad, "grad_offsets": off.grad}


OPS = {
    "roi_align": run_roi_align,
    "roi_align_v2_backward": run_roi_align_v2_backward,
    "roi_align_rotated": run_roi_align_rotated,
    "roi_align_rotated_grad": run_roi_align_rotated_grad,
    "grid_sampler_2d": run_grid_sampler_2d,
    "grid_sampler_2d_backward": run_grid_sampler_2d_backward,
    "deformable_offsets": run_deformable_offsets,
    "deformable_offsets_grad": run_deformable_offsets_grad,
}


# ---- one case -------------------------------------------------------------------------------------
def run_case(root, case, dtype_name, device, compute_dtype):
    """Writes the computed outputs of one case; returns None, or raises Skip with the reason."""
    outputs = case.get("outputs", {})
    for o in outputs.values():   # a stale file from an earlier run must not be judged
        p = os.path.join(root, o["path"])
        if os.path.exists(p):
            os.unlink(p)
    if "expect_error" in case:
        raise Skip("the case expects a validation error (%s); nothing to compute" % case["expect_error"])
    fn = OPS.get(case.get("op"))
    if fn is None:
        raise Skip("no torch mapping for op %r" % case.get("op"))
    try:
        tensors = {name: load_input(os.path.join(root, rel), dtype_name, device, compute_dtype)
                   for name, rel in case.get("inputs", {}).items()}
        got = fn(tensors, case.get("attrs", {}))
    except Skip:
        raise
    except Exception as e:   # the device refused the case: its reason, never a crash
        msg = str(e).strip().splitlines()
        raise Skip("%s: %s" % (type(e).__name__, msg[0] if msg else ""))
    results = {}
    for name, o in outputs.items():
        if not o.get("computed", True):
            continue
        if name not in got or got[name] is None:
            raise Skip("output %s was not produced" % name)
        arr = to_numpy(got[name], dtype_name)
        if list(arr.shape) != list(o["shape"]):
            raise Skip("output %s has shape %s, the manifest says %s" % (name, list(arr.shape), o["shape"]))
        results[name] = arr
    for name, arr in results.items():   # all or nothing per case
        save_atomic(os.path.join(root, outputs[name]["path"]), arr)


# ---- command line ---------------------------------------------------------------------------------
def die(msg):
    print("torch_runner: error: %s" % msg, file=sys.stderr)
    sys.exit(2)


def load_manifest(root):
    path = os.path.join(root, "manifest.json")
    try:
        with open(path) as f:
            m = json.load(f)
    except OSError as e:
        die("%s: %s (make it with: build/conform export ... --out %s)" % (path, e.strerror, root))
    except ValueError as e:
        die("%s: not valid JSON: %s" % (path, e))
    if not isinstance(m, dict) or m.get("schema") != SCHEMA:
        die("%s: schema must be %r" % (path, SCHEMA))
    if m.get("schema_version") not in SUPPORTED_SCHEMA_VERSIONS:
        die("%s: schema_version %r: this runner reads %s" % (path, m.get("schema_version"),
                                                             SUPPORTED_SCHEMA_VERSIONS))
    if m.get("dtype") not in DTYPES:
        die("%s: dtype %r: must be one of %s" % (path, m.get("dtype"), ", ".join(DTYPES)))
    if not isinstance(m.get("cases"), list):
        die("%s: cases must be a list" % path)
    return m


def pick_device(name):
    if name == "npu":
        if optional_import("torch_npu") is None:
            die("--device npu needs torch_npu (pip install torch-npu matching torch %s)" % torch.__version__)
    elif name == "cuda" and not torch.cuda.is_available():
        die("--device cuda: torch.cuda.is_available() is false")
    return torch.device(name)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir", help="a directory written by conform export (DIR/manifest.json)")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda", "npu"))
    p.add_argument("--compute-dtype", choices=sorted(DTYPES),
                   help="compute in this dtype and round the outputs to the manifest's "
                        "(e.g. float32 for a float16 export); default: the manifest's dtype")
    p.add_argument("--filter", default="*", help="glob over case ids")
    p.add_argument("--op", action="append", help="only this op (repeatable)")
    p.add_argument("--threads", type=int, help="torch.set_num_threads")
    p.add_argument("--quiet", action="store_true", help="no line per skipped case")
    p.add_argument("--no-isolate", action="store_true",
                   help="run in this process (a crashing torch kernel then ends the run)")
    return p.parse_args(argv)


def selected(m, args):
    return [c for c in m["cases"]
            if fnmatch.fnmatchcase(str(c.get("id", "?")), args.filter) and (not args.op or c.get("op") in args.op)]


def run_cases(cases, args, dtype_name, report, starting=lambda i: None):
    """Runs cases in this process: starting(index) before each, report(index, skip_reason or None)
    after it."""
    device = pick_device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    compute = DTYPES[args.compute_dtype][0] if args.compute_dtype else None
    for i, case in enumerate(cases):
        starting(i)
        try:
            run_case(args.dir, case, dtype_name, device, compute)
            report(i, None)
        except Skip as e:
            report(i, str(e))


def run_isolated(cases, args, dtype_name, report):
    """The cases in a forked child; when a torch kernel kills it (a segfault, SIGFPE), the case it
    was running is reported skipped with the signal and a new child goes on with the next case."""
    start = 0
    while start < len(cases):
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:   # child: one line per event, "S i" before a case, "D i reason" after it
            os.close(rd)
            out = os.fdopen(wr, "w", buffering=1)

            def tell(i, reason):
                out.write("D %d %s\n" % (start + i, json.dumps(reason)))
            try:
                run_cases(cases[start:], args, dtype_name, tell,
                          starting=lambda i: out.write("S %d\n" % (start + i)))
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 2
            out.flush()
            os._exit(code)
        os.close(wr)
        running, done_upto = None, start
        with os.fdopen(rd) as events:
            for line in events:
                kind, rest = line[0], line[2:].rstrip("\n")
                if kind == "S":
                    running = int(rest)
                else:
                    idx, reason = rest.split(" ", 1)
                    report(int(idx), json.loads(reason))
                    running, done_upto = None, int(idx) + 1
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) != 0:
            sys.exit(os.WEXITSTATUS(status))   # misuse found in the child (e.g. no such device)
        if running is None:
            start = done_upto if os.WIFSIGNALED(status) else len(cases)
            continue
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        report(running, "the torch kernel killed the process (signal %d, %s)"
               % (sig, signal.Signals(sig).name if sig else "no signal"))
        start = running + 1


def main(argv=None):
    args = parse_args(argv)
    m = load_manifest(args.dir)
    cases = selected(m, args)
    counts = {}   # op -> [written, skipped]

    def report(i, reason):
        c = counts.setdefault(cases[i].get("op", "?"), [0, 0])
        c[0 if reason is None else 1] += 1
        if reason is not None and not args.quiet:
            print("skipped %s: %s" % (cases[i].get("id", "?"), reason), flush=True)

    (run_cases if args.no_isolate else run_isolated)(cases, args, m["dtype"], report)
    print("%-26s %8s %8s" % ("op", "written", "skipped"))
    for op, (w, sk) in sorted(counts.items()):
        print("%-26s %8d %8d" % (op, w, sk))
    print("%-26s %8d %8d   (device %s, dtype %s%s)" % (
        "total", sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values()), args.device,
        m["dtype"], ", computed in " + args.compute_dtype if args.compute_dtype else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
