"""Symbolic tensor dimensions for the importers.

A `Dim` is an integer expression over named symbols: a polynomial with integer coefficients
whose variables are atoms. An atom is a symbol (`S`) or an operation the polynomial cannot
express exactly (`(S + 1)/2`, `S % 8`, `min(S, 4)`, `max(S, 1)`), kept opaque and compared by
its printed form. Polynomials are kept in a canonical form (monomials sorted, zero terms
dropped), so two Dims built the same way compare equal, and `B*S*16 / (S*16)` is `B`.

Semantics follow dsc (docs/symbolic.md): `/` and `%` are floor division and floor modulo.
Every symbol is a dynamic tensor dimension that the importers declare `where S >= 1`, so
comparisons are decided under S >= 1 (`S - 1 >= 0` holds; `S - 4 >= 0` is undecided). Dims print in .dsc syntax (`S*12`, `S - 1`,
`(S + 1)/2`, `min(S, 4)`), which is what the generated code writes in shapes and slice bounds.

A Dim works with numpy object arrays: `+ - * // %`, unary `-`, and comparisons. A comparison
that the canonical forms do not decide (is `B == S`?) raises `Undecided`: the importer folds
shape computations only when their result is certain.
"""

from __future__ import annotations

import contextlib
from typing import Iterable, Union

import numpy as np

IntLike = Union[int, np.integer, "Dim"]


class Undecided(Exception):
    """A comparison of Dims that the canonical forms do not decide."""


def _as_dim(x: IntLike) -> "Dim":
    if isinstance(x, Dim):
        return x
    if isinstance(x, (bool, np.bool_)):
        raise TypeError("a bool is not a dimension")
    if isinstance(x, (int, np.integer)):
        return Dim.const(int(x))
    raise TypeError(f"not a dimension: {x!r}")


