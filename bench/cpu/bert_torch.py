#!/usr/bin/env python3
"""examples/bert_layer.dsc in PyTorch eager (fp32, CPU): the baseline of bench/cpu/run.py.

The layer, op for op as the .dsc source writes it:

    q, k, v = split(x @ w_qkv + b_qkv, 3, axis=-1)
    qh = permute(reshape(q, [B, S, 12, 64]), [0, 2, 1, 3])          # [B, 12, S, 64]
    kh = permute(reshape(k, [B, S, 12, 64]), [0, 2, 3, 1])          # [B, 12, 64, S]
    vh = permute(reshape(v, [B, S, 12, 64]), [0, 2, 1, 3])
    p  = softmax(qh @ kh * 0.125 + reshape(mask, [B, 1, 1, S]), axis=-1)
    a  = reshape(permute(p @ vh, [0, 2, 1, 3]), [B, S, 768])
    h  = layer_norm(x + a @ w_o + b_o, g1, e1, eps=1e-12)
    y  = layer_norm(h + gelu(h @ w1 + b1) @ w2 + b2, g2, e2, eps=1e-12)   # erf GELU

Variants (--variant):
  eager    (default) what a PyTorch user writes, i.e. nn.Linear: the projections are
           F.linear(x, W^T, b) (one addmm with the bias fused, W^T made contiguous once at
           load time, untimed, as nn.Linear stores it); attention is the explicit
           matmul / scale / mask add / F.softmax / matmul above; F.layer_norm; F.gelu (erf).
  literal  the .dsc line by line: torch.matmul(x, W) + b with W as given ([in, out]).
  sdpa     as eager, but attention is F.scaled_dot_product_attention with the additive mask
           and scale=0.125 (what Hugging Face's BERT uses today).
All three compute the same function; the timing runs under torch.inference_mode().
The other peers of run.py are built from this same BertLayer: bert_compile.py (torch.compile)
and bert_onnx.py (exported to ONNX, run by ONNX Runtime).

Dtypes (--dtype f32|bf16|f16, default f32): the parameters are drawn in float32 (random_params)
and the layer converts its weights, x and mask to the dtype (torch's round to nearest even),
so every op runs in it as PyTorch runs it (bf16 matmuls in oneDNN where the CPU has
AVX512_BF16; f16 matmuls on a CPU without AVX512_FP16 or AMX-FP16 in a slow fallback). Outputs
come back to NumPy as float32 holding the dtype's values. compare() takes the dtype's
tolerance (TOLERANCES, those of tests/importers/harness.py).

Standalone:
    python3 bench/cpu/bert_torch.py --shapes 1x32,1x128 --threads 2 --runs 20
    # numerics against dsc with identical inputs:
    python3 bench/cpu/bert_torch.py --save-inputs /tmp/bert_in --shapes 2x7
    dscc run examples/bert_layer.dsc $(python3 bench/cpu/bert_torch.py --input-args /tmp/bert_in) \
        --output=/tmp/bert_out
    python3 bench/cpu/bert_torch.py --load /tmp/bert_in --compare /tmp/bert_out/output0.npy
    # the FLOP count of sgemm_rate.py against torch's FlopCounterMode:
    python3 bench/cpu/bert_torch.py --check-flops
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HIDDEN, HEADS, HEAD_DIM, FFN = 768, 12, 64, 3072

# Parameter order and shapes of examples/bert_layer.dsc's `layer`.
PARAMS = [
    ("x", lambda B, S: (B, S, HIDDEN)),
    ("mask", lambda B, S: (B, S)),
    ("w_qkv", lambda B, S: (HIDDEN, 3 * HIDDEN)),
    ("b_qkv", lambda B, S: (3 * HIDDEN,)),
    ("w_o", lambda B, S: (HIDDEN, HIDDEN)),
    ("b_o", lambda B, S: (HIDDEN,)),
    ("g1", lambda B, S: (HIDDEN,)),
    ("e1", lambda B, S: (HIDDEN,)),
    ("w1", lambda B, S: (HIDDEN, FFN)),
    ("b1", lambda B, S: (FFN,)),
    ("w2", lambda B, S: (FFN, HIDDEN)),
    ("b2", lambda B, S: (HIDDEN,)),
    ("g2", lambda B, S: (HIDDEN,)),
    ("e2", lambda B, S: (HIDDEN,)),
]
WEIGHTS = [name for name, _ in PARAMS if name not in ("x", "mask")]
VARIANTS = ("eager", "literal", "sdpa")

# The dtypes the layer runs in (dsc's names), and torch's for them.
DTYPES = ("f32", "bf16", "f16")
TORCH_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}
# compare()'s tolerance for a layer computed in each dtype against a reference in the same dtype:
# tests/importers/harness.py's TOLERANCES, which states why (bf16 3e-2 and f16 5e-3 are about 8
# and 10 roundings of the dtype, as a fraction of rms(ref) + |ref|; f32 1e-4 as
# tests/e2e/check_examples.py).
TOLERANCES = {"f32": 1e-4, "bf16": 3e-2, "f16": 5e-3}


def torch_dtype(dtype: str) -> torch.dtype:
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}")
    return getattr(torch, TORCH_DTYPES[dtype])


def round_params(params: dict[str, np.ndarray], dtype: str) -> dict[str, np.ndarray]:
    """float32 arrays holding each value rounded to `dtype` (as the layer converts it: torch's
    round to nearest even), so that dsc and torch are given the same values."""
    if dtype == "f32":
        return params
    dt = torch_dtype(dtype)
    return {k: torch.from_numpy(np.ascontiguousarray(v)).to(dt).float().numpy()
            for k, v in params.items()}


def random_params(B: int, S: int, seed: int = 0) -> dict[str, np.ndarray]:
    """float32 arrays with O(1) activations: matrices ~ N(0, 1/fan_in), gammas ~ 1, biases and
    betas ~ 0.1 N(0, 1), x ~ N(0, 1), and BERT's additive mask (0 kept, -10000 padded; each
    batch row keeps a random prefix of at least one key)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape_of in PARAMS:
        shape = shape_of(B, S)
        if name == "x":
            a = rng.standard_normal(shape)
        elif name == "mask":
            keep = rng.integers(1, S + 1, size=B)
            a = np.where(np.arange(S)[None, :] < keep[:, None], 0.0, -10000.0)
        else:
            a = random_weight(rng, name, shape)
        out[name] = np.ascontiguousarray(a, dtype=np.float32)
    return out


