#!/usr/bin/env python3
"""The model zoo, built locally: nothing is downloaded. Each model of models.py (a BERT-base
encoder layer, a GPT-2 block with a KV cache, ResNet-18, a LLaMA-style block with a KV cache and
one without) is built with PyTorch at random weights from a fixed seed, then

  1. exported to ONNX by torch.onnx.export (TorchScript exporter, dynamo=False: the dynamo one
     needs onnxscript; opset 17; every symbol a named dynamic axis), and to a .pt2 by
     torch.export.export with one named Dim per symbol (`--via core`: also after
     run_decompositions(), core ATen);
  2. imported by importers/onnx2dsc.py and by importers/torch2dsc.py (`--dim` names the
     symbols, which a .pt2 does not keep);
  3. compiled once by `dscc build` (each import into one .so for every shape);
  4. run by `dscc run` at five shapes or more (1 and primes among them), and every output
     compared: the ONNX import's with ONNX Runtime's and with PyTorch's, the torch.export
     import's with PyTorch's, within |dsc - ref| <= 1e-4 * (rms(ref) + |ref|)
     (tests/importers/harness.py; all sides compute in f32).

    importers/zoo/build_zoo.py --dscc build/tools/dscc/dscc                 # small, all models
    importers/zoo/build_zoo.py --dscc ... --size full --models bert,resnet18 --out /tmp/zoo

`--size small` (the ctests importers_zoo and importers_zoo_core) keeps every structural
feature at hidden 64 (ResNet width 8), `full` is the real width (BERT-base, GPT-2 small,
ResNet-18, a TinyLlama-sized block). ONNX dims carry no ranges, so the ONNX imports take every
symbol >= 1, and a shape with an empty cache (P = 0) runs on the torch.export imports only.

With --out DIR the zoo stays in DIR/NAME/: NAME.onnx, NAME.pt2, onnx/NAME.dsc, torch/NAME.dsc,
their .safetensors and .so files, and the inputs and outputs of each shape under cases/;
without it, in a temporary directory that is removed. Prints one line per step and case (PASS
or FAIL, then details), then `N passed, M failed`; exits 1 when one failed, 77 (a skip for
ctest) when torch, onnx, onnxruntime, safetensors or numpy is missing. bench/models/run.py
builds the zoo with `build_model` and times it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
IMPORTERS = os.path.dirname(HERE)
ROOT = os.path.dirname(IMPORTERS)
ONNX2DSC = os.path.join(IMPORTERS, "onnx2dsc.py")
TORCH2DSC = os.path.join(IMPORTERS, "torch2dsc.py")
sys.path.insert(0, IMPORTERS)
sys.path.insert(0, os.path.join(ROOT, "tests", "importers"))

try:
    import numpy as np
    import onnx  # noqa: F401  (onnx2dsc needs it)
    import onnxruntime as ort
    import safetensors  # noqa: F401  (the importers write weights with it)
    import torch
except ImportError as e:
    if __name__ == "__main__":
        print(f"SKIP: {e.name or e} is not installed: run tools/scripts/install_python_deps.sh "
              f"--tests")
        sys.exit(77)
    raise

from harness import compare_nonfinite, crash_reason, first_line, run, save_inputs  # noqa: E402
from zoo import models  # noqa: E402

# onnx: torch.onnx.export then onnx2dsc; torch: torch.export then torch2dsc; core: the same
# program after run_decompositions() (core ATen), then torch2dsc.
VIAS = ("onnx", "torch", "core")
EXPORTER = {"onnx": "torch.onnx.export", "torch": "torch.export",
            "core": "torch.export + run_decompositions"}
OPSET = 17


# ---------------------------------------------------------------------------------------------
# Building one model: export, import, compile
# ---------------------------------------------------------------------------------------------

@dataclass
class Imported:
    via: str  # "onnx" or "torch"
    dsc: str
    weights: str
    so: str | None = None
    summary: str = ""
    error: str | None = None  # why this import (or its build) is missing
    seconds: dict = field(default_factory=dict)  # import, build


@dataclass
class Built:
    name: str
    model: torch.nn.Module
    zoo: models.ZooModel
    dir: str
    onnx_path: str | None = None
    imports: dict[str, Imported] = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)  # onnx_export, torch_export
    errors: list[str] = field(default_factory=list)  # export failures


def example_args(z: models.ZooModel) -> tuple:
    ex = z.make_inputs(z.example, models.SEED)
    return tuple(ex[i.name] for i in z.inputs)


def export_onnx(model, z: models.ZooModel, path: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, example_args(z), path, input_names=[i.name for i in z.inputs],
                          output_names=z.outputs, dynamic_axes=z.dynamic_axes(),
                          opset_version=OPSET, do_constant_folding=True, dynamo=False)


def export_torch(model, z: models.ZooModel, path: str, core: bool = False) -> None:
    """torch.export under the zoo's named Dims. Where torch derives a guard that the ranges
    break ("Constraints violated"), the export is made again with Dim.DYNAMIC hints, which keep
    the guard as a run-time check, and stderr says so. torch 2.11 needs this for ResNet-18: its
    max-pool shape rule guards `((H - 1) // 2) % 2 != 0` (the remainder test of a rounding
    division, true or false alike at every size). The import then differs from the named-Dim
    one only in the guards it lists and in the batch's minimum (2: torch's 0/1 specialization)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ep = torch.export.export(model, example_args(z), dynamic_shapes=z.dynamic_shapes())
        except Exception as e:  # noqa: BLE001 - torch._dynamo.exc.UserError, by its text
            if "Constraints violated" not in str(e):
                raise
            guards = [ln.strip() for ln in str(e).splitlines() if ln.strip().startswith("- ")]
            print(f"build_zoo.py: torch {torch.__version__} refused the ranges of {z.name}; "
                  "exported again with Dim.DYNAMIC hints, which keep as run-time checks:\n  "
                  + "\n  ".join(guards), file=sys.stderr)
            ep = torch.export.export(model, example_args(z),
                                     dynamic_shapes=z.dynamic_shapes(hints=True))
        if core:
            ep = ep.run_decompositions()
        torch.export.save(ep, path)


