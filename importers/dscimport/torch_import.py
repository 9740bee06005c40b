"""torch.export to dsc: one ExportedProgram becomes one dsc function (program.py prints it).

    result = import_program(torch.export.export(model, args, dynamic_shapes=...), name="bert")
    result.text      # the .dsc source
    result.weights   # {parameter name: numpy array}, for the .safetensors file
    to_dsc(ep, "out")  # the same, written to out/NAME.dsc and out/NAME.safetensors

How a program is read:
- User inputs are parameters; parameters, buffers and lifted constants are values known at
  import time, which become weights (named after their state-dict key: `fc1.weight` is
  `fc1_weight`) where a run-time op reads them, or literals when they are scalars.
- Every dynamic dim is a torch symbol (`s77`). It becomes a dsc symbol named after the
  `Dim` it came from (`Dim("S")` is `S`): from the names the caller gives, from the
  `dynamic_shapes` spec, or from the live shape environment of a fresh export; a program
  loaded from a .pt2 has lost them, and its symbols are `D0`, `D1`, ... unless named.
  torch's range constraints become `where 1 <= S <= 512`; a derived dim (`2*S` as an input's
  dim) gets its own symbol with a divisibility clause; torch's shape guards that are
  polynomial comparisons or divisibility become `where` clauses too.
- Shapes come from the symbolic shapes torch recorded on each node, converted from sympy to
  symdim.Dim (torch_symbols.py); shape arithmetic (`sym_size`, `mul` of sizes) is folded the
  same way.
- Each aten op becomes dsc through CONVERTERS (torch_node.py, filled by torch_ops.py,
  torch_nn.py, torch_layout.py and torch_index.py), high-level ops as nn.* composites (`aten.linear` is `nn.linear`,
  `aten.layer_norm` is `nn.layer_norm`), core ATen ops as dsc's primitive ops. An op whose
  tensor inputs are all known at import time is evaluated by torch itself (a weight's
  transpose is stored transposed).

Failure: every node that cannot be imported is collected (`Problem`: op, node name, source
location from the node's stack trace), and `ImportFailure` lists them all at once.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections import Counter

import numpy as np
import sympy
import torch

from . import dtypes, symdim, torch_index, torch_layout, torch_nn, torch_ops
from .common import (FOLD_LIMIT, ImportFailure, ImportResult, ModelError, Problem,
                     Unsupported, no_converter)
from .output import write_result
from .program import Call, Program, Value, identifier
from .symdim import Dim, Undecided, dmax, dmin
from .torch_node import (CONVERTERS, DTYPES, TORCH_DTYPES, Node, UnsupportedArg, dsc_dtype,
                         op_name, short_op, tensor_array)
from .torch_symbols import SymbolTable, range_bound, sympy_int

# The converters register themselves in torch_node's CONVERTERS when their modules are
# imported.
CONVERTER_MODULES = (torch_ops, torch_nn, torch_layout, torch_index)


class _Poisoned(Exception):
    """An input of the node comes from a node that was already reported."""


# ---------------------------------------------------------------------------------------------
# Source locations
# ---------------------------------------------------------------------------------------------

_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)\n(?:    (.*))?')


def _frames(trace: str | None) -> list[tuple[str, int, str, str]]:
    if not trace:
        return []
    return [(m.group(1), int(m.group(2)), m.group(3), (m.group(4) or "").strip())
            for m in _FRAME.finditer(trace)]


def _is_torch_frame(path: str) -> bool:
    p = path.replace("\\", "/")
    return "/torch/" in p or p.startswith("torch/") or p.startswith("<")


def user_frame(fx) -> tuple[str, int, str, str] | None:
    """The innermost frame of the node's stack trace outside torch itself."""
    frames = [f for f in _frames(fx.meta.get("stack_trace")) if not _is_torch_frame(f[0])]
    return frames[-1] if frames else None


def location(fx) -> str:
    f = user_frame(fx)
    if f is None:
        return ""
    path, line, fn, code = f
    return f"{path}:{line} in {fn}" + (f": {code}" if code else "")


# ---------------------------------------------------------------------------------------------
# Ops the importer treats specially
# ---------------------------------------------------------------------------------------------

# Nodes that compute nothing dsc needs: metadata checks and torch's run-time asserts (whose
# conditions are read as guards).
NO_OPS = {"aten._assert_tensor_metadata.default", "aten._assert_scalar.default",
          "aten.sym_constrain_range.default", "aten.sym_constrain_range_for_size.default",
          "aten._assert_async.msg", "aten._assert_async.default"}
# Ops evaluated on constants only when torch's result is well defined.
NO_FOLD = {"aten.empty.memory_format", "aten.empty_like.default", "aten.empty.default",
           "aten.empty_strided.default", "aten.dropout.default", "aten.native_dropout.default",
           "aten.rand.default", "aten.randn.default", "aten.bernoulli.default"}
# Ops whose folded result keeps the name of their input (a weight's transpose is the weight).
KEEP_NAME = {"permute", "t", "transpose", "view", "reshape", "_unsafe_view", "_to_copy", "to",
             "clone", "detach", "detach_", "lift_fresh_copy", "contiguous", "alias",
             "unsqueeze", "squeeze", "expand", "slice", "select", "type_as", "flatten"}


