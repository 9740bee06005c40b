#!/usr/bin/env python3
"""The model zoo (importers/zoo) on the GPU: dsc's CUDA build of each model, run by the LLVM-free
runner dsc-run, against PyTorch eager on the same GPU in the same run, fp32 with TF32 off.

A GPU machine here has PyTorch but no LLVM and no dscc, and what travels to it must stay small
(tools/scripts/gpu_check.sh), so the work is split in two, and no weights travel:

  --pack DIR (here, with dscc): for each model, build it at the zoo's seed (importers/zoo/
      models.py), export it with torch.export and import it with importers/torch2dsc.py, the
      `dsc(torch)` route of bench/models/run.py (importers/zoo/build_zoo.py's export_torch and
      command line), then `dscc build --target=cuda` the import into DIR/NAME_cuda.so. The
      imported text is kept as DIR/NAME.dsc, and DIR/manifest.json records its sha256, the
      weights' sha256 and the size and torch version the zoo was built at.

  --zoo DIR --dsc-run PATH (there): for each packed model, the same build, export and import
      (pure Python) into a temporary directory give the weights (.safetensors). The packed .so
      fits them when they are the packed weights byte for byte (same sha256: every parameter's
      name, shape and values), or when the regenerated .dsc is the packed one; else the model
      fails (another torch can export another graph). A .dsc that differs over the same weights
      (guards another torch lists, a bound it moves) is only noted. Then at each shape
      (bench/models/run.py's, ZooModel.bench_shapes): the inputs of ZooModel.make_inputs at
      seed SEED + k (as run.py), one `dsc-run NAME_cuda.so --weights ... --input ... --bench=R
      --warmup=W --save-outputs=...`, whose outputs are compared with PyTorch eager's on the GPU
      and whose median is dsc's time; eager is timed by bench/gpu/peers.py's time_gpu (median
      of R synchronized calls after W warm-ups).

The tolerance is tests/importers/harness.py's criterion |dsc - ref| <= TOL * (rms(ref) + |ref|)
with TOL = 1e-3 by default (--tol), as bench/gpu/run.py, not the importers' 1e-4: cuBLAS and
cuDNN sum in other orders than dsc's kernels, and over a full-size model that is more than 1e-4
of the rms. It prints one table per model, shape | dsc ms | eager ms | eager/dsc | check, the
geomean of eager/dsc per model and over every shape, and writes everything to --json. Greater
than 1 means dsc is faster. Exit status 1 when a model fails (import, .dsc mismatch, dsc-run
error) or an output does not match; 77 when torch, onnx, onnxruntime, safetensors or numpy is
missing (build_zoo.py's imports).

With --device cpu the same flow runs without a GPU: eager on the CPU (timed with
time.perf_counter, bench/cpu/bert_torch.py's time_calls), dsc-run under the CUDA block emulator
(DSC_CUDA_EMULATE=1, docs/cuda.md), everything on one thread; pack with --size small for that
(the emulator is slow: its times mean nothing).

    # here
    python3 bench/models/gpu.py --pack .gpu/zoo --dscc build/tools/dscc/dscc
    # on the GPU machine (or `tools/scripts/gpu_check.sh zoo`)
    python3 bench/models/gpu.py --dsc-run .gpu/bin/dsc-run --zoo .gpu/zoo --json /tmp/zoo_gpu.json
    # the flow on the CPU
    python3 bench/models/gpu.py --pack /tmp/zoo-small --dscc build/tools/dscc/dscc --size small
    python3 bench/models/gpu.py --dsc-run build/tools/dsc_run/dsc-run --zoo /tmp/zoo-small \
        --device cpu --shape 'bert:B=1,S=2' ...

See bench/models/README.md ("On the GPU").
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import hashlib
import importlib.util
import json
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
sys.path.insert(0, os.path.join(ROOT, "bench", "gpu"))

try:
    import build_zoo  # noqa: E402
except ImportError as e:
    print(f"SKIP: {e.name or e} is not installed: run tools/scripts/install_python_deps.sh --tests",
          flush=True)
    sys.exit(77)
import harness  # noqa: E402  tests/importers/harness.py (build_zoo put it on the path)
import numpy as np  # noqa: E402
import peers  # noqa: E402  bench/gpu/peers.py
import torch  # noqa: E402
from bert_torch import time_calls  # noqa: E402
from build_zoo import models  # noqa: E402

# bench/models/run.py's helpers: shapes from `--shape`, their text, the geomean, the revision.
_spec = importlib.util.spec_from_file_location("models_run", os.path.join(HERE, "run.py"))
models_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(models_run)
fmt, geomean, git_revision = models_run.fmt, models_run.geomean, models_run.git_revision
parse_shapes, shape_text = models_run.parse_shapes, models_run.shape_text

DEFAULT_MODELS = ("bert", "gpt2", "resnet18", "llama")
MANIFEST = "manifest.json"


def log(line: str) -> None:
    print(line, flush=True)


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# Both sides: the model at the zoo's seed, torch.export, torch2dsc
# ---------------------------------------------------------------------------------------------

def import_torch(name: str, size: str, work: str, timeout: float):
    """build_zoo.build_model's torch.export route without the build (there is no dscc on the GPU
    machine): the model, its ZooModel, the build_zoo.Imported (dsc, weights) and the problem
    (None when none). Raises when the export fails."""
    model, z = models.build(name, size)
    out = os.path.join(work, name)
    os.makedirs(out, exist_ok=True)
    pt2 = os.path.join(out, f"{name}.pt2")
    t0 = time.perf_counter()
    build_zoo.export_torch(model, z, pt2)
    imp = build_zoo.Imported("torch", os.path.join(out, "torch", f"{name}.dsc"),
                             os.path.join(out, "torch", f"{name}.safetensors"))
    imp.seconds["export"] = time.perf_counter() - t0
    cmd = [sys.executable, build_zoo.TORCH2DSC, pt2, "-o", os.path.join(out, "torch"),
           "--name", name]
    for key, sym in z.torch_dim_names().items():
        cmd += ["--dim", f"{key}={sym}"]
    r, problem = build_zoo._timed_step(imp, "import", cmd, timeout)
    if problem:
        problem = f"torch2dsc: {r.stderr.strip() or problem}"
    else:
        imp.summary = build_zoo._short_summary(r.stdout.strip().splitlines()[-1]
                                               if r.stdout.strip() else "")
    return model, z, imp, problem


# ---------------------------------------------------------------------------------------------
# Here: --pack
# ---------------------------------------------------------------------------------------------

def pack(ns, names: list[str]) -> int:
    dscc = os.path.abspath(ns.dscc)
    if not (os.path.isfile(dscc) and os.access(dscc, os.X_OK)):
        print(f"gpu.py: {ns.dscc} is not an executable (--pack needs --dscc)", file=sys.stderr)
        return 2
    out = os.path.abspath(ns.pack)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):  # nothing stale from an earlier pack
        if f == MANIFEST or f.endswith("_cuda.so") or f.endswith(".dsc"):
            os.unlink(os.path.join(out, f))
    work = os.path.abspath(ns.work) if ns.work else tempfile.mkdtemp(prefix="dsc-zoo-pack-")
    manifest = {"size": ns.size, "torch": torch.__version__, "revision": git_revision(ROOT),
                "date": datetime.datetime.now().isoformat(timespec="seconds"),
                "cuda_arch": ns.cuda_arch, "models": {}}
    failed = False
    try:
        for name in names:
            try:
                _, _, imp, problem = import_torch(name, ns.size, work, ns.timeout)
            except Exception as e:  # noqa: BLE001 - an exporter failure, reported; go on
                problem = f"torch.export: {type(e).__name__}: {str(e).strip()[:300]}"
            if problem:
                log(f"FAIL {name}: {problem}")
                failed = True
                continue
            so = os.path.join(out, f"{name}_cuda.so")
            cmd = [dscc, "build", "--target=cuda", imp.dsc, "-o", so, "-q"]
            if ns.cuda_arch:
                cmd.append(f"--cuda-arch={ns.cuda_arch}")
            r, problem = build_zoo._timed_step(imp, "build", cmd, ns.timeout)
            if problem:
                log(f"FAIL {name}: dscc build --target=cuda: {problem}\n{r.stderr.strip()}")
                failed = True
                continue
            shutil.copyfile(imp.dsc, os.path.join(out, f"{name}.dsc"))
            manifest["models"][name] = {
                "so": os.path.basename(so), "dsc": f"{name}.dsc", "dsc_sha256": sha256(imp.dsc),
                "weights_sha256": sha256(imp.weights),
                "weights_bytes": os.path.getsize(imp.weights), "so_bytes": os.path.getsize(so),
                "import": imp.summary}
            log(f"PASS {name}: {imp.summary}; export {imp.seconds['export']:.1f} s, import "
                f"{imp.seconds['import']:.1f} s, dscc build --target=cuda "
                f"{imp.seconds['build']:.1f} s, {os.path.getsize(so) / 2**20:.1f} MiB")
    finally:
        if not ns.work:
            shutil.rmtree(work, ignore_errors=True)
    with open(os.path.join(out, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1)
    total = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    log(f"packed {len(manifest['models'])} of {len(names)} model(s) at size {ns.size} into {out}: "
        f"{total / 2**20:.1f} MiB")
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------------
# There: --zoo
# ---------------------------------------------------------------------------------------------

def dsc_mismatch(here: str, packed: str) -> str:
    """The first lines of the difference between the regenerated and the packed .dsc."""
    with open(here) as f:
        a = f.read().splitlines()
    with open(packed) as f:
        b = f.read().splitlines()
    diff = list(difflib.unified_diff(b, a, "packed", "here", n=0, lineterm=""))
    return "\n".join("    " + line for line in diff[2:14]) + \
        ("\n    ..." if len(diff) > 14 else "")


def time_eager(call, ns) -> float:
    if ns.device == "cpu":
        return time_calls(call, ns.runs, ns.warmup)["median_ms"]
    return peers.time_gpu(call, ns.runs, ns.warmup)


def run_model(name: str, entry: dict, ns, manifest: dict, work: str) -> dict:
    res = {"model": name, "rows": [], "error": None}
    t0 = time.perf_counter()
    try:
        model, z, imp, problem = import_torch(name, manifest["size"], work, ns.timeout)
    except Exception as e:  # noqa: BLE001 - an exporter failure is this model's result
        model, z, imp, problem = None, None, None, \
            f"torch.export: {type(e).__name__}: {str(e).strip()[:300]}"
    res["import_s"] = round(time.perf_counter() - t0, 1)
    if problem:
        res["error"] = problem
        log(f"FAIL {name}: {problem}")
        return res
    res["import"] = imp.summary
    res["dsc_sha256"] = sha256(imp.dsc)
    res["dsc_matches_pack"] = res["dsc_sha256"] == entry["dsc_sha256"]
    res["weights_match_pack"] = sha256(imp.weights) == entry["weights_sha256"]
    difference = ""
    if not res["dsc_matches_pack"]:
        difference = dsc_mismatch(imp.dsc, os.path.join(ns.zoo, entry["dsc"]))
    if not res["dsc_matches_pack"] and res["weights_match_pack"]:
        # The .so was built for exactly these parameters; the text differs elsewhere.
        log(f"note {name}: the .dsc imported here (torch {torch.__version__}) differs from the "
            f"packed one (torch {manifest.get('torch')}), over the packed weights byte for "
            f"byte, so {entry['so']} fits them:\n{difference}")
    elif not res["dsc_matches_pack"]:
        msg = (f"the .dsc imported here (torch {torch.__version__}) is not the packed one (torch "
               f"{manifest.get('torch')}): sha256 {res['dsc_sha256'][:12]} here, "
               f"{entry['dsc_sha256'][:12]} packed, and the weights differ too, so "
               f"{entry['so']} may not fit them; pack with the torch version of this machine, "
               f"or pass --allow-dsc-mismatch to run it anyway (the outputs are still "
               f"checked)\n{difference}")
        log(f"{'WARN' if ns.allow_dsc_mismatch else 'FAIL'} {name}: {msg}")
        if not ns.allow_dsc_mismatch:
            res["error"] = msg
            return res
    if not res["weights_match_pack"]:
        # Harmless for the check (dsc and eager both use the weights made here), but worth
        # knowing: this torch draws the zoo's random weights differently.
        log(f"note {name}: the weights drawn here differ from those at pack time")
    log(f"  {name}: exported and imported in {res['import_s']} s ({imp.summary})")
    so = os.path.join(ns.zoo, entry["so"])
    dev = ns.device
    model = model.to(dev)
    shapes = parse_shapes(ns.shapes[name], z) if name in ns.shapes else z.bench_shapes
    for k, sym in enumerate(shapes):
        row = {"shape": shape_text(sym)}
        res["rows"].append(row)
        if not z.fits(sym):
            row["error"] = f"outside the export's ranges {z.ranges}"
            log(f"FAIL {name} {row['shape']}: {row['error']}")
            continue
        inputs = z.make_inputs(sym, models.SEED + k)
        case = os.path.join(work, name, "cases", re.sub(r"[^A-Za-z0-9_=-]+", "_", row["shape"]))
        args = ["--weights", imp.weights, *build_zoo.save_inputs(inputs, case)]
        if dev == "cpu":
            args.append("--threads=1")
        try:
            row["dsc_ms"], outs = peers.run_dsc(ns.dsc_run, so, args, ns.runs, ns.warmup,
                                                os.path.join(case, "out"))
        except RuntimeError as e:
            row["error"] = str(e).strip()
            log(f"FAIL {name} {row['shape']}: {row['error']}")
            continue
        xs = tuple(t.to(dev) for t in inputs.values())
        try:
            with torch.inference_mode():
                refs = model(*xs)
                refs = [r.cpu().numpy() for r in (refs if isinstance(refs, (tuple, list))
                                                  else [refs])]
                row["eager_ms"] = time_eager(lambda: model(*xs), ns)
        except Exception as e:  # noqa: BLE001 - eager failing at a shape is that row's result
            row["error"] = f"eager: {type(e).__name__}: {str(e).strip()[:300]}"
            log(f"FAIL {name} {row['shape']}: {row['error']}")
            continue
        details, ok = [], len(outs) == len(refs)
        if not ok:
            details.append(f"{len(outs)} outputs, the model has {len(refs)}")
        for out_name, got, ref in zip(z.outputs, outs, refs):
            good, detail = harness.compare_nonfinite(got, ref)
            ok &= good
            details.append(f"{out_name}: {detail}")
        row["check"] = {"ok": ok, "detail": "; ".join(details)}
        row["eager_over_dsc"] = row["eager_ms"] / row["dsc_ms"] if row["dsc_ms"] else None
        log(f"  {name} {row['shape']}: dsc {row['dsc_ms']:.3f} ms, eager {row['eager_ms']:.3f} "
            f"ms, eager/dsc {fmt(row['eager_over_dsc'], '.2f')}, "
            f"{'ok' if ok else 'MISMATCH'} ({row['check']['detail']})")
    res["geomean_eager_over_dsc"] = geomean([r.get("eager_over_dsc") for r in res["rows"]])
    res["seconds"] = round(time.perf_counter() - t0, 1)
    model = None  # frees the GPU memory before the next model
    if dev == "cuda":
        torch.cuda.empty_cache()
    return res


HEAD = ["shape", "dsc ms", "eager ms", "eager/dsc", "check"]


def tables(result: dict) -> str:
    c = result["conditions"]
    lines = [f"zoo at {c['size']} size on {c['device_name']}: dsc ({c['dsc_run']}) against "
             f"PyTorch eager, median of {c['runs']} calls after {c['warmup']}, fp32"
             f"{', TF32 off' if c['device'] == 'cuda' else ''}, tolerance {c['tol']:g} * "
             f"(rms + |ref|)", ""]
    for res in result["models"]:
        lines.append(f"{res['model']}" + (f": FAILED: {res['error'].splitlines()[0]}"
                                           if res["error"] else ""))
        if not res["rows"]:
            lines.append("")
            continue
        rows = [HEAD] + [[r["shape"], fmt(r.get("dsc_ms"), ".3f"), fmt(r.get("eager_ms"), ".3f"),
                          fmt(r.get("eager_over_dsc"), ".2f"),
                          ("ok" if r["check"]["ok"] else "MISMATCH") if "check" in r else
                          "error"] for r in res["rows"]]
        widths = [max(len(r[i]) for r in rows) for i in range(len(HEAD))]
        for r in rows:
            lines.append("  " + "  ".join(v.ljust(w) if i == 0 else v.rjust(w)
                                          for i, (v, w) in enumerate(zip(r, widths))))
        lines += [f"  geomean eager/dsc {fmt(res['geomean_eager_over_dsc'], '.2f')}", ""]
    lines.append(f"geomean eager/dsc over every shape: "
                 f"{fmt(result['geomean_eager_over_dsc'], '.2f')}")
    return "\n".join(lines)


def run_zoo(ns, names: list[str] | None) -> int:
    path = os.path.join(ns.zoo, MANIFEST)
    if not os.path.isfile(path):
        print(f"gpu.py: no {path}: pack the zoo first (tools/scripts/gpu_check.sh pack, or "
              f"bench/models/gpu.py --pack DIR --dscc ...)", file=sys.stderr)
        return 2
    with open(path) as f:
        manifest = json.load(f)
    if not ns.dsc_run or not (os.path.isfile(ns.dsc_run) and os.access(ns.dsc_run, os.X_OK)):
        print(f"gpu.py: --dsc-run: {ns.dsc_run} is not an executable", file=sys.stderr)
        return 2
    ns.dsc_run = os.path.abspath(ns.dsc_run)
    if ns.device == "cuda" and not torch.cuda.is_available():
        print("gpu.py: torch sees no CUDA device (use --device cpu to run the flow on the CPU, "
              "with dsc-run under DSC_CUDA_EMULATE=1)", file=sys.stderr)
        return 2
    names = names or [m for m in DEFAULT_MODELS if m in manifest["models"]] or \
        list(manifest["models"])
    missing = [m for m in names if m not in manifest["models"]]
    if missing:
        print(f"gpu.py: not packed in {ns.zoo}: {', '.join(missing)} (it has "
              f"{', '.join(manifest['models']) or 'none'})", file=sys.stderr)
        return 2
    for name, text in ns.shapes.items():  # every --shape checked before any work
        if name not in names:
            print(f"gpu.py: --shape for {name}, which is not run (--models)", file=sys.stderr)
            return 2
        parse_shapes(text, models.describe(name, manifest["size"]))
    # dsc-run finds libdsc_runtime.so (and OpenBLAS) in .gpu/lib beside .gpu/bin when packed.
    lib = os.path.join(os.path.dirname(os.path.dirname(ns.dsc_run)), "lib")
    if os.path.isfile(os.path.join(lib, "libdsc_runtime.so")):
        os.environ["LD_LIBRARY_PATH"] = lib + os.pathsep + os.environ.get("LD_LIBRARY_PATH", "")
    if ns.device == "cpu":
        os.environ["DSC_CUDA_EMULATE"] = "1"
        torch.set_num_threads(1)
        device_name = f"the CPU ({models_run.cpu_model()}), dsc under the CUDA emulator"
    else:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        device_name = torch.cuda.get_device_name()
    harness.TOL = ns.tol  # compare_nonfinite's criterion, at the GPU's tolerance
    warnings.filterwarnings("ignore")
    log(f"device: {device_name}, torch {torch.__version__}; zoo packed at size "
        f"{manifest['size']} with torch {manifest.get('torch')}, revision "
        f"{manifest.get('revision')}")
    result = {"conditions": {
        "device": ns.device, "device_name": device_name, "size": manifest["size"],
        "runs": ns.runs, "warmup": ns.warmup, "tol": ns.tol, "dsc_run": ns.dsc_run,
        "revision": git_revision(ROOT), "pack": {k: v for k, v in manifest.items()
                                                 if k != "models"},
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "command": "python3 bench/models/gpu.py " + " ".join(sys.argv[1:]),
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "numpy": np.__version__,
                     "cuda": torch.version.cuda if ns.device == "cuda" else None}},
        "models": []}
    work = os.path.abspath(ns.work) if ns.work else tempfile.mkdtemp(prefix="dsc-zoo-gpu-")
    t0 = time.perf_counter()
    try:
        for name in names:
            log(f"{name}: export, import, check the .dsc against the pack")
            try:
                res = run_model(name, manifest["models"][name], ns, manifest, work)
            except Exception as e:  # noqa: BLE001 - one model's failure, reported; go on
                res = {"model": name, "rows": [], "error": f"{type(e).__name__}: {e}"}
                log(f"FAIL {name}: {res['error']}")
            result["models"].append(res)
            if not ns.work:  # the weights of a full-size model are hundreds of MB
                shutil.rmtree(os.path.join(work, name), ignore_errors=True)
    finally:
        if not ns.work:
            shutil.rmtree(work, ignore_errors=True)
    rows = [r for res in result["models"] for r in res["rows"]]
    result["geomean_eager_over_dsc"] = geomean([r.get("eager_over_dsc") for r in rows])
    result["seconds"] = round(time.perf_counter() - t0, 1)
    failed = any(res["error"] for res in result["models"]) or not rows or \
        any("error" in r or not r["check"]["ok"] for r in rows)
    log("")
    log(tables(result))
    log(f"{'FAILED' if failed else 'all outputs match'}; {result['seconds']:.0f} s")
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump(result, f, indent=1, default=str)
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--pack", metavar="DIR", help="here: build the CUDA .so files into DIR")
    mode.add_argument("--zoo", metavar="DIR", help="there: run the zoo packed in DIR")
    ap.add_argument("--dscc", help="--pack: the dscc binary")
    ap.add_argument("--size", choices=models.SIZES, default="full", help="--pack: the zoo's "
                    "size (default full; --zoo takes the packed one)")
    ap.add_argument("--cuda-arch", help="--pack: dscc's --cuda-arch (default: dscc's, 80,90)")
    ap.add_argument("--dsc-run", help="--zoo: the dsc-run binary")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="--zoo: cuda, or cpu (eager on the CPU, dsc-run under DSC_CUDA_EMULATE=1)")
    ap.add_argument("--models", help=f"comma-separated, of: {', '.join(models.NAMES)} (default: "
                    f"{','.join(DEFAULT_MODELS)}; --zoo: those of them packed)")
    ap.add_argument("--shape", action="append", default=[], metavar="MODEL:SYM=V,...;...",
                    help="--zoo: other shapes for one model, e.g. 'bert:B=1,S=64;B=2,S=7' "
                    "(repeatable; default: bench/models/run.py's)")
    ap.add_argument("--runs", type=int, default=20, help="timed calls per shape (default 20)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed calls first (default 5)")
    ap.add_argument("--tol", type=float, default=1e-3,
                    help="TOL of |dsc - ref| <= TOL * (rms(ref) + |ref|) (default 1e-3)")
    ap.add_argument("--allow-dsc-mismatch", action="store_true",
                    help="--zoo: run a model whose regenerated .dsc and weights both differ "
                    "from the packed ones")
    ap.add_argument("--json", help="--zoo: write the results here")
    ap.add_argument("--work", help="keep the exports, imports, weights and outputs here "
                    "(default: a temporary directory, removed)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per import or build")
    ns = ap.parse_args(argv)
    names = [m.strip() for m in (ns.models or "").split(",") if m.strip()]
    bad = [m for m in names if m not in models.NAMES]
    if bad:
        print(f"gpu.py: unknown model(s): {', '.join(bad)}", file=sys.stderr)
        return 2
    if ns.runs < 1 or ns.warmup < 1:
        print("gpu.py: --runs and --warmup must be at least 1 (dsc-run's warm-up makes the "
              "outputs)", file=sys.stderr)
        return 2
    ns.shapes = {}
    for spec in ns.shape:
        model, _, text = spec.partition(":")
        ns.shapes[model.strip()] = text
    warnings.filterwarnings("ignore")
    if ns.pack:
        return pack(ns, names or list(DEFAULT_MODELS))
    return run_zoo(ns, names)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
