"""Builds one dsc graph function and prints it as readable .dsc text.

An importer (onnx_import.py, torch_import.py) turns each node of its graph into calls on a
`Program`: parameters (`add_input`, and weights created on first use of a constant), values
defined by expressions (`define`, `define_tuple`), and the results (`set_returns`). Values
known at import time (`Value.const`, a numpy array, possibly of symbolic `Dim`s) need no code;
they become a literal, a `full(...)`, or a weight only where a run-time op reads them.

Printing (`Program.text`) aims at what a person would write:
- values no result depends on are dropped, and so are weights only they read;
- a value used once is written inline at its use (`nn.relu(matmul(x, w1) + b1)`) while the
  statement stays short; everything else is a `let` with a name derived from the source graph;
- names are valid dsc identifiers, unique in the function, never a keyword, op or symbol;
- `import nn` only when an `nn.` composite is called.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from . import dsc_tables, dtypes
from .symdim import Dim, as_dim, dim_text, simplify

# ---------------------------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------------------------

# Words a name must not be: the lexer's keywords, and the names of types (the dtypes, and the
# four kinds that lang/Resolve.cpp's type_names() adds to them; it keeps them in no table).
KEYWORDS = set(dsc_tables.names("keywords")) | set(dsc_tables.names("dtypes")) | \
    {"tensor", "int", "float", "str"}
# Op names, legal as value names in dsc but confusing to read: the graph ops, the intrinsics,
# and `nn`, the module the printed code imports.
OP_NAMES = set(dsc_tables.names("ops")) | set(dsc_tables.names("intrinsics")) | {"nn"}
RESERVED = KEYWORDS | OP_NAMES


def identifier(text: str, fallback: str = "v") -> str:
    """A valid dsc identifier made from `text`: other characters become `_`, runs of `_`
    collapse, a leading digit gets `fallback_` before it; never a keyword or an op name, never
    `_` alone nor an anonymous-dim name (`_d0`)."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", text)
    s = re.sub(r"_+", "_", s).strip("_")
    if not s:
        s = fallback
    if s[0].isdigit():
        s = f"{fallback}_{s}"
    if s in RESERVED:
        s += "_"
    return s


class Namer:
    """Unique names within one function (values and symbols share the namespace)."""

    def __init__(self, taken: Iterable[str] = ()):
        self.taken = set(RESERVED) | set(taken)

    def fresh(self, hint: str, fallback: str = "v") -> str:
        base = identifier(hint, fallback)
        if base not in self.taken:
            self.taken.add(base)
            return base
        stem = base.rstrip("_") if base.rstrip("_") else base
        n = 1
        while f"{stem}_{n}" in self.taken:
            n += 1
        name = f"{stem}_{n}"
        self.taken.add(name)
        return name


# ---------------------------------------------------------------------------------------------
# Literals
# ---------------------------------------------------------------------------------------------

def literal_text(v, dtype: str) -> str | None:
    """A dsc literal for one scalar of `dtype`, or None when there is none (inf, nan)."""
    if dtype == "bool":
        return "true" if bool(v) else "false"
    if dtype in ("i8", "i32", "i64"):
        return str(int(v))
    f = float(v)
    if not math.isfinite(f):
        return None
    # The shortest decimal that reads back as the same value (dsc parses a double and rounds
    # it to the dtype): positional for ordinary magnitudes, else scientific. A 16-bit float
    # is the value rounded to its dtype (a finite one out of range saturates: dtypes.py).
    if dtype in ("f16", "bf16"):
        f = float(dtypes.round_to(f, dtype))
        if not math.isfinite(f):
            return None
        s = dtypes.shortest_text(f, dtype).replace("e+", "e")
    elif f == 0.0 or 1e-4 <= abs(f) < 1e7:
        t = np.float64(f) if dtype == "f64" else np.float32(f)
        s = np.format_float_positional(t, unique=True, trim="0")
    else:
        t = np.float64(f) if dtype == "f64" else np.float32(f)
        s = np.format_float_scientific(t, unique=True, trim="-").replace("e+", "e")
    if "e" in s:
        mant, exp = s.split("e")
        exp = str(int(exp))
        s = f"{mant}e{exp}"
    elif "." not in s:
        s += ".0"
    return s


