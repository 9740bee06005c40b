#!/usr/bin/env python3
"""A GPT-2 block in decode mode (examples/gpt_decode.dsc): dsc against PyTorch eager, side by
side in one run at the same thread count, as ratios.

One new token per sequence against a KV cache of T earlier tokens, at B (the batch, i.e. the
GEMMs' M) in 1..8 and T in {128, 512}: the products are skinny (M = B), so this measures the
small-M GEMM path, the weight packing that dsc does once for constant weights, and the per-call
overheads, not the square-GEMM rate.

  python3 bench/cpu/decode.py --threads 2 --runs 30 [--shapes 1x128,8x512] [--out PATH]

dsc: `dscc build examples/gpt_decode.dsc` once, then `dscc run MODEL.so --shape B=..,T=..
--random-weights --bench=R` per shape (the weights declared constant, packed on the first
call, as `dscc run` does by default). torch: the same block (bench/cpu/gpt_torch.py) under
torch.inference_mode(), timed with bert_torch.time_calls (median of R calls after W warm-up).
torch's layer_norm eps (1e-5) and erf GELU match the .dsc. `torch/dsc` > 1 means dsc is faster.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import run  # bench/cpu/run.py: dscc helpers
import bert_torch

MODEL = "examples/gpt_decode.dsc"
DEFAULT_SHAPES = "1x128,2x128,4x128,8x128,1x512,8x512"


def parse_shapes(text: str) -> list[tuple[int, int]]:
    """'BxT,...' (the same syntax as run.py's BxS)."""
    return run.parse_shapes(text)


def torch_decode(threads: int, B: int, T: int, runs: int, warmup: int, seed: int = 0) -> dict:
    import torch
    import gpt_torch
    torch.set_num_threads(threads)
    p = gpt_torch.random_params(B, T, seed)
    block = gpt_torch.GptDecode(p)
    x, past_k, past_v = (torch.from_numpy(p[n]) for n in gpt_torch.ACTIVATIONS)
    with torch.inference_mode():
        return bert_torch.time_calls(lambda: block(x, past_k, past_v), runs, warmup)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="GPT-2 block, decode step, fp32 CPU: dsc vs PyTorch eager.")
    ap.add_argument("--dscc", default=os.environ.get("DSCC", os.path.join(run.ROOT, "build/tools/dscc/dscc")))
    ap.add_argument("--shapes", default=DEFAULT_SHAPES, help=f"comma-separated BxT (default {DEFAULT_SHAPES})")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5, help="torch warm-up calls (default 5)")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--out", help="write OUT.json with every number")
    ns = ap.parse_args(argv)
    if ns.threads < 1 or ns.runs < 1:
        ap.error("--threads and --runs must be positive")
    shapes = parse_shapes(ns.shapes)

    with tempfile.TemporaryDirectory(prefix="dsc-bench-decode-") as tmp:
        so = os.path.join(tmp, "gpt_decode.so")
        build = run.dsc_build(ns.dscc, MODEL, so, ns.threads, run.ROOT, ns.timeout)
        if "error" in build:
            print(f"decode.py: dscc build failed: {build.get('error')}", file=sys.stderr)
            return 1
        rows = []
        print(f"GPT-2 block decode step, {ns.threads} threads, median of {ns.runs} runs; "
              f"machine: {run.cpu_model()}; load {run.loadavg()}")
        print(f"{'shape':14s} {'dsc ms':>9s} {'torch ms':>9s} {'torch/dsc':>9s}")
        for B, T in shapes:
            rc, out, err = run.run_dscc([ns.dscc, "run", so, f"--shape=B={B},T={T}", "--random-weights",
                                         f"--bench={ns.runs}"], ns.threads, run.ROOT, ns.timeout)
            m = run.DSC_MEDIAN_RE.search(out)
            if rc != 0 or not m:
                print(f"decode.py: dscc run failed at B={B} T={T}: {run.first_error(out, err)}",
                      file=sys.stderr)
                return 1
            dsc = float(m.group(1))
            torch_ms = torch_decode(ns.threads, B, T, ns.runs, ns.warmup)["median_ms"]
            rows.append({"B": B, "T": T, "dsc_ms": dsc, "torch_ms": torch_ms, "ratio": torch_ms / dsc})
            print(f"B={B:<3d} T={T:<6d} {dsc:9.3f} {torch_ms:9.3f} {torch_ms / dsc:9.2f}", flush=True)
        gm = run.geomean([r["ratio"] for r in rows])
        print(f"geomean torch/dsc: {gm:.3f}")
        if ns.out:
            with open(ns.out if ns.out.endswith(".json") else ns.out + ".json", "w") as f:
                json.dump({"threads": ns.threads, "runs": ns.runs, "rows": rows, "geomean": gm,
                           "dscc_build": build, "machine": run.cpu_model(),
                           "revision": run.git_revision(run.ROOT)}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
