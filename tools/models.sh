#!/usr/bin/env bash
# make models: the models suite (cases/models.json) on every core, then what a performance report
# needs: the suite's wall time with the load beside it, the cases whose golden took longest,
# and the slowest case's golden alone at --threads 1 and 2 (ROUNDS alternating rounds; 0 skips it).
# The run's exit code is the target's.
set -uo pipefail
exe=${1:-build/conform}
report=${2:-build/models-report}
rounds=${ROUNDS:-2}
[ -n "${CI_NODE_TOTAL:-}" ] && rounds=0 # a CI shard: its cases only
echo "# load before: $(uptime)"
t0=$(date +%s.%N)
"$exe" run cases/models.json --report-dir "$report" ${MODELS_ARGS:-}
rc=$?
t1=$(date +%s.%N)
echo "# models suite: $(/usr/bin/env python3 -c "print(round($t1 - $t0, 1))") s wall (${MODELS_ARGS:-default --jobs and --threads: every core}); load after: $(uptime)"
slowest=$(/usr/bin/env python3 - "$report/report.json" <<'PY'
import json, sys
cases = json.load(open(sys.argv[1]))["cases"]
cases.sort(key=lambda c: -(c.get("time_ref_s") or 0))
for c in cases[:5]:
    print(f"# golden {c.get('time_ref_s') or 0:8.2f} s  optimized {c.get('time_opt_s') or 0:6.2f} s  {c['id']}", file=sys.stderr)
print(cases[0]["id"] if cases else "")
PY
)
if [ -n "$slowest" ] && [ "$rounds" -gt 0 ]; then
    golden_s() { # THREADS: the golden's seconds of the slowest case run alone
        "$exe" run cases/models.json --filter "$slowest" --jobs 1 --threads "$1" --report-dir "$report-t$1" --quiet >/dev/null
        /usr/bin/env python3 -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["cases"][0]["time_ref_s"], 2))' "$report-t$1/report.json"
    }
    for ((r = 0; r < rounds; r++)); do
        if ((r % 2 == 0)); then a=$(golden_s 1); b=$(golden_s 2); else b=$(golden_s 2); a=$(golden_s 1); fi
        echo "# $slowest golden alone: $a s at --threads 1, $b s at --threads 2 (round $((r + 1)); load $(cut -d' ' -f1 /proc/loadavg))"
    done
fi
exit $rc
