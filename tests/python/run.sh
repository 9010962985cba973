#!/bin/sh
# The Python tests of `make test`: each runs with the first python3 that has what it needs
# ($PYTHON, then /usr/bin/python3, then python3 on PATH), and is skipped, saying so, where none has.
# The last line counts the whole part: scripts passed, the unittest tests inside them, scripts skipped.
# usage: tests/python/run.sh build/conform
CONFORM=${1:-build/conform}
export CONFORM
here=$(dirname "$0")
scripts=0 tests=0 skipped=0

find_python() {   # find_python "import numpy"
  for p in ${PYTHON:-} /usr/bin/python3 python3; do
    command -v "$p" >/dev/null 2>&1 && "$p" -c "$1" >/dev/null 2>&1 && { command -v "$p"; return 0; }
  done
  return 1
}

run() {   # run LABEL SCRIPT [ARGS...]: one script with $py, its output shown; its unittest count added
  label=$1; shift
  echo "$label ($py)"
  out=$("$py" "$@" 2>&1); rc=$?
  printf '%s\n' "$out"
  [ $rc = 0 ] || exit 1
  n=$(printf '%s\n' "$out" | sed -n 's/^Ran \([0-9][0-9]*\) tests*.*/\1/p' | tail -n 1)
  scripts=$((scripts + 1)); tests=$((tests + ${n:-0}))
}

skip() {   # skip WHAT WHY
  echo "SKIPPED $1: $2"
  skipped=$((skipped + 1))
}

if py=$(find_python "import numpy"); then
  run "python helper test" "$here/test_conform_check.py"
  run "float32 forms test" "$here/test_float32_forms.py" "$CONFORM"
  run "hunt from python test" "$here/test_hunt.py" "$CONFORM"
else
  skip "python helper test (tests/python/test_conform_check.py)" "no python3 with numpy"
  skip "float32 forms test (tests/python/test_float32_forms.py)" "no python3 with numpy"
  skip "hunt from python test (tests/python/test_hunt.py)" "no python3 with numpy"
fi

# make check-ops, shown failing for each piece an op needs when it is removed (python3 only)
if py=$(find_python "import os"); then
  run "check-ops test" "$here/test_check_ops.py" "$CONFORM"
fi

# the path rule needs only python3; the runner on a hostile manifest needs torch (it says when skipped)
if py=$(find_python "import numpy, torch, torchvision") || py=$(find_python "import os"); then
  run "manifest path rule test" "$here/test_manifest_paths.py" "$CONFORM"
fi

if py=$(find_python "import numpy, torch, torchvision"); then
  run "torch runner test" "$here/test_torch_runner.py" "$CONFORM"
  run "torch hunt test, rounds relayed to one runner process" "$here/test_torch_hunt.py" "$CONFORM"
  run "torch runner npu table test, through a recording stand-in for torch_npu" "$here/test_torch_npu_routes.py" "$CONFORM"
else
  skip "torch runner test (tests/python/test_torch_runner.py)" "no python3 with numpy, torch and torchvision"
  skip "torch hunt test (tests/python/test_torch_hunt.py)" "no python3 with numpy, torch and torchvision"
  skip "torch runner npu table test (tests/python/test_torch_npu_routes.py)" "no python3 with numpy, torch and torchvision"
fi
echo "python: $scripts scripts passed ($tests unittest tests in them), $skipped skipped"
