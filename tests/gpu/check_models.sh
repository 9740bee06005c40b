#!/usr/bin/env bash
# ctest label `gpu`: every example built with --target=cuda runs on the GPU (dsc-run) and
# matches the same example compiled for the CPU, at awkward shapes. Without a CUDA device it
# exits 77, which ctest reports as skipped, with the reason.
#   check_models.sh DSCC DSC_RUN SOURCE_DIR WORK_DIR
set -euo pipefail
dscc="$1" dsc_run="$2" src="$3" work="$4"
mkdir -p "$work"
"$dscc" build --target=cuda "$src/examples/mlp.dsc" -o "$work/probe.so" -q
if ! probe=$("$dsc_run" "$work/probe.so" --shape B=1 --random-weights -q 2>&1); then
  case "$probe" in
  *"no CUDA device"*) echo "skipped: $probe"; exit 77 ;;
  *) echo "$probe"; exit 1 ;;
  esac
fi
status=0
check() { # MODEL SHAPE
  local model="$1" shape="$2" tag="$1_${2//[=,]/_}"
  "$dscc" build --target=cuda "$src/examples/$model.dsc" -o "$work/${model}_cuda.so" -q
  "$dscc" run "$src/examples/$model.dsc" --shape "$shape" --random-weights --output="$work/$tag" -q
  if "$dsc_run" "$work/${model}_cuda.so" --shape "$shape" --random-weights -q \
      --compare-outputs="$work/$tag" --rtol=1e-3 --atol=1e-4; then
    echo "ok   $model at $shape"
  else
    echo "FAIL $model at $shape"; status=1
  fi
}
for shape in B=1,S=1 B=2,S=7 B=3,S=61 B=1,S=384; do check bert_layer "$shape"; done
for shape in B=1 B=13 B=257; do check mlp "$shape"; done
for shape in N=1,H=2,W=2 N=2,H=13,W=7 N=3,H=61,W=32; do check conv_block "$shape"; done
exit $status
