#!/usr/bin/env python3
"""BERT-base layer, fp32, CPU: dsc against PyTorch eager, side by side in one run.

For each (B, S) it runs

    DSC_NUM_THREADS=N dscc run examples/bert_layer.dsc --shape B=..,S=.. --random-weights --bench=R

and parses the median latency dscc prints, then times bench/cpu/bert_torch.py's layer in this
process with torch.set_num_threads(N), median of R runs after a warm-up. It prints a table

    shape | dsc ms | torch ms | torch/dsc | GFLOP | floor ms | floor/dsc

where torch/dsc > 1 means dsc is faster, GFLOP counts the layer's six matmuls
(sgemm_rate.bert_layer_flops), floor = GFLOP / the machine's measured fp32 GEMM rate (the best
square-sgemm rate of MKL via torch and of the OpenBLAS dsc links, see sgemm_rate.py), and
floor/dsc is the fraction of that sgemm-bound floor dsc reaches (1.0 = as fast as pure
GEMM at peak rate). Then the geometric mean of torch/dsc over the shapes. With --out PATH it
also writes PATH.json (everything, raw) and PATH.md (the table and the conditions).

    python3 bench/cpu/run.py --dscc build/tools/dscc/dscc --out /tmp/bert_cpu
    python3 bench/cpu/run.py --skip-dsc            # torch and the GEMM rate only

See bench/cpu/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import openblas_core as openblas_core_module  # noqa: E402
import sgemm_rate  # noqa: E402

# The line `dscc run --bench=N` prints, e.g.
#   layer at B=1, S=32: median latency: 12.345 ms over 50 runs (min 12.001 ms, 2 threads, OpenBLAS 2)
# Only the median is needed; adjust here if the format changes.
DSC_MEDIAN_RE = re.compile(r"median latency:\s*([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*ms")
# Optional: dscc's progress line on stderr, e.g. `dscc: compiled examples/bert_layer.dsc in 1.23 s`.
DSC_COMPILE_RE = re.compile(r"compiled \S+ in ([0-9.]+) s")

DEFAULT_SHAPES = "1x32,1x128,4x64,8x128,1x384"
MODEL = "examples/bert_layer.dsc"


def parse_shapes(text: str) -> list[tuple[int, int]]:
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        m = re.fullmatch(r"(\d+)[xX,:](\d+)", item)
        if not m:
            raise argparse.ArgumentTypeError(f"shape '{item}' is not BxS")
        out.append((int(m.group(1)), int(m.group(2))))
    return out


def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def git_revision(root: str) -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return rev + ("-dirty" if dirty else "") if rev else "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


# ---------------------------------------------------------------------------------------------
# dscc
# ---------------------------------------------------------------------------------------------

def dscc_env(threads: int) -> dict[str, str]:
    env = dict(os.environ)
    env["DSC_NUM_THREADS"] = str(threads)
    return env


def run_dscc(cmd: list[str], threads: int, cwd: str, timeout: float) -> tuple[int | None, str, str]:
    try:
        p = subprocess.run(cmd, cwd=cwd, env=dscc_env(threads), capture_output=True, text=True,
                           errors="replace", timeout=timeout, stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout:.0f} s"
    except OSError as e:
        return None, "", str(e)


def first_error(stdout: str, stderr: str) -> str:
    """The first line that says `error` (dscc may print progress lines first), else the first."""
    lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines() if ln.strip()]
    if not lines:
        return "(no output)"
    return next((ln for ln in lines if re.search(r"(?i)\berror\b", ln)), lines[0])[:300]


def dsc_bench(dscc: str, target: str, B: int, S: int, threads: int, runs: int, cwd: str,
              timeout: float) -> dict:
    cmd = [dscc, "run", target, "--shape", f"B={B},S={S}", "--random-weights", f"--bench={runs}"]
    rc, out, err = run_dscc(cmd, threads, cwd, timeout)
    r = {"command": f"DSC_NUM_THREADS={threads} " + " ".join(cmd), "rc": rc}
    m = DSC_MEDIAN_RE.search(out) or DSC_MEDIAN_RE.search(err)
    if rc == 0 and m:
        r["median_ms"] = float(m.group(1))
        r["line"] = m.string[m.string.rfind("\n", 0, m.start()) + 1:].split("\n", 1)[0].strip()
    else:
        r["error"] = (f"exit {rc}: " if rc else "no 'median latency: X ms' line: ") + \
            first_error(out, err)
    c = DSC_COMPILE_RE.search(err)
    if c:
        r["compile_s"] = float(c.group(1))
    return r


def dsc_build(dscc: str, source: str, out_so: str, threads: int, cwd: str, timeout: float) -> dict:
    import time
    cmd = [dscc, "build", source, "-o", out_so]
    t0 = time.perf_counter()
    rc, out, err = run_dscc(cmd, threads, cwd, timeout)
    r = {"command": " ".join(cmd), "rc": rc, "seconds": time.perf_counter() - t0}
    if rc != 0 or not os.path.isfile(out_so):
        r["error"] = f"exit {rc}: {first_error(out, err)}"
    return r


def dsc_check(dscc: str, target: str, B: int, S: int, threads: int, cwd: str, timeout: float,
              variant: str) -> dict:
    """Same inputs to dscc and torch; compare outputs with check_examples.py's criterion."""
    import numpy as np
    import bert_torch
    with tempfile.TemporaryDirectory(prefix="dsc-bench-check-") as d:
        p = bert_torch.random_params(B, S, seed=1)
        bert_torch.save_params(d, p)
        cmd = [dscc, "run", target, *bert_torch.input_args(d), f"--output={d}/out"]
        rc, out, err = run_dscc(cmd, threads, cwd, timeout)
        r = {"B": B, "S": S, "rc": rc}
        path = os.path.join(d, "out", "output0.npy")
        if rc != 0 or not os.path.isfile(path):
            r["ok"] = False
            r["detail"] = f"exit {rc}: {first_error(out, err)}"
            return r
        ok, detail = bert_torch.compare(np.load(path, allow_pickle=False),
                                        bert_torch.forward_numpy(p, variant))
        r["ok"], r["detail"] = ok, detail
        return r


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------

