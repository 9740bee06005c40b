#!/usr/bin/env bash
# Installs, builds and runs every test through ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${DSC_BUILD_DIR:-$root/build}
"$root/tools/scripts/build.sh"
# numpy for the end-to-end tests (tests/e2e), onnx, onnxruntime and safetensors for the importer
# tests (tests/importers); a no-op when they are installed.
"$root/tools/scripts/install_python_deps.sh" --tests
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 900
# The fuzz run of every target under ASan+UBSan (its own clang build), DSC_FUZZ_SECONDS in
# all; DSC_FUZZ_SECONDS=0 skips it.
if [ "${DSC_FUZZ_SECONDS:-60}" != 0 ]; then
  "$root/tools/scripts/fuzz.sh"
fi
