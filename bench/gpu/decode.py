#!/usr/bin/env python3
"""A GPT-2 block's decode step on the GPU (examples/gpt_decode.dsc built with --target=cuda, run
by dsc-run) against the same block in PyTorch eager and torch.compile(dynamic=True)
(bench/cpu/gpt_torch.py), on the same GPU in the same run, fp32 with TF32 off on both sides.

    python3 bench/gpu/decode.py --dsc-run .gpu/bin/dsc-run --model .gpu/gpt_decode_cuda.so \
        --shapes 1x128,2x128,4x128,8x128,1x512,8x512 --runs 50

One new token per sequence against a KV cache of T tokens, B (the GEMMs' M) from 1 to 8: skinny
products and small kernels, so this measures per-call overhead and the small-M GEMM path. Every
shape first checks dsc's three outputs (y and the grown caches) against torch's, then times each
peer as the median of synchronized calls. Prints one table and the geomeans; --json writes
them.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cpu"))
import bert_torch  # noqa: E402  (compare)
import gpt_torch  # noqa: E402
import peers  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    peers.add_options(ap, "examples/gpt_decode.dsc built with --target=cuda", "1x128,2x128,4x128,8x128,1x512,8x512")
    a = ap.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"GPT-2 decode step; device: {torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    rows, ok, compiled = [], True, None
    for B, T in (tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")):
        p = gpt_torch.random_params(B, T)
        with tempfile.TemporaryDirectory() as d:
            dsc_ms, dsc_out = peers.run_dsc(a.dsc_run, a.model, peers.input_args(d, p), a.runs, a.warmup,
                                            os.path.join(d, "out"))
        block = gpt_torch.GptDecode(p, "cuda")
        x, past_k, past_v = (torch.from_numpy(p[n]).cuda() for n in gpt_torch.ACTIVATIONS)
        with torch.inference_mode():
            refs = [t.cpu().numpy() for t in block(x, past_k, past_v)]
            checks = [bert_torch.compare(o, r, tol=1e-3) for o, r in zip(dsc_out, refs)]
            good = len(dsc_out) == 3 and all(c[0] for c in checks)
            detail = "; ".join(c[1] for c in checks) if checks else "no outputs"
            ok &= good
            eager_ms = peers.time_gpu(lambda: block(x, past_k, past_v), a.runs, a.warmup)
            compile_ms = None
            if not a.no_compile:
                if compiled is None:
                    compiled = peers.Compiled(block.__call__)
                compiled(x, past_k, past_v)
                compile_ms = peers.time_gpu(lambda: compiled(x, past_k, past_v), a.runs, a.warmup)
        rows.append(peers.ratio_row({"B": B, "T": T}, dsc_ms, eager_ms, compile_ms, good, detail))

    peers.summarize(rows, compiled.first_call_s if compiled else None, a.json)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
