#!/usr/bin/env python3
"""bf16 and f16 GEMM sweep, CPU: dsc's 16-bit GEMM (the routines dsc.gemm_bf16 and dsc.gemm_f16,
runtime/gemm/HalfGemm.h) against torch.matmul in the same dtype and against dsc's own f32 GEMM,
at one thread count, with each rate as a fraction of the machine's arithmetic peak.

Shapes are MxNxK: A is [M, K], W is [K, N], C = A @ W is [M, N]; a product counts 2*M*N*K FLOPs.
The groups (--shapes takes group names and/or MxNxK, comma-separated):
    bert     M = 128, 1024 rows; (N, K) = (768, 768), (2304, 768), (3072, 768), (768, 3072):
             BERT-base's projections (QKV 2304, FFN 3072) at 1x128 and 8x128 tokens
    decode   M = 1, 4, 16; (N, K) = (2048, 2048), (5632, 2048), (2048, 5632): a decode step of
             a 1B-parameter LLaMA-shaped model (TinyLlama's hidden 2048, MLP 5632)
    primes   97x131x61, 257x509x127, 13x1031x257, 509x257x1031: no dim a multiple of any tile or vector width

dsc: for each dtype and (N, K), one function, written to a temporary directory,

    fn mm(a: DT[M, K], w: DT[K, N]) -> DT[M, N] { return matmul(a, w) }     # K, N literal

built once with `dscc build`, then for each M

    DSC_NUM_THREADS=T dscc run mm.so --random-weights --shape M=.. --bench=R --warmup=W --threads=T

whose "median latency" line is read. `w` has constant dims, so dscc run declares it a constant
weight: the GEMM packs it once, at the first call, and reuses the packed panels after, as in a
model whose weights are fixed (dscc run --no-constant-weights would pack it on every call).
The time is one call of the compiled function (its output allocated by each call).

torch: torch.set_num_threads(T); a and w made in the dtype (w scaled by 1/sqrt(K), as dscc run
scales weights), torch.matmul(a, w) under torch.inference_mode(): W warm-up calls, then the
median of R calls timed one by one (bert_torch.time_calls). torch's bf16 matmul goes to oneDNN
(AVX512_BF16 where the CPU has it); its f16 matmul, on a CPU without AVX512_FP16 or AMX-FP16,
to a slow fallback: --max-seconds bounds each measurement (default 20 s: at least 3 runs,
`runs` in the JSON says how many were made). torch packs W on every call (a plain matmul has no
notion of a constant weight), which costs most at small M.

f32 reference: the same function in f32, built and timed by dsc alike (dsc.sgemm).

Roofline: the peak of each dtype on T cores = T x FLOP/cycle x clock, with
    f32   32 FLOP/cycle/core: two 256-bit FMA pipes (8 lanes x 2 FLOP each); a 512-bit FMA
          takes both for a cycle (Zen 4), or two 512-bit FMA units (Intel server cores: 64)
    bf16  64 FLOP/cycle/core with AVX512_BF16: vdpbf16ps adds two bf16 products into each f32
          lane, 16 lanes x 4 FLOP, one 512-bit instruction per cycle (Zen 4)
    f16   the f32 peak: no x86 core without AVX512_FP16 computes f16 faster than f32 (dsc
          widens f16 to f32, and so must anyone else there)
By default the rates are measured, not assumed: bench/cpu/peak_flops.c (compiled here with
`cc -O2 -march=native`, one copy per thread run at once) times FMA and vdpbf16ps on independent
accumulators and the clock (a chain of dependent adds), in each thread's CPU time so that other
load on the machine does not lower them; the peak is the sum over the copies. --clock-ghz G
computes it instead (32 or 64 x G x T). Without a C compiler it falls back to computing from
/proc/cpuinfo's "cpu MHz" (in a VM often the nominal clock, below the boost clock: the
fractions then come out too high; the output says which was used).

Report, per dtype and shape: dsc ms, GFLOP/s, fraction of the dtype's peak, GB/s (A, W and C
at 2 bytes an element over the time: what bounds a decode product); torch ms, GFLOP/s,
torch/dsc (> 1: dsc faster); dsc f32 ms and f32/dsc (> 1: dsc's 16-bit GEMM is faster than its
f32 one); the geometric means of torch/dsc and f32/dsc over all shapes and per group. Before the
timing, dsc's product at each shape is checked (dscc run --input/--output on random inputs
rounded to the dtype: f16 as float16 .npy, bf16 as float32 .npy, which dscc run takes for a
bf16 parameter, writing a bf16 result as float32) against the float64 product of the same
values, to the dtype's tolerance (bert_torch.TOLERANCES); torch's product alike (reported, not
required).

    python3 bench/cpu/half_gemm.py --json /tmp/half_gemm.json
    python3 bench/cpu/half_gemm.py --threads 1 --runs 30 --shapes decode,97x131x61 --dtypes bf16
    python3 bench/cpu/half_gemm.py --clock-ghz 3.7      # compute the peak instead of measuring

See bench/cpu/README.md, "16-bit".
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import run as bert_run  # noqa: E402  (the dscc helpers, load average, CPU model, git revision)

SHAPE_GROUPS = {
    "bert": [(m, n, k) for m in (128, 1024)
             for n, k in ((768, 768), (2304, 768), (3072, 768), (768, 3072))],
    "decode": [(m, n, k) for m in (1, 4, 16)
               for n, k in ((2048, 2048), (5632, 2048), (2048, 5632))],
    "primes": [(97, 131, 61), (257, 509, 127), (13, 1031, 257), (509, 257, 1031)],
}
DEFAULT_SHAPES = "bert,decode,primes"
DTYPES = ("bf16", "f16")
TORCH_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}
# FLOP per cycle per core, for --clock-ghz and the cpuinfo fallback (see the docstring).
FLOP_PER_CYCLE = {"f32": 32, "bf16": 64}


def parse_shapes(text: str) -> list[tuple[str, tuple[int, int, int]]]:
    """Group names and MxNxK, comma-separated -> [(group, (m, n, k))], in order, no repeats."""
    out = []
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        if item in SHAPE_GROUPS:
            out += [(item, s) for s in SHAPE_GROUPS[item]]
            continue
        m = re.fullmatch(r"(\d+)[xX](\d+)[xX](\d+)", item)
        if not m:
            raise argparse.ArgumentTypeError(
                f"'{item}' is neither MxNxK nor a group ({', '.join(SHAPE_GROUPS)})")
        out.append(("custom", tuple(int(g) for g in m.groups())))
    seen, unique = set(), []
    for g, s in out:
        if s not in seen:
            seen.add(s)
            unique.append((g, s))
    return unique


def parse_dtypes(text: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in names if x not in DTYPES]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"dtypes are {', '.join(DTYPES)} (got {text!r})")
    return names


def shape_name(s: tuple[int, int, int]) -> str:
    return "x".join(map(str, s))


def cpu_flags() -> list[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return line.split(":", 1)[1].split()
    except OSError:
        pass
    return []


def cpuinfo_field(name: str) -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.split(":")[0].strip() == name:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


# ---------------------------------------------------------------------------------------------
# The roofline
# ---------------------------------------------------------------------------------------------

def measure_peak(threads: int, log) -> dict:
    """peak_flops.c, compiled and run as `threads` copies at once; the rates summed."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise RuntimeError("no C compiler ($CC, cc, gcc or clang) for peak_flops.c")
    with tempfile.TemporaryDirectory(prefix="dsc-peak-") as d:
        exe = os.path.join(d, "peak_flops")
        subprocess.run([cc, "-O2", "-march=native", os.path.join(HERE, "peak_flops.c"), "-o", exe],
                       check=True, capture_output=True, text=True, timeout=120)
        procs = [subprocess.Popen([exe], stdout=subprocess.PIPE, text=True)
                 for _ in range(threads)]
        outs = [p.communicate(timeout=300)[0] for p in procs]
    copies = [{k: float(v) for k, v in (ln.split() for ln in o.splitlines() if ln.strip())}
              for o in outs]
    f32 = sum(c["f32_gflops"] for c in copies)
    bf16 = sum(c["bf16_gflops"] for c in copies)
    r = {"source": f"measured: bench/cpu/peak_flops.c, {threads} "
                   f"cop{'ies' if threads > 1 else 'y'} at once ({cc})",
         "copies": copies,
         "clock_ghz": min(c["clock_ghz"] for c in copies),
         "gflops": {"f32": f32, "bf16": bf16 or f32, "f16": f32}}
    log(f"peak (measured, {threads} cores): f32 {f32:.1f} GFLOP/s, bf16 {bf16:.1f} GFLOP/s; "
        f"clock {r['clock_ghz']:.2f} GHz; per core "
        + ", ".join(f"{c['f32_flop_per_cycle']:.1f}/{c['bf16_flop_per_cycle']:.1f}" for c in copies)
        + " f32/bf16 FLOP per cycle")
    return r


