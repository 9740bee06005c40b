"""Weight-only quantization for `matmul_q` (docs/language.md, "Quantized weights"): an
nn.Linear weight [N, K] (one row per output) cut into groups of `group` consecutive values of a
row, each group stored as small integers times one scale (symmetric, no zero point), rounded
to nearest.

    bits 8  scale d = max|w| / 127 over the group; q = round(w / d), in [-127, 127]; stored
            i8[N, K], one value a byte (llama.cpp's Q8_0).
    bits 4  d = m / -8, where m is the group's value of the largest magnitude, with its sign
            (the first of equal magnitudes); q = round(w / d) clamped to [-8, 7]: m itself is
            -8 steps, every level of a nibble is used, and a value of m's opposite sign beyond
            7.5 steps is clamped to 7 (llama.cpp's Q4_0). Stored i8[N, K / 2], two values a
            byte: the low nibble holds even k, the high nibble odd k, a nibble u meaning u - 8.

The scale is rounded to the scale dtype (f16 or f32) first, and q is computed against the
rounded scale, so that the stored pair (q, scale) is the nearest the format holds; the
dequantized value is exactly q * scale in f32. A group of zeros has scale 0 and q = 0. Rounding
is NumPy's rint (to nearest, ties to even; llama.cpp rounds ties away from zero, which only a
value exactly halfway between two steps can tell apart).

Why Q4_0's d = m / -8 rather than max|w| / 7 with q in [-7, 7]: the step is max|w| / 8
instead of / 7, and the mean squared error of Gaussian and Laplacian groups of 32 is 22% lower
(measured: 0.74% against 0.95% of the weights' mean square), at the price of the opposite
sign's extreme, which is clamped to 7 steps (an error of up to one step, on one value of a
group at most as large as m).

NumPy only: the importers, the tests and bench/llm/llm_bench.py call these.
"""

from __future__ import annotations

import numpy as np

BITS = (8, 4)
SCALE_DTYPES = {"f16": np.float16, "f32": np.float32}
# q's range at each width.
RANGE = {8: (-127, 127), 4: (-8, 7)}


class QuantizeError(ValueError):
    """A weight that cannot be quantized as asked (one line)."""


def check_shape(k: int, bits: int, group: int) -> str | None:
    """Why a row of k values cannot be cut into groups of `group` at `bits`, or None."""
    if group < 1:
        return f"the group size is {group}: expected an integer >= 1"
    if k % group:
        return f"the group size {group} does not divide the row's {k} values"
    if bits == 4 and k % 2:
        return f"4-bit values are stored two a byte, and the row has an odd {k} values"
    return None


def quantize(w: np.ndarray, bits: int, group: int, scale_dtype: str = "f16"
             ) -> tuple[np.ndarray, np.ndarray]:
    """w: [N, K] floats (nn.Linear's orientation). Returns (qweight, scales): i8[N, K] (bits 8)
    or i8[N, K / 2] (bits 4), and scales [N, K / group] in scale_dtype's NumPy type. Raises
    QuantizeError when the shape does not divide or a scale overflows the scale dtype."""
    if bits not in BITS:
        raise QuantizeError(f"bits must be 8 or 4, got {bits}")
    if scale_dtype not in SCALE_DTYPES:
        raise QuantizeError(f"the scale dtype must be f16 or f32, got {scale_dtype}")
    if w.ndim != 2:
        raise QuantizeError(f"expected a matrix [N, K], got shape {list(w.shape)}")
    n, k = w.shape
    why = check_shape(k, bits, group)
    if why:
        raise QuantizeError(why)
    if not np.all(np.isfinite(w)):
        raise QuantizeError("the weight has NaN or infinite values")
    g = w.reshape(n, k // group, group).astype(np.float64)
    lo, hi = RANGE[bits]
    if bits == 8:
        d = np.abs(g).max(axis=2) / 127.0
    else:
        at = np.abs(g).argmax(axis=2)
        d = np.take_along_axis(g, at[..., None], axis=2)[..., 0] / -8.0
    with np.errstate(over="ignore"):
        stored = d.astype(SCALE_DTYPES[scale_dtype])
    if not np.all(np.isfinite(stored)):
        biggest = float(np.abs(g).max())
        raise QuantizeError(f"a scale overflows {scale_dtype} (the largest magnitude is "
                            f"{biggest:g}); use --scale-dtype f32")
    ds = stored.astype(np.float64)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(ds != 0, np.rint(g / np.where(ds != 0, ds, 1.0)), 0.0)
    q = np.clip(q, lo, hi).astype(np.int8).reshape(n, k)
    if bits == 4:
        u = (q.astype(np.int16) + 8).astype(np.uint8)
        q = (u[:, 0::2] | (u[:, 1::2] << 4)).view(np.int8)
    return np.ascontiguousarray(q), np.ascontiguousarray(stored)


def unpack(qweight: np.ndarray, bits: int) -> np.ndarray:
    """The integer values q, int8 [N, K], of a stored qweight."""
    if bits == 8:
        return qweight.astype(np.int8)
    u = qweight.view(np.uint8)
    out = np.empty((u.shape[0], 2 * u.shape[1]), np.int8)
    out[:, 0::2] = (u & 15).astype(np.int8) - 8
    out[:, 1::2] = (u >> 4).astype(np.int8) - 8
    return out


def dequantize(qweight: np.ndarray, scales: np.ndarray, bits: int) -> np.ndarray:
    """The values [N, K] in f32 that matmul_q multiplies by: q(n, k) * scales[n, k / group]."""
    q = unpack(qweight, bits)
    n, k = q.shape
    groups = scales.shape[1]
    s = np.repeat(scales.astype(np.float32), k // groups, axis=1)
    return q.astype(np.float32) * s


def stored_bytes(n: int, k: int, bits: int, group: int, scale_dtype: str = "f16") -> int:
    """The bytes of a quantized [N, K] weight: its values and its scales."""
    return n * k * bits // 8 + n * (k // group) * np.dtype(SCALE_DTYPES[scale_dtype]).itemsize
