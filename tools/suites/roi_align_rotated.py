"""Suite cases of the rotated RoIAlign family: roi_align_rotated and roi_align_rotated_grad.

Same interface as roi_align.py: conformance(), smoke(), golden(). Both layouts of ops.md section 3
through data_format: "NCHW" (x [B,C,H,W], rois [n,6]) and "NHWC" (x [B,H,W,C], rois [6,n]).
"""
import math


def nhwc(shape):
    b, c, h, w = shape
    return [b, h, w, c]


def rot_fwd(name, shape, k, attrs, gen=None, grid=None, repeat=None, fmt="NCHW", **extra):
    """shape is always given as [B, C, H, W]; fmt picks the layout of the tensors."""
    x = nhwc(shape) if fmt == "NHWC" else shape
    a = dict(attrs)
    if fmt == "NHWC":
        a["data_format"] = "NHWC"
    c = {"name": name, "op": "roi_align_rotated",
         "shapes": {"x": x, "rois": [6, k] if fmt == "NHWC" else [k, 6]}, "attrs": a}
    if gen: c["gen"] = gen
    if grid: c["grid"] = grid
    if repeat: c["repeat"] = repeat
    c.update(extra)
    return c


def rot_grad(name, shape, k, ph, pw, attrs, gen=None, grid=None, repeat=None, fmt="NCHW", **extra):
    b, ch, h, w = shape
    a = dict(attrs, pooled_h=ph, pooled_w=pw, y_grad_shape=nhwc(shape) if fmt == "NHWC" else list(shape))
    if fmt == "NHWC":
        a["data_format"] = "NHWC"
    c = {"name": name, "op": "roi_align_rotated_grad",
         "shapes": {"x_grad": [k, ph, pw, ch] if fmt == "NHWC" else [k, ch, ph, pw],
                    "rois": [6, k] if fmt == "NHWC" else [k, 6]}, "attrs": a}
    if gen: c["gen"] = gen
    if grid: c["grid"] = grid
    if repeat: c["repeat"] = repeat
    c.update(extra)
    return c


def both(name, shape, k, ph, pw, attrs, rois_gen=None, values=None, grid=None, repeat=None, fmts=("NCHW", "NHWC")):
    """The same problem for the forward and the backward, in each layout."""
    out = []
    for fmt in fmts:
        tag = "" if fmt == "NCHW" else "_nhwc"
        g_f = {"rois": rois_gen or {}}
        g_b = {"rois": rois_gen or {}}
        if values:
            g_f["x"] = values
            g_b["x_grad"] = values
        out.append(rot_fwd("rot_fwd_" + name + tag, shape, k, dict(attrs, pooled_h=ph, pooled_w=pw), g_f, grid,
                           repeat, fmt))
        out.append(rot_grad("rot_grad_" + name + tag, shape, k, ph, pw, attrs, g_b, grid, repeat, fmt))
    return out


# ---- published vectors: mmcv's RoIAlignRotated tests (ops.md section 9) ------------------------
MMCV_ATTRS = {"spatial_scale": 1.0, "sampling_ratio": 2, "aligned": True, "clockwise": False}
X2 = [[1, 2], [3, 4]]
X4 = [[1, 2, 5, 6], [3, 4, 7, 8], [9, 10, 13, 14], [11, 12, 15, 16]]
G2 = [[3.0625, .4375], [.4375, .0625]]
G4 = [[.47265625, .4296875, .4296875, .04296875]] + [[.4296875, .390625, .390625, .0390625]] * 2 + \
     [[.04296875, .0390625, .0390625, .00390625]]
MMCV = [  # (tag, input, roi, forward, input gradient of sum)
    ("2x2_angle0", X2, [0, .5, .5, 1, 1, 0], [[1, 1.25], [1.5, 1.75]], G2),
    ("2x2_angle_pi_2", X2, [0, .5, .5, 1, 1, math.pi / 2], [[1.5, 1], [1.75, 1.25]], G2),
    ("4x4_angle0", X4, [0, 1.5, 1.5, 3, 3, 0], [[1.9375, 4.75], [7.5625, 10.375]], G4),
    ("4x4_angle_pi_2", X4, [0, 1.5, 1.5, 3, 3, math.pi / 2], [[7.5625, 1.9375], [10.375, 4.75]], G4),
]