# ---------------------------------------------------------------------------------------------
# The importer
# ---------------------------------------------------------------------------------------------

class Importer:
    def __init__(self, ep, name: str, source: str, dim_names: dict | None,
                 dynamic_shapes=None):
        self.ep = ep
        self.graph = ep.graph
        self.prog = Program(name)
        self.source = source
        self.dim_names = {str(k): str(v) for k, v in (dim_names or {}).items()}
        self.dynamic_shapes = dynamic_shapes
        self.symbols = SymbolTable()
        self.env: dict = {}
        self.poisoned: set = set()
        self.problems: list[Problem] = []
        self.special_consts: dict = {}
        self.fold_memo: dict = {}
        self.hints: dict = {}
        self.value_users: Counter = Counter()
        self.ranges: dict[str, tuple[int, int | None]] = {}
        self.clauses: list[str] = []
        self.notes: list[str] = []
        self.guard_notes: list[str] = []
        self.input_dims: dict[str, list] = {}
        self.fills: dict[int, object] = {}  # id(Value) -> the scalar a `full` holds
        # A batch norm folded into the convolution before it (torch_nn.py): its fx node ->
        # the convolution's value, which the batch norm then returns.
        self.folded: dict = {}
        specs = ep.graph_signature.input_specs
        self.input_specs = {s.arg.name: s for s in specs if hasattr(s.arg, "name")}
        self.user_inputs = [n for n in self.graph.nodes if n.op == "placeholder" and
                            self._kind(n) == "USER_INPUT"]
        self._last_of_trace = self._trace_ends()

    def _kind(self, fx) -> str:
        s = self.input_specs.get(fx.name)
        return s.kind.name if s is not None else "USER_INPUT"

    # -- values ---------------------------------------------------------------------------

    def resolve(self, raw):
        if isinstance(raw, torch.fx.Node):
            if raw in self.poisoned and self.env.get(raw) is None:
                raise _Poisoned()
            if raw not in self.env:
                raise Unsupported(f"its input '{raw.name}' has no value")
            return self.env[raw]
        if isinstance(raw, (list, tuple)):
            return [self.resolve(x) for x in raw]
        if isinstance(raw, torch.SymInt):
            return self.symbols.dim(raw)
        return raw

    def set_value(self, fx, v) -> None:
        self.env[fx] = v
        for x in (v if isinstance(v, (list, tuple)) else [v]):
            if isinstance(x, Value):
                self.value_users[id(x)] += len(fx.users)

    # -- names ----------------------------------------------------------------------------

    def _trace_ends(self) -> dict:
        """For each stack trace, the last node (in graph order) computed on it."""
        last = {}
        for fx in self.graph.nodes:
            if fx.op != "call_function" or fx.target is _getitem:
                continue
            t = fx.meta.get("stack_trace")
            if t:
                last[t] = fx
        return last

    def hint_of(self, fx, i: int | None = None) -> str:
        key = (fx, i)
        h = self.hints.get(key)
        if h is None:
            h = self._hint(fx, i)
            self.hints[key] = h
        return h

    def _hint(self, fx, i: int | None) -> str:
        base = re.sub(r"(_\d+)+$", "", fx.name) or "t"
        frames = _frames(fx.meta.get("stack_trace"))
        # Called directly from the user's code, as the last op of a line `name = ...`.
        if frames and not _is_torch_frame(frames[-1][0]) and \
                self._last_of_trace.get(fx.meta.get("stack_trace")) is fx:
            code = frames[-1][3]
            code = "" if ";" in code else code  # several statements: which one is unknown
            m = re.match(r"^([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)", code)
            if m and m.group(1) != "_" and i is None:
                return m.group(1)
            m = re.match(r"^([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)+)\s*=(?!=)", code)
            if m and i is not None:
                names = [s.strip() for s in m.group(1).split(",")]
                if i < len(names) and len(names) == len(fx.meta.get("val") or ()):
                    return names[i]
        mod, leaf = self.module_of(fx)
        if mod:
            if leaf:
                return mod + ("" if i is None else f"_{i}")
            return f"{mod}_{base}" + ("" if i is None else f"_{i}")
        return base + ("" if i is None else f"_{i}")

    def module_of(self, fx) -> tuple[str | None, bool]:
        """The innermost module the node was computed in (`fc1`, `layers_0`), and whether it
        is one of torch.nn's own (whose whole result the node then is, as a rule)."""
        stack = fx.meta.get("nn_module_stack") or {}
        if not stack:
            return None, False
        path, cls = list(stack.values())[-1]
        cls = cls if isinstance(cls, str) else getattr(cls, "__module__", "") + "." + \
            getattr(cls, "__name__", "")
        parts = [p for p in re.split(r"[.\[\]]", str(path)) if p and p != "_modules"]
        if not parts:
            return None, False
        mod = parts[-1] if not parts[-1].isdigit() or len(parts) == 1 else \
            f"{parts[-2]}_{parts[-1]}"
        return mod, cls.startswith("torch.nn.modules.")

    # -- symbols --------------------------------------------------------------------------

    def _debug_names(self) -> dict[str, str]:
        """torch symbol name -> the Dim's name, from a fresh export's shape environment."""
        env = None
        for fx in self.user_inputs:
            val = fx.meta.get("val")
            for d in getattr(val, "shape", ()):
                if isinstance(d, torch.SymInt):
                    env = d.node.shape_env
                    break
            if env is not None:
                break
        out: dict[str, str] = {}
        if env is None:
            return out
        debug = getattr(env, "source_name_to_debug_name", {}) or {}
        for sym, sources in (getattr(env, "var_to_sources", {}) or {}).items():
            for src in sources:
                try:
                    nm = src.name() if callable(src.name) else src.name
                except Exception:  # noqa: BLE001 - a source kind without a name
                    continue
                if nm in debug:
                    out[str(sym)] = debug[nm]
                    break
        return out

    def _spec_dims(self) -> dict[tuple[str, int], object]:
        """(input name, axis) -> the Dim object the dynamic_shapes spec gives there."""
        spec = self.dynamic_shapes
        out: dict = {}
        if spec is None:
            return out
        names = [fx.name for fx in self.user_inputs]
        if isinstance(spec, dict):
            items = [(k, v) for k, v in spec.items() if k in names]
        elif isinstance(spec, (list, tuple)) and len(spec) == len(names):
            items = list(zip(names, spec))
        else:
            return out
        for name, per in items:
            if isinstance(per, dict):
                pairs = per.items()
            elif isinstance(per, (list, tuple)):
                pairs = enumerate(per)
            else:
                continue
            for axis, d in pairs:
                if d is not None and hasattr(d, "__name__") and isinstance(axis, int):
                    out[(name, axis)] = d
        return out

    def build_symbols(self) -> None:
        debug = self._debug_names()
        spec = self._spec_dims()
        ranges = {}
        for k, vr in (self.ep.range_constraints or {}).items():
            ranges[k] = (range_bound(vr.lower), range_bound(vr.upper))
        fresh = 0
        origin: dict[str, str] = {}

        def fresh_name() -> str:
            nonlocal fresh
            while f"D{fresh}" in self.prog.namer.taken:
                fresh += 1
            fresh += 1
            return f"D{fresh - 1}"

        def user_name(sym, iname: str, axis: int) -> str | None:
            for key in (str(sym), f"{iname}.{axis}", f"{iname}[{axis}]"):
                if key in self.dim_names:
                    return self.dim_names[key]
            d = spec.get((iname, axis))
            if d is not None and type(d).__name__ == "Dim":
                return d.__name__
            return debug.get(str(sym))

        # The inputs keep their names: a symbol named like one (Dim("x")) gives way.
        reserved = {identifier(fx.name, "input") for fx in self.user_inputs} - \
            self.prog.namer.taken
        self.prog.namer.taken |= reserved
        inputs = []
        for fx in self.user_inputs:
            val = fx.meta.get("val")
            if isinstance(val, torch.Tensor):
                inputs.append((fx, [d.node.expr if isinstance(d, torch.SymInt) else int(d)
                                    for d in val.shape]))
        # Plain symbols first: each binds a dsc symbol.
        for fx, dims in inputs:
            for axis, e in enumerate(dims):
                if isinstance(e, sympy.Symbol) and e not in self.symbols.map:
                    name = user_name(e, fx.name, axis)
                    dsc = self.prog.add_symbol(name) if name else self.prog.add_symbol(
                        fresh_name())
                    if not name:
                        origin[dsc] = f"{fx.name}.shape[{axis}]"
                    self.symbols.map[e] = Dim.symbol(dsc)
                    lo, hi = ranges.get(e, (1, None))
                    self.ranges[dsc] = (0 if lo is None else lo, hi)
        # Derived dims (a*S + b) whose symbol no plain dim binds: the dim becomes a symbol.
        for fx, dims in inputs:
            for axis, e in enumerate(dims):
                if isinstance(e, int) or isinstance(e, sympy.Symbol):
                    continue
                free = [s for s in e.free_symbols if s not in self.symbols.map]
                if not free:
                    continue
                poly = sympy.Poly(e, *free) if len(free) == 1 else None
                coeffs = poly.all_coeffs() if poly is not None and poly.degree() == 1 else None
                if coeffs is None or any(sympy_int(c) is None for c in coeffs) or \
                        int(coeffs[0]) <= 0:
                    raise ModelError(f"input '{fx.name}' has the dim {e} at axis {axis}, "
                                     f"which binds no symbol dsc can name")
                a, b = int(coeffs[0]), int(coeffs[1])
                s = free[0]
                own = next((self.dim_names[k] for k in (f"{fx.name}.{axis}",
                                                         f"{fx.name}[{axis}]")
                            if k in self.dim_names), None)
                root = self.dim_names.get(str(s)) or debug.get(str(s))
                d = spec.get((fx.name, axis))
                if d is not None and hasattr(d, "root"):
                    root = d.root.__name__
                dsc = self.prog.add_symbol(own or fresh_name())
                plain = Dim.symbol(dsc)
                stand = sympy.Symbol(f"_dsc_{dsc}", integer=True, positive=True)
                self.symbols.map[stand] = plain
                self.symbols.subst[s] = (stand - b) / sympy.Integer(a)
                self.notes.append(
                    f"{dsc} is {fx.name}.shape[{axis}], the derived dim "
                    f"{a if a != 1 else ''}{'*' if a != 1 else ''}{root or s}" +
                    (f" {'+' if b > 0 else '-'} {abs(b)}" if b else "") + ".")
                lo, hi = ranges.get(s, (1, None))
                lo = 0 if lo is None else lo
                self.ranges[dsc] = (a * lo + b, None if hi is None else a * hi + b)
                if a != 1:
                    self.clauses.append(f"{symdim.dim_text(plain - b)} % {a} == 0")
        self.prog.namer.taken -= reserved
        for dsc, what in origin.items():
            self.notes.append(f"{dsc} is {what} (torch.export gave no name for it).")
        for fx, dims in inputs:
            self.input_dims[fx.name] = [self.symbols.dim(e) for e in dims]

    def range_clauses(self) -> list[str]:
        out = []
        for s in self.prog.symbols:
            lo, hi = self.ranges.get(s, (1, None))
            if hi is not None:
                out.append(f"{lo} <= {s} <= {hi}")
            elif lo >= 1:
                out.append(f"{s} >= {lo}")
        return out

    # -- guards ---------------------------------------------------------------------------

    def _interval(self, d) -> tuple[float, float] | None:
        d = symdim.as_dim(d)
        lo = hi = 0.0
        for mono, c in d.terms:
            mlo, mhi = 1.0, 1.0
            for a in mono:
                if not a.isidentifier() or a not in self.ranges:
                    return None
                slo, shi = self.ranges[a]
                mlo *= slo
                mhi = math.inf if shi is None else mhi * shi
            if c >= 0:
                lo += c * mlo
                hi += c * mhi
            else:
                lo += c * mhi
                hi += c * mlo
        return lo, hi

    def _decide(self, lhs, op: str, rhs) -> bool | None:
        iv = self._interval(symdim.as_dim(lhs) - rhs)
        if iv is None:
            return None
        lo, hi = iv
        if op == "==":
            return True if lo == hi == 0 else (False if lo > 0 or hi < 0 else None)
        if op == "!=":
            return True if lo > 0 or hi < 0 else (False if lo == hi == 0 else None)
        if op in ("<", "<="):
            strict = op == "<"
            if (hi < 0) if strict else (hi <= 0):
                return True
            if (lo >= 0) if strict else (lo > 0):
                return False
            return None
        if op in (">", ">="):
            return self._decide(rhs, "<" if op == ">" else "<=", lhs)
        return None

    def add_guard(self, lhs, op: str, rhs, text: str) -> None:
        """A guard torch checks on the inputs' dims: dropped when the ranges imply it; a
        `where` clause when it is a comparison of polynomials or a divisibility; otherwise
        only a comment (dsc checks its own shape facts)."""
        if self._decide(lhs, op, rhs) is True:
            return
        atoms = symdim.as_dim(lhs).atoms() | symdim.as_dim(rhs).atoms()
        clean = all(a.isidentifier() or re.fullmatch(r"[A-Za-z_0-9 *+-]+ % \d+|\([A-Za-z_0-9 "
                                                     r"*+-]+\) % \d+", a) for a in atoms)
        if clean:
            clause = f"{symdim.dim_text(lhs)} {op} {symdim.dim_text(rhs)}"
            if clause not in self.clauses:
                self.clauses.append(clause)
        elif text not in self.guard_notes:
            self.guard_notes.append(text)

    def read_guards(self) -> None:
        for code in getattr(self.ep, "_guards_code", None) or []:
            try:
                tree = ast.parse(code, mode="eval").body
                for lhs, op, rhs in self._guard_ast(tree):
                    self.add_guard(lhs, op, rhs, f"{symdim.dim_text(lhs)} {op} "
                                   f"{symdim.dim_text(rhs)}")
            except (_SkipGuard, Unsupported, Undecided, SyntaxError, TypeError,
                    ZeroDivisionError):
                if code not in self.guard_notes:
                    self.guard_notes.append(code)

    def _guard_ast(self, t) -> list:
        ops = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
               ast.GtE: ">="}
        if isinstance(t, ast.BoolOp) and isinstance(t.op, ast.And):
            return [c for v in t.values for c in self._guard_ast(v)]
        if isinstance(t, ast.Compare) and len(t.ops) == 1 and type(t.ops[0]) in ops:
            return [(self._guard_dim(t.left), ops[type(t.ops[0])],
                     self._guard_dim(t.comparators[0]))]
        raise _SkipGuard()

    def _guard_dim(self, t):
        if isinstance(t, ast.Constant) and isinstance(t.value, int) and \
                not isinstance(t.value, bool):
            return t.value
        if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.USub):
            return -symdim.as_dim(self._guard_dim(t.operand))
        if isinstance(t, ast.BinOp):
            a, b = symdim.as_dim(self._guard_dim(t.left)), self._guard_dim(t.right)
            fns = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.FloorDiv: lambda: a // b, ast.Mod: lambda: a % b}
            if type(t.op) in fns:
                return fns[type(t.op)]()
        if isinstance(t, ast.Call) and isinstance(t.func, ast.Attribute) and \
                t.func.attr in ("sym_max", "sym_min") and len(t.args) == 2:
            a, b = (self._guard_dim(x) for x in t.args)
            return dmax(a, b) if t.func.attr == "sym_max" else dmin(a, b)
        # L['x'].size()[i]
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Call) and \
                isinstance(t.value.func, ast.Attribute) and t.value.func.attr == "size" and \
                isinstance(t.value.func.value, ast.Subscript):
            base = t.value.func.value
            if isinstance(base.value, ast.Name) and base.value.id == "L" and \
                    isinstance(base.slice, ast.Constant) and isinstance(t.slice, ast.Constant):
                dims = self.input_dims.get(base.slice.value)
                if dims is not None and isinstance(t.slice.value, int) and \
                        0 <= t.slice.value < len(dims):
                    return dims[t.slice.value]
        raise _SkipGuard()

    def guard_from_sympy(self, e) -> None:
        """A run-time assert's condition (a sympy relational over the size symbols)."""
        rels = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Lt: "<", sympy.Le: "<=",
                sympy.Gt: ">", sympy.Ge: ">="}
        if isinstance(e, sympy.And):
            for a in e.args:
                self.guard_from_sympy(a)
            return
        for cls, op in rels.items():
            if isinstance(e, cls):
                lhs, rhs = self.symbols.dim(e.args[0]), self.symbols.dim(e.args[1])
                self.add_guard(lhs, op, rhs, f"{symdim.dim_text(lhs)} {op} "
                               f"{symdim.dim_text(rhs)}")
                return
        if e is not sympy.true:
            self.guard_notes.append(str(e))

    # -- nodes ----------------------------------------------------------------------------

    def fail(self, fx, reason: str, op: str | None = None) -> None:
        self.problems.append(Problem(op or op_name(fx.target) if fx.op == "call_function"
                                     else (op or fx.op), fx.name, location(fx), reason))
        self.poison(fx)

    def poison(self, fx) -> None:
        """fx is reported (or depends on a reported node). Its results become placeholders
        of torch's recorded types, so that the nodes after it are still checked and every
        problem is listed in one run; nothing is written after a problem."""
        self.poisoned.add(fx)
        val = fx.meta.get("val")

        def stand_in(t, i):
            if not isinstance(t, torch.Tensor):
                return None
            try:
                dtype = dtypes.mapped(DTYPES.get(t.dtype, "f32"))
                shape = [self.symbols.dim(d) for d in t.shape]
            except Unsupported:
                shape = []
            return self.prog.define(Call("unsupported", []), dtype, shape,
                                    f"{fx.name}_{i}" if i is not None else fx.name)
        if isinstance(val, (list, tuple)):
            self.env[fx] = [stand_in(t, i) for i, t in enumerate(val)]
        elif isinstance(val, torch.Tensor):
            self.env[fx] = stand_in(val, None)

    def placeholder(self, fx) -> None:
        spec = self.input_specs.get(fx.name)
        kind = spec.kind.name if spec is not None else "USER_INPUT"
        val = fx.meta.get("val")
        if kind == "USER_INPUT":
            if isinstance(val, torch.Tensor):
                try:
                    dtype = dsc_dtype(val.dtype, f"input '{fx.name}'")
                except Unsupported as e:
                    raise ModelError(str(e)) from None
                v = self.prog.add_input(fx.name, dtype, self.input_dims[fx.name])
                if v.name != fx.name:
                    self.prog.header.append(f"torch input '{fx.name}' is the parameter {v.name}.")
                self.set_value(fx, v)
            elif isinstance(val, (int, float, bool)) or val is None:
                self.env[fx] = val  # torch.export specialized it to this constant
            elif isinstance(val, torch.SymInt):
                # A size given as an input (a graph cut in two by the dsc torch.compile
                # backend passes the sizes it computed): no parameter, its value is its
                # expression over the symbols the tensor inputs bind.
                try:
                    self.env[fx] = self.symbols.dim(val)
                except Unsupported:
                    raise ModelError(f"input '{fx.name}' is the size {val.node.expr}, which "
                                     f"no tensor input's dims determine") from None
            else:
                raise ModelError(f"input '{fx.name}' is {type(val).__name__}; dsc functions "
                                 f"take tensors (and torch specializes plain numbers)")
            return
        target = spec.target
        if kind in ("PARAMETER", "BUFFER", "CONSTANT_TENSOR"):
            t = self.ep.state_dict.get(target) if kind != "CONSTANT_TENSOR" else None
            if t is None:
                t = self.ep.constants.get(target)
            if not isinstance(t, torch.Tensor):
                raise ModelError(f"{kind.lower()} '{target}' has no tensor in the program")
            try:
                arr, dtype = tensor_array(t, f"{kind.lower()} '{target}'")
            except Unsupported as e:
                self.fail(fx, str(e), op=f"{kind.lower()} '{target}'")
                return
            hint = identifier(target, "w")
            self.set_value(fx, self.prog.constant(arr, dtype, hint))
            return
        self.fail(fx, f"inputs of kind {kind} (target '{target}') are not supported",
                  op="placeholder")

    def call(self, fx) -> None:
        target = fx.target
        name = op_name(target)
        val = fx.meta.get("val")
        if target is _getitem:
            src, i = fx.args
            if src in self.poisoned:
                self.poison(fx)
                seq = self.env.get(src)
                if isinstance(seq, (list, tuple)) and isinstance(i, int) and \
                        -len(seq) <= i < len(seq):
                    self.env[fx] = seq[i]
                return
            seq = self.env.get(src)
            if not isinstance(seq, (list, tuple)) or not isinstance(i, int) or \
                    not -len(seq) <= i < len(seq) or seq[i] is None:
                if not fx.users and isinstance(seq, (list, tuple)):
                    # An output nothing reads: a program loaded from a .pt2 names every
                    # output of a multi-output op (`native_layer_norm_unused_1`).
                    self.env[fx] = None
                    return
                self.fail(fx, f"output {i} of '{src.name}' is not supported")
                return
            self.set_value(fx, seq[i])
            return
        if name in NO_OPS:
            if name == "aten._assert_scalar.default" and fx.args and \
                    isinstance(fx.args[0], torch.fx.Node):
                cond = fx.args[0].meta.get("val")
                if isinstance(cond, torch.SymBool):
                    try:
                        self.guard_from_sympy(cond.node.expr)
                    except Unsupported:
                        self.guard_notes.append(str(cond.node.expr))
            self.env[fx] = None
            return
        sym = isinstance(val, (torch.SymInt, torch.SymBool, torch.SymFloat, int, float, bool))
        if sym and not isinstance(target, torch._ops.OpOverload) or \
                name in ("aten.sym_size.int", "aten.sym_numel.default", "aten.sym_stride.int"):
            try:
                self.env[fx] = self.sym_value(val)
            except Unsupported as e:
                if self._reads_poison(fx):
                    self.poison(fx)  # follows from a node already reported
                else:
                    self.fail(fx, str(e))
            return
        conv = CONVERTERS.get(name)
        if conv is None:
            base = short_op(target)
            if base.endswith("_") and not base.startswith("_") and \
                    isinstance(target, torch._ops.OpOverload):
                what = fx.args[0].name if fx.args and isinstance(fx.args[0], torch.fx.Node) \
                    else "its input"
                self.fail(fx, f"an in-place update of '{what}'; dsc functions are pure "
                              f"(compute and return a new value instead)")
                return
            self.fail(fx, no_converter(name))
            return
        n = Node(self, fx)
        try:
            if not self.fold(n):
                conv(n)
            n.check_args()
            if fx not in self.env:
                raise RuntimeError(f"the converter of {name} set no value")
        except _Poisoned:
            try:
                n.check_args()
            except UnsupportedArg as e:
                self.fail(fx, str(e))
            self.poison(fx)
        except (Unsupported, Undecided) as e:
            if isinstance(e, UnsupportedArg) or not self._reads_poison(fx):
                self.fail(fx, str(e))
            self.poison(fx)

    def _reads_poison(self, fx) -> bool:
        return any(a in self.poisoned for a in fx.all_input_nodes)

    def sym_value(self, val):
        if isinstance(val, torch.SymInt):
            return self.symbols.dim(val.node.expr)
        if isinstance(val, torch.SymBool):
            # A condition on sizes: only torch's run-time asserts read it (as guards).
            c = val.node.maybe_as_bool() if hasattr(val.node, "maybe_as_bool") else None
            return None if c is None else bool(c)
        if isinstance(val, torch.SymFloat):
            raise Unsupported(f"the float {val.node.expr} computed from sizes is a value at "
                              f"run time (dsc symbols are dims, not tensor data)")
        return val

    # -- folding --------------------------------------------------------------------------

    def fold(self, n: Node) -> bool:
        """Evaluates the node with torch when every tensor it reads is known at import time
        and its result is small enough; True when done."""
        fx = n.fx
        if not isinstance(fx.target, torch._ops.OpOverload) or n.op in NO_FOLD:
            return False
        outs = n.meta if isinstance(n.meta, (list, tuple)) else [n.meta]
        if not outs or not all(isinstance(t, torch.Tensor) for t in outs):
            return False
        total = 0
        for t in outs:
            if any(isinstance(d, torch.SymInt) for d in t.shape) or t.dtype not in DTYPES:
                return False
            total += t.numel()
        if total > FOLD_LIMIT:
            return False
        has_tensor = [False]

        def real(raw):
            if isinstance(raw, torch.fx.Node):
                v = self.resolve(raw)
                if isinstance(v, Value):
                    if not v.is_const() or v.const.dtype == object:
                        raise _NotConst()
                    has_tensor[0] = True
                    # In the dtype torch recorded: bf16 is held in float32, and --dtype
                    # converts the constant while torch's graph keeps the source's dtypes.
                    meta = raw.meta.get("val")
                    return _torch_const(v, meta.dtype if isinstance(meta, torch.Tensor)
                                        else None)
                if isinstance(v, Dim):
                    if v.value() is None:
                        raise _NotConst()
                    return v.value()
                if isinstance(v, (list, tuple)):
                    return [real_value(x) for x in v]
                return v
            if isinstance(raw, (list, tuple)):
                return type(raw)(real(x) for x in raw)
            return raw

        def real_value(v):
            if isinstance(v, Value):
                if not v.is_const() or v.const.dtype == object:
                    raise _NotConst()
                return _torch_const(v, None)
            return v

        try:
            args = [real(a) for a in fx.args]
            kwargs = {k: real(a) for k, a in fx.kwargs.items()}
        except _NotConst:
            return False
        key = (n.op, repr(fx.args), repr(sorted(fx.kwargs.items())))
        if key in self.fold_memo:
            self.set_value(fx, self.fold_memo[key])
            n.mark_read(*n.given)
            return True
        try:
            with torch.no_grad():
                r = fx.target(*args, **kwargs)
        except Exception:  # noqa: BLE001 - torch rejects the arguments: the converter says why
            return False
        rs = list(r) if isinstance(r, (list, tuple)) else [r]
        src = [a for a in fx.all_input_nodes if isinstance(self.env.get(a), Value)]
        keep = short_op(fx.target) in KEEP_NAME and len(src) == 1
        vals = []
        for i, t in enumerate(rs):
            arr, dtype = tensor_array(t, "the folded result")
            hint = self.env[src[0]].hint if keep else \
                self.hint_of(fx, None if len(rs) == 1 and not isinstance(r, (list, tuple))
                             else i)
            vals.append(self.prog.constant(arr, dtype, hint))
        out = vals if isinstance(r, (list, tuple)) else vals[0]
        self.fold_memo[key] = out
        self.set_value(fx, out)
        n.mark_read(*n.given)
        return True

    # -- the program ----------------------------------------------------------------------

    def output(self, fx) -> None:
        specs = self.ep.graph_signature.output_specs
        args = fx.args[0] if fx.args else ()
        args = list(args) if isinstance(args, (list, tuple)) else [args]
        outs = []
        for spec, a in zip(specs, args):
            kind = spec.kind.name
            if kind != "USER_OUTPUT":
                target = getattr(spec, "target", None)
                self.problems.append(Problem(
                    f"output ({kind})", a.name if isinstance(a, torch.fx.Node) else str(a),
                    location(a) if isinstance(a, torch.fx.Node) else "",
                    f"the program updates {kind.split('_')[0].lower()} '{target}' in place; "
                    f"dsc functions are pure (return the new value instead)"))
                continue
            if isinstance(a, torch.fx.Node) and a in self.poisoned:
                continue
            try:
                v = self.resolve(a)
            except (Unsupported, _Poisoned):
                continue
            if not isinstance(v, Value):
                self.problems.append(Problem("output", getattr(a, "name", str(a)), "",
                                             f"the result {v!r} is not a tensor"))
                continue
            outs.append(v)
        if not self.problems:
            if not outs:
                raise ModelError("the program returns no tensors")
            self.prog.set_returns(outs)

    def run(self) -> ImportResult:
        self.build_symbols()
        mins = {s: lo for s, (lo, _) in self.ranges.items()}
        with symdim.symbol_minimums(mins):
            return self._run()

    def _run(self) -> ImportResult:
        self.read_guards()
        counts: Counter = Counter()
        for fx in self.graph.nodes:
            if fx.op == "placeholder":
                self.placeholder(fx)
            elif fx.op == "call_function":
                if isinstance(fx.target, torch._ops.OpOverload) and \
                        op_name(fx.target) not in NO_OPS:
                    counts[short_op(fx.target)] += 1
                self.call(fx)
            elif fx.op == "get_attr":
                attr = getattr(self.ep.graph_module, str(fx.target), None)
                if isinstance(attr, torch.Tensor):
                    arr, dtype = tensor_array(attr, f"attribute '{fx.target}'")
                    self.set_value(fx, self.prog.constant(arr, dtype,
                                                          identifier(str(fx.target), "w")))
                else:
                    self.poison(fx)  # a subgraph: its user (cond, map, ...) is reported
            elif fx.op == "output":
                self.output(fx)
            else:
                self.fail(fx, f"graph nodes of kind {fx.op} are not supported", op=fx.op)
        if self.problems:
            raise ImportFailure(self.problems)
        self.prog.where_clauses = self._where()
        header = [f"Imported from {self.source} by importers/torch2dsc.py (torch.export, "
                  f"{sum(counts.values())} aten op{'' if sum(counts.values()) == 1 else 's'})."]
        header += self.notes
        out_note = self._output_note()
        if out_note:
            header.append(out_note)
        header += [f"torch guard not carried over (dsc checks shapes itself): {g}"
                   for g in self.guard_notes]
        self.prog.header[:0] = header
        text = self.prog.text()
        weights = self.prog.weight_arrays()
        used = set()
        for v in self.prog.inputs:
            for d in v.shape:
                used |= symdim.as_dim(d).symbols()
        return ImportResult(text=text, weights=weights, op_counts=counts, op_unit="aten op",
                            symbols=[s for s in self.prog.symbols if s in used],
                            n_inputs=len(self.prog.inputs),
                            n_statements=self.prog.statement_count)

    def _output_note(self) -> str | None:
        """`The program returns BaseModelOutputWithPooling (last_hidden_state, pooler_output):
        the results in that order.` when its output is a container of named fields (a
        transformers ModelOutput, a dict) holding one tensor each."""
        spec = getattr(getattr(self.ep, "call_spec", None), "out_spec", None)
        if spec is None or spec.type in (tuple, list, None) or len(self.prog.returns) < 1:
            return None
        keys = spec.context
        children = list(spec.children()) if hasattr(spec, "children") else \
            list(getattr(spec, "children_specs", None) or [])
        if not isinstance(keys, (list, tuple)) or len(keys) != len(children) or \
                not all(isinstance(k, str) for k in keys) or \
                not all(c.is_leaf() for c in children) or len(keys) != len(self.prog.returns):
            return None
        kind = getattr(spec.type, "__name__", str(spec.type))
        return f"The program returns {kind} ({', '.join(keys)}): the results in that order."

    def _where(self) -> list[str]:
        used = set()
        for v in self.prog.inputs:
            for d in v.shape:
                used |= symdim.as_dim(d).symbols()
        out = [c for c in self.range_clauses()
               if any(s in used for s in re.findall(r"[A-Za-z_]\w*", c))]
        for c in self.clauses:
            if c not in out and set(re.findall(r"[A-Za-z_]\w*", c)) <= used:
                out.append(c)
        return out