def computed_peak(threads: int, ghz: float, source: str, has_bf16: bool) -> dict:
    f32 = FLOP_PER_CYCLE["f32"] * ghz * threads
    bf16 = FLOP_PER_CYCLE["bf16"] * ghz * threads if has_bf16 else f32
    return {"source": source, "clock_ghz": ghz,
            "formula": f"threads x FLOP/cycle x clock: f32 {FLOP_PER_CYCLE['f32']}, bf16 "
                       f"{FLOP_PER_CYCLE['bf16'] if has_bf16 else FLOP_PER_CYCLE['f32']} "
                       f"FLOP/cycle/core",
            "gflops": {"f32": f32, "bf16": bf16, "f16": f32}}


def find_peak(ns, has_bf16: bool, log) -> dict:
    if ns.clock_ghz:
        return computed_peak(ns.threads, ns.clock_ghz, f"--clock-ghz {ns.clock_ghz}", has_bf16)
    try:
        return measure_peak(ns.threads, log)
    except Exception as e:
        mhz = cpuinfo_field("cpu MHz")
        ghz = float(mhz) / 1e3 if mhz else 1.0
        log(f"peak: not measured ({type(e).__name__}: {e}); computed from /proc/cpuinfo's "
            f"cpu MHz {mhz} (often below the boost clock: fractions too high)")
        return computed_peak(ns.threads, ghz, f"computed from /proc/cpuinfo cpu MHz {mhz}",
                             has_bf16)


