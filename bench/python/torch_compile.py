#!/usr/bin/env python3
"""torch.compile(backend="dsc") against backend="inductor", both dynamic=True, on the zoo's
BERT layer and GPT-2 decode step (full width, f32, CPU), at the same thread count in one run.

    PYTHONPATH=build/python python3 bench/python/torch_compile.py --threads 2 [--runs 20]
        [--models bert,gpt2_decode] [--json FILE]

For each model and backend, after torch._dynamo.reset():
  - compile time: the wall time of the first call (Dynamo's trace, then the backend: dsc's
    import, compile and link, or Inductor's lowering, C++ generation and build; Inductor's
    on-disk cache is a fresh temporary directory, so it is cold);
  - compiles: how many times the backend was called over a sweep of 20 shapes (every size at
    least 2 where it is dynamic: Dynamo specializes 0 and 1 for every backend alike);
  - run time at each shape: the median of --runs calls after 2 warm-up calls, under
    torch.inference_mode(); the ratio inductor / dsc (above 1: dsc is faster) and its geomean.
Eager is timed too, and every output is checked against eager (1e-3 relative).

The BERT layer: x f32[B, S, 768] and an int mask, 20 (B, S) with B in 2..8 and S in 16..384.
The decode step: one new token (x f32[1, 1, 768]) against a KV cache of P positions, P over
20 values in 16..1000. Reported beside each: GFLOP/s and the fraction of the machine's f32 FMA
peak given by --peak-gflops (bench/cpu/peak_flops.c measures it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "importers"))


def bert_shapes() -> list[dict]:
    bs = [2, 3, 4, 5, 6, 7, 8]
    ss = [16, 23, 32, 41, 64, 97, 128, 131, 192, 256, 263, 384]
    return [{"B": bs[i % len(bs)], "S": ss[(i * 5) % len(ss)]} for i in range(20)]


def decode_shapes() -> list[dict]:
    ps = [16, 17, 31, 64, 100, 127, 128, 200, 255, 256, 300, 383, 384, 500, 511, 512, 640,
          777, 900, 1000]
    return [{"B": 1, "T": 1, "P": p} for p in ps]


def bert_flops(shape: dict, d=768, ff=3072) -> float:
    tokens = shape["B"] * shape["S"]
    return 2 * tokens * (4 * d * d + 2 * d * ff) + 4 * shape["B"] * shape["S"] ** 2 * d


def decode_flops(shape: dict, d=768) -> float:
    return 2 * (4 * d * d + 2 * d * 4 * d) + 4 * (shape["P"] + 1) * d


MODELS = {
    "bert": ("bert", bert_shapes, bert_flops),
    "gpt2_decode": ("gpt2", decode_shapes, decode_flops),
}


class Counting:
    """A backend that counts its calls."""

    def __init__(self, backend):
        self.backend = backend
        self.calls = 0

    def __call__(self, gm, example_inputs):
        self.calls += 1
        return self.backend(gm, example_inputs)


def median_ms(fn, inputs: dict, runs: int) -> float:
    import torch
    with torch.inference_mode():
        for _ in range(2):
            fn(**inputs)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            fn(**inputs)
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def close(a, b) -> bool:
    import torch
    if isinstance(a, (tuple, list)):
        return all(close(x, y) for x, y in zip(a, b))
    return bool(torch.allclose(a, b, rtol=1e-3, atol=1e-3))


def bench_model(key: str, runs: int, peak: float | None) -> dict:
    import torch
    import torch._dynamo
    from torch._inductor.compile_fx import compile_fx
    import dsc.torch_backend
    from zoo import models

    zoo_name, shapes_of, flops_of = MODELS[key]
    model, z = models.build(zoo_name, "full")
    model.eval()
    shapes = shapes_of()
    inputs = [z.make_inputs(s, i) for i, s in enumerate(shapes)]
    eager = [median_ms(model, x, runs) for x in inputs]
    with torch.inference_mode():
        refs = [model(**x) for x in inputs]
    result = {"model": key, "shapes": shapes, "eager_ms": eager, "backends": {}}
    for name, backend in (("dsc", dsc.torch_backend.backend), ("inductor", compile_fx)):
        torch._dynamo.reset()
        counting = Counting(backend)
        compiled = torch.compile(model, backend=counting, dynamic=True)
        t0 = time.perf_counter()
        with torch.inference_mode():
            first = compiled(**inputs[0])
        compile_s = time.perf_counter() - t0
        times, ok = [], close(first, refs[0])
        for x, ref in zip(inputs, refs):
            with torch.inference_mode():
                ok = ok and close(compiled(**x), ref)
            times.append(median_ms(compiled, x, runs))
        result["backends"][name] = {"compile_s": compile_s, "compiles": counting.calls,
                                    "ms": times, "matches_eager": ok}
        print(f"{key} {name:8}: first call {compile_s:6.2f} s, {counting.calls} compile(s) "
              f"for {len(shapes)} shapes, outputs {'match' if ok else 'DIFFER from'} eager",
              flush=True)
    d, ind = result["backends"]["dsc"]["ms"], result["backends"]["inductor"]["ms"]
    print(f"{'shape':>14} {'eager ms':>9} {'inductor':>9} {'dsc':>9} {'ind/dsc':>8} {'eager/dsc':>9}"
          + ("  dsc GFLOP/s (peak)" if peak else ""))
    for s, e, i, t in zip(shapes, eager, ind, d):
        label = "x".join(str(v) for v in s.values())
        gf = flops_of(s) / (t * 1e-3) / 1e9
        print(f"{label:>14} {e:9.3f} {i:9.3f} {t:9.3f} {i / t:8.2f} {e / t:9.2f}"
              + (f"  {gf:7.1f} ({gf / peak:.0%})" if peak else ""))
    geo = math.exp(statistics.mean(math.log(i / t) for i, t in zip(ind, d)))
    geo_eager = math.exp(statistics.mean(math.log(e / t) for e, t in zip(eager, d)))
    result.update(geomean_inductor_over_dsc=geo, geomean_eager_over_dsc=geo_eager)
    print(f"{key}: geomean inductor/dsc {geo:.2f}x, eager/dsc {geo_eager:.2f}x\n", flush=True)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--models", default="bert,gpt2_decode")
    ap.add_argument("--peak-gflops", type=float, help="the machine's f32 FMA peak, for the "
                    "fraction of it (bench/cpu/peak_flops.c)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    os.environ["DSC_NUM_THREADS"] = str(args.threads)
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="inductor-"))
    import torch
    import dsc
    torch.set_num_threads(args.threads)
    dsc.set_num_threads(args.threads)
    results = {"threads": args.threads, "torch": torch.__version__, "models": []}
    for key in args.models.split(","):
        results["models"].append(bench_model(key, args.runs, args.peak_gflops))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