class _NotConst(Exception):
    pass


def _torch_const(v: Value, dtype) -> torch.Tensor:
    """A constant as a torch tensor of dtype (default: the constant's own)."""
    t = torch.from_numpy(np.array(v.const))
    return t.to(dtype if dtype is not None else TORCH_DTYPES[v.dtype])


class _SkipGuard(Exception):
    pass


_getitem = operator.getitem


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------

def _default_name(ep) -> str:
    for fx in ep.graph.nodes:
        stack = fx.meta.get("nn_module_stack") or {}
        for path, cls in stack.values():
            if path == "":
                cls = cls if isinstance(cls, str) else getattr(cls, "__name__", "")
                base = cls.split(".")[-1]
                snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", base).lower()
                return identifier(snake, "model") if snake else "model"
    return "model"


def import_program(ep, name: str | None = None, source: str = "an ExportedProgram",
                   dim_names: dict | None = None, dynamic_shapes=None,
                   dtype: str | None = None) -> ImportResult:
    """The .dsc text and weights of an ExportedProgram. dim_names maps torch symbols
    (`"s77"`) or input axes (`"x.0"`) to symbol names; dynamic_shapes is the spec given to
    torch.export.export, whose Dims name the symbols; dtype ("bf16", "f16", "f32") converts
    every floating-point tensor to it (dtypes.py). Raises ImportFailure (every node that
    cannot be imported), ModelError (not a program this importer can read)."""
    if not isinstance(ep, torch.export.ExportedProgram):
        what = type(ep).__name__
        hint = " (export it first: torch.export.export(model, args, dynamic_shapes=...))" \
            if isinstance(ep, torch.nn.Module) else ""
        raise ModelError(f"expected a torch.export.ExportedProgram, got {what}{hint}")
    name = name or _default_name(ep)
    ep, note = functionalized(ep)
    with dtypes.converting(dtype):
        imp = Importer(ep, name, source, dim_names, dynamic_shapes)
        imp.notes += [n for n in (note, dtype and dtypes.note(dtype)) if n]
        return imp.run()


