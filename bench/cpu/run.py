#!/usr/bin/env python3
"""BERT-base layer, CPU, fp32 (or bf16 or f16 with --dtype): dsc against PyTorch eager,
torch.compile and ONNX Runtime, side by side in one run, at one thread count.

For each (B, S) it runs

    DSC_NUM_THREADS=N dscc run examples/bert_layer.dsc --shape B=..,S=.. --random-weights --bench=R

and parses the median latency dscc prints, then times the same layer in this process, median of
R runs after a warm-up, in each peer (--peers, default all three whose packages import):

    eager    bert_torch.py's layer in PyTorch eager, torch.set_num_threads(N);
    compile  the same layer under torch.compile(dynamic=True), compiled once for all shapes
             (bert_compile.py: its compile time and recompiles are recorded);
    ort      the same layer exported to ONNX once with B and S dynamic, run by one ONNX Runtime
             session, CPUExecutionProvider, intra_op_num_threads=N, inter_op 1, all graph
             optimizations (bert_onnx.py: export and session-creation times recorded).

Before timing, a numeric check at one shape: dsc, torch.compile and ONNX Runtime each against
eager on the same inputs (bert_torch.compare, tests/e2e/check_examples.py's criterion); a
disagreement is reported and makes the exit status 1. It prints a table

    shape | dsc ms | eager ms | eager/dsc | compile ms | compile/dsc | ort ms | ort/dsc
          | GFLOP | floor ms | floor/dsc

where PEER/dsc > 1 means dsc is faster, GFLOP counts the layer's six matmuls
(sgemm_rate.bert_layer_flops), floor = GFLOP / the machine's measured fp32 GEMM rate (the best
square-sgemm rate of MKL via torch and of the OpenBLAS dsc links, see sgemm_rate.py), and
floor/dsc is the fraction of that sgemm-bound floor dsc reaches (1.0 = as fast as pure
GEMM at peak rate); then the same fraction for every peer, and the geometric mean of PEER/dsc
over the shapes for each peer. A peer that cannot run (its package missing, the export or the
compile failing) is a note under the table and leaves the exit status alone. With --out PATH it
also writes PATH.json (everything, raw) and PATH.md (the tables and the conditions).

--dtype bf16|f16 runs the layer in that dtype everywhere: dsc compiles examples/bert_layer.dsc
with every f32 replaced by the dtype (written to a temporary directory; dscc run synthesizes
its inputs in the dtype), the peers run bert_torch.py's layer with weights, x and mask in it
(ONNX Runtime: exported in it; its CPU execution provider has no bf16 MatMul, so in bf16 the
peer is skipped with that message). The numeric check passes the inputs rounded to the dtype
to `dscc run` (f16 as float16 .npy; bf16 as float32 .npy, which dscc run takes for a bf16
parameter, writing a bf16 result as float32) and compares with eager in the same dtype at the
dtype's tolerance (bert_torch.TOLERANCES: bf16 3e-2, f16 5e-3). The floor's rate is the best of the f32 rates and, for bf16, torch's bf16
GEMM (oneDNN) at the same square size.

    python3 bench/cpu/run.py --dscc build/tools/dscc/dscc --out /tmp/bert_cpu
    python3 bench/cpu/run.py --peers eager,ort     # leave torch.compile out
    python3 bench/cpu/run.py --skip-dsc            # the peers and the GEMM rate only
    python3 bench/cpu/run.py --dtype bf16 --out /tmp/bert_cpu_bf16

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

import bert_compile  # noqa: E402  (imports torch only when used)
import bert_onnx  # noqa: E402  (imports torch and onnxruntime only when used)
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
DTYPES = ("f32", "bf16", "f16")
# --max-seconds's default for a 16-bit dtype: torch's f16 matmul without f16 hardware takes
# seconds per call at the larger shapes. None (no limit) for f32, as before.
HALF_MAX_SECONDS = 60.0

# The peers dsc is compared with, in table order, and what each is called in the notes.
PEERS = ("eager", "compile", "ort")
PEER_TITLE = {"eager": "PyTorch eager", "compile": "torch.compile(dynamic=True)",
              "ort": "ONNX Runtime"}


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


def parse_peers(text: str) -> list[str]:
    """`eager,compile,ort` (any subset, in any order; `none` for no peer) -> table order."""
    names = {x.strip().lower() for x in text.split(",") if x.strip()}
    if names in ({"none"}, set()):
        return []
    unknown = names - set(PEERS)
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown peer(s) {', '.join(sorted(unknown))}: choose from {', '.join(PEERS)} or none")
    return [p for p in PEERS if p in names]


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


def file_mtime(path: str) -> str | None:
    """When a file (dscc) was last written: a checkout's revision does not say which of its
    builds the binary is."""
    try:
        return datetime.datetime.fromtimestamp(os.path.getmtime(path)).astimezone().isoformat(
            timespec="seconds")
    except OSError:
        return None


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
              variant: str, dtype: str = "f32") -> dict:
    """Same inputs to dscc and torch; compare outputs with check_examples.py's criterion (at
    the dtype's tolerance). In bf16 and f16 the inputs are rounded to the dtype first and
    passed as dscc run takes them: f16 as float16 .npy; bf16, which NumPy has no type for, as
    float32 .npy (dscc run rounds an f32 .npy given to a bf16 parameter to nearest even, here
    exact, and writes a bf16 result as float32)."""
    import numpy as np
    import bert_torch
    with tempfile.TemporaryDirectory(prefix="dsc-bench-check-") as d:
        p = bert_torch.round_params(bert_torch.random_params(B, S, seed=1), dtype)
        store = np.float16 if dtype == "f16" else np.float32
        bert_torch.save_params(d, {k: v.astype(store) for k, v in p.items()})
        cmd = [dscc, "run", target, *bert_torch.input_args(d), f"--output={d}/out"]
        rc, out, err = run_dscc(cmd, threads, cwd, timeout)
        r = {"B": B, "S": S, "rc": rc, "dtype": dtype, "tolerance": bert_torch.TOLERANCES[dtype]}
        path = os.path.join(d, "out", "output0.npy")
        if rc != 0 or not os.path.isfile(path):
            r["ok"] = False
            r["detail"] = f"exit {rc}: {first_error(out, err)}"
            return r
        ok, detail = bert_torch.compare(np.load(path, allow_pickle=False).astype(np.float32),
                                        bert_torch.forward_numpy(p, variant, dtype),
                                        bert_torch.TOLERANCES[dtype])
        r["ok"], r["detail"] = ok, detail
        return r


def convert_source(text: str, dtype: str) -> str:
    """examples/bert_layer.dsc with its tensor types in `dtype`: every `f32[` becomes
    `DTYPE[` (its parameters, result and comments; the layer names no other float type)."""
    out = re.sub(r"\bf32\[", dtype + "[", text)
    if re.search(r"\bf32\b", out):
        raise ValueError(f"{MODEL} names f32 other than as a tensor type: convert it by hand")
    return out


def write_converted(source: str, dtype: str, directory: str) -> str:
    """The layer in `dtype`, as DIRECTORY/bert_layer_DTYPE.dsc; its path."""
    with open(source) as f:
        text = convert_source(f.read(), dtype)
    path = os.path.join(directory, f"bert_layer_{dtype}.dsc")
    with open(path, "w") as f:
        f.write(text)
    return path


# ---------------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------------

def peer_unavailable(peer: str, exporter: str) -> str | None:
    """None when the peer can run here, else why not."""
    if peer == "eager":
        try:
            import torch  # noqa: F401
        except Exception as e:
            return f"torch does not import ({type(e).__name__}: {e})"
        return None
    if peer == "compile":
        return bert_compile.available()
    return bert_onnx.available(exporter)


def setup_peer(peer: str, info: dict, ns, params, ref) -> object | None:
    """Make the peer's callable (compile: the compiled layer, its first call at the check shape
    when there is a check; ort: export and session), check it against eager's `ref` on
    `params`, and return it; None (and info["error"]) when that fails."""
    try:
        if peer == "compile":
            obj = bert_compile.CompiledLayer(params, ns.variant, ns.compile_mode, ns.compile_cache,
                                             ns.dtype)
        else:
            obj = bert_onnx.OrtPeer(params, ns.threads, ns.variant, ns.onnx_exporter, ns.opset,
                                    ns.onnx, ns.dtype)
    except Exception as e:
        if peer == "ort" and ns.dtype != "f32" and bert_onnx.unsupported(e):
            # Not a failure of the benchmark: ONNX Runtime's CPU EP has no kernel in this dtype.
            info["status"] = "skipped"
            info["note"] = (f"ONNX Runtime {bert_onnx.version('onnxruntime')}'s CPU execution "
                            f"provider cannot run the layer in {ns.dtype} (the export worked, the "
                            f"session did not: {bert_compile.short_error(e, 300)})")
            return None
        info["status"], info["error"] = "failed", "setup: " + bert_compile.short_error(e)
        return None
    if ref is not None:
        import bert_torch
        try:
            out = obj.forward_numpy(params)  # compile: the first call, so the compile
        except Exception as e:
            info["status"], info["error"] = "failed", "check call: " + bert_compile.short_error(e)
            info["setup"] = peer_summary(obj)
            close_peer(obj)
            return None
        ok, detail = bert_torch.compare(out, ref, bert_torch.TOLERANCES[ns.dtype])
        B, S = params["x"].shape[:2]
        info["check"] = {"B": int(B), "S": int(S), "ok": ok, "detail": detail,
                         "against": f"torch eager, {ns.variant} formulation, {ns.dtype}"}
    return obj


def peer_summary(obj) -> dict:
    try:
        return obj.summary()
    except Exception as e:  # informative only
        return {"error": bert_compile.short_error(e)}


def close_peer(obj) -> None:
    close = getattr(obj, "close", None)
    if close:
        close()


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------

def clip(text: str, limit: int = 400) -> str:
    """Its head and tail when it is long (a compiler's complaint comes at the end)."""
    if len(text) <= limit:
        return text
    return text[:limit // 2 - 3] + " ... " + text[-(limit // 2 - 2):]


def check_status(check: dict) -> str:
    if check.get("ok"):
        return "agree"
    return "DISAGREE" if check.get("rc") == 0 else "dscc failed"


def fmt(x, spec: str, missing: str = "n/a") -> str:
    return format(x, spec) if isinstance(x, (int, float)) else missing


def header(peers: list[str]) -> list[str]:
    h = ["shape", "dsc ms"]
    for p in peers:
        h += [f"{p} ms", f"{p}/dsc"]
    return h + ["GFLOP", "floor ms", "floor/dsc"]


def table_rows(rows: list[dict], peers: list[str]) -> list[list[str]]:
    out = []
    for r in rows:
        cells = [f"B={r['B']} S={r['S']}", fmt(r.get("dsc_ms"), ".3f")]
        for p in peers:
            cells += [fmt(r.get(f"{p}_ms"), ".3f"), fmt(r.get(f"{p}_over_dsc"), ".2f")]
        cells += [fmt(r["gflop"], ".3f"), fmt(r.get("floor_ms"), ".3f"),
                  fmt(r.get("floor_over_dsc"), ".2f")]
        out.append(cells)
    return out


def floor_header(peers: list[str]) -> list[str]:
    return ["shape", "floor/dsc", *(f"floor/{p}" for p in peers)]


def floor_rows(rows: list[dict], peers: list[str]) -> list[list[str]]:
    return [[f"B={r['B']} S={r['S']}", fmt(r.get("floor_over_dsc"), ".2f"),
             *(fmt(r.get(f"floor_over_{p}"), ".2f") for p in peers)] for r in rows]


def text_table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.rjust(w) if i else c.ljust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(head), line(["-" * w for w in widths]), *map(line, rows)])


