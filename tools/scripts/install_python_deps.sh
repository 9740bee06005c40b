#!/usr/bin/env bash
# Installs the Python packages that dsc's end-to-end tests, importers and CPU benchmarks need.
# Idempotent: when everything asked for is already importable it only checks and returns (well
# under a second; nothing is imported, only package metadata is read).
#
#   tools/scripts/install_python_deps.sh            # numpy, torch, onnx, onnxruntime
#   tools/scripts/install_python_deps.sh --tests    # numpy, torch, onnx, onnxruntime,
#                                                   # safetensors, transformers (tests/e2e,
#                                                   # tests/importers, importers/zoo: what
#                                                   # test.sh runs)
#   tools/scripts/install_python_deps.sh --numpy-only   # numpy alone (tests/e2e)
#   tools/scripts/install_python_deps.sh --bench    # the same as no argument (bench/cpu/)
#   tools/scripts/install_python_deps.sh --print-python   # the interpreter to run them with
#   tools/scripts/install_python_deps.sh --build    # nanobind alone: what building the Python
#                                                   # package (tools/python) needs; build.sh
#                                                   # runs it before configuring
#   tools/scripts/install_python_deps.sh --llm-bench  # --tests, then gguf and llama-cpp-python
#                                                   # (bench/llm/: llama.cpp as a peer)
#
# Which Python: $DSC_PYTHON if set, else `python3` on PATH (on the development machines the
# pyenv 3.11 interpreter). Packages go into that interpreter's site-packages with pip, from
# PyPI. Where that interpreter is Debian's own /usr/bin/python3 (pip refuses to install into
# it, PEP 668), Debian's python3-numpy / python3-torch are installed with apt instead.
#
# numpy: `pip install numpy` (one wheel, 73 MB installed, about 5 s). This is all
# tests/e2e needs (`--numpy-only`).
#
# --tests installs torch too: the torch.export importer's tests and the model zoo's
# (importers_torch_*, importers_zoo*) build their models with it, and tools/scripts/test.sh
# fails when a test outside the `gpu` label is skipped. Its time and disk on a fresh machine
# are in docs/testing.md.
#
# onnx, onnxruntime and safetensors (--tests): the ONNX importer (importers/onnx2dsc.py)
# reads models with onnx and writes weights with safetensors; its tests (tests/importers)
# compare `dscc run` with ONNX Runtime. Pinned by DSC_ONNX_SPEC (below) and DSC_SAFETENSORS_SPEC
# (default safetensors==0.8.0, one small wheel); about 60 MB with no torch. On Debian's own
# interpreter (PEP 668), which has no onnxruntime package, they are skipped with a message,
# and ctest reports the importer tests as skipped (exit 77), not failed (test.sh then fails
# unless DSC_ALLOW_SKIPS=1).
#
# transformers (--tests): tests/importers/check_hf_import.py (ctest importers_torch_hf) builds
# Hugging Face models from small random configs (nothing is downloaded) and imports them.
# Pinned by DSC_TRANSFORMERS_SPEC (default transformers==5.24.0, the version issue 34 was
# measured with; it pulls tokenizers and huggingface-hub, about 60 MB). Debian's interpreter
# is left without it, and that test exits 77 (skipped).
#
# onnxscript (--tests): torch.onnx.export's dynamo exporter, torch's default since 2.9, needs
# it; tests/importers/check_hf_onnx_import.py (ctest importers_onnx_hf) exports the same
# models with it. Pinned by DSC_ONNXSCRIPT_SPEC (default onnxscript==0.7.2; it pulls onnx-ir
# and ml_dtypes, a few MB).
#
# nanobind (--build, and every other mode): the Python package's extension (tools/python) is
# built with it; CMake asks the interpreter for it (`python3 -m nanobind --cmake_dir`). Pinned
# by DSC_NANOBIND_SPEC (default nanobind==3.1.0, a 300 KB wheel of headers and sources). On
# Debian's own interpreter (PEP 668) it goes into the user's site-packages
# (--user --break-system-packages): it is a build tool that nothing else imports, and Debian
# 12 has no package of it.
#
# gguf and llama-cpp-python (--llm-bench): bench/llm/llm_bench.py writes the model to GGUF with
# gguf and runs it with llama.cpp through llama-cpp-python. Pinned by DSC_GGUF_SPEC (default
# gguf==0.19.0, a small wheel) and DSC_LLAMA_CPP_SPEC (default llama-cpp-python==0.3.36, the
# version the bench was measured with). PyPI has only its source (76 MB with llama.cpp's): pip
# builds llama.cpp with CMake (from PyPI) and the C++ compiler the build already needs, about
# 15 minutes on two cores. Neither is needed by any test.
#
# torch: the decision, and why.
#   - PyPI has no CPU-only build of torch for Linux x86_64. The CPU wheels
#     (`torch==X+cpu`) live only on PyTorch's own package index, which these machines cannot
#     reach; the PyPI-named look-alikes ("torch-cpu" and such) are third-party repackagings
#     and are not used. The PyPI wheel (torch 2.15.0+cu132 when this was written) is built
#     for CUDA and its libtorch_cuda.so / libtorch_python.so have hard DT_NEEDED entries on
#     libcudart, cublas, cudnn, cufile, nccl, cusparseLt, nvshmem, ...: `pip install
#     --no-deps torch` installs but `import torch` then fails (tried: "libcufile.so.0:
#     cannot open shared object file"). So torch from PyPI means torch with its nvidia-*
#     wheels. They are never used here (no GPU) but they must be on disk.
#   - Measured on the 2-core development machine: `pip install numpy torch` took 53 s wall
#     (PyPI is fast from here) and 5.3 GB of disk: torch 1.2 GB, nvidia-* 3.0 GB, triton
#     1.0 GB, cuda-* 31 MB, numpy 45 MB. That is practical, so it is the default. numpy alone
#     (--tests) is 73 MB and about 5 s.
#   - The alternative, Debian's python3-torch, is torch 1.13.1 (2022) for /usr/bin/python3
#     only: 637 MB with its 177 dependencies, its sgemm from whatever libblas.so.3 the system
#     selects (OpenBLAS here) and oneDNN 2 (libdnnl2). The PyPI build is the
#     current release with MKL sgemm and oneDNN, i.e. what a user measuring "PyTorch eager
#     on CPU" runs, so it is the baseline that means something. `--torch-from=debian` (or
#     DSC_TORCH_FROM=debian) installs Debian's instead, for a machine short of disk; then run
#     the benchmarks with /usr/bin/python3 (`--print-python` says so).
#
# onnx and onnxruntime (with torch): bench/cpu/bert_onnx.py exports the layer with
# torch.onnx.export (which needs onnx) and runs it in ONNX Runtime, the third peer of the CPU
# benchmark. Pinned by DSC_ONNX_SPEC (default onnx==1.23.2 onnxruntime==1.32.0, about 60 MB).
# Debian has no onnxruntime package, so on Debian's own interpreter they are left out and the
# benchmark notes the missing peer.
#
# Versions: torch is pinned (DSC_TORCH_SPEC, default torch==2.15.0) so benchmark numbers are
# reproducible; numpy is not (any numpy >= 1.24 serves the tests). An interpreter that already
# has some torch / numpy is left alone, whatever the version: the benchmark records the torch
# version it ran with.
set -euo pipefail

