"""Suite cases of the grid sampler family: grid_sampler_2d and grid_sampler_2d_backward (spec 7).

conformance(), smoke() and golden() as in tools/suites/roi_align.py.
"""

MODES = [0, 1, 2]          # bilinear, nearest, bicubic
PADS = [0, 1, 2]           # zeros, border, reflection


def fwd(name, shape, ho, wo, attrs, gen=None, grid=None, repeat=None, **extra):
    c = {"name": "grid_" + name, "op": "grid_sampler_2d",
         "shapes": {"input": shape, "grid": [shape[0], ho, wo, 2]}, "attrs": attrs}
    if gen: c["gen"] = gen
    if grid: c["grid"] = grid
    if repeat: c["repeat"] = repeat
    c.update(extra)
    return c


def bwd(name, shape, ho, wo, attrs, gen=None, grid=None, repeat=None, **extra):
    c = {"name": "grid_" + name, "op": "grid_sampler_2d_backward",
         "shapes": {"grad_output": [shape[0], shape[1], ho, wo], "input": shape, "grid": [shape[0], ho, wo, 2]},
         "attrs": attrs}
    if gen: c["gen"] = gen
    if grid: c["grid"] = grid
    if repeat: c["repeat"] = repeat
    c.update(extra)
    return c


def both(name, shape, ho, wo, attrs, grid_gen=None, values=None, grid=None, repeat=None, masks=False):
    """The same problem for the forward and the backward (masks: every output_mask too)."""
    g_f = {"grid": grid_gen or {}}
    g_b = {"grid": grid_gen or {}}
    if values:
        g_f["input"] = values
        g_b["input"] = values
    bgrid = dict(grid or {})
    if masks:
        bgrid["output_mask"] = [[1, 1], [1, 0], [0, 1], [0, 0]]
    return [fwd("fwd_" + name, shape, ho, wo, attrs, g_f, grid, repeat),
            bwd("bwd_" + name, shape, ho, wo, attrs, g_b, bgrid or None, repeat)]


ALL_MODES = {"interpolation_mode": MODES, "padding_mode": PADS, "align_corners": [False, True]}

# ---- hand-checkable vectors -----------------------------------------------------------------------
# input 1x1x2x2 = [[1, 2], [3, 4]].
#  * grid (0, 0): the centre of the image in both conventions: bilinear 2.5 (mean of the four).
#  * align_corners=true, grid (-1,-1), (1,-1), (-1,1), (1,1): the four pixel centres: 1, 2, 3, 4.
#  * align_corners=false, zeros, grid (-1,-1): the image's outer corner, i = -0.5: only pixel (0,0)
#    with weight 0.25: 0.25; border: the corner pixel, 1.
#  * nearest, align_corners=true, x = 0 -> i = 0.5 (a tie): rint -> 0 (half to even), y = 1 -> row 1: 3.
# Backward with grad_output 1, align_corners=true, bilinear zeros, grid (0, 0): every pixel gets 0.25;
# grid_grad = (S-1)/2 * d/di = 0.5 * ((2-1) + (4-3))/2 = 0.5 in x and 0.5 * ((3-1) + (4-2))/2 = 1 in y.
IMG = {"data": [[[[1, 2], [3, 4]]]]}


