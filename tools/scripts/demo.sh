#!/usr/bin/env bash
# The main job: install, build, then show what dsc does today: shape inference over a BERT
# layer, and the shape prover deciding facts a compiler needs, each proved or refuted with a
# counterexample.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${DSC_BUILD_DIR:-$root/build}
"$root/tools/scripts/build.sh"

dscc="$build/tools/dscc/dscc"
cd "$root"
echo '$ dscc check --emit=shapes examples/bert_layer.dsc'
"$dscc" check --emit=shapes examples/bert_layer.dsc
echo '$ dscc check --emit=facts examples/bert_layer.dsc'
"$dscc" check --emit=facts examples/bert_layer.dsc
echo
ask() {
  local args=("$@")
  printf '$ dscc prove'
  for a in "${args[@]}"; do
    case "$a" in --*) printf ' %s' "$a" ;; *) printf ' "%s"' "$a" ;; esac
  done
  printf '\n  '
  "$dscc" prove "${args[@]}"
}
ask "n*4/2 == 2*n"
ask "n/2*2 == n"
ask --assume "n % 2 == 0" "n/2*2 == n"
ask --assume "w + h >= 1" "(w+h)*65/(w+h) == 65"
ask --assume "1 <= S <= 512" "(S + 15)/16*16 >= S"
ask --assume "B >= 1" "B*S*768 == B*S*12*64"
ask "S == T"
ask --assume "1 <= S <= 512" --assume "T == S" "S*T <= 250000"
