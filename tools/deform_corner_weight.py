#!/usr/bin/env python3
"""A third-party-like deformable_offsets and its grad in the corner-weight form of the DCNv2 CPU
kernels (mmcv's modulated_deform_conv_cpu.cpp, the original DCNv2 im2col/col2im): float32 numpy,
semantics of ops.md sections 5 and 6, evaluation order of those kernels (numpy only).

  position   p = (integer base) + offset                      one rounding at |p|, the spec's order
  forward    im2col: lh = p - floor(p), hh = 1 - lh, ((w1 v1 + w2 v2) + w3 v3) + w4 v4, times m
  grad_x     col2im: per sample in (i, j, ho, wo) order, each corner h of the cell with
             |p - h| < 1 gets weight * (G * m), the weight of a corner (h, w) being
             (h + 1 - p) for the low row and (p + 1 - h) for the high row (columns likewise):
             fl(p + 1) - h rounds p + 1 first, a second rounding at |p + 1| (docs/tolerances.md)
  grad_offs  col2im_coord: per channel in order, sum of +-(1 - l) v and +-l v terms (l = p - floor p),
             times G, times m; the mask gradient sums G * bilinear

--fma contracts every a * b + c the C source has into one rounding (a compiler's -ffp-contract).
--window open replaces the spec's strict window test (p > -1, p < H) by p >= -1, p <= H: a bug.

Copies an export directory and writes the outputs of its deformable_offsets(_grad) cases, for
`conform run --impl dir:COPY` to judge.

    tools/deform_corner_weight.py DIR COPY [--fma] [--window strict|open]
"""
import os
import sys

import numpy as np

from export_dir import copy_export, deform_geometry

F, D = np.float32, np.float64


def fma32(a, b, c):
    """fl32(a * b + c) exactly, for float32 arrays. a * b is exact in float64 (two 24-bit
    significands fit in 53 bits; float32 exponents cannot leave float64's range), and TwoSum gives
    s + lo = a*b + c exactly. fl32(s) is then the correctly rounded result except when s lies
    exactly halfway between two float32 numbers while lo != 0 (a float64 round-then-float32 round
    would tie to even there: 1 + 2^-24 + 2^-71 would give 1, not 1 + 2^-23); the sign of lo
    decides that tie."""
    a, b, c = np.asarray(a, D), np.asarray(b, D), np.asarray(c, D)
    p = a * b
    s = p + c
    bb = s - p
    lo = (p - (s - bb)) + (c - bb)
    r = s.astype(F)
    nb = np.nextafter(r, np.where(lo > 0, F(np.inf), F(-np.inf)).astype(F))
    tie = (lo != 0) & np.isfinite(lo) & (s == (r.astype(D) + nb.astype(D)) / 2)
    return np.where(tie, nb, r).astype(F)


class Kernel:
    """float32 arithmetic of the C source: mul_add(a, b, c) is c + a * b, contracted or not"""

    def __init__(self, fma, window):
        self.fma, self.open = fma, window == "open"

    def mul_add(self, a, b, c):
        if self.fma:
            return fma32(a, b, c)
        return (F(c) + (a * b).astype(F)).astype(F)

    def inside(self, py, px, H, W):
        if self.open:
            return (py >= -1) & (px >= -1) & (py <= H) & (px <= W)
        return (py > -1) & (px > -1) & (py < H) & (px < W)

    def bilinear(self, xp, nn, py, px, c0, c1):
        """the im2col value [..., channels] at float32 positions (callers clip them into the ring)"""
        h0, w0 = np.floor(py).astype(np.int64), np.floor(px).astype(np.int64)
        lh, lw = (py - h0.astype(F)).astype(F), (px - w0.astype(F)).astype(F)
        hh, hw = (F(1) - lh).astype(F), (F(1) - lw).astype(F)
        w = [(hh * hw).astype(F), (hh * lw).astype(F), (lh * hw).astype(F), (lh * lw).astype(F)]
        v = [xp[nn, h0 + 2, w0 + 2][..., c0:c1], xp[nn, h0 + 2, w0 + 3][..., c0:c1],
             xp[nn, h0 + 3, w0 + 2][..., c0:c1], xp[nn, h0 + 3, w0 + 3][..., c0:c1]]
        acc = (w[0][..., None] * v[0]).astype(F)
        for q in range(1, 4):
            acc = self.mul_add(w[q][..., None], v[q], acc)
        return acc


def load(root, case, name):
    return np.load(os.path.join(root, case["inputs"][name])).astype(F)


