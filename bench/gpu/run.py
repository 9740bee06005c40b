#!/usr/bin/env python3
"""The BERT layer on the GPU: dsc (a model built with `dscc build --target=cuda`, run by the
LLVM-free runner `dsc-run`) against PyTorch eager and torch.compile(dynamic=True), on the same
GPU in the same run, fp32 (no TF32: cuBLAS and torch both in full FP32 math).

Runs on the GPU machine, from the tree that tools/scripts/gpu_check.sh packs:
    python3 bench/gpu/run.py --dsc-run .gpu/bin/dsc-run --model .gpu/bert_layer_cuda.so \
        --shapes 1x32,1x128,4x64,8x128,1x384 --runs 50

For every shape it saves one set of random parameters (bench/cpu/bert_torch.py's
random_params), runs dsc on them (dsc-run --input ... --bench), checks dsc's output against
torch's on the GPU (bench/cpu/bert_torch.py's compare, tolerance 1e-3 relative to the rms),
and times each peer as the median of `runs` calls after `warmup`, every call synchronized
(torch.cuda.synchronize; dsc's call waits for its stream). It prints one table and the
geomean of the ratios; --json writes them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cpu"))
import bert_torch  # noqa: E402


def cuda_layer(params: dict, variant: str = "eager") -> bert_torch.BertLayer:
    layer = bert_torch.BertLayer(params, variant)
    layer.w = {k: v.cuda() for k, v in layer.w.items()}
    if hasattr(layer, "wt"):
        layer.wt = {k: v.cuda() for k, v in layer.wt.items()}
    return layer


def time_gpu(call, runs: int, warmup: int) -> float:
    """Median ms of `runs` synchronized calls after `warmup`."""
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        call()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def run_dsc(dsc_run: str, model: str, directory: str, runs: int, warmup: int) -> tuple[float, np.ndarray]:
    out_dir = os.path.join(directory, "out")
    args = [dsc_run, model]
    for name, _ in bert_torch.PARAMS:
        args += ["--input", f"{name}={os.path.join(directory, name + '.npy')}"]
    args += [f"--bench={runs}", f"--warmup={warmup}", f"--save-outputs={out_dir}"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"dsc-run failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    m = re.search(r"median_ms=([0-9.]+)", r.stdout + r.stderr)
    if not m:
        raise RuntimeError(f"no 'median_ms=' in dsc-run's output:\n{r.stdout}\n{r.stderr}")
    return float(m.group(1)), np.load(os.path.join(out_dir, "output0.npy"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsc-run", required=True)
    ap.add_argument("--model", required=True, help="examples/bert_layer.dsc built with --target=cuda")
    ap.add_argument("--shapes", default="1x32,1x128,4x64,8x128,1x384")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    shapes = [tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")]
    rows, ok = [], True
    compiled = None
    compile_s = None
    for B, S in shapes:
        p = bert_torch.random_params(B, S)
        with tempfile.TemporaryDirectory() as d:
            bert_torch.save_params(d, p)
            dsc_ms, dsc_out = run_dsc(a.dsc_run, a.model, d, a.runs, a.warmup)
        layer = cuda_layer(p)
        x, mask = torch.from_numpy(p["x"]).cuda(), torch.from_numpy(p["mask"]).cuda()
        with torch.inference_mode():
            ref = layer(x, mask).cpu().numpy()
            good, detail = bert_torch.compare(dsc_out, ref, tol=1e-3)
            ok &= good
            eager_ms = time_gpu(lambda: layer(x, mask), a.runs, a.warmup)
            compile_ms = None
            if not a.no_compile:
                if compiled is None:
                    compiled = torch.compile(layer.__call__, dynamic=True)
                    t0 = time.perf_counter()
                    compiled(x, mask)
                    torch.cuda.synchronize()
                    compile_s = time.perf_counter() - t0
                compile_ms = time_gpu(lambda: compiled(x, mask), a.runs, a.warmup)
        row = {"B": B, "S": S, "dsc_ms": dsc_ms, "eager_ms": eager_ms, "compile_ms": compile_ms,
               "eager_over_dsc": eager_ms / dsc_ms,
               "compile_over_dsc": compile_ms / dsc_ms if compile_ms else None,
               "matches_torch": good, "error": detail}
        rows.append(row)
        print(f"B={B:2d} S={S:4d}  dsc {dsc_ms:8.3f} ms  eager {eager_ms:8.3f} ms  "
              f"compile {compile_ms if compile_ms else float('nan'):8.3f} ms  "
              f"eager/dsc {row['eager_over_dsc']:.2f}  "
              f"compile/dsc {row['compile_over_dsc'] or float('nan'):.2f}  "
              f"{'ok' if good else 'MISMATCH'} ({detail})", flush=True)

    def geomean(key):
        vals = [r[key] for r in rows if r[key]]
        return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else float("nan")

    summary = {"eager_over_dsc": geomean("eager_over_dsc"),
               "compile_over_dsc": geomean("compile_over_dsc"),
               "torch_compile_first_call_s": compile_s, "rows": rows,
               "device": torch.cuda.get_device_name(), "torch": torch.__version__}
    print(f"geomean eager/dsc {summary['eager_over_dsc']:.2f}, compile/dsc "
          f"{summary['compile_over_dsc']:.2f}; torch.compile first call {compile_s or 0:.1f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
