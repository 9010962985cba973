#!/usr/bin/env python3
"""Counts the false failures of `conform check` on a correct outside implementation: PyTorch 1.13 /
torchvision 0.14 in float32 on CPU.

For every grid sampler mode (interpolation x padding x align_corners: 18), roi_align,
roi_align_v2_backward and deformable_offsets (through torchvision's deform_conv2d with a one-hot
weight), it draws random problems like the default suite's (sizes including H or W = 1, grids in
[-1.5, 1.5] with a share of coordinates exactly on -1, 0, 1, pixel centres and nearest ties, rois
partly outside the image), computes the outputs with torch in float32, and asks
`build/conform check` to judge them. Every failure is a false failure (torch is a correct
implementation of these specs on such inputs), so the counts measure how far the tolerance model
is from holding for every reasonable float32 evaluation. Failing problems are kept in --keep DIR
with the check command that fails them.

Needs /usr/bin/python3 with torch, torchvision and numpy. Not used by make test or CI.

usage: /usr/bin/python3 tools/torch_false_failures.py [--seeds 1,2,3] [--problems 20]
           [--conform build/conform] [--keep DIR] [--only grid|roi|deform]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from torchvision.ops import deform_conv2d, roi_align

INTERP = ["bilinear", "nearest", "bicubic"]
PAD = ["zeros", "border", "reflection"]


def save(d, arrays):
    paths = {}
    for k, v in arrays.items():
        paths[k] = os.path.join(d, k + ".npy")
        np.save(paths[k], v.detach().numpy().astype(np.float32) if isinstance(v, torch.Tensor) else v)
    return paths


def check(exe, op, attrs, inputs, actual):
    cmd = [exe, "check", op]
    for k, v in attrs.items():
        cmd += ["--attr", "%s=%s" % (k, v)]
    for k, v in inputs.items():
        cmd += ["--input", "%s=%s" % (k, v)]
    for k, v in actual.items():
        cmd += ["--actual", "%s=%s" % (k, v)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit("conform check exited %d: %s\n%s" % (r.returncode, " ".join(cmd), r.stderr))
    return r.returncode == 0, cmd, r.stdout + r.stderr


# ---- problems ----------------------------------------------------------------------------------
def grid_special(g, S, ac):
    """a coordinate exactly on -1, 0, 1, a pixel centre or a nearest tie (float32)"""
    k = int(g.integers(0, 5))
    if k < 3:
        return [-1.0, 0.0, 1.0][k]
    i = float(g.integers(-1, S + 1)) - (0.5 if k == 4 else 0.0)
    if ac:
        return 2.0 * i / (S - 1) - 1.0 if S > 1 else 0.0
    return (2.0 * i + 1.0) / S - 1.0


def grid_problem(g):
    N, C = int(g.integers(1, 3)), int(g.integers(1, 4))
    H, W = (int(g.integers(1, 10)) for _ in range(2))
    if g.random() < 0.2:
        H = 1
    if g.random() < 0.2:
        W = 1
    Ho, Wo = int(g.integers(1, 6)), int(g.integers(1, 6))
    x = torch.from_numpy(g.uniform(-1, 1, (N, C, H, W)).astype(np.float32))
    grid = g.uniform(-1.5, 1.5, (N, Ho, Wo, 2))
    return x, grid, (N, C, H, W, Ho, Wo)


def run_grid(exe, g, tmp, interp, pad, ac):
    x, grid, (N, C, H, W, Ho, Wo) = grid_problem(g)
    for idx in np.ndindex(grid.shape):
        if g.random() < 0.3:
            grid[idx] = grid_special(g, H if idx[3] else W, ac)
    grid = torch.from_numpy(grid.astype(np.float32))
    gy = torch.from_numpy(g.uniform(-1, 1, (N, C, Ho, Wo)).astype(np.float32))
    xg, gg = x.clone().requires_grad_(True), grid.clone().requires_grad_(True)
    y = F.grid_sample(xg, gg, mode=INTERP[interp], padding_mode=PAD[pad], align_corners=bool(ac))
    y.backward(gy)
    p = save(tmp, {"input": x, "grid": grid, "grad_output": gy, "output": y, "input_grad": xg.grad,
                   "grid_grad": gg.grad})
    attrs = {"interpolation_mode": interp, "padding_mode": pad, "align_corners": "true" if ac else "false"}
    results = []
    ok, cmd, out = check(exe, "grid_sampler_2d", attrs, {"input": p["input"], "grid": p["grid"]},
                         {"output": p["output"]})
    results.append(("grid_sampler_2d", ok, cmd, out))
    ok, cmd, out = check(exe, "grid_sampler_2d_backward", attrs,
                         {"grad_output": p["grad_output"], "input": p["input"], "grid": p["grid"]},
                         {"input_grad": p["input_grad"], "grid_grad": p["grid_grad"]})
    results.append(("grid_sampler_2d_backward", ok, cmd, out))
    return results


def roi_problem(g):
    B, C = int(g.integers(1, 3)), int(g.integers(1, 5))
    H, W = int(g.integers(1, 25)), int(g.integers(1, 25))
    scale = float([0.25, 0.5, 1.0, 0.3][int(g.integers(0, 4))])
    K = int(g.integers(1, 9))
    ph, pw = int(g.integers(1, 5)), int(g.integers(1, 5))
    img_h, img_w = H / scale, W / scale
    c = np.stack([g.uniform(-0.2, 1.2, K) * img_w, g.uniform(-0.2, 1.2, K) * img_h], 1)
    wh = g.uniform(1, 60, (K, 2))
    rois = np.concatenate([g.integers(0, B, (K, 1)).astype(np.float64), c - wh / 2, c + wh / 2], 1)
    x = torch.from_numpy(g.uniform(-1, 1, (B, C, H, W)).astype(np.float32))
    return x, torch.from_numpy(rois.astype(np.float32)), scale, ph, pw


def run_roi(exe, g, tmp, sr, aligned):
    x, rois, scale, ph, pw = roi_problem(g)
    xg = x.clone().requires_grad_(True)
    y = roi_align(xg, rois, output_size=(ph, pw), spatial_scale=scale, sampling_ratio=sr, aligned=bool(aligned))
    gy = torch.from_numpy(g.uniform(-1, 1, tuple(y.shape)).astype(np.float32))
    y.backward(gy)
    p = save(tmp, {"input": x, "rois": rois, "output": y, "grad_output": gy, "grad_input": xg.grad})
    common = {"spatial_scale": repr(scale), "sampling_ratio": sr, "aligned": "true" if aligned else "false"}
    results = []
    ok, cmd, out = check(exe, "roi_align", dict(common, pooled_h=ph, pooled_w=pw),
                         {"input": p["input"], "rois": p["rois"]}, {"output": p["output"]})
    results.append(("roi_align", ok, cmd, out))
    shape = ",".join(str(d) for d in x.shape)
    ok, cmd, out = check(exe, "roi_align_v2_backward",
                         dict(common, pooled_height=ph, pooled_width=pw, input_shape=shape),
                         {"grad_output": p["grad_output"], "boxes": p["rois"]}, {"grad_input": p["grad_input"]})
    results.append(("roi_align_v2_backward", ok, cmd, out))
    return results


def run_deform(exe, g, tmp):
    N, C = int(g.integers(1, 3)), int(g.integers(1, 5))
    H, W = int(g.integers(1, 10)), int(g.integers(1, 10))
    kh, kw = int(g.integers(1, 4)), int(g.integers(1, 4))
    sh, sw, dh, dw = (int(g.integers(1, 3)) for _ in range(4))
    pt, pl = int(g.integers(0, 3)), int(g.integers(0, 3))
    if H + 2 * pt < dh * (kh - 1) + 1 or W + 2 * pl < dw * (kw - 1) + 1:
        pt, pl = dh * (kh - 1), dw * (kw - 1)
    Ho, Wo = (H + 2 * pt - dh * (kh - 1) - 1) // sh + 1, (W + 2 * pl - dw * (kw - 1) - 1) // sw + 1
    K = kh * kw
    x = g.uniform(-1, 1, (N, H, W, C))
    off = np.concatenate([g.uniform(-3, 3, (N, Ho, Wo, 2 * K)), g.uniform(0, 1, (N, Ho, Wo, K))], 3)
    # a share of offsets that put samples exactly on pixel centres and on the border lines
    sel = g.random(off[..., :2 * K].shape) < 0.2
    off[..., :2 * K][sel] = np.round(off[..., :2 * K][sel])
    x = torch.from_numpy(x.astype(np.float32))
    off = torch.from_numpy(off.astype(np.float32))
    xt = x.permute(0, 3, 1, 2).contiguous()
    o = off.permute(0, 3, 1, 2)
    tv_off = torch.stack([o[:, K:2 * K], o[:, :K]], dim=2).reshape(N, 2 * K, Ho, Wo).contiguous()  # (dy, dx)
    mask = o[:, 2 * K:].contiguous()
    weight = torch.zeros(C * K, 1, kh, kw)
    for c in range(C):
        for i in range(kh):
            for j in range(kw):
                weight[c * K + i * kw + j, 0, i, j] = 1.0
    with torch.no_grad():
        yt = deform_conv2d(xt, tv_off, weight, None, stride=(sh, sw), padding=(pt, pl), dilation=(dh, dw),
                           mask=mask)
    y = yt.reshape(N, C, kh, kw, Ho, Wo).permute(0, 4, 2, 5, 3, 1).reshape(N, Ho * kh, Wo * kw, C)
    p = save(tmp, {"x": x, "offsets": off, "y": y.contiguous()})
    attrs = {"ksize": "%d,%d" % (kh, kw), "strides": "1,%d,%d,1" % (sh, sw), "dilations": "1,%d,%d,1" % (dh, dw),
             "pads": "%d,%d,%d,%d" % (pt, pt, pl, pl)}
    ok, cmd, out = check(exe, "deformable_offsets", attrs, {"x": p["x"], "offsets": p["offsets"]}, {"y": p["y"]})
    return [("deformable_offsets", ok, cmd, out)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--problems", type=int, default=20, help="problems per mode and seed")
    ap.add_argument("--conform", default="build/conform")
    ap.add_argument("--keep", default=None, help="directory for the failing problems")
    ap.add_argument("--only", choices=["grid", "roi", "deform"], default=None)
    a = ap.parse_args()
    torch.set_num_threads(1)
    counts = {}  # (op, mode) -> [checks, failures]
    keep_n = 0
    for seed in (int(s) for s in a.seeds.split(",")):
        g = np.random.default_rng(seed)
        jobs = []
        if a.only in (None, "grid"):
            jobs += [("%s/%s/ac=%d" % (INTERP[i], PAD[p], ac), lambda t, i=i, p=p, ac=ac: run_grid(a.conform, g, t, i, p, ac))
                     for i in range(3) for p in range(3) for ac in range(2)]
        if a.only in (None, "roi"):
            jobs += [("sr=%d/aligned=%d" % (sr, al), lambda t, sr=sr, al=al: run_roi(a.conform, g, t, sr, al))
                     for sr in range(4) for al in range(2)]
        if a.only in (None, "deform"):
            jobs += [("random", lambda t: run_deform(a.conform, g, t))]
        for mode, job in jobs:
            for _ in range(a.problems):
                tmp = tempfile.mkdtemp(prefix="tff_")
                for op, ok, cmd, out in job(tmp):
                    c = counts.setdefault((op, mode), [0, 0])
                    c[0] += 1
                    if not ok:
                        c[1] += 1
                        if a.keep:
                            d = os.path.join(a.keep, "%04d" % keep_n)
                            keep_n += 1
                            shutil.copytree(tmp, d)
                            with open(os.path.join(d, "cmd.txt"), "w") as f:
                                f.write(" ".join(cmd).replace(tmp, d) + "\n" + out)
                shutil.rmtree(tmp)
    total = [0, 0]
    print("%-26s %-28s %7s %9s" % ("op", "mode", "checks", "failures"))
    for (op, mode), (n, f) in sorted(counts.items()):
        print("%-26s %-28s %7d %9d" % (op, mode, n, f))
        total[0] += n
        total[1] += f
    print("%-26s %-28s %7d %9d" % ("total", "", total[0], total[1]))


if __name__ == "__main__":
    main()
