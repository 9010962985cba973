#!/bin/sh
# The installed tool used as a user would, from a directory that is not the repository:
# `conform` finds its suites through its own location, runs (part of) the default suite, proves
# its references from the installed golden vectors, and the Python helper imports with no
# PYTHONPATH, through the prefix's interpreter, and judges a kernel (also as a pytest fixture).
# usage: tests/install_check.sh PREFIX   (after make install PREFIX=PREFIX)
set -eu
prefix=$1
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/conform_install_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
unset CONFORM CONFORM_DATA PYTHONPATH || true
fail() { echo "install check: $*" >&2; exit 1; }

# the default suite, found from the binary's location: every case listed, a shard of it run (the
# proofs once, below, by verify from the installed golden vectors)
n_inst=$("$prefix/bin/conform" run --list | wc -l)
n_repo=$(cd "$repo" && build/conform run --list | wc -l)
[ "$n_inst" -gt 0 ] && [ "$n_inst" = "$n_repo" ] || fail "installed conform lists $n_inst cases of the default suite, the repository $n_repo"
"$prefix/bin/conform" run --shard 1/12 --no-proofs --report-dir "$work/report" --quiet --threads 2 >"$work/run.log" || { cat "$work/run.log"; fail "conform run failed"; }
grep -q "$prefix/share/conform/cases/conformance.json" "$work/report/report.json" || fail "the report does not name the installed suite"
grep -q "\"repro\":.*\"$prefix/bin/conform run " "$work/report/report.json" || fail "the repro lines do not name the installed binary"
"$prefix/bin/conform" run cases/smoke.json --filter 'smoke/fwd*' --no-proofs --report-dir "$work/smoke" --quiet >/dev/null || fail "conform run cases/smoke.json (installed) failed"
"$prefix/bin/conform" verify --op roi_align >"$work/verify.log" || { cat "$work/verify.log"; fail "conform verify failed"; }
grep -q golden "$work/verify.log" || fail "verify ran no golden proof from the installed vectors"
CONFORM_DATA=/nonexistent "$prefix/bin/conform" run --list >/dev/null 2>&1 && fail "CONFORM_DATA is not honoured"

# the Python helper: its site folder is read by the prefix's interpreter, no PYTHONPATH
py=$prefix/bin/python3
"$py" -c 'import conform_check' || fail "the prefix's python3 cannot import conform_check"
if ! "$py" -c 'import numpy' 2>/dev/null; then
  echo "SKIPPED installed Python check: no numpy"
  echo "installed: conform ran $n_inst cases listed, a shard run, verify; python import only"; exit 0
fi
cat >"$work/test_kernel.py" <<'PY'
import numpy as np
import conform_check

ATTRS = {"pooled_h": 2, "pooled_w": 2, "spatial_scale": 1.0, "sampling_ratio": 2, "aligned": False}
X = np.arange(1, 37, dtype=np.float32).reshape(1, 1, 6, 6)
ROIS = np.array([[0, 0, 0, 4, 4]], np.float32)
GOOD = np.array([[[[8, 10], [20, 22]]]], np.float32)   # the input, 1 + 6y + x, is linear: a bin averages to its centre

def test_good(conform_check):
    assert conform_check("roi_align", ATTRS, {"input": X, "rois": ROIS}, {"output": GOOD}).passed

def test_bad(conform_judge):
    assert conform_judge("roi_align", ATTRS, {"input": X, "rois": ROIS}, {"output": GOOD + 1}).status == "failed"

if __name__ == "__main__":
    v = conform_check.check("roi_align", ATTRS, {"input": X, "rois": ROIS}, {"output": GOOD}, workdir=".")
    assert v.passed and conform_check.INSTALLED_CONFORM.startswith(%r), conform_check.INSTALLED_CONFORM
    print("ok")
PY
sed -i "s|%r|'$prefix'|" "$work/test_kernel.py"
"$py" "$work/test_kernel.py" >/dev/null || fail "the installed helper did not judge a kernel"
if "$py" -c 'import pytest' 2>/dev/null; then
  "$py" -m pytest -q -p no:cacheprovider --basetemp="$work/pytest" "$work/test_kernel.py" >"$work/pytest.log" 2>&1 || { cat "$work/pytest.log"; fail "pytest with the conform plugin failed"; }
  grep -q '2 passed' "$work/pytest.log" || { cat "$work/pytest.log"; fail "the pytest plugin's fixtures did not run"; }
  plugin="pytest plugin"
else
  echo "SKIPPED pytest plugin check: no pytest for $py (apt-get install python3-pytest)"
  plugin="no pytest"
fi
echo "installed: from another directory, $n_inst cases listed, a shard run, verify, a Python check, $plugin"
