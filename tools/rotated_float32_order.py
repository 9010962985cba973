#!/usr/bin/env python3
"""A third-party-like roi_align_rotated and its grad: float32 numpy in the arithmetic order of
mmcv's CPU/CUDA kernels (numpy only; no torch or mmcv needed).

The semantics are the spec's (ops.md section 3, rule A; batch index floored and range-checked);
only the evaluation order and precision are mmcv's, so that the tolerance model is tried on a
float32 form that is not ours:
  centre = roi * scale - offset; extent = roi * scale (max 1 unless aligned); bin = extent / pooled
  count = ceil(extent / pooled) unless sampling_ratio; start = -extent / 2; cos, sin of float32 theta
  yy = (start + p * bin) + ((i + 0.5) * bin) / count          (each operation rounded to float32)
  y = (yy * cos - xx * sin) + cy,   x = (yy * sin + xx * cos) + cx
  rule A in float32; value ((w1 v1 + w2 v2) + w3 v3) + w4 v4 summed per sample, then / count;
  the grad scatters (g * w) / count per corner.
A roi whose batch index is not finite is skipped, as ops.md section 0 says. Cases with a non-finite
roi coordinate, an empty plane or more than 2^16 samples per bin are left unwritten, each with its
reason (one of UNSUPPORTED) in COPY/runner.json (schema conform-runner 1, as tools/torch_runner.py
writes it), so the run reports them missing with that reason: not run, never passed. Copies an
export directory and writes the outputs of its roi_align_rotated(_grad) cases for
`conform run --impl dir:COPY` to judge (docs/ops/roi_align_rotated.md).

    tools/rotated_float32_order.py DIR COPY
"""
import json
import math
import os
import sys

import numpy as np

from export_dir import copy_export

F = np.float32


def bilinear_taps(y, x, H, W):
    """rule A in float32 for arrays y, x: (inside, y_low, y_high, x_low, x_high, [w1..w4]); the
    taps of a sample outside are not read (0 * NaN would be NaN)"""
    inside = ~((y < F(-1)) | (y > F(H)) | (x < F(-1)) | (x > F(W)))
    y = np.where(y <= 0, F(0), y).astype(F)
    x = np.where(x <= 0, F(0), x).astype(F)
    yl = np.where(inside, y, F(0)).astype(np.int64)
    xl = np.where(inside, x, F(0)).astype(np.int64)
    top, right = yl >= H - 1, xl >= W - 1
    yl = np.where(top, H - 1, yl); xl = np.where(right, W - 1, xl)
    yh = np.where(top, yl, yl + 1); xh = np.where(right, xl, xl + 1)
    y = np.where(top, yl.astype(F), y); x = np.where(right, xl.astype(F), x)
    ly = (y - yl.astype(F)).astype(F); lx = (x - xl.astype(F)).astype(F)
    hy = (F(1) - ly).astype(F); hx = (F(1) - lx).astype(F)
    w = [(hy * hx).astype(F), (hy * lx).astype(F), (ly * hx).astype(F), (ly * lx).astype(F)]
    return inside, yl, yh, xl, xh, w


def roi_geometry(roi, a, PH, PW):
    """per-roi float32 geometry in mmcv's order, or None when nothing is sampled"""
    s, off = F(a.get("spatial_scale", 1.0)), F(0.5 if a.get("aligned", True) else 0.0)
    cx, cy = F(F(roi[1]) * s) - off, F(F(roi[2]) * s) - off
    w, h = F(F(roi[3]) * s), F(F(roi[4]) * s)
    theta = F(-roi[5]) if a.get("clockwise", False) else F(roi[5])
    if not a.get("aligned", True):
        w, h = max(w, F(1)), max(h, F(1))
    bh, bw = F(h / F(PH)), F(w / F(PW))
    sr = int(a.get("sampling_ratio", 0))
    gh = sr if sr > 0 else int(math.ceil(F(h / F(PH))))
    gw = sr if sr > 0 else int(math.ceil(F(w / F(PW))))
    return dict(cx=cx, cy=cy, bh=bh, bw=bw, gh=gh, gw=gw, sh=F(-h / F(2)), sw=F(-w / F(2)),
                cos=np.cos(np.array([theta], F))[0], sin=np.sin(np.array([theta], F))[0])


def sample_positions(g, PH, PW):
    """y, x [PH, PW, gh, gw] in float32"""
    ph = np.arange(PH, dtype=F)[:, None, None, None]
    pw = np.arange(PW, dtype=F)[None, :, None, None]
    iy = (np.arange(g["gh"], dtype=F) + F(0.5))[None, None, :, None]
    ix = (np.arange(g["gw"], dtype=F) + F(0.5))[None, None, None, :]
    yy = ((g["sh"] + ph * g["bh"]).astype(F) + ((iy * g["bh"]).astype(F) / F(g["gh"])).astype(F)).astype(F)
    xx = ((g["sw"] + pw * g["bw"]).astype(F) + ((ix * g["bw"]).astype(F) / F(g["gw"])).astype(F)).astype(F)
    yy, xx = np.broadcast_arrays(yy, xx)
    y = (((yy * g["cos"]).astype(F) - (xx * g["sin"]).astype(F)).astype(F) + g["cy"]).astype(F)
    x = (((yy * g["sin"]).astype(F) + (xx * g["cos"]).astype(F)).astype(F) + g["cx"]).astype(F)
    return y, x


# the cases this emulation cannot run, each left unwritten with its reason in runner.json
NON_FINITE = "a non-finite roi coordinate, size or angle (this emulation does not carry NaN or inf through the geometry)"
TOO_MANY = "more than 2^16 samples a bin (too slow in numpy)"
EMPTY_PLANE = "an empty plane"
UNSUPPORTED = (NON_FINITE, TOO_MANY, EMPTY_PLANE)


