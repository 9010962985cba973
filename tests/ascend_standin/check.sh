#!/bin/sh
# make ascend-standin: devices/ascend/conform_ascend.c built against the HOST STAND-IN of the
# Ascend ACL/aclnn entry points (tests/ascend_standin: each kernel contract over conform's
# reference; not CANN, no NPU). It proves the plugin's marshalling, not the kernels:
#   1. the smoke suite passes on all 8 ops (rotated through aclnnRoiAlignRotated(Grad));
#   2. the rotated ops pass through the graph ops RoiAlignRotated(Grad) too (CANN >= 9.0 has no aclnn);
#   3. the grid ops pass at the other dtypes aclnnGridSampler2D(Backward) list, bicubic + float64
#      being refused by the contract (an error, nothing else), and roi_align, deformable at float16;
#   4. each planted marshalling fault fails its op's cases.
# usage: tests/ascend_standin/check.sh build/conform build/ascend-standin "1 2 3 4" [threads]
set -u
CONFORM=$1 DIR=$2 FAULTS=$3 THREADS=${4:-2}
fail() { echo "ascend-standin: FAILED: $*" >&2; exit 1; }
# (the reference proofs are make test's own part: not repeated in each of these runs)
run() { "$CONFORM" run cases/smoke.json --threads "$THREADS" --quiet --no-proofs "$@" >"$DIR/last.log" 2>&1; }
# counts of a report: "passed failed error other not_applicable" over its cases. not_applicable is a
# case whose finite inputs overflow the run's dtype (1e9 or 2^24 coordinates at float16): the
# harness judges nothing there for any implementation, so it is neither a pass nor a fault here
counts() {
  python3 - "$1" <<'PY'
import json, sys
cases = json.load(open(sys.argv[1] + "/report.json"))["cases"]
n = {"passed": 0, "failed": 0, "error": 0, "other": 0, "not_applicable": 0}
for c in cases:
    n[c["status"] if c["status"] in n else "other"] += 1
print(n["passed"], n["failed"], n["error"], n["other"], n["not_applicable"])
PY
}
bicubic_double_only() {   # every non-passing case is a bicubic one (interpolation_mode 2), refused
  python3 - "$1" <<'PY'
import json, sys
bad = [c for c in json.load(open(sys.argv[1] + "/report.json"))["cases"]
       if c["status"] not in ("passed", "not_applicable") and not (c["status"] == "error" and "interpolation_mode=2" in c["id"])]
print(len(bad))
PY
}

echo "ascend-standin: the Ascend plugin through the HOST STAND-IN (not CANN, no NPU)"
run --impl "plugin:$DIR/conform_ascend.so" --report-dir "$DIR/report" || fail "smoke suite on all 8 ops (see $DIR/report)"
smoke=$(counts "$DIR/report")
echo "  smoke suite, all 8 ops, aclnn routes: $smoke (passed failed error other not_applicable)"
run --impl "plugin:$DIR/conform_ascend_aclop.so" --op roi_align_rotated --op roi_align_rotated_grad \
    --report-dir "$DIR/report-aclop" || fail "rotated ops through the graph ops"
echo "  rotated ops through the graph ops RoiAlignRotated(Grad): $(counts "$DIR/report-aclop")"
for dt in float16 bfloat16 float64; do
  run --impl "plugin:$DIR/conform_ascend.so" --dtype $dt --op grid_sampler_2d --op grid_sampler_2d_backward \
      --report-dir "$DIR/report-grid-$dt"
  [ "$(bicubic_double_only "$DIR/report-grid-$dt")" = 0 ] || fail "grid ops at $dt (see $DIR/report-grid-$dt)"
  [ $dt = float64 ] || [ "$(counts "$DIR/report-grid-$dt" | cut -d' ' -f2-4)" = "0 0 0" ] || fail "grid ops at $dt"
  echo "  grid ops at $dt: $(counts "$DIR/report-grid-$dt") (passed failed error other not_applicable)"
done
run --impl "plugin:$DIR/conform_ascend.so" --dtype float16 --op roi_align --op deformable_offsets \
    --op deformable_offsets_grad --report-dir "$DIR/report-f16" || fail "float16 roi_align / deformable"
echo "  roi_align and deformable ops at float16: $(counts "$DIR/report-f16")"

for f in $FAULTS; do
  case $f in
    1) what="pooled sizes swapped"; ops="--op roi_align";;
    2) what="NCHW sent where the kernel takes NHWC"; ops="--op roi_align_rotated --op roi_align_rotated_grad";;
    3) what="rois not transposed to [6, n]"; ops="--op roi_align_rotated --op roi_align_rotated_grad";;
    4) what="strides in NCHW order under data_format NHWC"; ops="--op deformable_offsets --op deformable_offsets_grad";;
  esac
  # shellcheck disable=SC2086
  run --impl "plugin:$DIR/conform_ascend_fault$f.so" $ops --report-dir "$DIR/report-fault$f"
  rc=$?
  [ $rc = 1 ] || fail "planted fault $f ($what) was not caught (exit $rc)"
  echo "  planted fault $f ($what): caught, $(counts "$DIR/report-fault$f") (passed failed error other not_applicable)"
done
echo "ascend-standin: ${smoke%% *} smoke cases passed on all 8 ops, every planted fault ($FAULTS) caught"
