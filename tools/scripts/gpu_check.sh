#!/usr/bin/env bash
# What a GPU machine needs to run dsc's CUDA models, and the checks and benchmarks to run there.
# That machine has nvcc and PyTorch but no LLVM, no Z3 and no package registry, so models are
# built here and run there by the LLVM-free runner `dsc-run`.
#
#   tools/scripts/gpu_check.sh pack [BUILD_DIR] [--no-zoo] [--baseline DSCC]   (here)  builds
#       dsc-run and the models for --target=cuda, and copies them, libdsc_runtime.so and the
#       shared libraries it needs (OpenBLAS) into .gpu/ (git-ignored), and the model zoo's CUDA
#       builds into .gpu/zoo/ (bench/models/gpu.py --pack: no weights, they are made again
#       there; skipped when torch is missing here, or with --no-zoo): about 50 MB, the zoo's 5
#       of it. With --baseline, DSCC (the dscc of another revision) also builds the same
#       models into .gpu/old/, and `run` times them beside the new ones.
#   tools/scripts/gpu_check.sh run [ARGS...]       (on the GPU machine, from the repo root with
#       .gpu/ beside it) runs the runtime's GPU tests (runtime_CudaGpuTest), checks every packed
#       model against PyTorch on the GPU (the convolution
#       block against the CPU's outputs packed with it) and times the
#       BERT layer (bench/gpu/run.py) and the GPT-2 decode step
#       (bench/gpu/decode.py) against PyTorch eager and torch.compile, and softmax and layer
#       norm against the GPU's copy bandwidth (bench/gpu/row_kernels.py: 131072 rows, then 8 rows,
#       where the launch is picked by occupancy); ARGS (--runs N,
#       --warmup N) go to each of the three. With $OUT set (the
#       device tool), each writes its JSON there.
#   tools/scripts/gpu_check.sh zoo [ARGS...]       (on the GPU machine) the zoo (bert, gpt2,
#       resnet18, llama at full size) against PyTorch eager on the GPU (bench/models/gpu.py
#       --zoo .gpu/zoo; ARGS go to it, e.g. --runs N, --models bert,gpt2); JSON in $OUT/zoo.json.
#
# With the device tool of this workplace: `pack` here, then run
# `tools/scripts/gpu_check.sh run` there with `.gpu` carried (docs/cuda.md).
set -euo pipefail
cd "$(dirname "$0")/../.."

# Where cuDNN is when /usr/local/cuda has none: PyTorch's wheel (nvidia/cudnn/lib), followed by
# a colon; nothing when neither has it (a convolution then fails with cuDNN's load error).
cudnn_dir() {
  [ -e /usr/local/cuda/lib64/libcudnn.so.9 ] && return 0
  python3 -c 'import os, nvidia.cudnn as c; print(os.path.join(list(c.__path__)[0], "lib") + ":", end="")' \
    2>/dev/null || true
}

case "${1:-}" in
pack)
  shift
  build=build zoo=1 baseline=
  while [ $# -gt 0 ]; do
    case "$1" in
    --no-zoo) zoo= ;;
    --baseline) baseline="$2"; shift ;;
    *) build="$1" ;;
    esac
    shift
  done
  ninja -C "$build" dscc dsc-run dsc_runtime runtime_CudaGpuTest
  ninja -C "$build" runtime_CudaVendorAbiTest 2>/dev/null || true # only with the toolkit's headers
  rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib
  cp "$build/tools/dsc_run/dsc-run" .gpu/bin/
  # The runtime's GPU tests (ctest label gpu: memory, launches, cuBLAS, cuBLASLt and cuDNN
  # against the CPU), which need only libdsc_runtime.
  cp "$build/tests/unit/runtime_CudaGpuTest" .gpu/bin/
  # The descriptors the runtime sets, read back by cuDNN's and cuBLASLt's own functions (built
  # where this machine's toolkit has both): there, against that machine's library versions.
  if [ -x "$build/tests/unit/runtime_CudaVendorAbiTest" ]; then
    cp "$build/tests/unit/runtime_CudaVendorAbiTest" .gpu/bin/
  fi
  cp "$build/runtime/libdsc_runtime.so" .gpu/lib/
  # The runtime's own dependencies that a bare machine may lack (OpenBLAS and its Fortran
  # runtime); the C and C++ libraries are there.
  for lib in $(ldd "$build/runtime/libdsc_runtime.so" | awk '/=>/ {print $3}'); do
    case "$(basename "$lib")" in
    libopenblas*|libgfortran*|libquadmath*) cp -L "$lib" .gpu/lib/ ;;
    esac
  done
  build_models() { # DSCC DIR
    for model in bert_layer mlp gpt_decode conv_block; do
      "$1" build --target=cuda "examples/$model.dsc" -o "$2/${model}_cuda.so" -q
    done
    "$1" build --target=cuda bench/cpu/row_kernels.dsc -o "$2/row_kernels_cuda.so" -q
  }
  build_models "$build/tools/dscc/dscc" .gpu
  # The CPU's outputs of the convolutions (cuDNN on the GPU) at awkward shapes, which `run`
  # compares the GPU's with (the random weights are the same on both).
  for shape in N=1,H=2,W=2 N=2,H=13,W=7 N=3,H=61,W=32; do
    "$build/tools/dscc/dscc" run examples/conv_block.dsc --shape "$shape" --random-weights -q \
      --output=".gpu/expect/conv_block_${shape//[=,]/_}"
  done
  if [ -n "$baseline" ]; then
    mkdir -p .gpu/old
    build_models "$baseline" .gpu/old
  fi
  # The zoo (bench/models/gpu.py): the torch.export imports built for CUDA, and their .dsc.
  rc=0
  if [ -z "$zoo" ]; then
    rc=77
    echo "SKIP: the zoo (--no-zoo)"
  else
    python3 bench/models/gpu.py --pack .gpu/zoo --dscc "$build/tools/dscc/dscc" || rc=$?
  fi
  if [ "$rc" = 77 ]; then
    rm -rf .gpu/zoo
    echo "gpu_check.sh: the zoo is not packed (see the SKIP line above)" >&2
  elif [ "$rc" != 0 ]; then
    exit "$rc"
  fi
  du -sh .gpu
  ;;
