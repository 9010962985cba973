#!/usr/bin/env bash
# Is an op bound by memory? Every `make bench` problem at --threads 1 and --threads 2 (alternating
# rounds; REPS repeats each, ROUNDS rounds), with the bandwidth each median achieves (the op's
# compulsory bytes over it). A kernel bound by bandwidth gains little from its second thread and
# moves close to the stream rate `make bench` prints; one bound by its own work gains nearly 2x.
# Usage: tools/bench_scaling.sh [build/conform]; OPS="op ..." as in tools/bench_ops.sh.
set -euo pipefail
exe=${1:-build/conform}
reps=${REPS:-11}
rounds=${ROUNDS:-3}

med() {
    without_impl "$@" # the optimized kernels only (bench_ops.sh)
    "$exe" bench "${bench_args[@]}" --impl optimized --repeat "$reps" |
        /usr/bin/env python3 -c 'import json, sys; d = json.loads(sys.stdin.readline()); print(d["median_s"], d["bytes"])'
}

run_one() {
    local label=$1 t b r1=() r2=()
    for a in "$@"; do case $a in data_format=*) label="$label ${a#data_format=}";; esac; done
    for ((r = 0; r < rounds; r++)); do
        read -r t b < <(med "$@" --threads 1); r1+=("$t")
        read -r t b < <(med "$@" --threads 2); r2+=("$t")
    done
    /usr/bin/env python3 - "$label" "$b" "${r1[*]}" "${r2[*]}" <<'PY'
import statistics, sys
label, nbytes = sys.argv[1], float(sys.argv[2])
m1 = statistics.median(float(v) for v in sys.argv[3].split())
m2 = statistics.median(float(v) for v in sys.argv[4].split())
print(f"{label:30s} t1 {m1 * 1e3:7.2f} ms ({nbytes / m1 / 1e9:5.1f} GB/s)  "
      f"t2 {m2 * 1e3:7.2f} ms ({nbytes / m2 / 1e9:5.1f} GB/s)  t1/t2 {m1 / m2:4.2f}")
PY
}

echo "# scaling: optimized at --threads 1 and 2, $rounds alternating rounds of $reps repeats; load: $(uptime)"
. "$(dirname "$0")/bench_ops.sh"
bench_ops
