#!/usr/bin/env python3
"""End-to-end check of examples/greedy_decode.dsc: a compiled loop with growing key and value
caches and an early stop, against a NumPy implementation of the same decoder.

For several batch sizes B, prompt lengths T and step counts (0, 1, primes, the bound 32), this
script writes random weights and a random prompt as .npy files, runs the example compiled in
two ways, `dscc run FILE.dsc` (LLVM JIT) and `dscc build` then `dscc run MODEL.so`, and compares
the generated tokens with the NumPy decoder (float64, from the same float32 weights). Tokens
must match exactly; an argmax whose top two logits are within 1e-4 in the reference is a near
tie that float32 may break either way, so a case that first differs there is reported and not
counted as a failure. An early-stop case sets `eos` to a token the reference emits, and expects
the output to end just before it.

It also checks that the arena is planned once per call (`--stats` gives the same size for 1
and 32 steps, since the caches are sized at the loop's bound), and that a step count past the
declared bound (i < 32), a prompt longer than `where T <= 32` and a negative step count end
with a clear error naming the loop or the clause, never a crash.

    check_greedy_decode.py --dscc build/tools/dscc/dscc --source-dir /work/main

Prints one line per case, then `N passed, M failed`; exits 1 when any case failed.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_examples import crash_reason, first_line, run_dscc, save_inputs  # noqa: E402

try:
    import numpy as np
except ImportError:  # pragma: no cover - reported, not a crash
    sys.stderr.write("check_greedy_decode.py: numpy is required: run "
                     "tools/scripts/install_python_deps.sh --tests\n")
    sys.exit(2)

BOUND = 32  # `for i in 0..steps where i < 32`
TIE = 1e-4  # top-two logit gap below which float32 may pick either token


def make_weights(rng: np.random.Generator) -> dict[str, np.ndarray]:
    def mat(r, c):
        return (rng.standard_normal((r, c)) / math.sqrt(r)).astype(np.float32)

    def gamma():
        return (1.0 + 0.1 * rng.standard_normal(32)).astype(np.float32)

    def beta():
        return (0.1 * rng.standard_normal(32)).astype(np.float32)

    # Small token embeddings and a strong MLP, so that the tied head does not just repeat the
    # last token: the decoded sequences vary.
    return {
        "wte": (0.2 * rng.standard_normal((64, 32))).astype(np.float32),
        "wpe": rng.standard_normal((64, 32)).astype(np.float32),
        "g1": gamma(), "e1": beta(),
        "w_q": mat(32, 32), "w_k": mat(32, 32), "w_v": mat(32, 32), "w_o": mat(32, 32),
        "g2": gamma(), "e2": beta(),
        "w_up": mat(32, 64), "w_down": 3.0 * mat(64, 32),
        "gf": gamma(), "ef": beta(),
    }


# ---- the NumPy decoder, written from examples/greedy_decode.dsc and stdlib/nn.dsc ----

def layer_norm(x, g, b, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def gelu(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def heads(x):
    b, n, _ = x.shape
    return x.reshape(b, n, 2, 16).transpose(0, 2, 1, 3)


def attend(q, k, v, mask):
    s = heads(q) @ heads(k).transpose(0, 1, 3, 2) * 0.25 + mask
    a = softmax(s) @ heads(v)
    b, _, m, _ = a.shape
    return a.transpose(0, 2, 1, 3).reshape(b, m, 32)


def logits_last(w, x, a):
    h = x + a @ w["w_o"]
    y = h + gelu(layer_norm(h, w["g2"], w["e2"]) @ w["w_up"]) @ w["w_down"]
    return layer_norm(y, w["gf"], w["ef"])[:, -1, :] @ w["wte"].T  # [B, 64]


def reference(w64, prompt, steps, eos):
    """(tokens [B, n], the smallest top-two logit gap of each step)."""
    b, t = prompt.shape
    x = w64["wte"][prompt] + w64["wpe"][:t]
    h = layer_norm(x, w64["g1"], w64["e1"])
    causal = np.where(np.arange(t)[:, None] >= np.arange(t)[None, :], 0.0, -1.0e9)
    keys, values = h @ w64["w_k"], h @ w64["w_v"]
    logits = logits_last(w64, x, attend(h @ w64["w_q"], keys, values, causal))
    gaps = []

    def pick(lg):
        top = np.sort(lg, axis=-1)
        gaps.append(float(np.min(top[:, -1] - top[:, -2])))
        return np.argmax(lg, axis=-1).reshape(b, 1)

    tok = pick(logits)
    out = np.zeros((b, 0), dtype=np.int64)
    for i in range(steps):
        if not np.any(tok != eos):
            break
        xt = w64["wte"][tok] + w64["wpe"][t + i: t + i + 1]
        ht = layer_norm(xt, w64["g1"], w64["e1"])
        keys = np.concatenate([keys, ht @ w64["w_k"]], axis=1)
        values = np.concatenate([values, ht @ w64["w_v"]], axis=1)
        at = attend(ht @ w64["w_q"], keys, values, np.zeros((1, t + i + 1)))
        out = np.concatenate([out, tok], axis=1)
        tok = pick(logits_last(w64, xt, at))
    return out, gaps


# ---- cases ----

class Checker:
    def __init__(self, dscc: str, source_dir: str, work: str):
        self.dscc, self.work = dscc, work
        self.example = os.path.join(source_dir, "examples", "greedy_decode.dsc")
        self.so = os.path.join(work, "greedy_decode.so")
        self.passed = self.failed = 0

    def report(self, ok: bool, name: str, detail: str):
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1

    def build(self) -> bool:
        r = run_dscc(self.dscc, ["build", self.example, "--entry=greedy_decode", "-o", self.so, "-q"],
                     self.work, 600)
        ok = r.rc == 0 and os.path.exists(self.so)
        self.report(ok, "build", "built greedy_decode.so" if ok else first_line(r.stderr + r.stdout))
        return ok

    def inputs(self, d: str, w, prompt, steps: int, eos: int) -> list[str]:
        arrays = dict(w)
        arrays["prompt"] = prompt
        arrays["steps"] = np.array(steps, dtype=np.int64)
        arrays["eos"] = np.array(eos, dtype=np.int64)
        return save_inputs(d, arrays)

    def run(self, model: str, args: list[str], out: str, extra=()) -> tuple[object, str]:
        entry = ["--entry=greedy_decode"] if model.endswith(".dsc") else []
        r = run_dscc(self.dscc, ["run", model, *entry, *args, f"--output={out}", "-q", *extra],
                     self.work, 600)
        crash = crash_reason(r)
        if crash:
            return None, crash
        if r.rc != 0:
            return None, first_line(r.stderr + r.stdout)
        return r, ""

    def decode_case(self, seed: int, b: int, t: int, steps: int, early_stop: bool = False):
        rng = np.random.default_rng(seed)
        w = make_weights(rng)
        w64 = {k: v.astype(np.float64) for k, v in w.items()}
        prompt = rng.integers(0, 64, size=(b, t), dtype=np.int64)
        eos = -1
        want, gaps = reference(w64, prompt, steps, eos)
        if early_stop:
            # b == 1: the last token that first appears at step >= 2; the loop stops before it.
            firsts = [j for j in range(2, want.shape[1]) if want[0, j] not in want[0, :j]]
            if firsts:
                eos = int(want[0, firsts[-1]])
                want, gaps = reference(w64, prompt, steps, eos)
                assert want.shape[1] == firsts[-1]
        name = f"B={b} T={t} steps={steps}" + (f" eos={eos}" if eos >= 0 else "")
        d = tempfile.mkdtemp(dir=self.work)
        args = self.inputs(d, w, prompt, steps, eos)
        for how, model in (("jit", self.example), ("so", self.so)):
            out = os.path.join(d, how)
            r, err = self.run(model, args, out)
            if r is None:
                self.report(False, f"{name} ({how})", err)
                continue
            got = np.load(os.path.join(out, "output0.npy"))
            if got.shape == want.shape and np.array_equal(got, want):
                self.report(True, f"{name} ({how})", f"{want.shape[1]} tokens match")
                continue
            # The first differing step: a near tie there is float32 rounding, not a bug.
            n = min(got.shape[1], want.shape[1]) if got.ndim == 2 else 0
            diff = [j for j in range(n) if not np.array_equal(got[:, j], want[:, j])]
            first = diff[0] if diff else n
            if first < len(gaps) and gaps[first] < TIE:
                self.report(True, f"{name} ({how})",
                            f"tokens differ from step {first}, a near tie (gap {gaps[first]:.1e})")
                continue
            self.report(False, f"{name} ({how})",
                        f"got {got.shape} {got.tolist()[:2]}, expected {want.shape} {want.tolist()[:2]}")

    def arena_case(self):
        rng = np.random.default_rng(5)
        w = make_weights(rng)
        prompt = rng.integers(0, 64, size=(2, 9), dtype=np.int64)
        sizes = []
        for steps in (1, BOUND):
            d = tempfile.mkdtemp(dir=self.work)
            r, err = self.run(self.so, self.inputs(d, w, prompt, steps, -1), os.path.join(d, "o"),
                              ["--stats"])
            if r is None:
                self.report(False, "arena", err)
                return
            m = re.search(r"arena [^(]*\((\d+) bytes\)", r.stdout + r.stderr)
            sizes.append(int(m.group(1)) if m else None)
        ok = sizes[0] is not None and sizes[0] == sizes[1]
        self.report(ok, "arena planned once", f"arena bytes at 1 and {BOUND} steps: {sizes}")

    def error_case(self, name: str, t: int, steps: int, expect: str):
        rng = np.random.default_rng(9)
        w = make_weights(rng)
        prompt = rng.integers(0, 64, size=(1, t), dtype=np.int64)
        d = tempfile.mkdtemp(dir=self.work)
        r = run_dscc(self.dscc, ["run", self.so, *self.inputs(d, w, prompt, steps, -1), "-q"],
                     self.work, 600)
        crash = crash_reason(r)
        msg = first_line(r.stderr + r.stdout)
        ok = crash is None and r.rc not in (0, None) and expect in r.stderr
        self.report(ok, name, crash or msg)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dscc", required=True)
    ap.add_argument("--source-dir", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="greedy_") as work:
        c = Checker(os.path.abspath(a.dscc), a.source_dir, work)
        if c.build():
            for seed, (b, t, steps) in enumerate([(1, 1, 0), (1, 1, 1), (2, 7, 5), (3, 13, 31),
                                                  (1, 32, 32), (2, 2, 32), (5, 3, 17)]):
                c.decode_case(seed, b, t, steps)
            c.decode_case(11, 1, 4, 20, early_stop=True)
            c.decode_case(12, 1, 17, 32, early_stop=True)
            c.arena_case()
            c.error_case("steps past the bound", 4, BOUND + 1, "the loop over 'i'")
            c.error_case("negative steps", 4, -3, "the loop over 'i'")
            c.error_case("prompt past where T <= 32", 33, 2, "T <= 32")
        print(f"{c.passed} passed, {c.failed} failed")
        return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