# ---------------------------------------------------------------------------------------------
# dsc
# ---------------------------------------------------------------------------------------------

def write_source(directory: str, dtype: str, n: int, k: int) -> str:
    path = os.path.join(directory, f"mm_{dtype}_{n}x{k}.dsc")
    with open(path, "w") as f:
        f.write(f"# half_gemm.py: A [M, {k}] times a constant weight W [{k}, {n}], in {dtype}\n"
                f"fn mm(a: {dtype}[M, {k}], w: {dtype}[{k}, {n}]) -> {dtype}[M, {n}] "
                f"{{ return matmul(a, w) }}\n")
    return path


class DscLibraries:
    """One built library per (dtype, N, K), made on first use in a temporary directory."""

    def __init__(self, dscc: str, threads: int, timeout: float):
        self.dscc, self.threads, self.timeout = dscc, threads, timeout
        self.dir = tempfile.mkdtemp(prefix="dsc-half-gemm-")
        self.built: dict[tuple[str, int, int], dict] = {}

    def get(self, dtype: str, n: int, k: int) -> dict:
        key = (dtype, n, k)
        if key not in self.built:
            src = write_source(self.dir, dtype, n, k)
            so = src[:-4] + ".so"
            b = bert_run.dsc_build(self.dscc, src, so, self.threads, self.dir, self.timeout)
            b["so"] = so
            self.built[key] = b
        return self.built[key]

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def dsc_time(dscc: str, so: str, m: int, threads: int, runs: int, warmup: int,
             timeout: float) -> dict:
    cmd = [dscc, "run", so, "--random-weights", "--shape", f"M={m}", f"--bench={runs}",
           f"--warmup={max(warmup, 1)}", f"--threads={threads}", "-q"]
    rc, out, err = bert_run.run_dscc(cmd, threads, ROOT, timeout)
    r = {"command": f"DSC_NUM_THREADS={threads} " + " ".join(cmd), "rc": rc}
    hit = bert_run.DSC_MEDIAN_RE.search(out) or bert_run.DSC_MEDIAN_RE.search(err)
    if rc == 0 and hit:
        r["median_ms"] = float(hit.group(1))
        line = hit.string[hit.string.rfind("\n", 0, hit.start()) + 1:].split("\n", 1)[0]
        r["line"] = line.strip()
        mn = re.search(r"min ([0-9.]+) ms", line)
        if mn:
            r["min_ms"] = float(mn.group(1))
    else:
        r["error"] = (f"exit {rc}: " if rc else "no 'median latency' line: ") + \
            bert_run.first_error(out, err)
    return r


# ---------------------------------------------------------------------------------------------
# The numeric check
# ---------------------------------------------------------------------------------------------

