"""The tolerance models hold for float32 forms that are not ours (numpy only; tests/python/run.sh
skips it, saying so, where numpy is missing):

    conform export SUITE -> tools/deform_position_orders.py (the spec's and nnabla's position
    orders), tools/deform_corner_weight.py (the DCNv2 CPU corner-weight form, with and without
    FMA), tools/rotated_float32_order.py (mmcv's order) -> conform run --impl dir:

Asserts that every case they write passes (the rotated tool leaves a case it cannot run unwritten
and declares it skipped, with one of its reasons, in runner.json: those, and only those, are
missing, with that reason in the report) and that the rotated cases at angle exactly 0 with
samples on the four window lines (both layouts, both senses, forward and grad; the reference leaves
their positions unboxed) pass with no ambiguous element; and that the checks are not vacuous: the
rotated emulation with `clockwise` inverted fails, with a strict window test it fails every
window-line case, and the corner-weight kernel with a non-strict window
test (>= -1, <= H) fails every case where that changes an output (and some case changes).

By default on the smoke suite at its seed (make test). FORMS_SUITES="cases/conformance.json
cases/models.json" and FORMS_SEEDS="1 2 3" widen it (make forms-wide: the default and models
suites over several seeds, a few minutes).

usage: python3 tests/python/test_float32_forms.py [build/conform]"""
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
import rotated_float32_order  # noqa: E402


def run(cmd, quiet=False):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL if quiet else None)


def judge(exp, ops, rep, suite="cases/smoke.json", seed=None, only=None):
    # the cases' statuses are what is checked; the reference proofs are make test's own part
    cmd = [CONFORM, "run", suite, "--impl", "dir:" + exp, "--threads", "2", "--quiet", "--no-proofs", "--report-dir", rep]
    cmd += ["--seed", str(seed)] if seed is not None else []
    cmd += ["--filter", only] if only else []
    for op in ops:
        cmd += ["--op", op]
    run(cmd, quiet=True)  # exit 1 when something failed: the statuses are what is checked
    with open(os.path.join(rep, "report.json")) as f:
        return json.load(f)["cases"]


def export(suite, seed, ops, out):
    cmd = [CONFORM, "export", suite, "--out", out] + (["--seed", str(seed)] if seed is not None else [])
    for op in ops:
        cmd += ["--op", op]
    assert run(cmd, quiet=True).returncode == 0, "export failed"


def statuses(cases):
    out = {}
    for c in cases:
        out.setdefault(c["status"], []).append(c["id"])
    return out


def declared_skips(copy, cases):
    """{reason: count} of the cases the rotated emulation did not run. Each must be recorded skipped
    in COPY/runner.json with one of the reasons it declares (rotated_float32_order.UNSUPPORTED), and
    conform must report exactly those missing, with that reason in the message: not run, not passed."""
    with open(os.path.join(copy, "runner.json")) as f:
        record = json.load(f)["cases"]
    skipped = {i: r["reason"] for i, r in record.items() if r["status"] == "skipped"}
    assert set(skipped.values()) <= set(rotated_float32_order.UNSUPPORTED), "undeclared reasons: %s" % (
        set(skipped.values()) - set(rotated_float32_order.UNSUPPORTED))
    missing = {c["id"]: c["message"] for c in cases if c["status"] == "missing"}
    assert set(missing) == set(skipped), "missing but not declared skipped: %s; declared skipped but not missing: %s" % (
        sorted(set(missing) - set(skipped))[:5], sorted(set(skipped) - set(missing))[:5])
    for i, msg in missing.items():
        assert msg.endswith("(the runner skipped it: %s)" % skipped[i]), "%s: %s" % (i, msg)
    out = {}
    for r in skipped.values():
        out[r] = out.get(r, 0) + 1
    return out


def changed(m, a, b):
    """ids of the cases whose outputs differ between copies a and b (NaN equal to NaN)"""
    out = set()
    for c in m["cases"]:
        for o in c["outputs"].values():
            pa, pb = os.path.join(a, o["path"]), os.path.join(b, o["path"])
            if os.path.exists(pa) and os.path.exists(pb):
                x, y = np.load(pa), np.load(pb)
                if x.shape != y.shape or not np.all((x == y) | (np.isnan(x) & np.isnan(y))):
                    out.add(c["id"])
    return out


def corner_weight(exp, tmp, suite, seed):
    """the DCNv2 CPU corner-weight form passes; its non-strict window fails exactly where it
    changes an output. Returns how many cases the non-strict window changed."""
    ops = ["deformable_offsets", "deformable_offsets_grad"]
    with open(os.path.join(exp, "manifest.json")) as f:
        m = json.load(f)
    n_changed = 0
    for fma in ([], ["--fma"]):
        name = "cw" + "".join(fma)
        copies = {w: os.path.join(tmp, name + "-" + w) for w in ("strict", "open")}
        for w, d in copies.items():
            assert run([sys.executable, "tools/deform_corner_weight.py", exp, d, "--window", w] + fma,
                       quiet=True).returncode == 0
        s = statuses(judge(copies["strict"], ops, os.path.join(tmp, "rep-" + name), suite, seed))
        assert set(s) == {"passed"}, "corner-weight form %s: %s" % (fma, {k: v[:5] for k, v in s.items()})
        diff = changed(m, copies["strict"], copies["open"])
        so = statuses(judge(copies["open"], ops, os.path.join(tmp, "rep-" + name + "-open"), suite, seed))
        failed = set(so.get("failed", []))
        assert failed == diff, "non-strict window: changed but passed %s, failed unchanged %s" % (
            sorted(diff - failed), sorted(failed - diff))
        n_changed += len(diff)
        print("corner-weight form%s: %d passed; with the non-strict window %d changed, %d failed"
              % (" with FMA" if fma else "", len(s["passed"]), len(diff), len(failed)))
    return n_changed


