#!/usr/bin/env python3
"""What every op of the table needs outside its C code. For each op that
`conform list --json` names, it requires:
  * docs/ops/<op>.md with its Tolerance, Ambiguity and Essence (of testing) sections;
  * cases of the op in the default suite (cases/conformance.json) and the smoke suite (cases/smoke.json);
  * golden vectors: a case of the op in cases/golden/*.json (conform verify's golden proof);
  * at least one bug of the op in the zoo (tests/zoo/zoo_bugs.h);
  * a runner mapping (a Route of python/conform/torch.py, the op table of conform-torch) or, in its doc, a line
    "No runner mapping: <reason>";
  * a plain golden (op_desc.plain, reference/plain/), as `check_golden --ops` reports it; an op on
    check_golden.c's temporary exemption list is named, not counted missing.
Names every missing piece; exit 1 when one is missing, 0 when every op has all of them.
Usage: tools/check_ops.py [--conform build/conform] [--check-golden build/check_golden] [--root DIR]
(standard library only)
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

SECTIONS = ("Tolerance", "Ambiguity", "Essence")


def ops_of(conform):
    p = subprocess.run([conform, "list", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit(f"check-ops: {conform} list --json exited {p.returncode}: {p.stderr.strip()}")
    return [o["name"] for o in json.loads(p.stdout)["ops"]]


def plain_goldens(tool):
    """{op: "plain" | "exempt" | "missing"} from `check_golden --ops`"""
    p = subprocess.run([tool, "--ops"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit(f"check-ops: {tool} --ops exited {p.returncode}: {p.stderr.strip()}")
    return dict(line.split() for line in p.stdout.splitlines() if line.strip())


def read(path):
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return None


def suite_ops(path):
    text = read(path)
    return {c.get("op") for c in json.loads(text).get("cases", [])} if text else set()


def missing_pieces(op, root, facts):
    doc = read(os.path.join(root, "docs", "ops", op + ".md"))
    out = []
    if doc is None:
        out.append(f"docs/ops/{op}.md does not exist")
    else:
        headings = re.findall(r"^#+\s*(.+)$", doc, re.M)
        for s in SECTIONS:
            if not any(h.strip().startswith(s) for h in headings):
                out.append(f"docs/ops/{op}.md has no '{s}' section")
    for suite in ("conformance", "smoke"):
        if op not in facts[suite]:
            out.append(f"cases/{suite}.json has no case of {op}")
    if op not in facts["golden"]:
        out.append(f"cases/golden/*.json holds no golden vector of {op}")
    if op not in facts["zoo"]:
        out.append(f"tests/zoo/zoo_bugs.h has no bug of {op}")
    if facts["plain"].get(op, "missing") == "missing":
        out.append("no plain golden: op_desc.plain is NULL (reference/plain/, docs/architecture.md)")
    if op not in facts["routes"] and not (doc and re.search(r"^No runner mapping: \S", doc, re.M)):
        out.append(f"python/conform/torch.py has no route for {op}, and docs/ops/{op}.md gives no "
                   "'No runner mapping: <reason>' line")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conform", default="build/conform")
    ap.add_argument("--check-golden", help="default: check_golden beside --conform")
    ap.add_argument("--root", default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))
    args = ap.parse_args()
    root = args.root
    golden = set()
    for f in glob.glob(os.path.join(root, "cases", "golden", "*.json")):
        golden |= suite_ops(f)
    zoo = set(re.findall(r'^ZOO_BUG\(\w+, "(\w+)"', read(os.path.join(root, "tests", "zoo", "zoo_bugs.h")) or "", re.M))
    routes = set(re.findall(r'"(\w+)": Route\(', read(os.path.join(root, "python", "conform", "torch.py")) or ""))
    facts = {"conformance": suite_ops(os.path.join(root, "cases", "conformance.json")),
             "smoke": suite_ops(os.path.join(root, "cases", "smoke.json")), "golden": golden, "zoo": zoo,
             "routes": routes, "plain": plain_goldens(args.check_golden or os.path.join(os.path.dirname(args.conform), "check_golden"))}
    ops = ops_of(args.conform)
    problems = [f"{op}: {m}" for op in ops for m in missing_pieces(op, root, facts)]
    for p in problems:
        print("check-ops: " + p, file=sys.stderr)
    exempt = [op for op in ops if facts["plain"].get(op) == "exempt"]
    if exempt:
        print("check-ops: TEMPORARY exemption (check_golden.c), no plain golden yet: " + ", ".join(exempt))
    print(f"check-ops: {len(ops)} ops, {len(problems)} missing pieces")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