def published():
    out = []
    for tag, x, roi, fwd, grad in MMCV:
        n = len(x)
        for fmt in ("NCHW", "NHWC"):
            sfx = "" if fmt == "NCHW" else "_nhwc"
            # one channel: the flat data of both layouts is the same; rois [1,6] and [6,1] too
            out.append(rot_fwd("mmcv_fwd_" + tag + sfx, [1, 1, n, n], 1, dict(MMCV_ATTRS, pooled_h=2, pooled_w=2),
                               {"x": {"data": x}, "rois": {"data": roi}}, fmt=fmt, expect={"y": fwd}))
            out.append(rot_grad("mmcv_grad_" + tag + sfx, [1, 1, n, n], 1, 2, 2, MMCV_ATTRS,
                                {"x_grad": {"dist": "const", "value": 1}, "rois": {"data": roi}}, fmt=fmt,
                                expect={"y_grad": grad}))
    return out


# ---- random grids ------------------------------------------------------------------------------
QUADRANTS = {"q1": [0, math.pi / 2], "q2": [math.pi / 2, math.pi], "q3": [-math.pi, -math.pi / 2],
             "q4": [-math.pi / 2, 0]}


def random_cases(repeat):
    out = []
    out += both("grid", [2, 8, 24, 24], 16, 3, 3, {"spatial_scale": 0.25}, {"size": [4, 96]},
                grid={"aligned": [True, False], "sampling_ratio": [0, 1, 2], "clockwise": [True, False]},
                repeat=repeat)
    for q, rng in QUADRANTS.items():
        out += both("angle_" + q, [1, 5, 16, 20], 10, 2, 3, {"spatial_scale": 0.5}, {"size": [2, 40], "angle": rng},
                    grid={"aligned": [True, False], "sampling_ratio": [0, 2]}, repeat=repeat)
    out += both("pooled_7x7", [2, 5, 20, 28], 12, 7, 7, {"spatial_scale": 0.5, "sampling_ratio": 2},
                {"size": [2, 60]}, grid={"aligned": [True, False]}, repeat=repeat)
    out += both("channels_17", [1, 17, 9, 33], 8, 4, 5, {"spatial_scale": 1.0}, {"size": [1, 24], "outside_frac": 0.2},
                grid={"sampling_ratio": [0, 2]}, repeat=repeat)
    out += both("normal_values", [2, 33, 12, 12], 9, 4, 4, {"spatial_scale": 0.5, "sampling_ratio": 0},
                {"size": [2, 30]}, values={"dist": "normal", "mean": 3, "std": 10}, repeat=repeat)
    return out


# ---- edge cases ---------------------------------------------------------------------------------
# Rois at an angle of exactly 0 (and -0) whose samples lie exactly on y = -1, y = H, x = -1 and
# x = W of an 8 x 8 plane: one sample per bin of 2 x 2 bins, size 4 (bins 2), so the samples sit at
# centre -1 and +1. Every float32 form computes these positions exactly: they are inside (rule A
# is inclusive), and a kernel with a strict window test (any one of its four bounds) must fail.
WINDOW_LINE_ROIS = [[0, 0, 0, 4, 4, 0], [0, 9, 9, 4, 4, 0], [0, 0, 9, 4, 4, -0.0], [0, 9, 0, 4, 4, 0],
                    [0, 4, 0, 4, 4, 0], [0, 4, 9, 4, 4, -0.0], [0, 0, 4, 4, 4, 0], [0, 9, 4, 4, 4, 0]]


def samples_on_window_lines():
    out = []
    for aligned in (False, True):
        shift = 0.5 if aligned else 0.0  # aligned moves the centre by -0.5: the same positions
        rois = [[r[0], r[1] + shift, r[2] + shift] + r[3:] for r in WINDOW_LINE_ROIS]
        attrs = {"spatial_scale": 1.0, "sampling_ratio": 1, "aligned": aligned}
        tag = "samples_on_window_lines" + ("_aligned" if aligned else "")
        for fmt in ("NCHW", "NHWC"):
            data = [list(col) for col in zip(*rois)] if fmt == "NHWC" else rois
            sfx = "" if fmt == "NCHW" else "_nhwc"
            vals = {"dist": "uniform", "lo": 1, "hi": 20}
            out.append(rot_fwd("rot_fwd_" + tag + sfx, [1, 3, 8, 8], len(rois), dict(attrs, pooled_h=2, pooled_w=2),
                               {"rois": {"data": data}, "x": vals}, {"clockwise": [False, True]}, fmt=fmt))
            out.append(rot_grad("rot_grad_" + tag + sfx, [1, 3, 8, 8], len(rois), 2, 2, attrs,
                                {"rois": {"data": data}, "x_grad": vals}, {"clockwise": [False, True]}, fmt=fmt))
    return out


