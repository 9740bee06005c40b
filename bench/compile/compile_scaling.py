#!/usr/bin/env python3
"""How `dscc build` time and memory grow with a model's size (issue 40).

Four families of generated .dsc files, each at a size n:
  chain   n statements `y{i+1} = y{i} * 1.0001 + 0.5` (2n elementwise ops, one fused chain)
  fan     x read by n multiplies, summed one by one (a wide fan-out and a chain)
  funcs   n small fns, each called once in a chain by main
  deep    a call tree n deep: g{i} calls g{i-1} (at most 40: inline_calls' round limit)

Each build's CPU time (user + sys) and peak RSS come from the kernel's accounting of the child
process (os.wait4), so a busy machine stretches the wall clock but not the numbers compared.

  bench/compile/compile_scaling.py --dscc build/tools/dscc/dscc
      prints a table over the default sizes, with the target of 10,000 chained statements
      (20,000 ops) in at most 5 s and 1 GB;
  ... --check [--max-ratio 2.5]
      runs the longest chain checked against NumPy (several kernels, since a fused element is
      capped), then builds each family at n and 2n and fails when doubling the size multiplies
      the time by more than the ratio (the ctest e2e_compile_scaling).
"""

import argparse
import os
import subprocess
import sys
import tempfile


def chain(n):
    lines = ["fn main(x: f32[N]) -> f32[N] {", "  let y0 = x"]
    lines += [f"  let y{i + 1} = y{i} * 1.0001 + 0.5" for i in range(n)]
    return "\n".join(lines + [f"  return y{n}", "}"]) + "\n"


def fan(n):
    lines = ["fn main(x: f32[N]) -> f32[N] {", "  let s0 = x"]
    for i in range(n):
        lines.append(f"  let a{i} = x * {1.0 + i * 1e-4:.6f}")
        lines.append(f"  let s{i + 1} = s{i} + a{i}")
    return "\n".join(lines + [f"  return s{n}", "}"]) + "\n"


def funcs(n):
    lines = []
    for i in range(n):
        lines += [f"fn g{i}(x: f32[N]) -> f32[N] {{", f"  return x * {1.0 + i * 1e-4:.6f} + 0.5", "}"]
    lines += ["fn main(x: f32[N]) -> f32[N] {", "  let y0 = x"]
    lines += [f"  let y{i + 1} = g{i}(y{i})" for i in range(n)]
    return "\n".join(lines + [f"  return y{n}", "}"]) + "\n"


def deep(n):
    lines = ["fn g0(x: f32[N]) -> f32[N] {", "  return x * 2.0", "}"]
    for i in range(1, n):
        lines += [f"fn g{i}(x: f32[N]) -> f32[N] {{", f"  return g{i - 1}(x) + 0.5", "}"]
    lines += ["fn main(x: f32[N]) -> f32[N] {", f"  return g{n - 1}(x)", "}"]
    return "\n".join(lines) + "\n"


FAMILIES = {"chain": chain, "fan": fan, "funcs": funcs, "deep": deep}
# Sizes of the table, and the (n, 2n) pairs of --check: large enough that a build takes a
# measurable fraction of a second, small enough that the check takes seconds.
TABLE_SIZES = {"chain": [1000, 2000, 5000, 10000], "fan": [1000, 2000, 4000],
               "funcs": [100, 200, 400], "deep": [10, 20, 40]}  # 40: the most calls may nest
CHECK_SIZES = {"chain": 2500, "fan": 1000, "funcs": 100}


def build(dscc, source, workdir):
    """CPU seconds and peak RSS (MiB) of one `dscc build`."""
    path = os.path.join(workdir, "model.dsc")
    with open(path, "w") as f:
        f.write(source)
    proc = subprocess.Popen([dscc, "build", path, "-o", os.path.join(workdir, "model.so")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"dscc build failed:\n{err}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def check_chain_values(dscc, n, workdir):
    """The chain split into kernels computes what NumPy does, at awkward lengths."""
    import numpy as np
    path = os.path.join(workdir, "chain.dsc")
    with open(path, "w") as f:
        f.write(chain(n))
    rng = np.random.default_rng(n)
    for length in (1, 7, 13, 100):
        x = rng.uniform(-1, 1, length).astype(np.float32)
        np.save(os.path.join(workdir, "x.npy"), x)
        run = subprocess.run([dscc, "run", path, "--input", f"x={os.path.join(workdir, 'x.npy')}",
                              f"--output={workdir}"], capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"dscc run failed on chain {n} at length {length}:\n{run.stderr}")
        got = np.load(os.path.join(workdir, "output0.npy"))
        want = x.copy()
        for _ in range(n):
            want = want * np.float32(1.0001) + np.float32(0.5)
        if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
            sys.exit(f"chain {n} at length {length}: max error "
                     f"{np.max(np.abs(got - want))} against NumPy")
    print(f"chain  n={n:6}: values match NumPy at lengths 1, 7, 13, 100", flush=True)


def measure(dscc, family, n, repeat, workdir):
    runs = [build(dscc, FAMILIES[family](n), workdir) for _ in range(repeat)]
    return min(t for t, _ in runs), max(m for _, m in runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dscc", required=True)
    ap.add_argument("--check", action="store_true",
                    help="assert that doubling each family's size at most --max-ratio's the time")
    ap.add_argument("--max-ratio", type=float, default=2.5)
    ap.add_argument("--repeat", type=int, default=2, help="builds per size (the fastest counts)")
    ap.add_argument("--families", default=None, help="comma-separated subset")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        if args.check:
            failed = []
            check_chain_values(args.dscc, 2 * CHECK_SIZES["chain"], workdir)
            for family, n in CHECK_SIZES.items():
                if args.families and family not in args.families.split(","):
                    continue
                t1, _ = measure(args.dscc, family, n, args.repeat, workdir)
                t2, _ = measure(args.dscc, family, 2 * n, args.repeat, workdir)
                ratio = t2 / t1
                verdict = "ok" if ratio <= args.max_ratio else "FAIL"
                print(f"{family:6} n={n:6}: {t1:6.2f} s, 2n: {t2:6.2f} s, ratio {ratio:4.2f} "
                      f"(at most {args.max_ratio}) {verdict}", flush=True)
                if ratio > args.max_ratio:
                    failed.append(family)
            if failed:
                sys.exit("compile time grows faster than linearly for: " + ", ".join(failed))
            return
        print(f"{'family':6} {'n':>6} {'cpu s':>8} {'peak MiB':>9}")
        for family, sizes in TABLE_SIZES.items():
            if args.families and family not in args.families.split(","):
                continue
            for n in sizes:
                t, mem = measure(args.dscc, family, n, args.repeat, workdir)
                note = ""
                if family == "chain" and n == 10000:
                    ok = t <= 5.0 and mem <= 1024
                    note = f"  target <= 5 s and <= 1024 MiB: {'met' if ok else 'MISSED'}"
                print(f"{family:6} {n:6} {t:8.2f} {mem:9.0f}{note}", flush=True)


if __name__ == "__main__":
    main()