def check(dscc: str, so: str, dtype: str, m: int, n: int, k: int, threads: int,
          timeout: float) -> dict:
    """dscc run on random inputs rounded to the dtype (f16 as float16 .npy; bf16 as float32
    .npy, which dscc run takes for a bf16 parameter, writing a bf16 result as float32); its
    product, and torch's, against the float64 product of the same values."""
    import numpy as np
    import torch
    import bert_torch
    g = torch.Generator().manual_seed(m * 7919 + n * 31 + k)
    dt = getattr(torch, TORCH_DTYPES[dtype])
    a = torch.randn(m, k, generator=g).to(dt)
    w = (torch.randn(k, n, generator=g) / math.sqrt(k)).to(dt)
    ref = (a.double() @ w.double()).numpy()
    tol = bert_torch.TOLERANCES[dtype]
    store = np.float16 if dtype == "f16" else np.float32
    with tempfile.TemporaryDirectory(prefix="dsc-half-gemm-check-") as d:
        for name, t in (("a", a), ("w", w)):
            np.save(os.path.join(d, name + ".npy"), t.float().numpy().astype(store))
        cmd = [dscc, "run", so, "--input", f"a={d}/a.npy", "--input", f"w={d}/w.npy",
               f"--output={d}/out", "-q"]
        rc, out, err = bert_run.run_dscc(cmd, threads, ROOT, timeout)
        path = os.path.join(d, "out", "output0.npy")
        if rc != 0 or not os.path.isfile(path):
            return {"ok": False, "detail": f"dscc run exit {rc}: {bert_run.first_error(out, err)}"}
        got = np.load(path, allow_pickle=False)
    ok, detail = bert_torch.compare(got.astype(np.float32), ref, tol)
    with torch.inference_mode():
        t_ok, t_detail = bert_torch.compare(torch.matmul(a, w).float().numpy(), ref, tol)
    return {"ok": ok and got.dtype == np.dtype(store), "detail": detail, "tolerance": tol,
            "output_npy_dtype": str(got.dtype), "torch_ok": t_ok, "torch_detail": t_detail}


# ---------------------------------------------------------------------------------------------
# torch
# ---------------------------------------------------------------------------------------------

def torch_time(dtype: str, m: int, n: int, k: int, runs: int, warmup: int,
               max_seconds: float | None) -> dict:
    import torch
    import bert_torch
    dt = getattr(torch, TORCH_DTYPES[dtype])
    g = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=g).to(dt)
    w = (torch.randn(k, n, generator=g) / math.sqrt(k)).to(dt)
    with torch.inference_mode():
        return bert_torch.time_calls(lambda: torch.matmul(a, w), runs, warmup, max_seconds)


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------

def geomean(xs) -> float | None:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def fmt(x, spec: str) -> str:
    return format(x, spec) if isinstance(x, (int, float)) else "n/a"


HEAD = ["MxNxK", "dsc ms", "dsc GFLOP/s", "dsc/peak", "dsc GB/s", "torch ms", "torch GFLOP/s",
        "torch/dsc", "f32 ms", "f32/dsc"]


def table_rows(rows: list[dict], dtype: str) -> list[list[str]]:
    out = []
    for r in rows:
        d = r["dtypes"][dtype]
        out.append([shape_name(r["shape"]), fmt(d.get("dsc_ms"), ".4f"),
                    fmt(d.get("dsc_gflops"), ".1f"), fmt(d.get("dsc_of_peak"), ".2f"),
                    fmt(d.get("dsc_gbytes_per_s"), ".1f"), fmt(d.get("torch_ms"), ".4f"), fmt(d.get("torch_gflops"), ".1f"),
                    fmt(d.get("torch_over_dsc"), ".2f"), fmt(r.get("f32_ms"), ".4f"),
                    fmt(d.get("f32_over_dsc"), ".2f")])
    return out


def summary_lines(result: dict, dtype: str) -> list[str]:
    g = result["geomean"][dtype]
    lines = []
    for scope, v in g.items():
        lines.append(f"geomean {scope}: torch/dsc {fmt(v['torch_over_dsc'], '.3f')}, "
                     f"f32/dsc {fmt(v['f32_over_dsc'], '.3f')}, dsc/peak "
                     f"{fmt(v['dsc_of_peak'], '.3f')}")
    return lines


