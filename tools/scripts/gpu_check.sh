#!/usr/bin/env bash
# What a GPU machine needs to run dsc's CUDA models, and the checks and benchmarks to run there.
# That machine has nvcc and PyTorch but no LLVM, no Z3 and no package registry, so models are
# built here and run there by the LLVM-free runner `dsc-run`.
#
#   tools/scripts/gpu_check.sh pack [BUILD_DIR]   (here)  builds dsc-run and the models for
#       --target=cuda, and copies them, libdsc_runtime.so and the shared libraries it needs
#       (OpenBLAS) into .gpu/ (git-ignored): about 45 MB.
#   tools/scripts/gpu_check.sh run [ARGS...]       (on the GPU machine, from the repo root with
#       .gpu/ beside it) checks every packed model against PyTorch on the GPU and times the
#       BERT layer against PyTorch eager and torch.compile (bench/gpu/run.py; ARGS go to it).
#
# With the device tool of this workplace: `pack` here, then run
# `tools/scripts/gpu_check.sh run` there with `.gpu` carried (docs/cuda.md).
set -euo pipefail
cd "$(dirname "$0")/../.."

case "${1:-}" in
pack)
  build="${2:-build}"
  ninja -C "$build" dscc dsc-run dsc_runtime
  rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib
  cp "$build/tools/dsc_run/dsc-run" .gpu/bin/
  cp "$build/runtime/libdsc_runtime.so" .gpu/lib/
  # The runtime's own dependencies that a bare machine may lack (OpenBLAS and its Fortran
  # runtime); the C and C++ libraries are there.
  for lib in $(ldd "$build/runtime/libdsc_runtime.so" | awk '/=>/ {print $3}'); do
    case "$(basename "$lib")" in
    libopenblas*|libgfortran*|libquadmath*) cp -L "$lib" .gpu/lib/ ;;
    esac
  done
  for model in bert_layer mlp gpt_decode; do
    "$build/tools/dscc/dscc" build --target=cuda "examples/$model.dsc" -o ".gpu/${model}_cuda.so" -q
  done
  du -sh .gpu
  ;;
run)
  shift
  export LD_LIBRARY_PATH="$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  .gpu/bin/dsc-run .gpu/mlp_cuda.so --shape B=3 --random-weights
  # Awkward shapes first (1, primes), checked against PyTorch on the GPU, then the benchmark.
  python3 bench/gpu/run.py --dsc-run .gpu/bin/dsc-run --model .gpu/bert_layer_cuda.so \
    --shapes 1x1,2x7,3x61,1x512 --runs 3 --warmup 1 --no-compile
  python3 bench/gpu/run.py --dsc-run .gpu/bin/dsc-run --model .gpu/bert_layer_cuda.so "$@"
  ;;
*)
  echo "usage: tools/scripts/gpu_check.sh pack [BUILD_DIR] | run [bench/gpu/run.py options]" >&2
  exit 2
  ;;
esac
