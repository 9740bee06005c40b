#!/usr/bin/env python3
"""End-to-end numeric check of `dscc run` on examples/mlp.dsc, examples/bert_layer.dsc and
examples/gpt_decode.dsc.

For each example, at several shapes allowed by its `where` clause, this script writes random
inputs as NAME.npy files, runs

    DSCC run FILE.dsc --input NAME=DIR/NAME.npy ... --output=OUT

and compares OUT/output0.npy with a NumPy implementation of the same function, written from
the .dsc source and stdlib/nn.dsc (layer_norm, exact erf gelu, softmax) and evaluated in
float64 from the same float32 inputs. It then checks that bad input (a violated `where`, a
wrong rank, dtype or dim, a truncated or corrupt .npy, a missing weight) ends with a non-zero
exit and a clear message on stderr, never with a crash (signal, exit code >= 128, sanitizer or
internal-error report).

    check_examples.py --dscc build/tools/dscc/dscc --source-dir /work/main
    check_examples.py --self-test          # no dscc: checks the reference and the tolerance

Prints one line per case (PASS or FAIL, then details), then `N passed, M failed`; the exit
status is 1 when any case failed, 2 on a usage error.

Tolerance. A case passes when every element satisfies
    |out - ref| <= TOL * (scale + |ref|),   TOL = 1e-4,  scale = rms(ref)
i.e. an absolute error of 1e-4 of the output's typical magnitude plus a relative error of
1e-4. Why 1e-4 for f32 (unit roundoff u = 6e-8): the deepest reductions are the K = 3072 and
768 dot products; a blocked or vectorized f32 sum of K terms of random sign has a typical
error of about sqrt(K) * u ~ 3e-6 of the terms' magnitude (the worst case, K * u ~ 2e-4,
needs every rounding to go the same way). The layer norms divide by a standard deviation of
O(1) here (weights are scaled by 1/sqrt(fan_in), gammas are ~1), so they do not amplify that,
and a polynomial erf/exp is good to a few ulps. A correct f32 implementation lands near 1e-6:
NumPy's own f32 evaluation of the layer reaches at most 0.013 of the tolerance, an 80x margin
for reassociation, fused kernels and approximate transcendentals. It is still tight enough to
catch real mistakes: `--self-test` checks that f32 NumPy passes and that deliberate slips fail:
tanh GELU instead of erf (caught at ~4x the tolerance, the subtlest), unbiased variance in the
layer norm (~6x), a dropped bias, the mask left out, softmax over the wrong axis, scores not
scaled by 0.125 (all >1000x). The scale is the RMS, not the max, of the reference: the max of
a layer-normed output grows with its size and would loosen the bound at large shapes.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Callable

try:
    import numpy as np
except ImportError:  # pragma: no cover - reported, not a crash
    sys.stderr.write(
        "check_examples.py: numpy is required: run tools/scripts/install_python_deps.sh --tests\n")
    sys.exit(2)

TOL = 1e-4
SEED = 20261121

# ---------------------------------------------------------------------------------------------
# Reference implementations (NumPy), mirroring the .dsc sources line by line.
# ---------------------------------------------------------------------------------------------

_erf_scalar = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    """Exact erf, elementwise (numpy has none; math.erf is correctly rounded in double)."""
    return _erf_scalar(x).astype(x.dtype)


# stdlib/nn.dsc: gelu(x) = x * 0.5 * (1.0 + erf(x * 0.7071067811865476))
def gelu(x):
    return x * 0.5 * (1.0 + erf(x * x.dtype.type(0.7071067811865476)))


# stdlib/nn.dsc: gelu_tanh (used only by --self-test as a deliberate mistake)
def gelu_tanh(x):
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return x * 0.5 * (1.0 + np.tanh(inner))


# stdlib/nn.dsc: relu(x) = maximum(x, 0.0)
def relu(x):
    return np.maximum(x, 0.0)


# stdlib/nn.dsc: softmax: exp(x - max) / sum(exp(x - max)) along axis
def softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


# stdlib/nn.dsc: layer_norm over the last axis, biased variance, then * gamma + beta
def layer_norm(x, gamma, beta, eps):
    mu = np.mean(x, axis=-1, keepdims=True)
    centered = x - mu
    variance = np.mean(centered * centered, axis=-1, keepdims=True)
    return centered / np.sqrt(variance + eps) * gamma + beta


def layer_norm_unbiased(x, gamma, beta, eps):  # a deliberate mistake, for --self-test
    centered = x - np.mean(x, axis=-1, keepdims=True)
    variance = np.sum(centered * centered, axis=-1, keepdims=True) / (x.shape[-1] - 1)
    return centered / np.sqrt(variance + eps) * gamma + beta


def mlp_ref(p: dict[str, np.ndarray], dtype=np.float64) -> np.ndarray:
    """examples/mlp.dsc"""
    c = {k: v.astype(dtype) for k, v in p.items()}
    h = relu(c["x"] @ c["w1"] + c["b1"])
    return softmax(h @ c["w2"] + c["b2"], axis=-1)


def bert_ref(p: dict[str, np.ndarray], dtype=np.float64, mistake: str | None = None) -> np.ndarray:
    """examples/bert_layer.dsc; `mistake` injects a deliberate error (for --self-test)."""
    c = {k: v.astype(dtype) for k, v in p.items()}
    x, mask = c["x"], c["mask"]
    B, S, _ = x.shape
    qkv = x @ c["w_qkv"] + c["b_qkv"]
    q, k, v = np.split(qkv, 3, axis=-1)                                # each [B, S, 768]
    qh = q.reshape(B, S, 12, 64).transpose(0, 2, 1, 3)                  # [B, 12, S, 64]
    kh = k.reshape(B, S, 12, 64).transpose(0, 2, 3, 1)                  # [B, 12, 64, S]
    vh = v.reshape(B, S, 12, 64).transpose(0, 2, 1, 3)                  # [B, 12, S, 64]
    scale = 1.0 if mistake == "unscaled-scores" else 0.125
    scores = (qh @ kh) * dtype(scale)
    if mistake != "no-mask":
        scores = scores + mask.reshape(B, 1, 1, S)
    p_ = softmax(scores, axis=-2 if mistake == "softmax-axis" else -1)
    a = (p_ @ vh).transpose(0, 2, 1, 3).reshape(B, S, 768)
    ln = layer_norm_unbiased if mistake == "unbiased-variance" else layer_norm
    b_o = 0.0 if mistake == "no-b_o" else c["b_o"]
    h = ln(x + a @ c["w_o"] + b_o, c["g1"], c["e1"], 1e-12)
    act = gelu_tanh if mistake == "tanh-gelu" else gelu
    return ln(h + act(h @ c["w1"] + c["b1"]) @ c["w2"] + c["b2"], c["g2"], c["e2"], 1e-12)


def gpt_decode_ref(p: dict[str, np.ndarray], dtype=np.float64):
    """examples/gpt_decode.dsc: the block's output and the grown key and value caches."""
    c = {k: v.astype(dtype) for k, v in p.items()}
    x = c["x"]
    B = x.shape[0]
    qkv = layer_norm(x, c["g1"], c["e1"], 1e-5) @ c["w_qkv"] + c["b_qkv"]
    q, k, v = np.split(qkv, 3, axis=-1)                                  # each [B, 768]
    keys = np.concatenate([c["past_k"], k.reshape(B, 12, 1, 64)], axis=2)  # [B, 12, T+1, 64]
    values = np.concatenate([c["past_v"], v.reshape(B, 12, 1, 64)], axis=2)
    scores = (q.reshape(B, 12, 1, 64) @ keys.transpose(0, 1, 3, 2)) * dtype(0.125)
    a = (softmax(scores, axis=-1) @ values).reshape(B, 768)
    h = x + a @ c["w_o"] + c["b_o"]
    y = h + gelu(layer_norm(h, c["g2"], c["e2"], 1e-5) @ c["w1"] + c["b1"]) @ c["w2"] + c["b2"]
    return (y, keys, values)