run)
  shift
  export LD_LIBRARY_PATH="$PWD/.gpu/lib:$(cudnn_dir)${LD_LIBRARY_PATH:-}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  .gpu/bin/runtime_CudaGpuTest || echo "FAIL: runtime_CudaGpuTest (above)"
  if [ -x .gpu/bin/runtime_CudaVendorAbiTest ]; then
    # Linked to the libraries' sonames here (libcudnn.so.9, libcublasLt.so.13): skipped where
    # the machine has other versions, which the runtime itself (dlopen) still finds.
    missing=$(ldd .gpu/bin/runtime_CudaVendorAbiTest | awk '/not found/ {print $1}' | xargs)
    if [ -n "$missing" ]; then
      echo "SKIP: runtime_CudaVendorAbiTest: this machine has no $missing"
    else
      .gpu/bin/runtime_CudaVendorAbiTest || echo "FAIL: runtime_CudaVendorAbiTest (above)"
    fi
  fi
  .gpu/bin/dsc-run .gpu/mlp_cuda.so --shape B=3 --random-weights
  # cuDNN's convolutions against the CPU's, then timed at ResNet's image size.
  for expect in .gpu/expect/conv_block_*; do
    shape=$(basename "$expect" | sed -E 's/conv_block_N_([0-9]+)_H_([0-9]+)_W_([0-9]+)/N=\1,H=\2,W=\3/')
    .gpu/bin/dsc-run .gpu/conv_block_cuda.so --shape "$shape" --random-weights -q \
      --compare-outputs="$expect" --rtol=1e-3 --atol=1e-4 && echo "ok   conv_block at $shape" \
      || echo "FAIL conv_block at $shape"
  done
  .gpu/bin/dsc-run .gpu/conv_block_cuda.so --shape N=8,H=224,W=224 --random-weights --bench=50 -q \
    || echo "FAIL: conv_block timing (above)"
  # Awkward shapes first (1, primes), checked against PyTorch on the GPU, then the benchmark.
  python3 bench/gpu/run.py --dsc-run .gpu/bin/dsc-run --model .gpu/bert_layer_cuda.so \
    --shapes 1x1,2x7,3x61,1x512 --runs 3 --warmup 1 --no-compile
  python3 bench/gpu/decode.py --dsc-run .gpu/bin/dsc-run --model .gpu/gpt_decode_cuda.so \
    --shapes 1x0,3x1,5x61 --runs 3 --warmup 1 --no-compile
  json() { if [ -n "${OUT:-}" ]; then echo "--json=$OUT/$1.json"; fi; }
  python3 bench/gpu/run.py --dsc-run .gpu/bin/dsc-run --model .gpu/bert_layer_cuda.so $(json bert) "$@"
  python3 bench/gpu/decode.py --dsc-run .gpu/bin/dsc-run --model .gpu/gpt_decode_cuda.so $(json decode) "$@"
  baseline=()
  if [ -d .gpu/old ]; then baseline=(--baseline .gpu/old/row_kernels_cuda.so); fi
  python3 bench/gpu/row_kernels.py --dsc-run .gpu/bin/dsc-run --model .gpu/row_kernels_cuda.so \
    "${baseline[@]}" $(json row_kernels) "$@"
  # A decode step's few rows, whose launch the host picks by occupancy (docs/cuda.md).
  python3 bench/gpu/row_kernels.py --dsc-run .gpu/bin/dsc-run --model .gpu/row_kernels_cuda.so \
    "${baseline[@]}" $(json row_kernels_few_rows) --rows 8 --cols 768,3072 --check-cols 768 "$@"
  # The layer and the decode step of the baseline (pack --baseline), without torch.compile.
  if [ -d .gpu/old ]; then
    echo "== the baseline's models (.gpu/old)"
    python3 bench/gpu/run.py --dsc-run .gpu/bin/dsc-run --model .gpu/old/bert_layer_cuda.so --no-compile "$@"
    python3 bench/gpu/decode.py --dsc-run .gpu/bin/dsc-run --model .gpu/old/gpt_decode_cuda.so --no-compile "$@"
  fi
  ;;
zoo)
  shift
  export LD_LIBRARY_PATH="$PWD/.gpu/lib:$(cudnn_dir)${LD_LIBRARY_PATH:-}"
  python3 bench/models/gpu.py --dsc-run .gpu/bin/dsc-run --zoo .gpu/zoo \
    ${OUT:+--json "$OUT/zoo.json"} "$@"
  ;;
*)
  echo "usage: tools/scripts/gpu_check.sh pack [BUILD_DIR] [--no-zoo] [--baseline DSCC]" \
    "| run [--runs N] [--warmup N]" \
    "| zoo [bench/models/gpu.py options]" >&2
  exit 2
  ;;
esac
