#!/usr/bin/env python3
"""Every way of binding a symbol, used in every place a symbol may appear (issue 40).

docs/language.md, "Where a symbol is bound and where it is used", is this table. Each pair is a
generated .dsc file whose fn binds a symbol K one way (a row) and uses it one way (a column):
the pair either builds and runs, its result checked against NumPy at several lengths (1, a
prime, an awkward size), or `dscc check` refuses it with the message the table gives.

  check_symbol_bindings.py --dscc build/tools/dscc/dscc     runs every pair
  check_symbol_bindings.py --table                          prints the table as Markdown
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

import docs_table

# ---- rows: how K is bound ------------------------------------------------------------------
# Each binds K and gives `v: f32[K]`: the fn's parameters, the statements before the use, the
# inputs at one length, and v from them. `call` puts the use in a callee whose parameter binds
# K from the caller's value.


def _x(rng, n):
    # At least one positive element, so that data-dependent K is at least 1 (a called fn's
    # `where K >= 1` holds).
    x = rng.uniform(-1, 1, n).astype(np.float32)
    x[rng.integers(n)] = abs(x[0]) + 0.5
    return x


class Binding:
    def __init__(self, name, doc, params, setup, inputs, value, symbol="K", in_callee=False):
        self.name, self.doc, self.params, self.setup = name, doc, params, setup
        self.inputs, self.value, self.symbol, self.in_callee = inputs, value, symbol, in_callee

    @property
    def in_body(self):
        """K is bound by a statement, after the fn's entry."""
        return bool(self.setup)


BINDINGS = [
    Binding("parameter", "a parameter's dim: `fn f(v: f32[K])`",
            "v: f32[K]", [], lambda rng, n: {"v": _x(rng, n)}, lambda i: i["v"]),
    Binding("anonymous dim", "`?` in a parameter, named `_d0`: `fn f(v: f32[?])`",
            "v: f32[?]", [], lambda rng, n: {"v": _x(rng, n)}, lambda i: i["v"], symbol="_d0"),
    Binding("let assertion", "a `let` type assertion: `let v: f32[K] = x * 2.0`",
            "x: f32[N]", ["let v: f32[K] = x * 2.0"], lambda rng, n: {"x": _x(rng, n)},
            lambda i: i["x"] * np.float32(2.0)),
    Binding("nonzero", "a data-dependent dim asserted: `let idx: i64[K, 1] = nonzero(x > 0.0)`",
            "x: f32[N]",
            ["let idx: i64[K, 1] = nonzero(x > 0.0)", 'let v = cast(reshape(idx, [K]), "f32")'],
            lambda rng, n: {"x": _x(rng, n)},
            lambda i: np.nonzero(i["x"] > 0)[0].astype(np.float32)),
    Binding("mask select", "a mask select asserted: `let v: f32[K] = x[x > 0.0]`",
            "x: f32[N]", ["let v: f32[K] = x[x > 0.0]"], lambda rng, n: {"x": _x(rng, n)},
            lambda i: i["x"][i["x"] > 0]),
    Binding("if", "an `if` whose branches differ, asserted: "
            "`let v: f32[K] = if flag { x } else { concat([x, x], axis=0) }`",
            "x: f32[N], flag: bool[]",
            ["let v: f32[K] = if flag { x } else { concat([x, x], axis=0) }"],
            lambda rng, n: {"x": _x(rng, n), "flag": np.array(n != 7)},
            lambda i: i["x"] if i["flag"] else np.concatenate([i["x"], i["x"]])),
    Binding("loop trips", "a loop's trip count, asserted: "
            "`let v: f32[K] = for i in 0..n where i < 16 carry (acc: f32[i] = ...) {...}`",
            "x: f32[N], n: i64[]",
            ["let v: f32[K] = for i in 0..n where i < 16 carry (acc: f32[i] = zeros([0])) {",
             "  concat([acc, full([1], 2.0)], axis=0)", "}"],
            lambda rng, n: {"x": _x(rng, n), "n": np.array(min(n, 16), dtype=np.int64)},
            lambda i: np.full(int(i["n"]), 2.0, dtype=np.float32)),
    Binding("call", "a called fn's parameter, from the caller's value: `g(x)` with "
            "`fn g(v: f32[K])`",
            "x: f32[N]", [], lambda rng, n: {"x": _x(rng, n)}, lambda i: i["x"], in_callee=True),
]

# ---- columns: where K is used --------------------------------------------------------------
# Each reads `v: f32[K]` and K (spelled {K}) and gives `w`; `ret` is the fn's return type (or
# None), `decls` fns it calls, `where` a where clause on the fn that holds the use.


class Use:
    def __init__(self, name, doc, lines, expected, ret=None, decls=(), where=None):
        self.name, self.doc, self.lines, self.expected = name, doc, lines, expected
        self.ret, self.decls, self.where = ret, list(decls), where