def samples(case, off, H, W):
    """(g, i, j, k, py, px, m, fin) per kernel point, positions clipped into the zero ring (far
    outside, every corner reads 0 and the window test fails either way)"""
    kh, kw, sh, sw, dh, dw, (pt, _, pl, _), dg = deform_geometry(case["attrs"])
    _, Ho, Wo, _ = off.shape
    K = kh * kw
    for g in range(dg):
        for i in range(kh):
            for j in range(kw):
                k = g * K + i * kw + j
                bx = (np.arange(Wo) * sw - pl + j * dw).astype(F)[None, None, :]
                by = (np.arange(Ho) * sh - pt + i * dh).astype(F)[None, :, None]
                px = (bx + off[..., k]).astype(F)
                py = (by + off[..., dg * K + k]).astype(F)
                fin = np.isfinite(px) & np.isfinite(py)
                px = np.where(fin, np.clip(px, F(-2), F(W)), F(-2)).astype(F)
                py = np.where(fin, np.clip(py, F(-2), F(H)), F(-2)).astype(F)
                yield g, i, j, k, py, px, off[..., 2 * dg * K + k], fin


def shapes_fit(case, x, off):
    kh, kw, *_, dg = deform_geometry(case["attrs"])
    C = x.shape[3]
    return dg > 0 and off.shape[3] == 3 * dg * kh * kw and C % dg == 0


def ring(x):
    N, H, W, C = x.shape
    xp = np.zeros((N, H + 4, W + 4, C), F)  # corners outside the plane read 0
    xp[:, 2:H + 2, 2:W + 2] = x
    return xp


def forward(kern, root, case):
    x, off = load(root, case, "x"), load(root, case, "offsets")
    if not shapes_fit(case, x, off):
        return None
    kh, kw, *_, dg = deform_geometry(case["attrs"])
    N, H, W, C = x.shape
    _, Ho, Wo, _ = off.shape
    cpg, xp, nn = C // dg, ring(x), np.arange(N)[:, None, None]
    y = np.zeros((N, Ho * kh, Wo * kw, C), F)
    for g, i, j, k, py, px, m, fin in samples(case, off, H, W):
        ok = fin & kern.inside(py, px, H, W)
        val = kern.bilinear(xp, nn, py, px, g * cpg, (g + 1) * cpg)
        y[:, i::kh, j::kw, g * cpg:(g + 1) * cpg] = np.where(ok[..., None], (val * m[..., None]).astype(F), F(0))
    return {"y": y}


def corner_weight(kern, p, h, n, low):
    """the col2im gradient weight factor of row (or column) h of a cell: (h + 1 - p) for the low
    one, (p + 1 - h) for the high one, in float32 (the int h + 1 is exact)"""
    if low:
        return ((h + 1).astype(F) - p).astype(F)
    return ((p + F(1)).astype(F) - h.astype(F)).astype(F)


def grad_x_of(kern, case, G, off, x):
    """col2im: every (sample, corner) term, then each pixel summed in the kernel's order"""
    kh, kw, *_, dg = deform_geometry(case["attrs"])
    N, H, W, C = x.shape
    _, Ho, Wo, _ = off.shape
    cpg = C // dg
    gx = np.zeros((N * H * W, C), F)
    for g in range(dg):
        pix, key, wt, top = [], [], [], []
        for _, i, j, k, py, px, m, fin in (s for s in samples(case, off, H, W) if s[0] == g):
            ok = fin & kern.inside(py, px, H, W)
            h0, w0 = np.floor(py).astype(np.int64), np.floor(px).astype(np.int64)
            t = (G[:, i::kh, j::kw, g * cpg:(g + 1) * cpg] * m[..., None]).astype(F)  # G * m
            order = ((i * kw + j) * N * Ho * Wo) + np.arange(N * Ho * Wo).reshape(N, Ho, Wo)
            for q, (dr, dc) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
                r, c = h0 + dr, w0 + dc
                near = (np.abs((py - r.astype(F)).astype(F)) < 1) & (np.abs((px - c.astype(F)).astype(F)) < 1)
                sel = ok & near & (r >= 0) & (r < H) & (c >= 0) & (c < W)
                wy, wx = corner_weight(kern, py, r, H, dr == 0), corner_weight(kern, px, c, W, dc == 0)
                n_idx = np.broadcast_to(np.arange(N)[:, None, None], sel.shape)
                pix.append(((n_idx * H + r) * W + c)[sel])
                key.append((order * 4 + q)[sel])
                wt.append((wy * wx).astype(F)[sel])
                top.append(t[sel])
        if not pix:
            continue
        pix, key, wt, top = map(np.concatenate, (pix, key, wt, top))
        srt = np.lexsort((key, pix))
        pix, wt, top = pix[srt], wt[srt], top[srt]
        first = np.r_[0, np.flatnonzero(np.diff(pix)) + 1]
        rank = np.arange(len(pix)) - np.repeat(first, np.diff(np.r_[first, len(pix)]))
        for r in range(int(rank.max()) + 1 if len(rank) else 0):
            s = rank == r  # at most one term per pixel: a vectorised step of every pixel's sum
            gx[pix[s], g * cpg:(g + 1) * cpg] = kern.mul_add(wt[s][:, None], top[s], gx[pix[s], g * cpg:(g + 1) * cpg])
    return gx.reshape(N, H, W, C)