def _mutating_ops(ep) -> list[str]:
    out = []
    for fx in ep.graph.nodes:
        t = fx.target
        if fx.op == "call_function" and isinstance(t, torch._ops.OpOverload) and \
                op_name(t) not in NO_OPS and t._schema.is_mutable:
            out.append(short_op(t))
    return out


def functionalized(ep):
    """The program with its in-place ops made functional (`ep.run_decompositions({})`, which
    decomposes nothing else), and a note for the header; the program itself when it has none.
    An in-place update of a fresh tensor (T5's `bias += ...`) then reads as the op it is; one
    of a buffer or an input becomes an output torch marks as a mutation, which the importer
    reports (dsc functions are pure)."""
    muts = _mutating_ops(ep)
    if not muts:
        return ep, None
    try:
        fn = ep.run_decompositions({})
    except Exception:  # noqa: BLE001 - the in-place ops are then reported one by one
        return ep, None
    names = ", ".join(sorted(set(muts)))
    return fn, (f"The in-place ops of the program ({names}) were made functional "
                f"(run_decompositions({{}})) before it was read.")


def to_dsc(exported_program, out_dir: str, name: str | None = None, *,
           dim_names: dict | None = None, dynamic_shapes=None,
           source: str = "an ExportedProgram", dtype: str | None = None) -> ImportResult:
    """Imports an ExportedProgram and writes OUT_DIR/NAME.dsc and OUT_DIR/NAME.safetensors,
    both or neither. NAME defaults to the exported module's class name in snake case; dtype
    converts every floating-point tensor (import_program). The result's `summary(source)` is
    the one-line summary torch2dsc prints."""
    stem = name or _default_name(exported_program) if isinstance(
        exported_program, torch.export.ExportedProgram) else (name or "model")
    if not stem or "/" in stem or stem in (".", ".."):
        raise ModelError(f"the name must be a file name, got '{stem}'")
    result = import_program(exported_program, identifier(stem, "model"), source=source,
                            dim_names=dim_names, dynamic_shapes=dynamic_shapes, dtype=dtype)
    write_result(result, out_dir, stem)
    return result


def supported_ops() -> list[str]:
    return CONVERTERS.ops()
