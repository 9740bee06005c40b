"""torch's symbolic sizes (sympy expressions, as torch.export records them on every node) as
symdim.Dim: `SymbolTable` maps each torch symbol (`s77`) to a dsc dim, and converts the
expressions over them (sums, products, floor division, min and max, torch's own sympy
functions). torch_import.py builds the table from the program's inputs.
"""

from __future__ import annotations

import math

import numpy as np
import sympy
import torch
from torch.utils._sympy import functions as symfn

from . import symdim
from .common import Unsupported
from .symdim import Dim, dmax, dmin


def sympy_int(e) -> int | None:
    try:
        if isinstance(e, (int, np.integer)):
            return int(e)
        if getattr(e, "is_Integer", False):
            return int(e)
    except (TypeError, ValueError):
        pass
    return None


_INFINITIES = ("IntInfinity", "NegativeIntInfinity", "Infinity", "NegativeInfinity")


def range_bound(v) -> int | None:
    """A range bound as an int; None for torch's infinities."""
    try:
        # torch's own infinities by name: IntInfinity is not in every torch version's symfn.
        if getattr(v, "is_infinite", False) or type(v).__name__ in _INFINITIES:
            return None
        return int(v)
    except (TypeError, ValueError, OverflowError):
        return None


class SymbolTable:
    """Maps torch's sympy symbols (`s77`) to dsc dims: a symbol of the function, or an
    expression over one (a derived dim `2*S` bound as its own symbol D makes S `D/2`)."""

    def __init__(self):
        self.map: dict[sympy.Symbol, Dim] = {}
        # A torch symbol that only a derived dim binds, as a rational expression over the
        # derived dim's own symbol: S = (D - b)/a for an input dim D = a*S + b.
        self.subst: dict[sympy.Symbol, sympy.Expr] = {}

    def dim(self, e) -> int | Dim:
        """A dsc dim for a torch size: an int, a SymInt or a sympy expression."""
        if isinstance(e, torch.SymInt):
            e = e.node.expr
        if isinstance(e, (int, np.integer)) and not isinstance(e, bool):
            return int(e)
        if self.subst and isinstance(e, sympy.Basic):
            e = e.xreplace(self.subst)
        return symdim.simplify(self._expr(e))

    def _polynomial(self, e) -> Dim | None:
        """A polynomial with rational coefficients over bound symbols (after a derived
        dim's substitution `4*S - 1` is `2*D - 1`), divided exactly where it must be."""
        gens = sorted(e.free_symbols, key=str)
        if not gens or not all(g in self.map for g in gens) or not e.is_polynomial(*gens):
            return None
        poly = sympy.Poly(sympy.expand(e), *gens)
        coeffs = [sympy.Rational(c) for c in poly.coeffs()]
        den = 1
        for c in coeffs:
            den = den * c.q // math.gcd(den, c.q)
        out = Dim.const(0)
        for monom, c in zip(poly.monoms(), coeffs):
            term = Dim.const(int(c * den))
            for g, k in zip(gens, monom):
                for _ in range(k):
                    term = term * self.map[g]
            out = out + term
        return out if den == 1 else out // den

    def _expr(self, e) -> Dim:
        v = sympy_int(e)
        if v is not None:
            return Dim.const(v)
        if self.subst and isinstance(e, (sympy.Add, sympy.Mul)):
            p = self._polynomial(e)
            if p is not None:
                return p
        if isinstance(e, sympy.Symbol):
            d = self.map.get(e)
            if d is None:
                what = ("a data-dependent size (torch's unbacked symbol " + str(e) + ")"
                        if str(e).startswith("u") else f"the size symbol {e}")
                raise Unsupported(f"{what}, which no input's shape binds")
            return d
        args = [self._expr(a) for a in e.args] if isinstance(e, sympy.Basic) else []
        if isinstance(e, sympy.Add):
            out = Dim.const(0)
            for a in args:
                out = out + a
            return out
        if isinstance(e, sympy.Mul):
            out = Dim.const(1)
            for a in args:
                out = out * a
            return out
        if isinstance(e, (sympy.Pow, symfn.PowByNatural)):
            n = sympy_int(e.args[1])
            if n is not None and 0 <= n <= 8:
                out = Dim.const(1)
                for _ in range(n):
                    out = out * args[0]
                return out
        if isinstance(e, (symfn.FloorDiv, symfn.CleanDiv)):
            return args[0] // args[1]
        if isinstance(e, symfn.CeilDiv):
            return (args[0] + args[1] - 1) // args[1]
        if isinstance(e, (symfn.Mod, symfn.PythonMod)):
            return args[0] % args[1]
        if isinstance(e, symfn.ModularIndexing):
            return (args[0] // args[1]) % args[2]
        if isinstance(e, (symfn.Min, sympy.Min)):
            out = args[0]
            for a in args[1:]:
                out = dmin(out, a)
            return out
        if isinstance(e, (symfn.Max, sympy.Max)):
            out = args[0]
            for a in args[1:]:
                out = dmax(out, a)
            return out
        if isinstance(e, symfn.Identity):
            return args[0]
        raise Unsupported(f"the size {e}, which dsc dims cannot express")
