#!/usr/bin/env bash
# The main job: install, build, then compile a BERT layer once and run it at several (B, S)
# shapes, printing each latency; then show shape inference over the layer and the shape prover
# deciding facts a compiler needs, each proved or refuted with a counterexample.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${DSC_BUILD_DIR:-$root/build}
"$root/tools/scripts/build.sh"

dscc="$build/tools/dscc/dscc"
cd "$root"
so="$build/bert_layer.so"
echo "\$ dscc build examples/bert_layer.dsc -o $so"
"$dscc" build examples/bert_layer.dsc -o "$so"
for shape in B=1,S=32 B=1,S=128 B=4,S=64 B=8,S=128 B=1,S=384 B=3,S=77; do
  echo "\$ dscc run $so --shape $shape --random-weights --bench=10"
  "$dscc" run "$so" --shape "$shape" --random-weights --bench=10
done
echo "\$ dscc run $so --shape B=1,S=600 --random-weights   # violates 'where S <= 512'"
"$dscc" run "$so" --shape B=1,S=600 --random-weights || echo "(exit status $?)"
echo
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