def edge_cases():
    out = []
    base = {"spatial_scale": 0.25}
    al_sr = {"aligned": [True, False], "sampling_ratio": [0, 2]}
    # angles exactly 0, +-pi/2, pi, and beyond +-2 pi (float32-rounded), both directions
    out += both("special_angles", [1, 4, 12, 12], 16, 3, 3, base, {"special_angle_frac": 1.0, "size": [4, 40]},
                grid={"aligned": [True, False], "clockwise": [True, False]})
    out += both("angles_beyond_2pi", [1, 4, 12, 12], 12, 2, 2, base, {"angle": [-25, 25], "size": [4, 40]},
                grid={"sampling_ratio": [0, 2]})
    out += samples_on_window_lines()
    # empty tensors: no rois, no channels, no images
    out += both("empty_rois", [2, 4, 8, 8], 0, 2, 2, base)
    out += both("empty_channels", [2, 0, 8, 8], 5, 2, 2, base)
    out += both("empty_batch", [0, 3, 8, 8], 4, 2, 2, base)
    # the documented limits, accepted: C = 1024, pooled sizes 1024
    out += both("channels_1024", [1, 1024, 4, 4], 2, 2, 2, {"spatial_scale": 1.0, "sampling_ratio": 1}, {"size": [1, 4]})
    out += both("pooled_h_1024", [1, 2, 6, 6], 2, 1024, 1, {"spatial_scale": 1.0, "sampling_ratio": 1}, {"size": [2, 6]})
    out += both("pooled_w_1024", [1, 2, 6, 6], 1, 1, 1024, {"spatial_scale": 1.0, "sampling_ratio": 1}, {"size": [2, 6]})
    # images no roi touches (every roi on image 0 of 3)
    out += both("untouched_images", [3, 4, 10, 10], 6, 2, 2, base, {"data": [[0, 16, 16, 22, 13, 0.7]] * 6},
                fmts=("NCHW",))
    out += both("outside_partly", [1, 6, 16, 16], 24, 3, 3, base, {"outside_frac": 1.0, "size": [8, 64]}, grid=al_sr)
    out += both("outside_wholly", [1, 3, 8, 8], 4, 2, 2, base,
                {"data": [[0, -100, -100, 30, 30, 0.3], [0, 250, 250, 80, 60, -2], [0, -40, 10, 30, 20, 3.1],
                          [0, 10, 90, 10, 9, 1.2]]}, grid={"aligned": [True, False]}, fmts=("NCHW",))
    out += both("zero_size", [1, 4, 12, 12], 16, 3, 3, base, {"degenerate_frac": 1.0}, grid=al_sr)
    out += both("negative_size", [1, 4, 12, 12], 16, 3, 3, base, {"negative_frac": 1.0, "size": [2, 40]}, grid=al_sr)
    out += both("small_unaligned_clamp", [1, 4, 12, 12], 12, 2, 2, {"spatial_scale": 1.0, "aligned": False},
                {"size": [0.05, 1.5]}, grid={"sampling_ratio": [0, 2]})
    out += both("batch_out_of_range", [2, 3, 8, 8], 12, 2, 2, base, {"oob_batch_frac": 0.5})
    out += both("batch_fractional", [2, 3, 8, 8], 12, 2, 2, base, {"frac_batch_frac": 1.0})
    # floor, not truncation (mmcv) or rounding half to even (Ascend): -0.5 skipped, 1.5 image 1
    out += both("batch_negative_fraction", [2, 3, 8, 8], 4, 2, 2, base,
                {"data": [[-0.5, 16, 16, 20, 12, 0.3], [-0.25, 10, 14, 16, 16, -0.7], [1.5, 12, 12, 18, 10, 1.0],
                          [0.5, 14, 16, 12, 20, 2.0]]}, fmts=("NCHW",))
    # a batch index exactly B or -1 near the plane's ends (a backward that takes it as in range
    # writes just past y_grad, inside the harness's guard bytes), and batch indices that are not
    # finite (skipped, ops.md 0): the generated zoo's "bv <= B" mutant passed every case before
    limits = [[2, 4, 4, 8, 8, 0], [-1, 28, 28, 8, 8, 0], [2.5, 2, 2, 4, 4, 0.5], [1, 4, 4, 8, 8, 0]]
    out += both("batch_at_limits", [2, 3, 8, 8], 4, 2, 2, base, {"data": limits}, fmts=("NCHW",))
    out += both("batch_at_limits", [2, 3, 8, 8], 4, 2, 2, base, {"data": [list(f) for f in zip(*limits)]},
                fmts=("NHWC",))  # rois [6, n] in NHWC
    not_finite = [["nan", 16, 16, 20, 12, 0.3], ["inf", 10, 14, 16, 16, -0.7], ["-inf", 12, 12, 18, 10, 1.0],
                  [1, 14, 16, 12, 20, 2.0]]
    out += both("batch_not_finite", [2, 3, 8, 8], 4, 2, 2, base, {"data": not_finite}, fmts=("NCHW",))
    out += both("batch_not_finite", [2, 3, 8, 8], 4, 2, 2, base, {"data": [list(f) for f in zip(*not_finite)]},
                fmts=("NHWC",))  # rois [6, n] in NHWC
    out += both("nan_in_roi", [1, 3, 8, 8], 12, 2, 2, base, {"nan_frac": 0.5}, grid=al_sr)
    out += both("tiny_scale", [1, 4, 8, 8], 8, 2, 2, {"spatial_scale": 1 / 64}, {"size": [16, 400]},
                grid={"sampling_ratio": [0, 2]})
    out += both("large_scale", [1, 4, 32, 32], 8, 3, 3, {"spatial_scale": 16.0}, {"size": [0.1, 1.5]},
                grid={"sampling_ratio": [0, 2]})
    out += both("odd_scale", [1, 4, 16, 16], 8, 3, 3, {"spatial_scale": 0.3}, {"size": [4, 40]},
                grid={"sampling_ratio": [0, 2]})
    out += both("pooled_1x1", [2, 5, 10, 10], 8, 1, 1, base, grid={"sampling_ratio": [0, 1, 4]})
    out += both("pooled_64x17", [1, 2, 20, 20], 2, 64, 17, {"spatial_scale": 1.0, "sampling_ratio": 1})
    # samples exactly on y = -1 and y = H (x = -1 and x = W), angle 0: rule A's inclusive bounds
    out += both("samples_on_bounds", [1, 4, 8, 8], 6, 2, 2, {"spatial_scale": 1.0, "aligned": False},
                {"edge_frac": 1.0}, grid={"sampling_ratio": [1, 2, 3]})
    out += both("samples_on_bounds_aligned", [1, 4, 8, 8], 6, 2, 2, {"spatial_scale": 0.5, "aligned": True},
                {"edge_frac": 1.0}, grid={"sampling_ratio": [1, 2]})
    out += both("plane_1xW", [1, 3, 1, 9], 6, 2, 2, {"spatial_scale": 1.0}, {"size": [1, 12]},
                grid={"sampling_ratio": [0, 2]})
    out += both("plane_Hx1", [1, 3, 9, 1], 6, 2, 2, {"spatial_scale": 1.0}, {"size": [1, 12]},
                grid={"sampling_ratio": [0, 2]})
    out += both("plane_1x1", [1, 3, 1, 1], 6, 2, 2, {"spatial_scale": 1.0}, {"size": [0.5, 4]})
    # adaptive counts right at an integer (h*s/PH = 2 exactly)
    out += both("adaptive_integral_bins", [1, 3, 16, 16], 3, 2, 2, {"spatial_scale": 1.0, "aligned": False},
                {"data": [[0, 4, 4, 4, 4, 0.5], [0, 5, 5, 8, 4, -1], [0, 4.5, 4.5, 4, 8, 2]]}, fmts=("NCHW",))
    # NaN and infinity in the feature map propagate exactly as in the reference
    out += both("nan_features", [1, 3, 8, 8], 6, 2, 2, base, values={"dist": "uniform", "nan_frac": 0.05})
    out += both("inf_features", [1, 3, 8, 8], 6, 2, 2, {"spatial_scale": 0.25, "sampling_ratio": 2},
                {"special_angle_frac": 0.5}, values={"dist": "uniform", "inf_frac": 0.05})
    # large finite roi coordinates: each roi coordinate far out with chance 1/2 (either sign;
    # extents keep theirs), magnitudes 1e2 .. 1e9 log-uniform, or 2^23 .. 2^25 around 2^24. At
    # spatial_scale 1 a roi spanning the plane has samples ~1e8 apart with rounding boxes of hundreds
    # of pixels; at 2^-20 the huge image coordinates land on the plane. Fixed sample counts (adaptive
    # ones of such rois are refused: too many samples). Values 1..20: an output beyond [0, 20] is
    # wrong whatever the rounding.
    huge_v = {"dist": "uniform", "lo": 1, "hi": 20}
    out += both("huge_rois", [2, 3, 9, 7], 16, 2, 2, {}, {"huge_frac": 0.5, "huge": [1e2, 1e9], "special_angle_frac": 0.25}, values=huge_v,
                grid={"aligned": [True, False], "sampling_ratio": [1, 2], "spatial_scale": [1.0, 2.0 ** -20]})
    out += both("rois_2p24", [2, 3, 9, 7], 16, 2, 2, {"sampling_ratio": 2},
                {"huge_frac": 0.5, "huge": [2.0 ** 23, 2.0 ** 25], "special_angle_frac": 0.25}, values=huge_v,
                grid={"aligned": [True, False], "spatial_scale": [1.0, 2.0 ** -20]})
    # a NaN at pixel (0, 0) only, rois half outside the plane: an out-of-window sample is
    # empty, so bins away from (0, 0) stay finite; mmcv's and detectron2's CPU forward add
    # 0 * F[0, 0] for it (ops.md 10). The backward reads no feature: nothing to isolate there.
    for fmt in ("NCHW", "NHWC"):
        xv = {"dist": "uniform", "lo": 1, "hi": 20, "nan_pixels": [[0, 0]], "channels_last": fmt == "NHWC"}
        out.append(rot_fwd("rot_fwd_nan_origin" + ("" if fmt == "NCHW" else "_nhwc"), [2, 3, 8, 8], 12,
                           dict(base, pooled_h=2, pooled_w=2), {"x": xv, "rois": {"outside_frac": 1.0, "size": [4, 24]}},
                           {"sampling_ratio": [0, 2], "aligned": [True, False]}, None, fmt))
    return out