def md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |",
            "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|",
            *("| " + " | ".join(r) + " |" for r in rows)]


def geomean_line(result: dict) -> str:
    g = result["geomean_over_dsc"]
    if not g:
        return "geomean PEER/dsc: no peer"
    return "geomean PEER/dsc: " + ", ".join(f"{p} {fmt(g.get(p), '.3f')}" for p in g)


def notes(result: dict) -> list[str]:
    """The lines under the table: checks, peers not run or failed, compile and export costs."""
    out = []
    ch = result.get("check")
    if ch:
        out.append(f"numeric check at B={ch['B']} S={ch['S']}, dsc vs eager (same inputs): "
                   f"{check_status(ch)}: {ch.get('detail')}")
    for p, info in result["peers"].items():
        title = f"{p} ({info['title']})"
        if info.get("check"):
            c = info["check"]
            out.append(f"numeric check at B={c['B']} S={c['S']}, {p} vs eager (same inputs): "
                       f"{'agree' if c['ok'] else 'DISAGREE'}: {c['detail']}")
        if info["status"] == "unavailable":
            out.append(f"{title}: not run: {info['note']}")
        elif info["status"] == "skipped":
            out.append(f"{title}: skipped: {info['note']}")
        elif info["status"] == "failed":
            out.append(f"{title}: FAILED, not timed: {clip(info['error'])}")
        errs = [f"B={r['B']} S={r['S']}" for r in result["rows"] if r.get(f"{p}_error")]
        if errs:
            first = next(r[f"{p}_error"] for r in result["rows"] if r.get(f"{p}_error"))
            out.append(f"{title}: failed at {', '.join(errs)}: {clip(first)}")
        capped = [f"B={r['B']} S={r['S']} ({r['peers'][p]['runs']} runs)" for r in result["rows"]
                  if r["peers"].get(p, {}).get("capped")]
        if capped:
            out.append(f"{title}: fewer runs than asked (--max-seconds "
                       f"{result['conditions']['max_seconds']:g}) at {', '.join(capped)}")
        setup = info.get("setup") or {}
        if p == "compile" and setup.get("compile_s") is not None:
            firsts = ", ".join(f"B={f['B']} S={f['S']} {f['seconds']:.2f} s"
                               f"{' (recompile)' if f['recompile'] else ''}"
                               f"{' (compile)' if f['new_graph'] and not f['recompile'] else ''}"
                               for f in setup.get("first_calls", []))
            out.append(f"torch.compile: compile time (first call) {setup['compile_s']:.2f} s at "
                       f"B={setup['compile_shape'][0]} S={setup['compile_shape'][1]}; graphs "
                       f"{setup['graphs']}, recompiles {setup['recompiles']}; Inductor cache: "
                       f"{setup['cache']}; first call at each shape: {firsts}")
        if p == "ort" and setup.get("export"):
            e = setup["export"]
            out.append(f"ONNX Runtime {setup.get('onnxruntime')}: export ({e['exporter']}, opset "
                       f"{e['opset']}, traced at B={e['traced_at'][0]} S={e['traced_at'][1]}) "
                       f"{e['seconds']:.2f} s, {e['bytes'] / 1e6:.1f} MB; session creation "
                       f"{setup.get('session_s', float('nan')):.2f} s")
    compiles = [f"B={r['B']} S={r['S']} {r['dsc']['compile_s']:.2f} s" for r in result["rows"]
                if r.get("dsc", {}).get("compile_s") is not None]
    if compiles:
        out.append("dscc compile time (its own progress line): " + ", ".join(compiles))
    if result.get("build") and not result["build"].get("error"):
        out.append(f"dscc build (--via-build): {result['build']['seconds']:.2f} s")
    out += [f"dscc error at B={r['B']} S={r['S']}: {r['dsc_error']}" for r in result["rows"]
            if r.get("dsc_error")]
    return out


