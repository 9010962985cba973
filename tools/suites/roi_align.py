"""Suite cases of the roi_align family: roi_align and roi_align_v2_backward.

Each family module gives conformance(), smoke() and golden(): lists of cases (and, for
golden, (file name, suite name, source, cases) tuples). tools/gen_suites.py collects them.
"""


def roi_align(name, shape, k, attrs, gen=None, grid=None, repeat=None, **extra):
    c = {"name": name, "op": "roi_align", "shapes": {"input": shape, "rois": [k, 5]}, "attrs": attrs}
    if gen: c["gen"] = gen
    if grid: c["grid"] = grid
    if repeat: c["repeat"] = repeat
    c.update(extra)
    return c


def roi_bwd(name, input_shape, k, ph, pw, attrs, gen=None, grid=None, repeat=None, **extra):
    a = {"input_shape": input_shape, "pooled_height": ph, "pooled_width": pw}
    a.update(attrs)
    c = {"name": name, "op": "roi_align_v2_backward",
         "shapes": {"grad_output": [k, input_shape[1], ph, pw], "boxes": [k, 5]}, "attrs": a}
    if gen: c["gen"] = gen
    if grid: c["grid"] = grid
    if repeat: c["repeat"] = repeat
    c.update(extra)
    return c


def both(name, shape, k, ph, pw, attrs, rois_gen=None, values=None, grid=None, repeat=None):
    """The same problem for the forward and the backward."""
    fa = dict(attrs, pooled_h=ph, pooled_w=pw)
    g_f = {"rois": rois_gen or {}}
    g_b = {"boxes": rois_gen or {}}
    if values:
        g_f["input"] = values
        g_b["grad_output"] = values
    return [roi_align("fwd_" + name, shape, k, fa, g_f, grid, repeat),
            roi_bwd("bwd_" + name, shape, k, ph, pw, attrs, g_b, grid, repeat)]


# ---- published vectors (spec section 9) ------------------------------------------------------
IOTA36 = {"dist": "iota", "start": 1}
DOC_ROI = {"data": [[0, -2, -2, 22, 22]]}
DOC_ATTRS = {"spatial_scale": 0.25, "sampling_ratio": 2}
FWD_UNALIGNED = [[4.5, 6.5, 8.5], [16.5, 18.5, 20.5], [28.5, 30.5, 32.5]]
FWD_ALIGNED = [[2.75, 4.5, 6.5], [13.25, 15, 17], [25.25, 27, 29]]
GRAD_ALIGNED = [[.5625, .375, .375, .375, .375, .1875]] + [[.375, .25, .25, .25, .25, .125]] * 4 + \
               [[.1875, .125, .125, .125, .125, .0625]]


