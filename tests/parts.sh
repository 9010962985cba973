#!/bin/sh
# make test's runner: each part on one line with its time and its own count, its output in a log
# (shown when the part fails, and its SKIPPED lines always), every part run even after a failure,
# then "N passed, N failed" (parts) alone on the last line. Exit 1 when any part failed.
# usage: tests/parts.sh LOGDIR NAME 'COMMAND' [NAME 'COMMAND']...
logs=$1; shift
mkdir -p "$logs"
passed=0; failed=0
while [ $# -ge 2 ]; do
  name=$1; cmd=$2; shift 2
  log="$logs/$(echo "$name" | tr ' /' '__').log"
  printf '%-22s ' "$name"
  start=$(date +%s.%N)
  if sh -c "$cmd" >"$log" 2>&1; then ok=1; else ok=0; fi
  secs=$(echo "$start $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}')
  # the part's own count: Criterion's synthesis, unittest's "Ran N tests", conform's "N passed, N failed", run.sh's "python: N scripts"
  detail=$(grep -E 'Synthesis:|^Ran [0-9]+ tests|^python: [0-9]+ scripts|^[0-9]+ passed, [0-9]+ failed|^zoo: .* catches |^verify:|^installed:|^rendered:|files: no path|^ascend-standin: [0-9]|^conform package test passed|^walls:|^check_golden: [0-9]|^check-golden-planted: ' "$log" | tail -1 |
           sed -e 's/^\[====\] Synthesis: //' -e 's/\x1b\[[0-9;]*m//g')
  if [ $ok = 1 ]; then passed=$((passed + 1)); printf 'ok     %6s s  %s\n' "$secs" "$detail"
  else failed=$((failed + 1)); printf 'FAILED %6s s  %s\n' "$secs" "$detail"; tail -30 "$log" | sed 's/^/    | /'; echo "    (whole log: $log)"; fi
  grep '^SKIPPED' "$log" | sed 's/^/    /'
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