# ---------------------------------------------------------------------------------------------
# Values and expressions
# ---------------------------------------------------------------------------------------------

class Value:
    """A tensor of the function: a parameter, a defined value, or a constant known at import
    time (`const`: a numpy array; of dtype object when some elements are symbolic Dims)."""

    __slots__ = ("dtype", "shape", "hint", "const", "param", "defn", "name", "weight_data")

    def __init__(self, dtype: str, shape: Sequence, hint: str, const: np.ndarray | None = None):
        self.dtype = dtype
        self.shape = [simplify(d) for d in shape]
        self.hint = hint
        self.const = const
        self.param: str | None = None  # "input" or "weight"
        self.defn: "Def | None" = None
        self.name: str | None = None
        self.weight_data: np.ndarray | None = None

    @property
    def rank(self) -> int:
        return len(self.shape)

    def is_const(self) -> bool:
        return self.const is not None and self.param is None and self.defn is None

    def type_text(self) -> str:
        return f"{self.dtype}[{', '.join(dim_text(d) for d in self.shape)}]"

    def __repr__(self) -> str:
        return f"Value({self.hint}: {self.type_text()})"


# Precedence, loosest first (docs/language.md): || && comparisons + - * / % unary primary.
PREC = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3,
        "+": 4, "-": 4, "*": 5, "/": 5, "%": 5}
UNARY_PREC = 6
PRIMARY = 7


class Expr:
    def refs(self) -> list[Value]:
        return []

    def calls_nn(self) -> bool:
        return False


@dataclass
class Ref(Expr):
    value: Value

    def refs(self):
        return [self.value]


@dataclass
class Lit(Expr):
    text: str


@dataclass
class Raw(Expr):
    """Text printed as is: an attribute (`-1`, `true`, `1e-12`)."""
    text: str


@dataclass
class Str(Expr):
    text: str


@dataclass
class Dims(Expr):
    """A shape or an axis list: `[B, S*12, 64]`."""
    dims: list


@dataclass
class DimArg(Expr):
    """One integer expression over symbols passed as a value (`end=S - 1`)."""
    dim: object


@dataclass
class TensorList(Expr):
    items: list[Expr]

    def refs(self):
        return [v for e in self.items for v in e.refs()]

    def calls_nn(self):
        return any(e.calls_nn() for e in self.items)


@dataclass
class Call(Expr):
    fn: str
    args: list[Expr]
    kwargs: list[tuple[str, Expr]] = field(default_factory=list)

    def refs(self):
        return [v for e in self.args for v in e.refs()] + \
               [v for _, e in self.kwargs for v in e.refs()]

    def calls_nn(self):
        return self.fn.startswith("nn.") or any(e.calls_nn() for e in self.args) or \
            any(e.calls_nn() for _, e in self.kwargs)


@dataclass
class Bin(Expr):
    op: str
    a: Expr
    b: Expr

    def refs(self):
        return self.a.refs() + self.b.refs()

    def calls_nn(self):
        return self.a.calls_nn() or self.b.calls_nn()


@dataclass
class Unary(Expr):
    op: str  # "-" or "!"
    a: Expr

    def refs(self):
        return self.a.refs()

    def calls_nn(self):
        return self.a.calls_nn()


@dataclass
class Def:
    outputs: list[Value]
    expr: Expr
    is_tuple: bool = False


# ---------------------------------------------------------------------------------------------
# The program
# ---------------------------------------------------------------------------------------------

INLINE_MAX = 64      # an inlined value's own text at most this long
STATEMENT_MAX = 96   # a statement's expression kept within this, values named to get there
LINE_MAX = 100       # the signature wraps here


