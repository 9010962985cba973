#!/usr/bin/env python3
"""Golden vectors from PyTorch / torchvision (float64), written as conform suite files.

    /usr/bin/python3 tools/golden_torch.py

writes, byte-identically on every run (fixed seeds, one torch thread):

    cases/golden/torchvision_roi_align.json          roi_align, roi_align_v2_backward
    cases/golden/torch_grid_sampler.json             grid_sampler_2d, grid_sampler_2d_backward
    cases/golden/torchvision_deformable_offsets.json deformable_offsets, deformable_offsets_grad

Needs torch and torchvision (CI does not have them: the outputs are committed). Inputs are drawn
in float32 (the harness also runs its float32 path on them) and the expected outputs are computed
in float64. Each case carries its inputs as exact data and its outputs as "expect" (flat lists,
row-major), which the harness checks against the reference to 1e-12.

Inputs are kept away from the points where an output is discontinuous in them (spec section A
window lines, adaptive sample counts, integer coordinates where the bilinear/bicubic coordinate
gradients switch branch, nearest-rounding ties, padding clip and reflection fold points), by at
least MARGIN in unnormalised / feature coordinates, so the golden value is unambiguous and a float32
evaluation of the same inputs lands on the same branch.

Besides torch, every vector is recomputed here with a plain-Python transcription of the spec
(docs/spec/ops.md sections A, 1, 2, 5, 6, 7) and the script stops if any element differs by
more than 1e-12 * max(1, |value|): this checks the layout rearrangements and that torch and the
spec agree on these inputs.
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
import torchvision
from torchvision.ops import deform_conv2d, roi_align

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.normpath(os.path.join(HERE, "..", "cases", "golden"))
GENERATOR = "tools/golden_torch.py"
SOURCE = "torch %s / torchvision %s (float64)" % (torch.__version__, torchvision.__version__)
MARGIN = 1e-4   # distance kept from every discontinuity (feature / unnormalised coordinates)
TOL = 1e-12     # spec transcription vs torch, relative to max(1, |value|): the harness's expect rule

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)


# ---- helpers ---------------------------------------------------------------------------------------
def rand32(g, shape, lo, hi):
    """float32 uniform in [lo, hi): every value exactly representable in float32."""
    return torch.rand(shape, generator=g, dtype=torch.float32) * (hi - lo) + lo


def scalar32(g, lo, hi):
    return float(rand32(g, (), lo, hi))


def flat(t):
    return t.detach().to(torch.float64).reshape(-1).tolist()


def dist_int(v):
    return abs(v - round(v))


def near_half(v):
    return abs(v - math.floor(v) - 0.5) <= MARGIN


def check_close(what, got, want):
    assert len(got) == len(want), (what, len(got), len(want))
    worst = 0.0
    for a, b in zip(got, want):
        e = abs(a - b)
        if not e <= TOL * max(1.0, abs(b)):
            raise AssertionError("%s: spec transcription %r vs torch %r (diff %.3g)" % (what, a, b, e))
        worst = max(worst, e)
    return worst


def case(name, op, shapes, attrs, gen, expect):
    return {"name": name, "op": op, "shapes": shapes, "attrs": attrs,
            "gen": {k: {"data": v} for k, v in gen.items()}, "expect": expect}


def write_suite(fname, suite, seed, cases):
    head = {"suite": suite, "seed": seed, "generator": GENERATOR, "source": SOURCE}
    text = json.dumps(head, separators=(", ", ": "))[:-1] + ', "cases": [\n'
    text += ",\n".join(json.dumps(c, separators=(",", ":")) for c in cases)
    text += "\n]}\n"
    json.loads(text)  # well-formed
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, fname)
    with open(path, "w") as f:
        f.write(text)
    counts = {}
    for c in cases:
        counts[c["op"]] = counts.get(c["op"], 0) + 1
    print("%s: %s (%d bytes)" % (os.path.relpath(path, os.path.join(HERE, "..")),
                                 ", ".join("%s %d" % kv for kv in counts.items()), len(text.encode())))


# =====================================================================================================
# roi_align / roi_align_v2_backward (spec A, 1, 2)
# =====================================================================================================
def spec_bilinear(H, W, y, x):
    """Section A: list of (h, w, weight); empty outside the window."""
    if not (y >= -1 and y <= H and x >= -1 and x <= W):
        return []
    if y <= 0: y = 0.0
    if x <= 0: x = 0.0
    y0, x0 = int(y), int(x)
    if y0 >= H - 1:
        y0 = y1 = H - 1; y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= W - 1:
        x0 = x1 = W - 1; x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    hy, hx = 1 - ly, 1 - lx
    return [(y0, x0, hy * hx), (y0, x1, hy * lx), (y1, x0, ly * hx), (y1, x1, ly * lx)]


def spec_roi_geometry(roi, PH, PW, s, sr, aligned):
    off = 0.5 if aligned else 0.0
    sx, sy = roi[1] * s - off, roi[2] * s - off
    ex, ey = roi[3] * s - off, roi[4] * s - off
    rw, rh = ex - sx, ey - sy
    if not aligned:
        rw, rh = max(rw, 1.0), max(rh, 1.0)
    bh, bw = rh / PH, rw / PW
    gh = sr if sr > 0 else math.ceil(rh / PH)
    gw = sr if sr > 0 else math.ceil(rw / PW)
    count = max(gh * gw, 1)
    ys = [[sy + ph * bh + (iy + 0.5) * bh / gh for iy in range(gh)] for ph in range(PH)]
    xs = [[sx + pw * bw + (ix + 0.5) * bw / gw for ix in range(gw)] for pw in range(PW)]
    return ys, xs, count, (rh / PH, rw / PW)


def spec_roi_align(inp, shape, rois, PH, PW, s, sr, aligned, grad_output=None):
    """Forward (grad_output None) -> output list; backward -> grad_input list."""
    B, C, H, W = shape
    K = len(rois) // 5
    out = [0.0] * (K * C * PH * PW) if grad_output is None else [0.0] * (B * C * H * W)
    for k in range(K):
        roi = rois[5 * k:5 * k + 5]
        b = math.floor(roi[0])
        if not (0 <= b < B):
            continue
        ys, xs, count, _ = spec_roi_geometry(roi, PH, PW, s, sr, aligned)
        for c in range(C):
            plane = (b * C + c) * H * W
            for ph in range(PH):
                for pw in range(PW):
                    o = ((k * C + c) * PH + ph) * PW + pw
                    acc = 0.0
                    for y in ys[ph]:
                        for x in xs[pw]:
                            for h, w, wt in spec_bilinear(H, W, y, x):
                                if grad_output is None:
                                    acc += wt * inp[plane + h * W + w]
                                else:
                                    out[plane + h * W + w] += grad_output[o] * wt / count
                    if grad_output is None:
                        out[o] = acc / count
    return out


def roi_ok(roi, H, W, PH, PW, s, sr, aligned, allow_degenerate):
    ys, xs, _, (bin_h, bin_w) = spec_roi_geometry(roi, PH, PW, s, sr, aligned)
    for lines, pts in (((-1.0, float(H)), [v for r in ys for v in r]),
                       ((-1.0, float(W)), [v for r in xs for v in r])):
        for v in pts:
            if any(abs(v - L) <= MARGIN for L in lines):
                return False
    if sr == 0:
        for b in (bin_h, bin_w):
            if dist_int(b) <= MARGIN and not (allow_degenerate and b == 0.0):
                return False
    return True


def roi_axis(g, kind, size_img, s):
    """(lo, hi) of one roi axis in image coordinates."""
    px = 1.0 / s  # one feature pixel in image coordinates
    if kind == "inside":
        lo = scalar32(g, 0.0, 0.6 * size_img)
        return lo, lo + scalar32(g, 0.2, 0.4) * size_img
    if kind == "partial":
        if scalar32(g, 0, 1) < 0.5:
            lo = scalar32(g, -0.5, -0.05) * size_img
        else:
            lo = scalar32(g, 0.6, 0.95) * size_img
        return lo, lo + scalar32(g, 0.3, 0.7) * size_img
    if kind == "small":
        lo = scalar32(g, -1.5 * px, size_img + 0.5 * px)
        return lo, lo + scalar32(g, 0.05, 0.95) * px
    if kind == "large":
        return scalar32(g, -0.6, -0.1) * size_img, scalar32(g, 1.1, 1.6) * size_img
    if kind == "inverted":
        lo = scalar32(g, 0.2, 0.9) * size_img
        return lo, lo - scalar32(g, 0.1, 0.5) * size_img
    if kind == "inverted_small":   # x2 < x1 by less than one feature pixel
        lo = scalar32(g, 0.2, 0.9) * size_img
        return lo, lo - scalar32(g, 0.05, 0.95) * px
    raise ValueError(kind)


def make_rois(g, B, H, W, PH, PW, s, sr, aligned, kinds):
    rois = []
    for n, (ky, kx) in enumerate(kinds):
        if ky == "degenerate":   # exactly zero width and height
            v = float(torch.tensor(1.75 / s, dtype=torch.float32))
            roi = [float(n % B), v, v, v, v]
            assert roi_ok(roi, H, W, PH, PW, s, sr, aligned, True)
            rois += roi
            continue
        for _ in range(1000):
            x1, x2 = roi_axis(g, kx, W / s, s)
            y1, y2 = roi_axis(g, ky, H / s, s)
            roi = [float(n % B)] + [float(torch.tensor(v, dtype=torch.float32)) for v in (x1, y1, x2, y2)]
            if roi_ok(roi, H, W, PH, PW, s, sr, aligned, False):
                break
        else:
            raise RuntimeError("could not place a roi")
        rois += roi
    return rois


ROI_KINDS = ["inside", "partial", "small", "large"]


def roi_configs():
    """(tag, input shape, pooled, spatial_scale, sampling_ratio, aligned, roi kinds (y, x))."""
    shapes = [(1, 3, 7, 9), (2, 2, 6, 8), (1, 2, 9, 7), (2, 2, 5, 6), (1, 3, 8, 8), (1, 2, 11, 5),
              (2, 2, 7, 5), (1, 4, 6, 6)]
    pooled = [(2, 3), (3, 2), (2, 2), (3, 3)]
    scales = [1.0, 0.5, 0.25, 0.125]
    out = []
    i = 0
    for rep in range(2):
        for aligned in (True, False):
            for sr in (0, 1, 2, 3):
                K = 3 + (i % 3)
                kinds = [(ROI_KINDS[(i + j) % 4], ROI_KINDS[(i + 2 * j + rep) % 4]) for j in range(K)]
                out.append(("%s_sr%d_%d" % ("aligned" if aligned else "unaligned", sr, rep),
                            shapes[i % len(shapes)], pooled[(i + rep) % 4], scales[(i // 2 + rep) % 4],
                            sr, aligned, kinds))
                i += 1
    # aligned rois with x2 < x1 / y2 < y1: no samples with sampling_ratio 0, mirrored bins otherwise;
    # plus one roi of exactly zero size. With sampling_ratio 0, torchvision throws ("cannot create
    # std::vector larger than max_size()") when exactly one of ceil(rh/PH), ceil(rw/PW) is negative
    # (it sizes a buffer with their product), so there one axis is inverted by less than a bin (ceil = 0)
    # or both are inverted.
    inv = [("inverted", "inside"), ("inside", "inverted"), ("inverted", "inverted"), ("degenerate", None)]
    inv0 = [("inverted_small", "inside"), ("inside", "inverted_small"), ("inverted", "inverted"),
            ("degenerate", None)]
    out.append(("aligned_inverted_sr0", (1, 2, 7, 8), (2, 3), 0.5, 0, True, inv0))
    out.append(("aligned_inverted_sr2", (1, 2, 8, 7), (3, 2), 0.5, 2, True, inv))
    out.append(("unaligned_inverted_sr0", (1, 2, 6, 7), (2, 2), 1.0, 0, False, inv))
    return out


def gen_roi_align():
    g = torch.Generator().manual_seed(1)
    fwd, bwd = [], []
    for tag, shape, (PH, PW), s, sr, aligned, kinds in roi_configs():
        B, C, H, W = shape
        for which in ("fwd", "bwd"):
            rois = make_rois(g, B, H, W, PH, PW, s, sr, aligned, kinds)
            K = len(kinds)
            rois_t = torch.tensor(rois, dtype=torch.float64).reshape(K, 5)
            if which == "fwd":
                x = rand32(g, shape, -1, 1)
                out = roi_align(x.double(), rois_t, (PH, PW), s, sr, aligned)
                xs, o = flat(x), flat(out)
                check_close("roi_align " + tag, spec_roi_align(xs, shape, rois, PH, PW, s, sr, aligned), o)
                fwd.append(case("fwd_" + tag, "roi_align", {"input": list(shape), "rois": [K, 5]},
                                {"pooled_h": PH, "pooled_w": PW, "spatial_scale": s,
                                 "sampling_ratio": sr, "aligned": aligned},
                                {"input": xs, "rois": rois}, {"output": o}))
            else:
                go = rand32(g, (K, C, PH, PW), -1, 1)
                x = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
                roi_align(x, rois_t, (PH, PW), s, sr, aligned).backward(go.double())
                gs, gi = flat(go), flat(x.grad)
                check_close("roi_align_v2_backward " + tag,
                            spec_roi_align(None, shape, rois, PH, PW, s, sr, aligned, gs), gi)
                bwd.append(case("bwd_" + tag, "roi_align_v2_backward",
                                {"grad_output": [K, C, PH, PW], "boxes": [K, 5]},
                                {"input_shape": list(shape), "pooled_height": PH, "pooled_width": PW,
                                 "spatial_scale": s, "sampling_ratio": sr, "aligned": aligned},
                                {"grad_output": gs, "boxes": rois}, {"grad_input": gi}))
    check_published_roi_align()
    write_suite("torchvision_roi_align.json", "golden_torchvision_roi_align", 1, fwd + bwd)


def check_published_roi_align():
    """Spec section 9: the torch_npu ROIAlign doc example, through torchvision."""
    x = torch.arange(1, 37, dtype=torch.float64).reshape(1, 1, 6, 6).requires_grad_(True)
    rois = torch.tensor([[0, -2, -2, 22, 22]], dtype=torch.float64)
    out = roi_align(x, rois, (3, 3), 0.25, 2, False)
    assert out.reshape(-1).tolist() == [4.5, 6.5, 8.5, 16.5, 18.5, 20.5, 28.5, 30.5, 32.5]
    out.sum().backward()
    assert x.grad.reshape(-1).tolist() == [0.25] * 36
    x.grad = None
    out = roi_align(x, rois, (3, 3), 0.25, 2, True)
    assert out.reshape(-1).tolist() == [2.75, 4.5, 6.5, 13.25, 15, 17, 25.25, 27, 29]
    out.sum().backward()
    edge = [.1875, .125, .125, .125, .125, .0625]
    want = [.5625, .375, .375, .375, .375, .1875] + [.375, .25, .25, .25, .25, .125] * 4 + edge
    assert x.grad.reshape(-1).tolist() == want


# =====================================================================================================
# grid_sampler_2d / grid_sampler_2d_backward (spec 7)
# =====================================================================================================
MODES = ["bilinear", "nearest", "bicubic"]
PADS = ["zeros", "border", "reflection"]
A = -0.75


def unnormalize(c, S, ac):
    if ac:
        return (c + 1) / 2 * (S - 1), (S - 1) / 2
    return ((c + 1) * S - 1) / 2, S / 2


def reflect(i, S, ac):
    """Reflection before clipping: (value, derivative sign)."""
    lo, hi = (0, 2 * (S - 1)) if ac else (-1, 2 * S - 1)
    if lo == hi:
        return 0.0, 0.0
    mn, span = lo / 2, (hi - lo) / 2
    t = i - mn
    sgn = -1.0 if t < 0 else 1.0
    t = abs(t)
    extra = math.fmod(t, span)
    flips = math.floor(t / span)
    if flips % 2 == 0:
        return extra + mn, sgn
    return span - extra + mn, -sgn


def clip(i, S):
    if i <= 0:
        return 0.0, 0.0
    if i >= S - 1:
        return float(S - 1), 0.0
    return i, 1.0


def pad_coord(i, S, pad, ac):
    """Padding of section 7.1: (coordinate, derivative multiplier of the padding)."""
    if pad == 0:
        return i, 1.0
    d0 = 1.0
    if pad == 2:
        i, d0 = reflect(i, S, ac)
    i, d = clip(i, S)
    return i, d0 * d


def grid_coord_ok(c, S, interp, pad, ac):
    i, _ = unnormalize(c, S, ac)
    if ac and S == 1:
        return True  # the coordinate is constantly 0 and its multiplier 0
    if interp == 2:
        return dist_int(i) > MARGIN
    r = i
    if pad == 2:
        lo, hi = (0, 2 * (S - 1)) if ac else (-1, 2 * S - 1)
        mn, span = lo / 2, (hi - lo) / 2
        if dist_int((i - mn) / span) * span <= MARGIN:   # reflection fold point
            return False
        r, _ = reflect(i, S, ac)
    if interp == 0:
        return dist_int(r) > MARGIN   # covers the clip points 0 and S-1 and the zeros bounds
    p = clip(r, S)[0] if pad else r
    return not near_half(p)


def cubic_coeffs(t):
    def cc1(x): return ((A + 2) * x - (A + 3)) * x * x + 1
    def cc2(x): return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return [cc2(t + 1), cc1(t), cc1(1 - t), cc2(2 - t)]


def cubic_coeff_grads(t):
    x0, x1, x2, x3 = -1 - t, -t, 1 - t, 2 - t
    return [(-3 * A * x0 - 10 * A) * x0 - 8 * A,
            (-3 * (A + 2) * x1 - 2 * (A + 3)) * x1,
            (3 * (A + 2) * x2 - 2 * (A + 3)) * x2,
            (3 * A * x3 - 10 * A) * x3 + 8 * A]


def rint(v):
    return float(round(v))  # Python rounds half to even


def spec_grid_sampler(inp, shape, grid, gshape, interp, pad, ac, grad_output=None):
    """Forward -> output; backward (grad_output given) -> (input_grad, grid_grad)."""
    N, C, H, W = shape
    _, Ho, Wo, _ = gshape
    fwd = grad_output is None
    out = [0.0] * (N * C * Ho * Wo)
    gin = [0.0] * (N * C * H * W)
    ggrid = [0.0] * (N * Ho * Wo * 2)

    def inb(h, w):
        return 0 <= h < H and 0 <= w < W

    for n in range(N):
        for ho in range(Ho):
            for wo in range(Wo):
                gp = ((n * Ho + ho) * Wo + wo) * 2
                ix, mx = unnormalize(grid[gp], W, ac)
                iy, my = unnormalize(grid[gp + 1], H, ac)
                if interp != 2:
                    ix, dx = pad_coord(ix, W, pad, ac)
                    iy, dy = pad_coord(iy, H, pad, ac)
                    mx, my = mx * dx, my * dy
                gix = giy = 0.0
                for c in range(C):
                    plane = (n * C + c) * H * W
                    o = ((n * C + c) * Ho + ho) * Wo + wo
                    g = 0.0 if fwd else grad_output[o]
                    acc = 0.0
                    if interp == 0:
                        x0, y0 = math.floor(ix), math.floor(iy)
                        x1, y1 = x0 + 1, y0 + 1
                        corners = [(y0, x0, (x1 - ix) * (y1 - iy), -(y1 - iy), -(x1 - ix)),
                                   (y0, x1, (ix - x0) * (y1 - iy), (y1 - iy), -(ix - x0)),
                                   (y1, x0, (x1 - ix) * (iy - y0), -(iy - y0), (x1 - ix)),
                                   (y1, x1, (ix - x0) * (iy - y0), (iy - y0), (ix - x0))]
                        for h, w, wt, ddx, ddy in corners:
                            if inb(h, w):
                                v = inp[plane + h * W + w]
                                acc += wt * v
                                gin[plane + h * W + w] += wt * g
                                gix += v * ddx * g
                                giy += v * ddy * g
                    elif interp == 1:
                        h, w = int(rint(iy)), int(rint(ix))
                        if inb(h, w):
                            acc = inp[plane + h * W + w]
                            gin[plane + h * W + w] += g
                    else:
                        x0, y0 = math.floor(ix), math.floor(iy)
                        tx, ty = ix - x0, iy - y0
                        xc, yc = cubic_coeffs(tx), cubic_coeffs(ty)
                        xg, yg = cubic_coeff_grads(tx), cubic_coeff_grads(ty)
                        for j in range(4):
                            for i in range(4):
                                hx = pad_coord(float(x0 - 1 + i), W, pad, ac)[0]
                                hy = pad_coord(float(y0 - 1 + j), H, pad, ac)[0]
                                h, w = int(hy), int(hx)
                                if not inb(h, w):
                                    continue
                                v = inp[plane + h * W + w]
                                acc += v * xc[i] * yc[j]
                                gin[plane + h * W + w] += g * xc[i] * yc[j]
                                gix -= v * xg[i] * yc[j] * g
                                giy -= v * yg[j] * xc[i] * g
                    out[o] = acc
                ggrid[gp] = mx * gix
                ggrid[gp + 1] = my * giy
    return out if fwd else (gin, ggrid)


def make_grid(g, gshape, H, W, interp, pad, ac):
    grid = rand32(g, gshape, -1.2, 1.2).reshape(-1, 2)
    for p in range(grid.shape[0]):
        for axis, S in ((0, W), (1, H)):
            while not grid_coord_ok(float(grid[p, axis]), S, interp, pad, ac):
                grid[p, axis] = rand32(g, (), -1.2, 1.2)
    return grid.reshape(gshape)


def grid_configs():
    """(tag, input shape, output Ho Wo, interpolation, padding, align_corners)."""
    shapes = [(1, 2, 6, 7), (2, 2, 5, 5), (1, 3, 7, 5), (1, 2, 5, 8), (2, 3, 6, 6), (1, 2, 8, 6)]
    outs = [(3, 4), (2, 3), (4, 3), (3, 3)]
    cfg = []
    i = 0
    for interp in range(3):
        for pad in range(3):
            for ac in (False, True):
                cfg.append(("%s_%s_ac%d" % (MODES[interp], PADS[pad], ac), shapes[i % len(shapes)],
                            outs[i % len(outs)], interp, pad, ac))
                i += 1
    # inputs with a dimension of 1
    cfg.append(("bilinear_reflection_ac1_h1", (1, 2, 1, 6), (3, 3), 0, 2, True))
    cfg.append(("bicubic_border_ac0_w1", (1, 2, 6, 1), (3, 3), 2, 1, False))
    cfg.append(("nearest_zeros_ac0_h1", (2, 2, 1, 5), (2, 3), 1, 0, False))
    cfg.append(("bilinear_zeros_ac1_w1", (1, 3, 5, 1), (3, 2), 0, 0, True))
    cfg.append(("bicubic_reflection_ac0_h1", (1, 2, 1, 7), (2, 4), 2, 2, False))
    cfg.append(("bilinear_border_ac0_h1w1", (1, 2, 1, 1), (2, 3), 0, 1, False))
    return cfg


def gen_grid_sampler():
    g = torch.Generator().manual_seed(2)
    fwd, bwd = [], []
    for tag, shape, (Ho, Wo), interp, pad, ac in grid_configs():
        N, C, H, W = shape
        gshape = (N, Ho, Wo, 2)
        attrs = {"interpolation_mode": interp, "padding_mode": pad, "align_corners": ac}
        for which in ("fwd", "bwd"):
            x = rand32(g, shape, -1, 1)
            grid = make_grid(g, gshape, H, W, interp, pad, ac)
            xs, gs = flat(x), flat(grid)
            if which == "fwd":
                out = F.grid_sample(x.double(), grid.double(), mode=MODES[interp], padding_mode=PADS[pad],
                                    align_corners=ac)
                o = flat(out)
                check_close("grid_sampler_2d " + tag,
                            spec_grid_sampler(xs, shape, gs, gshape, interp, pad, ac), o)
                fwd.append(case("fwd_" + tag, "grid_sampler_2d", {"input": list(shape), "grid": list(gshape)},
                                attrs, {"input": xs, "grid": gs}, {"output": o}))
            else:
                go = rand32(g, (N, C, Ho, Wo), -1, 1)
                xd = x.double().requires_grad_(True)
                gd = grid.double().requires_grad_(True)
                F.grid_sample(xd, gd, mode=MODES[interp], padding_mode=PADS[pad],
                              align_corners=ac).backward(go.double())
                gos, gi, gg = flat(go), flat(xd.grad), flat(gd.grad)
                si, sg = spec_grid_sampler(xs, shape, gs, gshape, interp, pad, ac, gos)
                check_close("grid_sampler_2d_backward input_grad " + tag, si, gi)
                check_close("grid_sampler_2d_backward grid_grad " + tag, sg, gg)
                bwd.append(case("bwd_" + tag, "grid_sampler_2d_backward",
                                {"grad_output": [N, C, Ho, Wo], "input": list(shape), "grid": list(gshape)},
                                dict(attrs, output_mask=[1, 1]),
                                {"grad_output": gos, "input": xs, "grid": gs},
                                {"input_grad": gi, "grid_grad": gg}))
    write_suite("torch_grid_sampler.json", "golden_torch_grid_sampler", 2, fwd + bwd)


# =====================================================================================================
# deformable_offsets / deformable_offsets_grad (spec 5, 6)
# =====================================================================================================
def deform_geometry(H, W, kh, kw, sh, sw, dh, dw, pads):
    pt, pb, pl, pr = pads
    Ho = (H + pt + pb - (dh * (kh - 1) + 1)) // sh + 1
    Wo = (W + pl + pr - (dw * (kw - 1) + 1)) // sw + 1
    return Ho, Wo


def spec_deformable(x, xshape, off, kh, kw, sh, sw, dh, dw, pads, dg, grad=None):
    """Forward -> y; backward (grad given) -> (grad_x, grad_offsets); all NHWC flat lists."""
    N, H, W, C = xshape
    Ho, Wo = deform_geometry(H, W, kh, kw, sh, sw, dh, dw, pads)
    pt, pl = pads[0], pads[2]
    K = kh * kw
    dgK = dg * K
    OC = 3 * dgK
    cpg = C // dg
    y = [0.0] * (N * Ho * kh * Wo * kw * C)
    gx = [0.0] * (N * H * W * C)
    goff = [0.0] * (N * Ho * Wo * OC)

    def V(n, h, w, c):
        return x[((n * H + h) * W + w) * C + c] if (0 <= h < H and 0 <= w < W) else 0.0

    for n in range(N):
        for ho in range(Ho):
            for wo in range(Wo):
                ob = ((n * Ho + ho) * Wo + wo) * OC
                for gi in range(dg):
                    for i in range(kh):
                        for j in range(kw):
                            k = gi * K + i * kw + j
                            px = wo * sw - pl + j * dw + off[ob + k]
                            py = ho * sh - pt + i * dh + off[ob + dgK + k]
                            m = off[ob + 2 * dgK + k]
                            h0, w0 = math.floor(py), math.floor(px)
                            lh, lw = py - h0, px - w0
                            hh, hw = 1 - lh, 1 - lw
                            wts = [(h0, w0, hh * hw), (h0, w0 + 1, hh * lw), (h0 + 1, w0, lh * hw),
                                   (h0 + 1, w0 + 1, lh * lw)]
                            inside = py > -1 and py < H and px > -1 and px < W
                            for c in range(gi * cpg, (gi + 1) * cpg):
                                yi = ((n * Ho * kh + ho * kh + i) * Wo * kw + wo * kw + j) * C + c
                                v1, v2, v3, v4 = (V(n, a, b, c) for a, b, _ in wts)
                                if grad is None:
                                    y[yi] = m * (hh * hw * v1 + hh * lw * v2 + lh * hw * v3 + lh * lw * v4)
                                    continue
                                if not inside:
                                    continue
                                G = grad[yi]
                                for a, b, wt in wts:
                                    if 0 <= a < H and 0 <= b < W:
                                        gx[((n * H + a) * W + b) * C + c] += G * m * wt
                                goff[ob + dgK + k] += G * m * (hw * (v3 - v1) + lw * (v4 - v2))
                                goff[ob + k] += G * m * (hh * (v2 - v1) + lh * (v4 - v3))
                                goff[ob + 2 * dgK + k] += G * (hh * hw * v1 + hh * lw * v2 + lh * hw * v3 +
                                                               lh * lw * v4)
    return y if grad is None else (gx, goff)


def torch_deformable(x_nhwc, off_nhwc, kh, kw, sh, sw, dh, dw, pads, dg):
    """The conform op through torchvision.ops.deform_conv2d with a one-hot weight (differentiable)."""
    N, H, W, C = x_nhwc.shape
    Ho, Wo = off_nhwc.shape[1], off_nhwc.shape[2]
    K = kh * kw
    dgK = dg * K
    x = x_nhwc.permute(0, 3, 1, 2)
    off = off_nhwc.permute(0, 3, 1, 2)                       # [N, 3*dgK, Ho, Wo]
    dx, dy, mask = off[:, :dgK], off[:, dgK:2 * dgK], off[:, 2 * dgK:]
    tv_off = torch.stack([dy, dx], dim=2).reshape(N, 2 * dgK, Ho, Wo)   # (dy, dx) per kernel point
    weight = torch.zeros(C * K, C, kh, kw, dtype=torch.float64)
    for c in range(C):
        for i in range(kh):
            for j in range(kw):
                weight[c * K + i * kw + j, c, i, j] = 1.0
    pt, pb, pl, pr = pads
    if pt == pb and pl == pr:
        padding = (pt, pl)
    else:   # asymmetric: zero-pad explicitly (same values and gradients, see the report)
        x = F.pad(x, (pl, pr, pt, pb))
        padding = (0, 0)
    out = deform_conv2d(x, tv_off, weight, None, stride=(sh, sw), padding=padding, dilation=(dh, dw), mask=mask)
    assert out.shape == (N, C * K, Ho, Wo), out.shape
    # channel c*K + i*kw + j at (ho, wo) -> y[n, ho*kh+i, wo*kw+j, c]
    return out.reshape(N, C, kh, kw, Ho, Wo).permute(0, 4, 2, 5, 3, 1).reshape(N, Ho * kh, Wo * kw, C)


def make_offsets(g, N, Ho, Wo, kh, kw, sh, sw, dh, dw, pads, dg):
    K = kh * kw
    dgK = dg * K
    off = torch.cat([rand32(g, (N, Ho, Wo, 2 * dgK), -2, 2), rand32(g, (N, Ho, Wo, dgK), -1, 1)], dim=3)
    pt, pl = pads[0], pads[2]
    for n in range(N):
        for ho in range(Ho):
            for wo in range(Wo):
                for k in range(dgK):
                    i, j = (k % K) // kw, (k % K) % kw
                    for ch, base in ((k, wo * sw - pl + j * dw), (dgK + k, ho * sh - pt + i * dh)):
                        # base + offset away from integers (covers the window lines -1, H, W)
                        while dist_int(base + float(off[n, ho, wo, ch])) <= MARGIN:
                            off[n, ho, wo, ch] = rand32(g, (), -2, 2)
    return off


def deform_configs():
    """(tag, x shape NHWC, (kh, kw), (sh, sw), (dh, dw), pads [t, b, l, r], dg).

    Few output positions each: the offsets tensor (3*dg*kh*kw per position) dominates the file size."""
    return [
        ("k3x3_s1_d1_p0_dg1", (1, 5, 5, 2), (3, 3), (1, 1), (1, 1), [0, 0, 0, 0], 1),
        ("k3x2_s1_d1_p0_dg2", (1, 4, 4, 2), (3, 2), (1, 1), (1, 1), [0, 0, 0, 0], 2),
        ("k2x2_s2_d1_p0_dg1_n2", (2, 5, 5, 2), (2, 2), (2, 2), (1, 1), [0, 0, 0, 0], 1),
        ("k3x3_s2_d2_p1_dg2", (1, 6, 6, 2), (3, 3), (2, 2), (2, 2), [1, 1, 1, 1], 2),
        ("k2x3_s1x2_d1_p0x1_dg1", (1, 4, 5, 3), (2, 3), (1, 2), (1, 1), [0, 0, 1, 1], 1),
        ("k3x2_s2x1_d2x1_p1x0_dg2_c4", (1, 6, 4, 4), (3, 2), (2, 1), (2, 1), [1, 1, 0, 0], 2),
        ("k1x1_s1_d1_p0_dg2", (1, 5, 5, 2), (1, 1), (1, 1), (1, 1), [0, 0, 0, 0], 2),
        ("k2x3_s2_d1x2_p0x1_dg2_c4", (1, 5, 6, 4), (2, 3), (2, 2), (1, 2), [0, 0, 1, 1], 2),
        ("k3x2_s1_d2_p1_dg1", (1, 5, 4, 2), (3, 2), (1, 1), (2, 2), [1, 1, 1, 1], 1),
        ("k3x3_s2_d1_p0_dg1", (1, 5, 5, 2), (3, 3), (2, 2), (1, 1), [0, 0, 0, 0], 1),
        ("k2x2_s1_d1_pads1010_dg1", (1, 4, 4, 2), (2, 2), (1, 1), (1, 1), [1, 0, 1, 0], 1),
        ("k3x2_s2_d1_pads0110_dg2", (1, 5, 5, 2), (3, 2), (2, 2), (1, 1), [0, 1, 1, 0], 2),
    ]


def gen_deformable():
    g = torch.Generator().manual_seed(3)
    fwd, bwd = [], []
    for tag, xshape, (kh, kw), (sh, sw), (dh, dw), pads, dg in deform_configs():
        N, H, W, C = xshape
        Ho, Wo = deform_geometry(H, W, kh, kw, sh, sw, dh, dw, pads)
        oshape = (N, Ho, Wo, 3 * dg * kh * kw)
        yshape = (N, Ho * kh, Wo * kw, C)
        attrs = {"ksize": [kh, kw], "strides": [1, sh, sw, 1], "dilations": [1, dh, dw, 1], "pads": pads,
                 "data_format": "NHWC", "deformable_groups": dg, "modulated": True}
        geo = (kh, kw, sh, sw, dh, dw, pads, dg)
        for which in ("fwd", "bwd"):
            x = rand32(g, xshape, -1, 1)
            off = make_offsets(g, N, Ho, Wo, *geo)
            xs, offs = flat(x), flat(off)
            if which == "fwd":
                y = flat(torch_deformable(x.double(), off.double(), *geo))
                check_close("deformable_offsets " + tag, spec_deformable(xs, xshape, offs, *geo), y)
                fwd.append(case("fwd_" + tag, "deformable_offsets", {"x": list(xshape), "offsets": list(oshape)},
                                attrs, {"x": xs, "offsets": offs}, {"y": y}))
            else:
                gr = rand32(g, yshape, -1, 1)
                xd = x.double().requires_grad_(True)
                od = off.double().requires_grad_(True)
                torch_deformable(xd, od, *geo).backward(gr.double())
                grs, gx, go = flat(gr), flat(xd.grad), flat(od.grad)
                sx, so = spec_deformable(xs, xshape, offs, *geo, grad=grs)
                check_close("deformable_offsets_grad grad_x " + tag, sx, gx)
                check_close("deformable_offsets_grad grad_offsets " + tag, so, go)
                bwd.append(case("bwd_" + tag, "deformable_offsets_grad",
                                {"grad": list(yshape), "x": list(xshape), "offsets": list(oshape)},
                                attrs, {"grad": grs, "x": xs, "offsets": offs},
                                {"grad_x": gx, "grad_offsets": go}))
    write_suite("torchvision_deformable_offsets.json", "golden_torchvision_deformable_offsets", 3, fwd + bwd)


def main():
    gen_roi_align()
    gen_grid_sampler()
    gen_deformable()
    print("all spec cross-checks passed (tolerance %g relative to max(1, |value|))" % TOL)


if __name__ == "__main__":
    sys.exit(main())