def export_core(model, z: models.ZooModel, path: str) -> None:
    export_torch(model, z, path, core=True)


def _problem(r) -> str | None:
    return crash_reason(r) or (f"exit {r.rc}: {first_line(r.stderr)}" if r.rc else None)


def _timed_step(imp: Imported, step: str, cmd: list[str], timeout: float):
    """Runs one step of an import (`import`, `build`), timed into imp.seconds[step]; returns
    the run and what went wrong (None when nothing did)."""
    t0 = time.perf_counter()
    r = run(cmd, timeout)
    imp.seconds[step] = time.perf_counter() - t0
    return r, _problem(r)


def build_model(name: str, size: str, work: str, dscc: str, vias=VIAS, timeout: float = 900,
                log=print) -> Built:
    """Exports, imports and compiles one model into work/NAME/; failures are recorded in the
    result (and logged), not raised."""
    model, z = models.build(name, size)
    out = os.path.join(work, name)
    os.makedirs(out, exist_ok=True)
    b = Built(name, model, z, out)
    exports = {"onnx": (export_onnx, f"{name}.onnx"), "torch": (export_torch, f"{name}.pt2"),
               "core": (export_core, f"{name}.core.pt2")}
    for via in vias:
        fn, fname = exports[via]
        path = os.path.join(out, fname)
        t0 = time.perf_counter()
        try:
            fn(model, z, path)
        except Exception as e:  # noqa: BLE001 - an exporter failure is a result to report
            msg = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            b.errors.append(f"{via} export: {msg}")
            log(f"FAIL {name}: {EXPORTER[via]}: {msg}")
            continue
        b.seconds[f"{via}_export"] = time.perf_counter() - t0
        if via == "onnx":
            b.onnx_path = path
        imp = Imported(via, os.path.join(out, via, f"{name}.dsc"),
                       os.path.join(out, via, f"{name}.safetensors"))
        b.imports[via] = imp
        cmd = [sys.executable, ONNX2DSC if via == "onnx" else TORCH2DSC, path,
               "-o", os.path.join(out, via), "--name", name]
        if via != "onnx":
            for key, sym in z.torch_dim_names().items():
                cmd += ["--dim", f"{key}={sym}"]
        r, problem = _timed_step(imp, "import", cmd, timeout)
        if problem:
            imp.error = f"import: {r.stderr.strip() or problem}"
            log(f"FAIL {name} import ({via}): {r.stderr.strip() or problem}")
            continue
        imp.summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
        log(f"PASS {name} import ({via}): {_short_summary(imp.summary)}")
        so = os.path.join(out, via, f"{name}.so")
        r, problem = _timed_step(imp, "build", [dscc, "build", imp.dsc, "-o", so, "-q"], timeout)
        if problem:
            imp.error = f"dscc build: {problem}"
            log(f"FAIL {name} dscc build ({via}): {problem}\n{r.stderr.strip()}")
            continue
        imp.so = so
        log(f"PASS {name} dscc build ({via}): {imp.seconds['build']:.1f} s")
    return b