class Program:
    def __init__(self, name: str):
        self.fn_name = identifier(name, "model")
        self.inputs: list[Value] = []
        self.weights: list[Value] = []
        self.defs: list[Def] = []
        self.returns: list[Value] = []
        self.symbols: list[str] = []
        self.namer = Namer([self.fn_name])
        self.header: list[str] = []
        # The `where` clauses, when an importer knows more than `SYM >= 1` (torch.export's
        # ranges and guards); None writes `SYM >= 1` for each symbol an input's shape names.
        self.where_clauses: list[str] | None = None
        # id(constant) -> (the constant, its weight): the constant is kept alive, so that its
        # id is never reused by a later constant (a converter's temporary, such as a
        # transposed or folded copy) that would then get the wrong weight.
        self._weight_of: dict[int, tuple[Value, Value]] = {}
        # name -> text of a prim the function may call (torch2dsc's cumsum), printed before the
        # function when a live value calls it.
        self.prims: dict[str, str] = {}

    # -- symbols and parameters -----------------------------------------------------------

    def add_symbol(self, hint: str) -> str:
        """A new symbol named after `hint` (sanitized, unique); keeps valid names as they are."""
        name = self.namer.fresh(hint, "D")
        self.symbols.append(name)
        return name

    def add_input(self, hint: str, dtype: str, shape: Sequence) -> Value:
        v = Value(dtype, shape, hint)
        v.param = "input"
        v.name = self.namer.fresh(hint, "input")
        self.inputs.append(v)
        return v

    def weight(self, c: Value) -> Value:
        """The weight parameter holding the constant `c` (made on first use)."""
        w = self._weight_of.get(id(c), (None, None))[1]
        if w is None:
            data = np.require(c.const, requirements="C")  # keeps 0-d arrays 0-d
            w = Value(c.dtype, list(data.shape), c.hint)
            w.param = "weight"
            w.name = self.namer.fresh(c.hint, "w")
            w.weight_data = data
            self.weights.append(w)
            self._weight_of[id(c)] = (c, w)
        return w

    def add_prim(self, name: str, text: str) -> None:
        """A prim of the module (its whole text); its name is no value's."""
        if name not in self.prims:
            self.prims[name] = text
            self.namer.taken.add(name)

    # -- values ---------------------------------------------------------------------------

    def define(self, expr: Expr, dtype: str, shape: Sequence, hint: str) -> Value:
        v = Value(dtype, shape, hint)
        v.defn = Def([v], expr)
        self.defs.append(v.defn)
        return v

    def define_tuple(self, expr: Expr, outs: list[tuple[str, Sequence, str]]) -> list[Value]:
        vals = [Value(d, s, h) for d, s, h in outs]
        d = Def(vals, expr, is_tuple=True)
        for v in vals:
            v.defn = d
        self.defs.append(d)
        return vals

    def constant(self, array: np.ndarray, dtype: str, hint: str) -> Value:
        return Value(dtype, list(array.shape), hint, const=array)

    def set_returns(self, values: list[Value]) -> None:
        """The function's results; a result known at import time is returned as a weight."""
        self.returns = [self.weight(v) if v.is_const() else v for v in values]

    # -- printing -------------------------------------------------------------------------

    def text(self) -> str:
        live, uses = self._liveness()
        lines: list[str] = []
        pending: dict[int, tuple[str, int]] = {}  # id(value) -> (text, prec), inlined at its use
        body: list[str] = []
        n_statements = 0

        def name_of(v: Value) -> str:
            if v.name is None:
                v.name = self.namer.fresh(v.hint, "t")
            return v.name

        def render(e: Expr) -> tuple[str, int]:
            if isinstance(e, Ref):
                p = pending.get(id(e.value))
                if p is not None:
                    return p
                return name_of(e.value), PRIMARY
            if isinstance(e, (Lit, Raw)):
                return e.text, (UNARY_PREC if e.text.startswith("-") else PRIMARY)
            if isinstance(e, Str):
                return '"' + e.text.replace("\\", "\\\\").replace('"', '\\"') + '"', PRIMARY
            if isinstance(e, Dims):
                return "[" + ", ".join(dim_text(d) for d in e.dims) + "]", PRIMARY
            if isinstance(e, DimArg):
                return dim_text(e.dim), PRIMARY  # a keyword argument's value: never an operand
            if isinstance(e, TensorList):
                return "[" + ", ".join(render(x)[0] for x in e.items) + "]", PRIMARY
            if isinstance(e, Call):
                parts = [render(a)[0] for a in e.args]
                parts += [f"{k}={render(v)[0]}" for k, v in e.kwargs]
                return f"{e.fn}({', '.join(parts)})", PRIMARY
            if isinstance(e, Unary):
                t, p = render(e.a)
                if p < PRIMARY:
                    t = f"({t})"
                return f"{e.op}{t}", UNARY_PREC
            if isinstance(e, Bin):
                prec = PREC[e.op]
                ta, pa = render(e.a)
                tb, pb = render(e.b)
                if pa < prec or (prec == 3 and pa == 3):
                    ta = f"({ta})"
                if pb <= prec:
                    tb = f"({tb})"
                return f"{ta} {e.op} {tb}", prec
            raise TypeError(e)

        def fit(e: Expr) -> tuple[str, int]:
            """Renders e; while too long, names the longest value inlined into it."""
            while True:
                t, p = render(e)
                inlined = [v for v in _direct_refs(e) if id(v) in pending]
                if len(t) <= STATEMENT_MAX or not inlined:
                    return t, p
                longest = max(inlined, key=lambda v: len(pending[id(v)][0]))
                emit_let(longest, pending.pop(id(longest))[0])

        def emit_let(v: Value, t: str) -> None:
            nonlocal n_statements
            body.append(f"  let {name_of(v)} = {t}")
            n_statements += 1

        for d in self.defs:
            if id(d) not in live:
                continue
            t, p = fit(d.expr)
            if d.is_tuple:
                names = [name_of(v) if uses[id(v)] else "_" for v in d.outputs]
                body.append(f"  let {', '.join(names)} = {t}")
                n_statements += 1
                continue
            v = d.outputs[0]
            if uses[id(v)] == 1 and len(t) <= INLINE_MAX:
                pending[id(v)] = (t, p)
            else:
                emit_let(v, t)

        rets = [Ref(v) for v in self.returns]
        if len(rets) == 1:
            t, _ = fit(rets[0])
        else:
            t, _ = fit(TensorList(rets))
            t = "(" + t[1:-1] + ")"
        body.append(f"  return {t}")
        n_statements += 1
        self.statement_count = n_statements

        uses_nn = any(d.expr.calls_nn() for d in self.defs if id(d) in live)
        lines += [f"# {h}" if h else "#" for h in self.header]
        if uses_nn:
            lines.append("import nn")
        if lines:
            lines.append("")
        called = "\n".join(body)
        for name, text in self.prims.items():
            if re.search(rf"\b{re.escape(name)}\(", called):
                lines += text.rstrip("\n").split("\n") + [""]
        lines += self._signature(live_weights=self.live_weights)
        lines.append("{")
        lines += body
        lines.append("}")
        return "\n".join(lines) + "\n"

    def operand(self, v: Value) -> Expr:
        """The expression that reads v: its name, or a literal / weight for a constant."""
        if v.param is not None or v.defn is not None:
            return Ref(v)
        assert v.const is not None
        if v.const.ndim == 0 and v.const.dtype != object:
            t = literal_text(v.const.item(), v.dtype)
            if t is not None:
                return Lit(t)
        return Ref(self.weight(v))

    def _liveness(self) -> tuple[set[int], Counter]:
        """The defs some result depends on, and how often each live value is read."""
        live: set[int] = set()
        uses: Counter = Counter()
        stack = list(self.returns)
        for v in self.returns:
            uses[id(v)] += 1
        seen_vals: set[int] = set()
        self.live_weights: set[int] = set()
        while stack:
            v = stack.pop()
            if id(v) in seen_vals:
                continue
            seen_vals.add(id(v))
            if v.param == "weight":
                self.live_weights.add(id(v))
            d = v.defn
            if d is None or id(d) in live:
                continue
            live.add(id(d))
            for r in d.expr.refs():
                uses[id(r)] += 1
                stack.append(r)
        return live, uses

    def weight_arrays(self) -> dict[str, np.ndarray]:
        """The live weights by name, as the .safetensors file stores them (bf16 as bits)."""
        return {w.name: dtypes.storage(w.weight_data, w.dtype)
                for w in self.live_weight_values()}

    def live_weight_values(self) -> list[Value]:
        if not hasattr(self, "live_weights"):
            self._liveness()
        return [w for w in self.weights if id(w) in self.live_weights]

    def _signature(self, live_weights: set[int]) -> list[str]:
        params = [f"{v.name}: {v.type_text()}" for v in self.inputs]
        params += [f"{w.name}: {w.type_text()}" for w in self.weights if id(w) in live_weights]
        if len(self.returns) == 1:
            ret = self.returns[0].type_text()
        else:
            ret = "(" + ", ".join(v.type_text() for v in self.returns) + ")"
        head = f"fn {self.fn_name}("
        indent = " " * len(head)
        lines, cur = [], head
        for i, p in enumerate(params):
            piece = p + ("," if i + 1 < len(params) else ")")
            if cur not in (head, indent) and len(cur) + 1 + len(piece) > LINE_MAX:
                lines.append(cur.rstrip())
                cur = indent + piece
            else:
                cur += ("" if cur in (head, indent) else " ") + piece
        if not params:
            cur += ")"
        if len(cur) + len(" -> ") + len(ret) <= LINE_MAX:
            lines.append(f"{cur} -> {ret}")
        else:
            lines.append(cur)
            lines.append(f"    -> {ret}")
        used_syms = set()
        for v in self.inputs:
            for d in v.shape:
                if isinstance(d, Dim):
                    used_syms |= d.symbols()
        clauses = [f"{s} >= 1" for s in self.symbols if s in used_syms]
        if self.where_clauses is not None:
            clauses = list(self.where_clauses)
        if clauses:
            lines.append("  where " + ", ".join(clauses))
        return lines