def published():
    out = []
    out.append(fwd("hand_centre_ac", [1, 1, 2, 2], 1, 1, {"align_corners": True},
                   {"input": IMG, "grid": {"data": [0, 0]}}, expect={"output": [[[[2.5]]]]}))
    out.append(fwd("hand_centre", [1, 1, 2, 2], 1, 1, {"align_corners": False},
                   {"input": IMG, "grid": {"data": [0, 0]}}, expect={"output": [[[[2.5]]]]}))
    out.append(fwd("hand_corners_ac", [1, 1, 2, 2], 2, 2, {"align_corners": True},
                   {"input": IMG, "grid": {"data": [-1, -1, 1, -1, -1, 1, 1, 1]}},
                   expect={"output": [[[[1, 2], [3, 4]]]]}))
    out.append(fwd("hand_outer_corner_zeros", [1, 1, 2, 2], 1, 1, {"align_corners": False, "padding_mode": 0},
                   {"input": IMG, "grid": {"data": [-1, -1]}}, expect={"output": [[[[0.25]]]]}))
    out.append(fwd("hand_outer_corner_border", [1, 1, 2, 2], 1, 1, {"align_corners": False, "padding_mode": 1},
                   {"input": IMG, "grid": {"data": [-1, -1]}}, expect={"output": [[[[1]]]]}))
    out.append(fwd("hand_nearest_tie", [1, 1, 2, 2], 1, 1, {"align_corners": True, "interpolation_mode": 1},
                   {"input": IMG, "grid": {"data": [0, 1]}}, expect={"output": [[[[3]]]]}))
    out.append(bwd("hand_backward_centre", [1, 1, 2, 2], 1, 1, {"align_corners": True},
                   {"input": IMG, "grid": {"data": [0, 0]}, "grad_output": {"dist": "const", "value": 1}},
                   expect={"input_grad": [[[[0.25, 0.25], [0.25, 0.25]]]], "grid_grad": [[[[0.5, 1.0]]]]}))
    return out


# ---- random grids ---------------------------------------------------------------------------------
def random_cases(repeat):
    out = []
    # every mode, grids in [-2, 2] mixing in-range and out-of-range points, a fifth special points
    out += both("modes", [2, 5, 9, 11], 6, 7, {}, {"lo": -2, "hi": 2, "special_frac": 0.2},
                grid=ALL_MODES, repeat=repeat)
    out += both("masks", [1, 4, 8, 6], 5, 5, {}, {"lo": -2, "hi": 2, "special_frac": 0.1},
                grid={"interpolation_mode": MODES, "padding_mode": [0, 2]}, repeat=repeat, masks=True)
    # channel counts around the vector widths and a plane split in two channel chunks
    for c, hw in ((1, [10, 12]), (16, [10, 12]), (17, [10, 12]), (40, [9, 5])):
        out += both("channels_%d" % c, [2, c] + hw, 7, 9, {"padding_mode": 1}, {"lo": -1.3, "hi": 1.3},
                    grid={"interpolation_mode": MODES}, repeat=repeat)
    out += both("chunked", [1, 40, 128, 128], 8, 8, {}, {"lo": -1.1, "hi": 1.1},
                grid={"interpolation_mode": MODES}, repeat=repeat)
    # the bilinear backward's channel blocks: 64 lanes with a 6-channel last block, 11 rows (not
    # a whole number of its 4-row batches), and 32-lane blocks with a half-empty last one
    out += both("blocks_n8_c70", [8, 70, 11, 9], 10, 7, {}, {"lo": -1.2, "hi": 1.2},
                grid={"padding_mode": [0, 1]}, repeat=repeat)
    out += both("blocks_n2_c80", [2, 80, 13, 10], 6, 9, {"padding_mode": 2}, {"lo": -1.5, "hi": 1.5},
                repeat=repeat)
    out += both("normal_values", [1, 8, 12, 12], 6, 6, {"padding_mode": 2}, {"lo": -3, "hi": 3},
                values={"dist": "normal", "mean": 3, "std": 10}, grid={"interpolation_mode": MODES},
                repeat=repeat)
    return out


