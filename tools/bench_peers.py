#!/usr/bin/env python3
"""Side-by-side speed of conform's optimized kernels and their PyTorch/torchvision peers.

Both read the same inputs: this script generates them (float32, fixed seed), saves them as .npy,
runs `build/conform bench` on the files, then times the peer with torch.set_num_threads(threads)
and the same thread count. An op with a speed goal is measured in --rounds alternating rounds and
judged by the median of the rounds' speedups (this VM's speed drifts by 10-40% within minutes, the
peer's and conform's differently); the range is printed beside it. Needs /usr/bin/python3 with torch and torchvision (Debian's
python3-torch, python3-torchvision); `make bench` runs it when they are there. Never used by CI.

Problems (those of the speed goals):
  roi_align / roi_align_v2_backward: B=2, C=256, 64x64, K=256 rois 8..80 px in a 256x256
  image (centres uniform, batch index uniform in {0,1}), spatial_scale 0.25, 7x7,
  sampling_ratio 2, aligned. Goals: forward >= 10x torchvision, backward >= 50x.
  deformable_offsets / deformable_offsets_grad: N=2, 64x64, C=64, 3x3, stride 1, pad 1,
  dilation 1, 1 group; offsets uniform in [-2, 2], masks in [0, 1]. The peer is
  torchvision.ops.deform_conv2d with the one-hot weight that makes it this op (channel
  c*9 + i*3 + j of its output is y[n, ho*3+i, wo*3+j, c]); it also runs the GEMM of a real
  convolution, so the figure is side by side, without a goal.
  grid_sampler_2d / grid_sampler_2d_backward: N=8, C=64, 128x128 input, 128x128 grid uniform in
  [-1, 1], bilinear, zeros, align_corners false; backward computes both gradients.
  Goal: backward >= 20x torch.nn.functional.grid_sample's autograd backward (no goal for the forward).

usage: bench_peers.py [--conform build/conform] [--threads 2] [--reps 21] [--rounds 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np
import torch
import torchvision
from torchvision.ops import deform_conv2d, roi_align


class Pair:
    """One op side by side: conform's op with its attributes and input files, the peer's timed
    call, and the speed goal (x the peer), if any."""

    def __init__(self, op, peer_name, peer, attrs, inputs, goal):
        self.op, self.peer_name, self.peer, self.attrs, self.inputs, self.goal = op, peer_name, peer, attrs, inputs, goal


def median_s(fn, reps):
    for _ in range(2):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def conform_bench(exe, op, attrs, inputs, threads, reps):
    cmd = [exe, "bench", op, "--threads", str(threads), "--repeat", str(reps), "--impl", "optimized"]
    for k, v in attrs.items():
        cmd += ["--attr", f"{k}={v}"]
    for k, v in inputs.items():
        cmd += ["--input", f"{k}={v}"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def roi_align_problem(seed=12345):
    g = torch.Generator().manual_seed(seed)
    B, C, H, W, K = 2, 256, 64, 64, 256
    x = torch.rand(B, C, H, W, generator=g) * 2 - 1
    c = torch.rand(K, 2, generator=g) * 256
    wh = 8 + torch.rand(K, 2, generator=g) * 72
    b = torch.randint(0, 2, (K, 1), generator=g).float()
    rois = torch.cat([b, c - wh / 2, c + wh / 2], dim=1)  # (b, x1, y1, x2, y2)
    gy = torch.rand(K, C, 7, 7, generator=g) * 2 - 1
    return x, rois, gy


def bench_roi_align(exe, threads, reps, tmp):
    x, rois, gy = roi_align_problem()
    paths = {}
    for name, t in (("x", x), ("rois", rois), ("gy", gy)):
        paths[name] = os.path.join(tmp, name + ".npy")
        np.save(paths[name], t.numpy().astype(np.float32))
    kw = dict(output_size=(7, 7), spatial_scale=0.25, sampling_ratio=2, aligned=True)

    def fwd():
        with torch.no_grad():
            return roi_align(x, rois, **kw)

    xg = x.clone().requires_grad_(True)
    y = roi_align(xg, rois, **kw)

    def bwd():  # backward alone: the graph is kept, the gradient recomputed
        xg.grad = None
        y.backward(gy, retain_graph=True)

    common = {"spatial_scale": 0.25, "sampling_ratio": 2, "aligned": "true"}
    return [Pair("roi_align", "torchvision roi_align forward", fwd, dict(common, pooled_h=7, pooled_w=7),
                 {"input": paths["x"], "rois": paths["rois"]}, 10),
            Pair("roi_align_v2_backward", "torchvision roi_align backward", bwd,
                 dict(common, pooled_height=7, pooled_width=7, input_shape="2,256,64,64"),
                 {"grad_output": paths["gy"], "boxes": paths["rois"]}, 50)]


def deformable_problem(seed=54321):
    g = torch.Generator().manual_seed(seed)
    N, H, W, C, kh, kw = 2, 64, 64, 64, 3, 3
    K = kh * kw
    x = torch.rand(N, H, W, C, generator=g) * 2 - 1                      # NHWC
    off = torch.cat([torch.rand(N, H, W, 2 * K, generator=g) * 4 - 2,   # x offsets, y offsets
                     torch.rand(N, H, W, K, generator=g)], dim=3)        # masks
    grad = torch.rand(N, H * kh, W * kw, C, generator=g) * 2 - 1
    return x, off, grad


def bench_deformable(exe, threads, reps, tmp):
    x, off, grad = deformable_problem()
    N, H, W, C = x.shape
    kh = kw = 3
    K = kh * kw
    paths = {}
    for name, t in (("x", x), ("offsets", off), ("grad", grad)):
        paths[name] = os.path.join(tmp, "deform_" + name + ".npy")
        np.save(paths[name], t.numpy().astype(np.float32))
    attrs = {"ksize": "3,3", "pads": "1,1,1,1"}
    # torchvision layouts, prepared outside the timed region
    xt = x.permute(0, 3, 1, 2).contiguous()
    o = off.permute(0, 3, 1, 2)
    tv_off = torch.stack([o[:, K:2 * K], o[:, :K]], dim=2).reshape(N, 2 * K, H, W).contiguous()  # (dy, dx)
    mask = o[:, 2 * K:].contiguous()
    weight = torch.zeros(C * K, C, kh, kw)
    for c in range(C):
        for i in range(kh):
            for j in range(kw):
                weight[c * K + i * kw + j, c, i, j] = 1.0
    gy = grad.reshape(N, H, kh, W, kw, C).permute(0, 5, 2, 4, 1, 3).reshape(N, C * K, H, W).contiguous()

    def fwd():
        with torch.no_grad():
            return deform_conv2d(xt, tv_off, weight, None, padding=(1, 1), mask=mask)

    xg, og, mg = (t.clone().requires_grad_(True) for t in (xt, tv_off, mask))
    y = deform_conv2d(xg, og, weight, None, padding=(1, 1), mask=mg)

    def bwd():  # backward alone: the graph is kept, the gradients recomputed
        xg.grad = og.grad = mg.grad = None
        y.backward(gy, retain_graph=True)

    return [Pair("deformable_offsets", "torchvision deform_conv2d forward", fwd, attrs,
                 {"x": paths["x"], "offsets": paths["offsets"]}, None),
            Pair("deformable_offsets_grad", "torchvision deform_conv2d backward", bwd, attrs,
                 {"grad": paths["grad"], "x": paths["x"], "offsets": paths["offsets"]}, None)]

def grid_sampler_problem(seed=4321):
    g = torch.Generator().manual_seed(seed)
    N, C, H, W, Ho, Wo = 8, 64, 128, 128, 128, 128
    x = torch.rand(N, C, H, W, generator=g) * 2 - 1
    grid = torch.rand(N, Ho, Wo, 2, generator=g) * 2 - 1
    gy = torch.rand(N, C, Ho, Wo, generator=g) * 2 - 1
    return x, grid, gy


def bench_grid_sampler(exe, threads, reps, tmp):
    import torch.nn.functional as F
    x, grid, gy = grid_sampler_problem()
    paths = {}
    for name, t in (("x", x), ("grid", grid), ("gy", gy)):
        paths[name] = os.path.join(tmp, "gs_" + name + ".npy")
        np.save(paths[name], t.numpy().astype(np.float32))
    kw = dict(mode="bilinear", padding_mode="zeros", align_corners=False)

    def fwd():
        with torch.no_grad():
            return F.grid_sample(x, grid, **kw)

    xg = x.clone().requires_grad_(True)
    gg = grid.clone().requires_grad_(True)
    y = F.grid_sample(xg, gg, **kw)

    def bwd():  # both gradients, the graph kept
        xg.grad = None
        gg.grad = None
        y.backward(gy, retain_graph=True)

    attrs = {"interpolation_mode": 0, "padding_mode": 0, "align_corners": "false"}
    return [Pair("grid_sampler_2d", "torch grid_sample forward", fwd, attrs,
                 {"input": paths["x"], "grid": paths["grid"]}, None),
            Pair("grid_sampler_2d_backward", "torch grid_sample backward", bwd, dict(attrs, output_mask="1,1"),
                 {"grad_output": paths["gy"], "input": paths["x"], "grid": paths["grid"]}, 20)]


def measure(pair, exe, threads, reps, rounds):
    """(peer seconds, conform result) per round, alternating: conform first, after a pause (torch's
    idle worker threads keep spinning for a while after its own runs and would share the cores
    with conform's threads), then the peer."""
    out = []
    for _ in range(rounds):
        time.sleep(2)
        c = conform_bench(exe, pair.op, pair.attrs, pair.inputs, threads, reps)
        out.append((median_s(pair.peer, reps), c))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conform", default="build/conform")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds for an op with a goal")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    print(f"peers: torch {torch.__version__}, torchvision {torchvision.__version__}; threads {a.threads}; "
          f"median of {a.reps}; ops with a goal: median of {a.rounds} alternating rounds")
    print(f"{'op':24} {'peer':34} {'peer ms':>9} {'conform ms':>10} {'speedup':>8} {'goal':>6} "
          f"{'floor ms':>9} {'x floor':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for bench in (bench_roi_align, bench_grid_sampler, bench_deformable):
            for pair in bench(a.conform, a.threads, a.reps, tmp):
                # a goal's verdict from several alternating rounds: this VM's speed drifts by
                # 10-40% within minutes, and a peer's and conform's drift differ
                res = measure(pair, a.conform, a.threads, a.reps, a.rounds if pair.goal else 1)
                ratios = sorted(tp / c["median_s"] for tp, c in res)
                tp = statistics.median(t for t, _ in res)
                c = sorted((r[1] for r in res), key=lambda r: r["median_s"])[len(res) // 2]
                sp = statistics.median(ratios)
                verdict = "" if pair.goal is None else "ok" if sp >= pair.goal else "BELOW GOAL"
                goal_s = f"{pair.goal:5}x" if pair.goal is not None else f"{'-':>6}"
                spread = f"  ({ratios[0]:.1f}-{ratios[-1]:.1f}x over {len(ratios)} rounds)" if len(ratios) > 1 else ""
                print(f"{pair.op:24} {pair.peer_name:34} {tp * 1e3:9.3f} {c['median_s'] * 1e3:10.3f} {sp:7.1f}x "
                      f"{goal_s} {c['floor_s'] * 1e3:9.3f} {c['median_over_floor']:7.2f}x  {verdict}{spread}", flush=True)


if __name__ == "__main__":
    main()
