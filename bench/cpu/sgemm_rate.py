#!/usr/bin/env python3
"""The machine's fp32 GEMM rate (GFLOP/s), for the sgemm-bound floor of bench/cpu/run.py.

Two BLAS libraries are measured, each with the same thread count:
  - torch.matmul: PyTorch's CPU build calls MKL's sgemm (the PyPI wheel links MKL statically);
  - OpenBLAS: the system libopenblas.so.0 (Debian's libopenblas0-pthread), the library dsc's
    runtime calls for every matmul (runtime/Matmul.cpp), called here through ctypes as
    cblas_sgemm, row-major, like dsc does.
on a large square product (N x N x N, default N = 2048) and on the GEMMs of one BERT-base layer
at a given (B, S):
  qkv   [B*S, 768]  x [768, 2304]
  proj  [B*S, 768]  x [768, 768]
  ffn1  [B*S, 768]  x [768, 3072]
  ffn2  [B*S, 3072] x [3072, 768]
  qk    B*12 x [S, 64] x [64, S]      (batched)
  pv    B*12 x [S, S]  x [S, 64]      (batched)
A product of m x k by k x n counts 2*m*n*k FLOPs. Each product is called --warmup times, then
timed over --repeat calls (and at least 0.2 s), on the same inputs (they stay in cache when they
fit, as the layer's weights would in a steady-state loop). Both the median and the fastest call
are reported; a square rate is taken from the fastest call, since other load on the machine
only ever slows a call down.

    python3 bench/cpu/sgemm_rate.py                  # square 2048, both libraries
    python3 bench/cpu/sgemm_rate.py --layer 8x128    # plus the layer's GEMMs at B=8, S=128
    python3 bench/cpu/sgemm_rate.py --threads 1 --json rates.json

The rate the floor uses (`rate_used`) is the best square rate of the two libraries (fastest
call): the fastest fp32 GEMM this machine has been shown to run, so a floor computed from it is
a lower bound for any implementation, dsc's included.

`--libs torch:bf16` (or torch:f16) also times torch.matmul in that dtype (oneDNN's bf16 GEMM
where the CPU has AVX512_BF16): run.py --dtype bf16 adds it, so that its floor is the best rate
of a GEMM in f32 or in bf16. (torch's f16 GEMM on a CPU without AVX512_FP16 or AMX-FP16 runs
at a few GFLOP/s: run.py --dtype f16 leaves it out, an f16 GEMM being no faster than f32 there.)
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import os
import statistics
import sys
import time

import openblas_core

# ---------------------------------------------------------------------------------------------
# FLOP counts
# ---------------------------------------------------------------------------------------------

HIDDEN, HEADS, HEAD_DIM, FFN = 768, 12, 64, 3072


def bert_layer_gemms(B: int, S: int) -> list[tuple[str, int, int, int, int]]:
    """(name, batch, m, n, k) of every matmul in examples/bert_layer.dsc at (B, S)."""
    M = B * S
    return [
        ("qkv", 1, M, 3 * HIDDEN, HIDDEN),
        ("proj", 1, M, HIDDEN, HIDDEN),
        ("ffn1", 1, M, FFN, HIDDEN),
        ("ffn2", 1, M, HIDDEN, FFN),
        ("qk", B * HEADS, S, S, HEAD_DIM),
        ("pv", B * HEADS, S, HEAD_DIM, S),
    ]


def gemm_flops(batch: int, m: int, n: int, k: int) -> int:
    return 2 * batch * m * n * k


def bert_layer_flops(B: int, S: int) -> int:
    """FLOPs of the 4 projection/FFN GEMMs and the 2 attention batched matmuls.

    = 2*B*S*768*(2304 + 768 + 3072 + 3072) + 2 * (2*B*12*S*S*64)
    = 14,155,776 * B*S + 3,072 * B*S^2.
    The elementwise work (bias adds, mask add, softmax, layer norms, GELU) is O(B*S*768) and
    is not counted: it is under 1% of these FLOPs at every shape of the benchmark, and it is
    bandwidth-bound, not FLOP-bound."""
    return sum(gemm_flops(b, m, n, k) for _, b, m, n, k in bert_layer_gemms(B, S))


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------

def time_calls(fn, warmup: int, repeat: int, min_time: float = 0.0) -> tuple[float, float]:
    """(median, min) seconds of `repeat` calls (more until `min_time` has passed)."""
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < repeat or (time.perf_counter() - start < min_time and len(times) < 10000):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


class TorchGemm:
    name = "torch.matmul (MKL)"

    def __init__(self, threads: int, dtype: str = "f32"):
        import torch
        self.torch = torch
        torch.set_num_threads(threads)
        self.version = f"torch {torch.__version__}"
        self.dtype = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[dtype]
        if dtype != "f32":
            self.name = f"torch.matmul {dtype} (oneDNN)"

    def timer(self, batch: int, m: int, n: int, k: int):
        torch = self.torch
        g = torch.Generator().manual_seed(0)
        shape_a = (batch, m, k) if batch > 1 else (m, k)
        shape_b = (batch, k, n) if batch > 1 else (k, n)
        a = torch.randn(shape_a, generator=g).to(self.dtype)
        b = torch.randn(shape_b, generator=g).to(self.dtype)
        c = torch.empty((batch, m, n) if batch > 1 else (m, n), dtype=self.dtype)

        def run():
            torch.matmul(a, b, out=c)
        return run

    def context(self):
        return self.torch.inference_mode()


class OpenBlasGemm:
    name = "OpenBLAS cblas_sgemm"
    CblasRowMajor, CblasNoTrans = 101, 111

    def __init__(self, threads: int, path: str | None = None):
        import numpy as np
        self.np = np
        candidates = [path] if path else [
            "libopenblas.so.0", ctypes.util.find_library("openblas"),
            "/usr/lib/x86_64-linux-gnu/libopenblas.so.0"]
        self.lib = None
        errors = []
        for c in candidates:
            if not c:
                continue
            try:
                self.lib = ctypes.CDLL(c)
                self.path = c
                break
            except OSError as e:
                errors.append(str(e))
        if self.lib is None:
            raise OSError("cannot load OpenBLAS: " + "; ".join(errors))
        self.lib.openblas_set_num_threads(ctypes.c_int(threads))
        self.lib.cblas_sgemm.restype = None
        self.lib.cblas_sgemm.argtypes = [
            ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
            ctypes.c_float, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
            ctypes.c_float, ctypes.c_void_p, ctypes.c_int]
        try:
            self.lib.openblas_get_config.restype = ctypes.c_char_p
            config = self.lib.openblas_get_config().decode()
            # The kernels DYNAMIC_ARCH picked for this CPU (OPENBLAS_CORETYPE overrides it).
            self.lib.openblas_get_corename.restype = ctypes.c_char_p
            config += f", core {self.lib.openblas_get_corename().decode()}"
        except AttributeError:
            config = "?"
        self.version = f"{config} ({self.loaded_path()})"

    def loaded_path(self) -> str:
        """The file the dynamic loader actually mapped (alternatives make the name ambiguous)."""
        try:
            with open("/proc/self/maps") as f:
                for line in f:
                    if "libopenblas" in line and "/" in line:
                        return line[line.index("/"):].strip()
        except OSError:
            pass
        return self.path

    def timer(self, batch: int, m: int, n: int, k: int):
        np = self.np
        rng = np.random.default_rng(0)
        a = rng.standard_normal((batch, m, k), dtype=np.float32)
        b = rng.standard_normal((batch, k, n), dtype=np.float32)
        c = np.empty((batch, m, n), dtype=np.float32)
        sgemm = self.lib.cblas_sgemm
        ptrs = [(a[i].ctypes.data, b[i].ctypes.data, c[i].ctypes.data) for i in range(batch)]
        RM, NT = self.CblasRowMajor, self.CblasNoTrans

        def run(keep_alive=(a, b, c)):  # the arrays must outlive the raw pointers in ptrs
            for pa, pb, pc in ptrs:
                sgemm(RM, NT, NT, m, n, k, 1.0, pa, k, pb, n, 0.0, pc, n)
        return run

    def context(self):
        import contextlib
        return contextlib.nullcontext()


def measure(lib, batch, m, n, k, warmup, repeat, min_time=0.2) -> dict:
    with lib.context():
        run = lib.timer(batch, m, n, k)
        median, best = time_calls(run, warmup, repeat, min_time)
    flops = gemm_flops(batch, m, n, k)
    # `gflops` is from the fastest call: the rate the library reaches when nothing else
    # disturbs it (other load only ever slows a call down), `gflops_median` the typical one.
    return {"batch": batch, "m": m, "n": n, "k": k, "flops": flops,
            "median_ms": median * 1e3, "best_ms": best * 1e3,
            "gflops": flops / best / 1e9, "gflops_median": flops / median / 1e9}


def measure_rates(threads: int, square: list[int] = (2048,), layer: list[tuple[int, int]] = (),
                  warmup: int = 3, repeat: int = 10, libs: list[str] = ("torch", "openblas"),
                  log=None) -> dict:
    """Runs the measurements; returns a JSON-able dict with `rate_used` (GFLOP/s)."""
    result = {"threads": threads, "libraries": {}, "rate_used": None, "rate_used_from": None}
    for which in libs:
        try:
            if which.startswith("torch"):  # torch, or torch:bf16 / torch:f16
                lib = TorchGemm(threads, which.partition(":")[2] or "f32")
            else:
                lib = OpenBlasGemm(threads)
        except Exception as e:  # noqa: BLE001 - a missing library is reported, not fatal
            result["libraries"][which] = {"error": f"{type(e).__name__}: {e}"}
            if log:
                log(f"{which}: unavailable ({e})")
            continue
        entry = {"name": lib.name, "version": lib.version, "square": [], "layer": []}
        if log:
            log(f"{lib.name:22s} {lib.version}, {threads} threads")
        for n in square:
            r = measure(lib, 1, n, n, n, warmup, repeat)
            entry["square"].append(r)
            if log:
                log(f"{lib.name:22s} square {n}x{n}x{n}: {r['gflops']:8.1f} GFLOP/s best, "
                    f"{r['gflops_median']:.1f} median ({r['best_ms']:.2f} / {r['median_ms']:.2f} ms)")
            if result["rate_used"] is None or r["gflops"] > result["rate_used"]:
                result["rate_used"] = r["gflops"]
                result["rate_used_from"] = f"{lib.name}, {n}x{n}x{n}"
        for B, S in layer:
            total_flops, total_s = 0, 0.0  # the six GEMMs' median times, added up
            for name, b, m, n, k in bert_layer_gemms(B, S):
                r = measure(lib, b, m, n, k, warmup, repeat)
                r.update({"B": B, "S": S, "gemm": name})
                entry["layer"].append(r)
                total_flops += r["flops"]
                total_s += r["median_ms"] / 1e3
                if log:
                    shape = f"{b}x" if b > 1 else ""
                    log(f"{lib.name:22s} B={B} S={S} {name:5s} {shape}[{m},{k}]x[{k},{n}]: "
                        f"{r['gflops_median']:8.1f} GFLOP/s median ({r['median_ms']:.3f} ms)")
            entry.setdefault("layer_totals", []).append(
                {"B": B, "S": S, "flops": total_flops, "gemm_ms": total_s * 1e3,
                 "gflops": total_flops / total_s / 1e9})
            if log:
                log(f"{lib.name:22s} B={B} S={S} all six GEMMs: {total_s * 1e3:.3f} ms, "
                    f"{total_flops / total_s / 1e9:.1f} GFLOP/s")
        result["libraries"][which] = entry
    return result


def parse_shape(text: str) -> tuple[int, int]:
    b, s = text.lower().split("x")
    return int(b), int(s)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="Measure the machine's fp32 GEMM rate.")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="threads for both libraries (default: os.cpu_count())")
    ap.add_argument("--square", default="2048",
                    help="comma-separated N of the N x N x N products (default 2048)")
    ap.add_argument("--layer", default="",
                    help="comma-separated BxS of BERT-layer GEMM sets to time, e.g. 1x128,8x128")
    ap.add_argument("--libs", default="torch,openblas",
                    help="comma-separated: torch, openblas, torch:bf16, torch:f16 "
                         "(default torch,openblas)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10, help="timed calls (at least; median)")
    ap.add_argument("--json", help="also write the results here")
    ns = ap.parse_args(argv)
    # Before OpenBLAS is loaded: where it does not know this CPU, OPENBLAS_CORETYPE is set.
    print(f"OpenBLAS core: {openblas_core.choose_coretype()}")
    square = [int(x) for x in ns.square.split(",") if x]
    layer = [parse_shape(x) for x in ns.layer.split(",") if x]
    res = measure_rates(ns.threads, square, layer, ns.warmup, ns.repeat,
                        [x for x in ns.libs.split(",") if x], log=print)
    if res["rate_used"] is not None:
        print(f"rate used for the sgemm-bound floor: {res['rate_used']:.1f} GFLOP/s "
              f"({res['rate_used_from']}, {ns.threads} threads)")
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump(res, f, indent=2)
    return 0 if res["rate_used"] is not None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