class Skip(Exception):
    pass


def rois_of(case, root, a):
    rois = np.load(os.path.join(root, case["inputs"]["rois"])).astype(np.float64)
    return rois.T if a.get("data_format", "NCHW") == "NHWC" else rois


def each_roi(rois, a, B, H, W, PH, PW):
    """(k, batch, geometry, y, x) of every roi that samples"""
    for k, roi in enumerate(rois):
        if not np.isfinite(roi[0]):
            continue  # a batch index that is not finite: the roi is skipped (ops.md section 0)
        if not np.all(np.isfinite(roi)):
            raise Skip(NON_FINITE)
        b = math.floor(roi[0])
        if b < 0 or b >= B:
            continue
        g = roi_geometry(roi, a, PH, PW)
        if g["gh"] <= 0 or g["gw"] <= 0:
            continue
        if g["gh"] * g["gw"] > 1 << 16:
            raise Skip(TOO_MANY)
        yield k, b, g, *sample_positions(g, PH, PW)


def forward(case, root, a):
    x = np.load(os.path.join(root, case["inputs"]["x"])).astype(F)
    nhwc = a.get("data_format", "NCHW") == "NHWC"
    if nhwc:
        x = x.transpose(0, 3, 1, 2)
    B, C, H, W = x.shape
    PH, PW = a["pooled_h"], a["pooled_w"]
    rois = rois_of(case, root, a)
    out = np.zeros((len(rois), C, PH, PW), F)
    if H == 0 or W == 0:
        raise Skip(EMPTY_PLANE)
    for k, b, g, y, xs in each_roi(rois, a, B, H, W, PH, PW):
        inside, yl, yh, xl, xh, w = bilinear_taps(y, xs, H, W)
        plane = x[b]  # [C, H, W]
        acc = np.zeros((C, PH, PW), F)
        for iy in range(g["gh"]):
            for ix in range(g["gw"]):
                t = [(w[q][:, :, iy, ix] * plane[:, r[:, :, iy, ix], c[:, :, iy, ix]]).astype(F)
                     for q, (r, c) in enumerate([(yl, xl), (yl, xh), (yh, xl), (yh, xh)])]
                v = (((t[0] + t[1]).astype(F) + t[2]).astype(F) + t[3]).astype(F)
                acc = (acc + np.where(inside[:, :, iy, ix], v, F(0))).astype(F)
        out[k] = (acc / F(max(g["gh"] * g["gw"], 1))).astype(F)
    return {"y": out.transpose(0, 2, 3, 1) if nhwc else out}


def backward(case, root, a):
    go = np.load(os.path.join(root, case["inputs"]["x_grad"])).astype(F)
    nhwc = a.get("data_format", "NCHW") == "NHWC"
    if nhwc:
        go = go.transpose(0, 3, 1, 2)
    shape = list(a["y_grad_shape"])
    B, C, H, W = (shape[0], shape[3], shape[1], shape[2]) if nhwc else shape
    PH, PW = a["pooled_h"], a["pooled_w"]
    grad = np.zeros((B, C, H, W), F)
    if H == 0 or W == 0:
        raise Skip(EMPTY_PLANE)
    rois = rois_of(case, root, a)
    for k, b, g, y, xs in each_roi(rois, a, B, H, W, PH, PW):
        inside, yl, yh, xl, xh, w = bilinear_taps(y, xs, H, W)
        count = F(max(g["gh"] * g["gw"], 1))
        for q, (r, c) in enumerate([(yl, xl), (yl, xh), (yh, xl), (yh, xh)]):
            # (g * w) / count per sample and corner, scattered one at a time in float32
            t = ((go[k][:, :, :, None, None] * w[q][None]).astype(F) / count).astype(F)
            sel = inside.ravel()
            for cc in range(C):
                np.add.at(grad[b, cc], (r.ravel()[sel], c.ravel()[sel]), t[cc].ravel()[sel])
    return {"y_grad": grad.transpose(0, 2, 3, 1) if nhwc else grad}


def main(argv, only=None):
    """only: a test of a case id; the cases it refuses are left unwritten and unrecorded (a caller
    that judges a few cases of the export need not emulate the rest)"""
    dst, m, _ = copy_export(argv, __doc__.strip().splitlines()[-1].strip())
    if m["dtype"] != "float32":
        sys.exit("a float32 export is needed (this is a float32 kernel)")
    written, skipped, record = 0, {}, {}
    for case in m["cases"]:
        run = {"roi_align_rotated": forward, "roi_align_rotated_grad": backward}.get(case["op"])
        if run is None or case.get("expect_error") or (only and not only(case["id"])):
            continue
        try:
            with np.errstate(all="ignore"):
                outs = run(case, dst, case["attrs"])
        except Skip as e:
            skipped[str(e)] = skipped.get(str(e), 0) + 1
            record[case["id"]] = {"status": "skipped", "reason": str(e)}
            continue
        for name, arr in outs.items():
            np.save(os.path.join(dst, case["outputs"][name]["path"]), arr.astype(F))
        written += 1
        record[case["id"]] = {"status": "written"}
    call = "numpy float32 in mmcv's arithmetic order (NOT mmcv)"
    with open(os.path.join(dst, "runner.json"), "w") as f:
        json.dump({"schema": "conform-runner", "schema_version": 1, "runner": "tools/rotated_float32_order.py",
                   "device": "cpu", "dtype": "float32",
                   "ops": {op: {"supported": True, "call": call} for op in ("roi_align_rotated", "roi_align_rotated_grad")},
                   "cases": record}, f, indent=1, sort_keys=True)
    print("%s: %d cases written; left unwritten: %s" % (dst, written, skipped or "none"))


if __name__ == "__main__":
    main(sys.argv[1:])