def window_lines(exp, tmp, suite, seed, judged):
    """rotated at angle exactly 0 with samples on all four window lines: the reference leaves those
    positions unboxed, so mmcv's float32 order must agree with no ambiguity granted, in both layouts,
    both senses, forward and grad; the same emulation with a strict window test fails each"""
    with open(os.path.join(exp, "manifest.json")) as f:
        attrs = {c["id"]: c["attrs"] for c in json.load(f)["cases"]}
    lines = [c for c in judged if "samples_on_window_lines" in c["id"]]
    kinds = {(c["op"], attrs[c["id"]].get("data_format", "NCHW"), bool(attrs[c["id"]].get("clockwise", False)))
             for c in lines}
    if not lines:
        return  # a suite without them (models)
    assert len(kinds) == 8, "window-line cases: want both ops, layouts and senses, have %s" % sorted(kinds)
    for c in lines:
        amb = sum(o.get("n_ambiguous", 0) for o in c["outputs"])
        assert c["status"] == "passed" and amb == 0, "%s: %s with %d ambiguous" % (c["id"], c["status"], amb)
    taps = rotated_float32_order.bilinear_taps

    def strict(y, x, H, W):
        inside, *rest = taps(y, x, H, W)
        return (inside & (y > -1) & (y < H) & (x > -1) & (x < W), *rest)
    rotated_float32_order.bilinear_taps = strict
    try:
        bad = os.path.join(tmp, "rot-strict")
        # only the window-line cases are judged below: the emulation of the others is not needed
        rotated_float32_order.main([exp, bad], only=lambda i: "samples_on_window_lines" in i)
    finally:
        rotated_float32_order.bilinear_taps = taps
    ids = [c["id"] for c in lines]
    s = statuses(judge(bad, ["roi_align_rotated", "roi_align_rotated_grad"], os.path.join(tmp, "rep-strict"),
                       suite, seed, "*samples_on_window_lines*"))
    assert sorted(sum(s.values(), [])) == sorted(ids), "the filter picked other cases: %s" % s
    assert set(s) == {"failed"}, "strict window on the window-line cases: %s" % {k: v for k, v in s.items() if k != "failed"}
    print("rotated at angle 0, samples on the window lines: %d cases (both layouts, senses, fwd and grad) "
          "passed with no ambiguous element; with a strict window all %d failed" % (len(lines), len(s["failed"])))


def forms(tmp, suite, seed):
    exp = os.path.join(tmp, "exp")
    ops = ["deformable_offsets", "deformable_offsets_grad", "roi_align_rotated", "roi_align_rotated_grad"]
    export(suite, seed, ops, exp)
    for order in ("spec", "pad_last"):
        copy = os.path.join(tmp, order)
        assert run([sys.executable, "tools/deform_position_orders.py", exp, copy, order], quiet=True).returncode == 0
        s = statuses(judge(copy, ["deformable_offsets"], os.path.join(tmp, "rep-" + order), suite, seed))
        assert set(s) == {"passed"}, "deformable, %s order: %s" % (order, {k: v[:5] for k, v in s.items()})
        print("deformable_offsets, %s order: %d passed" % (order, len(s["passed"])))
    n_changed = corner_weight(exp, tmp, suite, seed)
    rot = os.path.join(tmp, "rot")
    assert run([sys.executable, "tools/rotated_float32_order.py", exp, rot], quiet=True).returncode == 0
    rot_cases = judge(rot, ops[2:], os.path.join(tmp, "rep-rot"), suite, seed)
    s = statuses(rot_cases)
    assert set(s) <= {"passed", "missing"}, "rotated: %s" % {k: v[:5] for k, v in s.items() if k != "passed"}
    not_run = declared_skips(rot, rot_cases)
    print("rotated, mmcv's order: %d passed, %d not run, each with the emulation's declared reason (%s)" % (
        len(s["passed"]), sum(not_run.values()), ", ".join("%d: %s" % (n, r) for r, n in sorted(not_run.items()))))
    window_lines(exp, tmp, suite, seed, rot_cases)
    # not vacuous: the same emulation with clockwise inverted fails
    geometry = rotated_float32_order.roi_geometry
    rotated_float32_order.roi_geometry = lambda roi, a, PH, PW: geometry(
        roi, dict(a, clockwise=not a.get("clockwise", False)), PH, PW)
    try:
        bad = os.path.join(tmp, "rot-bad")
        rotated_float32_order.main([exp, bad])
    finally:
        rotated_float32_order.roi_geometry = geometry
    s = statuses(judge(bad, ops[2:], os.path.join(tmp, "rep-bad"), suite, seed))
    assert len(s.get("failed", [])) > len(s.get("passed", [])) / 2, "clockwise inverted: %s" % {
        k: len(v) for k, v in s.items()}
    print("rotated with clockwise inverted: %d failed" % len(s["failed"]))
    return n_changed


def main():
    suites = os.environ.get("FORMS_SUITES", "cases/smoke.json").split()
    seeds = [int(x) for x in os.environ.get("FORMS_SEEDS", "").split()] or [None]
    n_changed = 0
    for suite in suites:
        for seed in seeds:
            print("== %s, seed %s" % (suite, "of the suite" if seed is None else seed), flush=True)
            tmp = tempfile.mkdtemp(prefix="conform-forms-")
            try:
                n_changed += forms(tmp, suite, seed)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    assert n_changed > 0, "the non-strict window changed no output: the check would be vacuous"
    print("float32 forms test: passed")


if __name__ == "__main__":
    main()
