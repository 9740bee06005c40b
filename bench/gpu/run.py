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
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cpu"))
import bert_torch  # noqa: E402
import peers  # noqa: E402  bench/gpu/peers.py


def cuda_layer(params: dict, variant: str = "eager") -> bert_torch.BertLayer:
    layer = bert_torch.BertLayer(params, variant)
    layer.w = {k: v.cuda() for k, v in layer.w.items()}
    if hasattr(layer, "wt"):
        layer.wt = {k: v.cuda() for k, v in layer.wt.items()}
    return layer


def dsc_layer(dsc_run: str, model: str, params: dict, runs: int, warmup: int) -> tuple[float, np.ndarray]:
    with tempfile.TemporaryDirectory() as d:
        ms, outputs = peers.run_dsc(dsc_run, model, peers.input_args(d, params), runs, warmup,
                                    os.path.join(d, "out"))
    return ms, outputs[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    peers.add_options(ap, "examples/bert_layer.dsc built with --target=cuda", "1x32,1x128,4x64,8x128,1x384")
    a = ap.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    shapes = [tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")]
    rows, ok = [], True
    compiled = None
    for B, S in shapes:
        p = bert_torch.random_params(B, S)
        dsc_ms, dsc_out = dsc_layer(a.dsc_run, a.model, p, a.runs, a.warmup)
        layer = cuda_layer(p)
        x, mask = torch.from_numpy(p["x"]).cuda(), torch.from_numpy(p["mask"]).cuda()
        with torch.inference_mode():
            ref = layer(x, mask).cpu().numpy()
            good, detail = bert_torch.compare(dsc_out, ref, tol=1e-3)
            ok &= good
            eager_ms = peers.time_gpu(lambda: layer(x, mask), a.runs, a.warmup)
            compile_ms = None
            if not a.no_compile:
                if compiled is None:
                    compiled = peers.Compiled(layer.__call__)
                compiled(x, mask)
                compile_ms = peers.time_gpu(lambda: compiled(x, mask), a.runs, a.warmup)
        rows.append(peers.ratio_row({"B": B, "S": S}, dsc_ms, eager_ms, compile_ms, good, detail))

    peers.summarize(rows, compiled.first_call_s if compiled else None, a.json)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
