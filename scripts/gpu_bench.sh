#!/usr/bin/env bash
# The recorded GPU run of normlab.bench, in one call on a CUDA machine (a few minutes):
#
#     bash scripts/gpu_bench.sh            # any extra arguments go to python -m normlab.bench
#
# It times LayerNorm forward on the CPU (NumPy, torch) and on the GPU (torch's fused kernel and
# the normlab.torch_twins version, float32, float16 and bfloat16, d_model 64 to 8192, 1 GiB of
# input per case) against a copy of the same bytes, checks every implementation against the
# float64 reference before timing it, and writes results/bench-cuda-<UTC date>.json and .csv,
# labelled with the GPU, the CPU, the versions and the date. Commit those two files.
#
# Needs a python with numpy and a CUDA build of torch (tqdm optional); normlab is read from lib/,
# so nothing has to be installed. Set PYTHON=/path/to/python to choose the interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."

has_cuda_torch() {
  "$1" -c "import numpy, torch; assert torch.cuda.is_available()" >/dev/null 2>&1
}

PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  for candidate in .venv/bin/python python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 && has_cuda_torch "$candidate"; then
      PY="$candidate"
      break
    fi
  done
fi
if [ -z "$PY" ] || ! has_cuda_torch "$PY"; then
  echo "gpu_bench: no python with numpy and a CUDA build of torch that sees a GPU" >&2
  echo "gpu_bench: set PYTHON=/path/to/python, or run it on a CUDA machine" >&2
  exit 2
fi

export PYTHONPATH="$PWD/lib${PYTHONPATH:+:$PYTHONPATH}"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
exec "$PY" -m normlab.bench --gpu-suite --out-dir results "$@"
