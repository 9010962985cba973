"""Suite cases of the deformable_offsets family: deformable_offsets and deformable_offsets_grad.

Each family module gives conformance(), smoke() and golden(): lists of cases (and, for
golden, (file name, suite name, source, cases) tuples). tools/gen_suites.py collects them.
Golden vectors of this family come from tools/golden_torch.py (torchvision), not from here.
"""


def geometry(shape, attrs):
    """Ho, Wo of spec 5 for x shape [N, H, W, C] (NHWC attribute layout unless data_format says NCHW)."""
    _, H, W, _ = shape
    kh, kw = attrs["ksize"]
    nchw = attrs.get("data_format", "NHWC") == "NCHW"
    ih, iw = (2, 3) if nchw else (1, 2)
    s = attrs.get("strides", [1, 1, 1, 1])
    d = attrs.get("dilations", [1, 1, 1, 1])
    pt, pb, pl, pr = attrs.get("pads", [0, 0, 0, 0])
    Ho = (H + pt + pb - (d[ih] * (kh - 1) + 1)) // s[ih] + 1
    Wo = (W + pl + pr - (d[iw] * (kw - 1) + 1)) // s[iw] + 1
    return Ho, Wo


def shapes_of(shape, attrs):
    N, _, _, C = shape
    kh, kw = attrs["ksize"]
    dg = attrs.get("deformable_groups", 1)
    Ho, Wo = geometry(shape, attrs)
    return [N, Ho, Wo, 3 * dg * kh * kw], [N, Ho * kh, Wo * kw, C]


def fwd(name, shape, attrs, gen=None, repeat=None, **extra):
    off, _ = shapes_of(shape, attrs)
    c = {"name": "deform_" + name, "op": "deformable_offsets", "shapes": {"x": shape, "offsets": off}, "attrs": attrs}
    if gen: c["gen"] = gen
    if repeat: c["repeat"] = repeat
    c.update(extra)
    return c


def bwd(name, shape, attrs, gen=None, repeat=None, **extra):
    off, y = shapes_of(shape, attrs)
    c = {"name": "deform_" + name, "op": "deformable_offsets_grad", "shapes": {"grad": y, "x": shape, "offsets": off},
         "attrs": attrs}
    if gen: c["gen"] = gen
    if repeat: c["repeat"] = repeat
    c.update(extra)
    return c


def both(name, shape, attrs, offsets=None, x=None, repeat=None):
    """The same problem for the forward and the backward."""
    g = {}
    if offsets is not None: g["offsets"] = offsets
    if x is not None: g["x"] = x
    return [fwd("fwd_" + name, shape, attrs, dict(g), repeat), bwd("bwd_" + name, shape, attrs, dict(g), repeat)]


def A(kh, kw, s=(1, 1), d=(1, 1), pads=(0, 0, 0, 0), dg=1, fmt="NHWC"):
    if fmt == "NCHW":
        st, dl = [1, 1, s[0], s[1]], [1, 1, d[0], d[1]]
    else:
        st, dl = [1, s[0], s[1], 1], [1, d[0], d[1], 1]
    return {"ksize": [kh, kw], "strides": st, "dilations": dl, "pads": list(pads), "data_format": fmt,
            "deformable_groups": dg, "modulated": True}


# ---- hand-checkable vectors (x = [[1, 2], [3, 4]], 1x1 kernel: one sample per output pixel) ----------
def published():
    a = A(1, 1)
    x = {"data": [1, 2, 3, 4]}
    out = [fwd("hand_channel_order", [1, 2, 2, 1], a,
               {"x": x, "offsets": {"data": [0.5, 0, 2, 0, 0.5, 1, 0, 0, 1, 0, 0, -1]}},
               expect={"y": [3, 3, 3, -4]})]
    out.append(bwd("hand_one_sample", [1, 2, 2, 1], a,
                   {"x": x, "grad": {"data": [1, 0, 0, 0]},
                    "offsets": {"data": [0.5, 0, 2, 0, 0, 1, 0, 0, 1, 0, 0, 1]}},
                   expect={"grad_x": [1, 1, 0, 0], "grad_offsets": [2, 4, 1.5, 0, 0, 0, 0, 0, 0, 0, 0, 0]}))
    # samples exactly on the window lines: no offset gradient (torchvision: one-sided at -1)
    out.append(bwd("hand_window_lines", [1, 2, 2, 1], a,
                   {"x": x, "grad": {"dist": "const", "value": 1},
                    "offsets": {"data": [0, -1, 1, 1, 0, 1, 0, 0, 1, 0, 0, 1]}},
                   expect={"grad_x": [0, 0, 1, 1], "grad_offsets": [0, 0, 0, 0, 0, 0, 1, -3, 3, -4, -4, 4]}))
    # samples exactly on the far lines py = H, px = W with an infinite gradient or mask: outside, so
    # 0 (spec 6 skips them); a kernel whose test is `<= H` reads only zero corners there and
    # passes every finite case, but computes inf * 0 = NaN here (a generated zoo survivor)
    out.append(bwd("hand_far_lines_inf", [1, 2, 2, 1], a,
                   {"x": x, "grad": {"data": ["inf", "-inf", 1, 1]},
                    "offsets": {"data": [0, 2, 1, 1, 0, 1, 0, 1, "inf", 0, 0, 1]}},
                   expect={"grad_x": [0, 0, 0, 1], "grad_offsets": [0, 0, 0, 0, 0, 0, 0, 0, 0, -4, -4, 4]}))
    return out


