"""Floating-point dtypes for the importers: how values of each dsc dtype are held in NumPy,
rounded, printed and stored, and the conversion every importer's `--dtype` asks for.

NumPy has no bfloat16. A bf16 value is held in a float32 array (its "carrier") whose elements
are all bf16 values; it becomes bf16 bits (uint16) only when it is stored in a .safetensors
file, with the header's dtype "BF16". dsc has no 16-bit integer dtype, so a uint16 array among
an import's weights always means bf16 bits (output.py writes it so).

Rounding (`round_to`), as torch's `.to(torch.bfloat16)` and NumPy's `astype(np.float16)` do:
to nearest, ties to even, from f32 (a float64 value is rounded to f32 first, as torch
converts); NaN stays NaN (quiet, with its sign) and an infinity stays infinite. One exception,
which `--dtype` needs: a finite value beyond the dtype's range becomes the largest finite
value of its sign (f32's minimum, transformers' masked score, is bf16's lowest, -3.3895e38, and
f16's -65504, not -inf), since an infinite masked score turns the softmax of a row that keeps
no key into NaN where the f32 model averages.

`converting(dtype)`: within the block, every floating-point dtype a front end reads (f16, bf16,
f32, f64) is read as `dtype` (`mapped`); integers and bools are untouched.
"""

from __future__ import annotations

import contextlib

import numpy as np

FLOATS = ("f16", "bf16", "f32", "f64")
# What `--dtype` may ask for.
TARGETS = ("bf16", "f16", "f32")
# The NumPy dtype that holds a dsc dtype's values (bf16's carrier is float32).
NP_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i64": np.int64,
             "i32": np.int32, "i8": np.int8, "bool": np.bool_, "bf16": np.float32}
# The largest finite value of each 16-bit float.
MAX_FINITE = {"bf16": float.fromhex("0x1.fep127"), "f16": 65504.0}
# torch's and safetensors' names.
TORCH_NAMES = {"bfloat16": "bf16", "float16": "f16", "float32": "f32", "float64": "f64"}
SAFETENSORS = {"BF16": "bf16", "F16": "f16", "F32": "f32", "F64": "f64"}

_TARGET: list[str | None] = [None]


@contextlib.contextmanager
def converting(dtype: str | None):
    """Within the block, `mapped` reads every floating-point dtype as `dtype` (None: as it
    is)."""
    if dtype is not None and dtype not in TARGETS:
        raise ValueError(f"cannot convert to {dtype}: the targets are {', '.join(TARGETS)}")
    saved = _TARGET[0]
    _TARGET[0] = dtype
    try:
        yield
    finally:
        _TARGET[0] = saved


def note(dtype: str) -> str:
    """The header line of a converted import."""
    return (f"Every floating-point tensor is {dtype} (--dtype={dtype}; weights rounded to "
            f"nearest even).")


def target() -> str | None:
    """The dtype floats are converted to in this block, or None."""
    return _TARGET[0]


def mapped(dtype: str) -> str:
    """The dtype a value of the source's `dtype` has in dsc: the conversion's target for a
    floating-point dtype, else itself."""
    t = _TARGET[0]
    return t if t is not None and dtype in FLOATS else dtype


# ---------------------------------------------------------------------------------------------
# Rounding
# ---------------------------------------------------------------------------------------------

def bf16_bits(a, saturate: bool = True) -> np.ndarray:
    """The bf16 bits (uint16) nearest each element (ties to even), NaN kept quiet with its
    sign, infinities kept, finite values beyond bf16's range saturated (or, with saturate
    False, infinite, as dscc rounds a literal)."""
    with np.errstate(over="ignore", invalid="ignore"):
        f = np.asarray(a, dtype=np.float32)
    u = np.ascontiguousarray(f).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    sign = (u >> 16) & 0x8000
    nan = np.isnan(f)
    overflow = np.isfinite(f) & ((rounded & 0x7FFF) == 0x7F80) & saturate
    out = np.where(nan, (u >> 16) | 0x0040, np.where(overflow, sign | 0x7F7F, rounded))
    return out.astype(np.uint16).reshape(f.shape)


def bf16_values(bits) -> np.ndarray:
    """bf16 bits (uint16) as float32 values (exact)."""
    b = np.asarray(bits, dtype=np.uint16)
    return (b.astype(np.uint32) << 16).view(np.float32).reshape(b.shape)


def round_to(a, dtype: str, saturate: bool = True) -> np.ndarray:
    """`a` as an array of dtype's NumPy type, its floats rounded to dtype (module docstring);
    a bf16 result is float32 holding bf16 values. With saturate False, a finite value beyond
    a 16-bit float's range is infinite."""
    a = np.asarray(a)
    if dtype == "bf16":
        return bf16_values(bf16_bits(a, saturate))
    if dtype == "f16":
        with np.errstate(over="ignore", invalid="ignore"):
            f = a.astype(np.float32)
            h = f.astype(np.float16)
        over = np.isinf(h) & np.isfinite(f)
        if saturate and over.any():
            h = np.where(over, np.copysign(np.float16(MAX_FINITE["f16"]), f), h)
        return h.astype(np.float16)
    with np.errstate(over="ignore", invalid="ignore"):
        return a.astype(NP_DTYPES[dtype])


def storage(a: np.ndarray, dtype: str) -> np.ndarray:
    """An array of dtype as a .safetensors file holds it: bf16 as its bits (uint16), every
    other dtype as its NumPy type."""
    if dtype == "bf16":
        return bf16_bits(a)
    return round_to(a, dtype)


def shortest_text(f: float, dtype: str) -> str:
    """The shortest decimal that dsc reads back as the 16-bit float f (dscc rounds a literal
    to f32, then to dtype, ties to even): `0.1`, not bf16's 0.10009765625. Positional for
    ordinary magnitudes, else scientific (`1e-12`)."""
    positional = f == 0.0 or 1e-4 <= abs(f) < 1e7
    for digits in range(1, 18):
        if positional:
            s = np.format_float_positional(f, precision=digits, unique=False,
                                           fractional=False, trim="-")
        else:
            s = np.format_float_scientific(f, precision=digits - 1, unique=False, trim="-")
        if float(round_to(float(s), dtype, saturate=False)) == f:
            return s
    return repr(f)
