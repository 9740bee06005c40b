#!/usr/bin/env python3
"""The compiler's limits, each at the limit and one past it (issue 40).

docs/dscc.md, "Limits", is this table (`--table` prints it; the test checks that the docs hold
it). Each limit's source is generated at the limit, where the command must succeed, and one
past it, where it must fail with exit status 1 and the message the table gives.

  check_limits.py --dscc build/tools/dscc/dscc --docs docs/dscc.md
"""

import os
import subprocess
import sys
import tempfile

import docs_table


def fn_returning(expr):
    return f"fn f(x: f32[N]) -> f32[N] {{\n  return {expr}\n}}\n"


def call_depth(n):
    """main calls g{n-1}, which calls g{n-2}, ... g0: calls n deep."""
    lines = ["fn g0(x: f32[N]) -> f32[N] {", "  return x * 2.0", "}"]
    for i in range(1, n):
        lines += [f"fn g{i}(x: f32[N]) -> f32[N] {{", f"  return g{i - 1}(x) + 0.5", "}"]
    return "\n".join(lines + ["fn main(x: f32[N]) -> f32[N] {", f"  return g{n - 1}(x)", "}"]) + "\n"


def generic_depth(n):
    """The same with `tensor` parameters: each fn is instantiated per call."""
    lines = ["fn g0(x: tensor) -> tensor {", "  return x * 2.0", "}"]
    for i in range(1, n):
        lines += [f"fn g{i}(x: tensor) -> tensor {{", f"  return g{i - 1}(x) + 0.5", "}"]
    return "\n".join(lines + ["fn main(x: f32[N]) -> f32[N] {", f"  return g{n - 1}(x)", "}"]) + "\n"


class Limit:
    def __init__(self, what, value, unit, command, make, message):
        self.what, self.value, self.unit, self.command = what, value, unit, command
        self.make, self.message = make, message


# The body's `{` is a bracket too: 255 parentheses inside it nest 256 deep.
LIMITS = [
    Limit("brackets `( [ {` nested", 256, "levels, the fn's body included", "check",
          lambda n: fn_returning("(" * (n - 1) + "x" + ")" * (n - 1)), "nesting is too deep"),
    Limit("operators of one level chained (`x + x + ... + x`), one level of nesting however "
          "long", 65536, "operators", "check", lambda n: fn_returning("x" + " + x" * n),
          "chain of operators is too long"),
    Limit("calls nested below an entry", 40, "calls", "build", call_depth,
          "calls nest more than 40 deep"),
    Limit("calls of fns with `tensor` parameters nested (each instantiated per call)", 32,
          "calls", "check", generic_depth, "calls nest too deeply instantiating"),
    Limit("an integer literal", 2**63 - 1, "", "check",
          lambda n: f"fn f(x: f32[N]) -> f32[N] where N <= {n} {{\n  return x\n}}\n",
          "is too large"),
    Limit("operators chained in a `dscc prove` or `--assume` fact (`A + A + ... >= 0`; there "
          "each operator counts a level of the 200, as do the comparison and the leaf)", 198,
          "operators", "prove", lambda n: "A" + " + A" * n + " >= 0",
          "expression nests too deeply (more than 200 levels)"),
    Limit("`dscc run --threads`", 1024, "threads", "threads", lambda n: str(n),
          "--threads expects a count from 1 to 1024"),
]


# Sizes with no fixed limit, each probed at a size past what models use: it must compile (and,
# where a run is cheap, run). docs/dscc.md lists them under the table.
def high_rank(n):
    dims = ", ".join(f"D{i}" for i in range(n))
    return f"fn f(x: f32[{dims}]) -> f32[{dims}] {{\n  return x * 2.0\n}}\n"


def many_symbols(n):
    params = ", ".join(f"x{i}: f32[S{i}]" for i in range(n))
    return f"fn f({params}) -> f32[S0] {{\n  return x0\n}}\n"


UNLIMITED = [
    ("rank", 40, high_rank, ["run", "--shape", ",".join(f"D{i}=1" for i in range(40))]),
    ("symbols (and parameters) of one fn", 3000, many_symbols, ["check"]),
]


def run(dscc, limit, n, workdir):
    source = limit.make(n)
    if limit.command == "prove":
        return subprocess.run([dscc, "prove", source], capture_output=True, text=True)
    if limit.command == "threads":
        return subprocess.run([dscc, "run", os.path.join(SOURCE_DIR, "examples", "mlp.dsc"),
                               f"--threads={source}", "--random-weights", "--shape", "B=2"],
                              capture_output=True, text=True)
    path = os.path.join(workdir, "limit.dsc")
    with open(path, "w") as f:
        f.write(source)
    args = [dscc, limit.command, path]
    if limit.command == "build":
        args += ["-o", os.path.join(workdir, "limit.so"), "-q"]
    return subprocess.run(args, capture_output=True, text=True)


def table():
    rows = ["| limit | at most | past it |", "| --- | --- | --- |"]
    for limit in LIMITS:
        value = f"{limit.value:,} {limit.unit}".strip()
        rows.append(f"| {limit.what} | {value} | `{limit.message}` |")
    return "\n".join(rows)


SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    args = docs_table.parse_args(__doc__, "docs/dscc.md", table())
    if args is None:
        return
    failures = int(docs_table.docs_are_stale(args, table()))
    with tempfile.TemporaryDirectory() as workdir:
        for limit in LIMITS:
            at = run(args.dscc, limit, limit.value, workdir)
            past = run(args.dscc, limit, limit.value + 1, workdir)
            problems = []
            if at.returncode != 0:
                problems.append(f"at the limit, rc {at.returncode}:\n{at.stderr}")
            if past.returncode != 1 or limit.message not in past.stderr + past.stdout:
                problems.append(f"one past it, rc {past.returncode}, without "
                                f"'{limit.message}':\n{past.stderr}")
            print(f"{limit.what[:60]:60}: {'FAIL' if problems else 'ok'}", flush=True)
            for p in problems:
                print("  " + p.replace("\n", "\n  "))
            failures += bool(problems)
        for what, n, make, command in UNLIMITED:
            path = os.path.join(workdir, "unlimited.dsc")
            with open(path, "w") as f:
                f.write(make(n))
            r = subprocess.run([args.dscc, command[0], path] + command[1:], capture_output=True,
                               text=True)
            label = f"{what} at {n} ({command[0]})"
            print(f"{label:60}: {'ok' if r.returncode == 0 else 'FAIL'}")
            if r.returncode != 0:
                print("  " + r.stderr.replace("\n", "\n  "))
                failures += 1
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
