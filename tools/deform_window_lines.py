#!/usr/bin/env python3
"""Shows that a device's deformable_offsets_grad failures are the window-line divergence, and
nothing else (numpy only).

torchvision's offset gradient is one-sided for a sample exactly on a window line (py = -1 or H,
px = -1 or W; docs/ops/deformable_offsets_grad.md); the spec (and Ascend) give 0 there. Exports
at float16 / bfloat16 round small offsets away, so more samples land exactly on a line than at
float32. This copies an export directory (outputs included) and sets every gradient of such a
sample to the spec's 0; judge the copy with `conform run --impl dir:COPY`: if the failures go,
they were all that divergence.

    tools/deform_window_lines.py DIR COPY
"""
import os
import sys

import numpy as np

from export_dir import copy_export, deform_geometry


def load(path, dtype):
    a = np.load(path)
    if dtype == "bfloat16":  # raw bits as <u2: the top half of a float32
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float32)


def save(path, a, dtype):
    if dtype == "bfloat16":  # values are bfloat16 already (or 0): truncating the bits is exact
        np.save(path, (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16))
    else:
        np.save(path, a.astype(np.load(path).dtype))


def zero_window_lines(root, case, dtype):
    """zeroes, in place, the gradients of samples exactly on a window line; returns how many were not 0"""
    go_path = os.path.join(root, case["outputs"]["grad_offsets"]["path"])
    if not os.path.exists(go_path):
        return 0
    kh, kw, sh, sw, dh, dw, (pt, _, pl, _), dg = deform_geometry(case["attrs"])
    off = load(os.path.join(root, case["inputs"]["offsets"]), dtype)
    _, H, W, _ = case["input_shapes"]["x"]
    _, Ho, Wo, _ = off.shape
    K, dgK = kh * kw, dg * kh * kw
    go = load(go_path, dtype)
    changed = 0
    for g in range(dg):
        for i in range(kh):
            for j in range(kw):
                k = g * K + i * kw + j
                # the position as the spec forms it: exact integer base + offset, one float32 rounding
                px = ((np.arange(Wo) * sw - pl + j * dw)[None, None, :] + off[..., k]).astype(np.float32)
                py = ((np.arange(Ho) * sh - pt + i * dh)[None, :, None] + off[..., dgK + k]).astype(np.float32)
                on = (((px == -1) | (px == W)) & (py >= -1) & (py <= H)) | (((py == -1) | (py == H)) & (px >= -1) & (px <= W))
                for t in range(3):  # x offset, y offset, mask
                    plane = go[..., t * dgK + k]
                    changed += int(np.count_nonzero(plane[on]))
                    plane[on] = 0  # a view of go
    save(go_path, go, dtype)
    return changed


def main(argv):
    dst, m, _ = copy_export(argv, __doc__.strip().splitlines()[-1].strip())
    changed = sum(zero_window_lines(dst, c, m["dtype"]) for c in m["cases"]
                  if c["op"] == "deformable_offsets_grad" and not c.get("expect_error"))
    print("%s: %d nonzero gradients of samples exactly on a window line set to 0" % (dst, changed))


if __name__ == "__main__":
    main(sys.argv[1:])
