#!/bin/sh
# The Python tests of `make test`: each runs with the first python3 that has what it needs
# ($PYTHON, then /usr/bin/python3, then python3 on PATH), and is skipped, saying so, where none has.
# usage: tests/python/run.sh build/conform
CONFORM=${1:-build/conform}
export CONFORM
here=$(dirname "$0")

find_python() {   # find_python "import numpy"
  for p in ${PYTHON:-} /usr/bin/python3 python3; do
    command -v "$p" >/dev/null 2>&1 && "$p" -c "$1" >/dev/null 2>&1 && { command -v "$p"; return 0; }
  done
  return 1
}

if py=$(find_python "import numpy"); then
  echo "python helper test ($py)"
  "$py" "$here/test_conform_check.py" || exit 1
  echo "float32 forms test ($py)"
  "$py" "$here/test_float32_forms.py" "$CONFORM" || exit 1
else
  echo "SKIPPED python helper test (tests/python/test_conform_check.py): no python3 with numpy"
  echo "SKIPPED float32 forms test (tests/python/test_float32_forms.py): no python3 with numpy"
fi

# make check-ops, shown failing for each piece an op needs when it is removed (python3 only)
if py=$(find_python "import os"); then
  echo "check-ops test ($py)"
  "$py" "$here/test_check_ops.py" "$CONFORM" || exit 1
fi

# the path rule needs only python3; the runner on a hostile manifest needs torch (it says when skipped)
if py=$(find_python "import numpy, torch, torchvision") || py=$(find_python "import os"); then
  echo "manifest path rule test ($py)"
  "$py" "$here/test_manifest_paths.py" "$CONFORM" || exit 1
fi

if py=$(find_python "import numpy, torch, torchvision"); then
  echo "torch runner test ($py)"
  "$py" "$here/test_torch_runner.py" "$CONFORM" || exit 1
  echo "torch runner npu table test, through a recording stand-in for torch_npu ($py)"
  "$py" "$here/test_torch_npu_routes.py" "$CONFORM" || exit 1
else
  echo "SKIPPED torch runner test (tests/python/test_torch_runner.py): no python3 with numpy, torch and torchvision"
  echo "SKIPPED torch runner npu table test (tests/python/test_torch_npu_routes.py): no python3 with numpy, torch and torchvision"
fi