def slice_kwargs(axis_txt: str, start, end, dim, step: int) -> list:
    """The keyword arguments of `slice` along one axis of size dim: the axis, then start, end
    and step where they differ from 0, dim and 1."""
    kw: list = [("axis", Raw(axis_txt))]
    if not as_dim(start).same(0):
        kw.append(("start", DimArg(start)))
    if not as_dim(end).same(dim):
        kw.append(("end", DimArg(end)))
    if step != 1:
        kw.append(("step", Raw(str(step))))
    return kw


def define_split(prog: "Program", operand: Expr, dtype: str, shape: Sequence, axis: int,
                 axis_txt: str, sizes: Sequence, hints: Sequence[str]) -> list[Value]:
    """`let a, b, ... = split(operand, k or [sizes], axis=)`: the count when the sizes are
    equal, else the sizes; one value of `shape` with `sizes[i]` at `axis` per hint."""
    equal = all(as_dim(s).same(sizes[0]) for s in sizes)
    sections: Expr = Raw(str(len(sizes))) if equal else Dims(list(sizes))
    outs = []
    for s, hint in zip(sizes, hints):
        piece = list(shape)
        piece[axis] = s
        outs.append((dtype, piece, hint))
    return prog.define_tuple(Call("split", [operand, sections], [("axis", Raw(axis_txt))]), outs)


def broadcast_axes(shapes: list[list], rank: int):
    """For each axis i of a broadcast to rank, (i, the dims of shapes there other than 1),
    the shapes aligned at their last axes."""
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        yield i, [d for d in dims if not (isinstance(d, int) and d == 1)]


def _direct_refs(e: Expr) -> list[Value]:
    return e.refs()
