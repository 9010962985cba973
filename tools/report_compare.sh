#!/bin/sh
# Reports of two builds, field by field: the same scenarios run by OLD and NEW conform binaries
# (timings, durations, versions and the report's own path aside). For refactors that must not
# change a verdict, a message or a number. Usage: tools/report_compare.sh OLD_BUILD NEW_BUILD [WORK]
# OLD_BUILD/NEW_BUILD: build directories holding conform, plugins/ and zoo/ (make all and the zoo).
set -eu
old=$1 new=$2 work=${3:-/tmp/report-compare}
rm -rf "$work"; mkdir -p "$work"
# snapshots, so a rebuild while the scenarios run cannot mix two builds
for side in old new; do
    b=$(eval echo \$$side); mkdir -p "$work/bin-$side"
    cp -r "$b/conform" "$b/plugins" "$b/zoo" "$work/bin-$side/"
done
old=$work/bin-old new=$work/bin-new
scenario() { # NAME BUILD ARGS...: a run; its exit code and its reports
    name=$1 b=$2; shift 2
    mkdir -p "$work/$name"
    [ "$1" = run ] && set -- "$@" --threads 2 --quiet
    set +e; "$b/conform" "$@" --report-dir "$work/$name/r" >"$work/$name/out.txt" 2>&1
    echo "exit $?" >>"$work/$name/out.txt"; set -e
}
both() { # NAME ARGS... (the string @B@ stands for the build directory)
    name=$1; shift
    for side in old new; do
        b=$(eval echo \$$side)
        args=$(printf '%s\n' "$@" | sed "s|@B@|$b|g; s|@W@|$work/$side-$name|g")
        # shellcheck disable=SC2086
        (IFS='
'; scenario "$side-$name" "$b" $args)
    done
}
export_dir() { # SIDE NAME SEED DTYPE IMPL: a device directory written by IMPL, one output removed
    b=$(eval echo \$$1)
    "$b/conform" export cases/conformance.json --out "$work/$1-$2-export" --seed "$3" --dtype "$4" --outputs "$5" >/dev/null
    victim=$(find "$work/$1-$2-export" -name 'out*' -type f | LC_ALL=C sort | head -n 1)
    rm -f "$victim"
}
both seed1 run cases/conformance.json --seed 1
both seed2 run cases/conformance.json --seed 2 --impl plugin:@B@/zoo/rr_clockwise_inverted.so
both crash run cases/smoke.json --seed 7 --impl plugin:@B@/plugins/faulty_crash.so
for side in old new; do
    b=$(eval echo \$$side)
    export_dir $side dir 3 float32 "plugin:$b/zoo/gb_grid_grad_no_mult.so"
    export_dir $side dir16 4 float16 "plugin:$b/plugins/plugin_roi_align_v2.so"
done
both dir run cases/conformance.json --seed 3 --impl dir:@W@-export
both dir16 run cases/conformance.json --seed 4 --impl dir:@W@-export
# check on exported cases (a failing backward grid case and a passing float16 roi_align one)
check_args() { # DIR OP: conform check's arguments for the first exported case of OP with every output
    python3 - "$1" "$2" <<'PY'
import json, sys
d, op = sys.argv[1], sys.argv[2]
m = json.load(open(d + "/manifest.json"))
import os
for c in m["cases"]:
    outs = c.get("outputs", {})
    if c["op"] != op or not outs or not all(os.path.exists(d + "/" + o["path"]) for o in outs.values() if o.get("computed")): continue
    a = ["check", op]
    for k, v in c["attrs"].items():
        v = ",".join(map(str, v)) if isinstance(v, list) else str(v).lower() if isinstance(v, bool) else str(v)
        a += ["--attr", f"{k}={v}"]
    a += [x for k, f in c["inputs"].items() for x in ("--input", f"{k}={d}/{f}")]
    a += [x for k, o in outs.items() if o.get("computed") for x in ("--actual", f"{k}={d}/{o['path']}")]
    print("\n".join(a + ["--dtype", m["dtype"]])); break
PY
}
for side in old new; do
    b=$(eval echo \$$side)
    (IFS='
'; scenario "$side-check" "$b" $(check_args "$work/$side-dir-export" grid_sampler_2d_backward))
    (IFS='
'; scenario "$side-check16" "$b" $(check_args "$work/$side-dir16-export" roi_align))
done
python3 - "$work" "$old" "$new" <<'PY'
import json, re, sys, pathlib
work = pathlib.Path(sys.argv[1])
builds = {"old": sys.argv[2], "new": sys.argv[3]}
DROP = {"time_ref_s", "time_opt_s", "duration_s", "version", "date", "command", "repro", "started", "finished"}
def norm(v, side):
    if isinstance(v, dict):
        return {k: norm(x, side) for k, x in v.items() if k not in DROP}
    if isinstance(v, list):
        return [norm(x, side) for x in v]
    if isinstance(v, str):
        return v.replace(str(work / side), "WORK").replace(f"{side}-", "SIDE-").replace(builds[side], "BUILD")
    return v
def walk(a, b, path, out):
    if type(a) != type(b):
        out.append(f"{path}: {a!r} != {b!r}"); return
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b: out.append(f"{path}.{k}: only in {'new' if k in b else 'old'}")
            else: walk(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list):
        if len(a) != len(b): out.append(f"{path}: {len(a)} vs {len(b)} items")
        for i, (x, y) in enumerate(zip(a, b)): walk(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(f"{path}: {a!r} != {b!r}")
TIMING = re.compile(r'(\d+\.\d+ s\b|time="[\d.]+")')
bad = 0
for old in sorted(work.glob("old-*")):
    if old.name.endswith("-export") or old.name == "bin-old": continue
    name = old.name[4:]; new = work / ("new-" + name)
    diffs = []
    ja, jb = (json.loads((d / "r/report.json").read_text()) if (d / "r/report.json").exists() else None for d in (old, new))
    walk(norm(ja, "old"), norm(jb, "new"), "report", diffs)
    fields = 0
    def count(v):
        global fields
        if isinstance(v, dict): [count(x) for x in v.values()]
        elif isinstance(v, list): [count(x) for x in v]
        else: fields += 1
    count(norm(ja, "old"))
    for f in ("report.md", "report.html", "junit.xml", "../out.txt"):
        ta, tb = ((d / "r" / f).read_text() if (d / "r" / f).exists() else "" for d in (old, new))
        ta = TIMING.sub("T", ta.replace(str(work / "old"), "W").replace("old-", "S-").replace(builds["old"], "B"))
        tb = TIMING.sub("T", tb.replace(str(work / "new"), "W").replace("new-", "S-").replace(builds["new"], "B"))
        la, lb = ta.splitlines(), tb.splitlines()
        if la != lb:
            d = [f"{f}: line {i+1}: {x!r} != {y!r}" for i, (x, y) in enumerate(zip(la, lb)) if x != y][:5]
            diffs += d or [f"{f}: {len(la)} vs {len(lb)} lines"]
    cases = len(ja["cases"]) if ja else 0
    print(f"{name}: {cases} cases, {fields} report.json fields compared: " + ("identical" if not diffs else f"{len(diffs)} differences"))
    for d in diffs[:20]: print("   ", d)
    bad += bool(diffs)
sys.exit(1 if bad else 0)
PY