want_numpy=1
want_torch=1
want_onnx=1
want_safetensors=0
want_transformers=0
print_python=0
torch_from=${DSC_TORCH_FROM:-pypi}
torch_spec=${DSC_TORCH_SPEC:-torch==2.15.0}
onnx_spec=${DSC_ONNX_SPEC:-onnx==1.23.2 onnxruntime==1.32.0}
safetensors_spec=${DSC_SAFETENSORS_SPEC:-safetensors==0.8.0}
transformers_spec=${DSC_TRANSFORMERS_SPEC:-transformers==5.24.0}
onnxscript_spec=${DSC_ONNXSCRIPT_SPEC:-onnxscript==0.7.2}
gguf_spec=${DSC_GGUF_SPEC:-gguf==0.19.0}
llama_cpp_spec=${DSC_LLAMA_CPP_SPEC:-llama-cpp-python==0.3.36}
want_llm_bench=0
nanobind_spec=${DSC_NANOBIND_SPEC:-nanobind==3.1.0}

for arg in "$@"; do
  case "$arg" in
    --tests) want_torch=1 want_onnx=1 want_safetensors=1 want_transformers=1 ;;
    --numpy-only) want_torch=0 want_onnx=0 want_safetensors=0 want_transformers=0 ;;
    --build) want_numpy=0 want_torch=0 want_onnx=0 want_safetensors=0 want_transformers=0 ;;
    --bench | --all) want_numpy=1 want_torch=1 want_onnx=1 ;;
    --llm-bench) want_torch=1 want_onnx=1 want_safetensors=1 want_transformers=1 want_llm_bench=1 ;;
    --torch-from=pypi | --torch-from=debian) torch_from=${arg#--torch-from=} ;;
    --print-python) print_python=1 ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "install_python_deps: unknown argument '$arg' (try --help)" >&2
      exit 2
      ;;
  esac