def markdown(result: dict) -> str:
    c = result["conditions"]
    p = result["peak"]
    md = ["# 16-bit GEMM sweep, CPU: dsc vs torch.matmul, and dsc's f32", "",
          f"- date {c['date']}, scripts at revision {c['git']}; {c['dscc']} built at "
          f"{c['dscc_git']} (written {c['dscc_mtime']})",
          f"- machine: {c['cpu']} (family {c['cpu_family']}, model {c['cpu_model']}), "
          f"{c['cpus']} CPUs; ISA: {', '.join(c['isa'])}",
          f"- threads {c['threads']} (DSC_NUM_THREADS and --threads for dscc, "
          f"torch.set_num_threads); load average before/after {c['loadavg_before']} / "
          f"{c['loadavg_after']}",
          f"- dscc run --bench={c['runs']} --warmup={c['warmup']}, weights constant (packed once); "
          f"torch {c['torch']}: {c['runs']} calls after {c['warmup']} warm-up "
          f"(--max-seconds {c['max_seconds']}); the tables' times: the {c['stat']} call",
          f"- peak ({p['source']}): " + ", ".join(f"{k} {v:.1f}" for k, v in p["gflops"].items())
          + f" GFLOP/s on {c['threads']} cores (clock {p['clock_ghz']:.2f} GHz)",
          "- torch/dsc > 1: dsc faster. f32/dsc > 1: dsc's 16-bit GEMM faster than its f32 one. "
          "dsc/peak: the fraction of the dtype's arithmetic peak. dsc GB/s: A, W and C "
          "(2 bytes an element) over dsc's time", ""]
    for dtype in c["dtypes"]:
        md += [f"## {dtype}", "",
               "| " + " | ".join(HEAD) + " |", "|---" + "|---:" * (len(HEAD) - 1) + "|",
               *("| " + " | ".join(r) + " |" for r in table_rows(result["rows"], dtype)), "",
               *(f"- {ln}" for ln in summary_lines(result, dtype)), ""]
    if result["notes"]:
        md += ["Notes:", "", *(f"- {n}" for n in result["notes"]), ""]
    return "\n".join(md)


