#!/usr/bin/env bash
# make bench-contention: more threads must never be slower on a shared machine. A busy process
# holds core 0 (taskset) while every `make bench` problem runs with the optimized kernels at
# --threads 1 and at --threads = the cores, in alternating rounds (order flipped every round, so a
# drift of the machine's load hits both). Per op: the ratio t(cores) / t(1) of each round's
# medians, as its median and worst over the rounds. The goal is at most 1.3.
# NULL=T calibrates: both sides of every round run --threads T (t1 against t1' for NULL=1), so the
# ratios are the measurement's own noise under the same busy core, rounds and repeats. A worst
# round of the real run is a threading effect only where it stands clear of the null's worst.
# (docs/performance.md, round 8: on a 2-core KVM guest the nulls' worst of 9 rounds reached 1.3-2.0.)
set -euo pipefail
exe=${1:-build/conform}
cores=${CORES:-$(nproc)}
reps=${REPS:-7}
rounds=${ROUNDS:-5}
null=${NULL:-}
lo=${null:-1} hi=${null:-$cores} # the thread counts of the ratio's denominator and numerator
hi_name="t$hi"
[ -z "$null" ] || hi_name="t$hi'"

spin() { while :; do :; done; }
spin &
busy=$!
trap 'kill "$busy" 2>/dev/null' EXIT
command -v taskset >/dev/null && taskset -pc 0 "$busy" >/dev/null || echo "# taskset missing: the busy process is not pinned"

median_s() {
    without_impl "$@" # the optimized kernels only (bench_ops.sh)
    "$exe" bench "${bench_args[@]}" --impl optimized --repeat "$reps" |
        /usr/bin/env python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["median_s"])'
}

run_one() {
    local label=$1 t1=() tn=()
    for a in "$@"; do case $a in data_format=*) label="$label ${a#data_format=}";; esac; done
    for ((r = 0; r < rounds; r++)); do
        if ((r % 2 == 0)); then
            t1+=("$(median_s "$@" --threads "$lo")"); tn+=("$(median_s "$@" --threads "$hi")")
        else
            tn+=("$(median_s "$@" --threads "$hi")"); t1+=("$(median_s "$@" --threads "$lo")")
        fi
    done
    /usr/bin/env python3 - "$label" "t$lo" "$hi_name" "${t1[*]}" "${tn[*]}" <<'PY'
import statistics, sys
label, lo, hi = sys.argv[1:4]
t1 = [float(v) for v in sys.argv[4].split()]
tn = [float(v) for v in sys.argv[5].split()]
ratios = sorted(b / a for a, b in zip(t1, tn))
print(f"{label:30s} {lo} {statistics.median(t1) * 1e3:8.2f} ms  {hi} {statistics.median(tn) * 1e3:8.2f} ms  "
      f"ratio median {statistics.median(ratios):.2f} worst {ratios[-1]:.2f}  rounds {' '.join(f'{r:.2f}' for r in ratios)}")
PY
}

if [ -n "$null" ]; then
    echo "# contention null: core 0 busy; optimized at --threads $null against itself, $rounds alternating rounds of $reps repeats"
else
    echo "# contention: core 0 busy; optimized at --threads $cores against --threads 1, $rounds alternating rounds of $reps repeats"
fi
echo "# load before: $(uptime)"
. "$(dirname "$0")/bench_ops.sh"
bench_ops
echo "# load after: $(uptime)"