# ---------------------------------------------------------------------------------------------
# Models: parameters, how to draw them, the reference.
# ---------------------------------------------------------------------------------------------

@dataclass
class Param:
    name: str
    shape: Callable[[dict[str, int]], tuple[int, ...]]
    kind: str  # input, mask, matrix, bias, gamma, beta

    def draw(self, rng: np.random.Generator, sym: dict[str, int]) -> np.ndarray:
        shape = self.shape(sym)
        if self.kind == "input":
            a = rng.standard_normal(shape)
        elif self.kind == "mask":
            # BERT's additive attention mask: 0 for a kept key, -10000 for a padded one. Each
            # batch row keeps a random prefix of length >= 1 (so no row is fully masked).
            B, S = shape
            keep = rng.integers(1, S + 1, size=B)
            a = np.where(np.arange(S)[None, :] < keep[:, None], 0.0, -10000.0)
        elif self.kind == "matrix":  # 1/sqrt(fan_in): activations stay O(1)
            a = rng.standard_normal(shape) / math.sqrt(shape[0])
        elif self.kind in ("bias", "beta"):
            a = 0.1 * rng.standard_normal(shape)
        elif self.kind == "gamma":
            a = 1.0 + 0.1 * rng.standard_normal(shape)
        else:
            raise ValueError(self.kind)
        return np.ascontiguousarray(a, dtype=np.float32)


