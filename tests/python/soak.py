#!/usr/bin/env python3
"""Long runs: memory stays flat (issue 40, item 5).

    PYTHONPATH=build/python python3 tests/python/soak.py [--calls 100000] [--cycles 2000]

1. The MLP example with its weights bound (declared constant, so packed once) called --calls
   times at batch sizes that change every call (1 to 64, primes among them); every 1000th
   result is checked against NumPy. The process's resident memory after the first tenth of
   the calls (warm-up: the arena and the packed weights reach their size) and at the end may
   differ by at most 8 MiB.
2. The constant-pack cache: --cycles times, a fresh weight array is bound (declared, then
   packed by a call) and the module released (which releases the declaration and its packed
   copy); resident memory after a tenth of the cycles and at the end may differ by at most
   8 MiB: packed copies of released weights do not pile up.
3. Decoding: examples/gpt_decode.dsc (a GPT-2 block in decode mode, its weights bound) run
   for --steps steps, each step's output the next step's input and its KV cache a sliding
   window of at most 63 earlier tokens, so every cache length from 0 to 63 recurs; every
   1000th step is checked against NumPy. Resident memory after a tenth of the steps and at
   the end may differ by at most 8 MiB.

Exit status 0, or 1 with the measured growth. Run by ctest (python_soak).
"""

from __future__ import annotations

import argparse
import gc
import math
import pathlib
import sys

import numpy as np

import dsc

ROOT = pathlib.Path(__file__).resolve().parents[2]
MARGIN = 8 << 20


def rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def reference(x, w):
    h = np.maximum(x @ w["w1"] + w["b1"], 0) @ w["w2"] + w["b2"]
    e = np.exp(h - h.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def weights(rng):
    return {"w1": (rng.standard_normal((784, 256)) * 0.05).astype(np.float32),
            "b1": rng.standard_normal(256).astype(np.float32),
            "w2": (rng.standard_normal((256, 10)) * 0.05).astype(np.float32),
            "b2": rng.standard_normal(10).astype(np.float32)}


def calls(n: int) -> tuple[int, int]:
    rng = np.random.default_rng(0)
    w = weights(rng)
    module = dsc.compile(ROOT / "examples" / "mlp.dsc").bind(w)
    batches = [1, 2, 3, 5, 7, 8, 13, 16, 31, 32, 61, 64]
    inputs = {b: rng.standard_normal((b, 784)).astype(np.float32) for b in batches}
    warm = 0
    for i in range(n):
        b = batches[(i * 7) % len(batches)]
        y = module.mlp(inputs[b])
        if i % 1000 == 0:
            np.testing.assert_allclose(y, reference(inputs[b], w), rtol=1e-4, atol=1e-5)
        if i == n // 10:
            gc.collect()
            warm = rss_bytes()
    gc.collect()
    return warm, rss_bytes()


def rebinding(cycles: int) -> tuple[int, int]:
    rng = np.random.default_rng(1)
    source = (ROOT / "examples" / "mlp.dsc").read_text()
    base = dsc.compile(source)
    path = base.path
    x = rng.standard_normal((4, 784)).astype(np.float32)
    warm = 0
    for i in range(cycles):
        w = weights(rng) if i % 50 == 0 else {k: v.copy() for k, v in w.items()}
        module = dsc.load(path).bind(w)  # declared constant
        module.mlp(x)                    # packed
        del module                       # released with its packed copies
        if i == cycles // 10:
            gc.collect()
            warm = rss_bytes()
    gc.collect()
    return warm, rss_bytes()


def decode_reference(x, past_k, past_v, w):
    def layer_norm(h, g, e):
        mu = h.mean(-1, keepdims=True)
        var = ((h - mu) ** 2).mean(-1, keepdims=True)
        return (h - mu) / np.sqrt(var + 1e-5) * g + e

    def gelu(h):
        return 0.5 * h * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))

    b = x.shape[0]
    q, k, v = np.split(layer_norm(x, w["g1"], w["e1"]) @ w["w_qkv"] + w["b_qkv"], 3, axis=-1)
    keys = np.concatenate([past_k, k.reshape(b, 12, 1, 64)], axis=2)
    values = np.concatenate([past_v, v.reshape(b, 12, 1, 64)], axis=2)
    scores = q.reshape(b, 12, 1, 64) @ keys.transpose(0, 1, 3, 2) * 0.125
    e = np.exp(scores - scores.max(-1, keepdims=True))
    a = ((e / e.sum(-1, keepdims=True)) @ values).reshape(b, 768)
    h = x + a @ w["w_o"] + w["b_o"]
    y = h + gelu(layer_norm(h, w["g2"], w["e2"]) @ w["w1"] + w["b1"]) @ w["w2"] + w["b2"]
    return y, keys, values


def decoding(steps: int) -> tuple[int, int]:
    rng = np.random.default_rng(2)
    shapes = {"g1": (768,), "e1": (768,), "w_qkv": (768, 2304), "b_qkv": (2304,),
              "w_o": (768, 768), "b_o": (768,), "g2": (768,), "e2": (768,),
              "w1": (768, 3072), "b1": (3072,), "w2": (3072, 768), "b2": (768,)}
    w = {k: (rng.standard_normal(s) * (0.02 if len(s) == 2 else 0.1)).astype(np.float32)
         for k, s in shapes.items()}
    w["g1"] += 1
    w["g2"] += 1
    module = dsc.compile(ROOT / "examples" / "gpt_decode.dsc").bind(w)
    x = rng.standard_normal((1, 768)).astype(np.float32)
    keys = np.zeros((1, 12, 0, 64), np.float32)
    values = np.zeros((1, 12, 0, 64), np.float32)
    warm = 0
    for i in range(steps):
        y, new_keys, new_values = module.decode(x, keys, values)
        if i % 1000 == 0:
            want = decode_reference(x, keys, values, w)
            for got, ref in zip((y, new_keys, new_values), want):
                np.testing.assert_allclose(got, ref, rtol=2e-3, atol=2e-3)
        # The next input: the output, normalized so that it stays in range over the steps.
        x = (y - y.mean()) / (y.std() + 1e-6)
        keys, values = np.asarray(new_keys)[:, :, -63:], np.asarray(new_values)[:, :, -63:]
        if i == steps // 10:
            gc.collect()
            warm = rss_bytes()
    gc.collect()
    return warm, rss_bytes()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=100000)
    ap.add_argument("--cycles", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=10000)
    args = ap.parse_args()
    failed = False
    for label, (warm, end) in (("calls", calls(args.calls)),
                               ("bind/release cycles", rebinding(args.cycles)),
                               ("decode steps", decoding(args.steps))):
        growth = end - warm
        ok = growth <= MARGIN
        failed |= not ok
        print(f"{'PASS' if ok else 'FAIL'} {label}: resident {warm / 2**20:.1f} MiB after warm-up, "
              f"{end / 2**20:.1f} MiB at the end ({growth / 2**20:+.2f} MiB; at most "
              f"{MARGIN / 2**20:.0f})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
