"""What bench/gpu's scripts share: dsc's side (a model built with `dscc build --target=cuda`,
run by the LLVM-free runner `dsc-run`) and the GPU timing loop of the torch peers."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import time

import numpy as np
import torch

# bench/cpu/run.py's geomean (loaded by path: bench/gpu has a run.py of its own).
_spec = importlib.util.spec_from_file_location(
    "cpu_run", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cpu", "run.py"))
_cpu_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cpu_run)
geomean = _cpu_run.geomean


def time_gpu(call, runs: int, warmup: int) -> float:
    """Median ms of `runs` calls after `warmup`, each synchronized (torch.cuda.synchronize)."""
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        call()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def run_dsc(dsc_run: str, model: str, args: list[str], runs: int, warmup: int,
            out_dir: str | None = None) -> tuple[float, list[np.ndarray]]:
    """`dsc-run MODEL ARGS --bench=R --warmup=W` (every call waits for its stream): the median
    ms it prints, and its outputs (output0.npy, output1.npy, ...) when `out_dir` is given."""
    cmd = [dsc_run, model, *args, f"--bench={runs}", f"--warmup={warmup}"]
    if out_dir:
        cmd.append(f"--save-outputs={out_dir}")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"dsc-run failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    m = re.search(r"median_ms=([0-9.]+)", r.stdout + r.stderr)
    if not m:
        raise RuntimeError(f"no 'median_ms=' in dsc-run's output:\n{r.stdout}\n{r.stderr}")
    outputs = []
    while out_dir and os.path.exists(os.path.join(out_dir, f"output{len(outputs)}.npy")):
        outputs.append(np.load(os.path.join(out_dir, f"output{len(outputs)}.npy")))
    return float(m.group(1)), outputs


def input_args(directory: str, params: dict[str, np.ndarray]) -> list[str]:
    """Saves every array as DIRECTORY/NAME.npy; returns dsc-run's `--input NAME=FILE` for them."""
    args = []
    for name, a in params.items():
        path = os.path.join(directory, name + ".npy")
        np.save(path, a, allow_pickle=False)
        args += ["--input", f"{name}={path}"]
    return args


class Compiled:
    """torch.compile(fn, dynamic=True), compiled on the first call (timed: `first_call_s`)."""

    def __init__(self, fn):
        self.fn, self.compiled, self.first_call_s = fn, None, None

    def __call__(self, *args):
        if self.compiled is None:
            self.compiled = torch.compile(self.fn, dynamic=True)
            t0 = time.perf_counter()
            out = self.compiled(*args)
            torch.cuda.synchronize()
            self.first_call_s = time.perf_counter() - t0
            return out
        return self.compiled(*args)


def ratio_row(shape: dict, dsc_ms: float, eager_ms: float, compile_ms: float | None, good: bool,
              detail: str) -> dict:
    """One shape's row of the eager and torch.compile ratios over dsc, printed."""
    row = {**shape, "dsc_ms": dsc_ms, "eager_ms": eager_ms, "compile_ms": compile_ms,
           "eager_over_dsc": eager_ms / dsc_ms,
           "compile_over_dsc": compile_ms / dsc_ms if compile_ms else None,
           "matches_torch": good, "error": detail}
    where = " ".join(f"{k}={v:<4d}" for k, v in shape.items())
    print(f"{where}  dsc {dsc_ms:8.3f} ms  eager {eager_ms:8.3f} ms  "
          f"compile {compile_ms or float('nan'):8.3f} ms  eager/dsc {row['eager_over_dsc']:.2f}  "
          f"compile/dsc {row['compile_over_dsc'] or float('nan'):.2f}  "
          f"{'ok' if good else 'MISMATCH'} ({detail})", flush=True)
    return row


def summarize(rows: list[dict], compile_s: float | None, json_path: str | None) -> None:
    """Prints the geomeans of the ratios; writes everything to `json_path` when given."""
    summary = {"eager_over_dsc": geomean([r["eager_over_dsc"] for r in rows]),
               "compile_over_dsc": geomean([r["compile_over_dsc"] for r in rows]),
               "torch_compile_first_call_s": compile_s, "rows": rows,
               "device": torch.cuda.get_device_name(), "torch": torch.__version__}
    print(f"geomean eager/dsc {summary['eager_over_dsc'] or float('nan'):.2f}, compile/dsc "
          f"{summary['compile_over_dsc'] or float('nan'):.2f}; torch.compile first call "
          f"{compile_s or 0:.1f} s")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(summary, f, indent=1)


def add_options(ap, model_help: str, shapes: str) -> None:
    """The options of run.py and decode.py: the runner, the model, shapes, runs, torch.compile."""
    ap.add_argument("--dsc-run", required=True)
    ap.add_argument("--model", required=True, help=model_help)
    ap.add_argument("--shapes", default=shapes, help=f"comma-separated shapes (default {shapes})")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--json", help="write the results here")
