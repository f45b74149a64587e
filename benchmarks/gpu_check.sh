#!/usr/bin/env bash
# The GPU check of issue 21, one script for a machine with an NVIDIA GPU and the project's CUDA
# image (python3 with PyTorch CUDA, CuPy, NumPy, safetensors, ml_dtypes, threadpoolctl, pytest:
# nothing is installed, since such a machine reaches no registry). Run from the repository root:
#     bash benchmarks/gpu_check.sh [OUTDIR]
# It prints, and writes to OUTDIR/gpu_check.log (default: $OUT, else .), in under 5 minutes:
#   1. the machine: nvidia-smi, the versions;
#   2. the CUDA tests: the whole suite's device tests with CuPy behind device='cuda'
#      (LEAFGRAD_REQUIRE_CUDA=1: a CUDA test that would skip fails instead);
#   3. benchmarks/gpu_mlp.py: an SGD step of MLP 784-512-512-10 (batch 256) and
#      4096-4096-4096-1000 (batch 4096), leafgrad beside torch CUDA and hand-written CuPy.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-.}}
mkdir -p "$out"
log="$out/gpu_check.log"
py=${PYTHON:-python3}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 LEAFGRAD_REQUIRE_CUDA=1
status=0
{
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || status=1
  $py -c "import sys, numpy, cupy, torch, leafgrad; print('python', sys.version.split()[0], '| numpy', numpy.__version__, '| cupy', cupy.__version__, '| torch', torch.__version__, '| leafgrad.cuda.is_available():', leafgrad.cuda.is_available())" || status=1
  echo "== CUDA tests (every failure listed; the whole report in gpu_tests.xml)"
  workers=$($py -c "import xdist" 2>/dev/null && echo "-n ${GPU_TEST_WORKERS:-8}")
  timeout ${GPU_TEST_SECONDS:-170} $py -m pytest -q -p no:cacheprovider $workers -m cuda -rfE --tb=short \
    --junitxml="$out/gpu_tests.xml" tests/test_cuda_*.py tests/test_compile_cuda.py || status=1
  echo "== benchmark"
  timeout 120 $py benchmarks/gpu_mlp.py --device cuda || status=1
  echo "== the large model's phases, each between two synchronisations"
  timeout 60 $py benchmarks/gpu_mlp.py --device cuda --phases || status=1
  echo "== where leafgrad's small step spends its time"
  timeout 40 $py benchmarks/gpu_mlp.py --device cuda --profile || status=1
  echo "== exit status $status"
} 2>&1 | tee "$log"
exit $status