def markdown(result: dict) -> str:
    peers = result["conditions"]["peers"]
    rows = result["rows"]
    c = result["conditions"]
    titles = ", ".join(PEER_TITLE[p] for p in peers) or "no peer"
    dtype = c.get("dtype", "f32")
    md = [f"# BERT-base layer, {'fp32' if dtype == 'f32' else dtype}, CPU: dsc vs {titles}", ""]
    versions = ", ".join(f"{k} {v}" for k, v in c["versions"].items() if v)
    md += [
        f"- date: {c['date']}, dsc revision {c['git']}"
        + (f" (dscc built in a checkout at {c['dscc_git']})"
           if c.get("dscc_git") and c["dscc_git"] != c["git"] else ""),
        f"- machine: {c['cpu']}, {c['cpus']} CPUs; load average before/after: "
        f"{c['loadavg_before']} / {c['loadavg_after']}",
        f"- threads: {c['threads']} for all (DSC_NUM_THREADS for dscc, torch.set_num_threads for "
        f"eager and torch.compile, intra_op_num_threads for ONNX Runtime, inter-op 1)",
        f"- {versions}; the {c['torch_variant']} formulation of the layer (bert_torch.py) for "
        f"every peer",
        f"- dtype: {dtype} for dsc and every peer"
        + ("" if dtype == "f32" else f" (dsc: {c.get('dsc_source')})"),
        f"- peers: median of {c['runs']} runs after {c['torch_warmup']} warm-up (torch.compile "
        f"and ONNX Runtime: after each shape's first call, timed apart); dscc "
        f"`--bench={c['runs']}` (median, after 1 warm-up)",
        f"- GEMM rate used for the floor: {fmt(result['sgemm'].get('rate_used'), '.1f')} GFLOP/s "
        f"({result['sgemm'].get('rate_used_from')})",
        *(f"- {lib.get('name')}: {lib.get('version')}"
          for lib in result["sgemm"].get("libraries", {}).values() if lib.get("name")),
        f"- OPENBLAS_CORETYPE: {c['openblas_coretype']}",
        f"- OpenBLAS core: {c.get('openblas_core', '?')}",
        "- PEER/dsc > 1 means dsc is faster. floor = GFLOP / rate; floor/X = the fraction of "
        "the sgemm-bound floor X reaches.",
        "",
        *md_table(header(peers), table_rows(rows, peers)),
        "",
        geomean_line(result),
    ]
    if any(r.get("floor_ms") for r in rows) and peers:
        md += ["", *md_table(floor_header(peers), floor_rows(rows, peers))]
    n = notes(result)
    if n:
        md += ["", "Notes:", "", *(f"- {line}" for line in n)]
    return "\n".join(md) + "\n"


