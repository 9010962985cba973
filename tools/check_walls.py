#!/usr/bin/env python3
"""The walls of the source tree (docs/architecture.md), checked from the #include lines:

* reference/ includes only its own headers and the C library's (no harness, optimized or package
  header), and optimized/ likewise only its own: the Makefile compiles each with its own -I flag,
  so a stray include is a compile error too; this names it at once, for every file;
* no include cycle between files (a header that reaches itself);
* no cycle between rooms: reference, optimized, harness/<room> (core, judge, impl, report, cmd,
  each ops/<family>), harness/main.c and harness/conform_plugin.h (the plugin ABI), an arrow
  from a room to another whenever one of its files includes one of the other's.

Exit 0 with a one-line summary, 1 with every broken rule listed."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_DIRS = ("reference", "optimized", "harness")
# what reference/ and optimized/ may take from the system: the C library, POSIX threads and the
# compiler's own (OpenMP, intrinsics); no package (gsl, cJSON, criterion)
SYSTEM_OK = {
    "assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h", "inttypes.h", "limits.h",
    "math.h", "stdalign.h", "stdarg.h", "stdatomic.h", "stdbool.h", "stddef.h", "stdint.h", "stdio.h",
    "stdlib.h", "string.h", "tgmath.h", "time.h", "pthread.h", "sched.h", "unistd.h", "omp.h",
    "immintrin.h",
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def sources():
    for top in SOURCE_DIRS:
        for d, _, names in os.walk(os.path.join(ROOT, top)):
            for n in sorted(names):
                if n.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, n), ROOT)


def room(path):
    parts = path.split("/")
    if parts[0] != "harness":
        return parts[0]
    if len(parts) == 2:
        return {"main.c": "harness/main", "conform_plugin.h": "harness/abi"}.get(parts[1], "harness/" + parts[1])
    if parts[1] == "ops":
        return "harness/ops/" + parts[2]
    return "harness/" + parts[1]


def search_path(path, all_dirs):
    """The folders an include of path is looked up in: its own folder, then its top folder's -I
    flags (the Makefile's INC_reference, INC_optimized, INC_HAR)"""
    top = path.split("/")[0]
    own = [os.path.dirname(path)]
    if top in ("reference", "optimized"):
        return own + [top]
    return own + ["reference", "optimized"] + all_dirs


def cycles(graph):
    """the strongly connected components with more than one node, or a node on itself (Tarjan)"""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    files = list(sources())
    harness_dirs = sorted({os.path.dirname(f) for f in files if f.startswith("harness/")})
    errors, file_graph, room_graph, why = [], {}, {}, {}
    for f in files:
        with open(os.path.join(ROOT, f), encoding="utf-8", errors="replace") as fh:
            lines = fh.readlines()
        top = f.split("/")[0]
        for no, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, name = m.groups()
            if kind == "<":
                if top in ("reference", "optimized") and name not in SYSTEM_OK:
                    errors.append(f"{f}:{no}: <{name}> is not a C library or compiler header: {top}/ includes only "
                                  f"its own headers and those")
                continue
            target = next((os.path.normpath(os.path.join(d, name)) for d in search_path(f, harness_dirs)
                           if os.path.isfile(os.path.join(ROOT, d, name))), None)
            if target is None:
                errors.append(f"{f}:{no}: \"{name}\" is not found on {top}/'s include path"
                              + (f" ({top}/ includes only its own headers)" if top != "harness" else ""))
                continue
            if top in ("reference", "optimized") and not target.startswith(top + "/"):
                errors.append(f"{f}:{no}: \"{name}\" is {target}: {top}/ includes only its own headers")
            file_graph.setdefault(f, set()).add(target)
            a, b = room(f), room(target)
            if a != b:
                room_graph.setdefault(a, set()).add(b)
                why.setdefault((a, b), f"{f}:{no} includes {target}")
    for comp in cycles(file_graph):
        errors.append("include cycle between files: " + " -> ".join(comp))
    for comp in cycles(room_graph):
        arrows = [why[(a, b)] for a in comp for b in comp if (a, b) in why]
        errors.append("include cycle between rooms " + ", ".join(comp) + ": " + "; ".join(arrows))
    if errors:
        print("walls broken:")
        for e in errors:
            print("  " + e)
        return 1
    n_arrows = sum(len(v) for v in room_graph.values())
    print(f"{len(files)} files, {len(set(map(room, files)))} rooms, {n_arrows} arrows between rooms: no include cycle; "
          f"reference/ and optimized/ include only their own headers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
