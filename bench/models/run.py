#!/usr/bin/env python3
"""The model zoo (importers/zoo) at full size, timed: dsc against ONNX Runtime and PyTorch
eager, at one thread count, in one run.

For each model it builds the zoo entry (importers/zoo/build_zoo.py's build_model: the model
with PyTorch at the zoo's seed, torch.onnx.export and torch.export, onnx2dsc and torch2dsc,
`dscc build` of each import), then at each benchmark shape:

    dsc(onnx)   dscc run MODEL.so --weights ... --input ... --threads=N --bench=R (ONNX import)
    dsc(torch)  the same for the torch.export import
    ort         the exported .onnx in one onnxruntime.InferenceSession, CPUExecutionProvider,
                intra_op_num_threads=N, inter_op 1, all graph optimizations
    eager       the PyTorch module under torch.inference_mode(), torch.set_num_threads(N)

dscc prints the median of R calls after W warm-ups, as many as the peers get (the weights are
declared constant, so the first packs them, as ORT prepacks at session creation); ORT and eager are timed by
bench/cpu/bert_torch.py's time_calls (median of R calls after W warm-ups, each call timed
alone). R is --runs, or more where --runs of dsc's calls would take less than --min-seconds
(a probe of 3 calls decides; every peer then makes as many): a fresh process on these VMs
runs its second thread late for about its first tenth of a second, which a dscc run of ten
20 ms calls is mostly made of. Before timing a shape, the output of each dsc import is checked against PyTorch's
(tests/importers/harness.py's tolerance); a mismatch is reported and makes the exit status 1.

It prints, per model, a table

    shape | dsc(onnx) ms | dsc(torch) ms | ort ms | eager ms | ort/dsc | eager/dsc

where ort/dsc = ORT's time over the ONNX import's (both run the same .onnx) and eager/dsc =
eager's over the torch.export import's (both run the same program): greater than 1 means dsc
is faster. Then the geometric mean of each ratio per model. With --out PATH it also writes
PATH.json (everything) and PATH.md (the tables and the conditions).

    python3 bench/models/run.py --dscc build/tools/dscc/dscc --threads 1 --out /tmp/models
    python3 bench/models/run.py --dscc ... --models bert,resnet18 --runs 10

See bench/models/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import math
import os
import platform
import re
import shutil
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "importers", "zoo"))
sys.path.insert(0, os.path.join(ROOT, "bench", "cpu"))

import build_zoo  # noqa: E402  (exits 77 when torch, onnx, onnxruntime or safetensors is missing)
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import openblas_core  # noqa: E402
import torch  # noqa: E402
from bert_torch import time_calls  # noqa: E402
from build_zoo import compare_nonfinite, models  # noqa: E402

# bench/cpu/run.py's helpers: the `median latency` line of `dscc run --bench`, the CPU's name, ...
_spec = importlib.util.spec_from_file_location("cpu_run", os.path.join(ROOT, "bench", "cpu",
                                                                       "run.py"))
cpu_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cpu_run)
DSC_MEDIAN_RE, cpu_model, first_error = cpu_run.DSC_MEDIAN_RE, cpu_run.cpu_model, \
    cpu_run.first_error
geomean, git_revision, loadavg = cpu_run.geomean, cpu_run.git_revision, cpu_run.loadavg

DEFAULT_MODELS = ("bert", "gpt2", "resnet18", "llama", "llama_prefill")


def shape_text(sym: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in sym.items())


def parse_shapes(text: str, z: models.ZooModel) -> list[dict]:
    """`B=1,S=32;B=8,S=128` -> [{'B': 1, 'S': 32}, ...]; every symbol of the model given."""
    out = []
    for item in text.split(";"):
        item = item.strip()
        if not item:
            continue
        sym = {}
        for kv in item.split(","):
            k, _, v = kv.partition("=")
            sym[k.strip()] = int(v)
        if set(sym) != set(z.symbols()):
            raise SystemExit(f"run.py: shape '{item}' must give {', '.join(z.symbols())}")
        out.append(sym)
    return out


def dsc_time(dscc: str, imp, input_args: list[str], threads: int, runs: int,
             timeout: float, warmup: int = 1) -> dict:
    r, cmd = build_zoo.dscc_run(dscc, imp, input_args, "", threads, timeout, bench=runs,
                                warmup=warmup)
    res = {"command": " ".join(cmd)}
    m = DSC_MEDIAN_RE.search(r.stdout) or DSC_MEDIAN_RE.search(r.stderr)
    if r.rc == 0 and m:
        res["median_ms"] = float(m.group(1))
    else:
        res["error"] = (f"exit {r.rc}: " if r.rc else "no 'median latency' line: ") + \
            first_error(r.stdout, r.stderr)
    return res


def dsc_check(dscc: str, imp, input_args: list[str], refs: list, out_dir: str, threads: int,
              timeout: float) -> tuple[bool, str]:
    r, _ = build_zoo.dscc_run(dscc, imp, input_args, out_dir, threads, timeout)
    if r.rc != 0:
        return False, f"dscc run exit {r.rc}: {first_error(r.stdout, r.stderr)}"
    worst, ok = [], True
    for i, ref in enumerate(refs):
        path = os.path.join(out_dir, f"output{i}.npy")
        if not os.path.isfile(path):
            return False, f"no {path}"
        good, detail = compare_nonfinite(np.load(path), ref)
        ok &= good
        worst.append(detail)
    return ok, "; ".join(worst)


def bench_model(name: str, ns, work: str, log) -> dict:
    t0 = time.perf_counter()
    b = build_zoo.build_model(name, ns.size, work, ns.dscc, ("onnx", "torch"), ns.timeout, log=log)
    res = {"model": name, "size": ns.size, "build_s": round(time.perf_counter() - t0, 1),
           "exports_s": {k: round(v, 1) for k, v in b.seconds.items()},
           "imports": {v: {"summary": build_zoo._short_summary(i.summary), "error": i.error,
                           "seconds": {k: round(s, 1) for k, s in i.seconds.items()}}
                       for v, i in b.imports.items()},
           "errors": list(b.errors), "rows": []}
    shapes = parse_shapes(ns.shapes[name], b.zoo) if name in ns.shapes else b.zoo.bench_shapes
    for sym in shapes:
        if not b.zoo.fits(sym):
            log(f"  {name} {shape_text(sym)}: skipped, outside the export's ranges "
                f"{b.zoo.ranges}")
    shapes = [sym for sym in shapes if b.zoo.fits(sym)]
    sess = None
    if b.onnx_path:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = ns.threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(b.onnx_path, opts, providers=["CPUExecutionProvider"])
    for k, sym in enumerate(shapes):
        row = {"shape": shape_text(sym)}
        inputs = b.zoo.make_inputs(sym, models.SEED + k)
        case = os.path.join(b.dir, "bench", re.sub(r"[^A-Za-z0-9_=-]+", "_", row["shape"]))
        input_args = build_zoo.save_inputs(inputs, case)
        with torch.inference_mode():
            refs = b.model(*inputs.values())
        refs = [r.numpy() for r in (refs if isinstance(refs, (tuple, list)) else [refs])]
        for via in ("onnx", "torch"):
            imp = b.imports.get(via)
            if imp is None or imp.so is None or \
                    (via == "onnx" and not build_zoo.onnx_allows(b.zoo, sym)):
                continue
            ok, detail = dsc_check(ns.dscc, imp, input_args, refs,
                                   os.path.join(case, f"out_{via}"), ns.threads, ns.timeout)
            row[f"check_{via}"] = {"ok": ok, "detail": detail}
            if not ok:
                log(f"FAIL {name} ({via}) {row['shape']}: {detail}")
            if "runs" not in row:
                # At least --min-seconds of calls for every peer: a fresh process runs its
                # second thread late for about its first tenth of a second on these VMs.
                probe = dsc_time(ns.dscc, imp, input_args, ns.threads, 3, ns.timeout)
                row["runs"] = max(ns.runs, math.ceil(
                    ns.min_seconds * 1e3 / max(probe.get("median_ms", 1e9), 1e-3)))
            row[f"dsc_{via}"] = dsc_time(ns.dscc, imp, input_args, ns.threads, row["runs"],
                                         ns.timeout, ns.warmup)
        runs = row.get("runs", ns.runs)
        if sess is not None and build_zoo.onnx_allows(b.zoo, sym):
            feeds = {n: t.numpy() for n, t in inputs.items()}
            row["ort"] = time_calls(lambda: sess.run(None, feeds), runs, ns.warmup)
        args = tuple(inputs.values())
        with torch.inference_mode():
            row["eager"] = time_calls(lambda: b.model(*args), runs, ns.warmup)
        ms = {key: row[key].get("median_ms") for key in ("dsc_onnx", "dsc_torch", "ort", "eager")
              if key in row}
        if ms.get("ort") and ms.get("dsc_onnx"):
            row["ort_over_dsc"] = ms["ort"] / ms["dsc_onnx"]
        if ms.get("eager") and ms.get("dsc_torch"):
            row["eager_over_dsc"] = ms["eager"] / ms["dsc_torch"]
        log(f"  {name} {row['shape']}: " + ", ".join(f"{k} {v:.3f} ms" for k, v in ms.items()
                                                    if v is not None))
        res["rows"].append(row)
    res["geomean_ort_over_dsc"] = geomean([r.get("ort_over_dsc") for r in res["rows"]])
    res["geomean_eager_over_dsc"] = geomean([r.get("eager_over_dsc") for r in res["rows"]])
    return res


def fmt(x, spec: str) -> str:
    return "n/a" if x is None else format(x, spec)


HEAD = ["shape", "dsc(onnx) ms", "dsc(torch) ms", "ort ms", "eager ms", "ort/dsc", "eager/dsc"]


def table(res: dict) -> list[list[str]]:
    rows = []
    for r in res["rows"]:
        def ms(key):
            return fmt(r.get(key, {}).get("median_ms"), ".3f")
        rows.append([r["shape"], ms("dsc_onnx"), ms("dsc_torch"), ms("ort"), ms("eager"),
                     fmt(r.get("ort_over_dsc"), ".2f"), fmt(r.get("eager_over_dsc"), ".2f")])
    return rows


def markdown(result: dict) -> str:
    c = result["conditions"]
    lines = [f"# Model zoo, {c['size']} size, {c['threads']} thread(s)", "",
             f"- CPU: {c['cpu']}", f"- threads: {c['threads']} (dscc run --threads, "
             f"ORT intra_op_num_threads with inter_op 1, torch.set_num_threads)",
             f"- runs: median of {c['runs']}, or more to take {c.get('min_seconds')} s "
             f"(the same count for every peer, each after {c['warmup']} warm-up calls)",
             f"- OPENBLAS_CORETYPE: {c['openblas_core']}",
             f"- versions: {', '.join(f'{k} {v}' for k, v in c['versions'].items())}",
             f"- load average (1, 5, 15 min) at the start: {c['loadavg_start']}, at the end: "
             f"{c.get('loadavg_end')}",
             f"- revision: {c['revision']}, {c['date']}", f"- command: `{c['command']}`", ""]
    for res in result["models"]:
        lines += [f"## {res['model']}", ""]
        for via, i in res["imports"].items():
            lines.append(f"- {via} import: {i['error'] or i['summary']}")
        lines += [""] + ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
        lines += ["| " + " | ".join(r) + " |" for r in table(res)]
        lines += ["", f"geomean: ort/dsc {fmt(res['geomean_ort_over_dsc'], '.2f')}, "
                      f"eager/dsc {fmt(res['geomean_eager_over_dsc'], '.2f')}", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dscc", required=True, help="the dscc binary")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS),
                    help=f"comma-separated, of: {', '.join(models.NAMES)} "
                         f"(default: {','.join(DEFAULT_MODELS)})")
    ap.add_argument("--size", choices=models.SIZES, default="full")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="threads for every side (default: all cores)")
    ap.add_argument("--runs", type=int, default=20, help="timed calls per shape (default 20)")
    ap.add_argument("--min-seconds", type=float, default=0.5,
                    help="more timed calls where --runs of dsc's take less than this (default "
                         "0.5); every peer makes as many")
    ap.add_argument("--warmup", type=int, default=3, help="every peer's warm-up calls (dscc run --warmup)")
    ap.add_argument("--shape", action="append", default=[], metavar="MODEL:SYM=V,...;...",
                    help="other shapes for one model, e.g. 'bert:B=1,S=64;B=2,S=7' (repeatable)")
    ap.add_argument("--work", help="build the zoo here and keep it (default: a temporary "
                    "directory, removed)")
    ap.add_argument("--out", help="also write OUT.json and OUT.md")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per command")
    ns = ap.parse_args(argv)
    names = [m.strip() for m in ns.models.split(",") if m.strip()]
    bad = [m for m in names if m not in models.NAMES]
    if bad:
        print(f"run.py: unknown model(s): {', '.join(bad)}", file=sys.stderr)
        return 2
    ns.shapes = {}
    for spec in ns.shape:
        model, _, text = spec.partition(":")
        ns.shapes[model.strip()] = text
    ns.dscc = os.path.abspath(ns.dscc)
    core = openblas_core.choose_coretype()
    os.environ["DSC_NUM_THREADS"] = str(ns.threads)
    torch.set_num_threads(ns.threads)
    warnings.filterwarnings("ignore")

    def log(line: str) -> None:
        print(line, flush=True)

    work = os.path.abspath(ns.work) if ns.work else tempfile.mkdtemp(prefix="dsc-bench-models-")
    os.makedirs(work, exist_ok=True)
    result = {"conditions": {
        "size": ns.size, "threads": ns.threads, "runs": ns.runs, "warmup": ns.warmup,
        "min_seconds": ns.min_seconds,
        "cpu": cpu_model(), "openblas_core": core, "revision": git_revision(ROOT),
        "loadavg_start": loadavg(),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "command": "python3 bench/models/run.py " + " ".join(argv),
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "onnxruntime": ort.__version__, "numpy": np.__version__}},
        "models": []}
    failed = False
    try:
        for name in names:
            try:
                res = bench_model(name, ns, work, log)
            except Exception as e:  # noqa: BLE001 - one model's failure, reported; go on
                log(f"FAIL {name}: {type(e).__name__}: {e}")
                failed = True
                continue
            result["models"].append(res)
            failed |= bool(res["errors"]) or any(i["error"] for i in res["imports"].values())
            failed |= any(not r[k]["ok"] for r in res["rows"] for k in r
                          if k.startswith("check_"))
            failed |= any("error" in r[k] for r in res["rows"] for k in ("dsc_onnx", "dsc_torch")
                          if k in r)
    finally:
        if not ns.work:
            shutil.rmtree(work, ignore_errors=True)
    result["conditions"]["loadavg_end"] = loadavg()
    text = markdown(result)
    print()
    print(text)
    if ns.out:
        with open(ns.out + ".json", "w") as f:
            json.dump(result, f, indent=1, default=str)
        with open(ns.out + ".md", "w") as f:
            f.write(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
