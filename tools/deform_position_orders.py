#!/usr/bin/env python3
"""A third-party-like deformable_offsets forward: float32 numpy, its sample position formed in one
of the orders real implementations use (numpy only; no torch needed).

  spec      (ho*sh - pt + i*dh) + offset       one rounding at |p| (torchvision, mmcv, Ascend)
  pad_last  ((ho*sh + i*dh) + offset) - pt     the rounding at |p + pt| (nnabla)

Copies an export directory and writes y for its deformable_offsets cases, for
`conform run --impl dir:COPY --op deformable_offsets` to judge (docs/ops/deformable_offsets.md).

    tools/deform_position_orders.py DIR COPY spec|pad_last
"""
import os
import sys

import numpy as np

from export_dir import copy_export, deform_geometry

F = np.float32


def position(base_no_pad, pad, off, order):
    """the float32 sample position base_no_pad - pad + off in the given order"""
    if order == "spec":
        return (F(base_no_pad - pad) + off).astype(F)
    return ((F(base_no_pad) + off).astype(F) - F(pad)).astype(F)


def forward(root, case, order):
    """y [N, Ho*kh, Wo*kw, C] of spec 5 in float32, or None when the shapes do not fit"""
    kh, kw, sh, sw, dh, dw, (pt, _, pl, _), dg = deform_geometry(case["attrs"])
    x = np.load(os.path.join(root, case["inputs"]["x"])).astype(F)
    off = np.load(os.path.join(root, case["inputs"]["offsets"])).astype(F)
    N, H, W, C = x.shape
    _, Ho, Wo, OC = off.shape
    K = kh * kw
    dgK = dg * K
    if OC != 3 * dgK or dg == 0 or C % dg:
        return None
    cpg = C // dg
    y = np.zeros((N, Ho * kh, Wo * kw, C), F)
    xp = np.zeros((N, H + 4, W + 4, C), F)  # a ring of zeros: corners outside the plane read 0
    xp[:, 2:H + 2, 2:W + 2] = x
    nn = np.arange(N)[:, None, None]
    for g in range(dg):
        for i in range(kh):
            for j in range(kw):
                k = g * K + i * kw + j
                px = position((np.arange(Wo) * sw + j * dw)[None, None, :], pl, off[..., k], order)
                py = position((np.arange(Ho) * sh + i * dh)[None, :, None], pt, off[..., dgK + k], order)
                fin = np.isfinite(px) & np.isfinite(py)
                # beyond the window every corner is in the zero ring: clipping changes no value
                pxc = np.where(fin, np.clip(px, -2, W), F(-2))
                pyc = np.where(fin, np.clip(py, -2, H), F(-2))
                h0, w0 = np.floor(pyc).astype(np.int64), np.floor(pxc).astype(np.int64)
                lh, lw = (pyc - h0).astype(F), (pxc - w0).astype(F)
                hh, hw = (F(1) - lh).astype(F), (F(1) - lw).astype(F)

                def corner(r, q):
                    return xp[nn, r + 2, q + 2][..., g * cpg:(g + 1) * cpg]

                v = ((hh * hw)[..., None] * corner(h0, w0) + (hh * lw)[..., None] * corner(h0, w0 + 1)
                     + (lh * hw)[..., None] * corner(h0 + 1, w0) + (lh * lw)[..., None] * corner(h0 + 1, w0 + 1))
                v = (off[..., 2 * dgK + k][..., None] * v.astype(F)).astype(F)
                y[:, i::kh, j::kw, g * cpg:(g + 1) * cpg] = np.where(fin[..., None], v, F(0))
    return y


def main(argv):
    usage = __doc__.strip().splitlines()[-1].strip()
    dst, m, (order,) = copy_export(argv, usage, 1)
    if order not in ("spec", "pad_last"):
        sys.exit(usage)
    written = 0
    for case in m["cases"]:
        if case["op"] != "deformable_offsets" or case.get("expect_error"):
            continue
        with np.errstate(all="ignore"):
            y = forward(dst, case, order)
        if y is not None:
            np.save(os.path.join(dst, case["outputs"]["y"]["path"]), y)
            written += 1
    print("%s: %d deformable_offsets cases written in the %s order" % (dst, written, order))


if __name__ == "__main__":
    main(sys.argv[1:])