def published():
    out = []
    for aligned, expect in ((False, FWD_UNALIGNED), (True, FWD_ALIGNED)):
        tag = "aligned" if aligned else "unaligned"
        out.append(roi_align("torch_npu_doc_fwd_" + tag, [1, 1, 6, 6], 1,
                             dict(DOC_ATTRS, pooled_h=3, pooled_w=3, aligned=aligned),
                             {"input": IOTA36, "rois": DOC_ROI}, expect={"output": [[expect]]}))
    out.append(roi_bwd("torch_npu_doc_grad_unaligned", [1, 1, 6, 6], 1, 3, 3, dict(DOC_ATTRS, aligned=False),
                       {"grad_output": {"dist": "const", "value": 1}, "boxes": DOC_ROI},
                       expect={"grad_input": [[[[0.25] * 6] * 6]]}))
    out.append(roi_bwd("torch_npu_doc_grad_aligned", [1, 1, 6, 6], 1, 3, 3, dict(DOC_ATTRS, aligned=True),
                       {"grad_output": {"dist": "const", "value": 1}, "boxes": DOC_ROI},
                       expect={"grad_input": [[GRAD_ALIGNED]]}))
    adj = [[0.25 * FWD_UNALIGNED[i // 2][j // 2] for j in range(6)] for i in range(6)]
    out.append(roi_bwd("aclnn_doc_backward", [1, 1, 6, 6], 1, 3, 3, dict(DOC_ATTRS, aligned=False),
                       {"grad_output": {"data": [[FWD_UNALIGNED]]}, "boxes": DOC_ROI},
                       expect={"grad_input": [[adj]]}))
    return out + end_mode_published()


# ---- roi_end_mode (docs/ops/roi_align.md) --------------------------------------------------------
# torch_npu's test/contrib/test_roi_align.py runs ROIAlign(aligned=False / True), which passes
# roi_end_mode 0 / 3 to the Ascend kernel, on the document's problem, and expects exactly the
# vectors above (forward, and the gradient of output.sum()): published values for modes 0 and 3.
#
# Mode 1 by hand on the same problem (F[y][x] = 6y + x + 1, scale 0.25, 3x3 bins, 2x2 samples):
# start -2 * 0.25 = -0.5, end (22 + 1) * 0.25 = 5.75, extent 6.25, bin 25/12, sample step 25/24,
# so the six samples per axis are at (1, 51, 101, 151, 201, 251) / 48; the last is beyond W - 1 = 5
# and rule A reads it as 5. F is linear in x and y inside the plane, so a bin's value is
# 6 * mean(y) + mean(x) + 1 with the bin means below, and the gradient of the sum is
# wy[r] * wx[c] / 4 with w the summed linear-interpolation weights of the six samples per pixel:
# px0 47/48 (from 1/48), px1 1/48 + 45/48, px2 3/48 + 43/48, px3 5/48 + 41/48, px4 7/48 + 39/48,
# px5 9/48 + 1 (the clamped sample).
MODE1_BIN_MEAN = [(1 + 51) / 96, (101 + 151) / 96, (201 + 240) / 96]
MODE1_FWD = [[6 * my + mx + 1 for mx in MODE1_BIN_MEAN] for my in MODE1_BIN_MEAN]
MODE1_W = [47 / 48, 46 / 48, 46 / 48, 46 / 48, 46 / 48, 57 / 48]
MODE1_GRAD = [[wy * wx / 4 for wx in MODE1_W] for wy in MODE1_W]


def end_mode_published():
    out = []
    ones = {"dist": "const", "value": 1}
    for mode, fwd, grad in ((0, FWD_UNALIGNED, [[0.25] * 6] * 6), (3, FWD_ALIGNED, GRAD_ALIGNED),
                            (1, MODE1_FWD, MODE1_GRAD)):
        src = "handcheck" if mode == 1 else "torch_npu_test"
        out.append(roi_align("%s_fwd_end_mode%d" % (src, mode), [1, 1, 6, 6], 1,
                             dict(DOC_ATTRS, pooled_h=3, pooled_w=3, roi_end_mode=mode),
                             {"input": IOTA36, "rois": DOC_ROI}, expect={"output": [[fwd]]}))
        out.append(roi_bwd("%s_grad_end_mode%d" % (src, mode), [1, 1, 6, 6], 1, 3, 3,
                           dict(DOC_ATTRS, roi_end_mode=mode), {"grad_output": ones, "boxes": DOC_ROI},
                           expect={"grad_input": [[grad]]}))
    return out


# ---- random grids ------------------------------------------------------------------------------
def random_cases(repeat):
    out = []
    out += both("grid", [2, 8, 24, 24], 16, 3, 3, {"spatial_scale": 0.25},
                {"size": [4, 96]}, grid={"aligned": [True, False], "sampling_ratio": [0, 1, 2, 3]}, repeat=repeat)
    out += both("pooled", [2, 5, 20, 28], 12, 7, 7, {"spatial_scale": 0.5, "sampling_ratio": 2},
                {"size": [2, 60]}, grid={"aligned": [True, False], "shape.input": [[2, 5, 20, 28], [1, 17, 9, 33]]},
                repeat=repeat)
    out += both("rect_pooled", [1, 19, 16, 16], 10, 2, 5, {"spatial_scale": 1.0},
                {"size": [1, 24], "outside_frac": 0.2}, grid={"sampling_ratio": [0, 2]}, repeat=repeat)
    out += both("normal_values", [2, 33, 12, 12], 9, 4, 4, {"spatial_scale": 0.5, "sampling_ratio": 0},
                {"size": [2, 30]}, values={"dist": "normal", "mean": 3, "std": 10}, repeat=repeat)
    out += both("end_mode", [2, 6, 20, 20], 12, 3, 3, {"spatial_scale": 0.5}, {"size": [0.5, 40], "outside_frac": 0.2},
                grid={"roi_end_mode": [0, 1, 2, 3], "sampling_ratio": [0, 2]}, repeat=repeat)
    return out


# ---- edge cases ---------------------------------------------------------------------------------
def edge_cases():
    out = []
    base = {"spatial_scale": 0.25}
    # empty tensors: no rois, no channels, both
    out += both("empty_rois", [2, 4, 8, 8], 0, 2, 2, base)
    out += both("empty_channels", [2, 0, 8, 8], 5, 2, 2, base)
    out += both("empty_batch", [0, 3, 8, 8], 4, 2, 2, base)
    # images no roi touches (every roi on image 0 of 3)
    out += both("untouched_images", [3, 4, 10, 10], 6, 2, 2, base, {"data": [[0, 4, 4, 30, 30]] * 6})
    out += both("outside_partly", [1, 6, 16, 16], 24, 3, 3, base, {"outside_frac": 1.0, "size": [8, 64]},
                grid={"aligned": [True, False], "sampling_ratio": [0, 2]})
    out += both("outside_wholly", [1, 3, 8, 8], 4, 2, 2, base,
                {"data": [[0, -100, -100, -60, -60], [0, 200, 200, 300, 300], [0, -50, 10, -10, 20], [0, 10, 90, 20, 99]]},
                grid={"aligned": [True, False]})
    out += both("degenerate", [1, 4, 12, 12], 16, 3, 3, base, {"degenerate_frac": 1.0},
                grid={"aligned": [True, False], "sampling_ratio": [0, 2]})
    out += both("inverted", [1, 4, 12, 12], 16, 3, 3, base, {"inverted_frac": 1.0},
                grid={"aligned": [True, False], "sampling_ratio": [0, 2]})
    out += both("batch_out_of_range", [2, 3, 8, 8], 12, 2, 2, base, {"oob_batch_frac": 0.5})
    out += both("batch_fractional", [2, 3, 8, 8], 12, 2, 2, base, {"frac_batch_frac": 1.0})
    # floor, not truncation or rounding: -0.5 and -0.25 are skipped, 1.5 is image 1, 0.75 image 0
    out += both("batch_negative_fraction", [2, 3, 8, 8], 4, 2, 2, base,
                {"data": [[-0.5, 4, 4, 28, 28], [-0.25, 0, 8, 20, 30], [1.5, 4, 4, 30, 24], [0.75, 2, 2, 20, 20]]})
    # a batch index that is not finite skips its roi (ops.md 0): a kernel that reads image 0 for
    # it (a NaN through a cast, an "index < 0" test alone) passed every case before this one
    # (the generated zoo's roi_batch mutant, docs/zoo.md)
    out += both("batch_not_finite", [2, 3, 8, 8], 4, 2, 2, base,
                {"data": [["nan", 4, 4, 28, 28], ["inf", 0, 8, 20, 30], ["-inf", 4, 4, 30, 24], [1, 2, 2, 20, 20]]})
    # batch index exactly B (and -1) at the plane's top-left corner: a backward that takes b = B
    # as in range writes its gradient just past grad_input, inside the harness's guard bytes
    # (batch_out_of_range's rois land further in, beyond the guard, where only memory corruption
    # shows it: the generated zoo's "b <= B" mutant passed every case)
    out += both("batch_at_limits", [2, 3, 8, 8], 4, 2, 2, base,
                {"data": [[2, 0, 0, 8, 8], [-1, 24, 24, 32, 32], [2.5, 0, 0, 4, 4], [1, 0, 0, 8, 8]]})
    out += both("nan_in_roi", [1, 3, 8, 8], 12, 2, 2, base, {"nan_frac": 0.5},
                grid={"aligned": [True, False], "sampling_ratio": [0, 2]})
    out += both("tiny_scale", [1, 4, 8, 8], 8, 2, 2, {"spatial_scale": 1 / 64}, {"size": [16, 400]},
                grid={"sampling_ratio": [0, 2]})
    out += both("large_scale", [1, 4, 32, 32], 8, 3, 3, {"spatial_scale": 16.0}, {"size": [0.1, 1.5]},
                grid={"sampling_ratio": [0, 2]})
    out += both("odd_scale", [1, 4, 16, 16], 8, 3, 3, {"spatial_scale": 0.3}, {"size": [4, 40]},
                grid={"sampling_ratio": [0, 2]})
    out += both("pooled_1x1", [2, 5, 10, 10], 8, 1, 1, base, grid={"sampling_ratio": [0, 1, 4]})
    out += both("pooled_large", [1, 3, 16, 16], 3, 32, 32, base, {"size": [16, 64]}, grid={"sampling_ratio": [0, 2]})
    out += both("pooled_64x17", [1, 2, 20, 20], 2, 64, 17, {"spatial_scale": 1.0, "sampling_ratio": 1})
    # samples exactly on y = -1 and y = H (x = -1 and x = W): rule A's inclusive bounds
    out += both("samples_on_bounds", [1, 4, 8, 8], 6, 2, 2, {"spatial_scale": 1.0, "aligned": False},
                {"edge_frac": 1.0}, grid={"sampling_ratio": [1, 2, 3]})
    out += both("samples_on_bounds_aligned", [1, 4, 8, 8], 6, 2, 2, {"spatial_scale": 0.5, "aligned": True},
                {"edge_frac": 1.0}, grid={"sampling_ratio": [1, 2]})
    out += both("plane_1xW", [1, 3, 1, 9], 6, 2, 2, {"spatial_scale": 1.0}, {"size": [1, 12]},
                grid={"sampling_ratio": [0, 2]})
    out += both("plane_Hx1", [1, 3, 9, 1], 6, 2, 2, {"spatial_scale": 1.0}, {"size": [1, 12]},
                grid={"sampling_ratio": [0, 2]})
    out += both("plane_1x1", [1, 3, 1, 1], 6, 2, 2, {"spatial_scale": 1.0}, {"size": [0.5, 4]})
    # adaptive counts right at an integer (rh/PH = 2 exactly)
    out += both("adaptive_integral_bins", [1, 3, 16, 16], 3, 2, 2, {"spatial_scale": 1.0, "aligned": False},
                {"data": [[0, 2, 2, 6, 6], [0, 1, 3, 9, 7], [0, 0.5, 0.5, 4.5, 8.5]]})
    # roi_end_mode: rois below a feature pixel (the clamp of modes 0 and 1 acts, 2 and 3 have none),
    # degenerate rois, and mode 1's last samples exactly on the bounds
    out += both("end_mode_tiny", [1, 4, 10, 10], 12, 2, 2, base, {"size": [0.1, 3]},
                grid={"roi_end_mode": [0, 1, 2, 3], "sampling_ratio": [0, 2]})
    out += both("end_mode_degenerate", [1, 4, 12, 12], 12, 3, 3, base, {"degenerate_frac": 1.0},
                grid={"roi_end_mode": [0, 1, 2, 3], "sampling_ratio": [0, 2]})
    out += both("samples_on_bounds_end_mode1", [1, 4, 8, 8], 6, 2, 2, {"spatial_scale": 1.0, "roi_end_mode": 1},
                {"edge_frac": 1.0}, grid={"sampling_ratio": [1, 2, 3]})
    # large finite roi coordinates: each roi coordinate far out with chance 1/2 (either sign;
    # extents keep theirs), magnitudes 1e2 .. 1e9 log-uniform, or 2^23 .. 2^25 around 2^24. At
    # spatial_scale 1 a roi spanning the plane has samples ~1e8 apart with rounding boxes of hundreds
    # of pixels; at 2^-20 the huge image coordinates land on the plane. Fixed sample counts (adaptive
    # ones of such rois are refused: too many samples). Values 1..20: an output beyond [0, 20] is
    # wrong whatever the rounding.
    huge_v = {"dist": "uniform", "lo": 1, "hi": 20}
    out += both("huge_rois", [2, 3, 9, 7], 16, 2, 2, {}, {"huge_frac": 0.5, "huge": [1e2, 1e9]}, values=huge_v,
                grid={"aligned": [True, False], "sampling_ratio": [1, 2], "spatial_scale": [1.0, 2.0 ** -20]})
    out += both("rois_2p24", [2, 3, 9, 7], 16, 2, 2, {"sampling_ratio": 2},
                {"huge_frac": 0.5, "huge": [2.0 ** 23, 2.0 ** 25]}, values=huge_v,
                grid={"aligned": [True, False], "spatial_scale": [1.0, 2.0 ** -20]})
    # NaN and infinity in the feature map propagate exactly as in the reference
    out += both("nan_features", [1, 3, 8, 8], 6, 2, 2, base, values={"dist": "uniform", "nan_frac": 0.05})
    # a NaN at pixel (0, 0) only, rois half outside the plane: an out-of-window sample is
    # empty, so bins away from (0, 0) stay finite; torchvision's CPU forward adds 0 * F[0, 0] for it
    # (ops.md 10). The backward reads no feature: nothing to isolate there.
    out.append(roi_align("fwd_nan_origin", [2, 3, 8, 8], 12, dict(base, pooled_h=2, pooled_w=2),
                         {"input": {"dist": "uniform", "lo": 1, "hi": 20, "nan_pixels": [[0, 0]]},
                          "rois": {"outside_frac": 1.0, "size": [4, 24]}},
                         grid={"sampling_ratio": [0, 2], "aligned": [True, False]}))
    return out


# ---- cases the bugs found in the field would have failed -------------------------------------
def field_cases():
    # torch_npu's ROIAlign backward passes output_size swapped: right only for square outputs
    return both("field_pooled_3x5", [1, 3, 14, 18], 8, 3, 5, {"spatial_scale": 0.5}, {"size": [4, 30]},
                grid={"aligned": [True, False], "sampling_ratio": [0, 2]})


# ---- rejected inputs (exit 2 with the cause named) ---------------------------------------------
def invalid_cases():
    a = {"pooled_h": 2, "pooled_w": 2, "spatial_scale": 0.25}
    f = []
    f.append(roi_align("fwd_bad_rois_width", [1, 1, 4, 4], 3, a, expect_error="rois must have shape [K,5], got [3,4]"))
    f[-1]["shapes"]["rois"] = [3, 4]
    f.append(roi_align("fwd_bad_input_rank", [1, 4, 4], 3, a, expect_error="input must have shape [B,C,H,W]"))
    f.append(roi_align("fwd_bad_pooled", [1, 1, 4, 4], 1, dict(a, pooled_h=0), expect_error="pooled_h = 0"))
    f.append(roi_align("fwd_bad_scale_zero", [1, 1, 4, 4], 1, dict(a, spatial_scale=0), expect_error="spatial_scale"))
    f.append(roi_align("fwd_bad_scale_negative", [1, 1, 4, 4], 1, dict(a, spatial_scale=-1), expect_error="spatial_scale"))
    f.append(roi_align("fwd_bad_sampling_ratio", [1, 1, 4, 4], 1, dict(a, sampling_ratio=-1), expect_error="sampling_ratio = -1"))
    f.append(roi_align("fwd_bad_end_mode", [1, 1, 4, 4], 1, dict(a, roi_end_mode=4),
                       expect_error="roi_end_mode = 4: must be 0, 1, 2 or 3"))
    f.append(roi_align("fwd_end_mode_contradicts_aligned", [1, 1, 4, 4], 1, dict(a, roi_end_mode=2, aligned=False),
                       expect_error="roi_end_mode = 2 contradicts aligned = false"))
    b = {"spatial_scale": 0.25}
    f.append(roi_bwd("bwd_bad_boxes_width", [1, 1, 4, 4], 3, 2, 2, b, expect_error="boxes must have shape [K,5]"))
    f[-1]["shapes"]["boxes"] = [3, 6]
    f.append(roi_bwd("bwd_bad_k_mismatch", [1, 1, 4, 4], 3, 2, 2, b, expect_error="grad_output has 3 rois"))
    f[-1]["shapes"]["boxes"] = [2, 5]
    f.append(roi_bwd("bwd_bad_pooled_mismatch", [1, 1, 4, 4], 3, 2, 2, dict(b, pooled_width=3), expect_error="must equal grad_output dims"))
    f.append(roi_bwd("bwd_bad_channel_mismatch", [1, 1, 4, 4], 3, 2, 2, b, expect_error="input_shape[1]"))
    f[-1]["shapes"]["grad_output"] = [3, 2, 2, 2]
    f.append(roi_bwd("bwd_bad_input_shape_len", [1, 1, 4, 4], 3, 2, 2, b, expect_error="input_shape must have 4 entries"))
    f[-1]["attrs"]["input_shape"] = [1, 1, 4]
    f.append(roi_bwd("bwd_bad_input_shape_negative", [1, 1, 4, 4], 3, 2, 2, b, expect_error="input_shape[2] = -4"))
    f[-1]["attrs"]["input_shape"] = [1, 1, -4, 4]
    f.append(roi_bwd("bwd_bad_grad_rank", [1, 1, 4, 4], 3, 2, 2, b, expect_error="grad_output must have shape"))
    f[-1]["shapes"]["grad_output"] = [3, 1, 4]
    f.append(roi_bwd("bwd_bad_scale", [1, 1, 4, 4], 3, 2, 2, dict(b, spatial_scale=0), expect_error="spatial_scale"))
    f.append(roi_bwd("bwd_bad_sampling_ratio", [1, 1, 4, 4], 3, 2, 2, dict(b, sampling_ratio=-2), expect_error="sampling_ratio = -2"))
    f.append(roi_bwd("bwd_bad_end_mode", [1, 1, 4, 4], 3, 2, 2, dict(b, roi_end_mode=-2),
                     expect_error="roi_end_mode = -2: must be 0, 1, 2 or 3"))
    f.append(roi_bwd("bwd_end_mode_contradicts_aligned", [1, 1, 4, 4], 3, 2, 2, dict(b, roi_end_mode=1, aligned=True),
                     expect_error="roi_end_mode = 1 contradicts aligned = true"))
    return f


def conformance():
    return published() + random_cases(3) + edge_cases() + field_cases() + invalid_cases()


def smoke():
    return published() + random_cases(None) + edge_cases() + field_cases() + invalid_cases()


def golden():
    return [("published_roi_align.json", "published_roi_align",
             "torch_npu ROIAlign and aclnnRoiAlignV2Backward documentation examples (ops.md section 9); "
             "roi_end_mode 0 and 3: torch_npu test/contrib/test_roi_align.py; mode 1: hand-checked "
             "(tools/suites/roi_align.py)", published())]