# ---------------------------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description="bf16/f16 GEMM sweep on the CPU: dsc vs torch.matmul in the same dtype, and "
                    "dsc's own f32, with the fraction of the machine's peak.",
        epilog="Shape groups: " + "; ".join(f"{g}: {', '.join(map(shape_name, s))}"
                                            for g, s in SHAPE_GROUPS.items()))
    ap.add_argument("--dscc", default=os.environ.get("DSCC", os.path.join(ROOT, "build/tools/dscc/dscc")),
                    help="the dscc binary (default: $DSCC, else build/tools/dscc/dscc)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="threads for dsc and torch alike (default: os.cpu_count())")
    ap.add_argument("--runs", type=int, default=50,
                    help="timed calls per measurement: dscc --bench=RUNS, torch's median "
                         "(default 50)")
    ap.add_argument("--warmup", type=int, default=5,
                    help="untimed calls before them, both sides (default 5)")
    ap.add_argument("--shapes", type=parse_shapes, default=parse_shapes(DEFAULT_SHAPES),
                    help=f"groups and/or MxNxK, comma-separated (default {DEFAULT_SHAPES})")
    ap.add_argument("--dtypes", type=parse_dtypes, default=list(DTYPES),
                    help="bf16, f16 or both (default bf16,f16)")
    ap.add_argument("--no-f32", action="store_true", help="leave out dsc's f32 reference")
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="the time the tables use: the median (default) or, on a loaded machine, "
                         "the fastest call (other load only slows a call down); the JSON has both")
    ap.add_argument("--max-seconds", type=float, default=20.0,
                    help="bound on one torch measurement's timed calls (at least 3 runs; "
                         "default 20: torch's f16 matmul is slow without f16 hardware)")
    ap.add_argument("--clock-ghz", type=float, default=None,
                    help="compute the peak as threads x FLOP/cycle x this clock instead of "
                         "measuring it with peak_flops.c")
    ap.add_argument("--no-check", action="store_true",
                    help="skip the numeric check of each shape (dscc run on given inputs)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per dscc command")
    ap.add_argument("--json", metavar="OUT", help="write every number and the conditions here")
    ap.add_argument("--md", metavar="OUT", help="write the tables as Markdown here")
    ns = ap.parse_args(argv)
    stat = f"{ns.stat}_ms"

    dscc = os.path.abspath(ns.dscc)
    if not (os.path.isfile(dscc) and os.access(dscc, os.X_OK)):
        print(f"half_gemm.py: error: --dscc {ns.dscc} is not an executable", file=sys.stderr)
        return 2
    import torch
    torch.set_num_threads(ns.threads)
    log = lambda s: print(s, flush=True)  # noqa: E731

    flags = cpu_flags()
    isa = [f for f in flags if f.startswith(("avx512", "amx")) or f in ("avx2", "fma", "f16c")]
    has_bf16 = "avx512_bf16" in flags
    conditions = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "git": bert_run.git_revision(ROOT),
        "dscc": dscc,
        # The revision of the checkout dscc was built in (which may not be this one).
        "dscc_git": bert_run.git_revision(os.path.dirname(dscc)),
        "dscc_mtime": bert_run.file_mtime(dscc),
        "cpu": bert_run.cpu_model(),
        "cpu_family": cpuinfo_field("cpu family"),
        "cpu_model": cpuinfo_field("model"),
        "cpu_mhz_cpuinfo": cpuinfo_field("cpu MHz"),
        "cpus": os.cpu_count(),
        "isa": isa,
        "threads": ns.threads,
        "runs": ns.runs,
        "warmup": ns.warmup,
        "max_seconds": ns.max_seconds,
        "stat": ns.stat,
        "dtypes": ns.dtypes,
        "torch": torch.__version__,
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "mkldnn": torch.backends.mkldnn.is_available(),
        "loadavg_before": bert_run.loadavg(),
    }
    la = conditions["loadavg_before"]
    log(f"{conditions['cpu']} (family {conditions['cpu_family']}, model "
        f"{conditions['cpu_model']}), {ns.threads} threads; load average {la}")
    if la and la[0] > 0.5 * (os.cpu_count() or 1):
        log(f"warning: load average {la[0]:.2f} on {os.cpu_count()} CPUs: other work is running "
            f"and the timings will be noisy")
    peak = find_peak(ns, has_bf16, log)

    libs = DscLibraries(dscc, ns.threads, ns.timeout)
    notes, failed = [], False
    rows = []
    try:
        for group, (m, n, k) in ns.shapes:
            flops = 2 * m * n * k
            row = {"group": group, "shape": [m, n, k], "flops": flops, "dtypes": {},
                   "loadavg": bert_run.loadavg()}
            for dtype in ns.dtypes:
                d = {}
                b = libs.get(dtype, n, k)
                if b.get("error"):
                    d["dsc_error"] = "dscc build: " + b["error"]
                else:
                    if not ns.no_check:
                        d["check"] = check(dscc, b["so"], dtype, m, n, k, ns.threads, ns.timeout)
                        if not d["check"]["ok"]:
                            failed = True
                            notes.append(f"{dtype} {m}x{n}x{k}: dsc DISAGREES with the float64 "
                                         f"product: {d['check']['detail']}")
                    d["dsc"] = dsc_time(dscc, b["so"], m, ns.threads, ns.runs, ns.warmup,
                                        ns.timeout)
                    if stat in d["dsc"]:
                        d["dsc_ms"] = d["dsc"][stat]
                        d["dsc_gflops"] = flops / d["dsc_ms"] / 1e6
                        d["dsc_of_peak"] = d["dsc_gflops"] / peak["gflops"][dtype]
                        d["dsc_gbytes_per_s"] = 2 * (m * k + k * n + m * n) / d["dsc_ms"] / 1e6
                    else:
                        d["dsc_error"] = d["dsc"].get("error", f"no {ns.stat} time in dscc's line")
                        failed = True
                try:
                    d["torch"] = torch_time(dtype, m, n, k, ns.runs, ns.warmup, ns.max_seconds)
                    d["torch_ms"] = d["torch"][stat]
                    d["torch_gflops"] = flops / d["torch_ms"] / 1e6
                    d["torch_of_peak"] = d["torch_gflops"] / peak["gflops"][dtype]
                    if d["torch"].get("capped"):
                        notes.append(f"torch {dtype} {m}x{n}x{k}: {d['torch']['runs']} runs "
                                     f"(--max-seconds {ns.max_seconds:g})")
                except Exception as e:
                    d["torch_error"] = f"{type(e).__name__}: {e}"
                if d.get("dsc_ms") and d.get("torch_ms"):
                    d["torch_over_dsc"] = d["torch_ms"] / d["dsc_ms"]
                row["dtypes"][dtype] = d
            if not ns.no_f32:
                b = libs.get("f32", n, k)
                if b.get("error"):
                    row["f32_error"] = "dscc build: " + b["error"]
                else:
                    row["f32"] = dsc_time(dscc, b["so"], m, ns.threads, ns.runs, ns.warmup,
                                          ns.timeout)
                    if stat in row["f32"]:
                        row["f32_ms"] = row["f32"][stat]
                        row["f32_gflops"] = flops / row["f32_ms"] / 1e6
                        row["f32_of_peak"] = row["f32_gflops"] / peak["gflops"]["f32"]
                        for d in row["dtypes"].values():
                            if d.get("dsc_ms"):
                                d["f32_over_dsc"] = row["f32_ms"] / d["dsc_ms"]
                    else:
                        row["f32_error"] = row["f32"].get("error", f"no {ns.stat} time in dscc's line")
            rows.append(row)
            log(f"{shape_name((m, n, k)):>16s} [{group}] " + "; ".join(
                f"{dt}: dsc {fmt(d.get('dsc_ms'), '.4f')} ms ({fmt(d.get('dsc_gflops'), '.1f')} "
                f"GFLOP/s), torch {fmt(d.get('torch_ms'), '.4f')} ms"
                + (f" [{d['dsc_error'][:120]}]" if d.get("dsc_error") else "")
                for dt, d in row["dtypes"].items())
                + (f"; f32: dsc {fmt(row.get('f32_ms'), '.4f')} ms" if not ns.no_f32 else ""))
    finally:
        builds = {f"{dt}_{n}x{k}": {x: v for x, v in b.items() if x != "so"}
                  for (dt, n, k), b in libs.built.items()}
        libs.close()

    conditions["loadavg_after"] = bert_run.loadavg()
    geo = {}
    groups = ["all"] + sorted({r["group"] for r in rows})
    for dtype in ns.dtypes:
        geo[dtype] = {}
        for g in groups:
            sel = [r["dtypes"][dtype] for r in rows if g == "all" or r["group"] == g]
            geo[dtype][g] = {x: geomean([d.get(x) for d in sel])
                             for x in ("torch_over_dsc", "f32_over_dsc", "dsc_of_peak")}
    checks = [d["check"] for r in rows for d in r["dtypes"].values() if "check" in d]
    if checks:
        bad_torch = sum(1 for c in checks if not c.get("torch_ok", True))
        notes.insert(0, f"numeric check (dscc run, against float64 of the same rounded inputs, "
                        f"tolerance bf16 3e-2 / f16 5e-3 of rms + |ref|): dsc "
                        f"{sum(c['ok'] for c in checks)}/{len(checks)} agree"
                        + (f"; torch outside it at {bad_torch}" if bad_torch else ""))
    result = {"conditions": conditions, "peak": peak, "builds": builds, "rows": rows,
              "geomean": geo, "notes": notes,
              "conventions": {
                  "shape": "MxNxK: A [M, K] @ W [K, N]; FLOPs 2*M*N*K",
                  "torch_over_dsc": "torch median / dsc median; > 1: dsc faster",
                  "f32_over_dsc": "dsc f32 median / dsc 16-bit median; > 1: 16-bit faster",
                  "X_of_peak": "X's GFLOP/s / the dtype's peak on `threads` cores",
                  "dsc_gbytes_per_s": "the bytes of A, W and C at 2 bytes an element over dsc's "
                                      "time: the memory rate of a bandwidth-bound (decode) "
                                      "product; W stays in the caches when it fits",
              }}

    for dtype in ns.dtypes:
        print()
        print(f"{dtype}: peak {peak['gflops'][dtype]:.1f} GFLOP/s ({peak['source']})")
        print(bert_run.text_table(HEAD, table_rows(rows, dtype)))
        print("\n".join(summary_lines(result, dtype)))
    if notes:
        print()
        print("\n".join(f"- {n}" for n in notes))
    if ns.json:
        os.makedirs(os.path.dirname(os.path.abspath(ns.json)), exist_ok=True)
        with open(ns.json, "w") as f:
            json.dump(result, f, indent=2)
        print(f"wrote {ns.json}")
    if ns.md:
        os.makedirs(os.path.dirname(os.path.abspath(ns.md)), exist_ok=True)
        with open(ns.md, "w") as f:
            f.write(markdown(result))
        print(f"wrote {ns.md}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
