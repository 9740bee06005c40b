"""Shape inference and the prover, as `dscc check` and `dscc prove` show them."""

from __future__ import annotations

import dataclasses
import os

from . import _dsc
from .source import read_source

__all__ = ["CheckResult", "Proof", "check", "prove"]


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """What shape inference found in a module (`dscc check --emit=shapes` / `--emit=facts`).

    shapes: every fn's signature, then each binding as `name: dtype[dims]` in source order.
    facts: each shape fact the compiler needed, with its location and how it was decided
    (proved from the `where` clauses, or left to a run-time check).
    """

    shapes: str
    facts: str

    def __str__(self) -> str:
        return self.shapes


@dataclasses.dataclass(frozen=True)
class Proof:
    """The prover's verdict on a fact: "proved", "disproved" (with a counterexample: values of
    every symbol that satisfy the assumptions and falsify the fact) or "unknown" (with the
    reason). True exactly when proved."""

    fact: str
    verdict: str
    counterexample: dict[str, int] | None
    reason: str = ""

    def __bool__(self) -> bool:
        return self.verdict == "proved"

    def __str__(self) -> str:
        if self.counterexample:
            values = ", ".join(f"{k}={v}" for k, v in self.counterexample.items())
            return f"disproved: {values}"
        return self.verdict + (f" ({self.reason})" if self.reason else "")


def check(source: str | os.PathLike) -> CheckResult:
    """Parses and shape-checks `source` (.dsc text or a path) without compiling it.

    >>> r = dsc.check("fn f(x: f32[N, 4]) -> f32[N, 2] where N >= 1 { return x[:, 0:2]; }")
    >>> print(r.shapes)           # doctest: +SKIP

    Raises dsc.CompileError with the diagnostics when the source has errors.
    """
    text, name = read_source(source)
    shapes, facts = _dsc.check(text, name)
    return CheckResult(shapes, facts)


def prove(fact: str, assume: list[str] | tuple[str, ...] = (), *, timeout_ms: int = 1000) -> Proof:
    """Decides whether `fact` holds for every value of its symbols (all are tensor dims, so
    each is >= 0) that satisfies the assumptions.

    >>> dsc.prove("n*4/2 == 2*n")
    Proof(fact='n*4/2 == 2*n', verdict='proved', counterexample=None, reason='')
    >>> str(dsc.prove("S*2 <= 1024", assume=["S <= 600"]))
    'disproved: S=513'

    Syntax: integers, symbols, + - * / % (floordiv and floormod, as in Python), min, max,
    comparisons (chainable: 1 <= S <= 512), && || !, parentheses. A fact that does not parse
    raises dsc.CompileError.
    """
    if isinstance(assume, str):
        assume = [assume]
    verdict, counterexample, reason = _dsc.prove(fact, list(assume), int(timeout_ms))
    return Proof(fact, verdict, dict(counterexample) if verdict == "disproved" else None, reason)
