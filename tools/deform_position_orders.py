#!/usr/bin/env python3
"""A third-party-like deformable_offsets forward: float32 numpy, its sample position formed in one
of the orders real implementations use (numpy only; no torch needed).

  spec      (ho*sh - pt + i*dh) + offset       one rounding at |p| (torchvision, mmcv, Ascend)
  pad_last  ((ho*sh + i*dh) + offset) - pt     the rounding at |p + pt| (nnabla)

Copies an export directory and writes y for its deformable_offsets cases, for
`conform run --impl dir:COPY --op deformable_offsets` to judge (docs/ops/deformable_offsets.md).

    tools/deform_position_orders.py DIR COPY spec|pad_last
"""
import json, os, shutil, sys
import numpy as np
if len(sys.argv) != 4 or sys.argv[3] not in ('spec', 'pad_last'):
    sys.exit(__doc__.strip().splitlines()[-1].strip())
src, dst, order = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(dst, ignore_errors=True); shutil.copytree(src, dst)
m = json.load(open(os.path.join(dst, 'manifest.json')))
f32 = np.float32
def pos(base_no_pad, pad, off):
    if order == 'spec':
        return (f32(base_no_pad - pad) + off).astype(f32)
    return ((f32(base_no_pad) + off).astype(f32) - f32(pad)).astype(f32)
n_done = 0
for c in m['cases']:
    if c['op'] != 'deformable_offsets' or c.get('expect_error'): continue
    a = c['attrs']
    kh, kw = a['ksize']
    hw = (2, 3) if a.get('data_format', 'NHWC') == 'NCHW' else (1, 2)
    s, d = a.get('strides', [1]*4), a.get('dilations', [1]*4)
    sh, sw, dh, dw = s[hw[0]], s[hw[1]], d[hw[0]], d[hw[1]]
    pt, pb, pl, pr = a.get('pads', [0]*4); dg = int(a.get('deformable_groups', 1))
    x = np.load(os.path.join(dst, c['inputs']['x'])).astype(f32)
    off = np.load(os.path.join(dst, c['inputs']['offsets'])).astype(f32)
    N, H, W, C = x.shape; _, Ho, Wo, OC = off.shape
    K = kh * kw; dgK = dg * K
    if OC != 3 * dgK or dg == 0 or C % dg: continue
    cpg = C // dg
    y = np.zeros((N, Ho * kh, Wo * kw, C), f32)
    xp = np.zeros((N, H + 4, W + 4, C), f32); xp[:, 2:H + 2, 2:W + 2] = x   # zero ring for corner reads
    with np.errstate(all='ignore'):
        for g in range(dg):
            for i in range(kh):
                for j in range(kw):
                    k = g * K + i * kw + j
                    px = pos((np.arange(Wo) * sw + j * dw)[None, None, :], pl, off[..., k])
                    py = pos((np.arange(Ho) * sh + i * dh)[None, :, None], pt, off[..., dgK + k])
                    mk = off[..., 2 * dgK + k]
                    fin = np.isfinite(px) & np.isfinite(py)
                    pxc = np.where(fin, np.clip(px, -2, W), f32(-2)); pyc = np.where(fin, np.clip(py, -2, H), f32(-2))
                    h0 = np.floor(pyc).astype(np.int64); w0 = np.floor(pxc).astype(np.int64)
                    lh = (pyc - f32(1) * h0).astype(f32); lw = (pxc - w0).astype(f32)
                    hh = (f32(1) - lh).astype(f32); hw_ = (f32(1) - lw).astype(f32)
                    nn = np.arange(N)[:, None, None]
                    def V(r, q):
                        return xp[nn, r + 2, q + 2][..., g * cpg:(g + 1) * cpg]
                    v = (hh * hw_)[..., None] * V(h0, w0) + (hh * lw)[..., None] * V(h0, w0 + 1) \
                        + (lh * hw_)[..., None] * V(h0 + 1, w0) + (lh * lw)[..., None] * V(h0 + 1, w0 + 1)
                    v = (mk[..., None] * v.astype(f32)).astype(f32)
                    v = np.where(fin[..., None], v, f32(0))
                    y[:, i::kh, j::kw, g * cpg:(g + 1) * cpg] = v
    np.save(os.path.join(dst, c['outputs']['y']['path']), y)
    n_done += 1
print(order, 'wrote', n_done)