def random_weight(rng: np.random.Generator, name: str, shape: tuple) -> np.ndarray:
    """A weight drawn by its name: matrices (w*) ~ N(0, 1/fan_in), gammas (g*) ~ 1 + 0.1 N(0, 1),
    biases and betas ~ 0.1 N(0, 1). bench/cpu/gpt_torch.py draws its block's weights alike."""
    if name.startswith("w"):
        return rng.standard_normal(shape) / math.sqrt(shape[0])
    if name.startswith("g"):
        return 1.0 + 0.1 * rng.standard_normal(shape)
    return 0.1 * rng.standard_normal(shape)


def load_params(directory: str) -> dict[str, np.ndarray]:
    """Every parameter from DIRECTORY/NAME.npy (float32, or float16 as --save-inputs writes it
    with --dtype f16; returned as float32), the .dsc shapes."""
    out = {}
    for name, _ in PARAMS:
        a = np.load(os.path.join(directory, f"{name}.npy"), allow_pickle=False)
        if a.dtype not in (np.float32, np.float16):
            raise ValueError(f"{name}.npy is {a.dtype}, expected float32 or float16")
        out[name] = a.astype(np.float32)
    B, S = out["x"].shape[:2]
    for name, shape_of in PARAMS:
        if out[name].shape != shape_of(B, S):
            raise ValueError(f"{name}.npy has shape {out[name].shape}, expected {shape_of(B, S)}")
    return out