USES = [
    Use("return type", "`-> f32[K]`", ["let w = v * 1.0"], lambda v: v, ret="f32[{K}]"),
    Use("later assertion", "`let w: f32[K] = v + 1.0`", ["let w: f32[{K}] = v + 1.0"],
        lambda v: v + np.float32(1.0)),
    Use("reshape target", "`reshape(v, [K, 1])`", ["let w = reshape(v, [{K}, 1])"],
        lambda v: v.reshape(-1, 1)),
    Use("value", '`arange(0, K)`', ['let w = v + cast(arange(0, {K}), "f32")'],
        lambda v: v + np.arange(len(v), dtype=np.float32)),
    Use("loop bound", "`for i in 0..K`",
        ["let w = for i in 0..{K} carry (c: f32[{K}] = v) {{ c + 1.0 }}"],
        lambda v: v + np.float32(len(v))),
    Use("callee's where", "`h(v)` with `fn h(z: f32[M]) where M >= 1`", ["let w = h(v)"],
        lambda v: v * np.float32(2.0),
        decls=["fn h(z: f32[M]) -> f32[M] where M >= 1 {", "  return z * 2.0", "}"]),
    Use("where clause", "`where K >= 1` on the fn", ["let w = v * 3.0"],
        lambda v: v * np.float32(3.0), where="{K} >= 1"),
]

# Pairs `dscc check` refuses, with (a part of) its message; every other pair must run.
REFUSED = {
    (b.name, "where clause"): "'{K}' is bound only here, in the body; 'where' clauses are "
                              "checked on entry"
    for b in BINDINGS if b.in_body
}


def source(b, u):
    k = b.symbol
    use = [line.format(K=k) for line in u.lines]
    ret = f" -> {u.ret.format(K=k)}" if u.ret else ""
    where = f" where {u.where.format(K=k)}" if u.where else ""
    lines = list(u.decls)
    if b.in_callee:
        lines += [f"fn g(v: f32[{k}]){ret}{where} {{"] + ["  " + s for s in use]
        lines += ["  return w", "}", f"fn main({b.params}) {{", "  return g(x)", "}"]
    else:
        lines += [f"fn main({b.params}){ret}{where} {{"]
        lines += ["  " + s for s in b.setup + use] + ["  return w", "}"]
    return "\n".join(lines) + "\n"


def run_pair(dscc, b, u, workdir, rng):
    path = os.path.join(workdir, "pair.dsc")
    with open(path, "w") as f:
        f.write(source(b, u))
    check = subprocess.run([dscc, "check", path], capture_output=True, text=True)
    refused = REFUSED.get((b.name, u.name))
    if refused is not None:
        want = refused.format(K=b.symbol)
        if check.returncode == 0 or want not in check.stderr:
            return f"expected `dscc check` to refuse with '{want}', got rc {check.returncode}:\n" \
                   f"{check.stderr}"
        return None
    if check.returncode != 0:
        return f"dscc check failed:\n{check.stderr}"
    so = os.path.join(workdir, "pair.so")
    built = subprocess.run([dscc, "build", path, "-o", so, "-q"], capture_output=True, text=True)
    if built.returncode != 0:
        return f"dscc build failed:\n{built.stderr}"
    for n in (1, 7, 13):
        inputs = b.inputs(rng, n)
        args = [dscc, "run", so, "--entry=main", f"--output={workdir}/out"]
        for name, value in inputs.items():
            npy = os.path.join(workdir, f"{name}.npy")
            np.save(npy, value)
            args += ["--input", f"{name}={npy}"]
        ran = subprocess.run(args, capture_output=True, text=True)
        if ran.returncode != 0:
            return f"dscc run at length {n} failed:\n{ran.stderr}"
        got = np.load(os.path.join(workdir, "out", "output0.npy"))
        want = u.expected(b.value(inputs))
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-6, atol=1e-6):
            return f"at length {n}: got {got.tolist()}, want {want.tolist()}"
    return None


def table():
    head = "| bound by | " + " | ".join(u.name for u in USES) + " |"
    rows = [head, "| --- " * (len(USES) + 1) + "|"]
    for b in BINDINGS:
        cells = ["refused" if (b.name, u.name) in REFUSED else "yes" for u in USES]
        rows.append(f"| {b.doc} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main():
    args = docs_table.parse_args(__doc__, "docs/language.md", table())
    if args is None:
        return
    stale_docs = docs_table.docs_are_stale(args, table())
    failures = 0
    rng = np.random.default_rng(40)
    with tempfile.TemporaryDirectory() as workdir:
        for b in BINDINGS:
            for u in USES:
                error = run_pair(args.dscc, b, u, workdir, rng)
                verdict = "refused as documented" if (b.name, u.name) in REFUSED else "runs"
                print(f"{b.name:14} x {u.name:16}: {'FAIL' if error else verdict}", flush=True)
                if error:
                    failures += 1
                    print("  " + error.replace("\n", "\n  "))
                    print("  source:\n    " + source(b, u).replace("\n", "\n    "))
    total = len(BINDINGS) * len(USES)
    print(f"{total - failures} of {total} pairs as documented")
    sys.exit(1 if failures or stale_docs else 0)


if __name__ == "__main__":
    main()
