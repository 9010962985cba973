"""conform.hunt from Python (python/conform_hunt.py): a faulty numpy kernel is found through dir:
and a runner that calls back into this process, and shrunk to a case of a few elements."""
import os
import shutil
import sys
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from conform_hunt import hunt  # noqa: E402

CONFORM = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CONFORM", "build/conform"))


def zeros_grid_sampler(op, inputs, attrs):
    """A grid sampler that writes zeros: wrong wherever a sample reads a non-zero pixel."""
    x, g = inputs["input"], inputs["grid"]
    return {"output": np.zeros((x.shape[0], x.shape[1], g.shape[1], g.shape[2]), np.float32)}


class HuntFromPython(unittest.TestCase):
    def test_faulty_kernel_found_and_shrunk(self):
        found = hunt(zeros_grid_sampler, op="grid_sampler_2d", seconds=3, seed=1, conform=CONFORM, finite=True,
                     batch=16, extra=["--max-found", "1"])
        self.assertEqual(len(found), 1)
        sizes = {k: int(np.prod(v)) for k, v in found[0]["shapes"].items()}
        self.assertLessEqual(sizes["grid"], 2 * 2, sizes)   # a grid point or two
        self.assertLessEqual(sizes["input"], 4, sizes)      # a plane of a few pixels
        self.assertEqual(found[0]["found"]["status"], "failed")

    def test_the_package_hunts_a_kernel_on_the_exported_layout(self):
        """conform.hunt(kernel, op=..., seconds=...): the package's entry, kernel(inputs, attrs) as
        conform.raw takes it (a conform.raw too); the find is replayed failing by conform run"""
        import subprocess
        import tempfile
        import conform
        out = os.path.join(tempfile.mkdtemp(prefix="test_hunt_"), "FOUND.json")
        for kernel in (lambda inputs, attrs: zeros_grid_sampler(None, inputs, attrs),
                       conform.raw(lambda inputs, attrs: zeros_grid_sampler(None, inputs, attrs))):
            found = conform.hunt(kernel, op="grid_sampler_2d", seconds=3, seed=1, conform=CONFORM, finite=True,
                                 batch=16, out=out, extra=["--max-found", "1"])
            self.assertEqual(len(found), 1)
            self.assertEqual((found[0]["op"], found[0]["found"]["status"]), ("grid_sampler_2d", "failed"))
        rep = subprocess.run([CONFORM, "run", out, "--impl", "optimized", "--quiet", "--report-dir",
                              os.path.join(os.path.dirname(out), "rep")], stdout=subprocess.DEVNULL)
        self.assertEqual(rep.returncode, 0, "the optimized path passes the find")
        with self.assertRaises(conform.ConformError):
            conform.hunt(kernel, op="no_such_op", seconds=1, conform=CONFORM)
        shutil.rmtree(os.path.dirname(out))

    def test_waived_failures_are_not_returned(self):
        """waivers=: a waiver whose "when" holds on every finite grid waives every find: none is
        returned, and FOUND.json keeps them under "waived" with the waiver"""
        import json
        import tempfile
        work = tempfile.mkdtemp(prefix="test_hunt_")
        wf, out = os.path.join(work, "w.json"), os.path.join(work, "FOUND.json")
        with open(wf, "w") as f:
            json.dump({"waivers": [{"pattern": "*/none", "reason": "every finite grid", "link": "docs/hunt.md",
                                    "when": {"ops": ["grid_sampler_2d"], "input": "grid", "in": [-1e38, 1e38]}}]}, f)
        found = hunt(zeros_grid_sampler, op="grid_sampler_2d", seconds=3, seed=1, conform=CONFORM, finite=True,
                     batch=16, out=out, waivers=wf)
        self.assertEqual(found, [])
        with open(out) as f:
            d = json.load(f)
        self.assertEqual(d["cases"], [])
        self.assertGreaterEqual(len(d["waived"]), 1)
        self.assertEqual(d["waived"][0]["waiver"]["reason"], "every finite grid")

    def test_a_round_records_what_ran_in_runner_json(self):
        """run_round writes the round's runner.json (docs/runners.md): the callable, each case it
        wrote; a case it raised on is neither written nor declared skipped (a find, not a decline)"""
        import json
        import subprocess
        import tempfile
        from conform_hunt import run_round
        root = os.path.join(tempfile.mkdtemp(prefix="test_hunt_"), "exp")
        subprocess.run([CONFORM, "export", "cases/smoke.json", "--op", "grid_sampler_2d", "--out", root], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(root, "manifest.json")) as f:
            cases = [c for c in json.load(f)["cases"] if not ({"expect_error", "not_applicable", "invalid"} & set(c))]
        ids = [c["id"] for c in cases]
        bad_grid = np.load(os.path.join(root, cases[0]["inputs"]["grid"]))

        def sometimes(op, inputs, attrs):
            if np.array_equal(inputs["grid"], bad_grid, equal_nan=True):
                raise ValueError("not this one")
            return zeros_grid_sampler(op, inputs, attrs)
        run_round(sometimes, root)
        with open(os.path.join(root, "runner.json")) as f:
            rec = json.load(f)
        self.assertEqual(rec["schema"], "conform-runner")
        self.assertIn("sometimes", rec["ops"]["grid_sampler_2d"]["call"])
        self.assertNotIn(ids[0], rec["cases"])
        written = [i for i in ids if rec["cases"].get(i) == {"status": "written"}]
        self.assertGreater(len(written), 0)
        self.assertEqual(len(written) + sum(1 for i in ids if i not in rec["cases"]), len(ids))
        shutil.rmtree(os.path.dirname(root))

    def test_bad_usage_raises(self):
        with self.assertRaises(RuntimeError):
            hunt(zeros_grid_sampler, op="no_such_op", seconds=1, conform=CONFORM)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
