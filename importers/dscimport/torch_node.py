"""What every aten converter works with: `Node`, the per-node context (the schema's arguments
resolved to dsc values, sizes and numbers; the result's recorded type; outputs defined as dsc
values), the table the converters register in (CONVERTERS; torch_import.py fills it by
importing torch_ops.py, torch_nn.py, torch_layout.py and torch_index.py), torch's dtypes and the names of its ops.
"""

from __future__ import annotations

import math
import re

import numpy as np
import torch

from . import dtypes, symdim
from .common import FLOATS, INTS, Registry, Unsupported
from .program import Call, Expr, Lit, Str, Value, literal_text
from .lowering import shape_value_expr
from .symdim import Dim


class UnsupportedArg(Unsupported):
    """An argument value a converter does not support (reported even when the node's inputs
    come from an unsupported node)."""


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
          torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32", torch.int8: "i8",
          torch.bool: "bool"}
TORCH_DTYPES = {v: k for k, v in DTYPES.items()}


def dsc_dtype(t, what: str) -> str:
    """The dsc dtype of torch's dtype t (under --dtype, a float is the target: dtypes.py)."""
    d = DTYPES.get(t)
    if d is None:
        raise UnsupportedArg(f"{what} is {str(t).replace('torch.', '')}, which dsc cannot "
                             f"import (it takes {', '.join(sorted(DTYPES.values()))})")
    return dtypes.mapped(d)


def tensor_array(t: torch.Tensor, what: str) -> tuple[np.ndarray, str]:
    """A tensor's values as NumPy holds its dsc dtype (bf16 in float32), rounded to that
    dtype when --dtype converts it, and the dtype."""
    dtype = dsc_dtype(t.dtype, what)
    same = DTYPES[t.dtype] == dtype
    t = t.detach().cpu().contiguous()
    arr = (t.float() if t.dtype == torch.bfloat16 else t).numpy().copy()
    return (arr if same else dtypes.round_to(arr, dtype)), dtype


# ---------------------------------------------------------------------------------------------
# Op names
# ---------------------------------------------------------------------------------------------

def op_name(target) -> str:
    """`aten.add.Tensor` for an OpOverload; `operator.getitem`, `torch.sym_max` otherwise."""
    if isinstance(target, torch._ops.OpOverload):
        ns = target.namespace
        return f"{ns}.{target._schema.name.split('::')[-1]}.{target._overloadname}"
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"higher_order.{target.name()}"
    mod = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", None) or str(target)
    if mod in ("_operator", "operator"):
        mod = "operator"
    return f"{mod}.{name}" if mod else name


def short_op(target) -> str:
    """The op's name without namespace and overload (`linear`), for the summary."""
    if isinstance(target, torch._ops.OpOverload):
        return target._schema.name.split("::")[-1]
    return op_name(target).split(".")[-1]


# ---------------------------------------------------------------------------------------------
# The per-node context converters see
# ---------------------------------------------------------------------------------------------

_MISSING = object()
# Arguments that do not change a value's contents.
IGNORED_ARGS = {"device", "layout", "pin_memory", "memory_format", "non_blocking",
                "requires_grad", "cudnn_enable", "sparse", "scale_grad_by_freq"}


