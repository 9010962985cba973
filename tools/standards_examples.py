#!/usr/bin/env python3
"""Inputs and a buggy output for docs/standards.md, example 1: RoIAlign with `aligned` ignored
(the half-pixel shift of mmcv #2862) on a smooth image. Needs torch and torchvision (run with
/usr/bin/python3); writes DIR/{input,rois,output_unaligned}.npy, then:
  build/conform check roi_align --attr pooled_h=7 --attr pooled_w=7 --attr spatial_scale=0.5 \
      --attr sampling_ratio=2 --attr aligned=true --input input=DIR/input.npy \
      --input rois=DIR/rois.npy --actual output=DIR/output_unaligned.npy"""
import sys

import numpy as np
import torch
import torchvision

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/conform-standards-example"
torch.manual_seed(0)
h = w = 64
yy, xx = torch.meshgrid(torch.arange(h, dtype=torch.float64), torch.arange(w, dtype=torch.float64), indexing="ij")
# a smooth image: 1 plus a ramp of 1e-3 per pixel along x (a sky, a vignette), 4 channels
x = (1.0 + 1e-3 * xx).expand(1, 4, h, w).contiguous().float()
boxes = torch.tensor([[0, 8, 8, 100, 100], [0, 20, 10, 60, 90], [0, 4, 30, 120, 70]], dtype=torch.float32)
# the bug: aligned=True requested, the kernel computes aligned=False
y = torchvision.ops.roi_align(x.double(), boxes.double(), (7, 7), spatial_scale=0.5, sampling_ratio=2, aligned=False)
import os
os.makedirs(out, exist_ok=True)
np.save(f"{out}/input.npy", x.numpy())
np.save(f"{out}/rois.npy", boxes.numpy())
np.save(f"{out}/output_unaligned.npy", y.float().numpy())
print(out)
