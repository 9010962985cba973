#!/usr/bin/env python3
"""Writes cases/check/<op>/*.npy: inputs and outputs computed by PyTorch/torchvision in float32
(and the same outputs rounded to float16), so the tests can show `conform check` accepting a
real implementation's outputs and rejecting them once perturbed. Needs /usr/bin/python3 with
torch and torchvision; CI only reads the committed files.

usage: /usr/bin/python3 tools/make_check_vectors.py
"""
import os

import numpy as np
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "cases", "check")


def save(op, name, t):
    d = os.path.join(OUT, op)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, name + ".npy"), t.detach().numpy() if isinstance(t, torch.Tensor) else t)


def roi_align():
    g = torch.Generator().manual_seed(7)
    x = torch.rand(2, 3, 16, 16, generator=g) * 2 - 1
    c = torch.rand(10, 2, generator=g) * 64
    wh = 4 + torch.rand(10, 2, generator=g) * 40
    b = torch.randint(0, 2, (10, 1), generator=g).float()
    rois = torch.cat([b, c - wh / 2, c + wh / 2], dim=1)
    xg = x.clone().requires_grad_(True)
    y = torchvision.ops.roi_align(xg, rois, output_size=(3, 4), spatial_scale=0.25, sampling_ratio=2, aligned=True)
    gy = torch.rand(y.shape, generator=g) * 2 - 1
    y.backward(gy)
    save("roi_align", "input", x)
    save("roi_align", "rois", rois)
    save("roi_align", "output", y)
    save("roi_align", "output_f16", y.half())
    save("roi_align", "grad_output", gy)
    save("roi_align", "grad_input", xg.grad)


def grid_sampler():
    g = torch.Generator().manual_seed(11)
    x = torch.rand(2, 3, 8, 9, generator=g) * 2 - 1
    grid = torch.rand(2, 5, 6, 2, generator=g) * 2.2 - 1.1
    xg, gg = x.clone().requires_grad_(True), grid.clone().requires_grad_(True)
    y = torch.nn.functional.grid_sample(xg, gg, mode="bilinear", padding_mode="zeros", align_corners=False)
    gy = torch.rand(y.shape, generator=g) * 2 - 1
    y.backward(gy)
    save("grid_sampler", "input", x)
    save("grid_sampler", "grid", grid)
    save("grid_sampler", "output", y)
    save("grid_sampler", "grad_output", gy)
    save("grid_sampler", "input_grad", xg.grad)
    save("grid_sampler", "grid_grad", gg.grad)


if __name__ == "__main__":
    torch.set_num_threads(1)
    roi_align()
    grid_sampler()
    print("wrote", OUT)