# ---- edge cases ----------------------------------------------------------------------------------
def edge_cases():
    out = []
    # every coordinate special: -1, 1, 0, border pixel centres, pixel centres, half-integers (ties)
    out += both("special_points", [1, 3, 6, 8], 6, 6, {}, {"special_frac": 1.0}, grid=ALL_MODES)
    out += both("special_points_pow2", [1, 3, 8, 4], 6, 6, {}, {"special_frac": 1.0}, grid=ALL_MODES)
    # nearest on planes of 2^k + 1 pixels: with align_corners every half-integer point 2i/(S-1) - 1
    # is a short dyadic grid value, so its tie is exact in every float32 form and must round half to
    # even (no ambiguity); without, the ties of -1 and 1 are (special_points_pow2 has the others)
    out += both("special_points_exact_ties", [1, 3, 9, 5], 6, 6, {}, {"special_frac": 1.0},
                grid={"interpolation_mode": [1], "padding_mode": [0, 1], "align_corners": [False, True]})
    # large finite coordinates: |pixel coordinate| from 1e2 to 1e9 (a plane of 8 pixels
    # maps grid g to about 4 g) and 2^23 .. 2^26 around 2^24, where a float32 coordinate has no
    # fraction left; a quarter special points so one axis often stays on the plane. Values 1..20:
    # border and reflection must give values of that range, a kernel that weights its taps with
    # unclipped float32 distances does not
    big = {"dist": "log_uniform", "lo": 25, "hi": 2.5e8, "special_frac": 0.25}
    out += both("huge_coords", [1, 2, 7, 8], 6, 6, {}, big, values={"dist": "uniform", "lo": 1, "hi": 20},
                grid=ALL_MODES)
    near24 = {"dist": "log_uniform", "lo": 2.0 ** 21, "hi": 2.0 ** 24, "special_frac": 0.25}
    out += both("coords_2p24", [1, 2, 8, 8], 6, 6, {}, near24, values={"dist": "uniform", "lo": 1, "hi": 20},
                grid=ALL_MODES)
    # NaN and infinite grid entries: the -100 rule of spec 7.2 (nothing sampled, gradient 0)
    out += both("nonfinite_grid", [1, 3, 6, 7], 5, 5, {}, {"lo": -1.5, "hi": 1.5, "nan_frac": 0.15, "inf_frac": 0.15},
                grid=ALL_MODES)
    # the same on a batch of 2: the zoo's bicubic kernel zeroes a non-finite point's outputs itself,
    # and a wrong stride there (C +- 1) only shows beyond image 0 (a generated zoo mutant passed)
    out += both("nonfinite_grid_batch2", [2, 3, 6, 7], 5, 5, {}, {"lo": -1.5, "hi": 1.5, "nan_frac": 0.15, "inf_frac": 0.15},
                grid={"interpolation_mode": [2]})
    # H or W of 1
    for tag, shape in (("h1", [1, 3, 1, 9]), ("w1", [1, 3, 9, 1]), ("h1w1", [2, 3, 1, 1])):
        out += both("plane_" + tag, shape, 4, 5, {}, {"lo": -2, "hi": 2, "special_frac": 0.2}, grid=ALL_MODES)
    # empty N, C, Ho, Wo
    out += both("empty_batch", [0, 3, 5, 5], 3, 3, {})
    out += both("empty_channels", [2, 0, 5, 5], 3, 3, {})
    out += both("empty_grid_rows", [2, 3, 5, 5], 0, 4, {})
    out += both("empty_grid_cols", [2, 3, 5, 5], 4, 0, {})
    # NaN in the input propagates where it is sampled
    out += both("nan_input", [1, 3, 6, 6], 4, 4, {}, values={"dist": "uniform", "nan_frac": 0.05},
                grid={"interpolation_mode": MODES})
    # bicubic just beyond the plane's edges (|grid| 1.02 .. 1.6) with border and reflection: each of
    # the four taps is padded on its own (spec 7.5), the coordinate never clamped first; ONNX's
    # reference GridSample clamps (or reflects) the coordinate before taking its taps (ops.md 10)
    out += both("bicubic_beyond_edge", [1, 2, 5, 6], 6, 6, {}, {"dist": "log_uniform", "lo": 1.02, "hi": 1.6},
                values={"dist": "uniform", "lo": -2, "hi": 2},
                grid={"interpolation_mode": [2], "padding_mode": [1, 2], "align_corners": [False, True]})
    return out