def grad_offsets_of(kern, case, G, off, x):
    """col2im_coord: per sample, the channels of its group summed in order"""
    kh, kw, *_, dg = deform_geometry(case["attrs"])
    N, H, W, C = x.shape
    K, cpg, xp, nn = kh * kw, C // dg, ring(x), np.arange(N)[:, None, None]
    go = np.zeros(off.shape, F)
    for g, i, j, k, py, px, m, fin in samples(case, off, H, W):
        ok = fin & kern.inside(py, px, H, W)
        h0, w0 = np.floor(py).astype(np.int64), np.floor(px).astype(np.int64)
        lh, lw = (py - h0.astype(F)).astype(F), (px - w0.astype(F)).astype(F)
        hh, hw = ((h0 + 1).astype(F) - py).astype(F), ((w0 + 1).astype(F) - px).astype(F)
        val = kern.bilinear(xp, nn, py, px, g * cpg, (g + 1) * cpg)
        vx, vy, vm = (np.zeros(py.shape, F) for _ in range(3))
        for cc in range(g * cpg, (g + 1) * cpg):
            v = [xp[nn, h0 + 2 + a, w0 + 2 + b, cc] for a, b in ((0, 0), (0, 1), (1, 0), (1, 1))]
            Gc = G[:, i::kh, j::kw, cc]
            # x: -hh v1 + hh v2 - lh v3 + lh v4, y: -hw v1 - lw v2 + hw v3 + lw v4, term by term
            # in the kernel's order (the signs are exact)
            wxg = (-hh * v[0]).astype(F)
            for a, b in ((hh, v[1]), (-lh, v[2]), (lh, v[3])):
                wxg = kern.mul_add(a, b, wxg)
            wyg = (-hw * v[0]).astype(F)
            for a, b in ((-lw, v[1]), (hw, v[2]), (lw, v[3])):
                wyg = kern.mul_add(a, b, wyg)
            vx = kern.mul_add((wxg * Gc).astype(F), m, vx)
            vy = kern.mul_add((wyg * Gc).astype(F), m, vy)
            vm = kern.mul_add(Gc, val[..., cc - g * cpg], vm)
        for t, v in enumerate((vx, vy, vm)):
            go[..., t * dg * K + k] = np.where(ok, v, F(0))
    return go


def backward(kern, root, case):
    G, x, off = load(root, case, "grad"), load(root, case, "x"), load(root, case, "offsets")
    if not shapes_fit(case, x, off):
        return None
    return {"grad_x": grad_x_of(kern, case, G, off, x), "grad_offsets": grad_offsets_of(kern, case, G, off, x)}


def main(argv):
    usage = __doc__.strip().splitlines()[-1].strip()
    fma = "--fma" in argv
    argv = [a for a in argv if a != "--fma"]
    window = "strict"
    if "--window" in argv:
        at = argv.index("--window")
        window = argv[at + 1] if at + 1 < len(argv) else ""
        del argv[at:at + 2]
    if window not in ("strict", "open"):
        sys.exit(usage)
    dst, m, _ = copy_export(argv, usage)
    if m["dtype"] != "float32":
        sys.exit("a float32 export is needed (this is a float32 kernel)")
    kern, written = Kernel(fma, window), 0
    for case in m["cases"]:
        run = {"deformable_offsets": forward, "deformable_offsets_grad": backward}.get(case["op"])
        if run is None or case.get("expect_error"):
            continue
        with np.errstate(all="ignore"):
            outs = run(kern, dst, case)
        if outs is None:
            continue
        for name, arr in outs.items():
            np.save(os.path.join(dst, case["outputs"][name]["path"]), arr.astype(F))
        written += 1
    print("%s: %d deformable cases written (corner-weight form, %s, %s window)"
          % (dst, written, "FMA" if fma else "no FMA", window))


if __name__ == "__main__":
    main(sys.argv[1:])
