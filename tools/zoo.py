#!/usr/bin/env python3
"""The zoo check: run a suite against every faulty kernel of tests/zoo/zoo_bugs.h.

Each bug's plugin (build/zoo/<id>.so) must fail at least one case of its own op and no case of
any other op; the bug-free build (build/zoo/none.so) must pass every case. The cases of
tests/zoo/waivers.json (tolerance-model gaps the bug-free build exposed, each with its reason)
are waived for every build. Writes the power table to OUT/power.json and OUT/power.md; with
--write-docs also to docs/zoo_power.json (read by `conform run`) and the table of docs/zoo.md.
Exit 0 when every check holds, 1 otherwise. Standard library only.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TABLE = os.path.join(ROOT, "tests", "zoo", "zoo_bugs.h")
ENTRY = re.compile(r'^ZOO_BUG\((\w+), "([^"]*)", "([^"]*)", "([^"]*)"\)\s*$')
HIDDEN = re.compile(r'^ZOO_HIDDEN\((\w+), "([^"]*)"\)\s*$')
# the statuses that do not count against a run, from conform's own table (harness/core/status.h)
NOT_FAILURES = ()
DOC_BEGIN, DOC_END = "<!-- zoo power table: begin (tools/zoo.py --write-docs) -->", "<!-- zoo power table: end -->"


def read_table(path=TABLE):
    """The bugs, each with "hidden": why no case can catch it, or None."""
    bugs, hidden = [], {}
    with open(path) as fh:
        for line in fh:
            for prefix, pattern in (("ZOO_BUG(", ENTRY), ("ZOO_HIDDEN(", HIDDEN)):
                if not line.startswith(prefix):
                    continue
                m = pattern.match(line)
                if not m:
                    sys.exit(f"{path}: cannot read the entry: {line.strip()}")
                if pattern is ENTRY:
                    bugs.append(dict(zip(("id", "op", "what", "field"), m.groups())))
                else:
                    hidden[m.group(1)] = m.group(2)
    ids = [b["id"] for b in bugs]
    if len(set(ids)) != len(ids) or set(hidden) - set(ids):
        sys.exit(f"{path}: duplicate ids, or ZOO_HIDDEN of an id that is not a ZOO_BUG")
    for b in bugs:
        b["hidden"] = hidden.get(b["id"])
    return bugs


def suite_name(path):
    with open(os.path.join(ROOT, path)) as fh:
        return json.load(fh)["suite"]


def run_one(args, suite, build):
    """Runs one suite against build/zoo/<build>.so; returns its report. Without the reference proofs:
    the golden is the same build's for every run (conform verify proves it; a fifth of a run's time)."""
    report_dir = os.path.join(args.out, suite_name(suite), build)
    cmd = [args.conform, "run", suite, "--impl", "plugin:" + os.path.join(args.zoo_dir, build + ".so"),
           "--no-isolate", "--no-proofs", "--quiet", "--threads", "1", "--waivers", args.waivers, "--report-dir", report_dir]
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"zoo: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr}")
    with open(os.path.join(ROOT, report_dir, "report.json")) as fh:
        return json.load(fh)


def not_failures(conform):
    """The statuses `conform list --json` says do not fail a run (a pass, a waiver, an op not implemented)."""
    p = subprocess.run([conform, "list", "--json"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit(f"zoo: {conform} list --json exited {p.returncode}:\n{p.stderr}")
    return tuple(s["name"] for s in json.loads(p.stdout)["statuses"] if not s["fails"])


def failures(report):
    """[(case id, op, message)] of the cases that did not pass, in suite order."""
    return [(c["id"], c["op"], c.get("message", "")) for c in report["cases"] if c["status"] not in NOT_FAILURES]


def judge(bugs, reports):
    """The power table and the list of broken expectations."""
    problems = []
    clean = failures(reports["none"])
    for cid, op, msg in clean:
        problems.append(f"bug-free build fails {cid} ({op}): {msg}")
    rows = []
    for b in bugs:
        fails = failures(reports[b["id"]])
        own = [f for f in fails if f[1] == b["op"]]
        other = sorted({f[1] for f in fails if f[1] != b["op"]})
        on_op = sum(1 for c in reports[b["id"]]["cases"] if c["op"] == b["op"])
        if not own and not b["hidden"]:
            problems.append(f"{b['id']}: no case of {b['op']} fails (not caught)")
        if own and b["hidden"]:
            print(f"zoo: note: {b['id']} is caught now ({own[0][0]}): remove its ZOO_HIDDEN line")
        for f in fails:
            if f[1] != b["op"]:
                problems.append(f"{b['id']}: fails {f[0]} of another op ({f[1]}): {f[2]}")
        rows.append(dict(b, caught=bool(own), cases_failed=len(own), cases_of_op=on_op,
                         first_case=own[0][0] if own else None, other_ops_failed=other))
    return rows, problems


def self_test():
    """judge() on made-up reports: each broken expectation is named, a clean zoo has none."""
    def rep(*cases):
        return {"cases": [{"id": i, "op": op, "status": st, "message": ""} for i, op, st in cases]}
    bugs = [{"id": "a", "op": "x", "hidden": None}, {"id": "b", "op": "y", "hidden": "why"}]
    ok = {"none": rep(("1", "x", "passed"), ("2", "y", "waived")), "a": rep(("1", "x", "failed"), ("2", "y", "passed")),
          "b": rep(("1", "x", "passed"), ("2", "y", "passed"))}
    rows, problems = judge(bugs, ok)
    assert not problems and rows[0]["first_case"] == "1" and not rows[1]["caught"], problems
    bad = dict(ok, none=rep(("1", "x", "error"), ("2", "y", "passed")), a=rep(("1", "x", "passed"), ("2", "y", "crashed")))
    _, problems = judge(bugs, bad)
    assert len(problems) == 3 and "bug-free build fails 1" in problems[0], problems
    assert "a: no case of x fails" in problems[1] and "a: fails 2 of another op (y)" in problems[2], problems


def power_json(suite_path, rows, reports):
    suite = reports["none"]["suites"][0]
    return {"schema": "conform-zoo-power", "schema_version": 1, "generator": "tools/zoo.py",
            "suite": suite["name"], "suite_path": suite_path,
            "cases": len(reports["none"]["cases"]), "seed": suite["seed"],
            "caught": sum(r["caught"] for r in rows), "total": len(rows),
            "hidden": sorted(r["id"] for r in rows if r["hidden"] and not r["caught"]),
            "bug_free_failures": len(failures(reports["none"])),
            "waived": sorted(c["id"] for c in reports["none"]["cases"] if c["status"] == "waived"),
            "bugs": rows}


def power_markdown(p):
    out = [f"The `{p['suite']}` suite ({p['cases']} cases, seed {p['seed']}) catches **{p['caught']} of "
           f"{p['total']}** known bug classes ({len(p['hidden'])} hidden by an ambiguity term, marked below); "
           f"the bug-free build fails {p['bug_free_failures']} cases ({len(p['waived'])} waived).", "",
           "| bug | op | what the kernel does wrong | class in the field | cases failed | first catching case |",
           "|---|---|---|---|---|---|"]
    for r in p["bugs"]:
        first = f"`{r['first_case']}`" if r["first_case"] else \
            f"**hidden**: {r['hidden']}" if r["hidden"] else "**not caught**"
        out.append(f"| `{r['id']}` | {r['op']} | {r['what']} | {r['field']} | {r['cases_failed']} of {r['cases_of_op']} "
                   f"| {first} |")
    return "\n".join(out) + "\n"


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def write_docs(p, md):
    """p: the measurements of every suite; md: their tables. The generated zoo's counts of a suite
    ("mutants", written by tools/zoo_mutants.py) are kept."""
    try:
        with open(os.path.join(ROOT, "docs", "zoo_power.json")) as fh:
            old = json.load(fh)
    except (OSError, ValueError):
        old = []
    kept = {d.get("suite"): d["mutants"] for d in (old if isinstance(old, list) else [old]) if "mutants" in d}
    for m in p:
        if m["suite"] in kept:
            m["mutants"] = kept[m["suite"]]
    write(os.path.join(ROOT, "docs", "zoo_power.json"), json.dumps(p, indent=1) + "\n")
    doc = os.path.join(ROOT, "docs", "zoo.md")
    with open(doc) as fh:
        text = fh.read()
    a, b = text.find(DOC_BEGIN), text.find(DOC_END)
    if a < 0 or b < a:
        sys.exit(f"{doc}: the power table markers are missing")
    write(doc, text[:a + len(DOC_BEGIN)] + "\n" + md + text[b:])


def note_if_docs_differ(p):
    """The committed measurement (what `conform run` reports) should be this one."""
    try:
        with open(os.path.join(ROOT, "docs", "zoo_power.json")) as fh:
            docs = json.load(fh)
    except (OSError, ValueError):
        docs = []
    docs = next((d for d in (docs if isinstance(docs, list) else [docs]) if d.get("suite") == p["suite"]), {})
    keys = ("suite", "cases", "caught", "total", "hidden")
    if any(docs.get(k) != p[k] for k in keys):
        print("zoo: note: docs/zoo_power.json says " + ", ".join(f"{k} {docs.get(k)}" for k in keys) +
              "; measured now " + ", ".join(f"{k} {p[k]}" for k in keys) + ": make zoo-docs and commit")


def check_suite(args, bugs, suite):
    """Runs one suite against every build: (its measurement, its table, the broken expectations)."""
    builds = ["none"] + [b["id"] for b in bugs]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        reports = dict(zip(builds, pool.map(lambda b: run_one(args, suite, b), builds)))
    rows, problems = judge(bugs, reports)
    p = power_json(suite, rows, reports)
    for w in reports["none"].get("stale_waivers", []):
        if w["pattern"].startswith(p["suite"] + "/"):  # the file holds the waivers of every suite
            print(f"zoo: note: waiver {w['pattern']} matches no failure of the bug-free build any more: remove it")
    for line in problems:
        print(f"zoo: {p['suite']}: {line}")
    print(f"zoo: {p['suite']} catches {p['caught']} of {p['total']} known bug classes "
          f"({len(p['hidden'])} hidden by an ambiguity term); bug-free build: "
          f"{p['bug_free_failures']} failures, {len(p['waived'])} waived")
    return p, power_markdown(p), problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conform", default="build/conform")
    ap.add_argument("--zoo-dir", default="build/zoo", help="where <id>.so and none.so are")
    ap.add_argument("--suite", action="append", help="a suite to measure (repeatable); default cases/conformance.json")
    ap.add_argument("--waivers", default="tests/zoo/waivers.json")
    ap.add_argument("--out", default="build/zoo", help="report directories and power.{json,md}")
    ap.add_argument("--jobs", type=int, default=2, help="suite runs at a time (each with one thread)")
    ap.add_argument("--write-docs", action="store_true", help="also update docs/zoo_power.json and docs/zoo.md")
    args = ap.parse_args()

    global NOT_FAILURES
    NOT_FAILURES = not_failures(args.conform)
    self_test()
    bugs = read_table()
    results = [check_suite(args, bugs, suite) for suite in args.suite or ["cases/conformance.json"]]
    powers, md = [r[0] for r in results], "\n".join(r[1] for r in results)
    write(os.path.join(ROOT, args.out, "power.json"), json.dumps(powers, indent=1) + "\n")
    write(os.path.join(ROOT, args.out, "power.md"), md)
    if args.write_docs:
        write_docs(powers, md)
    else:
        for p in powers:
            note_if_docs_differ(p)
    print(f"zoo: tables in {args.out}/power.md")
    return 1 if any(r[2] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