def check_status(check: dict) -> str:
    if check.get("ok"):
        return "agree"
    return "DISAGREE" if check.get("rc") == 0 else "dscc failed"


def fmt(x, spec: str, missing: str = "n/a") -> str:
    return format(x, spec) if isinstance(x, (int, float)) else missing


def table_rows(rows: list[dict]) -> list[list[str]]:
    out = []
    for r in rows:
        out.append([
            f"B={r['B']} S={r['S']}",
            fmt(r.get("dsc_ms"), ".3f"),
            fmt(r.get("torch_ms"), ".3f"),
            fmt(r.get("torch_over_dsc"), ".2f"),
            fmt(r["gflop"], ".3f"),
            fmt(r.get("floor_ms"), ".3f"),
            fmt(r.get("floor_over_dsc"), ".2f"),
            fmt(r.get("floor_over_torch"), ".2f"),
        ])
    return out


HEADER = ["shape", "dsc ms", "torch ms", "torch/dsc", "GFLOP", "floor ms", "floor/dsc",
          "floor/torch"]


def text_table(rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADER)]
    line = lambda cells: "  ".join(c.rjust(w) if i else c.ljust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(HEADER), line(["-" * w for w in widths]), *map(line, rows)])


def markdown(result: dict) -> str:
    rows = table_rows(result["rows"])
    md = ["# BERT-base layer, fp32, CPU: dsc vs PyTorch eager", ""]
    c = result["conditions"]
    md += [
        f"- date: {c['date']}, dsc revision {c['git']}",
        f"- machine: {c['cpu']}, {c['cpus']} CPUs; load average before/after: "
        f"{c['loadavg_before']} / {c['loadavg_after']}",
        f"- threads: {c['threads']} for both (DSC_NUM_THREADS for dscc, torch.set_num_threads)",
        f"- torch {c['torch']} ({c['torch_variant']} variant), median of {c['runs']} runs after "
        f"{c['torch_warmup']} warm-up; dscc `--bench={c['runs']}` (median, after 1 warm-up)",
        f"- sgemm rate used for the floor: {fmt(result['sgemm'].get('rate_used'), '.1f')} GFLOP/s "
        f"({result['sgemm'].get('rate_used_from')})",
        *(f"- {lib.get('name')}: {lib.get('version')}"
          for lib in result["sgemm"].get("libraries", {}).values() if lib.get("name")),
        f"- OPENBLAS_CORETYPE: {c['openblas_coretype']}",
        f"- OpenBLAS core: {c.get('openblas_core', '?')}",
        "- torch/dsc > 1 means dsc is faster. floor = GFLOP / rate; floor/dsc = the fraction of "
        "the sgemm-bound floor dsc reaches.",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "|".join("---" if i == 0 else "---:" for i in range(len(HEADER))) + "|",
        *("| " + " | ".join(r) + " |" for r in rows),
        "",
        f"geomean torch/dsc: {fmt(result['geomean_torch_over_dsc'], '.3f')}",
    ]
    if result.get("check"):
        ch = result["check"]
        md += ["", f"numeric check at B={ch['B']} S={ch['S']} (dsc vs torch, same inputs): "
                   f"{check_status(ch)}: {ch.get('detail')}"]
    compiles = [f"B={r['B']} S={r['S']} {r['dsc']['compile_s']:.2f} s" for r in result["rows"]
                if r.get("dsc", {}).get("compile_s") is not None]
    if compiles:
        md += ["", "dscc compile time (its own progress line): " + ", ".join(compiles)]
    if result.get("build") and not result["build"].get("error"):
        md += ["", f"dscc build (--via-build): {result['build']['seconds']:.2f} s"]
    errors = [f"- B={r['B']} S={r['S']}: {r['dsc_error']}" for r in result["rows"] if r.get("dsc_error")]
    if errors:
        md += ["", "dscc errors:", *errors]
    return "\n".join(md) + "\n"


