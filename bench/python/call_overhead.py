#!/usr/bin/env python3
"""What a Python call of a compiled model costs beyond the C API's call (issue 37's target: at
most 5 us more).

    PYTHONPATH=build/python python3 bench/python/call_overhead.py [--n 16] [--calls 20000]

A tiny model (`x + 1.0` over f32[N], N=16 by default: one short kernel, no threads) is compiled
once with dsc.compile and saved. Then, in this one run:
  - C: bench/python/call_overhead.c, compiled here with `cc` against the runtime, calls it
    through dsc_model_run (1000 warm-up calls, then the median over 15 repetitions of the mean
    of CALLS calls, each output released);
  - Python: module.add_one(x) with a NumPy array, with a torch tensor (when torch is
    installed), and through a bound parameter (two-parameter model, one bound), timed the same
    way with time.perf_counter_ns.
It prints each per-call time and the Python minus C difference, and writes them as JSON with
--json FILE. The runtime runs with one thread (DSC_NUM_THREADS=1) so no pool wake-up is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SOURCE = """
fn add_one(x: f32[N]) -> f32[N] { return x + 1.0 }
fn add(x: f32[N], y: f32[N]) -> f32[N] { return x + y }
"""


def python_ns(call, calls: int) -> float:
    """The median over 15 repetitions of the mean ns per call of `call()`."""
    for _ in range(1000):
        call()
    means = []
    for _ in range(15):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            call()
        means.append((time.perf_counter_ns() - t0) / calls)
    return statistics.median(means)


def c_ns(so: str, n: int, calls: int, work: str) -> float:
    """The C runner's time per call of add_one."""
    import dsc
    runtime_dir = os.path.dirname(dsc.__file__)
    exe = os.path.join(work, "call_overhead")
    lib_dir = os.path.join(ROOT, "build", "runtime")
    if not os.path.exists(os.path.join(lib_dir, "libdsc_runtime.so")):
        lib_dir = runtime_dir  # an installed package carries the runtime beside the extension
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(HERE, "call_overhead.c"), f"-I{ROOT}",
                    f"-L{lib_dir}", "-ldsc_runtime", f"-Wl,-rpath,{lib_dir}"], check=True)
    out = subprocess.run([exe, so, "add_one", str(n), str(calls)], check=True,
                         capture_output=True, text=True, env={**os.environ, "DSC_NUM_THREADS": "1"})
    return float(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=16, help="the tensor's length (default 16)")
    ap.add_argument("--calls", type=int, default=20000, help="calls per repetition")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    os.environ["DSC_NUM_THREADS"] = "1"
    import numpy as np
    import dsc
    dsc.set_num_threads(1)

    with tempfile.TemporaryDirectory() as work:
        module = dsc.compile(SOURCE)
        so = os.path.join(work, "tiny.so")
        module.save(so)
        results = {"c_api_ns": c_ns(so, args.n, args.calls, work)}
        x = np.zeros(args.n, np.float32)
        results["numpy_ns"] = python_ns(lambda: module.add_one(x), args.calls)
        bound = dsc.compile(SOURCE).bind({"y": np.ones(args.n, np.float32)})
        results["numpy_bound_ns"] = python_ns(lambda: bound.add(x), args.calls)
        try:
            import torch
            xt = torch.zeros(args.n)
            results["torch_ns"] = python_ns(lambda: module.add_one(xt), args.calls)
            results["torch_version"] = torch.__version__
        except ImportError:
            pass
    results.update(cpu=platform.processor() or platform.machine(), n=args.n,
                   python=platform.python_version(), numpy=np.__version__)
    c = results["c_api_ns"]
    print(f"C API (dsc_model_run):     {c / 1000:7.2f} us per call")
    for key, label in (("numpy_ns", "Python, NumPy in/out"), ("numpy_bound_ns", "Python, one input bound"),
                       ("torch_ns", "Python, torch in/out")):
        if key in results:
            print(f"{label + ':':26} {results[key] / 1000:7.2f} us per call, "
                  f"{(results[key] - c) / 1000:+.2f} us over the C API")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
