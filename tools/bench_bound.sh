#!/usr/bin/env bash
# What bounds each op that is not within 1.5x of its memory floor: every
# `make bench` problem timed as make bench times it, beside a hot-cache estimate of its work: the
# same kernel at three cut sizes whose working sets stay in cache (fewer rois or rows;
# every work unit does the bench's work), t = a + b X fitted and extrapolated to the bench size
# (tools/bench_bound.py says how and why). An op whose estimate alone is above 1.5x its floor is
# bound by its work (arithmetic and gathers), one whose median is well above its estimate by
# memory. At --threads 2 (make bench's) and 1, ROUNDS (5) alternating rounds of REPS (21) repeats
# (the hot points 4 x REPS). Usage: tools/bench_bound.sh [build/conform]; OPS="op ..." as in
# tools/bench_ops.sh.
set -euo pipefail
exe=${1:-build/conform}
here=$(dirname "$0")
out=$(mktemp)
trap 'rm -f "$out"' EXIT

run_one() {
    local label=$1
    for a in "$@"; do case $a in data_format=*) label="$label ${a#data_format=}";; esac; done
    /usr/bin/env python3 "$here/bench_bound.py" --conform "$exe" --threads "${THREADS_LIST:-2 1}" \
        --rounds "${ROUNDS:-5}" --reps "${REPS:-21}" --out "$out" -- "$label" "$@"
}

caches() {
    local d
    for d in /sys/devices/system/cpu/cpu0/cache/index*; do
        [ "$(cat "$d/type")" = Instruction ] && continue
        printf ' L%s %s (cpus %s)' "$(cat "$d/level")" "$(cat "$d/size")" "$(cat "$d/shared_cpu_list")"
    done
}

echo "# bound: optimized median vs floor vs hot-cache work estimate; commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# caches of cpu0:$(caches); load: $(uptime)"
# shellcheck source=tools/bench_ops.sh
. "$here/bench_ops.sh"
bench_ops
echo "# load after: $(uptime)"
/usr/bin/env python3 "$here/bench_bound.py" --summary "$out"
echo "# hot runs still write their outputs to DRAM (the kernels' streaming stores); ws = compulsory bytes of the hot points (per-thread scratch planes not counted)"