# ---- random grids ------------------------------------------------------------------------------
def random_cases(repeat):
    out = []
    out += both("k3x3_p1", [2, 12, 11, 16], A(3, 3, pads=(1, 1, 1, 1)), repeat=repeat)
    out += both("k3x2_s2x1_d1x2_asym", [1, 13, 12, 6], A(3, 2, s=(2, 1), d=(1, 2), pads=(2, 0, 1, 3)), repeat=repeat)
    out += both("k2x3_dg2_c34", [2, 9, 10, 34], A(2, 3, pads=(0, 1, 1, 0), dg=2), {"spread": 3, "mask_lo": -1},
                repeat=repeat)
    out += both("k1x1_dg4", [1, 8, 7, 20], A(1, 1, dg=4), repeat=repeat)
    out += both("k5x4_s2_d2_dg3", [1, 16, 15, 9], A(5, 4, s=(2, 2), d=(2, 2), pads=(3, 1, 2, 2), dg=3), repeat=repeat)
    out += both("nchw_attrs", [1, 10, 9, 8], A(3, 2, s=(1, 2), d=(2, 1), pads=(1, 1, 0, 1), fmt="NCHW"), repeat=repeat)
    out += both("c80_wide_offsets", [1, 8, 8, 80], A(3, 3, pads=(1, 1, 1, 1)), {"spread": 6}, repeat=repeat)
    out += both("c256_chunks", [1, 6, 6, 256], A(3, 3, pads=(1, 1, 1, 1)), repeat=repeat)
    out += both("normal_values", [2, 7, 9, 5], A(2, 2, pads=(1, 0, 0, 1)), {"spread": 1.5},
                {"dist": "normal", "mean": 3, "std": 10}, repeat=repeat)
    return out


