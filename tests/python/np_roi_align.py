"""roi_align (conform ops.md sections 0, A, 1) in numpy on the exported layout: input [B, C, H, W],
rois [K, 5]: the kernel of tests/python/test_conform_package.py. BUG = True plants one bug: the
window test is exclusive at the far edge (y < H, x < W for y <= H, x <= W)."""
import numpy as np

BUG = False


def bilinear(plane, y, x):
    """plane [C, H, W] at sample positions y, x (1-D, same length): [C, n], zero outside the window."""
    C, H, W = plane.shape
    far_ok = (y < H) & (x < W) if BUG else (y <= H) & (x <= W)
    inside = (y >= -1.0) & (x >= -1.0) & far_ok      # NaN positions compare false: outside
    y = np.where(inside, np.maximum(y, 0.0), 0.0)
    x = np.where(inside, np.maximum(x, 0.0), 0.0)
    y0, x0 = np.floor(y).astype(np.int64), np.floor(x).astype(np.int64)
    ylast, xlast = y0 >= H - 1, x0 >= W - 1
    y0, x0 = np.where(ylast, H - 1, y0), np.where(xlast, W - 1, x0)
    y, x = np.where(ylast, y0, y), np.where(xlast, x0, x)
    y1, x1 = np.where(ylast, y0, y0 + 1), np.where(xlast, x0, x0 + 1)
    ly, lx = y - y0, x - x0
    v = ((1 - ly) * (1 - lx) * plane[:, y0, x0] + (1 - ly) * lx * plane[:, y0, x1] +
         ly * (1 - lx) * plane[:, y1, x0] + ly * lx * plane[:, y1, x1])
    return np.where(inside, v, 0.0)


def count(q):
    return int(np.ceil(q)) if np.isfinite(q) else 0


def roi_align(inputs, a):
    x, rois = inputs["input"].astype(np.float64), inputs["rois"].astype(np.float64)
    B, C, H, W = x.shape
    ph, pw, s = a["pooled_h"], a["pooled_w"], a["spatial_scale"]
    mode = a.get("roi_end_mode", -1)
    aligned = a["aligned"] if mode < 0 else mode >= 2
    off, plus = (0.5 if aligned else 0.0), (1.0 if mode == 1 else 0.0)
    out = np.zeros((rois.shape[0], C, ph, pw))
    for k, r in enumerate(rois):
        b = np.floor(r[0])
        if not (np.isfinite(b) and 0 <= b < B) or H == 0 or W == 0:
            continue
        sx, sy = r[1] * s - off, r[2] * s - off
        rw, rh = (r[3] + plus) * s - off - sx, (r[4] + plus) * s - off - sy
        if not aligned:
            rw, rh = (rw if rw >= 1.0 else 1.0) if rw == rw else rw, (rh if rh >= 1.0 else 1.0) if rh == rh else rh
        bh, bw = rh / ph, rw / pw
        gh = a["sampling_ratio"] if a["sampling_ratio"] > 0 else count(bh)
        gw = a["sampling_ratio"] if a["sampling_ratio"] > 0 else count(bw)
        if gh <= 0 or gw <= 0:
            continue
        i, iy, j, ix = np.meshgrid(np.arange(ph), np.arange(gh), np.arange(pw), np.arange(gw), indexing="ij")
        ys = sy + i * bh + (iy + 0.5) * bh / gh
        xs = sx + j * bw + (ix + 0.5) * bw / gw
        v = bilinear(x[int(b)], ys.ravel(), xs.ravel()).reshape(C, ph, gh, pw, gw)
        out[k] = v.sum(axis=(2, 4)) / (gh * gw)
    return {"output": out}
