#!/usr/bin/env bash
# Installs, builds and runs every test through ctest, then a fuzz run.
#
# Every test a CPU machine can run must run: after ctest, tools/scripts/ctest_skips.py lists
# the skipped tests with their reasons and fails when one outside the `gpu` label was skipped
# (DSC_ALLOW_SKIPS=1 lets a developer without the Python packages run the rest; the skips are
# still listed). The last line ctest_skips.py prints counts the tests that ran.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${DSC_BUILD_DIR:-$root/build}
"$root/tools/scripts/build.sh"
# The Python the tests run with is the one CMake found; install into that one.
python=$(sed -n 's/^_\{0,1\}Python3_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt" | head -n 1)
# numpy for the end-to-end tests (tests/e2e); onnx, onnxruntime, safetensors and torch for the
# importer and zoo tests (tests/importers, importers/zoo); a no-op when they are installed.
DSC_PYTHON=${python:-python3} "$root/tools/scripts/install_python_deps.sh" --tests
junit="$build/Testing/ctest-results.xml"
status=0
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 900 \
  --output-junit "$junit" || status=$?
skips=(--allowed-label gpu)
[ "${DSC_ALLOW_SKIPS:-0}" = 1 ] && skips+=(--allow-skips)
"${python:-python3}" "$root/tools/scripts/ctest_skips.py" --build "$build" --junit "$junit" \
  "${skips[@]}" || status=1
[ "$status" = 0 ] || exit "$status"
# The fuzz run of every target under ASan+UBSan (its own clang build), DSC_FUZZ_SECONDS in
# all; DSC_FUZZ_SECONDS=0 skips it.
if [ "${DSC_FUZZ_SECONDS:-60}" != 0 ]; then
  "$root/tools/scripts/fuzz.sh"
fi