# ---- edge cases -----------------------------------------------------------------------------------
def edge_cases():
    out = []
    k3 = A(3, 3, pads=(1, 1, 1, 1))
    # zero offsets, mask 1: plain patch extraction
    out += both("zero_offsets", [2, 7, 8, 12], k3, {"spread": 0, "mask_lo": 1, "mask_hi": 1})
    # integer offsets: samples on pixels, the floor branch at every cell line
    out += both("integer_offsets", [1, 9, 8, 10], A(3, 2, s=(2, 1), pads=(1, 2, 0, 1), dg=2),
                {"spread": 3, "integer_frac": 1.0, "mask_lo": -1})
    out += both("integer_offsets_mixed", [1, 8, 8, 7], k3, {"spread": 2, "integer_frac": 0.5})
    # samples exactly on the window lines py = -1, py = H, px = -1, px = W
    out += both("window_lines", [1, 6, 7, 9], k3, {"spread": 2, "edge_frac": 1.0})
    out += both("window_lines_integer", [1, 5, 5, 3], A(2, 2, pads=(1, 1, 1, 1)),
                {"spread": 2, "edge_frac": 0.5, "integer_frac": 1.0})
    # positions within float32 rounding of a cell or window line: ambiguous offset gradients
    out += both("near_integer", [1, 7, 7, 6], k3, {"spread": 2, "near_integer_frac": 0.7})
    # positions far outside the plane
    out += both("far_outside", [1, 6, 6, 5], k3, {"spread": 40})
    # H and W far apart (H >= W + 4 and the reverse), samples across the whole plane: a bound or
    # clamp that takes the other axis' size (a copy-paste) changes nothing while H and W are close
    out += both("tall_plane", [1, 15, 5, 4], k3, {"spread": 6})
    out += both("wide_plane", [1, 5, 15, 4], k3, {"spread": 6})
    # NaN and infinite offsets sample nothing (spec 0)
    out += both("nan_offsets", [1, 7, 7, 6], k3, {"nan_frac": 0.3})
    out += both("inf_offsets", [1, 6, 6, 4], k3, {"inf_frac": 0.3})
    # mask 0 and negative masks
    out += both("mask_zero", [1, 6, 6, 5], k3, {"mask_lo": 0, "mask_hi": 0})
    out += both("mask_negative", [1, 6, 6, 5], k3, {"mask_lo": -2, "mask_hi": -0.5})
    # empty tensors: N = 0, C = 0
    out += both("empty_batch", [0, 6, 6, 4], k3)
    out += both("empty_channels", [2, 6, 6, 0], k3)
    # output sizes from the truncating division; the kernel exactly as large as the padded input
    out += both("truncating_division", [1, 10, 9, 4], A(3, 2, s=(3, 4), d=(2, 1)))
    out += both("kernel_fills_input", [1, 4, 5, 3], A(2, 3, d=(2, 2), pads=(0, 0, 0, 0)))
    out += both("plane_1x1_padded", [1, 1, 1, 4], A(3, 3, pads=(1, 1, 1, 1)))
    # one pixel high, nine wide: ONNX's reference DeformConv normalizes positions by (H - 1) for its
    # GridSample and divides by 0 here (ops.md 10); the spec samples the row as any other
    out += both("plane_one_row", [1, 1, 9, 4], A(3, 3, pads=(1, 1, 1, 1)), {"spread": 2})
    out += both("kh1_kw7", [1, 5, 12, 3], A(1, 7, pads=(0, 0, 3, 3)))
    # NaN in x propagates exactly as in the reference
    out += both("nan_features", [1, 6, 6, 4], k3, x={"dist": "uniform", "nan_frac": 0.05})
    # NaN only at the four corner pixels, samples across the plane's edges and beyond:
    # a corner outside the plane is V = 0, never read, so outputs away from those pixels stay
    # finite; a kernel that reads the clamped pixel times weight 0 spreads the NaN (ops.md 10)
    out += both("nan_corners", [2, 6, 7, 4], k3, {"spread": 4},
                x={"dist": "uniform", "lo": 1, "hi": 20, "channels_last": True,
                   "nan_pixels": [[0, 0], [0, -1], [-1, 0], [-1, -1]]})
    return out


# ---- cases the bugs found in the field would have failed ----------------------------------------
def field_cases():
    # mmcv's deformable conv has passed padding and kernel size in the wrong order: kernels, strides
    # and dilations that differ between H and W, and four different pads, in both attribute layouts
    out = []
    for fmt in ("NHWC", "NCHW"):
        tag = fmt.lower()
        out += both("field_k2x4_" + tag, [1, 9, 11, 4], A(2, 4, s=(1, 2), d=(2, 1), pads=(0, 2, 3, 1), fmt=fmt))
        out += both("field_k4x2_" + tag, [1, 11, 9, 4], A(4, 2, s=(2, 1), d=(1, 2), pads=(3, 1, 0, 2), fmt=fmt))
    return out