class Dim:
    """An immutable canonical polynomial over atoms: terms is a sorted tuple of
    (monomial, coefficient) with monomial a sorted tuple of atom texts (repeated for powers)
    and no zero coefficient; the constant term has the empty monomial."""

    __slots__ = ("terms",)

    def __init__(self, terms: Iterable[tuple[tuple[str, ...], int]]):
        acc: dict[tuple[str, ...], int] = {}
        for mono, coeff in terms:
            mono = tuple(sorted(mono, key=_atom_order))
            acc[mono] = acc.get(mono, 0) + int(coeff)
        self.terms = tuple(sorted(((m, c) for m, c in acc.items() if c != 0),
                                  key=lambda mc: (len(mc[0]) == 0, mc[0])))

    # -- construction ---------------------------------------------------------------------

    @staticmethod
    def const(v: int) -> "Dim":
        return Dim([((), int(v))])

    @staticmethod
    def symbol(name: str) -> "Dim":
        return Dim([((name,), 1)])

    @staticmethod
    def _atom(text: str) -> "Dim":
        return Dim([((text,), 1)])

    # -- queries --------------------------------------------------------------------------

    def is_const(self) -> bool:
        return all(not m for m, _ in self.terms)

    def value(self) -> int | None:
        """The integer value when the Dim is a constant, else None."""
        if not self.terms:
            return 0
        if self.is_const():
            return self.terms[0][1]
        return None

    def atoms(self) -> set[str]:
        return {a for m, _ in self.terms for a in m}

    def symbols(self) -> set[str]:
        """The plain symbols this Dim mentions (atoms that are identifiers)."""
        out = set()
        for a in self.atoms():
            if a.isidentifier():
                out.add(a)
            else:
                out.update(_identifiers_in(a))
        return out

    def lower_bound(self) -> int | None:
        """A lower bound that holds for every symbol >= 1 (the importers write `where S >= 1`
        for each symbol; under `symbol_minimums`, >= its minimum) and every opaque atom >= 0,
        or None when the form shows none (a negative coefficient on a non-constant term)."""
        lb = 0
        for m, c in self.terms:
            if not m:
                lb += c
                continue
            if c < 0:
                return None
            if not all(_atom_nonneg(a) for a in m):
                return None
            lb += c * _monomial_min(m) if all(a.isidentifier() for a in m) else 0
        return lb

    def known_nonnegative(self) -> bool:
        lb = self.lower_bound()
        return lb is not None and lb >= 0

    def key(self) -> tuple:
        return self.terms

    def __hash__(self) -> int:
        return hash(self.terms)

    # -- arithmetic -----------------------------------------------------------------------

    def __add__(self, o: IntLike) -> "Dim":
        o = _as_dim(o)
        return Dim(self.terms + o.terms)

    __radd__ = __add__

    def __neg__(self) -> "Dim":
        return Dim((m, -c) for m, c in self.terms)

    def __sub__(self, o: IntLike) -> "Dim":
        return self + (-_as_dim(o))

    def __rsub__(self, o: IntLike) -> "Dim":
        return _as_dim(o) - self

    def __mul__(self, o: IntLike) -> "Dim":
        o = _as_dim(o)
        return Dim((m1 + m2, c1 * c2) for m1, c1 in self.terms for m2, c2 in o.terms)

    __rmul__ = __mul__

    def __floordiv__(self, o: IntLike) -> "Dim":
        o = _as_dim(o)
        a, b = self.value(), o.value()
        if b == 0:
            return Dim.const(0)  # dsc: x / 0 is 0
        if a is not None and b is not None:
            return Dim.const(a // b)
        if b == 1:
            return self
        if b is not None and all(c % b == 0 for _, c in self.terms):
            return Dim((m, c // b) for m, c in self.terms)
        q = self._divide_by_monomial(o)
        if q is not None:
            return q
        if self.same(o):
            return Dim.const(1)
        return _opaque(f"{self._operand()}/{o._operand()}",
                       self.known_nonnegative() and o.known_nonnegative())

    def __rfloordiv__(self, o: IntLike) -> "Dim":
        return _as_dim(o) // self

    def __mod__(self, o: IntLike) -> "Dim":
        o = _as_dim(o)
        a, b = self.value(), o.value()
        if b == 0:
            return self  # dsc: x % 0 is x
        if a is not None and b is not None:
            return Dim.const(a % b)
        if b is not None and all(c % b == 0 for _, c in self.terms):
            return Dim.const(0)
        if self._divide_by_monomial(o) is not None:
            return Dim.const(0)
        return _opaque(f"{self._operand()} % {o._operand()}",
                       self.known_nonnegative() and o.known_nonnegative())

    def __rmod__(self, o: IntLike) -> "Dim":
        return _as_dim(o) % self

    def _divide_by_monomial(self, o: "Dim") -> "Dim | None":
        """self / o when o is one term c*m and every term of self is a multiple of it."""
        if len(o.terms) != 1:
            return None
        (om, oc), = o.terms
        if not om:
            return None
        out = []
        for m, c in self.terms:
            rest = list(m)
            for a in om:
                if a not in rest:
                    return None
                rest.remove(a)
            if c % oc:
                return None
            out.append((tuple(rest), c // oc))
        return Dim(out)

    # -- comparisons ----------------------------------------------------------------------

    def decide_eq(self, o: IntLike) -> bool | None:
        """True or False when decided (symbols >= 1), None when not."""
        d = self - _as_dim(o)
        v = d.value()
        if v is not None:
            return v == 0
        for x in (d, -d):
            lb = x.lower_bound()
            if lb is not None and lb >= 1:
                return False
        return None

    def decide_lt(self, o: IntLike) -> bool | None:
        """self < o, when decided (symbols >= 1)."""
        o = _as_dim(o)
        lb = (o - self).lower_bound()
        if lb is not None and lb >= 1:
            return True
        lb = (self - o).lower_bound()
        if lb is not None and lb >= 0:
            return False
        return None

    def _decided(self, r: bool | None, what: str, o: IntLike) -> bool:
        if r is None:
            raise Undecided(f"cannot decide {self} {what} {_as_dim(o)} at import time")
        return r

    def __eq__(self, o: object) -> bool:  # type: ignore[override]
        if not isinstance(o, (Dim, int, np.integer)) or isinstance(o, (bool, np.bool_)):
            return NotImplemented
        return self._decided(self.decide_eq(o), "==", o)

    def __ne__(self, o: object) -> bool:  # type: ignore[override]
        r = self.__eq__(o)
        return r if r is NotImplemented else not r

    def __lt__(self, o: IntLike) -> bool:
        return self._decided(self.decide_lt(o), "<", o)

    def __gt__(self, o: IntLike) -> bool:
        return self._decided(_as_dim(o).decide_lt(self), ">", o)

    def __le__(self, o: IntLike) -> bool:
        r = _as_dim(o).decide_lt(self)
        return self._decided(None if r is None else not r, "<=", o)

    def __ge__(self, o: IntLike) -> bool:
        r = self.decide_lt(o)
        return self._decided(None if r is None else not r, ">=", o)

    def same(self, o: IntLike) -> bool:
        """Structural (canonical) equality, never raises."""
        return self.terms == _as_dim(o).terms

    # -- printing -------------------------------------------------------------------------

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        out = ""
        for i, (m, c) in enumerate(self.terms):
            neg = c < 0
            body = _term_text(m, abs(c))
            if i == 0:
                out = ("-" + body) if neg else body
            else:
                out += (" - " if neg else " + ") + body
        return out

    __repr__ = __str__

    def _operand(self) -> str:
        """The text, parenthesized unless it is a single factor."""
        s = str(self)
        if len(self.terms) == 1:
            m, c = self.terms[0]
            if (c >= 0 and len(m) + (c != 1) <= 1 and not (m and _is_compound(m[0]))):
                return s
        return f"({s})"


def _atom_order(atom: str) -> tuple:
    """Symbols first, by name; then opaque atoms."""
    return (not atom.isidentifier(), atom)


def _is_compound(atom: str) -> bool:
    return not (atom.isidentifier() or atom.startswith("min(") or atom.startswith("max("))


def _term_text(mono: tuple[str, ...], c: int) -> str:
    factors = [f"({a})" if _is_compound(a) and (len(mono) > 1 or c != 1) else a for a in mono]
    if c != 1 or not factors:
        factors.append(str(c))
    return "*".join(factors)


def _identifiers_in(text: str) -> set[str]:
    import re
    return {t for t in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text) if t not in ("min", "max")}


def _atom_nonneg(atom: str) -> bool:
    # Symbols are dims (>= 0); an opaque atom is built only from nonnegative parts by the
    # importers (floordiv/mod of sizes, min/max of sizes), with min(a, negative) excluded below.
    if atom.isidentifier():
        return True
    return _ATOM_NONNEG.get(atom, False)


_ATOM_NONNEG: dict[str, bool] = {}

# Symbols whose least value is not 1 (torch.export's `Dim("P", min=0)`); see
# `symbol_minimums`. Every other symbol is at least 1.
_SYMBOL_MIN: dict[str, int] = {}


def _monomial_min(mono: tuple[str, ...]) -> int:
    out = 1
    for a in mono:
        out *= _SYMBOL_MIN.get(a, 1)
    return out


@contextlib.contextmanager
def symbol_minimums(mins: dict[str, int]):
    """Within the block, decisions take each symbol of `mins` to be at least its value (>= 0)
    instead of 1: an importer whose source declares ranges (torch.export) sets them."""
    saved = dict(_SYMBOL_MIN)
    _SYMBOL_MIN.update({k: max(int(v), 0) for k, v in mins.items()})
    try:
        yield
    finally:
        _SYMBOL_MIN.clear()
        _SYMBOL_MIN.update(saved)


def _opaque(text: str, nonneg: bool) -> Dim:
    _ATOM_NONNEG[text] = nonneg
    return Dim._atom(text)


def dmin(a: IntLike, b: IntLike) -> Dim:
    a, b = _as_dim(a), _as_dim(b)
    if a.same(b) or b.decide_lt(a) is False:  # b >= a
        return a
    if a.decide_lt(b) is False:  # a >= b
        return b
    x, y = sorted([a, b], key=lambda d: (d.is_const(), str(d)))
    return _opaque(f"min({x}, {y})", x.known_nonnegative() and y.known_nonnegative())


def dmax(a: IntLike, b: IntLike) -> Dim:
    a, b = _as_dim(a), _as_dim(b)
    if a.same(b) or a.decide_lt(b) is False:  # a >= b
        return a
    if b.decide_lt(a) is False:  # b >= a
        return b
    x, y = sorted([a, b], key=lambda d: (d.is_const(), str(d)))
    return _opaque(f"max({x}, {y})", x.known_nonnegative() or y.known_nonnegative())


def as_dim(x: IntLike) -> Dim:
    return _as_dim(x)


def simplify(x: IntLike) -> IntLike:
    """An int when the Dim is constant, else the Dim."""
    if isinstance(x, Dim):
        v = x.value()
        return x if v is None else v
    return int(x)


def dim_text(x: IntLike) -> str:
    return str(_as_dim(x))


def product(dims: Iterable[IntLike]) -> Dim:
    out = Dim.const(1)
    for d in dims:
        out = out * _as_dim(d)
    return out