# ---------------------------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description="BERT layer CPU (fp32, or --dtype bf16|f16): dsc vs PyTorch eager, "
                    "torch.compile and ONNX Runtime.")
    ap.add_argument("--dscc", default=os.environ.get("DSCC", os.path.join(ROOT, "build/tools/dscc/dscc")),
                    help="the dscc binary (default: $DSCC, else build/tools/dscc/dscc)")
    ap.add_argument("--source-dir", default=ROOT, help="the dsc source tree (default: this checkout)")
    ap.add_argument("--shapes", type=parse_shapes, default=parse_shapes(DEFAULT_SHAPES),
                    help=f"comma-separated BxS (default {DEFAULT_SHAPES})")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="threads for dsc and every peer alike (default: os.cpu_count())")
    ap.add_argument("--dtype", choices=DTYPES, default="f32",
                    help="the dtype of the layer for dsc and every peer: f32 (default), bf16 or "
                         "f16 (dsc: examples/bert_layer.dsc with f32 replaced, in a temporary "
                         "directory)")
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="per peer and shape, stop timing once the timed calls took this long "
                         "(at least 3 runs; the runs made are recorded). Default: no limit for "
                         f"f32, {HALF_MAX_SECONDS:g} s for bf16 and f16 (torch's f16 matmul is "
                         "slow on CPUs without f16 arithmetic)")
    ap.add_argument("--runs", type=int, default=50,
                    help="timed runs per shape: dscc --bench=RUNS and each peer's median "
                         "(default 50)")
    ap.add_argument("--warmup", type=int, default=5,
                    help="each peer's warm-up calls per shape before timing (default 5)")
    ap.add_argument("--peers", type=parse_peers, default=None,
                    help="comma-separated peers to time against dsc: eager, compile, ort, or none "
                         "(default: all three whose packages import; the others get a note)")
    ap.add_argument("--variant", default="eager", choices=("eager", "literal", "sdpa"),
                    help="the PyTorch formulation (bert_torch.py) that every peer runs, compiles "
                         "or exports (default eager)")
    ap.add_argument("--compile-mode", metavar="MODE", default=None,
                    help="torch.compile's mode (default: torch's default)")
    ap.add_argument("--compile-cache", metavar="DIR", default=None,
                    help="Inductor's cache directory (default: a fresh temporary one, so the "
                         "compile time is a cold compile's)")
    ap.add_argument("--onnx", metavar="PATH", default=None,
                    help="export the ONNX model to PATH and keep it (default: a temporary "
                         "directory, removed afterwards)")
    ap.add_argument("--onnx-exporter", choices=bert_onnx.EXPORTERS, default="torchscript",
                    help="torch.onnx.export's TorchScript tracer (default) or dynamo "
                         "(torch.export; needs onnxscript)")
    ap.add_argument("--opset", type=int, default=None,
                    help="ONNX opset (default 17 with torchscript, 18 with dynamo)")
    ap.add_argument("--square", default="2048",
                    help="N of the N^3 sgemm products that set the rate (default 2048)")
    ap.add_argument("--rate", type=float, default=None,
                    help="use this GEMM rate (GFLOP/s) instead of measuring it")
    ap.add_argument("--gemm-detail", action="store_true",
                    help="also time each shape's six GEMMs alone with both BLAS libraries")
    ap.add_argument("--via-build", action="store_true",
                    help="`dscc build` once to a .so and bench that, instead of `dscc run FILE.dsc`")
    ap.add_argument("--no-check", action="store_true",
                    help="skip the numeric checks (dsc, torch.compile and ORT against eager)")
    ap.add_argument("--check-shape", type=parse_shapes, default=parse_shapes("2x7"),
                    help="the shape of the numeric check, and of the ONNX export's trace "
                         "(default 2x7)")
    ap.add_argument("--skip-dsc", action="store_true", help="the peers and the GEMM rate only")
    ap.add_argument("--skip-torch", action="store_true",
                    help="no peer and no torch at all (--peers none, and no MKL rate): dsc and "
                         "the OpenBLAS rate only")
    ap.add_argument("--openblas-coretype", metavar="NAME",
                    help="set OPENBLAS_CORETYPE=NAME for dscc and the OpenBLAS rate measurement "
                         "(e.g. SkylakeX; default: the environment's, else OpenBLAS's own pick)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per dscc command")
    ap.add_argument("--out", help="write OUT.json and OUT.md (an .json/.md suffix is dropped)")
    ns = ap.parse_args(argv)
    if ns.max_seconds is None and ns.dtype != "f32":
        ns.max_seconds = HALF_MAX_SECONDS

    threads = ns.threads
    if ns.openblas_coretype:
        # Read by OpenBLAS when it is loaded: before sgemm_rate loads it, and inherited by dscc.
        os.environ["OPENBLAS_CORETYPE"] = ns.openblas_coretype
    # Where OpenBLAS does not know this CPU, OPENBLAS_CORETYPE is set here (same timing).
    openblas_core = openblas_core_module.choose_coretype()
    print(f"OpenBLAS core: {openblas_core}", file=sys.stderr)

    # Which peers: the asked-for ones (a column each, n/a where they cannot run), or by default
    # every one that can run here (the others only get a note).
    asked = [] if ns.skip_torch else (ns.peers if ns.peers is not None else list(PEERS))
    peer_info = {}
    for p in asked:
        why = peer_unavailable(p, ns.onnx_exporter)
        peer_info[p] = {"title": PEER_TITLE[p], "status": "unavailable" if why else "ok",
                        "note": why, "error": None, "check": None, "setup": None}
    columns = [p for p in asked if ns.peers is not None or peer_info[p]["status"] == "ok"]
    torch_ok = not ns.skip_torch and peer_unavailable("eager", ns.onnx_exporter) is None
    if torch_ok:
        import torch
        import bert_torch
        torch.set_num_threads(threads)

    conditions = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "git": git_revision(ns.source_dir),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "python": sys.executable + " " + platform.python_version(),
        "torch": bert_onnx.version("torch") if torch_ok else None,
        "versions": {
            "torch": bert_onnx.version("torch") if torch_ok else None,
            "onnxruntime": bert_onnx.version("onnxruntime") if "ort" in asked else None,
            "onnx": bert_onnx.version("onnx") if "ort" in asked else None,
            "onnxscript": (bert_onnx.version("onnxscript")
                           if "ort" in asked and ns.onnx_exporter == "dynamo" else None),
        },
        "peers": columns,
        "peers_asked": asked,
        "torch_variant": ns.variant,
        "dtype": ns.dtype,
        "dsc_source": MODEL if ns.dtype == "f32" else f"{MODEL} with f32 replaced by {ns.dtype}",
        "max_seconds": ns.max_seconds,
        "threads": threads,
        "runs": ns.runs,
        "torch_warmup": ns.warmup,
        "dscc": None if ns.skip_dsc else os.path.abspath(ns.dscc),
        # The revision of the checkout dscc was built in (which may not be --source-dir's).
        "dscc_git": None if ns.skip_dsc else git_revision(os.path.dirname(os.path.abspath(ns.dscc))),
        "dscc_mtime": None if ns.skip_dsc else file_mtime(ns.dscc),
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "(unset: OpenBLAS picks)"),
        "openblas_core": openblas_core,
        "loadavg_before": loadavg(),
    }
    la = conditions["loadavg_before"]
    if la and la[0] > 0.5 * (os.cpu_count() or 1):
        print(f"warning: load average {la[0]:.2f} on {os.cpu_count()} CPUs: other work is running "
              f"and the timings will be noisy", file=sys.stderr)
    for p, info in peer_info.items():
        if info["status"] != "ok":
            print(f"{p}: not run: {info['note']}", file=sys.stderr)

    # 1. The machine's GEMM rate.
    if ns.rate is not None:
        sg = {"rate_used": ns.rate, "rate_used_from": "--rate", "libraries": {}}
    else:
        square = [int(x) for x in ns.square.split(",") if x]
        libs = ["openblas"] + (["torch"] if torch_ok else [])
        if torch_ok and ns.dtype == "bf16":
            libs.append("torch:bf16")  # oneDNN's bf16 GEMM: the floor is the best of all
        sg = sgemm_rate.measure_rates(threads, square, ns.shapes if ns.gemm_detail else [],
                                      libs=libs, log=lambda s: print("sgemm: " + s, flush=True))
    rate = sg.get("rate_used")
    if rate:
        print(f"GEMM rate used for the floor: {rate:.1f} GFLOP/s ({sg.get('rate_used_from')})")

    # 2. dsc: the target (.dsc, or one .so), then the numeric check.
    dscc = os.path.abspath(ns.dscc)
    source = os.path.join(ns.source_dir, MODEL)
    target, build, check, tmp = source, None, None, None
    if not ns.skip_dsc:
        if not (os.path.isfile(dscc) and os.access(dscc, os.X_OK)):
            print(f"run.py: error: --dscc {ns.dscc} is not an executable (--skip-dsc to bench "
                  f"the peers only)", file=sys.stderr)
            return 2
        if ns.via_build or ns.dtype != "f32":
            tmp = tempfile.mkdtemp(prefix="dsc-bench-")
        if ns.dtype != "f32":
            source = target = write_converted(source, ns.dtype, tmp)
            print(f"dsc: the layer in {ns.dtype}: {source}")
        if ns.via_build:
            target = os.path.join(tmp, "bert_layer.so")
            build = dsc_build(dscc, source, target, threads, ns.source_dir, ns.timeout)
            print(f"dscc build: {build.get('error') or 'ok, %.2f s' % build['seconds']}")
        if not ns.no_check and torch_ok and not (build and build.get("error")):
            B, S = ns.check_shape[0]
            check = dsc_check(dscc, target, B, S, threads, ns.source_dir, ns.timeout,
                              ns.variant, ns.dtype)
            print(f"numeric check B={B} S={S}: {check_status(check)}: {check['detail']}", flush=True)

    # 3. The peers that need it: torch.compile's layer (compiled at its first call, the check
    # when there is one) and ONNX Runtime's session (export first), each checked against eager.
    peer_obj = {}
    if torch_ok:
        cB, cS = ns.check_shape[0]
        # dsc_check's inputs (rounded to the dtype, as dsc_check's are)
        cparams = bert_torch.round_params(bert_torch.random_params(cB, cS, seed=1), ns.dtype)
        ref = None if ns.no_check else bert_torch.forward_numpy(cparams, ns.variant, ns.dtype)
        for p in columns:
            info = peer_info[p]
            if p == "eager" or info["status"] != "ok":
                continue
            where = " (compiles at the check shape)" if p == "compile" and ref is not None else ""
            print(f"{p}: setting up {PEER_TITLE[p]}{where}...", flush=True)
            obj = setup_peer(p, info, ns, cparams, ref)
            if obj is None:
                if info["status"] == "skipped":
                    print(f"{p}: skipped: {info['note']}", file=sys.stderr, flush=True)
                else:
                    print(f"{p}: FAILED: {clip(info['error'])}", file=sys.stderr, flush=True)
                continue
            peer_obj[p] = obj
            if info["check"]:
                c = info["check"]
                print(f"numeric check B={c['B']} S={c['S']}, {p} vs eager: "
                      f"{'agree' if c['ok'] else 'DISAGREE'}: {c['detail']}", flush=True)

    # 4. Each shape: dsc, then each peer.
    rows = []
    for B, S in ns.shapes:
        flops = sgemm_rate.bert_layer_flops(B, S)
        row = {"B": B, "S": S, "flops": flops, "gflop": flops / 1e9, "peers": {}}
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
        for p in columns:
            if peer_info[p]["status"] != "ok":
                continue
            try:
                if p == "eager":
                    t = bert_torch.bench_shape(B, S, threads, ns.runs, ns.warmup, ns.variant,
                                               dtype=ns.dtype, max_seconds=ns.max_seconds)
                elif p == "compile":
                    t = peer_obj[p].bench(B, S, threads, ns.runs, ns.warmup,
                                          max_seconds=ns.max_seconds)
                else:
                    t = peer_obj[p].bench(B, S, ns.runs, ns.warmup, max_seconds=ns.max_seconds)
            except Exception as e:  # a recompile that fails, an ORT error at this shape, ...
                row["peers"][p] = {"error": bert_compile.short_error(e)}
                row[f"{p}_error"] = clip(row["peers"][p]["error"])
                continue
            row["peers"][p] = t
            row[f"{p}_ms"] = t["median_ms"]
            if row.get("dsc_ms"):
                row[f"{p}_over_dsc"] = t["median_ms"] / row["dsc_ms"]
            if row.get("floor_ms"):
                row[f"floor_over_{p}"] = row["floor_ms"] / t["median_ms"]
        if row.get("floor_ms") and row.get("dsc_ms"):
            row["floor_over_dsc"] = row["floor_ms"] / row["dsc_ms"]
        rows.append(row)
        status = f"  dscc: {row['dsc_error']}" if row.get("dsc_error") else ""
        times = "".join(f", {p} {fmt(row.get(f'{p}_ms'), '.3f')} ms" for p in columns)
        print(f"B={B} S={S}: dsc {fmt(row.get('dsc_ms'), '.3f')} ms{times}{status}", flush=True)

    for p, obj in peer_obj.items():
        peer_info[p]["setup"] = peer_summary(obj)
        close_peer(obj)
    conditions["loadavg_after"] = loadavg()
    result = {
        "conditions": conditions,
        "sgemm": sg,
        "build": build,
        "check": check,
        "peers": peer_info,
        "rows": rows,
        "geomean_over_dsc": {p: geomean([r.get(f"{p}_over_dsc") for r in rows]) for p in columns},
        "conventions": {
            "PEER_over_dsc": "PEER median / dsc median; > 1 means dsc is faster",
            "peers": {p: PEER_TITLE[p] for p in PEERS},
            "flops": "2*m*n*k over the layer's six matmuls (4 projections/FFN + 2 attention "
                     "batched matmuls); elementwise work not counted",
            "floor_ms": "flops / rate_used: the time of the GEMM work alone at the best "
                        "measured square-sgemm rate",
            "floor_over_X": "floor_ms / X's median: the fraction of the sgemm-bound floor",
        },
    }

    print()
    print(text_table(header(columns), table_rows(rows, columns)))
    print(f"{geomean_line(result)}   (PEER/dsc > 1: dsc faster; floor = GFLOP / "
          f"{fmt(rate, '.1f')} GFLOP/s)")
    if rate and columns:
        print()
        print(text_table(floor_header(columns), floor_rows(rows, columns)))
    n = notes(result)
    if n:
        print()
        print("\n".join(f"- {line}" for line in n))

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

    dsc_failed = not ns.skip_dsc and (any(r.get("dsc_error") for r in rows) or
                                      (check is not None and not check.get("ok")))
    disagree = [p for p, info in peer_info.items() if info["check"] and not info["check"]["ok"]]
    if disagree:
        print(f"run.py: {', '.join(disagree)} disagree(s) with eager at the check shape",
              file=sys.stderr)
    return 1 if dsc_failed or disagree else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
