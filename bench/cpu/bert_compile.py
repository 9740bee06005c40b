#!/usr/bin/env python3
"""bert_torch.py's BERT layer under torch.compile(dynamic=True) (Inductor, CPU; fp32, or bf16 or
f16 with --dtype): a peer of bench/cpu/run.py.

One compiled function serves every shape, as dsc's one compiled layer does: the layer
(bert_torch.BertLayer, the --variant formulation, weights fixed) is wrapped once by

    torch.compile(layer, dynamic=True)          # backend "inductor", mode --mode

and then called at each (B, S) under torch.inference_mode(). What is recorded:
  - compile time: the wall time of the first call, which traces the layer (Dynamo), lowers and
    generates C++ (Inductor), compiles it with the system C++ compiler and runs it once. It is
    cold: Inductor's on-disk caches go to a fresh temporary directory (TORCHINDUCTOR_CACHE_DIR)
    unless --compile-cache DIR names one to reuse (a second run with the same DIR is warm);
  - at each shape, the first call's wall time and whether it compiled a new graph (a
    recompile). With dynamic=True Dynamo still specializes a size of 1, so B=1 and B>1 get
    separate graphs: expect one recompile over the benchmark's five shapes;
  - the number of graphs compiled (torch._dynamo.utils.counters["stats"]["unique_graphs"]),
    recompiles = graphs - 1, and Inductor's FX-graph cache hits and misses;
  - the timing itself: bert_torch.time_layer, the same loop as eager (W warm-up calls after
    the first call, then the median of R calls timed one by one).
Inductor's CPU backend needs a C++ compiler ($CXX, else g++ on PATH: Inductor's own search);
available() says why the peer cannot run where it cannot.

Standalone (checks the compiled layer against eager at the check shape, then times it):
    python3 bench/cpu/bert_compile.py --threads 2 --runs 20
    python3 bench/cpu/bert_compile.py --shapes 1x32,2x17 --runs 3 --threads 1
    python3 bench/cpu/bert_compile.py --dtype bf16 --threads 2 --runs 20
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time

from temp_dir import TempDirOwner

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

DEFAULT_SHAPES = "1x32,1x128,4x64,8x128,1x384"


def cxx_compiler() -> str | None:
    """The C++ compiler Inductor will use: its own search (torch._inductor.cpp_builder: $CXX,
    else g++, run with --version), else the same rule by hand; None when there is none."""
    try:
        from torch._inductor.cpp_builder import get_cpp_compiler
        return get_cpp_compiler()
    except Exception:  # InvalidCxxCompiler, or a torch whose internals moved
        pass
    return shutil.which(os.environ.get("CXX", "g++"))


def cxx_version(cxx: str | None) -> str | None:
    if not cxx:
        return None
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=10).stdout
        return out.splitlines()[0].strip() if out else None
    except (OSError, subprocess.SubprocessError):
        return None


def available() -> str | None:
    """None when torch.compile can run here, else why not (a note for the table)."""
    try:
        import torch  # noqa: F401
    except Exception as e:  # ImportError, or a wheel whose shared libraries are missing
        return f"torch does not import ({type(e).__name__}: {e})"
    if not cxx_compiler():
        return ("no C++ compiler ($CXX, else g++, as Inductor looks for it): Inductor's CPU "
                "backend compiles C++")
    return None


def short_error(e: BaseException, limit: int = 2000) -> str:
    """`Type: message`, whitespace collapsed; past `limit` characters its head and tail (a
    C++ compiler's complaint comes at the end of Inductor's message)."""
    text = f"{type(e).__name__}: {' '.join(str(e).split())}"
    text = text.split(" Set TORCHDYNAMO_VERBOSE=1")[0]  # Dynamo's boilerplate advice
    return text if len(text) <= limit else text[:limit // 2] + " ... " + text[-(limit // 2):]


class CompiledLayer(TempDirOwner):
    """torch.compile(BertLayer(params, variant), dynamic=True), with its compile bookkeeping.

    The constructor compiles nothing (torch.compile is lazy); the first call does. Close it
    (or use it as a context manager) to remove a temporary cache directory."""

    def __init__(self, params, variant: str = "eager", mode: str | None = None,
                 cache_dir: str | None = None, dtype: str = "f32"):
        import torch
        import torch._dynamo.utils
        import bert_torch
        self.torch = torch
        self._counters = torch._dynamo.utils.counters
        if cache_dir is None:
            cache_dir = self.make_temp_dir("dsc-bench-inductor-")
        # Read by Inductor when it first needs its cache directory, i.e. at the first compile.
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.abspath(cache_dir)
        self.cache_dir = os.path.abspath(cache_dir)
        self.variant = variant
        self.mode = mode
        self.dtype = dtype
        try:
            self.layer = bert_torch.BertLayer(params, variant, dtype)
            self.fn = torch.compile(self.layer, dynamic=True, mode=mode)
        except BaseException:
            self.close()
            raise
        self._base = self._snapshot()
        self.compile_s = None       # the first call's wall time
        self.compile_shape = None   # (B, S) of that call
        self.first_calls = []       # one per first call: B, S, seconds, new_graph, recompile

    def _snapshot(self) -> dict[str, dict[str, int]]:
        return {k: dict(v) for k, v in self._counters.items()}

    def counters(self) -> dict[str, dict[str, int]]:
        """Dynamo/Inductor counters since this layer was made (differences; zeros dropped)."""
        now, out = self._snapshot(), {}
        for group, values in now.items():
            base = self._base.get(group, {})
            d = {k: v - base.get(k, 0) for k, v in values.items() if v - base.get(k, 0)}
            if d:
                out[group] = d
        return out

    def graphs(self) -> int:
        return self.counters().get("stats", {}).get("unique_graphs", 0)

    def first_call(self, x, mask) -> tuple[object, dict]:
        """Call once, timed: the (re)compile at this shape, if any, plus one run."""
        before = self.graphs()
        with self.torch.inference_mode():
            t0 = time.perf_counter()
            y = self.fn(x, mask)
            seconds = time.perf_counter() - t0
        B, S = int(x.shape[0]), int(x.shape[1])
        graphs = self.graphs()
        # new_graph: this call compiled a graph; recompile: one more than the first.
        rec = {"B": B, "S": S, "seconds": seconds, "new_graph": graphs > before,
               "recompile": graphs > before > 0, "graphs": graphs}
        if self.compile_s is None:
            self.compile_s, self.compile_shape = seconds, (B, S)
        self.first_calls.append(rec)
        return y, rec

    def __call__(self, x, mask):
        with self.torch.inference_mode():
            return self.fn(x, mask)

    def forward_numpy(self, params):
        """The compiled layer's output on params["x"], params["mask"] (its own weights), as
        float32."""
        y, _ = self.first_call(*self.layer.inputs(params))
        return y.float().numpy()

    def bench(self, B: int, S: int, threads: int, runs: int, warmup: int, seed: int = 0,
              max_seconds: float | None = None) -> dict:
        """First call at (B, S) (timed apart), then bert_torch.time_layer: the eager loop."""
        import bert_torch
        torch = self.torch
        torch.set_num_threads(threads)
        p = bert_torch.random_params(B, S, seed)
        x, mask = self.layer.inputs(p)
        _, first = self.first_call(x, mask)
        r = bert_torch.time_layer(self.fn, x, mask, runs, warmup, max_seconds)
        r.update({"B": B, "S": S, "threads": torch.get_num_threads(), "variant": self.variant,
                  "dtype": self.dtype,
                  "first_call_s": first["seconds"], "new_graph": first["new_graph"],
                  "recompiled": first["recompile"], "graphs_so_far": first["graphs"]})
        return r

    def summary(self) -> dict:
        graphs = self.graphs()
        c = self.counters()
        return {
            "torch": self.torch.__version__,
            "call": f"torch.compile(layer, dynamic=True, mode={self.mode!r})",
            "backend": "inductor",
            "mode": self.mode,
            "variant": self.variant,
            "dtype": self.dtype,
            "cxx": cxx_compiler(),
            "cxx_version": cxx_version(cxx_compiler()),
            "cache_dir": self.cache_dir,
            "cache": "a fresh temporary directory (cold)" if self._tmp else
                     f"{self.cache_dir} (--compile-cache: warm when reused)",
            "compile_s": self.compile_s,
            "compile_shape": list(self.compile_shape) if self.compile_shape else None,
            "graphs": graphs,
            "recompiles": max(graphs - 1, 0) if graphs else None,
            "first_calls": self.first_calls,
            "fxgraph_cache_hit": c.get("inductor", {}).get("fxgraph_cache_hit", 0),
            "fxgraph_cache_miss": c.get("inductor", {}).get("fxgraph_cache_miss", 0),
            "counters": c,
        }



def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description="BERT-base layer under torch.compile(dynamic=True), CPU (fp32, or --dtype "
                    "bf16|f16).")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES,
                    help="comma-separated BxS (default: the benchmark's five)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="torch.set_num_threads (default: os.cpu_count())")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per shape (median)")
    ap.add_argument("--warmup", type=int, default=3,
                    help="warm-up calls per shape after its first call (default 3)")
    ap.add_argument("--variant", choices=("eager", "literal", "sdpa"), default="eager",
                    help="the bert_torch.py formulation that is compiled (default eager)")
    ap.add_argument("--dtype", choices=("f32", "bf16", "f16"), default="f32",
                    help="the dtype the layer computes in (default f32)")
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="per shape, stop timing once the timed calls took this long (at least "
                         "3 runs; default: no limit)")
    ap.add_argument("--mode", default=None,
                    help="torch.compile mode (default: torch's default; e.g. "
                         "max-autotune-no-cudagraphs)")
    ap.add_argument("--compile-cache", metavar="DIR",
                    help="Inductor's cache directory (default: a fresh temporary one, so the "
                         "compile is cold); reuse a DIR to measure a warm compile")
    ap.add_argument("--check-shape", default="2x7",
                    help="BxS of the check against eager; its call is the first, so the compile "
                         "happens there (default 2x7)")
    ap.add_argument("--no-check", action="store_true", help="skip the check against eager")
    ap.add_argument("--seed", type=int, default=0)
    ns = ap.parse_args(argv)

    why = available()
    if why:
        print(f"bert_compile.py: torch.compile cannot run here: {why}", file=sys.stderr)
        return 2
    import torch
    import bert_torch
    torch.set_num_threads(ns.threads)
    cB, cS = bert_torch.parse_shapes(ns.check_shape)[0]
    params = bert_torch.random_params(cB, cS, seed=1)
    status = 0
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"torch.compile(dynamic=True, mode={ns.mode!r}) of the {ns.variant} layer in "
          f"{ns.dtype}, "
          f"C++ compiler {cxx_compiler()}, median of {ns.runs} runs after {ns.warmup} warm-up",
          flush=True)
    with CompiledLayer(params, ns.variant, ns.mode, ns.compile_cache, ns.dtype) as cl:
        try:
            if not ns.no_check:
                ok, detail = bert_torch.compare(
                    cl.forward_numpy(params), bert_torch.forward_numpy(params, ns.variant, ns.dtype),
                    bert_torch.TOLERANCES[ns.dtype])
                print(f"check B={cB} S={cS} vs eager: {'agree' if ok else 'DISAGREE'}: {detail}")
                status = 0 if ok else 1
            for B, S in bert_torch.parse_shapes(ns.shapes):
                r = cl.bench(B, S, ns.threads, ns.runs, ns.warmup, ns.seed, ns.max_seconds)
                print(f"B={B:<3d} S={S:<4d} {r['median_ms']:9.3f} ms  (min {r['min_ms']:.3f}); "
                      f"first call {r['first_call_s']:.2f} s"
                      f"{' (recompiled)' if r['recompiled'] else ''}"
                      f"{' (compiled)' if r['new_graph'] and not r['recompiled'] else ''}",
                      flush=True)
        except Exception as e:  # Dynamo/Inductor errors, a failing C++ compile, ...
            print(f"torch.compile failed: {short_error(e)}", file=sys.stderr)
            return 1
        s = cl.summary()
        print(f"compile (first call): {s['compile_s']:.2f} s at B={s['compile_shape'][0]} "
              f"S={s['compile_shape'][1]}; graphs {s['graphs']}, recompiles {s['recompiles']}; "
              f"FX graph cache hit {s['fxgraph_cache_hit']}, miss {s['fxgraph_cache_miss']}; "
              f"Inductor cache: {s['cache']}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
