#!/usr/bin/env bash
# Builds the parser fuzz target with clang, ASan and UBSan (build-fuzz/, or $DSC_FUZZ_BUILD_DIR)
# and runs it for $DSC_FUZZ_SECONDS (default 60) over a seed corpus of every .dsc file in the
# repository. Exits non-zero on any crash, leak, hang or sanitizer report.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# ccache keys paths relative to the checkout, so every clone shares one cache.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
build=${DSC_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${DSC_FUZZ_SECONDS:-60}

"$root/tools/scripts/install_deps.sh"
CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDSC_FUZZ=ON -DDSC_SANITIZE=ON -DDSC_WERROR=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzz_parser

corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
find "$root/examples" "$root/stdlib" "$root/tests/lit" "$root/tests/fuzz/corpus" -name '*.dsc' -exec cp {} "$corpus/" \;
echo "fuzz_parser: ${seconds}s over $(ls "$corpus" | wc -l) seeds"
"$build/tests/fuzz/fuzz_parser" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
  -max_len=4096 -artifact_prefix="$build/" -print_final_stats=1 "$corpus" 2>&1 | tail -n 25
echo "fuzz_parser: no crash, leak or sanitizer report in ${seconds}s"
