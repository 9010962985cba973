"""The conform Python package as a user has it: installed by `make install PREFIX=...`, used from
another directory with PREFIX/bin/python3, no PYTHONPATH, no CONFORM, a fresh cache.

  (a) the package: a numpy roi_align (tests/python/np_roi_align.py, on the exported layout) over
      the smoke suite's roi_align cases passes every case; with one planted bug (the window test
      exclusive at the far edge: y < H for y <= H) exactly the cases whose samples land on the
      window's far line fail, named by id: the fwd_samples_on_bounds cases at sampling ratios 1
      and 2 (their rois put samples on y = H and x = W; at ratio 3 the samples miss the line).
      A kernel that kills its process on one case and hangs on another fails those two only.
  (b) the same through pytest (@conform.parametrize, case.check) in a subprocess: the outcome
      counts, the failing test ids, and the session's one conform report (html, junit, json).
  (c) with torch: a 10-line file judging torchvision's roi_align and F.grid_sample over a suite
      at float32 (the smoke suite here; --full: the default suite, and the README's CPU device
      example through conform-torch) with cases/waivers_pytorch_cpu.json: 0 failed, exit 0.
      Skipped, saying so, without torch and torchvision.

usage: test_conform_package.py PREFIX [--full]     (needs numpy for PREFIX/bin/python3)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PREFIX = os.path.abspath(sys.argv[1])
FULL = "--full" in sys.argv[2:]
PY = os.path.join(PREFIX, "bin", "python3")
BOUNDS = "smoke/fwd_samples_on_bounds"   # ids of the cases the planted bug must fail (ratios 1 and 2)


def run(work, argv, env, timeout=600):
    t = time.time()
    p = subprocess.run(argv, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=timeout)
    print("+ %s  (exit %d, %.1f s)" % (" ".join(argv), p.returncode, time.time() - t), flush=True)
    return p


PACKAGE_SCRIPT = r'''
import json, os, signal, sys, time
import conform, np_roi_align as K

s = conform.suite("smoke", op="roi_align")
good = s.run({"roi_align": conform.raw(K.roi_align)})
v = s.judge()
K.BUG = True
s2 = conform.suite("smoke", op="roi_align")      # the cached export, a fresh run directory
s2.run({"roi_align": conform.raw(K.roi_align)})
b = s2.judge()

def flaky(inputs, attrs):                         # kills its process once, then hangs once
    if not os.path.exists("crashed"):
        open("crashed", "w").close(); os.kill(os.getpid(), signal.SIGSEGV)
    if not os.path.exists("hung"):
        open("hung", "w").close(); time.sleep(600)
    K.BUG = False
    return K.roi_align(inputs, attrs)
s3 = conform.suite("smoke", op="roi_align", filter="smoke/fwd_s*")
s3.run({"roi_align": conform.raw(flaky)}, timeout=2)
f = s3.judge()
print(json.dumps({"good": [v.passed, v.counts, len(s), [c.id for c in s.cases if c.skip]],
                  "bad": [b.passed, b.counts, [r.id for r in b.failed], [r.status for r in b.failed],
                          all(r.repro and r.message for r in b.failed)],
                  "flaky": [f.passed, f.counts, {r.id: r.message for r in f.failed}, len(s3)],
                  "reports": [os.path.exists(p) for p in b.reports.values()]}))
'''

PYTEST_FILE = r'''
import conform
import np_roi_align as K


@conform.parametrize("roi_align", suite="smoke", filter="smoke/fwd_s*")
def test_roi_align(case):
    K.BUG = bool(int(__import__("os").environ.get("PLANT_BUG", "0")))
    case.check(K.roi_align(case.inputs, case.attrs))
'''

TORCH_FILE = r'''
import sys
import conform
import torch.nn.functional as F
import torchvision

suite = conform.suite(sys.argv[1], dtype="float32")                  # the suite, exported once
suite.run({"roi_align": torchvision.ops.roi_align,                    # torchvision's signature
           "grid_sampler_2d": F.grid_sample})                        # the other ops: not implemented
verdict = suite.judge(waivers="cases/waivers_pytorch_cpu.json")      # PyTorch CPU's documented divergences
print(verdict)
assert verdict.passed and verdict.counts["failed"] == 0 and verdict.counts["passed"] > 0, verdict
'''


def package(work, env):
    with open(os.path.join(work, "judge_numpy.py"), "w") as f:
        f.write(PACKAGE_SCRIPT)
    p = run(work, [PY, "judge_numpy.py"], env)
    assert p.returncode == 0, p.stdout
    r = json.loads(p.stdout.strip().splitlines()[-1])
    passed, counts, n, skipped = r["good"]
    assert passed and counts["failed"] == 0 and counts["missing"] == 0 and counts["passed"] == n - counts["not_applicable"], r["good"]
    passed, counts, ids, statuses, described = r["bad"]
    want = sorted(i for i in ids if i.startswith(BOUNDS))
    assert not passed and ids and set(statuses) == {"failed"} and described, r["bad"]
    assert sorted(ids) == want and all(re.search(r"/sampling_ratio=[12]$", i) for i in ids), \
        "the planted bug must fail the samples-on-bounds cases at ratios 1 and 2 only: %s" % ids
    assert len(ids) == 6 and counts["passed"] == n - 6 - counts["not_applicable"], r["bad"]
    passed, counts, failed, n3 = r["flaky"]
    reasons = sorted(failed.values())
    assert not passed and counts["missing"] == 2 and counts["passed"] == n3 - 2, r["flaky"]
    assert any("signal 11" in m for m in reasons) and any("timeout" in m for m in reasons), reasons
    assert all(r["reports"]), r["reports"]
    return "numpy kernel %d cases passed, planted bug %d failed by id, a crash and a hang 1 case each" % (n, len(ids))


def pytest_runs(work, env):
    if run(work, [PY, "-c", "import pytest"], env).returncode:
        print("SKIPPED pytest integration: no pytest for %s (apt-get install python3-pytest)" % PY)
        return "pytest skipped (no pytest)"
    with open(os.path.join(work, "test_kernel.py"), "w") as f:
        f.write(PYTEST_FILE)
    base = [PY, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", "test_kernel.py"]
    p = run(work, base + ["--conform-report", "good-report"], env)
    assert p.returncode == 0 and re.search(r"\b8 passed\b", p.stdout), p.stdout
    assert "conform report of 8 checked cases" in p.stdout and "PASS" in p.stdout, p.stdout
    p = run(work, base + ["--conform-report", "bad-report"], dict(env, PLANT_BUG="1"))
    failed = sorted(re.findall(r"^FAILED test_kernel.py::test_roi_align\[(.*?)\]", p.stdout, re.M))
    assert p.returncode == 1 and re.search(r"\b6 failed, 2 passed\b", p.stdout), p.stdout
    assert len(failed) == 6 and all(i.startswith(BOUNDS) and re.search(r"sampling_ratio=[12]$", i) for i in failed), failed
    assert "repro: " in p.stdout and "elements beyond tolerance" in p.stdout, p.stdout
    with open(os.path.join(work, "bad-report", "report.json")) as f:
        rep = json.load(f)
    assert sorted(c["id"] for c in rep["cases"] if c["status"] == "failed") == failed, "the session report disagrees"
    assert len(rep["cases"]) == 8 and all(os.path.exists(os.path.join(work, "bad-report", n))
                                         for n in ("report.html", "junit.xml", "report.md")), rep["summary"]
    p = run(work, base + ["-k", "end_mode1", "--conform-report", "k-report"], dict(env, PLANT_BUG="1"))
    assert p.returncode == 1 and re.search(r"\b2 failed, 1 passed, 5 deselected\b", p.stdout), p.stdout
    with open(os.path.join(work, "k-report", "report.json")) as f:
        assert len(json.load(f)["cases"]) == 3, "the session report holds the cases the session checked"
    return "pytest 8 passed, bug 6 failed, -k by id, one session report"


def torch_runs(work, env):
    if run(work, [PY, "-c", "import torch, torchvision"], env).returncode:
        print("SKIPPED torch part: no torch and torchvision for %s" % PY)
        return "torch skipped (no torch/torchvision)"
    with open(os.path.join(work, "judge_torch.py"), "w") as f:
        f.write(TORCH_FILE)
    out = []
    for suite in (["smoke", "conformance"] if FULL else ["smoke"]):
        p = run(work, [PY, "judge_torch.py", suite], env)
        print(p.stdout.strip())
        assert p.returncode == 0 and p.stdout.startswith("PASS"), p.stdout
        out.append("%s %s" % (suite, p.stdout.splitlines()[0]))
    if FULL:   # the README's first device example, on this CPU
        exp = os.path.join(work, "exp16")
        bindir = os.path.join(PREFIX, "bin")
        penv = dict(env, PATH=bindir + os.pathsep + env["PATH"])
        steps = [["conform", "export", "--out", exp, "--dtype", "float16"],
                 ["conform-torch", exp, "--device", "cpu", "--compute-dtype", "float32", "--quiet"],
                 ["conform", "run", "--impl", "dir:" + exp, "--report-dir", os.path.join(work, "exp16-report"),
                  "--waivers", "cases/waivers_pytorch_cpu.json", "--quiet"]]
        for argv in steps:
            p = run(work, argv, penv)
            assert p.returncode == 0, p.stdout
        out.append("README device example exit 0: " + p.stdout.strip().splitlines()[-1])
    return "torch: " + "; ".join(out)


def main():
    work = tempfile.mkdtemp(prefix="conform_package_")
    env = {k: v for k, v in os.environ.items() if k not in ("CONFORM", "PYTHONPATH", "CONFORM_DATA")}
    env["CONFORM_CACHE"] = os.path.join(work, "cache")
    shutil.copy(os.path.join(HERE, "np_roi_align.py"), work)
    try:
        lines = [package(work, env), pytest_runs(work, env), torch_runs(work, env)]
    except AssertionError:
        print("kept for inspection: %s" % work)
        raise
    shutil.rmtree(work, ignore_errors=True)
    print("conform package test passed: " + "; ".join(lines))


if __name__ == "__main__":
    main()