@dataclass
class Model:
    name: str
    file: str  # relative to --source-dir
    params: list[Param]
    # One shape, or a list of shapes for a model with several results (the reference then
    # returns a tuple of arrays in the same order).
    output_shape: Callable[[dict[str, int]], tuple[int, ...] | list[tuple[int, ...]]]
    reference: Callable[[dict[str, np.ndarray]], np.ndarray | tuple[np.ndarray, ...]]
    shapes: list[dict[str, int]] = field(default_factory=list)

    def is_weight(self, p: Param) -> bool:
        return p.kind not in ("input", "mask")

    def draw_weights(self, seed: int) -> dict[str, np.ndarray]:
        """The parameters with constant dims (they do not depend on the shape symbols)."""
        rng = np.random.default_rng(seed)
        return {p.name: p.draw(rng, {}) for p in self.params if self.is_weight(p)}

    def draw(self, sym: dict[str, int], seed: int, weights: dict[str, np.ndarray] | None = None):
        """Every parameter at `sym`; the weights from `weights` when given."""
        rng = np.random.default_rng(seed)
        out = {}
        for p in self.params:
            if weights is not None and self.is_weight(p):
                out[p.name] = weights[p.name]
            else:
                out[p.name] = p.draw(rng, sym)
        return out


MLP = Model(
    name="mlp",
    file="examples/mlp.dsc",
    params=[
        Param("x", lambda s: (s["B"], 784), "input"),
        Param("w1", lambda s: (784, 256), "matrix"),
        Param("b1", lambda s: (256,), "bias"),
        Param("w2", lambda s: (256, 10), "matrix"),
        Param("b2", lambda s: (10,), "bias"),
    ],
    output_shape=lambda s: (s["B"], 10),
    reference=mlp_ref,
    # where B >= 1: 1, primes, a power of two and an odd size past it
    shapes=[{"B": 1}, {"B": 3}, {"B": 17}, {"B": 64}, {"B": 257}],
)

BERT = Model(
    name="bert_layer",
    file="examples/bert_layer.dsc",
    params=[
        Param("x", lambda s: (s["B"], s["S"], 768), "input"),
        Param("mask", lambda s: (s["B"], s["S"]), "mask"),
        Param("w_qkv", lambda s: (768, 2304), "matrix"),
        Param("b_qkv", lambda s: (2304,), "bias"),
        Param("w_o", lambda s: (768, 768), "matrix"),
        Param("b_o", lambda s: (768,), "bias"),
        Param("g1", lambda s: (768,), "gamma"),
        Param("e1", lambda s: (768,), "beta"),
        Param("w1", lambda s: (768, 3072), "matrix"),
        Param("b1", lambda s: (3072,), "bias"),
        Param("w2", lambda s: (3072, 768), "matrix"),
        Param("b2", lambda s: (768,), "bias"),
        Param("g2", lambda s: (768,), "gamma"),
        Param("e2", lambda s: (768,), "beta"),
    ],
    output_shape=lambda s: (s["B"], s["S"], 768),
    reference=bert_ref,
    # where B >= 1, 1 <= S <= 512: B in {1, 2, 3}, S in {1, 7, 13, 64, 77}
    shapes=[
        {"B": 1, "S": 1},
        {"B": 2, "S": 7},
        {"B": 3, "S": 13},
        {"B": 1, "S": 64},
        {"B": 2, "S": 77},
    ],
)

