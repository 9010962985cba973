"""make check-ops fails, naming the piece, when any one thing an op needs is removed; an intact
copy passes, and a stated reason stands in for a missing runner route. Standard library only.
usage: test_check_ops.py build/conform"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CONFORM = sys.argv[1] if len(sys.argv) > 1 else "build/conform"
PIECES = ["docs/ops", "cases/conformance.json", "cases/smoke.json", "cases/golden", "tests/zoo/zoo_bugs.h",
          "python/conform/torch.py"]


def check(root, check_golden=None):
    extra = ["--check-golden", check_golden] if check_golden else []
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "check_ops.py"), "--conform", CONFORM, "--root", root]
                       + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stderr


def fake_check_golden(tmp, states):
    """a stand-in for check_golden --ops reporting states {op: plain|exempt|missing}"""
    path = os.path.join(tmp, "fake_check_golden")
    with open(path, "w") as fh:
        fh.write("#!/bin/sh\ncat <<'EOF'\n" + "".join(f"{op} {s}\n" for op, s in states.items()) + "EOF\n")
    os.chmod(path, 0o755)
    return path


def edit(root, rel, fn):
    path = os.path.join(root, rel)
    with open(path) as fh:
        text = fh.read()
    with open(path, "w") as fh:
        fh.write(fn(text))


def drop_cases(op):
    def fn(text):
        suite = json.loads(text)
        suite["cases"] = [c for c in suite["cases"] if c.get("op") != op]
        return json.dumps(suite)
    return fn


def main():
    removals = [
        ("docs/ops/roi_align.md", lambda t: re.sub(r"^## Ambiguity.*$", "## (heading removed)", t, flags=re.M),
         "roi_align: docs/ops/roi_align.md has no 'Ambiguity' section"),
        ("cases/smoke.json", drop_cases("grid_sampler_2d"), "grid_sampler_2d: cases/smoke.json has no case of grid_sampler_2d"),
        ("cases/conformance.json", drop_cases("roi_align_rotated_grad"),
         "roi_align_rotated_grad: cases/conformance.json has no case"),
        ("tests/zoo/zoo_bugs.h", lambda t: re.sub(r'^ZOO_BUG\(\w+, "deformable_offsets_grad".*\n', "", t, flags=re.M),
         "deformable_offsets_grad: tests/zoo/zoo_bugs.h has no bug"),
        ("python/conform/torch.py", lambda t: t.replace('"grid_sampler_2d_backward": Route(', '"renamed": Route('),
         "grid_sampler_2d_backward: python/conform/torch.py has no route"),
    ]
    with tempfile.TemporaryDirectory(prefix="conform-check-ops-") as tmp:
        def fresh():
            root = os.path.join(tmp, "r")
            shutil.rmtree(root, ignore_errors=True)
            for rel in PIECES:
                src, dst = os.path.join(ROOT, rel), os.path.join(root, rel)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, dst)
            return root
        rc, err = check(fresh())
        assert rc == 0, "an intact copy fails: " + err
        for rel, fn, want in removals:
            root = fresh()
            edit(root, rel, fn)
            rc, err = check(root)
            assert rc == 1 and want in err, f"removing a piece of {rel}: exit {rc}, expected '{want}' in:\n{err}"
        # golden vectors: every file of the op's vectors gone
        root = fresh()
        for f in os.listdir(os.path.join(root, "cases", "golden")):
            edit(root, os.path.join("cases", "golden", f), drop_cases("deformable_offsets"))
        rc, err = check(root)
        assert rc == 1 and "deformable_offsets: cases/golden/*.json holds no golden vector" in err, err
        # a missing route with a stated reason is accepted
        root = fresh()
        edit(root, "python/conform/torch.py", lambda t: t.replace('"grid_sampler_2d_backward": Route(', '"renamed": Route('))
        edit(root, "docs/ops/grid_sampler_2d_backward.md", lambda t: t + "\nNo runner mapping: a test of the reason rule\n")
        rc, err = check(root)
        assert rc == 0, "a stated reason is not accepted: " + err
        # an op without a plain golden fails unless exempted; the real tool's answer for the others
        p = subprocess.run([os.path.join(os.path.dirname(CONFORM), "check_golden"), "--ops"], stdout=subprocess.PIPE,
                           text=True, check=True)
        states = dict(line.split() for line in p.stdout.splitlines())
        for state, want_rc in (("missing", 1), ("exempt", 0), ("plain", 0)):
            rc, err = check(fresh(), fake_check_golden(tmp, {**states, "roi_align": state}))
            assert rc == want_rc, f"roi_align {state}: exit {rc}, expected {want_rc}:\n{err}"
            assert (state == "missing") == ("roi_align: no plain golden" in err), err
    print(f"check-ops test passed: an intact copy passes, {len(removals) + 2} removals each fail naming "
          "the piece (a missing plain golden too, an exempted one passes)")


if __name__ == "__main__":
    main()
