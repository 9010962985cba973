#!/usr/bin/env python3
"""Writes cases/conformance.json, cases/smoke.json, cases/models.json and the hand-made golden files.

The suites are data; the modules in tools/suites/ (one per op family) are the readable source
of them: grids, edge cases, invalid inputs and published vectors. Edit a module and rerun:
    /usr/bin/python3 tools/gen_suites.py
Vectors computed by PyTorch come from tools/golden_torch.py instead.
"""
import importlib
import json
import os
import pkgutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "cases")
sys.path.insert(0, HERE)


# modules that make a whole suite of their own rather than a family's part of every suite
OWN_SUITES = {"models": ("models.json", 20261124)}


def families():
    import suites
    return [importlib.import_module("suites." + m.name) for m in sorted(pkgutil.iter_modules(suites.__path__),
                                                                        key=lambda m: m.name)
            if m.name not in OWN_SUITES]


def dump(path, obj):
    with open(path, "w") as fh:
        json.dump(obj, fh, indent=1)
        fh.write("\n")


def main():
    conformance, smoke = [], []
    for fam in families():
        conformance += fam.conformance()
        smoke += fam.smoke()
        for name, suite, source, cases in fam.golden():
            dump(os.path.join(CASES, "golden", name),
                 {"suite": suite, "seed": 0, "generator": "tools/gen_suites.py", "source": source, "cases": cases})
    dump(os.path.join(CASES, "conformance.json"), {"suite": "conformance", "seed": 20261123, "cases": conformance})
    dump(os.path.join(CASES, "smoke.json"), {"suite": "smoke", "seed": 1, "cases": smoke})
    for name, (path, seed) in OWN_SUITES.items():
        cases = importlib.import_module("suites." + name).cases()
        dump(os.path.join(CASES, path), {"suite": name, "seed": seed, "cases": cases})
        print(f"{name}: {len(cases)} case entries")
    print(f"conformance: {len(conformance)} case entries, smoke: {len(smoke)}")


if __name__ == "__main__":
    main()
