#!/bin/sh
# make hunt: short fixed-seed hunts that must find and shrink a few zoo bugs (their FOUND suites
# replayed with conform run must fail), and find nothing in the bug-free zoo build and the
# optimized path. SECONDS_EACH (default 3) bounds each hunt; make hunt-long raises it.
set -u
CONFORM=${1:-build/conform}
ZOO=${2:-build/zoo}
EACH=${SECONDS_EACH:-3}
T=${TMPDIR:-/tmp}/conform-hunt.$$
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
fail=0
say() { printf '%s\n' "$*"; }

# bug op plugin: found within EACH seconds from seed 1, shrunk small, replayed failing
for spec in ra_aligned_ignored:roi_align rb_batch_truncated:roi_align_v2_backward \
            rr_angle_degrees:roi_align_rotated df_xy_swapped:deformable_offsets \
            gf_reflect_once:grid_sampler_2d gb_grid_grad_xy_swapped:grid_sampler_2d_backward \
            cell_w_for_h:deformable_offsets; do
    id=${spec%%:*}; op=${spec##*:}
    so=$ZOO/$id.so
    [ "$id" = cell_w_for_h ] && so=${ZOO}_hunt/cell_w_for_h.so
    out=$T/$id.json
    "$CONFORM" hunt "$op" --impl "plugin:$so" --finite --seed 1 --seconds "$EACH" --max-found 1 --quiet --out "$out" \
        > "$T/$id.log" 2>&1
    rc=$?
    if [ $rc -ne 1 ]; then say "FAIL $id: hunt exited $rc, expected 1 (found)"; cat "$T/$id.log"; fail=1; continue; fi
    # a few rois or grid points, planes of a few pixels: every input of the minimal case is small
    size=$(/usr/bin/python3 - "$out" <<'PY'
import json, sys
from functools import reduce
c = json.load(open(sys.argv[1]))["cases"][0]
n = {k: reduce(lambda a, b: a * b, v, 1) for k, v in c["shapes"].items()}
big = [k for k, v in n.items() if v > 64]
rois = [v[0] if v[-1] in (5, 6) and len(v) == 2 else None for v in c["shapes"].values()]
print(("too large: %s" % big) if big else "ok " + " ".join("%s=%s" % (k, v) for k, v in sorted(c["shapes"].items())))
PY
)
    case $size in ok*) ;; *) say "FAIL $id: shrunk case $size"; fail=1; continue;; esac
    "$CONFORM" run "$out" --impl "plugin:$so" --report-dir "$T/rep_$id" --quiet > "$T/run_$id.log" 2>&1
    rc=$?
    if [ $rc -ne 1 ]; then say "FAIL $id: conform run of the found suite exited $rc, expected 1"; fail=1; continue; fi
    say "ok   $id: found, shrunk to $size, replays failing"
done

# nothing to find: the bug-free zoo build and the optimized path (finite inputs; docs/hunt.md)
for op in roi_align deformable_offsets grid_sampler_2d; do
    for impl in "plugin:$ZOO/none.so" optimized; do
        "$CONFORM" hunt "$op" --impl "$impl" --finite --seed 1 --seconds 2 --quiet --out "$T/none.json" > "$T/none.log" 2>&1
        rc=$?
        if [ $rc -ne 0 ]; then say "FAIL $op on $impl: hunt exited $rc, expected 0 (nothing found)"; cat "$T/none.log"; fail=1
        else say "ok   $op on $impl: nothing found ($(tail -1 "$T/none.log" | sed 's/.*: \([0-9]* cases\).*/\1/'))"; fi
    done
done

# --isa: run's values through the one ISA choice point; the summary names the ISA judged; a name
# that is none, or an ISA this CPU lacks, is exit 2
"$CONFORM" hunt roi_align --isa scalar --finite --seed 1 --seconds 1 --quiet --out "$T/isa.json" > "$T/isa.log" 2>&1
rc=$?
if [ $rc -ne 0 ] || ! grep -q 'optimized (isa scalar)' "$T/isa.log"; then
    say "FAIL hunt --isa scalar: exit $rc, expected 0 and 'isa scalar' in the summary"; cat "$T/isa.log"; fail=1
else say "ok   hunt --isa scalar"; fi
"$CONFORM" hunt roi_align --isa sse9 --seconds 1 > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { say "FAIL hunt --isa sse9 exited $rc, expected 2"; fail=1; }

# --waivers: rb_batch_truncated truncates a batch index in (-1, 0) to image 0, which is PyTorch's
# documented divergence: with the PyTorch waivers every find is waived (exit 0, none in "cases",
# each waived case keeps a batch index in (-1, 0)); a waiver whose "when" does not hold on it
# leaves the bug found (exit 1); a bad "when" is exit 2
W="$T/waived.json"
"$CONFORM" hunt roi_align_v2_backward --impl "plugin:$ZOO/rb_batch_truncated.so" --finite --seed 1 \
    --seconds $((EACH * 2)) --max-found 1 --quiet --waivers cases/waivers_pytorch_cpu.json --out "$W" > "$T/w.log" 2>&1
