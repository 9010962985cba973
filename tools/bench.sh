#!/usr/bin/env bash
# make bench: the speed goals of the issues, measured with `conform bench` (median of repeats,
# 2 threads, against a memory-bandwidth floor), then side by side with PyTorch/torchvision on the
# same inputs when /usr/bin/python3 has them (tools/bench_peers.py). Speed is never a unit test.
set -euo pipefail
exe=${1:-build/conform}
threads=${THREADS:-2}
reps=${REPS:-21}
run_one() { "$exe" bench "$@" --threads "$threads" --repeat "$reps"; }

. "$(dirname "$0")/bench_ops.sh"
bench_ops

if /usr/bin/python3 -c "import torch, torchvision, numpy" 2>/dev/null; then
    echo "# side by side with the PyTorch peers (same inputs, same threads)"
    /usr/bin/python3 "$(dirname "$0")/bench_peers.py" --conform "$exe" --threads "$threads" --reps "$reps"
else
    echo "# PyTorch/torchvision not installed: peer comparison skipped (apt-get install python3-torch python3-torchvision)"
fi
