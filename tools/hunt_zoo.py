#!/usr/bin/env python3
"""conform hunt against every zoo bug (tests/zoo/zoo_bugs.h) and the hunt-only cell_w_for_h: per
bug and seed, whether the hunt finds it (a failure the bug-free none.so does not share, through
--baseline), the time to its first failure, the shrunk case's size, and whether `conform run`
replays it failing. Prints a markdown table; --json writes the numbers.

--mutants FAILING.json hunts the generated mutants instead: every (mutant, op) pair that
tools/zoo_mutants.py --count-failing found killed by 1 to 11 of the default suite's cases, with
the mutant's plugin it left in build/zoo_mutants/plugins/.

usage: tools/hunt_zoo.py --conform build/conform --zoo-dir build/zoo [--seconds 20] [--seeds 1,2,3]
       tools/hunt_zoo.py --mutants build/zoo_mutants/failing.json --seconds 60 --json docs/hunt_mutants.json
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


def hunt_one(a, bug, op, seed, tmp, so=None):
    so = so or os.path.join(a.zoo_dir + ("_hunt" if bug == "cell_w_for_h" else ""), bug + ".so")
    out = os.path.join(tmp, "%s_%s_%d.json" % (re.sub(r"\W", "_", bug), op, seed))
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


def row(rs, name, op, failing=None):
    firsts = [r["first_s"] for r in rs if r["found"] and r["first_s"] is not None]
    sizes = sorted({r["size"] for r in rs if r["found"]})
    return "| `%s` | %s |%s %d of %d | %s | %s | %s |" % (
        name, op, "" if failing is None else " %d |" % failing, sum(r["found"] for r in rs), len(rs),
        "%.2f s" % statistics.median(firsts) if firsts else "-", "; ".join(sizes) or "-",
        "yes" if all(r.get("replays") for r in rs if r["found"]) and firsts else "-")


def weak_pairs(path):
    """the counted pairs of the sample (the cache may hold others) and those killed by 1 to 11
    cases, in the table's order"""
    with open(path) as f:
        doc = json.load(f)
    doc["pairs"] = {k: doc["pairs"][k] for k in doc.get("sample", doc["pairs"]) if k in doc["pairs"]}
    out = []
    for key, r in doc["pairs"].items():
        if 0 < r.get("failing", 0) < 12:
            mid, op = key.split("\t")
            out.append((mid, op, r))
    return doc, out


def hunt_mutants(a, seeds, tmp):
    doc, weak = weak_pairs(a.mutants)
    plugins = os.path.join(os.path.dirname(os.path.abspath(a.mutants)), "plugins")
    rows, c0, cpu0, kept = [], os.times(), 0.0, {}
    if a.json and os.path.exists(a.json):  # a resumed run keeps the pairs hunted with the same seeds and seconds
        with open(a.json) as f:
            old = json.load(f)
        if old.get("seeds") == seeds and old.get("seconds") == a.seconds and "summary" in old:
            kept = {(rs[0]["bug"], rs[0]["op"]): rs for rs in old["rows"]}
            cpu0 = old["summary"]["hunt_cpu_s"]
    for mid, op, r in weak:
        if a.only and a.only not in mid:
            continue
        so = os.path.join(plugins, r["hash"] + ".so")
        rs = kept.get((mid, op)) or [dict(hunt_one(a, r["hash"], op, s, tmp, so), bug=mid, failing=r["failing"])
                                     for s in seeds]
        rows.append(rs)
        print(row(rs, mid.replace("|", "/"), op, r["failing"]), flush=True)
    c1 = os.times()
    cpu = cpu0 + c1.children_user + c1.children_system - c0.children_user - c0.children_system
    counted = [v["failing"] for v in doc["pairs"].values() if "failing" in v]
    hist = {}
    for n in counted:
        b = "0" if n == 0 else "1-11" if n < 12 else "12-49" if n < 50 else "50+"
        hist[b] = hist.get(b, 0) + 1
    summary = {"killed_pairs": doc["killed_pairs"], "every": doc["every"], "counted": len(counted),
               "failing_cases_histogram": hist, "count_cpu_s": doc.get("cpu_s"),
               "hunt_cpu_s": round(cpu, 1), "weak_pairs": len(rows),
               "found_3_of_3": sum(all(r["found"] for r in rs) for rs in rows),
               "missed_some_seed": [rs[0]["bug"] + " / " + rs[0]["op"] for rs in rows if not all(r["found"] for r in rs)]}
    print(json.dumps(summary, indent=1))
    summary["failing_per_pair"] = {k.replace("\t", " / "): v.get("failing", v.get("error")) for k, v in doc["pairs"].items()}
    return rows, summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conform", default="build/conform")
    ap.add_argument("--zoo-dir", default="build/zoo")
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--only", default="")
    ap.add_argument("--json")
    ap.add_argument("--mutants", help="tools/zoo_mutants.py --count-failing's FAILING.json: hunt its weakly killed pairs")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    rows, summary = [], None
    with tempfile.TemporaryDirectory() as tmp:
        if a.mutants:
            rows, summary = hunt_mutants(a, seeds, tmp)
        for bug, op in [] if a.mutants else bugs():
            if a.only and a.only not in bug:
                continue
            rs = [hunt_one(a, bug, op, s, tmp) for s in seeds]
            rows.append(rs)
            print(row(rs, bug, op), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict({"seconds": a.seconds, "seeds": seeds}, **({"summary": summary} if summary else {}), rows=rows),
                      f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
