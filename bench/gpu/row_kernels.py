#!/usr/bin/env python3
"""Softmax and layer norm over rows on the GPU, each one fused dsc kernel
(bench/cpu/row_kernels.dsc built with --target=cuda), as a fraction of the GPU's measured copy
bandwidth, beside PyTorch eager's own kernels, in one run on one GPU.

    python3 bench/gpu/row_kernels.py --dsc-run .gpu/bin/dsc-run --model .gpu/row_kernels_cuda.so \
        --rows 131072 --cols 768,128 --runs 50

The fraction of copy bandwidth is (bytes read + bytes written) / time over the same for the best
copy measured in the run: dsc's own `x * 1.0` kernel, torch's `x.clone()` and torch's
device-to-device `copy_` into an existing tensor. 1.0 means the kernel costs no more than moving
its data once; issue 11 asks for the memory-bound kernels' fraction. Short rows (128, as the
attention softmax at S = 128) show the cost of one row per block.

Before timing, each kernel's output is checked against torch's on the GPU at awkward row
lengths (1, primes, either side of where the kernel stops keeping the row in registers). With
`--baseline OTHER.so` (the same file built by another revision), that model's kernels are timed
in the same run too, and the table gains their time over this one's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import numpy as np

import torch
import torch.nn.functional as F

import peers  # bench/gpu/peers.py

KERNELS = ("copy", "softmax", "layer_norm")


def check(dsc_run: str, model: str, rows: int, cols: int) -> bool:
    """dsc's softmax, layer_norm and copy against torch's on the GPU at one shape."""
    rng = np.random.default_rng(cols)
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    g, b = rng.standard_normal(cols, dtype=np.float32), rng.standard_normal(cols, dtype=np.float32)
    xt, gt, bt = (torch.from_numpy(v).cuda() for v in (x, g, b))
    want = {"copy": xt, "softmax": F.softmax(xt, dim=-1), "layer_norm": F.layer_norm(xt, (cols,), gt, bt)}
    ok = True
    with tempfile.TemporaryDirectory() as d:
        for k in KERNELS:
            params = {"x": x, "g": g, "b": b} if k == "layer_norm" else {"x": x}
            _, out = peers.run_dsc(dsc_run, model, [f"--entry={k}", *peers.input_args(d, params)], 1, 1,
                                   os.path.join(d, "out_" + k))
            ref = want[k].cpu().numpy()
            err = float(np.max(np.abs(out[0] - ref))) if ref.size else 0.0
            good = err <= 1e-4 * max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0)
            ok &= good
            if not good:
                print(f"  MISMATCH {k} at {rows} x {cols}: max abs err {err:.3g}", flush=True)
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsc-run", required=True)
    ap.add_argument("--model", required=True, help="bench/cpu/row_kernels.dsc built with --target=cuda")
    ap.add_argument("--rows", type=int, default=131072)
    ap.add_argument("--cols", default="768,128")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--baseline", help="the same file built by another revision, timed beside it")
    ap.add_argument("--check-cols", default="1,7,33,128,256,257,768,2048,2049",
                    help="row lengths checked against torch first (257 rows each)")
    a = ap.parse_args()

    print(f"row kernels; device: {torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    checked = all([check(a.dsc_run, a.model, 257, int(c)) for c in a.check_cols.split(",") if c])
    print(f"checked against torch at 257 x {{{a.check_cols}}}: {'ok' if checked else 'MISMATCH'}", flush=True)

    def time_dsc(model: str, R: int, C: int) -> dict:
        return {k: peers.run_dsc(a.dsc_run, model, [f"--entry={k}", f"--shape=R={R},C={C}",
                                                     "--random-weights"], a.runs, a.warmup)[0]
                for k in KERNELS}

    results = []
    for C in (int(c) for c in a.cols.split(",")):
        R = a.rows
        gb = 2 * R * C * 4 / 1e9  # read the input, write the output
        dsc = time_dsc(a.model, R, C)
        baseline = time_dsc(a.baseline, R, C) if a.baseline else None
        x, g, b = (torch.randn(R, C, device="cuda"), torch.randn(C, device="cuda"),
                   torch.randn(C, device="cuda"))
        y = torch.empty_like(x)
        with torch.inference_mode():
            eager = {"copy": peers.time_gpu(lambda: x.clone(), a.runs, a.warmup),
                     "copy_into": peers.time_gpu(lambda: y.copy_(x), a.runs, a.warmup),
                     "softmax": peers.time_gpu(lambda: F.softmax(x, dim=-1), a.runs, a.warmup),
                     "layer_norm": peers.time_gpu(lambda: F.layer_norm(x, (C,), g, b), a.runs, a.warmup)}
        best_copy = min(dsc["copy"], eager["copy"], eager["copy_into"])
        row = {"R": R, "C": C, "dsc_ms": dsc, "eager_ms": eager,
               "copy_GBps": gb / (best_copy / 1e3),
               "dsc_fraction": {k: best_copy / dsc[k] for k in KERNELS},
               "eager_fraction": {k: best_copy / eager[k] for k in ("softmax", "layer_norm")}}
        if baseline:
            row["baseline_ms"] = baseline
            row["baseline_over_dsc"] = {k: baseline[k] / dsc[k] for k in KERNELS}
            print("  baseline/this: " + ", ".join(f"{k} {baseline[k]:.3f}/{dsc[k]:.3f} ms = "
                                                   f"{baseline[k] / dsc[k]:.2f}" for k in KERNELS))
        results.append(row)
        print(f"{R} x {C} f32: best copy {best_copy:.3f} ms = {row['copy_GBps']:.0f} GB/s "
              f"(dsc copy {dsc['copy']:.3f}, torch clone {eager['copy']:.3f}, copy_ {eager['copy_into']:.3f} ms)")
        for k in ("softmax", "layer_norm"):
            print(f"  {k:10s} dsc {dsc[k]:8.3f} ms ({row['dsc_fraction'][k]:.0%} of copy)   "
                  f"eager {eager[k]:8.3f} ms ({row['eager_fraction'][k]:.0%})   eager/dsc {eager[k] / dsc[k]:.2f}",
                  flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "checked": checked, "rows": results}, f, indent=1)
    return 0 if checked else 1


if __name__ == "__main__":
    sys.exit(main())
