#!/bin/sh
# make test's runner: each part on one line with its time and its own count, its output in a log
# (shown when the part fails, and its SKIPPED lines always), every part run even after a failure,
# then "N passed, N failed" (parts) alone on the last line. Exit 1 when any part failed.
# The parts run PARTS_LANES at a time (default 2): many spend part of their time on one core
# (Python, a single-threaded step, a compile), so a second lane fills the other. Each lane takes
# the next part not yet taken, in the order given; the lines are printed in that order whatever
# order the parts end in. PARTS_LANES=1 runs them one after the other.
# usage: tests/parts.sh LOGDIR NAME 'COMMAND' [NAME 'COMMAND']...
logs=$1; shift

# make -n test: make runs this line anyway (it names $(MAKE)), so print the parts instead of running
# them. GNU make puts the single-letter flags first in MAKEFLAGS, without a dash ("n", "ns", ...).
case "${MAKEFLAGS%% *}" in
  -*) ;;
  *n*) while [ $# -ge 2 ]; do printf '%s: %s\n' "$1" "$2"; shift 2; done; exit 0 ;;
esac
mkdir -p "$logs"
lanes=${PARTS_LANES:-2}
state="$logs/.parts"
rm -rf "$state"; mkdir -p "$state"

n=0
for a in "$@"; do n=$((n + 1)); done
n=$((n / 2))

log_of() { echo "$logs/$(echo "$1" | tr ' /' '__').log"; }

# one part: its log, then its outcome and time in $state/I (written last, so its presence means done)
run_part() {   # run_part I NAME COMMAND
  log=$(log_of "$2")
  start=$(date +%s.%N)
  if sh -c "$3" >"$log" 2>&1; then ok=1; else ok=0; fi
  secs=$(echo "$start $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}')
  echo "$ok $secs" >"$state/$1.tmp" && mv "$state/$1.tmp" "$state/$1"
}

# a lane: every part in order that no other lane has taken (mkdir is the atomic claim)
lane() {
  i=0
  while [ $# -ge 2 ]; do
    i=$((i + 1))
    if mkdir "$state/claim.$i" 2>/dev/null; then run_part $i "$1" "$2"; fi
    shift 2
  done
}

pids=""
l=0
while [ $l -lt "$lanes" ]; do
  lane "$@" </dev/null &
  pids="$pids $!"
  l=$((l + 1))
done
trap 'kill $pids 2>/dev/null' INT TERM

passed=0; failed=0; i=0
while [ $# -ge 2 ]; do
  i=$((i + 1)); name=$1; shift 2
  log=$(log_of "$name")
  printf '%-22s ' "$name"
  while [ ! -f "$state/$i" ]; do sleep 0.2; done
  read -r ok secs <"$state/$i"
  # the part's own count: Criterion's synthesis, unittest's "Ran N tests", conform's "N passed, N failed", run.sh's "python: N scripts"
  detail=$(grep -E 'Synthesis:|^Ran [0-9]+ tests|^python: [0-9]+ scripts|^[0-9]+ passed, [0-9]+ failed|^zoo: .* catches |^verify:|^installed:|^rendered:|files: no path|^ascend-standin: [0-9]|^conform package test passed|^walls:|^check_golden: [0-9]|^check-golden-planted: ' "$log" | tail -1 |
           sed -e 's/^\[====\] Synthesis: //' -e 's/\x1b\[[0-9;]*m//g')
  if [ "$ok" = 1 ]; then passed=$((passed + 1)); printf 'ok     %6s s  %s\n' "$secs" "$detail"
  else failed=$((failed + 1)); printf 'FAILED %6s s  %s\n' "$secs" "$detail"; tail -30 "$log" | sed 's/^/    | /'; echo "    (whole log: $log)"; fi
  grep '^SKIPPED' "$log" | sed 's/^/    /'
done
wait
rm -rf "$state"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