class Node:
    """One fx node as its converter sees it. `imp` is the torch_import.Importer reading the
    program: the values so far (`resolve`), its symbols, and what converters share across
    nodes (`value_users`, `fills`, `folded`, `fold_memo`)."""

    def __init__(self, imp, fx):
        self.imp = imp
        self.fx = fx
        self.prog = imp.prog
        self.op = op_name(fx.target)
        self.given: dict[str, object] = {}
        self.defaults: dict[str, object] = {}
        self._read: set[str] = set()
        schema = getattr(fx.target, "_schema", None)
        if schema is not None:
            for i, a in enumerate(schema.arguments):
                if a.has_default_value():
                    self.defaults[a.name] = a.default_value
                if i < len(fx.args) and not a.kwarg_only:
                    self.given[a.name] = fx.args[i]
                elif a.name in fx.kwargs:
                    self.given[a.name] = fx.kwargs[a.name]

    # -- arguments ------------------------------------------------------------------------

    def has(self, name: str) -> bool:
        return name in self.given and self.given[name] is not None

    def arg(self, name: str, default=_MISSING):
        """The argument's value: Values for tensors, ints and Dims for sizes, Python scalars,
        lists of these; the schema's default when not given."""
        self._read.add(name)
        if name in self.given:
            return self.imp.resolve(self.given[name])
        if default is not _MISSING:
            return default
        return self.defaults.get(name)

    def tensor(self, name: str) -> Value:
        v = self.arg(name)
        if not isinstance(v, Value):
            raise Unsupported(f"argument '{name}' is {v!r}, not a tensor")
        return v

    def opt_tensor(self, name: str) -> Value | None:
        v = self.arg(name)
        if v is not None and not isinstance(v, Value):
            raise Unsupported(f"argument '{name}' is {v!r}, not a tensor")
        return v

    def tensors(self, name: str) -> list[Value]:
        vs = self.arg(name)
        if not isinstance(vs, (list, tuple)) or not all(isinstance(v, Value) for v in vs):
            raise Unsupported(f"argument '{name}' is not a list of tensors")
        return list(vs)

    def int(self, name: str, default=_MISSING) -> int:
        v = self.arg(name, default)
        d = symdim.simplify(v) if isinstance(v, (Dim, int, np.integer)) else v
        if isinstance(d, Dim):
            raise UnsupportedArg(f"argument '{name}' is the size {d}; it must be a constant")
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
            raise Unsupported(f"argument '{name}' is {v!r}, not an int")
        return int(d)

    def dim(self, name: str, default=_MISSING) -> int | Dim:
        v = self.arg(name, default)
        if isinstance(v, (Dim, int, np.integer)) and not isinstance(v, bool):
            return symdim.simplify(v)
        raise Unsupported(f"argument '{name}' is {v!r}, not a size")

    def ints(self, name: str) -> list[int]:
        v = self.arg(name)
        if v is None:
            return []
        vs = list(v) if isinstance(v, (list, tuple)) else [v]
        out = []
        for x in vs:
            x = symdim.simplify(x) if isinstance(x, (Dim, int, np.integer)) else x
            if not isinstance(x, int) or isinstance(x, bool):
                raise UnsupportedArg(f"argument '{name}' is {v!r}; it must be constant ints")
            out.append(x)
        return out

    def dims(self, name: str) -> list:
        v = self.arg(name)
        vs = list(v) if isinstance(v, (list, tuple)) else [v]
        out = []
        for x in vs:
            if not isinstance(x, (Dim, int, np.integer)) or isinstance(x, bool):
                raise Unsupported(f"argument '{name}' holds {x!r}, not a size")
            out.append(symdim.simplify(x))
        return out

    def scalar(self, name: str, default=_MISSING):
        """A Python number (a 0-d constant tensor counts)."""
        v = self.arg(name, default)
        if isinstance(v, Value) and v.is_const() and v.rank == 0 and v.const.dtype != object:
            return v.const.item()
        if isinstance(v, Dim):
            if v.value() is not None:
                return v.value()
            raise Unsupported(f"the size {v} is used as tensor data (dsc symbols are dims, "
                              f"not values)")
        if isinstance(v, (bool, int, float, np.number)):
            return v.item() if isinstance(v, np.number) else v
        raise Unsupported(f"argument '{name}' is {v!r}, not a number")

    def mark_read(self, *names: str) -> None:
        """These arguments count as read: their values were used another way (the node was
        evaluated at import time, or the argument is what folds it into another node)."""
        self._read.update(names)

    def check_args(self) -> None:
        """Every argument given with a non-default value was read by the converter."""
        extra = []
        for name, raw in self.given.items():
            if name in self._read or name in IGNORED_ARGS:
                continue
            if name in self.defaults and _same_arg(raw, self.defaults[name]):
                continue
            extra.append(f"{name}={_arg_text(raw)}")
        if extra:
            raise UnsupportedArg("argument" + ("s " if len(extra) > 1 else " ") +
                                 ", ".join(extra) + " not supported")

    # -- outputs --------------------------------------------------------------------------

    @property
    def meta(self):
        return self.fx.meta.get("val")

    def _meta_at(self, i: int | None):
        m = self.meta
        if i is not None:
            m = m[i]
        if not isinstance(m, torch.Tensor):
            raise Unsupported("torch recorded no tensor type for this node's result")
        return m

    def out_dtype(self, i: int | None = None) -> str:
        return dsc_dtype(self._meta_at(i).dtype, "the result's dtype")

    def out_shape(self, i: int | None = None) -> list:
        return [self.imp.symbols.dim(d) for d in self._meta_at(i).shape]

    def hint(self, i: int | None = None) -> str:
        return self.imp.hint_of(self.fx, i)

    def define(self, expr: Expr, dtype: str | None = None, shape: list | None = None,
               hint: str | None = None) -> Value:
        v = self.prog.define(expr, dtype or self.out_dtype(), self.out_shape()
                             if shape is None else shape, hint or self.hint())
        self.out(v)
        return v

    def out(self, v) -> None:
        self.imp.set_value(self.fx, v)

    def alias(self, v: Value) -> None:
        """The result is the input itself (clone, contiguous, a reshape to the same shape)."""
        self.imp.value_users[id(v)] -= 1
        self.out(v)

    # -- operands -------------------------------------------------------------------------

    def operand(self, v: Value) -> Expr:
        if v.is_const():
            if v.const.dtype == object:
                return shape_value_expr(v.const, v.dtype)  # sizes as data: arange(S, S + 1)
            if _generic_name(v.hint):
                v.hint = f"{self.hint()}_c"
        return self.prog.operand(v)

    def lit(self, x, dtype: str) -> Expr:
        """A Python number as an operand of dtype: a literal, or a 0-d weight (inf, nan)."""
        if dtype in INTS and isinstance(x, float) and not x.is_integer():
            raise Unsupported(f"the float {x} in an {dtype} operation")
        t = literal_text(x, dtype)
        if t is not None:
            if dtype in FLOATS and "." not in t and "e" not in t:
                t += ".0"
            return Lit(t)
        f = float(x)
        hint = "nan" if math.isnan(f) else ("neg_inf" if f < 0 else "inf")
        key = (hint, dtype)
        c = self.imp.special_consts.get(key)
        if c is None:
            c = self.prog.constant(dtypes.round_to(f, dtype), dtype, hint)
            self.imp.special_consts[key] = c
        return self.prog.operand(c)

    def cast(self, v: Value, dtype: str) -> Expr:
        """v read as dtype (`cast(v, dtype="f32")` when it differs)."""
        if v.dtype == dtype:
            return self.operand(v)
        if v.is_const() and v.const.dtype != object:
            return self.operand(self.prog.constant(dtypes.round_to(v.const, dtype), dtype,
                                                   v.hint))
        return Call("cast", [self.operand(v)], [("dtype", Str(dtype))])

    def users(self) -> int:
        return len(self.fx.users)


def _same_arg(raw, default) -> bool:
    try:
        if isinstance(raw, torch.fx.Node):
            return False
        if isinstance(raw, (list, tuple)) and isinstance(default, (list, tuple)):
            return list(raw) == list(default)
        return bool(raw == default)
    except Exception:  # noqa: BLE001 - incomparable values are different
        return False


def _arg_text(raw) -> str:
    if isinstance(raw, torch.fx.Node):
        return raw.name
    if isinstance(raw, str):
        return repr(raw)
    return str(raw).replace("torch.", "")


def _generic_name(hint: str) -> bool:
    """`lifted_tensor_0`, `_tensor_constant3`, `c_lifted_tensor_0`: names that say nothing."""
    return bool(re.fullmatch(r"(c_)?(lifted_tensor|_?tensor_constant|constant)_?\d*", hint))


# aten op (`aten.add.Tensor`) -> its converter, a function of a Node;
# `@converter("aten.relu.default", dsc="nn.relu")` registers one.
CONVERTERS = Registry("torch2dsc")
converter = CONVERTERS.register


def norm_axis(axis: int, rank: int) -> int:
    r = max(rank, 1)
    if not -r <= axis < r:
        raise Unsupported(f"axis {axis} is out of range for rank {rank}")
    return axis % r
