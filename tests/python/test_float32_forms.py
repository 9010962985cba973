"""The tolerance models hold for float32 forms that are not ours (numpy only; tests/python/run.sh
skips it, saying so, where numpy is missing):

    conform export cases/smoke.json -> tools/deform_position_orders.py (the spec's and nnabla's
    position orders), tools/rotated_float32_order.py (mmcv's order) -> conform run --impl dir:

Asserts that every case they write passes (the rotated tool leaves rois with a non-finite field
unwritten: those, and only those, are missing), and that the rotated emulation with `clockwise`
inverted fails, so the check is not vacuous.

usage: python3 tests/python/test_float32_forms.py [build/conform]"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CONFORM = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CONFORM", "build/conform"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import rotated_float32_order  # noqa: E402


def run(cmd, quiet=False):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL if quiet else None)


def judge(exp, ops, rep):
    cmd = [CONFORM, "run", "cases/smoke.json", "--impl", "dir:" + exp, "--threads", "2", "--quiet",
           "--report-dir", rep]
    for op in ops:
        cmd += ["--op", op]
    run(cmd, quiet=True)  # exit 1 when something failed: the statuses are what is checked
    with open(os.path.join(rep, "report.json")) as f:
        return json.load(f)["cases"]


def statuses(cases):
    out = {}
    for c in cases:
        out.setdefault(c["status"], []).append(c["id"])
    return out


def main():
    tmp = tempfile.mkdtemp(prefix="conform-forms-")
    try:
        exp = os.path.join(tmp, "exp")
        ops = ["deformable_offsets", "roi_align_rotated", "roi_align_rotated_grad"]
        cmd = [CONFORM, "export", "cases/smoke.json", "--out", exp]
        for op in ops:
            cmd += ["--op", op]
        assert run(cmd).returncode == 0, "export failed"
        for order in ("spec", "pad_last"):
            copy = os.path.join(tmp, order)
            assert run([sys.executable, "tools/deform_position_orders.py", exp, copy, order]).returncode == 0
            s = statuses(judge(copy, ["deformable_offsets"], os.path.join(tmp, "rep-" + order)))
            assert set(s) == {"passed"}, "deformable, %s order: %s" % (order, {k: v[:5] for k, v in s.items()})
            print("deformable_offsets, %s order: %d passed" % (order, len(s["passed"])))
        rot = os.path.join(tmp, "rot")
        assert run([sys.executable, "tools/rotated_float32_order.py", exp, rot]).returncode == 0
        s = statuses(judge(rot, ops[1:], os.path.join(tmp, "rep-rot")))
        assert set(s) <= {"passed", "missing"}, "rotated: %s" % {k: v[:5] for k, v in s.items() if k != "passed"}
        assert all("nan" in i or "inf" in i for i in s.get("missing", [])), "missing: %s" % s.get("missing")
        print("rotated, mmcv's order: %d passed, %d missing (non-finite rois)" % (len(s["passed"]), len(s.get("missing", []))))
        # not vacuous: the same emulation with clockwise inverted fails
        geometry = rotated_float32_order.roi_geometry
        rotated_float32_order.roi_geometry = lambda roi, a, PH, PW: geometry(
            roi, dict(a, clockwise=not a.get("clockwise", False)), PH, PW)
        bad = os.path.join(tmp, "rot-bad")
        rotated_float32_order.main([exp, bad])
        s = statuses(judge(bad, ops[1:], os.path.join(tmp, "rep-bad")))
        assert len(s.get("failed", [])) > len(s.get("passed", [])) / 2, "clockwise inverted: %s" % {
            k: len(v) for k, v in s.items()}
        print("rotated with clockwise inverted: %d failed" % len(s["failed"]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("float32 forms test: passed")


if __name__ == "__main__":
    main()