def save_params(directory: str, params: dict[str, np.ndarray]) -> None:
    os.makedirs(directory, exist_ok=True)
    for name, a in params.items():
        np.save(os.path.join(directory, f"{name}.npy"), a, allow_pickle=False)


def input_args(directory: str) -> list[str]:
    """`--input NAME=DIR/NAME.npy` for every parameter, for `dscc run`."""
    args = []
    for name, _ in PARAMS:
        args += ["--input", f"{name}={os.path.join(os.path.abspath(directory), name + '.npy')}"]
    return args


class BertLayer:
    """The layer with its weights prepared for one variant, in one dtype (preparation is not
    timed). It is called with x and mask already in that dtype (inputs() makes them)."""

    def __init__(self, params: dict[str, np.ndarray], variant: str = "eager", dtype: str = "f32"):
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}")
        self.variant = variant
        self.dtype = dtype
        self.torch_dtype = torch_dtype(dtype)
        t = {k: torch.from_numpy(np.ascontiguousarray(v)).to(self.torch_dtype)
             for k, v in params.items() if k in WEIGHTS}
        self.w = t
        if variant != "literal":
            # nn.Linear's layout: weight [out, in], contiguous.
            self.wt = {k: t[k].t().contiguous() for k in ("w_qkv", "w_o", "w1", "w2")}

    def inputs(self, params: dict[str, np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
        """params' x and mask as tensors in the layer's dtype."""
        return (torch.from_numpy(params["x"]).to(self.torch_dtype),
                torch.from_numpy(params["mask"]).to(self.torch_dtype))

    def _proj(self, x, w, b):
        if self.variant == "literal":
            return torch.matmul(x, self.w[w]) + self.w[b]
        return F.linear(x, self.wt[w], self.w[b])

    def __call__(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        w = self.w
        B, S, _ = x.shape
        q, k, v = torch.split(self._proj(x, "w_qkv", "b_qkv"), HIDDEN, dim=-1)
        qh = q.reshape(B, S, HEADS, HEAD_DIM).permute(0, 2, 1, 3)      # [B, 12, S, 64]
        vh = v.reshape(B, S, HEADS, HEAD_DIM).permute(0, 2, 1, 3)      # [B, 12, S, 64]
        m = mask.reshape(B, 1, 1, S)
        if self.variant == "sdpa":
            kh = k.reshape(B, S, HEADS, HEAD_DIM).permute(0, 2, 1, 3)  # [B, 12, S, 64]
            ctx = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=m, scale=0.125)
        else:
            kh = k.reshape(B, S, HEADS, HEAD_DIM).permute(0, 2, 3, 1)  # [B, 12, 64, S]
            p = F.softmax(torch.matmul(qh, kh) * 0.125 + m, dim=-1)
            ctx = torch.matmul(p, vh)
        a = ctx.permute(0, 2, 1, 3).reshape(B, S, HIDDEN)
        h = F.layer_norm(x + self._proj(a, "w_o", "b_o"), (HIDDEN,), w["g1"], w["e1"], eps=1e-12)
        f = self._proj(F.gelu(self._proj(h, "w1", "b1"), approximate="none"), "w2", "b2")
        return F.layer_norm(h + f, (HIDDEN,), w["g2"], w["e2"], eps=1e-12)


MIN_RUNS = 3  # the fewest timed calls a budget (max_seconds) leaves


def time_calls(call, runs: int, warmup: int, max_seconds: float | None = None) -> dict:
    """Median (and min) wall time of `runs` calls of `call()` after `warmup` calls, in ms, each
    call timed alone with time.perf_counter. The loop of every peer in bench/cpu/ (torch eager,
    torch.compile, ONNX Runtime), so they are all timed alike.

    max_seconds (None: no limit) bounds a pathologically slow call (torch's f16 matmul on a CPU
    without f16 arithmetic): the warm-up stops after the call that brings it past a quarter of
    it, and the timed loop once its calls have taken max_seconds in all, after at least
    MIN_RUNS. `runs` and `warmup` in the result are the calls made (`capped` when fewer than
    asked)."""
    t_start = time.perf_counter()
    done_warmup = 0
    for _ in range(warmup):
        call()
        done_warmup += 1
        if max_seconds is not None and time.perf_counter() - t_start > max_seconds / 4:
            break
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1e3)
        if (max_seconds is not None and len(times) >= MIN_RUNS and
                sum(times) > max_seconds * 1e3):
            break
    r = {"median_ms": statistics.median(times), "min_ms": min(times), "runs": len(times),
         "warmup": done_warmup}
    if len(times) < runs or done_warmup < warmup:
        r.update(capped=True, runs_asked=runs, warmup_asked=warmup, max_seconds=max_seconds)
    return r


def time_layer(layer, x: torch.Tensor, mask: torch.Tensor, runs: int, warmup: int,
               max_seconds: float | None = None) -> dict:
    """time_calls of layer(x, mask) under torch.inference_mode(). `layer` is a BertLayer or
    anything called like one (bert_compile.py passes the torch.compile'd layer)."""
    with torch.inference_mode():
        return time_calls(lambda: layer(x, mask), runs, warmup, max_seconds)


def bench_shape(B: int, S: int, threads: int, runs: int, warmup: int, variant: str = "eager",
                seed: int = 0, dtype: str = "f32", max_seconds: float | None = None) -> dict:
    torch.set_num_threads(threads)
    p = random_params(B, S, seed)
    layer = BertLayer(p, variant, dtype)
    x, mask = layer.inputs(p)
    r = time_layer(layer, x, mask, runs, warmup, max_seconds)
    r.update({"B": B, "S": S, "threads": torch.get_num_threads(), "variant": variant,
              "dtype": dtype})
    return r


def forward_numpy(params: dict[str, np.ndarray], variant: str = "eager",
                  dtype: str = "f32") -> np.ndarray:
    """The layer's output on params, computed in `dtype`, as float32."""
    layer = BertLayer(params, variant, dtype)
    with torch.inference_mode():
        return layer(*layer.inputs(params)).float().numpy()


def compare(out: np.ndarray, ref: np.ndarray, tol: float = 1e-4) -> tuple[bool, str]:
    """The criterion of tests/e2e/check_examples.py: |out - ref| <= tol*(rms(ref) + |ref|)
    (a 16-bit layer: tol = TOLERANCES[dtype])."""
    if out.shape != ref.shape:
        return False, f"shape {out.shape} != {ref.shape}"
    if not np.all(np.isfinite(out)):
        return False, "non-finite values"
    err = np.abs(out.astype(np.float64) - ref.astype(np.float64))
    scale = float(np.sqrt(np.mean(ref.astype(np.float64) ** 2))) or 1.0
    worst = float(np.max(err / (tol * (scale + np.abs(ref.astype(np.float64))))))
    return worst <= 1.0, f"max|err| {float(err.max()):.2e}, rms(ref) {scale:.3g}, worst err/tol {worst:.3f}"


def check_flops(shapes: list[tuple[int, int]]) -> bool:
    """sgemm_rate.bert_layer_flops against torch's own count (FlopCounterMode) of every variant."""
    from torch.utils.flop_counter import FlopCounterMode
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import sgemm_rate
    all_ok = True
    for B, S in shapes:
        p = random_params(B, S)
        ours = sgemm_rate.bert_layer_flops(B, S)
        for variant in VARIANTS:
            layer = BertLayer(p, variant)
            with torch.inference_mode(), FlopCounterMode(display=False) as counter:
                layer(torch.from_numpy(p["x"]), torch.from_numpy(p["mask"]))
            theirs = counter.get_total_flops()
            ok = theirs == ours
            all_ok &= ok
            print(f"{'ok  ' if ok else 'DIFF'} B={B} S={S} {variant}: bert_layer_flops {ours:,}, "
                  f"FlopCounterMode {theirs:,}")
    return all_ok


def parse_shapes(text: str) -> list[tuple[int, int]]:
    out = []
    for item in text.split(","):
        if item:
            b, s = item.lower().split("x")
            out.append((int(b), int(s)))
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="BERT-base layer in PyTorch eager, CPU "
                                             "(fp32, or --dtype bf16|f16).")
    ap.add_argument("--shapes", default="1x32,1x128,4x64,8x128,1x384",
                    help="comma-separated BxS (default: the benchmark's five)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="torch.set_num_threads (default: os.cpu_count())")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per shape (median)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--variant", choices=VARIANTS, default="eager")
    ap.add_argument("--dtype", choices=DTYPES, default="f32",
                    help="the dtype the layer computes in (default f32)")
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="per shape, stop timing once the timed calls took this long (at least "
                         f"{MIN_RUNS} runs; default: no limit)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save-inputs", metavar="DIR",
                    help="write x, mask and the weights at the first shape as DIR/NAME.npy "
                         "(rounded to --dtype: float16 for f16; float32 for f32 and bf16, which "
                         "NumPy has no type for and dscc run takes from float32) plus "
                         "DIR/torch_output.npy, and exit")
    ap.add_argument("--input-args", metavar="DIR",
                    help="print the `--input NAME=DIR/NAME.npy` arguments for dscc run and exit")
    ap.add_argument("--load", metavar="DIR", help="run on DIR/NAME.npy instead of random inputs")
    ap.add_argument("--compare", metavar="FILE.npy",
                    help="with --load: compare this output (e.g. dscc's output0.npy) with torch's")
    ap.add_argument("--check-flops", action="store_true",
                    help="check sgemm_rate.bert_layer_flops against torch's FlopCounterMode at "
                         "--shapes and exit")
    ns = ap.parse_args(argv)
    torch.set_num_threads(ns.threads)

    if ns.check_flops:
        return 0 if check_flops(parse_shapes(ns.shapes)) else 1

    if ns.input_args:
        print(" ".join(input_args(ns.input_args)))
        return 0
    if ns.save_inputs:
        B, S = parse_shapes(ns.shapes)[0]
        p = round_params(random_params(B, S, ns.seed), ns.dtype)
        store = np.float16 if ns.dtype == "f16" else np.float32
        save_params(ns.save_inputs, {k: v.astype(store) for k, v in p.items()})
        np.save(os.path.join(ns.save_inputs, "torch_output.npy"),
                forward_numpy(p, ns.variant, ns.dtype).astype(store))
        print(f"wrote B={B} S={S} inputs and torch_output.npy ({np.dtype(store).name}) to "
              f"{ns.save_inputs}")
        return 0
    if ns.load:
        p = load_params(ns.load)
        y = forward_numpy(p, ns.variant, ns.dtype)
        B, S = p["x"].shape[:2]
        if ns.compare:
            other = np.load(ns.compare, allow_pickle=False).astype(np.float32)
            ok, detail = compare(other, y, TOLERANCES[ns.dtype])
            print(f"{'agree' if ok else 'DISAGREE'} at B={B} S={S}: {ns.compare} vs torch "
                  f"{ns.variant} {ns.dtype}: {detail}")
            return 0 if ok else 1
        layer = BertLayer(p, ns.variant, ns.dtype)
        r = time_layer(layer, *layer.inputs(p), ns.runs, ns.warmup, ns.max_seconds)
        print(f"B={B} S={S}: {r['median_ms']:.3f} ms median (min {r['min_ms']:.3f}) "
              f"over {r['runs']} runs, {torch.get_num_threads()} threads, {ns.variant}, "
              f"{ns.dtype}")
        return 0

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, variant {ns.variant}, "
          f"{ns.dtype}, median of {ns.runs} runs after {ns.warmup} warm-up")
    for B, S in parse_shapes(ns.shapes):
        r = bench_shape(B, S, ns.threads, ns.runs, ns.warmup, ns.variant, ns.seed, ns.dtype,
                        ns.max_seconds)
        capped = f", {r['runs']} runs (--max-seconds)" if r.get("capped") else ""
        print(f"B={B:<3d} S={S:<4d} {r['median_ms']:9.3f} ms  (min {r['min_ms']:.3f}){capped}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