# ---- rejected inputs (exit 2 with the cause named) --------------------------------------------------
def invalid_cases():
    f = []
    f.append(fwd("bad_input_rank", [1, 2, 4], 3, 3, {}, expect_error="input [1,2,4]: must have rank 4"))
    f[-1]["shapes"]["grid"] = [1, 3, 3, 2]
    f.append(fwd("bad_grid_rank", [1, 2, 4, 4], 3, 3, {}, expect_error="grid [1,9,2]: must have rank 4"))
    f[-1]["shapes"]["grid"] = [1, 9, 2]
    f.append(fwd("bad_grid_last", [1, 2, 4, 4], 3, 3, {}, expect_error="last dim must be 2"))
    f[-1]["shapes"]["grid"] = [1, 3, 3, 3]
    f.append(fwd("bad_n_mismatch", [2, 2, 4, 4], 3, 3, {}, expect_error="N = 1 must equal input's N = 2"))
    f[-1]["shapes"]["grid"] = [1, 3, 3, 2]
    f.append(fwd("bad_h_zero", [1, 2, 0, 4], 3, 3, {}, expect_error="H and W must be > 0"))
    f.append(fwd("bad_w_zero", [1, 2, 4, 0], 3, 3, {}, expect_error="H and W must be > 0"))
    f.append(fwd("bad_interpolation", [1, 2, 4, 4], 3, 3, {"interpolation_mode": 3},
                 expect_error="interpolation_mode 3: must be 0"))
    f.append(fwd("bad_padding", [1, 2, 4, 4], 3, 3, {"padding_mode": -1}, expect_error="padding_mode -1: must be 0"))
    f.append(bwd("bad_grad_rank", [1, 2, 4, 4], 3, 3, {}, expect_error="grad_output [1,2,9]: must have rank 4"))
    f[-1]["shapes"]["grad_output"] = [1, 2, 9]
    f.append(bwd("bad_grad_n", [1, 2, 4, 4], 3, 3, {}, expect_error="grad_output [2,2,3,3]: N = 2 must equal"))
    f[-1]["shapes"]["grad_output"] = [2, 2, 3, 3]
    f.append(bwd("bad_grad_c", [1, 2, 4, 4], 3, 3, {}, expect_error="grad_output [1,3,3,3]: C = 3 must equal"))
    f[-1]["shapes"]["grad_output"] = [1, 3, 3, 3]
    f.append(bwd("bad_grid_vs_grad", [1, 2, 4, 4], 3, 3, {}, expect_error="dims 1, 2 must equal grad_output"))
    f[-1]["shapes"]["grid"] = [1, 3, 4, 2]
    f.append(bwd("bad_bwd_grid_last", [1, 2, 4, 4], 3, 3, {}, expect_error="last dim must be 2"))
    f[-1]["shapes"]["grid"] = [1, 3, 3, 1]
    f.append(bwd("bad_bwd_w_zero", [1, 2, 4, 0], 3, 3, {}, expect_error="H and W must be > 0"))
    f.append(bwd("bad_bwd_interpolation", [1, 2, 4, 4], 3, 3, {"interpolation_mode": -1},
                 expect_error="interpolation_mode -1"))
    f.append(bwd("bad_bwd_padding", [1, 2, 4, 4], 3, 3, {"padding_mode": 5}, expect_error="padding_mode 5"))
    f.append(bwd("bad_mask_len", [1, 2, 4, 4], 3, 3, {"output_mask": [1, 1, 1]},
                 expect_error="output_mask has 3 entries: must have 2"))
    f.append(bwd("bad_mask_value", [1, 2, 4, 4], 3, 3, {"output_mask": [1, 2]},
                 expect_error="output_mask[1] = 2: must be 0 or 1"))
    return f


def conformance():
    return published() + random_cases(2) + edge_cases() + invalid_cases()


def smoke():
    return published() + random_cases(None) + edge_cases() + invalid_cases()


def golden():
    return [("handcheck_grid_sampler.json", "handcheck_grid_sampler",
             "hand-checkable grid_sampler_2d vectors (tools/suites/grid_sampler.py explains each)", published())]