GPT_DECODE = Model(
    name="gpt_decode",
    file="examples/gpt_decode.dsc",
    params=[
        Param("x", lambda s: (s["B"], 768), "input"),
        Param("past_k", lambda s: (s["B"], 12, s["T"], 64), "input"),
        Param("past_v", lambda s: (s["B"], 12, s["T"], 64), "input"),
        Param("g1", lambda s: (768,), "gamma"),
        Param("e1", lambda s: (768,), "beta"),
        Param("w_qkv", lambda s: (768, 2304), "matrix"),
        Param("b_qkv", lambda s: (2304,), "bias"),
        Param("w_o", lambda s: (768, 768), "matrix"),
        Param("b_o", lambda s: (768,), "bias"),
        Param("g2", lambda s: (768,), "gamma"),
        Param("e2", lambda s: (768,), "beta"),
        Param("w1", lambda s: (768, 3072), "matrix"),
        Param("b1", lambda s: (3072,), "bias"),
        Param("w2", lambda s: (3072, 768), "matrix"),
        Param("b2", lambda s: (768,), "bias"),
    ],
    output_shape=lambda s: [(s["B"], 768), (s["B"], 12, s["T"] + 1, 64),
                            (s["B"], 12, s["T"] + 1, 64)],
    reference=gpt_decode_ref,
    # where 1 <= B <= 64, 0 <= T <= 2047: an empty cache, 1, primes, a cache past 64
    shapes=[
        {"B": 1, "T": 0},
        {"B": 2, "T": 1},
        {"B": 3, "T": 13},
        {"B": 1, "T": 67},
        {"B": 5, "T": 7},
    ],
)

MODELS = [MLP, BERT, GPT_DECODE]