def _short_summary(line: str) -> str:
    """The importer's summary line from `ops:` on (the paths are known)."""
    i = line.find("ops:")
    return line[i:] if i >= 0 else line


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------

def dscc_run(dscc: str, imp: Imported, input_args: list[str], out_dir: str, threads: int,
             timeout: float, bench: int | None = None, warmup: int = 1):
    cmd = [dscc, "run", imp.so, "--weights", imp.weights, *input_args, f"--threads={threads}"]
    if bench:
        cmd += [f"--bench={bench}", f"--warmup={max(warmup, 1)}"]
    else:
        cmd.append(f"--output={out_dir}")
    return run(cmd, timeout), cmd


def ort_session(path: str, threads: int):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def onnx_allows(z: models.ZooModel, sym: dict) -> bool:
    """ONNX dims have no ranges: onnx2dsc gives every symbol `>= 1`, so a shape with an empty
    cache (P = 0) runs on the torch.export import only."""
    return all(sym[s] >= lo for s, lo in z.onnx_min.items())


class Checker:
    def __init__(self, dscc: str, work: str, threads: int, timeout: float, verbose: bool):
        self.dscc, self.work, self.threads = dscc, work, threads
        self.timeout, self.verbose = timeout, verbose
        self.results: list[tuple[str, bool, str]] = []

    def report(self, label: str, ok: bool, detail: str) -> None:
        self.results.append((label, ok, detail))
        print(f"{'PASS' if ok else 'FAIL'} {label}: {detail}", flush=True)

    def log(self, line: str) -> None:
        ok = line.startswith("PASS")
        label, _, detail = line[5:].partition(": ")
        self.report(label, ok, detail)

    def model(self, name: str, size: str, vias) -> None:
        b = build_model(name, size, self.work, self.dscc, vias, self.timeout, log=self.log)
        if self.verbose:
            for imp in b.imports.values():
                if os.path.isfile(imp.dsc):
                    with open(imp.dsc) as f:
                        print(f.read())
        sess = ort_session(b.onnx_path, self.threads) if b.onnx_path and \
            b.imports["onnx"].so else None
        for k, sym in enumerate(b.zoo.shapes):
            self.shape(b, sess, k, sym)

    def shape(self, b: Built, sess, k: int, sym: dict) -> None:
        shape_text = ",".join(f"{a}={v}" for a, v in sym.items())
        inputs = b.zoo.make_inputs(sym, models.SEED + 101 * k + len(b.name))
        case = os.path.join(b.dir, "cases", re.sub(r"[^A-Za-z0-9_=-]+", "_", shape_text))
        input_args = save_inputs(inputs, case)
        with torch.no_grad():
            refs = b.model(*inputs.values())
        refs = [r.numpy() for r in (refs if isinstance(refs, (tuple, list)) else [refs])]
        for via, imp in b.imports.items():
            if imp.so is None:
                continue
            if via == "onnx" and not onnx_allows(b.zoo, sym):
                continue
            label = f"{b.name} ({via}) {shape_text}"
            out_dir = os.path.join(case, f"out_{via}")
            r, _ = dscc_run(self.dscc, imp, input_args, out_dir, self.threads, self.timeout)
            problem = _problem(r)
            if problem:
                self.report(label, False, f"dscc run {problem}" +
                            (f"\n{r.stderr}" if self.verbose else ""))
                continue
            against = [("torch", refs)]
            if via == "onnx":
                against.insert(0, ("ORT", sess.run(None, {n: t.numpy()
                                                          for n, t in inputs.items()})))
            details, ok = [], True
            for i, out_name in enumerate(b.zoo.outputs):
                path = os.path.join(out_dir, f"output{i}.npy")
                if not os.path.isfile(path):
                    ok = False
                    details.append(f"{out_name}: no {path}")
                    continue
                got = np.load(path)
                for who, ref in against:
                    good, detail = compare_nonfinite(got, ref[i])
                    ok &= good
                    details.append(f"{out_name} vs {who}: {detail}")
            if os.path.exists(os.path.join(out_dir, f"output{len(b.zoo.outputs)}.npy")):
                ok = False
                details.append(f"more outputs than the model's {len(b.zoo.outputs)}")
            self.report(label, ok, "; ".join(details))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dscc", required=True, help="the dscc binary")
    ap.add_argument("--size", choices=models.SIZES, default="small")
    ap.add_argument("--models", default=",".join(models.NAMES),
                    help=f"comma-separated, of: {', '.join(models.NAMES)} (default: all)")
    ap.add_argument("--via", default="onnx,torch", help="comma-separated, of: onnx, torch, "
                    "core (default: onnx,torch)")
    ap.add_argument("--threads", type=int, default=1, help="dscc run --threads, ONNX Runtime's "
                    "intra-op threads and torch's (default 1)")
    ap.add_argument("--out", help="build the zoo in this directory and keep it")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per command")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the imported .dsc")
    ns = ap.parse_args(argv)
    names = [m.strip() for m in ns.models.split(",") if m.strip()]
    vias = [v.strip() for v in ns.via.split(",") if v.strip()]
    bad = [m for m in names if m not in models.NAMES] + [v for v in vias if v not in VIAS]
    if bad:
        print(f"build_zoo.py: unknown model or --via: {', '.join(bad)}", file=sys.stderr)
        return 2
    if not (os.path.isfile(ns.dscc) and os.access(ns.dscc, os.X_OK)):
        print(f"build_zoo.py: {ns.dscc} is not an executable", file=sys.stderr)
        return 2
    torch.set_num_threads(ns.threads)
    warnings.filterwarnings("ignore")
    work = os.path.abspath(ns.out) if ns.out else tempfile.mkdtemp(prefix="dsc-zoo-")
    os.makedirs(work, exist_ok=True)
    checker = Checker(os.path.abspath(ns.dscc), work, ns.threads, ns.timeout, ns.verbose)
    t0 = time.perf_counter()
    try:
        for name in names:
            try:
                checker.model(name, ns.size, vias)
            except Exception as e:  # noqa: BLE001 - a failed model, not a crash of the script
                checker.report(name, False, f"{type(e).__name__}: {e}")
    finally:
        if not ns.out:
            shutil.rmtree(work, ignore_errors=True)
    passed = sum(1 for _, ok, _ in checker.results if ok)
    failed = len(checker.results) - passed
    print(f"{passed} passed, {failed} failed ({time.perf_counter() - t0:.0f} s"
          f"{f'; the zoo is in {work}' if ns.out else ''})")
    return 1 if failed or not checker.results else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
