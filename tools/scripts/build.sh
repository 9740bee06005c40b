#!/usr/bin/env bash
# Configures and builds dsc into build/ (or $DSC_BUILD_DIR) with Ninja. Extra arguments go to
# the CMake configure step, e.g. -DCMAKE_BUILD_TYPE=Debug or -DDSC_SANITIZE=ON.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# ccache keys paths relative to the checkout, so every clone shares one cache.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
build=${DSC_BUILD_DIR:-$root/build}

"$root/tools/scripts/install_deps.sh"
# nanobind, for the Python package's extension (tools/python), in the interpreter CMake finds.
DSC_PYTHON=python3 "$root/tools/scripts/install_python_deps.sh" --build
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${DSC_BUILD_TYPE:-Release} "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