def sym_text(sym: dict[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in sym.items())


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------

def compare(out: np.ndarray, ref: np.ndarray) -> tuple[bool, str]:
    """Returns (ok, detail): |out - ref| <= TOL * (scale + |ref|), scale = rms(ref)."""
    if not np.all(np.isfinite(out)):
        bad = int(np.size(out) - np.count_nonzero(np.isfinite(out)))
        return False, f"{bad} non-finite values in the output"
    ref = ref.astype(np.float64)
    err = np.abs(out.astype(np.float64) - ref)
    scale = float(np.sqrt(np.mean(ref * ref))) if ref.size else 0.0
    scale = scale if scale > 0 else 1.0
    allowed = TOL * (scale + np.abs(ref))
    worst = float(np.max(err / allowed)) if ref.size else 0.0
    max_err = float(np.max(err)) if ref.size else 0.0
    detail = f"max|err| {max_err:.2e}, scale {scale:.3g}, worst err/tol {worst:.3f}"
    if worst > 1.0:
        idx = np.unravel_index(int(np.argmax(err / allowed)), err.shape)
        detail += f" at {tuple(int(i) for i in idx)}: got {float(out[idx]):.7g}, expected {float(ref[idx]):.7g}"
    return worst <= 1.0, detail


# ---------------------------------------------------------------------------------------------
# Running dscc
# ---------------------------------------------------------------------------------------------

CRASH_MARKERS = [
    re.compile(r"Sanitizer"),
    re.compile(r"Segmentation fault"),
    re.compile(r"core dumped"),
    re.compile(r"\bAborted\b"),
    re.compile(r"terminate called"),
    re.compile(r"internal error"),
    re.compile(r"\.(?:cpp|cc|h):\d+:\d+: runtime error:"),  # UBSan
    re.compile(r"Assertion .* failed"),
]


@dataclass
class RunResult:
    rc: int | None  # None: timed out
    stdout: str
    stderr: str
    seconds: float


def run_dscc(dscc: str, args: list[str], cwd: str, timeout: float) -> RunResult:
    import time
    t0 = time.monotonic()
    try:
        p = subprocess.run([dscc, *args], cwd=cwd, capture_output=True, text=True,
                           errors="replace", timeout=timeout, stdin=subprocess.DEVNULL)
        return RunResult(p.returncode, p.stdout, p.stderr, time.monotonic() - t0)
    except subprocess.TimeoutExpired as e:
        def text(b):
            return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
        return RunResult(None, text(e.stdout), text(e.stderr), time.monotonic() - t0)


def crash_reason(r: RunResult) -> str | None:
    """Why this run counts as a crash, or None."""
    if r.rc is None:
        return "timed out"
    if r.rc < 0:
        return f"killed by signal {-r.rc}"
    if r.rc >= 128:
        return f"exit code {r.rc} (>= 128: a signal or an abort)"
    both = r.stdout + r.stderr
    for m in CRASH_MARKERS:
        if m.search(both):
            return f"crash marker /{m.pattern}/ in the output"
    return None


def first_line(text: str, limit: int = 240) -> str:
    """The first line that says `error`, else the first non-empty one (dscc may print progress
    lines such as `dscc: compiled FILE in 1.2 s` before its error)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "(empty)"
    line = next((ln for ln in lines if re.search(r"(?i)\berror\b", ln)), lines[0])
    return line if len(line) <= limit else line[:limit] + "..."


def save_inputs(d: str, arrays: dict[str, np.ndarray]) -> list[str]:
    """Writes each array as d/NAME.npy; returns the --input arguments."""
    args = []
    for name, a in arrays.items():
        path = os.path.join(d, f"{name}.npy")
        np.save(path, a, allow_pickle=False)
        args += ["--input", f"{name}={path}"]
    return args


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    ok: bool
    detail: str


class Checker:
    def __init__(self, dscc: str, source_dir: str, work: str, timeout: float, verbose: bool,
                 via_build: bool = False):
        self.dscc = dscc
        self.via_build = via_build
        self.built: dict[str, tuple[str | None, str | None]] = {}
        self.source_dir = source_dir
        self.work = work
        self.timeout = timeout
        self.verbose = verbose
        self.weights: dict[str, dict[str, np.ndarray]] = {}
        self.counter = 0

    def model_weights(self, m: Model) -> dict[str, np.ndarray]:
        # Weights do not depend on the shape symbols: drawn once per model.
        if m.name not in self.weights:
            self.weights[m.name] = m.draw_weights(SEED)
        return self.weights[m.name]

    def case_dir(self, label: str) -> str:
        self.counter += 1
        d = os.path.join(self.work, f"{self.counter:02d}-{re.sub(r'[^A-Za-z0-9_=-]+', '_', label)}")
        os.makedirs(d)
        return d

    def dsc_file(self, m: Model) -> str:
        """What `dscc run` is given: the .dsc, or with --via-build the .so `dscc build` made
        from it (built once per model)."""
        source = os.path.join(self.source_dir, m.file)
        if not self.via_build:
            return source
        if m.name not in self.built:
            so = os.path.join(self.work, f"{m.name}.so")
            r = run_dscc(self.dscc, ["build", source, "-o", so], self.source_dir, self.timeout)
            problem = crash_reason(r) or (f"exit {r.rc}" if r.rc != 0 else None)
            if problem is None and not os.path.isfile(so):
                problem = f"exit 0 but no {so}"
            self.built[m.name] = (so, None) if problem is None else \
                (None, f"dscc build {m.file}: {problem}: {first_line(r.stderr)}")
        so, build_error = self.built[m.name]
        if build_error:
            raise RuntimeError(build_error)  # the build failed: every case of m fails with it
        return so

    def detail_of(self, r: RunResult) -> str:
        if self.verbose:
            return f"\n--- stdout ---\n{r.stdout}--- stderr ---\n{r.stderr}--------------"
        return ""

    # A shape the where clause allows: dscc's output must match the reference.
    def numeric(self, m: Model, sym: dict[str, int], seed: int) -> Outcome:
        d = self.case_dir(f"{m.name}-{sym_text(sym)}")
        arrays = m.draw(sym, seed, self.model_weights(m))
        args = ["run", self.dsc_file(m), *save_inputs(d, arrays), f"--output={d}/out"]
        r = run_dscc(self.dscc, args, self.source_dir, self.timeout)
        crash = crash_reason(r)
        if crash:
            return Outcome(False, f"{crash}: {first_line(r.stderr)}{self.detail_of(r)}")
        if r.rc != 0:
            return Outcome(False, f"exit {r.rc}: {first_line(r.stderr)}{self.detail_of(r)}")
        want = m.output_shape(sym)
        several = isinstance(want, list)
        shapes = want if several else [want]
        refs = list(m.reference(arrays)) if several else [m.reference(arrays)]
        names = [f"output{i}.npy" for i in range(len(shapes))]
        extra = sorted(f for f in os.listdir(os.path.join(d, "out")) if f not in names)
        if extra:
            return Outcome(False, f"unexpected extra outputs {extra}")
        details = []
        for name, want_shape, ref in zip(names, shapes, refs):
            out_path = os.path.join(d, "out", name)
            if not os.path.exists(out_path):
                return Outcome(False, f"exit 0 but no {out_path}")
            try:
                out = np.load(out_path, allow_pickle=False)
            except Exception as e:  # noqa: BLE001 - any unreadable output is a failure
                return Outcome(False, f"cannot read {out_path}: {e}")
            if out.dtype != np.float32 or out.shape != want_shape:
                return Outcome(False, f"{name} is {out.dtype}{list(out.shape)}, "
                                      f"expected float32{list(want_shape)}")
            ok, detail = compare(out, ref)
            if not ok:
                return Outcome(False, f"{name}: {detail} ({r.seconds:.1f} s)")
            details.append(detail)
        return Outcome(True, f"{'; '.join(details)} ({r.seconds:.1f} s)")

    # Bad input: non-zero exit, a clear message naming the problem, no crash.
    def negative(self, args: list[str], expect: list[list[str]]) -> Outcome:
        """`expect`: every group must match stderr (+stdout); a group matches when any of its
        regular expressions is found (case-sensitive unless the pattern says (?i))."""
        r = run_dscc(self.dscc, args, self.source_dir, self.timeout)
        crash = crash_reason(r)
        if crash:
            return Outcome(False, f"{crash}: {first_line(r.stderr)}{self.detail_of(r)}")
        if r.rc == 0:
            return Outcome(False, f"exit 0, expected an error{self.detail_of(r)}")
        if not r.stderr.strip():
            return Outcome(False, f"exit {r.rc} with nothing on stderr{self.detail_of(r)}")
        text = r.stderr + r.stdout
        for group in expect:
            if not any(re.search(rx, text) for rx in group):
                want = " or ".join(f"/{rx}/" for rx in group)
                return Outcome(False, f"exit {r.rc}, but the message lacks {want}: "
                                      f"{first_line(r.stderr)}{self.detail_of(r)}")
        return Outcome(True, f"exit {r.rc}: {first_line(r.stderr, 160)}")

    def bert_args(self, d: str, sym: dict[str, int], seed: int,
                  replace: dict[str, np.ndarray] | None = None,
                  omit: tuple[str, ...] = ()) -> list[str]:
        """`run bert_layer.dsc` with every parameter as --input, some replaced or left out."""
        arrays = BERT.draw(sym, seed, self.model_weights(BERT))
        arrays.update(replace or {})
        for name in omit:
            del arrays[name]
        return ["run", self.dsc_file(BERT), *save_inputs(d, arrays), f"--output={d}/out"]

    def negative_cases(self) -> list[tuple[str, Callable[[], Outcome]]]:
        cases: list[tuple[str, Callable[[], Outcome]]] = []
        rng = np.random.default_rng(SEED + 1)

        def f32(*shape):
            return rng.standard_normal(shape).astype(np.float32)

        def add(label: str, make_args: Callable[[str], list[str]], expect: list[list[str]]):
            def run() -> Outcome:
                d = self.case_dir(label)
                return self.negative(make_args(d), expect)
            cases.append((label, run))

        # A violated where clause at run time: 1 <= S <= 512.
        add("bert_layer where S=600",
            lambda d: self.bert_args(d, {"B": 1, "S": 600}, 1),
            [[r"(?i)\bwhere\b"], [r"\bS\s*=\s*600\b"]])
        # B >= 1 with an empty batch.
        add("bert_layer where B=0",
            lambda d: self.bert_args(d, {"B": 0, "S": 7}, 2),
            [[r"(?i)\bwhere\b"], [r"\bB\s*=\s*0\b"]])
        add("mlp where B=0",
            lambda d: ["run", self.dsc_file(MLP),
                       *save_inputs(d, MLP.draw({"B": 0}, 3, self.model_weights(MLP))),
                       f"--output={d}/out"],
            [[r"(?i)\bwhere\b"], [r"\bB\s*=\s*0\b"]])
        # mask: f32[B, S] given as rank 3.
        add("bert_layer wrong rank (mask rank 3)",
            lambda d: self.bert_args(d, {"B": 2, "S": 7}, 4, replace={"mask": f32(2, 1, 7)}),
            [[r"\bmask\b"], [r"(?i)rank", r"(?i)dims", r"(?i)shape", r"\[2, 1, 7\]", r"\(2, 1, 7\)"]])
        # x: f32[B, 784] given as rank 3.
        add("mlp wrong rank (x rank 3)",
            lambda d: ["run", self.dsc_file(MLP),
                       *save_inputs(d, {**MLP.draw({"B": 2}, 5, self.model_weights(MLP)),
                                        "x": f32(2, 1, 784)}),
                       f"--output={d}/out"],
            [[r"\bx\b"], [r"(?i)rank", r"(?i)dims", r"(?i)shape"]])
        # A constant dim that does not match: w_o is f32[768, 768].
        add("bert_layer wrong dim (w_o 768x767)",
            lambda d: self.bert_args(d, {"B": 1, "S": 7}, 6, replace={"w_o": f32(768, 767)}),
            [[r"\bw_o\b"], [r"767"]])
        # Two parameters written [B, S] that disagree at run time.
        add("bert_layer mismatched S (mask S+1)",
            lambda d: self.bert_args(d, {"B": 1, "S": 7}, 7, replace={"mask": f32(1, 8)}),
            [[r"\bmask\b", r"\bS\b"], [r"\b8\b"]])
        # Wrong dtypes.
        add("bert_layer wrong dtype (w_o float64)",
            lambda d: self.bert_args(
                d, {"B": 1, "S": 7}, 8,
                replace={"w_o": self.model_weights(BERT)["w_o"].astype(np.float64)}),
            [[r"\bw_o\b"], [r"\bf64\b", r"(?i)float64", r"(?i)double", r"(?i)dtype"]])
        add("bert_layer wrong dtype (mask int64)",
            lambda d: self.bert_args(d, {"B": 1, "S": 7}, 9,
                                     replace={"mask": np.zeros((1, 7), dtype=np.int64)}),
            [[r"\bmask\b"], [r"\bi64\b", r"(?i)int64", r"(?i)dtype"]])

        # A truncated .npy: the header is intact, half of the data is gone.
        def truncated(d: str) -> list[str]:
            args = self.bert_args(d, {"B": 1, "S": 7}, 10)
            path = os.path.join(d, "x.npy")
            size = os.path.getsize(path)
            with open(path, "r+b") as f:
                f.truncate(size - (size - 128) // 2)
            return args
        add("bert_layer truncated x.npy", truncated, [[r"x\.npy"]])

        # Not a .npy at all.
        def corrupt(d: str) -> list[str]:
            args = self.bert_args(d, {"B": 1, "S": 7}, 11)
            with open(os.path.join(d, "mask.npy"), "wb") as f:
                f.write(b"this is not a numpy file\n")
            return args
        add("bert_layer corrupt mask.npy", corrupt, [[r"mask\.npy"]])

        # A header that claims more data than there is.
        def bad_header(d: str) -> list[str]:
            args = self.bert_args(d, {"B": 1, "S": 7}, 12)
            path = os.path.join(d, "b_o.npy")
            data = bytearray(open(path, "rb").read())
            header = data[:128].replace(b"(768,)", b"(999,)")
            open(path, "wb").write(bytes(header) + data[128:])
            return args
        add("bert_layer .npy header/data size mismatch", bad_header, [[r"b_o\.npy"]])

        # A file that does not exist.
        def nonexistent(d: str) -> list[str]:
            args = self.bert_args(d, {"B": 1, "S": 7}, 13)
            os.remove(os.path.join(d, "g2.npy"))
            return args
        add("bert_layer nonexistent g2.npy", nonexistent, [[r"g2\.npy"]])

        # A missing weight and no --random-weights.
        add("bert_layer missing weight w2",
            lambda d: self.bert_args(d, {"B": 1, "S": 7}, 14, omit=("w2",)),
            [[r"\bw2\b"]])
        # Only x given, no weight and no --random-weights: the error names a missing weight.
        add("mlp missing everything but x",
            lambda d: ["run", self.dsc_file(MLP),
                       *save_inputs(d, {"x": f32(2, 784)}), f"--output={d}/out"],
            [[r"\bw1\b", r"\bb1\b", r"\bw2\b", r"\bb2\b"]])
        # An --input for a parameter the function does not have.
        add("bert_layer unknown parameter name",
            lambda d: [*self.bert_args(d, {"B": 1, "S": 7}, 15),
                       "--input", f"nosuch={os.path.join(d, 'x.npy')}"],
            [[r"\bnosuch\b"]])
        return cases


# ---------------------------------------------------------------------------------------------
# --self-test: the reference and the tolerance, without dscc
# ---------------------------------------------------------------------------------------------

def self_test() -> list[tuple[str, Outcome]]:
    results = []
    for m in MODELS:
        weights = m.draw_weights(SEED)
        for i, sym in enumerate(m.shapes):
            arrays = m.draw(sym, SEED + 100 + i, weights)
            # A correct f32 implementation must pass, every result of it.
            refs, outs = m.reference(arrays), m.reference(arrays, dtype=np.float32)
            if not isinstance(refs, tuple):
                refs, outs = (refs,), (outs,)
            for r, (ref, out32) in enumerate(zip(refs, outs)):
                ok, detail = compare(out32.astype(np.float32), ref)
                which = f" output{r}" if len(refs) > 1 else ""
                results.append((f"self-test {m.name} {sym_text(sym)}{which} f32 numpy passes",
                                Outcome(ok, detail)))
    # Deliberate mistakes must fail, at a shape where each matters (S > 1 for the attention
    # ones, and a mask that hides some keys).
    arrays = BERT.draw({"B": 2, "S": 13}, SEED + 200, BERT.draw_weights(SEED))
    arrays["mask"][0, 5:] = -10000.0
    ref = BERT.reference(arrays)
    for mistake in ["tanh-gelu", "unbiased-variance", "no-b_o", "no-mask", "softmax-axis",
                    "unscaled-scores"]:
        wrong = bert_ref(arrays, dtype=np.float32, mistake=mistake).astype(np.float32)
        ok, detail = compare(wrong, ref)
        results.append((f"self-test bert_layer B=2,S=13 '{mistake}' is caught",
                        Outcome(not ok, detail)))
    return results


# ---------------------------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description="End-to-end numeric and error checks of `dscc run` on the examples.")
    ap.add_argument("--dscc", help="the dscc binary")
    ap.add_argument("--source-dir", help="the dsc source tree (holds examples/ and stdlib/)")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="seconds allowed per dscc run (default 600)")
    ap.add_argument("-k", "--filter", default=None,
                    help="run only the cases whose name matches this regular expression")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary directory of inputs and outputs (its path is printed)")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print dscc's stdout and stderr for failed cases")
    ap.add_argument("--via-build", action="store_true",
                    help="`dscc build` each example once to a .so and run that instead of the .dsc")
    ap.add_argument("--self-test", action="store_true",
                    help="check the NumPy reference and the tolerance only (no dscc needed)")
    ns = ap.parse_args(argv)

    results: list[tuple[str, Outcome]] = []

    def report(label: str, o: Outcome) -> None:
        results.append((label, o))
        print(f"{'PASS' if o.ok else 'FAIL'} {label}: {o.detail}", flush=True)

    if ns.self_test:
        for label, o in self_test():
            if ns.filter is None or re.search(ns.filter, label):
                report(label, o)
    else:
        if not ns.dscc or not ns.source_dir:
            ap.error("--dscc and --source-dir are required (or --self-test)")
        dscc = os.path.abspath(ns.dscc)
        source_dir = os.path.abspath(ns.source_dir)
        if not (os.path.isfile(dscc) and os.access(dscc, os.X_OK)):
            print(f"check_examples.py: error: --dscc {ns.dscc}: not an executable file",
                  file=sys.stderr)
            return 2
        for m in MODELS:
            if not os.path.isfile(os.path.join(source_dir, m.file)):
                print(f"check_examples.py: error: {m.file} not found under {source_dir}",
                      file=sys.stderr)
                return 2

        work = tempfile.mkdtemp(prefix="dsc-e2e-")
        try:
            checker = Checker(dscc, source_dir, work, ns.timeout, ns.verbose, ns.via_build)
            cases: list[tuple[str, Callable[[], Outcome]]] = []
            for m in MODELS:
                for i, sym in enumerate(m.shapes):
                    cases.append((f"{m.name} {sym_text(sym)}",
                                  (lambda m=m, sym=sym, i=i: checker.numeric(m, sym, SEED + 10 + i))))
            cases += checker.negative_cases()
            for label, run in cases:
                if ns.filter is not None and not re.search(ns.filter, label):
                    continue
                try:
                    o = run()
                except RuntimeError as e:  # dscc build failed (--via-build)
                    o = Outcome(False, str(e))
                except Exception as e:  # noqa: BLE001 - a bug here is a failed case, not a crash
                    o = Outcome(False, f"check_examples.py raised {type(e).__name__}: {e}")
                report(label, o)
        finally:
            if ns.keep:
                print(f"inputs and outputs kept in {work}", file=sys.stderr)
            else:
                shutil.rmtree(work, ignore_errors=True)

    passed = sum(1 for _, o in results if o.ok)
    failed = len(results) - passed
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not results else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