# ---------------------------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="BERT layer fp32 CPU: dsc vs PyTorch eager.")
    ap.add_argument("--dscc", default=os.environ.get("DSCC", os.path.join(ROOT, "build/tools/dscc/dscc")),
                    help="the dscc binary (default: $DSCC, else build/tools/dscc/dscc)")
    ap.add_argument("--source-dir", default=ROOT, help="the dsc source tree (default: this checkout)")
    ap.add_argument("--shapes", type=parse_shapes, default=parse_shapes(DEFAULT_SHAPES),
                    help=f"comma-separated BxS (default {DEFAULT_SHAPES})")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="threads for dsc and torch alike (default: os.cpu_count())")
    ap.add_argument("--runs", type=int, default=50,
                    help="timed runs per shape: dscc --bench=RUNS and torch's median (default 50)")
    ap.add_argument("--warmup", type=int, default=5, help="torch warm-up calls (default 5)")
    ap.add_argument("--variant", default="eager", choices=("eager", "literal", "sdpa"),
                    help="the PyTorch formulation (bert_torch.py; default eager)")
    ap.add_argument("--square", default="2048",
                    help="N of the N^3 sgemm products that set the rate (default 2048)")
    ap.add_argument("--rate", type=float, default=None,
                    help="use this GEMM rate (GFLOP/s) instead of measuring it")
    ap.add_argument("--gemm-detail", action="store_true",
                    help="also time each shape's six GEMMs alone with both BLAS libraries")
    ap.add_argument("--via-build", action="store_true",
                    help="`dscc build` once to a .so and bench that, instead of `dscc run FILE.dsc`")
    ap.add_argument("--no-check", action="store_true",
                    help="skip the numeric check of dsc against torch (same inputs, one shape)")
    ap.add_argument("--check-shape", type=parse_shapes, default=parse_shapes("2x7"),
                    help="the shape of the numeric check (default 2x7)")
    ap.add_argument("--skip-dsc", action="store_true", help="torch and the GEMM rate only")
    ap.add_argument("--skip-torch", action="store_true", help="dsc and the GEMM rate only")
    ap.add_argument("--openblas-coretype", metavar="NAME",
                    help="set OPENBLAS_CORETYPE=NAME for dscc and the OpenBLAS rate measurement "
                         "(e.g. SkylakeX; default: the environment's, else OpenBLAS's own pick)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per dscc command")
    ap.add_argument("--out", help="write OUT.json and OUT.md (an .json/.md suffix is dropped)")
    ns = ap.parse_args(argv)

    threads = ns.threads
    if ns.openblas_coretype:
        # Read by OpenBLAS when it is loaded: before sgemm_rate loads it, and inherited by dscc.
        os.environ["OPENBLAS_CORETYPE"] = ns.openblas_coretype
    # Where OpenBLAS does not know this CPU, OPENBLAS_CORETYPE is set here (same timing).
    openblas_core = openblas_core_module.choose_coretype()
    print(f"OpenBLAS core: {openblas_core}", file=sys.stderr)
    if not ns.skip_torch:
        import torch
        import bert_torch
        torch.set_num_threads(threads)
        torch_version = torch.__version__
    else:
        torch_version = None

    conditions = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "git": git_revision(ns.source_dir),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "python": sys.executable + " " + platform.python_version(),
        "torch": torch_version,
        "torch_variant": ns.variant,
        "threads": threads,
        "runs": ns.runs,
        "torch_warmup": ns.warmup,
        "dscc": None if ns.skip_dsc else os.path.abspath(ns.dscc),
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "(unset: OpenBLAS picks)"),
        "openblas_core": openblas_core,
        "loadavg_before": loadavg(),
    }
    la = conditions["loadavg_before"]
    if la and la[0] > 0.5 * (os.cpu_count() or 1):
        print(f"warning: load average {la[0]:.2f} on {os.cpu_count()} CPUs: other work is running "
              f"and the timings will be noisy", file=sys.stderr)

    # 1. The machine's GEMM rate.
    if ns.rate is not None:
        sg = {"rate_used": ns.rate, "rate_used_from": "--rate", "libraries": {}}
    else:
        square = [int(x) for x in ns.square.split(",") if x]
        libs = ["openblas"] + ([] if ns.skip_torch else ["torch"])
        sg = sgemm_rate.measure_rates(threads, square, ns.shapes if ns.gemm_detail else [],
                                      libs=libs, log=lambda s: print("sgemm: " + s, flush=True))
    rate = sg.get("rate_used")
    if rate:
        print(f"sgemm rate used for the floor: {rate:.1f} GFLOP/s ({sg.get('rate_used_from')})")

    # 2. dsc: the target (.dsc, or one .so), then the numeric check.
    dscc = os.path.abspath(ns.dscc)
    source = os.path.join(ns.source_dir, MODEL)
    target, build, check, tmp = source, None, None, None
    if not ns.skip_dsc:
        if not (os.path.isfile(dscc) and os.access(dscc, os.X_OK)):
            print(f"run.py: error: --dscc {ns.dscc} is not an executable (--skip-dsc to bench "
                  f"torch only)", file=sys.stderr)
            return 2
        if ns.via_build:
            tmp = tempfile.mkdtemp(prefix="dsc-bench-")
            target = os.path.join(tmp, "bert_layer.so")
            build = dsc_build(dscc, source, target, threads, ns.source_dir, ns.timeout)
            print(f"dscc build: {build.get('error') or 'ok, %.2f s' % build['seconds']}")
        if not ns.no_check and not ns.skip_torch and not (build and build.get("error")):
            B, S = ns.check_shape[0]
            check = dsc_check(dscc, target, B, S, threads, ns.source_dir, ns.timeout, ns.variant)
            print(f"numeric check B={B} S={S}: {check_status(check)}: {check['detail']}", flush=True)

    # 3. Each shape: dsc, then torch.
    rows = []
    for B, S in ns.shapes:
        flops = sgemm_rate.bert_layer_flops(B, S)
        row = {"B": B, "S": S, "flops": flops, "gflop": flops / 1e9}
        if rate:
            row["floor_ms"] = flops / (rate * 1e9) * 1e3
        if not ns.skip_dsc:
            if build and build.get("error"):
                row["dsc_error"] = "dscc build failed: " + build["error"]
            else:
                d = dsc_bench(dscc, target, B, S, threads, ns.runs, ns.source_dir, ns.timeout)
                row["dsc"] = d
                if "median_ms" in d:
                    row["dsc_ms"] = d["median_ms"]
                else:
                    row["dsc_error"] = d["error"]
        if not ns.skip_torch:
            t = bert_torch.bench_shape(B, S, threads, ns.runs, ns.warmup, ns.variant)
            row["torch"] = t
            row["torch_ms"] = t["median_ms"]
        if row.get("dsc_ms") and row.get("torch_ms"):
            row["torch_over_dsc"] = row["torch_ms"] / row["dsc_ms"]
        if row.get("floor_ms"):
            if row.get("dsc_ms"):
                row["floor_over_dsc"] = row["floor_ms"] / row["dsc_ms"]
            if row.get("torch_ms"):
                row["floor_over_torch"] = row["floor_ms"] / row["torch_ms"]
        rows.append(row)
        status = f"  dscc: {row['dsc_error']}" if row.get("dsc_error") else ""
        print(f"B={B} S={S}: dsc {fmt(row.get('dsc_ms'), '.3f')} ms, torch "
              f"{fmt(row.get('torch_ms'), '.3f')} ms{status}", flush=True)

    conditions["loadavg_after"] = loadavg()
    result = {
        "conditions": conditions,
        "sgemm": sg,
        "build": build,
        "check": check,
        "rows": rows,
        "geomean_torch_over_dsc": geomean([r.get("torch_over_dsc") for r in rows]),
        "conventions": {
            "torch_over_dsc": "torch median / dsc median; > 1 means dsc is faster",
            "flops": "2*m*n*k over the layer's six matmuls (4 projections/FFN + 2 attention "
                     "batched matmuls); elementwise work not counted",
            "floor_ms": "flops / rate_used: the time of the GEMM work alone at the best "
                        "measured square-sgemm rate",
            "floor_over_dsc": "floor_ms / dsc median: the fraction of the sgemm-bound floor",
        },
    }

    print()
    print(text_table(table_rows(rows)))
    print(f"geomean torch/dsc: {fmt(result['geomean_torch_over_dsc'], '.3f')}"
          f"   (torch/dsc > 1: dsc faster; floor = GFLOP / {fmt(rate, '.1f')} GFLOP/s)")

    if ns.out:
        base = re.sub(r"\.(json|md)$", "", ns.out)
        os.makedirs(os.path.dirname(os.path.abspath(base)), exist_ok=True)
        with open(base + ".json", "w") as f:
            json.dump(result, f, indent=2)
        with open(base + ".md", "w") as f:
            f.write(markdown(result))
        print(f"wrote {base}.json and {base}.md")
    if tmp:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)

    failed = (not ns.skip_dsc and (any(r.get("dsc_error") for r in rows) or
                                   (check is not None and not check.get("ok"))))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