# ---- rejected inputs (exit 2 with the cause named) ------------------------------------------------
def invalid_cases():
    f = []
    k3 = A(3, 3, pads=(1, 1, 1, 1))
    x = [1, 6, 6, 4]

    def bad(name, attrs=None, expect="", shape=x, off=None, grad=None, only=None):
        a = dict(k3, **(attrs or {}))
        cases = []
        # shapes from the valid problem, then the broken attributes and tensors on top
        if only != "bwd":
            cases.append(fwd("fwd_bad_" + name, x, k3, expect_error=expect))
        if only != "fwd":
            cases.append(bwd("bwd_bad_" + name, x, k3, expect_error=expect))
        for c in cases:
            c["attrs"] = a
            c["shapes"]["x"] = shape
            if off is not None: c["shapes"]["offsets"] = off
            if grad is not None and "grad" in c["shapes"]: c["shapes"]["grad"] = grad
        f.extend(cases)

    # shapes are given explicitly where the attributes make Ho, Wo meaningless
    fixed_off, fixed_grad = [1, 6, 6, 27], [1, 18, 18, 4]
    bad("ksize_len", {"ksize": [3]}, "ksize [3]: must have 2 entries", off=fixed_off, grad=fixed_grad)
    bad("ksize_zero", {"ksize": [0, 3]}, "ksize [0,3]: entry 0 must be in [1, 1024]", off=fixed_off, grad=fixed_grad)
    bad("strides_len", {"strides": [1, 1, 1]}, "strides [1,1,1]: must have 4 entries", off=fixed_off, grad=fixed_grad)
    bad("strides_zero", {"strides": [1, 0, 1, 1]}, "strides [1,0,1,1]: entry 1 must be in", off=fixed_off,
        grad=fixed_grad)
    bad("strides_nhwc_c", {"strides": [1, 1, 1, 2]}, "strides [1,1,1,2]: entries 0 and 3 (N and C) must be 1",
        off=fixed_off, grad=fixed_grad)
    bad("strides_nchw_c", {"strides": [1, 2, 1, 1], "data_format": "NCHW"},
        "strides [1,2,1,1]: entries 0 and 1 (N and C) must be 1", off=fixed_off, grad=fixed_grad)
    bad("dilations_n", {"dilations": [2, 1, 1, 1]}, "dilations [2,1,1,1]: entries 0 and 3", off=fixed_off,
        grad=fixed_grad)
    bad("dilations_negative", {"dilations": [1, -1, 1, 1]}, "dilations [1,-1,1,1]: entry 1", off=fixed_off,
        grad=fixed_grad)
    bad("pads_len", {"pads": [1, 1]}, "pads [1,1]: must have 4 entries", off=fixed_off, grad=fixed_grad)
    bad("pads_negative", {"pads": [1, 1, -1, 1]}, "pads [1,1,-1,1]: entry 2 must be in", off=fixed_off,
        grad=fixed_grad)
    bad("data_format", {"data_format": "NCDHW"}, "data_format \"NCDHW\": must be \"NHWC\" or \"NCHW\"",
        off=fixed_off, grad=fixed_grad)
    bad("groups_zero", {"deformable_groups": 0}, "deformable_groups 0: must be >= 1", off=fixed_off, grad=fixed_grad)
    bad("groups_not_dividing", {"deformable_groups": 3}, "channels 4 must be a multiple of deformable_groups 3",
        off=[1, 6, 6, 81], grad=fixed_grad)
    bad("not_modulated", {"modulated": False}, "modulated false: only true", off=fixed_off, grad=fixed_grad)
    bad("x_rank", None, "x [6,6,4]: must have rank 4", shape=[6, 6, 4], off=fixed_off, grad=fixed_grad)
    bad("offsets_rank", None, "offsets [6,6,27]: must have rank 4", off=[6, 6, 27], grad=fixed_grad)
    bad("offsets_channels", None, "offsets [1,6,6,18]: dim 3 must be 3*deformable_groups*kh*kw = 27", off=[1, 6, 6, 18])
    bad("offsets_spatial", None, "offsets [1,5,6,27]: dims 1, 2 must be the output size Ho x Wo = 6 x 6",
        off=[1, 5, 6, 27])
    bad("offsets_batch", None, "offsets [2,6,6,27]: batch 2 must equal x's 1", off=[2, 6, 6, 27])
    bad("input_smaller_than_kernel", {"ksize": [3, 3], "pads": [0, 0, 0, 0], "dilations": [1, 3, 1, 1]},
        "padded height 6 + 0 + 0 is smaller than the dilated kernel height 7", off=[1, 1, 4, 27], grad=[1, 3, 12, 4])
    bad("input_narrower_than_kernel", {"ksize": [1, 4], "pads": [0, 0, 1, 0]}, shape=[1, 3, 2, 2],
        expect="padded width 2 + 1 + 0 is smaller than the dilated kernel width 4", off=[1, 3, 1, 12], grad=[1, 3, 4, 2])
    bad("grad_shape", None, "grad [1,18,17,4]: must have shape [N,Ho*kh,Wo*kw,C] = [1,18,18,4]", grad=[1, 18, 17, 4],
        only="bwd")
    bad("grad_rank", None, "grad [18,18,4]: must have shape", grad=[18, 18, 4], only="bwd")
    return f


def conformance():
    return published() + random_cases(3) + edge_cases() + field_cases() + invalid_cases()


def smoke():
    return published() + random_cases(None) + edge_cases() + field_cases() + invalid_cases()


def golden():
    return []
