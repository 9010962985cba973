#!/usr/bin/env bash
# make bench: the speed goals, measured with `conform bench` (median of repeats,
# 2 threads, against a memory-bandwidth floor), then side by side with PyTorch/torchvision on the
# same inputs when /usr/bin/python3 has them (tools/bench_peers.py; PEERS=0 skips them). OPS="op ..." runs
# only those ops. Speed is never a unit test.
set -euo pipefail
exe=${1:-build/conform}
threads=${THREADS:-2}
reps=${REPS:-21}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
run_one() {
    local label=$1
    for a in "$@"; do case $a in data_format=*) label="$label ${a#data_format=}";; esac; done
    local lines
    lines=$("$exe" bench "$@" --threads "$threads" --repeat "$reps")
    echo "$lines"
    echo "$lines" | sed "s|^{|{\"label\": \"$label\", |" >>"$out"
}

echo "# load before: $(uptime)"
. "$(dirname "$0")/bench_ops.sh"
bench_ops
echo "# load after: $(uptime)"
# one line per op: the optimized median against its floor, and the bandwidth that median achieves
# (compulsory bytes / median) beside the stream rate measured in the same run
/usr/bin/env python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'op':32s} {'impl':9s} {'median ms':>10s} {'floor ms':>9s} {'x floor':>8s} {'achieved GB/s':>14s} {'stream GB/s':>12s}")
for r in rows:
    got = r["bytes"] / r["median_s"] / 1e9 if r["median_s"] > 0 else 0
    print(f"{r['label']:32s} {r['impl']:9s} {r['median_s'] * 1e3:10.3f} {r['floor_s'] * 1e3:9.3f} "
          f"{r['median_over_floor']:8.2f} {got:14.1f} {r['stream_gbs']:12.1f}")
PY

if [ "${PEERS:-1}" = 0 ]; then
    echo "# PEERS=0: peer comparison skipped"
elif /usr/bin/python3 -c "import torch, torchvision, numpy" 2>/dev/null; then
    echo "# side by side with the PyTorch peers (same inputs, same threads)"
    /usr/bin/python3 "$(dirname "$0")/bench_peers.py" --conform "$exe" --threads "$threads" --reps "$reps"
else
    echo "# PyTorch/torchvision not installed: peer comparison skipped (apt-get install python3-torch python3-torchvision)"
fi
