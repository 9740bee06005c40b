#!/usr/bin/env python3
"""npy_close.py A.npy B.npy TOL: exit 0 when the two arrays have the same shape and dtype and
every element satisfies |a - b| <= TOL * (1 + |b|), else print the worst element and exit 1."""
import sys

import numpy as np


def main() -> int:
    if len(sys.argv) != 4:
        print("usage: npy_close.py A.npy B.npy TOL", file=sys.stderr)
        return 2
    a, b, tol = np.load(sys.argv[1]), np.load(sys.argv[2]), float(sys.argv[3])
    if a.shape != b.shape or a.dtype != b.dtype:
        print(f"shapes or dtypes differ: {a.shape} {a.dtype} vs {b.shape} {b.dtype}")
        return 1
    bound = tol * (1.0 + np.abs(b.astype(np.float64)))
    err = np.abs(a.astype(np.float64) - b.astype(np.float64))
    if a.size and not np.all(err <= bound):
        i = np.unravel_index(np.argmax(err - bound), a.shape)
        print(f"differ at {i}: {a[i]} vs {b[i]} (|diff| {err[i]:.3g} > {bound[i]:.3g})")
        return 1
    print(f"close: max |diff| {err.max() if a.size else 0:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
