"""End-to-end test of tools/torch_runner.py (needs numpy, torch and torchvision; tests/python/run.sh
skips it, saying so, where they are missing):

    conform export cases/smoke.json (the six ops torch has without mmcv) -> torch_runner.py (CPU)
    -> conform run --impl dir: with cases/waivers_pytorch_cpu.json

Asserts that every case passes or is waived (the waivers name each divergence with its reason) or
is missing because the runner declared it cannot run it (torch_runner.CANNOT_RUN: a batch index
torch would index out of bounds with; the report says so),
that every op has passing cases, and that one perturbed output of a passing case fails.

usage: python3 tests/python/test_torch_runner.py [build/conform]"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CONFORM = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CONFORM", "build/conform"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import torch_runner as R  # noqa: E402

OPS = ["roi_align", "roi_align_v2_backward", "grid_sampler_2d", "grid_sampler_2d_backward",
       "deformable_offsets", "deformable_offsets_grad"]

def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT, **kw)


def cannot_run(rec, message):
    """a case the runner declared it cannot run (a reason of torch_runner.CANNOT_RUN in runner.json),
    which conform reports missing with that reason: not run, never passed"""
    reason = rec.get("reason", "") if rec.get("status") == "skipped" else ""
    return any(reason.endswith(r) for r in R.CANNOT_RUN) and message.endswith("(the runner skipped it: %s)" % reason)


def main():
    tmp = tempfile.mkdtemp(prefix="conform_torch_runner_")
    exp, rep = os.path.join(tmp, "exp"), os.path.join(tmp, "rep")
    op_args = sum((["--op", op] for op in OPS), [])
    run([CONFORM, "export", "cases/smoke.json", "--out", exp, "--dtype", "float32"] + op_args,
        check=True, stdout=subprocess.DEVNULL)
    runner = run([sys.executable, "tools/torch_runner.py", exp, "--threads", "2", "--quiet"],
                 stdout=subprocess.PIPE, universal_newlines=True)
    print(runner.stdout)
    assert runner.returncode == 0, "the runner must exit 0 whatever the cases did"
    judge = [CONFORM, "run", "cases/smoke.json", "--impl", "dir:" + exp, "--waivers",
             "cases/waivers_pytorch_cpu.json", "--quiet", "--threads", "2"] + op_args
    run(judge + ["--report-dir", rep], stdout=subprocess.DEVNULL)
    with open(os.path.join(rep, "report.json")) as f:
        cases = json.load(f)["cases"]

    with open(os.path.join(exp, "runner.json")) as f:
        record = json.load(f)["cases"]
    unexpected, passed, not_run = [], {op: 0 for op in OPS}, 0
    for c in cases:
        if c["status"] == "passed":
            passed[c["op"]] += 1
        elif c["status"] == "missing" and cannot_run(record.get(c["id"], {}), c["message"]):
            not_run += 1
        elif c["status"] != "waived":
            unexpected.append("%s %s: %s" % (c["status"], c["id"], c["message"]))
    assert not unexpected, "unexpected verdicts on PyTorch CPU:\n" + "\n".join(unexpected)
    assert all(passed.values()), "every op must have passing cases: %s" % passed

    # one element of a passing case's output moved by 1e-3 must fail
    victim = next(c for c in cases if c["status"] == "passed" and c["op"] == "roi_align" and
                  c["outputs"] and c["outputs"][0]["numel"] > 0)
    with open(os.path.join(exp, "manifest.json")) as f:
        entry = next(e for e in json.load(f)["cases"] if e["id"] == victim["id"])
    path = os.path.join(exp, entry["outputs"]["output"]["path"])
    a = np.load(path)
    a.flat[0] += np.float32(1e-3)
    np.save(path, a)
    proc = run(judge + ["--filter", victim["id"], "--report-dir", rep + "2"], stdout=subprocess.DEVNULL)
    assert proc.returncode == 1, "a perturbed output must fail (exit %d)" % proc.returncode

    print("torch runner test passed: %s passed per op, %d waived, %d not run (missing: inputs torch has no "
          "defined result for, declared by the runner)" % (passed, sum(c["status"] == "waived" for c in cases), not_run))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