done

case "$torch_from" in
  pypi | debian) ;;
  *)
    echo "install_python_deps: DSC_TORCH_FROM must be pypi or debian, not '$torch_from'" >&2
    exit 2
    ;;
esac

python=${DSC_PYTHON:-python3}
# Debian's torch is packaged for Debian's interpreter only.
[ "$torch_from" = debian ] && [ "$want_torch" = 1 ] && python=/usr/bin/python3

if [ "$print_python" = 1 ]; then
  command -v "$python" || echo "$python"
  exit 0
fi

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

apt_install() {
  local missing=() p status
  for p in "$@"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = "installed" ] || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "install_python_deps: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

if ! command -v "$python" >/dev/null 2>&1; then
  # No interpreter at all: Debian's.
  apt_install python3
  python=/usr/bin/python3
fi

# has MODULE: the distribution is installed in $python (metadata only, no import: fast).
has() {
  "$python" - "$1" <<'EOF' >/dev/null 2>&1
import importlib.metadata, importlib.util, sys
name = sys.argv[1]
importlib.metadata.version(name)
sys.exit(0 if importlib.util.find_spec(name) is not None else 1)
EOF
}

# Debian's interpreter refuses pip installs (PEP 668): use apt for it.
externally_managed() {
  "$python" -c 'import sys, sysconfig, os
sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)' \
    2>/dev/null
}

pip_install() {
  echo "install_python_deps: $python -m pip install $*"
  "$python" -m pip install --disable-pip-version-check -q "$@"
}

if ! has nanobind; then
  if externally_managed; then
    apt_install python3-pip
    pip_install --user --break-system-packages "$nanobind_spec"
  else
    pip_install "$nanobind_spec"
  fi
fi

if [ "$want_numpy" = 1 ] && ! has numpy; then
  if externally_managed; then
    apt_install python3-numpy
  else
    pip_install numpy
  fi
fi

if [ "$want_torch" = 1 ] && ! has torch; then
  if [ "$torch_from" = debian ] || externally_managed; then
    apt_install python3-torch python3-numpy
  else
    pip_install "$torch_spec"
  fi
fi

missing_onnx=()
if [ "$want_onnx" = 1 ]; then
  has onnx || missing_onnx+=(onnx)
  has onnxruntime || missing_onnx+=(onnxruntime)
fi
if [ "$want_safetensors" = 1 ] && ! has safetensors; then
  missing_onnx+=(safetensors)
fi
if [ ${#missing_onnx[@]} -gt 0 ]; then
  if externally_managed; then
    # Debian packages no onnxruntime: the importer tests skip themselves (exit 77).
    echo "install_python_deps: skipping ${missing_onnx[*]}: $python is Debian's" \
      "externally-managed interpreter and Debian has no onnxruntime package; the ONNX" \
      "importer tests (tests/importers) will be reported as skipped" >&2
  else
    specs=()
    if [[ " ${missing_onnx[*]} " == *" onnx"* ]]; then
      # shellcheck disable=SC2206 # the spec is a list of requirements
      specs+=($onnx_spec)
    fi
    if [[ " ${missing_onnx[*]} " == *" safetensors "* ]]; then
      # shellcheck disable=SC2206
      specs+=($safetensors_spec)
    fi
    pip_install "${specs[@]}"
  fi
fi

# The Hugging Face tests' packages, each where missing: module|pinned spec|the ctest needing it.
if [ "$want_transformers" = 1 ]; then
  for entry in "transformers|$transformers_spec|importers_torch_hf" \
               "onnxscript|$onnxscript_spec|importers_onnx_hf"; do
    IFS='|' read -r module spec needed_by <<<"$entry"
    has "$module" && continue
    if externally_managed; then
      echo "install_python_deps: skipping $module: $python is Debian's externally-managed" \
        "interpreter; $needed_by will be reported as skipped" >&2
    else
      # shellcheck disable=SC2086 # the spec is a requirement
      pip_install $spec
    fi
  done
fi

# bench/llm's peers: llama.cpp through llama-cpp-python (built from source), gguf to write
# its model.
if [ "$want_llm_bench" = 1 ]; then
  if externally_managed; then
    echo "install_python_deps: skipping gguf and llama-cpp-python: $python is Debian's" \
      "externally-managed interpreter; bench/llm/llm_bench.py then needs --peers without" \
      "llamacpp" >&2
  else
    has gguf || pip_install "$gguf_spec"
    "$python" -c 'import llama_cpp' >/dev/null 2>&1 || pip_install "$llama_cpp_spec"
  fi
fi

exit 0
