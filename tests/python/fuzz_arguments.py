#!/usr/bin/env python3
"""Fuzzes the Python package's argument conversion: random arguments for compiled functions
(NumPy arrays of every dtype, rank and layout: strided, transposed, negative strides,
zero-stride broadcasts, empty and 0-d ones; torch tensors the same; read-only arrays; Python
scalars, lists, None, strings, bytes; missing, extra and keyword arguments), each call ending in a
result equal to NumPy's or in a dsc.Error, never in a crash or another exception.

    PYTHONPATH=build/python python3 tests/python/fuzz_arguments.py [--cases 3000] [--seed 1]

Run by ctest (python_fuzz_arguments). A crash would end the process (a non-zero exit without
the summary); any other exception is printed with the case that caused it and fails the run.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import dsc

try:
    import torch
except ImportError:
    torch = None

SOURCE = """
fn scale_shift(x: f32[N, D], s: f32[D], b: f32[D]) -> f32[N, D] where D <= 64 {
  return x * s + b
}

fn count(x: i64[N]) -> i64[] {
  return sum(x, axis=0)
}

fn gate(x: f32[N], m: bool[N]) -> f32[N] {
  return where(m, x, 0.0)
}
"""

DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int32, np.int8, np.uint8, np.bool_,
          np.complex64]


def random_array(rng: np.random.Generator, want_shape: tuple, want_dtype) -> object:
    """Mostly near what the parameter wants, often not."""
    roll = rng.random()
    dtype = want_dtype if roll < 0.6 else DTYPES[rng.integers(len(DTYPES))]
    shape = list(want_shape)
    if rng.random() < 0.2:
        shape = [int(rng.integers(0, 5)) for _ in range(int(rng.integers(0, 4)))]
    elif rng.random() < 0.2 and shape:
        shape[int(rng.integers(len(shape)))] = int(rng.integers(0, 70))
    base = (rng.standard_normal(shape) * 3).astype(dtype) if shape else np.array(1.5).astype(dtype)
    layout = rng.integers(8)
    if layout == 1 and base.ndim >= 2:
        base = np.asfortranarray(base)
    elif layout == 2 and base.ndim >= 1 and base.shape[-1] > 0:
        wide = np.repeat(base, 2, axis=-1)
        base = wide[..., ::2]
    elif layout == 3 and base.ndim >= 1:
        base = base[::-1]
    elif layout == 4 and base.ndim >= 1:
        base = np.broadcast_to(base[:1], base.shape) if base.shape[0] > 0 else base
    elif layout == 5:
        base = base.copy()
        base.flags.writeable = False
    if torch is not None and rng.random() < 0.3 and dtype not in (np.uint16,):
        try:
            t = torch.from_numpy(np.ascontiguousarray(base))
            if rng.random() < 0.3 and t.dim() >= 2:
                t = t.t()
            if rng.random() < 0.2 and t.is_floating_point():
                t = t.requires_grad_(True)
            return t
        except (TypeError, RuntimeError, ValueError):  # a dtype or layout torch lacks
            return base
    return base


def junk(rng: np.random.Generator) -> object:
    return [None, 3, 2.5, True, "x", b"\x00\x01", [1.0, 2.0], (1,), {"a": 1}, object()][
        int(rng.integers(10))]


def expected(name: str, args: list) -> np.ndarray | None:
    """NumPy's answer when the arguments are what the function takes, else None."""
    arrays = []
    for a in args:
        if torch is not None and isinstance(a, torch.Tensor):
            a = a.detach().numpy()
        if not isinstance(a, np.ndarray):
            return None
        arrays.append(a)
    if name == "scale_shift":
        x, s, b = arrays
        if (x.dtype, s.dtype, b.dtype) != (np.float32,) * 3 or x.ndim != 2 or s.ndim != 1 or \
                b.ndim != 1 or s.shape[0] != x.shape[1] or b.shape[0] != x.shape[1] or \
                x.shape[1] > 64:
            return None
        return x * s + b
    if name == "count":
        (x,) = arrays
        if x.dtype != np.int64 or x.ndim != 1:
            return None
        return np.array(x.sum(), np.int64)
    x, m = arrays
    if x.dtype != np.float32 or m.dtype != np.bool_ or x.ndim != 1 or m.shape != x.shape:
        return None
    return np.where(m, x, np.float32(0))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    module = dsc.compile(SOURCE)
    params = {"scale_shift": [((7, 5), np.float32), ((5,), np.float32), ((5,), np.float32)],
              "count": [((11,), np.int64)],
              "gate": [((13,), np.float32), ((13,), np.bool_)]}
    outcomes = {"result": 0, "error": 0}
    for case in range(args.cases):
        name = list(params)[int(rng.integers(len(params)))]
        call = [random_array(rng, shape, dtype) if rng.random() < 0.9 else junk(rng)
                for shape, dtype in params[name]]
        kwargs = {}
        if rng.random() < 0.1 and call:
            call.pop()  # one missing
        elif rng.random() < 0.05:
            call.append(random_array(rng, (3,), np.float32))  # one extra
        elif rng.random() < 0.05:
            kwargs["nonesuch"] = np.ones(3, np.float32)
        try:
            got = module[name](*call, **kwargs)
        except dsc.Error:
            outcomes["error"] += 1
            continue
        except Exception as e:  # noqa: BLE001 - what this test is for
            print(f"FAIL case {case}: {name}({', '.join(describe(a) for a in call)}"
                  f"{', ' + ', '.join(kwargs) if kwargs else ''}) raised {type(e).__name__}: {e}")
            return 1
        outcomes["result"] += 1
        want = expected(name, call) if not kwargs else None
        if torch is not None and isinstance(got, torch.Tensor):
            got = got.numpy()
        if want is None or np.asarray(got).shape != want.shape or \
                not np.allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6):
            print(f"FAIL case {case}: {name}({', '.join(describe(a) for a in call)}) returned "
                  f"{describe(got)}, expected {describe(want)}")
            return 1
    print(f"{args.cases} cases: {outcomes['result']} results equal to NumPy's, "
          f"{outcomes['error']} dsc errors, no other exception")
    return 0


def describe(a: object) -> str:
    if isinstance(a, np.ndarray):
        return f"ndarray({a.dtype}, {a.shape}, strides={a.strides})"
    if torch is not None and isinstance(a, torch.Tensor):
        return f"tensor({a.dtype}, {tuple(a.shape)}, stride={a.stride()})"
    return repr(a)[:40]


if __name__ == "__main__":
    sys.exit(main())