# ---- cases the bugs found in the field would have failed -------------------------------------
def field_cases():
    # mmcv's NPU adapter passes pooled_h and pooled_w swapped to RoiAlignRotatedGrad; the layouts
    # of rois ([n,6] documented, [6,n] in the kernel) and the clockwise flag are easy to misread:
    # a non-square output in both layouts and both directions
    return both("field_pooled_2x5", [1, 3, 12, 14], 6, 2, 5, {"spatial_scale": 0.5}, {"size": [4, 30]},
                grid={"clockwise": [True, False], "sampling_ratio": [0, 2]})


# ---- rejected inputs (exit 2 with the cause named) ---------------------------------------------
def invalid_cases():
    a = {"pooled_h": 2, "pooled_w": 2, "spatial_scale": 0.25}
    f = []
    f.append(rot_fwd("rot_bad_rois_width", [1, 1, 4, 4], 3, a, expect_error="rois must have shape [n,6] for data_format NCHW, got [3,5]"))
    f[-1]["shapes"]["rois"] = [3, 5]
    f.append(rot_fwd("rot_bad_rois_nhwc", [1, 1, 4, 4], 3, a, fmt="NHWC",
                     expect_error="rois must have shape [6,n] for data_format NHWC, got [3,6]"))
    f[-1]["shapes"]["rois"] = [3, 6]
    f.append(rot_fwd("rot_bad_x_rank", [1, 4, 4, 4], 3, a, expect_error="x must have shape [B,C,H,W]"))
    f[-1]["shapes"]["x"] = [1, 4, 4]
    f.append(rot_fwd("rot_bad_data_format", [1, 1, 4, 4], 1, dict(a, data_format="NCWH"),
                     expect_error="data_format = 'NCWH': must be \"NCHW\" or \"NHWC\""))
    f.append(rot_fwd("rot_bad_pooled_zero", [1, 1, 4, 4], 1, dict(a, pooled_h=0), expect_error="pooled_h = 0: must be >= 1"))
    f.append(rot_fwd("rot_bad_pooled_1025", [1, 1, 4, 4], 1, dict(a, pooled_w=1025),
                     expect_error="pooled_w = 1025: must be in [1, 1024]"))
    f.append(rot_fwd("rot_bad_channels_1025", [1, 1025, 2, 2], 1, a, expect_error="C = 1025 channels: must be in [0, 1024]"))
    f.append(rot_fwd("rot_bad_channels_1025_nhwc", [1, 1025, 2, 2], 1, a, fmt="NHWC",
                     expect_error="C = 1025 channels: must be in [0, 1024]"))
    f.append(rot_fwd("rot_bad_scale_zero", [1, 1, 4, 4], 1, dict(a, spatial_scale=0), expect_error="spatial_scale = 0: must be > 0"))
    f.append(rot_fwd("rot_bad_scale_negative", [1, 1, 4, 4], 1, dict(a, spatial_scale=-1), expect_error="spatial_scale = -1"))
    f.append(rot_fwd("rot_bad_sampling_ratio", [1, 1, 4, 4], 1, dict(a, sampling_ratio=-1), expect_error="sampling_ratio = -1"))
    b = {"spatial_scale": 0.25}
    f.append(rot_grad("rot_bad_grad_rois", [1, 1, 4, 4], 3, 2, 2, b, expect_error="rois must have shape [n,6]"))
    f[-1]["shapes"]["rois"] = [3, 7]
    f.append(rot_grad("rot_bad_grad_k_mismatch", [1, 1, 4, 4], 3, 2, 2, b, expect_error="x_grad has 3 rois"))
    f[-1]["shapes"]["rois"] = [2, 6]
    f.append(rot_grad("rot_bad_grad_pooled_mismatch", [1, 1, 4, 4], 3, 2, 2, b,
                      expect_error="must equal x_grad dims 2, 3"))
    f[-1]["attrs"]["pooled_w"] = 3
    f.append(rot_grad("rot_bad_grad_pooled_mismatch_nhwc", [1, 1, 4, 4], 3, 2, 2, b, fmt="NHWC",
                      expect_error="must equal x_grad dims 1, 2"))
    f[-1]["attrs"]["pooled_h"] = 3
    f.append(rot_grad("rot_bad_grad_channels", [1, 1, 4, 4], 3, 2, 2, b, expect_error="y_grad_shape[1] = 1"))
    f[-1]["shapes"]["x_grad"] = [3, 2, 2, 2]
    f.append(rot_grad("rot_bad_grad_channels_nhwc", [1, 1, 4, 4], 3, 2, 2, b, fmt="NHWC", expect_error="y_grad_shape[3] = 1"))
    f[-1]["shapes"]["x_grad"] = [3, 2, 2, 2]
    f.append(rot_grad("rot_bad_grad_shape_len", [1, 1, 4, 4], 3, 2, 2, b, expect_error="y_grad_shape must have 4 entries"))
    f[-1]["attrs"]["y_grad_shape"] = [1, 1, 4]
    f.append(rot_grad("rot_bad_grad_shape_negative", [1, 1, 4, 4], 3, 2, 2, b, expect_error="y_grad_shape[2] = -4"))
    f[-1]["attrs"]["y_grad_shape"] = [1, 1, -4, 4]
    f.append(rot_grad("rot_bad_grad_rank", [1, 1, 4, 4], 3, 2, 2, b, expect_error="x_grad must have shape"))
    f[-1]["shapes"]["x_grad"] = [3, 1, 4]
    f.append(rot_grad("rot_bad_grad_channels_1025", [1, 1025, 2, 2], 1, 2, 2, b, expect_error="C = 1025 channels"))
    f.append(rot_grad("rot_bad_grad_pooled_1025", [1, 1, 2, 2], 1, 1025, 1, b, expect_error="pooled_h = 1025"))
    f.append(rot_grad("rot_bad_grad_scale", [1, 1, 4, 4], 3, 2, 2, dict(b, spatial_scale=0), expect_error="spatial_scale"))
    f.append(rot_grad("rot_bad_grad_sampling_ratio", [1, 1, 4, 4], 3, 2, 2, dict(b, sampling_ratio=-2),
                      expect_error="sampling_ratio = -2"))
    return f


def conformance():
    return published() + random_cases(2) + edge_cases() + field_cases() + invalid_cases()


def smoke():
    return published() + random_cases(None) + edge_cases() + field_cases() + invalid_cases()


def golden():
    return [("published_roi_align_rotated.json", "published_roi_align_rotated",
             "mmcv tests/test_ops/test_roi_align_rotated.py vectors (ops.md section 9)", published())]
