#!/usr/bin/env python3
"""conform hunt against every zoo bug (tests/zoo/zoo_bugs.h) and the hunt-only cell_w_for_h: per
bug and seed, whether the hunt finds it (a failure the bug-free none.so does not share, through
--baseline), the time to its first failure, the shrunk case's size, and whether `conform run`
replays it failing. Prints a markdown table; --json writes the numbers.

usage: tools/hunt_zoo.py --conform build/conform --zoo-dir build/zoo [--seconds 20] [--seeds 1,2,3]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def bugs():
    out = []
    with open(os.path.join(HERE, "..", "tests", "zoo", "zoo_bugs.h")) as f:
        for line in f:
            m = re.match(r'ZOO_BUG\((\w+), "(\w+)"', line)
            if m:
                out.append((m.group(1), m.group(2)))
    return out + [("cell_w_for_h", "deformable_offsets"), ("cell_w_for_h", "deformable_offsets_grad")]


def size_of(case):
    """rois or points, the plane, channels of the minimal case, from its shapes and attributes"""
    sh, at = case["shapes"], case.get("attrs", {})
    op = case["op"]
    if op.startswith("roi_align"):
        k = [v[0] if v[-1] in (5, 6) else v[1] for n, v in sh.items() if n in ("rois", "boxes")][0]
        plane = at.get("input_shape") or at.get("y_grad_shape") or sh.get("input") or sh.get("x")
        nhwc = at.get("data_format") == "NHWC"
        h, w, c = (plane[1], plane[2], plane[3]) if nhwc else (plane[2], plane[3], plane[1])
        return "%d roi%s, %dx%d, C=%d" % (k, "" if k == 1 else "s", h, w, c)
    if op.startswith("grid"):
        g, x = sh["grid"], sh["input"]
        return "%d point%s, %dx%d, C=%d" % (g[1] * g[2], "" if g[1] * g[2] == 1 else "s", x[2], x[3], x[1])
    x, o = sh["x"], sh["offsets"]
    return "%dx%d outputs, %dx%d, C=%d" % (o[1], o[2], x[1], x[2], x[3])


def hunt_one(a, bug, op, seed, tmp):
    so = os.path.join(a.zoo_dir + ("_hunt" if bug == "cell_w_for_h" else ""), bug + ".so")
    out = os.path.join(tmp, "%s_%s_%d.json" % (bug, op, seed))
    cmd = ["nice", a.conform, "hunt", op, "--impl", "plugin:" + so, "--baseline", "plugin:" + os.path.join(a.zoo_dir, "none.so"),
           "--seconds", str(a.seconds), "--seed", str(seed), "--max-found", "1", "--quiet", "--out", out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    r = {"bug": bug, "op": op, "seed": seed, "found": p.returncode == 1}
    m = re.search(r"first failure after ([0-9.]+) s", p.stderr)
    r["first_s"] = float(m.group(1)) if m else None
    m = re.search(r": (\d+) cases in ([0-9.]+) s", p.stderr)
    r["cases"], r["elapsed_s"] = (int(m.group(1)), float(m.group(2))) if m else (None, None)
    if p.returncode not in (0, 1):
        r["error"] = p.stderr.strip().splitlines()[-1:]
    if r["found"]:
        case = json.load(open(out))["cases"][0]
        r["size"] = size_of(case)
        rep = subprocess.run([a.conform, "run", out, "--impl", "plugin:" + so, "--report-dir", os.path.join(tmp, "rep"),
                              "--quiet"], capture_output=True, text=True)
        r["replays"] = rep.returncode == 1
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conform", default="build/conform")
    ap.add_argument("--zoo-dir", default="build/zoo")
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--only", default="")
    ap.add_argument("--json")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for bug, op in bugs():
            if a.only and a.only not in bug:
                continue
            rs = [hunt_one(a, bug, op, s, tmp) for s in seeds]
            rows.append(rs)
            firsts = [r["first_s"] for r in rs if r["found"] and r["first_s"] is not None]
            sizes = sorted({r["size"] for r in rs if r["found"]})
            print("| `%s` | %s | %d of %d | %s | %s | %s |" % (
                bug, op, sum(r["found"] for r in rs), len(rs),
                "%.2f s" % statistics.median(firsts) if firsts else "-", "; ".join(sizes) or "-",
                "yes" if all(r.get("replays") for r in rs if r["found"]) and firsts else "-"), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"seconds": a.seconds, "seeds": seeds, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
