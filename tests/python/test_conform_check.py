"""Tests of python/conform_check.py (numpy only; run by `make test`, or by pytest).

The "device" here is conform's own optimized float32 path (`conform eval --impl optimized`): its
outputs must pass, rounded to float16 / bfloat16 they must pass at those dtypes, and one perturbed
element must fail with the numbers and a repro command that reproduces the failure."""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
import conform_check  # noqa: E402

CONFORM = os.environ.get("CONFORM") or os.path.join(ROOT, "build", "conform")

ROI_ATTRS = {"pooled_h": 3, "pooled_w": 2, "spatial_scale": 0.5, "sampling_ratio": 0, "aligned": True}
GRID_ATTRS = {"interpolation_mode": 0, "padding_mode": 2, "align_corners": False, "output_mask": [1, 1]}


def optimized_outputs(op, attrs, inputs):
    """Outputs of conform's optimized float32 path, through `conform eval`."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [CONFORM, "eval", op, "--impl", "optimized", "--output-dir", d]
        cmd += sum((["--attr", "%s=%s" % (k, conform_check.attr_text(v))] for k, v in attrs.items()), [])
        for name, a in inputs.items():
            np.save(os.path.join(d, "in_" + name + ".npy"), a)
            cmd += ["--input", "%s=%s" % (name, os.path.join(d, "in_" + name + ".npy"))]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return {f[:-4]: np.load(os.path.join(d, f)) for f in os.listdir(d)
                if f.endswith(".npy") and not f.startswith("in_")}


def roi_problem():
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (2, 3, 16, 16)).astype(np.float32)
    rois = np.array([[0, 1, 1, 20, 20], [1, 3, 2, 30, 10], [0, -5, -5, 40, 40]], np.float32)
    return {"input": x, "rois": rois}


def grid_problem():
    rng = np.random.default_rng(6)
    return {"grad_output": rng.uniform(-1, 1, (2, 3, 5, 6)).astype(np.float32),
            "input": rng.uniform(-1, 1, (2, 3, 8, 9)).astype(np.float32),
            "grid": rng.uniform(-1.2, 1.2, (2, 5, 6, 2)).astype(np.float32)}


class ConformCheckTest(unittest.TestCase):
    def setUp(self):
        # a failing check keeps its folder for the repro command: under this one, removed after
        self.work = tempfile.TemporaryDirectory(prefix="conform_pytest_")
        self.kw = dict(conform=CONFORM, workdir=self.work.name)

    def tearDown(self):
        self.work.cleanup()

    def test_correct_outputs_pass_with_numbers(self):
        inputs = roi_problem()
        v = conform_check.check("roi_align", ROI_ATTRS, inputs, optimized_outputs("roi_align", ROI_ATTRS, inputs),
                                **self.kw)
        self.assertTrue(v.passed)
        out = v.outputs["output"]
        self.assertEqual(out["shape"], [3, 3, 3, 2])
        self.assertLess(out["max_err_over_tol"], 1.0)
        self.assertIsInstance(out["max_abs_err"], float)

    def test_two_outputs_and_list_attribute(self):
        inputs = grid_problem()
        got = optimized_outputs("grid_sampler_2d_backward", GRID_ATTRS, inputs)
        v = conform_check.check("grid_sampler_2d_backward", GRID_ATTRS, inputs, got, **self.kw)
        self.assertEqual(sorted(v.outputs), ["grid_grad", "input_grad"])

    def test_perturbed_output_fails_with_repro(self):
        inputs = roi_problem()
        got = optimized_outputs("roi_align", ROI_ATTRS, inputs)["output"]
        got.flat[7] += 1e-3
        with self.assertRaises(AssertionError) as ctx:
            conform_check.check("roi_align", ROI_ATTRS, inputs, {"output": got}, **self.kw)
        text = str(ctx.exception)
        self.assertIn("failed", text)
        self.assertIn("1 over tolerance", text)
        repro = text.split("repro: ", 1)[1].split()
        self.assertEqual(subprocess.run(repro, stdout=subprocess.DEVNULL).returncode, 1)

    def test_float16_and_bfloat16_roundings_pass_at_their_dtype(self):
        inputs = roi_problem()
        out = optimized_outputs("roi_align", ROI_ATTRS, inputs)["output"]
        self.assertTrue(conform_check.check("roi_align", ROI_ATTRS, inputs, {"output": out.astype(np.float16)},
                                            dtype="float16", **self.kw).passed)
        self.assertTrue(conform_check.check("roi_align", ROI_ATTRS, inputs, {"output": out},
                                            dtype="bfloat16", **self.kw).passed)
        # float16 rounding is far beyond the float32 bounds
        v = conform_check.judge("roi_align", ROI_ATTRS, inputs, {"output": out.astype(np.float16).astype(np.float32)},
                                **self.kw)
        self.assertEqual(v.status, "failed")

    def test_bfloat16_rounding_is_to_nearest_even(self):
        a = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, -np.inf, 3.4e38], np.float32)   # 3.4e38: above the largest bfloat16
        bits = conform_check.round_to_bfloat16_bits(a)
        back = (bits.astype(np.uint32) << 16).view(np.float32)
        self.assertEqual(back.tolist(), [1.0, 1.0, 1 + 2 ** -6, 1 + 2 ** -7, -np.inf, np.inf])
        self.assertTrue(np.isnan((conform_check.round_to_bfloat16_bits(np.array([np.nan], np.float32))
                                  .astype(np.uint32) << 16).view(np.float32)[0]))

    def test_all_zero_output_of_an_all_ambiguous_roi_is_named_with_numbers_that_agree(self):
        # a new user's first try: a roi with integer bin sizes (adaptive counts within rounding of
        # an integer: every element ambiguous) and an all-zero output. The all-zero rule fires
        # whatever the ambiguity, and the worst err/tol counts the same elements as "over"
        rng = np.random.default_rng(1)
        inputs = {"input": rng.uniform(1, 2, (1, 2, 8, 8)).astype(np.float32),
                  "rois": np.array([[0, 0, 0, 4, 4]], np.float32)}
        attrs = {"pooled_h": 2, "pooled_w": 2}
        v = conform_check.judge("roi_align", attrs, inputs, {"output": np.zeros((1, 2, 2, 2), np.float32)}, **self.kw)
        self.assertFalse(v.passed)
        self.assertIn("all zeros where the reference is not", v.message)
        out = v.outputs["output"]
        self.assertEqual(out["n_ambiguous"], 8)
        self.assertEqual(out["n_over_tol"], 8)
        self.assertTrue(out["all_zero"])
        self.assertGreater(float(out["max_err_over_tol"]), 1.0)
        self.assertIn("8 over tolerance", v.summary())

    def test_a_reference_of_exactly_zero_reads_as_such(self):
        # every sample of the roi lies off the plane: nothing is summed into its elements, 0 is the
        # only legal value, and a 0.5 there is "ref exactly 0, got 0.5" with err/tol inf everywhere
        rng = np.random.default_rng(2)
        inputs = {"input": rng.uniform(1, 2, (1, 1, 8, 8)).astype(np.float32),
                  "rois": np.array([[0, 100, 100, 104, 104]], np.float32)}
        attrs = {"pooled_h": 2, "pooled_w": 2, "sampling_ratio": 2}
        got = np.zeros((1, 1, 2, 2), np.float32)
        got.flat[3] = 0.5
        v = conform_check.judge("roi_align", attrs, inputs, {"output": got}, **self.kw)
        self.assertFalse(v.passed)
        self.assertIn("ref exactly 0, got 0.5", v.message)
        out = v.outputs["output"]
        self.assertEqual(float(out["max_err_over_tol"]), float("inf"))
        self.assertTrue(out["worst"]["ref_exactly_zero"])
        self.assertIn("worst err/tol inf", v.summary())

    def test_bad_usage_raises_value_error_naming_the_problem(self):
        inputs = roi_problem()
        with self.assertRaises(ValueError) as ctx:
            conform_check.judge("roi_align", dict(ROI_ATTRS, pooled_h=0), inputs,
                                {"output": np.zeros((3, 3, 0, 2), np.float32)}, **self.kw)
        self.assertIn("pooled_h", str(ctx.exception))
        with self.assertRaises(FileNotFoundError):
            conform_check.judge("roi_align", ROI_ATTRS, inputs, {}, conform="/nonexistent/conform")


if __name__ == "__main__":
    unittest.main(verbosity=1)
