#!/usr/bin/env bash
# make bench-contention: more threads must never be slower on a shared machine. A busy process
# holds core 0 (taskset) while every `make bench` problem runs with the optimized kernels at
# --threads 1 and at --threads = the cores, in alternating rounds (order flipped every round, so a
# drift of the machine's load hits both). Per op: the ratio t(cores) / t(1) of each round's
# medians, as its median and worst over the rounds. The goal (issue 28) is at most 1.3.
set -euo pipefail
exe=${1:-build/conform}
cores=${CORES:-$(nproc)}
reps=${REPS:-7}
rounds=${ROUNDS:-5}

spin() { while :; do :; done; }
spin &
busy=$!
trap 'kill "$busy" 2>/dev/null' EXIT
command -v taskset >/dev/null && taskset -pc 0 "$busy" >/dev/null || echo "# taskset missing: the busy process is not pinned"

median_s() {
    "$exe" bench "$@" --impl optimized --repeat "$reps" |
        /usr/bin/env python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["median_s"])'
}

run_one() {
    local label=$1 t1=() tn=()
    for a in "$@"; do case $a in data_format=*) label="$label ${a#data_format=}";; esac; done
    for ((r = 0; r < rounds; r++)); do
        if ((r % 2 == 0)); then
            t1+=("$(median_s "$@" --threads 1)"); tn+=("$(median_s "$@" --threads "$cores")")
        else
            tn+=("$(median_s "$@" --threads "$cores")"); t1+=("$(median_s "$@" --threads 1)")
        fi
    done
    /usr/bin/env python3 - "$label" "$cores" "${t1[*]}" "${tn[*]}" <<'PY'
import statistics, sys
label, cores = sys.argv[1], sys.argv[2]
t1 = [float(v) for v in sys.argv[3].split()]
tn = [float(v) for v in sys.argv[4].split()]
ratios = sorted(b / a for a, b in zip(t1, tn))
print(f"{label:30s} t1 {statistics.median(t1) * 1e3:8.2f} ms  t{cores} {statistics.median(tn) * 1e3:8.2f} ms  "
      f"ratio median {statistics.median(ratios):.2f} worst {ratios[-1]:.2f}  rounds {' '.join(f'{r:.2f}' for r in ratios)}")
PY
}

echo "# contention: core 0 busy; optimized at --threads $cores against --threads 1, $rounds alternating rounds of $reps repeats"
echo "# load before: $(uptime)"
. "$(dirname "$0")/bench_ops.sh"
bench_ops
echo "# load after: $(uptime)"
