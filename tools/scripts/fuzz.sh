#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang, ASan and UBSan (build-fuzz/, or
# $DSC_FUZZ_BUILD_DIR) and runs each over its seed corpus. $DSC_FUZZ_SECONDS (default 60) is the
# total time, split among the targets run: the .dsc parser gets half, the others share the rest
# evenly (at least a second each). Arguments name a subset of the targets, e.g.
#   DSC_FUZZ_SECONDS=600 tools/scripts/fuzz.sh fuzz_npy
# Prints one summary line per target and exits non-zero when any target reports a crash, leak,
# hang or sanitizer error; the failing input is left in the build directory (see docs/testing.md).
# Run without arguments, it also runs the fault-injection test (every allocation of a model call
# refused in turn) in the same sanitized build, where LeakSanitizer checks that nothing leaks.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# ccache keys paths relative to the checkout, so every clone shares one cache.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
build=${DSC_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${DSC_FUZZ_SECONDS:-60}
all_targets=(fuzz_parser fuzz_npy fuzz_safetensors fuzz_manifest fuzz_prove_expr fuzz_compile)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  case " ${all_targets[*]} " in
    *" $t "*) ;;
    *) echo "fuzz.sh: unknown target '$t' (targets: ${all_targets[*]})" >&2; exit 2 ;;
  esac
done

"$root/tools/scripts/install_deps.sh"
CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDSC_FUZZ=ON -DDSC_SANITIZE=ON -DDSC_WERROR=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

# The split: half to the parser when it runs, the rest evenly; libFuzzer reads 0 as "no limit",
# so every target gets at least a second.
others=0
for t in "${targets[@]}"; do [ "$t" = fuzz_parser ] || others=$((others + 1)); done
share_of() {
  local s
  if [ "$1" = fuzz_parser ]; then
    if [ "$others" -eq 0 ]; then s=$seconds; else s=$((seconds - (seconds / 2 / others) * others)); fi
  else
    if [ ${#targets[@]} -eq "$others" ]; then s=$((seconds / others)); else s=$((seconds / 2 / others)); fi
  fi
  echo $((s > 0 ? s : 1))
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
for t in "${targets[@]}"; do
  corpus="$work/$t"
  mkdir -p "$corpus"
  cp "$root/tests/fuzz/corpus/$t"/* "$corpus/"
  if [ "$t" = fuzz_parser ]; then
    find "$root/examples" "$root/stdlib" "$root/tests/lit" -name '*.dsc' -exec cp {} "$corpus/" \;
  fi
  s=$(share_of "$t")
  echo "$t: ${s}s over $(ls "$corpus" | wc -l) seeds"
  status=0
  "$build/tests/fuzz/$t" -max_total_time="$s" -timeout=10 -rss_limit_mb=4096 -max_len=4096 \
    -artifact_prefix="$build/$t-" -print_final_stats=1 "$corpus" >"$work/$t.log" 2>&1 || status=$?
  tail -n 25 "$work/$t.log"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
  if [ "$status" -eq 0 ]; then
    echo "$t: no crash, leak or sanitizer report in ${s}s (${runs:-?} runs)"
  else
    echo "$t: FAILED (exit $status); the input is in $build/$t-*"
    failed=1
  fi
done
if [ $# -eq 0 ]; then
  cmake --build "$build" -j "$(nproc)" --target compiler_FaultInjectionTest
  if DSC_SOURCE_DIR="$root" "$build/tests/unit/compiler_FaultInjectionTest" >"$work/faults.log" 2>&1; then
    echo "compiler_FaultInjectionTest: passed under ASan+UBSan, no leak reported"
  else
    tail -n 40 "$work/faults.log"
    echo "compiler_FaultInjectionTest: FAILED under ASan+UBSan"
    failed=1
  fi
fi
exit "$failed"