rc=$?
check=$(/usr/bin/python3 - "$W" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w = d.get("waived", [])
bad = [c["name"] for c in w if not any(-1 < r < 0 for r in c["gen"]["boxes"]["data"][0::5]) or "waiver" not in c]
print("ok %d waived" % len(w) if w and not d["cases"] and not bad else "cases %d, waived %d, bad %s" % (len(d["cases"]), len(w), bad))
PY
)
case "$rc $check" in "0 ok"*) say "ok   hunt --waivers: rb_batch_truncated $check";;
    *) say "FAIL hunt --waivers: exit $rc, $check"; cat "$T/w.log"; fail=1;; esac
# dg_window_open's offset gradient on the window lines is torchvision's one-sided one: every find
# has a sample exactly on a line (the sample_on_window_line "when"), so all are waived
"$CONFORM" hunt deformable_offsets_grad --impl "plugin:$ZOO/dg_window_open.so" --finite --seed 1 --seconds "$EACH" \
    --quiet --waivers cases/waivers_pytorch_cpu.json --out "$T/dg.json" > "$T/dg.log" 2>&1
rc=$?
nw=$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d.get("waived", [])) if not d["cases"] else -1)' "$T/dg.json" 2>/dev/null)
if [ $rc -eq 0 ] && [ "${nw:-0}" -ge 1 ]; then say "ok   hunt --waivers: dg_window_open, $nw waived on window lines"
else say "FAIL hunt --waivers: dg_window_open exit $rc, waived ${nw:-none} (-1: a find not waived)"; cat "$T/dg.log"; fail=1; fi
printf '%s\n' '{"waivers": [{"pattern": "*/x", "reason": "a fraction in (0.25, 0.75)", "link": "docs/hunt.md",' \
    ' "when": {"ops": ["roi_align_v2_backward"], "input": "boxes", "column": 0, "in": [0.25, 0.75]}}]}' > "$T/other.json"
"$CONFORM" hunt roi_align_v2_backward --impl "plugin:$ZOO/rb_batch_truncated.so" --finite --seed 1 --seconds "$EACH" \
    --max-found 1 --quiet --waivers "$T/other.json" --out "$T/other_found.json" > "$T/o.log" 2>&1
rc=$?
[ $rc -eq 1 ] || { say "FAIL hunt --waivers with a waiver that does not hold: exit $rc, expected 1"; cat "$T/o.log"; fail=1; }
sed 's/"in": \[0.25, 0.75\]/"in": [1]/' "$T/other.json" > "$T/bad.json"
"$CONFORM" hunt roi_align_v2_backward --waivers "$T/bad.json" --seconds 1 > "$T/b.log" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q '"in" is \[lo, hi\]' "$T/b.log" || { say "FAIL hunt --waivers with a bad \"when\" exited $rc, expected 2"; fail=1; }

# NaN and infinity in the inputs: the deformable ops' minimal cases of the hunt (a non-finite input
# read or not within rounding of a cell line, an infinite gradient adding nothing) replay passing,
# and short hunts without --finite find nothing (docs/hunt.md)
for impl in "plugin:$ZOO/none.so" optimized; do
    "$CONFORM" run tests/hunt/deformable_nonfinite.json --impl "$impl" --report-dir "$T/rep_nonfinite" --quiet \
        > "$T/nonfinite.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then say "FAIL tests/hunt/deformable_nonfinite.json on $impl: exited $rc, expected 0"; fail=1
    else say "ok   tests/hunt/deformable_nonfinite.json on $impl: every case passes"; fi
    for op in deformable_offsets deformable_offsets_grad; do
        "$CONFORM" hunt "$op" --impl "$impl" --seed 1 --seconds 2 --quiet --out "$T/none.json" > "$T/none.log" 2>&1
        rc=$?
        if [ $rc -ne 0 ]; then say "FAIL $op on $impl with NaN and infinity: hunt exited $rc, expected 0"; cat "$T/none.log"; fail=1
        else say "ok   $op on $impl with NaN and infinity: nothing found ($(tail -1 "$T/none.log" | sed 's/.*: \([0-9]* cases\).*/\1/'))"; fi
    done
done

# bad usage is exit 2
"$CONFORM" hunt no_such_op > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { say "FAIL hunt no_such_op exited $rc, expected 2"; fail=1; }
"$CONFORM" hunt roi_align --seconds 1 --cases 5 > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { say "FAIL hunt --seconds with --cases exited $rc, expected 2"; fail=1; }

# two found suites combine without duplicates
"$CONFORM" hunt --combine "$T/ra_aligned_ignored.json" "$T/ra_aligned_ignored.json" "$T/df_xy_swapped.json" \
    --out "$T/combined.json" > /dev/null 2>&1
n=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["cases"]))' "$T/combined.json" 2>/dev/null)
[ "$n" = 2 ] || { say "FAIL hunt --combine: $n cases, expected 2"; fail=1; }

[ $fail -eq 0 ] && say "hunt: all passed"
exit $fail
