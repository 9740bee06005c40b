"""ONNX to dsc: one graph becomes one dsc function (program.py prints it).

    result = import_model(onnx.load(path), name="bert")
    result.text      # the .dsc source
    result.weights   # {parameter name: numpy array}, for the .safetensors file

How a graph is read:
- Graph inputs are parameters. Each `dim_param` becomes a symbol (sanitized to a dsc
  identifier; the same dim_param is the same symbol everywhere), each unnamed dynamic dim a
  fresh symbol `D0`, `D1`, ...; every symbol gets `where SYM >= 1`.
- Initializers and Constant nodes are values known at import time (numpy arrays). A run-time
  op that reads one makes it a weight parameter, named after the initializer and stored in the
  .safetensors file under that name; a scalar (or a uniform constant that does not change the
  result's shape) is written as a literal instead.
- Shape computations are folded at import time: `Shape` gives a vector of symbolic Dims, and
  Gather, Concat, Unsqueeze, Squeeze, Slice, Reshape, Cast, arithmetic, Equal, Where, Expand,
  ConstantOfShape and Range on such vectors are evaluated by numpy on object arrays. Reshape,
  Expand, Slice and ConstantOfShape then take the folded dims, so the .dsc says
  `reshape(q, [B, S, 2, 8])`, not a run-time shape tensor.
- Every other node becomes dsc ops through CONVERTERS, one function per ONNX op type.

Failure: every node whose op type has no converter, or whose attributes or inputs a converter
cannot express, is collected (`Problem`), and `ImportFailure` lists them all at once. A model
that is not valid ONNX (a cycle, a value nothing defines, a bad attribute) is `ModelError`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import symdim
from .program import (Bin, Call, Dims, Expr, Lit, Program, Raw, Ref, Str, Unary, Value,
                      broadcast_axes, identifier, literal_text)
from .symdim import Dim, Undecided

MIN_OPSET, MAX_OPSET = 13, 21

try:  # onnx is imported lazily by the CLI; this module needs it for the enums and schemas.
    from onnx import AttributeProto, TensorProto, defs, helper, numpy_helper
except ImportError:  # pragma: no cover - the CLI reports a missing onnx first
    AttributeProto = TensorProto = defs = helper = numpy_helper = None  # type: ignore[assignment]


class ModelError(Exception):
    """The model is not valid ONNX (or not readable): one line."""


class Unsupported(Exception):
    """A node this importer cannot express in dsc; the message says why."""


@dataclass
class Problem:
    op_type: str
    node_name: str
    index: int
    reason: str

    def __str__(self) -> str:
        who = f"node '{self.node_name}'" if self.node_name else "unnamed node"
        return f"{self.op_type} ({who}, #{self.index}): {self.reason}"


class ImportFailure(Exception):
    def __init__(self, problems: list[Problem]):
        super().__init__(f"{len(problems)} nodes cannot be imported")
        self.problems = problems


@dataclass
class ImportResult:
    text: str
    weights: dict[str, np.ndarray]
    node_counts: Counter
    symbols: list[str]
    n_inputs: int
    n_statements: int
    opset: int


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------

def _onnx_dtypes() -> dict[int, str]:
    return {
        TensorProto.FLOAT: "f32", TensorProto.DOUBLE: "f64", TensorProto.FLOAT16: "f16",
        TensorProto.INT64: "i64", TensorProto.INT32: "i32", TensorProto.INT8: "i8",
        TensorProto.BOOL: "bool",
    }


NP_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i64": np.int64,
             "i32": np.int32, "i8": np.int8, "bool": np.bool_}
FLOATS = ("f16", "bf16", "f32", "f64")
INTS = ("i8", "i32", "i64")


def dtype_of_enum(elem_type: int, what: str) -> str:
    d = _onnx_dtypes().get(elem_type)
    if d is None:
        name = TensorProto.DataType.Name(elem_type) if elem_type in TensorProto.DataType.values() \
            else str(elem_type)
        raise Unsupported(f"{what} has element type {name}, which dsc does not have "
                          f"(it has {', '.join(sorted(set(_onnx_dtypes().values())))})")
    return d


def dtype_of_array(a: np.ndarray) -> str:
    for name, t in NP_DTYPES.items():
        if a.dtype == t:
            return name
    raise Unsupported(f"constant of numpy dtype {a.dtype}, which dsc does not have")


def tensor_array(t, what: str) -> tuple[np.ndarray, str]:
    """A TensorProto's value and dsc dtype. A type dsc lacks is Unsupported; dims or data
    that do not fit each other (a malformed file) are a ModelError."""
    dtype = dtype_of_enum(t.data_type, what)
    if any(d < 0 for d in t.dims):
        raise ModelError(f"{what} has a negative dim: {list(t.dims)}")
    try:
        arr = numpy_helper.to_array(t)
    except Exception as e:  # noqa: BLE001 - onnx raises several kinds for malformed data
        detail = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ModelError(f"{what} is malformed: its data does not fit its dims "
                         f"{list(t.dims)} ({detail})") from None
    if list(arr.shape) != list(t.dims):
        raise ModelError(f"{what} holds {arr.size} values, which do not fit its dims "
                         f"{list(t.dims)}")
    return arr.astype(NP_DTYPES[dtype]), dtype


def finite_literal(v: float, dtype: str, what: str) -> str:
    """The literal of an attribute's value; an infinite or NaN one is not supported."""
    t = literal_text(v, dtype)
    if t is None:
        raise Unsupported(f"{what} is {v}, which has no dsc literal")
    return t


# ---------------------------------------------------------------------------------------------
# Folding helpers (numpy, with symbolic Dims in object arrays)
# ---------------------------------------------------------------------------------------------

def normalize(a: np.ndarray) -> np.ndarray:
    """Object arrays whose Dims are all constant become int64 arrays."""
    if a.dtype != object:
        return a
    flat = [symdim.simplify(x) if isinstance(x, (Dim, int, np.integer)) else x
            for x in a.reshape(-1)]
    if all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in flat):
        return np.array(flat, dtype=np.int64).reshape(a.shape)
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(a.shape)


def contiguous(a: np.ndarray) -> np.ndarray:
    """A C-contiguous copy or view; a 0-d array stays 0-d (np.ascontiguousarray makes it 1-d)."""
    return np.require(a, requirements="C")


def is_symbolic(a: np.ndarray) -> bool:
    return a.dtype == object


def to_dims(a: np.ndarray) -> list:
    """A 1-D int array (maybe symbolic) as a list of ints and Dims."""
    return [symdim.simplify(x) for x in np.asarray(a).reshape(-1)]


def as_int(x, what: str) -> int:
    v = symdim.simplify(x)
    if isinstance(v, Dim):
        raise Unsupported(f"{what} is {v}, which must be known at import time")
    return int(v)


def broadcast_shapes(shapes: list[list], what: str) -> list:
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for _, big in broadcast_axes(shapes, rank):
        if not big:
            out.append(1)
            continue
        pick = big[0]
        for d in big[1:]:
            eq = symdim.as_dim(pick).decide_eq(d)
            if eq is False:
                raise ModelError(f"{what}: cannot broadcast dims {pick} and {d}")
            if isinstance(pick, Dim) and not isinstance(d, Dim):
                pick = d  # keep the constant: it is the more precise
        out.append(pick)
    return out


def same_shape(a: list, b: list) -> bool:
    return len(a) == len(b) and all(symdim.as_dim(x).same(y) for x, y in zip(a, b))


def int_div_trunc(a, b):
    """ONNX integer Div (truncates toward zero); Dims are >= 0 and divide by floor."""
    if isinstance(a, Dim) or isinstance(b, Dim):
        return a // b
    a, b = int(a), int(b)
    q = abs(a) // abs(b) if b else 0
    return q if (a >= 0) == (b > 0) else -q


_int_div = np.frompyfunc(int_div_trunc, 2, 1)

FOLD_LIMIT = 1 << 22  # fold constants up to this many elements


# ---------------------------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------------------------

def value_hint(onnx_name: str, op_type: str) -> str:
    """A readable name for a node output: `/attention/self/query/MatMul_output_0` becomes
    `query_matmul`, `onnx::Add_12` `add_12`; plain names stay as they are."""
    s = onnx_name
    m = re.match(r"^(.*)_output_(\d+)$", s)
    if m:
        s = m.group(1) + ("" if m.group(2) == "0" else "_" + m.group(2))
    derived = False
    if "/" in s:
        parts = [p for p in s.split("/") if p]
        s = "_".join(parts[-2:]) if parts else op_type
        derived = True
    if "::" in s:
        s = s.split("::")[-1]
        derived = True
    if not s or s[0].isdigit():
        s = f"{op_type}_{s}"
        derived = True
    s = identifier(s, "t")
    return s.lower() if derived else s


def module_path(node_name: str) -> str:
    """torch.onnx.export's scope names list the modules from the root, a child of a Sequential
    as `layer1.0` inside `layer1`: `/layer2/layer2.0/downsample/downsample.0/Conv` is
    `layer2_0_downsample_0`."""
    comps: list[str] = []
    for p in [p for p in node_name.split("/") if p][:-1]:
        if comps and p.startswith(comps[-1] + "."):
            comps[-1] = p
        else:
            comps.append(p)
    return identifier("_".join(comps).replace(".", "_"), "m") if comps else ""


def weight_hint(onnx_name: str) -> str:
    s = onnx_name.split("::")[-1] if "::" in onnx_name else onnx_name
    return identifier(s, "w")


# ---------------------------------------------------------------------------------------------
# The per-node context converters see
# ---------------------------------------------------------------------------------------------

class Node:
    def __init__(self, imp: "Importer", node, index: int):
        self.imp = imp
        self.node = node
        self.index = index
        self.op = node.op_type
        self.opset = imp.opset
        self.prog = imp.prog
        self._attrs = {a.name: a for a in node.attribute}
        self._seen_attrs: set[str] = set()

    def check_schema(self) -> None:
        """ModelError unless the node fits its ONNX schema at the model's opset: the op exists
        there, the numbers of inputs and outputs, the required attributes and the types of
        the attributes (an `axis` given as a float or a string would reach the converters)."""
        try:
            schema = defs.get_schema(self.op, self.opset, "")
        except defs.SchemaError:
            since = defs.get_schema(self.op, MAX_OPSET, "").since_version \
                if defs.has(self.op) else None
            raise ModelError(f"{self.op} is not an op of opset {self.opset}" +
                             (f" (it is from opset {since})" if since else "")) from None
        n_in, n_out = self.n_inputs, len(self.node.output)
        if not schema.min_input <= n_in <= schema.max_input:
            takes = _count_range(schema.min_input, schema.max_input)
            raise ModelError(f"{n_in} inputs; {self.op} takes {takes}")
        if not schema.min_output <= n_out <= schema.max_output:
            raise ModelError(f"{n_out} outputs; {self.op} has "
                             f"{_count_range(schema.min_output, schema.max_output)}")
        for name, a in self._attrs.items():
            want = schema.attributes.get(name)
            if want is not None and not a.ref_attr_name and a.type != int(want.type.value):
                raise ModelError(f"attribute '{name}' is of type "
                                 f"{_attr_type_name(a.type)}; {self.op} takes "
                                 f"{_attr_type_name(int(want.type.value))}")
        for name, want in schema.attributes.items():
            if want.required and name not in self._attrs:
                raise ModelError(f"attribute '{name}' is required")

    # -- attributes -----------------------------------------------------------------------

    def attr(self, name: str, default=None):
        self._seen_attrs.add(name)
        a = self._attrs.get(name)
        if a is None:
            return default
        if a.ref_attr_name:
            raise Unsupported(f"attribute '{name}' refers to a function attribute")
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        if isinstance(v, list):
            v = [x.decode("utf-8", "replace") if isinstance(x, bytes) else x for x in v]
        return v

    def flag(self, name: str, default: int) -> bool:
        """An int attribute that must be 0 or 1 (keepdims, transA, ...): ONNX says nothing of
        other values, and runtimes differ on them."""
        v = self.attr(name, default)
        if v not in (0, 1):
            raise ModelError(f"attribute '{name}' is {v}; it must be 0 or 1")
        return bool(v)

    def unread_attrs(self) -> list[str]:
        return sorted(set(self._attrs) - self._seen_attrs)

    # -- inputs ---------------------------------------------------------------------------

    @property
    def n_inputs(self) -> int:
        names = list(self.node.input)
        while names and not names[-1]:
            names.pop()
        return len(names)

    def has(self, i: int) -> bool:
        return i < len(self.node.input) and bool(self.node.input[i])

    def input(self, i: int) -> Value:
        if not self.has(i):
            raise ModelError(f"input {i} is missing")
        return self.imp.values[self.node.input[i]]

    def opt(self, i: int) -> Value | None:
        return self.input(i) if self.has(i) else None

    def const(self, i: int, what: str | None = None) -> np.ndarray:
        """Input i's value, which must be known at import time."""
        v = self.input(i)
        if v.is_const():
            return v.const
        raise Unsupported(f"{what or f'input {i}'} ('{self.node.input[i]}') is computed at run "
                          f"time; it must be known at import time")

    def int_const(self, i: int, what: str) -> np.ndarray:
        """Input i's value, known at import time: a 1-D tensor of integers (a shape, axes)."""
        a = self.const(i, what)
        if self.input(i).dtype not in INTS or a.ndim != 1:
            raise ModelError(f"{what} ('{self.node.input[i]}') is "
                             f"{self.input(i).type_text()}; it must be a 1-D tensor of integers")
        return a

    def all_const(self, *idx: int) -> bool:
        ids = idx or tuple(i for i in range(self.n_inputs) if self.has(i))
        return all(self.input(i).is_const() for i in ids if self.has(i))

    def ints(self, i: int, what: str) -> list[int]:
        return [as_int(x, what) for x in np.asarray(self.int_const(i, what)).reshape(-1)]

    # -- outputs --------------------------------------------------------------------------

    @property
    def n_outputs(self) -> int:
        return len(self.node.output)

    def used(self, i: int) -> bool:
        return i < len(self.node.output) and bool(self.node.output[i]) and \
            self.imp.is_used(self.node.output[i])

    def hint(self, i: int = 0) -> str:
        return value_hint(self.node.output[i], self.op)

    def module_path(self) -> str:
        """The torch module a node came from, from its scope name, as an identifier:
        `/layer1/layer1.0/conv1/Conv` is `layer1_0_conv1`; "" for a node outside any."""
        return module_path(self.node.name)

    def out(self, v: Value, i: int = 0) -> None:
        if i < len(self.node.output) and self.node.output[i]:
            self.imp.values[self.node.output[i]] = v

    def const_out(self, a: np.ndarray, i: int = 0, dtype: str | None = None) -> None:
        a = normalize(np.asarray(a))
        if dtype is None:
            dtype = "i64" if is_symbolic(a) else dtype_of_array(a)
        elif not is_symbolic(a):
            a = a.astype(NP_DTYPES[dtype]) if dtype in NP_DTYPES else a
        self.out(self.prog.constant(a, dtype, self.hint(i)), i)

    def define(self, expr: Expr, dtype: str, shape: list, i: int = 0) -> Value:
        v = self.prog.define(expr, dtype, shape, self.hint(i))
        self.out(v, i)
        return v

    # -- operands -------------------------------------------------------------------------

    def operand(self, v: Value) -> Expr:
        if v.is_const():
            if is_symbolic(v.const):
                raise Unsupported(f"the shape value {to_dims(v.const)} is used as tensor data")
            if _generic_name(v.hint):
                # A weight from a Constant node or an `onnx::MatMul_12` initializer: named
                # after its use (`attn_matmul_w`), as a person would.
                idx = next((i for i, name in enumerate(self.node.input)
                            if name and self.imp.values.get(name) is v), None)
                v.hint = _special_name(v.const) or \
                    f"{self.hint()}_{ROLES.get((self.op, idx), 'c')}"
        return self.prog.operand(v)

    def operand_in(self, v: Value, others: list[list], out_shape: list) -> Expr:
        """v's expression in an elementwise op whose result has out_shape: a literal when v
        is a uniform constant and the other operands alone already give that shape."""
        if v.is_const() and not is_symbolic(v.const) and v.const.size >= 1:
            flat = v.const.reshape(-1)
            if np.all(flat == flat[0]) and \
                    same_shape(broadcast_shapes(others, self.op) if others else [], out_shape):
                t = literal_text(flat[0].item(), v.dtype)
                if t is not None:
                    return Lit(t)
        return self.operand(v)


def _count_range(lo: int, hi: int) -> str:
    if lo == hi:
        return str(lo)
    return f"at least {lo}" if hi >= 1 << 30 else f"{lo} to {hi}"


def _attr_type_name(t: int) -> str:
    return AttributeProto.AttributeType.Name(t) if t in AttributeProto.AttributeType.values() \
        else str(t)


ROLES = {("MatMul", 0): "a", ("MatMul", 1): "w", ("Gemm", 0): "a", ("Gemm", 1): "w",
         ("Gemm", 2): "b", ("Add", 0): "b", ("Add", 1): "b", ("LayerNormalization", 1): "scale",
         ("LayerNormalization", 2): "bias", ("Gather", 0): "table", ("Gather", 1): "indices"}


def _special_name(a: np.ndarray) -> str | None:
    """`neg_inf`, `inf` or `nan` for a constant of one such value (a mask's fill, which has no
    literal), as torch2dsc names it."""
    if a.dtype.kind != "f" or a.size != 1 or np.isfinite(a).all():
        return None
    f = float(a.reshape(-1)[0])
    return "nan" if math.isnan(f) else ("neg_inf" if f < 0 else "inf")


def _generic_name(hint: str) -> bool:
    """`constant_3`, `MatMul_1234`: names that say nothing about the value."""
    m = re.match(r"^([A-Za-z]+)(_\d+)?$", hint)
    return bool(m) and (m.group(1).lower() == "constant" or
                        (m.group(2) is not None and m.group(1) in CONVERTERS))


Converter = Callable[[Node], None]
CONVERTERS: dict[str, Converter] = {}
NOTES: dict[str, str] = {}  # op type -> how it maps (docs/importers.md's table is written from it)
# Checks of attributes and used outputs alone, run first, and also on nodes downstream of an
# unsupported one (whose inputs are unknown), so that one run lists every problem.
PRECHECKS: dict[str, Converter] = {}


def converter(*ops: str, note: str = "", precheck: Converter | None = None):
    def register(fn: Converter) -> Converter:
        for op in ops:
            CONVERTERS[op] = fn
            NOTES[op] = note
            if precheck is not None:
                PRECHECKS[op] = precheck
        return fn
    return register


# ---------------------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------------------

BINARY = {"Add": ("+", np.add), "Sub": ("-", np.subtract), "Mul": ("*", np.multiply),
          "Div": ("/", None)}
COMPARE = {"Equal": ("==", np.equal), "Less": ("<", np.less), "Greater": (">", np.greater),
           "LessOrEqual": ("<=", np.less_equal), "GreaterOrEqual": (">=", np.greater_equal)}
LOGICAL = {"And": ("&&", np.logical_and), "Or": ("||", np.logical_or)}


def same_dtype(n: Node, *vals: Value | None) -> None:
    """ONNX gives these operands one type T; dsc would reject the mix only later, or not."""
    types = [v.dtype for v in vals if v is not None]
    if len(set(types)) > 1:
        raise ModelError(f"{n.op} of {' and '.join(types)}: the operands must have one type")


def _fold_binary(n: Node, fn, a: np.ndarray, b: np.ndarray, dtype: str) -> bool:
    if a.size > FOLD_LIMIT or b.size > FOLD_LIMIT:
        return False
    try:
        r = fn(a, b)
    except Undecided as e:
        raise Unsupported(str(e)) from None
    n.const_out(np.asarray(r), dtype=dtype if not (is_symbolic(a) or is_symbolic(b)) else None)
    return True


def _elementwise(n: Node, op: str, a: Value, b: Value, dtype: str) -> None:
    out = broadcast_shapes([a.shape, b.shape], n.op)
    ea = n.operand_in(a, [b.shape], out)
    eb = n.operand_in(b, [a.shape], out)
    if isinstance(ea, Lit) and isinstance(eb, Lit):
        ea = n.operand(a)
    n.define(Bin(op, ea, eb), dtype, out)


@converter(*BINARY, note="`a + b`, `a - b`, `a * b`, `a / b`; a uniform constant operand is a "
                         "literal")
def _binary(n: Node) -> None:
    a, b = n.input(0), n.input(1)
    same_dtype(n, a, b)
    op, fn = BINARY[n.op]
    if n.op == "Div":
        if a.dtype in INTS:
            fn = _int_div
        else:
            fn = np.divide
    if a.is_const() and b.is_const():
        if a.dtype in FLOATS and (is_symbolic(a.const) or is_symbolic(b.const)):
            raise Unsupported("float arithmetic on a shape value")
        if _fold_binary(n, fn, a.const, b.const, a.dtype):
            return
    if n.op == "Div" and a.dtype in INTS:
        raise Unsupported("integer Div at run time (ONNX truncates toward zero; dsc's `/` on "
                          "integers floors)")
    _elementwise(n, op, a, b, a.dtype)


@converter(*COMPARE, note="`==`, `<`, `>`, `<=`, `>=` (bool result)")
def _compare(n: Node) -> None:
    a, b = n.input(0), n.input(1)
    same_dtype(n, a, b)
    op, fn = COMPARE[n.op]
    if a.is_const() and b.is_const() and _fold_binary(n, fn, a.const, b.const, "bool"):
        return
    _elementwise(n, op, a, b, "bool")


@converter(*LOGICAL, note="`&&`, `||`")
def _logical(n: Node) -> None:
    a, b = n.input(0), n.input(1)
    same_dtype(n, a, b)
    if a.dtype != "bool":
        raise ModelError(f"{n.op} of {a.dtype}: the operands must be bool")
    op, fn = LOGICAL[n.op]
    if a.is_const() and b.is_const() and _fold_binary(n, fn, a.const, b.const, "bool"):
        return
    _elementwise(n, op, a, b, "bool")


def _check_mod(n: Node) -> None:
    if n.flag("fmod", 0):
        raise Unsupported("fmod=1 (C's fmod); dsc's % is floor modulo")


@converter("Mod", note="folded only (integers, fmod=0, on shape values and constants): dsc has "
                       "no modulo on tensors", precheck=_check_mod)
def _mod(n: Node) -> None:
    a, b = n.input(0), n.input(1)
    same_dtype(n, a, b)
    if a.dtype not in INTS:
        raise Unsupported("Mod of floats")
    if a.is_const() and b.is_const() and _fold_binary(n, np.mod, a.const, b.const, a.dtype):
        return
    raise Unsupported("Mod at run time: dsc has no modulo on tensors (`%` is for dims)")


@converter("Max", "Min", note="`maximum`, `minimum` (pairwise over the inputs)")
def _maxmin(n: Node) -> None:
    vals = [n.input(i) for i in range(n.n_inputs)]
    same_dtype(n, *vals)
    if all(v.is_const() for v in vals) and not any(is_symbolic(v.const) for v in vals):
        fn = np.maximum if n.op == "Max" else np.minimum
        r = vals[0].const
        for v in vals[1:]:
            r = fn(r, v.const)
        n.const_out(r, dtype=vals[0].dtype)
        return
    shape = broadcast_shapes([v.shape for v in vals], n.op)
    e = n.operand(vals[0])
    for v in vals[1:]:
        e = Call("maximum" if n.op == "Max" else "minimum", [e, n.operand(v)])
    n.define(e, vals[0].dtype, shape)


UNARY = {  # op -> (dsc callee, numpy folder)
    "Sqrt": ("sqrt", np.sqrt), "Exp": ("exp", np.exp), "Log": ("log", np.log),
    "Tanh": ("tanh", np.tanh), "Erf": ("erf", None), "Sigmoid": ("sigmoid", None),
    "Abs": ("abs", np.abs), "Relu": ("nn.relu", None), "Sin": ("sin", np.sin),
    "Cos": ("cos", np.cos),
}


@converter(*UNARY, note="`sqrt exp log tanh erf sigmoid abs sin cos`; Relu is `nn.relu`")
def _unary(n: Node) -> None:
    x = n.input(0)
    callee, fn = UNARY[n.op]
    if x.is_const() and fn is not None and not is_symbolic(x.const) and x.const.size <= FOLD_LIMIT:
        n.const_out(fn(x.const).astype(x.const.dtype), dtype=x.dtype)
        return
    if callee != "abs" and x.dtype not in FLOATS:
        raise Unsupported(f"{n.op} of {x.dtype}")
    n.define(Call(callee, [n.operand(x)]), x.dtype, x.shape)


@converter("Neg", note="`-x`")
def _neg(n: Node) -> None:
    x = n.input(0)
    if x.is_const() and x.const.size <= FOLD_LIMIT:
        n.const_out(-x.const, dtype=None if is_symbolic(x.const) else x.dtype)
        return
    n.define(Unary("-", n.operand(x)), x.dtype, x.shape)


@converter("Not", note="`!x`")
def _not(n: Node) -> None:
    x = n.input(0)
    if x.is_const():
        n.const_out(np.logical_not(x.const), dtype="bool")
        return
    n.define(Unary("!", n.operand(x)), "bool", x.shape)


@converter("Reciprocal", note="`1.0 / x`")
def _reciprocal(n: Node) -> None:
    x = n.input(0)
    if x.dtype not in FLOATS:
        raise Unsupported(f"Reciprocal of {x.dtype}")
    n.define(Bin("/", Lit("1.0"), n.operand(x)), x.dtype, x.shape)


@converter("Pow", note="exponent 2: `x * x`, 3: `x * x * x`, 0.5: `sqrt`, -0.5: `rsqrt`, "
                       "-1: `1.0 / x`, 1: `x`; otherwise `pow(x, y)`")
def _pow(n: Node) -> None:
    x, y = n.input(0), n.input(1)
    if x.dtype not in FLOATS:
        raise Unsupported(f"Pow of {x.dtype}")
    out = broadcast_shapes([x.shape, y.shape], n.op)
    if y.is_const() and not is_symbolic(y.const) and y.const.size >= 1:
        flat = y.const.reshape(-1)
        if np.all(flat == flat[0]) and same_shape(x.shape, out):
            e = float(flat[0])
            xr = n.operand(x)
            special = {1.0: lambda: xr, 2.0: lambda: Bin("*", xr, xr),
                       3.0: lambda: Bin("*", Bin("*", xr, xr), xr),
                       0.5: lambda: Call("sqrt", [xr]), -0.5: lambda: Call("rsqrt", [xr]),
                       -1.0: lambda: Bin("/", Lit("1.0"), xr)}
            if e == 1.0 and isinstance(xr, Ref):
                n.out(x)
                return
            if e in special:
                n.define(special[e](), x.dtype, out)
                return
            t = literal_text(e, x.dtype)
            if t is not None:
                n.define(Call("pow", [xr, Lit(t)]), x.dtype, out)
                return
    ey = n.operand(y)
    if y.dtype != x.dtype:
        ey = Call("cast", [ey], [("dtype", Str(x.dtype))])
    n.define(Call("pow", [n.operand(x), ey]), x.dtype, out)


@converter("Where", note="`where(c, a, b)`")
def _where(n: Node) -> None:
    c, a, b = n.input(0), n.input(1), n.input(2)
    same_dtype(n, a, b)
    if c.dtype != "bool":
        raise ModelError(f"Where with a condition of {c.dtype}: it must be bool")
    if c.is_const() and a.is_const() and b.is_const():
        try:
            n.const_out(np.where(c.const, a.const, b.const),
                        dtype=None if is_symbolic(a.const) or is_symbolic(b.const) else a.dtype)
            return
        except Undecided as e:
            raise Unsupported(str(e)) from None
    out = broadcast_shapes([c.shape, a.shape, b.shape], n.op)
    ec = n.operand(c)
    ea = n.operand_in(a, [c.shape, b.shape], out)
    eb = n.operand_in(b, [c.shape, a.shape], out)
    if isinstance(ea, Lit) and isinstance(eb, Lit):
        ea = n.operand(a)
    n.define(Call("where", [ec, ea, eb]), a.dtype, out)


def _check_cast(n: Node) -> None:
    dtype_of_enum(n.attr("to"), "the target type")
    if n.attr("saturate", 1) != 1:
        raise Unsupported("saturate=0 (float8 casts)")


@converter("Cast", note="`cast(x, dtype=...)`; to the same dtype it is dropped",
           precheck=_check_cast)
def _cast(n: Node) -> None:
    x = n.input(0)
    to = dtype_of_enum(n.attr("to"), "the target type")
    if x.is_const():
        if is_symbolic(x.const):
            if to in INTS:
                n.const_out(x.const, dtype=to)
                return
            raise Unsupported(f"a shape value cast to {to}")
        n.const_out(x.const.astype(NP_DTYPES[to]), dtype=to)
        return
    if to == x.dtype:
        n.out(x)
        return
    n.define(Call("cast", [n.operand(x)], [("dtype", Str(to))]), to, x.shape)


def _check_dropout(n: Node) -> None:
    if n.op == "Dropout":
        n.attr("seed")
        if n.used(1):
            raise Unsupported("its mask output is used")


@converter("Identity", "Dropout", note="the input itself (Dropout: inference only, no mask)",
           precheck=_check_dropout)
def _identity(n: Node) -> None:
    if n.op == "Dropout":
        for i, what, types, kind in ((1, "ratio", FLOATS, "float"),
                                     (2, "training_mode", ("bool",), "bool")):
            if n.has(i) and (n.input(i).rank != 0 or n.input(i).dtype not in types):
                raise ModelError(f"its {what} is {n.input(i).type_text()}; it must be a {kind} "
                                 f"scalar")
    if n.op == "Dropout" and n.has(2):
        t = n.input(2)
        if not (t.is_const() and not bool(np.asarray(t.const).reshape(-1)[0])):
            raise Unsupported("training_mode is not a constant false")
    n.out(n.input(0))


GELU = {"none": "nn.gelu", "tanh": "nn.gelu_tanh"}


def _check_gelu(n: Node) -> None:
    approx = n.attr("approximate", "none")
    if approx not in GELU:
        raise Unsupported(f"approximate=\"{approx}\"")


@converter("Gelu", note="`nn.gelu`, or `nn.gelu_tanh` with approximate=\"tanh\" (opset 20)",
           precheck=_check_gelu)
def _gelu(n: Node) -> None:
    fn = GELU[n.attr("approximate", "none")]
    x = n.input(0)
    n.define(Call(fn, [n.operand(x)]), x.dtype, x.shape)


# ---------------------------------------------------------------------------------------------
# Normalization, softmax, contraction
# ---------------------------------------------------------------------------------------------

def _axis(axis: int, rank: int, what: str) -> int:
    if not -rank <= axis < rank:
        raise ModelError(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank


def _axis_text(axis: int, rank: int) -> str:
    """The last axis as -1 (as a person writes it), the others counted from 0."""
    return "-1" if axis == rank - 1 else str(axis)


@converter("Softmax", "LogSoftmax", note="`nn.softmax(x, axis=...)`, `nn.log_softmax`")
def _softmax(n: Node) -> None:
    x = n.input(0)
    axis = _axis(n.attr("axis", -1), x.rank, "axis")
    fn = "nn.softmax" if n.op == "Softmax" else "nn.log_softmax"
    n.define(Call(fn, [n.operand(x)], [("axis", Raw(_axis_text(axis, x.rank)))]),
             x.dtype, x.shape)


def _check_layer_norm(n: Node) -> None:
    if n.used(1) or n.used(2):
        raise Unsupported("its Mean or InvStdDev output is used")


@converter("LayerNormalization",
           note="over the last axis: `nn.layer_norm(x, scale, bias, eps=...)`; over more axes "
                "the same written out with `mean` and `rsqrt` (opset 17)",
           precheck=_check_layer_norm)
def _layer_norm(n: Node) -> None:
    x, scale, bias = n.input(0), n.input(1), n.opt(2)
    same_dtype(n, x, scale, bias)
    axis = _axis(n.attr("axis", -1), x.rank, "axis")
    eps = float(n.attr("epsilon", 1e-5))
    n.attr("stash_type", 1)
    eps_text = finite_literal(eps, "f32", "epsilon")
    if axis == x.rank - 1:
        xr, sr = n.operand(x), n.operand(scale)
        b = n.operand(bias) if bias is not None else Lit("0.0")
        n.define(Call("nn.layer_norm", [xr, sr, b],
                      [("eps", Raw(eps_text))]), x.dtype, x.shape)
        return
    axes = Dims(list(range(axis, x.rank)))
    kw = [("axis", axes), ("keepdims", Raw("true"))]
    xr = n.operand(x)
    reduced = [d if i < axis else 1 for i, d in enumerate(x.shape)]
    mu = n.prog.define(Call("mean", [xr], kw), x.dtype, reduced, n.hint() + "_mean")
    cen = n.prog.define(Bin("-", xr, Ref(mu)), x.dtype, x.shape, n.hint() + "_centered")
    var = n.prog.define(Call("mean", [Bin("*", Ref(cen), Ref(cen))], kw), x.dtype, reduced,
                        n.hint() + "_var")
    y = Bin("*", Call("rsqrt", [Bin("+", Ref(var), Lit(eps_text))]), Ref(cen))
    y = Bin("*", y, n.operand(scale))
    if bias is not None:
        y = Bin("+", y, n.operand(bias))
    n.define(y, x.dtype, x.shape)


def _matmul_shape(a: list, b: list, what: str) -> list:
    if not a or not b:
        raise ModelError(f"{what}: operands must have rank >= 1")
    av, bv = len(a) == 1, len(b) == 1
    a2 = [1] + a if av else a
    b2 = b + [1] if bv else b
    if symdim.as_dim(a2[-1]).decide_eq(b2[-2]) is False:
        raise ModelError(f"{what}: contracted dims {a2[-1]} and {b2[-2]} differ")
    out = broadcast_shapes([a2[:-2], b2[:-2]], what)
    if not av:
        out.append(a2[-2])
    if not bv:
        out.append(b2[-1])
    return out


@converter("MatMul", note="`matmul(a, b)`")
def _matmul(n: Node) -> None:
    a, b = n.input(0), n.input(1)
    same_dtype(n, a, b)
    if a.dtype not in FLOATS + INTS:
        raise Unsupported(f"MatMul of {a.dtype}")
    shape = _matmul_shape(a.shape, b.shape, n.op)
    n.define(Call("matmul", [n.operand(a), n.operand(b)]), a.dtype, shape)


@converter("Gemm", note="`matmul(a, b) * alpha + c * beta`; a transposed constant B "
                        "(transB=1, as torch's Linear exports) is stored transposed, [in, out]")
def _gemm(n: Node) -> None:
    a, b, c = n.input(0), n.input(1), n.opt(2)
    same_dtype(n, a, b, c)
    alpha, beta = float(n.attr("alpha", 1.0)), float(n.attr("beta", 1.0))
    ta, tb = n.flag("transA", 0), n.flag("transB", 0)
    if a.rank != 2 or b.rank != 2:
        raise ModelError("Gemm needs rank-2 A and B")

    def transposed(v: Value) -> tuple[Expr, list]:
        if v.is_const() and not is_symbolic(v.const):
            t = n.prog.constant(contiguous(v.const.T), v.dtype, v.hint)
            if _generic_name(v.hint):
                t.hint = f"{n.hint()}_{ROLES[('Gemm', 1 if v is b else 0)]}"
            return n.operand(t), [v.shape[1], v.shape[0]]
        return Call("permute", [n.operand(v), Dims([1, 0])]), [v.shape[1], v.shape[0]]

    ea, sa = transposed(a) if ta else (n.operand(a), a.shape)
    eb, sb = transposed(b) if tb else (n.operand(b), b.shape)
    shape = _matmul_shape(sa, sb, n.op)
    e: Expr = Call("matmul", [ea, eb])
    if alpha != 1.0:
        e = Bin("*", e, Lit(finite_literal(alpha, a.dtype, "alpha")))
    if c is not None and beta != 0.0:
        ec = n.operand_in(c, [shape], shape)
        if beta != 1.0:
            ec = Bin("*", ec, Lit(finite_literal(beta, a.dtype, "beta")))
        e = Bin("+", e, ec)
        shape = broadcast_shapes([shape, c.shape], n.op)
    n.define(e, a.dtype, shape)


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------

REDUCE = {"ReduceMean": ("mean", np.mean, 18), "ReduceSum": ("sum", np.sum, 13),
          "ReduceMax": ("max", np.max, 18), "ReduceMin": ("min", np.min, 18)}


@converter(*REDUCE, note="`mean`, `sum`, `max`, `min` with `axis=` and `keepdims=`; axes as "
                         "an attribute or (ReduceSum 13+, the others 18+) an input")
def _reduce(n: Node) -> None:
    x = n.input(0)
    callee, fn, axes_input_from = REDUCE[n.op]
    keepdims = n.flag("keepdims", 1)
    noop = n.flag("noop_with_empty_axes", 0)
    if n.opset >= axes_input_from:
        axes = n.ints(1, "axes") if n.has(1) else []
    else:
        axes = list(n.attr("axes", []) or [])
    if not axes and noop:
        n.out(x)
        return
    axes = sorted({_axis(a, x.rank, "axis") for a in axes}) if axes else list(range(x.rank))
    shape = [1 if i in axes else d for i, d in enumerate(x.shape)]
    if not keepdims:
        shape = [d for i, d in enumerate(x.shape) if i not in axes]
    if x.is_const() and not is_symbolic(x.const) and x.const.size <= FOLD_LIMIT:
        n.const_out(np.asarray(fn(x.const, axis=tuple(axes), keepdims=keepdims))
                    .astype(x.const.dtype), dtype=x.dtype)
        return
    if callee == "mean" and x.dtype not in FLOATS:
        raise Unsupported(f"ReduceMean of {x.dtype}")
    kw: list = []
    if len(axes) != x.rank or x.rank == 0:
        kw.append(("axis", Raw(_axis_text(axes[0], x.rank)) if len(axes) == 1
                   else Dims(axes)))
    if keepdims:
        kw.append(("keepdims", Raw("true")))
    n.define(Call(callee, [n.operand(x)], kw), x.dtype, shape)


def _check_arg_reduce(n: Node) -> None:
    if n.flag("select_last_index", 0):
        raise Unsupported("select_last_index=1 (dsc's argmax and argmin pick the first index)")


@converter("ArgMax", "ArgMin", note="`argmax`, `argmin` with `axis=` and `keepdims=`; "
                                    "select_last_index=0 only", precheck=_check_arg_reduce)
def _arg_reduce(n: Node) -> None:
    x = n.input(0)
    axis = _axis(n.attr("axis", 0), x.rank, "axis")
    keepdims = n.flag("keepdims", 1)
    n.flag("select_last_index", 0)
    shape = [1 if i == axis else d for i, d in enumerate(x.shape)] if keepdims else \
        [d for i, d in enumerate(x.shape) if i != axis]
    if x.is_const() and not is_symbolic(x.const) and x.const.size <= FOLD_LIMIT:
        r = (np.argmax if n.op == "ArgMax" else np.argmin)(x.const, axis=axis, keepdims=keepdims)
        n.const_out(np.asarray(r, dtype=np.int64), dtype="i64")
        return
    if x.dtype not in FLOATS + INTS:
        raise Unsupported(f"{n.op} of {x.dtype}")
    kw: list = []
    if axis != x.rank - 1:
        kw.append(("axis", Raw(str(axis))))
    if keepdims:
        kw.append(("keepdims", Raw("true")))
    n.define(Call("argmax" if n.op == "ArgMax" else "argmin", [n.operand(x)], kw), "i64", shape)


# The shape and layout converters live in layout_ops.py, the convolution, normalization and
# pooling ones in conv_ops.py; importing them registers them.
from . import conv_ops, layout_ops  # noqa: E402,F401  (they import the names above from here)


# ---------------------------------------------------------------------------------------------
# The importer
# ---------------------------------------------------------------------------------------------

class Importer:
    def __init__(self, model, name: str, source: str):
        self.model = model
        self.graph = model.graph
        self.prog = Program(name)
        self.source = source
        self.values: dict[str, Value] = {}
        self.poisoned: set[str] = set()
        self.problems: list[Problem] = []
        self.opset = self._opset()
        self._uses = Counter()
        self._readers: dict[str, list] | None = None
        # A node's output already computed by an earlier node that folded it in (a
        # BatchNormalization folded into its Conv, conv_ops.py): output name -> value.
        self.folded: dict[str, Value] = {}

    def _opset(self) -> int:
        versions = {o.domain: o.version for o in self.model.opset_import}
        v = versions.get("", versions.get("ai.onnx"))
        if v is None:
            raise ModelError("the model imports no version of the default ONNX domain")
        if not MIN_OPSET <= v <= MAX_OPSET:
            raise ModelError(f"opset {v} is not supported (this importer reads opsets "
                             f"{MIN_OPSET} to {MAX_OPSET}; onnx.version_converter can convert)")
        return v

    def is_used(self, name: str) -> bool:
        return self._uses[name] > 0

    def readers(self, name: str) -> list:
        """The nodes that read `name`, once per read; a graph output is a None entry. For
        converters that look one node ahead (a Conv folding the BatchNormalization after it)."""
        if self._readers is None:
            self._readers = {}
            for nd in self.graph.node:
                for x in _node_inputs(nd):
                    self._readers.setdefault(x, []).append(nd)
            for o in self.graph.output:
                self._readers.setdefault(o.name, []).append(None)
        return self._readers.get(name, [])

    # -- graph ----------------------------------------------------------------------------

    def _sorted_nodes(self) -> list[tuple[int, object]]:
        """Nodes in a topological order (stable); a cycle or an undefined input is an error."""
        g = self.graph
        nodes = list(enumerate(g.node))
        defined = {i.name for i in g.input} | {t.name for t in g.initializer} | {""}
        producer: dict[str, int] = {}
        for i, nd in nodes:
            for o in nd.output:
                if o:
                    if o in producer or o in defined:
                        raise ModelError(f"value '{o}' is defined twice (node "
                                         f"'{nd.name or nd.op_type}')")
                    producer[o] = i
        deps: dict[int, set[int]] = {}
        for i, nd in nodes:
            ds = set()
            for name in _node_inputs(nd):
                if name in defined:
                    continue
                if name not in producer:
                    raise ModelError(f"node '{nd.name or nd.op_type}' (#{i}) reads '{name}', "
                                     f"which no node, input or initializer defines")
                ds.add(producer[name])
            deps[i] = ds
        order, done = [], set()
        remaining = [i for i, _ in nodes]
        while remaining:
            progress = [i for i in remaining if deps[i] <= done]
            if not progress:
                names = [g.node[i].name or f"{g.node[i].op_type}#{i}" for i in remaining[:6]]
                raise ModelError("the graph has a cycle: nodes " + ", ".join(
                    f"'{s}'" for s in names) + (" ..." if len(remaining) > 6 else "") +
                    " depend on each other")
            for i in progress:
                done.add(i)
                order.append(i)
            remaining = [i for i in remaining if i not in done]
        return [(i, g.node[i]) for i in order]

    def _inputs(self) -> None:
        init_names = {t.name for t in self.graph.initializer}
        symbols: dict[str, str] = {}
        fresh = 0
        for inp in self.graph.input:
            if inp.name in init_names:
                continue
            t = inp.type
            if t.WhichOneof("value") != "tensor_type":
                raise ModelError(f"input '{inp.name}' is not a tensor")
            dtype = dtype_of_enum(t.tensor_type.elem_type, f"input '{inp.name}'")
            if not t.tensor_type.HasField("shape"):
                raise ModelError(f"input '{inp.name}' has no shape (rank unknown)")
            dims = []
            for d in t.tensor_type.shape.dim:
                if d.HasField("dim_value") and d.dim_value >= 0:
                    dims.append(int(d.dim_value))
                    continue
                key = d.dim_param if d.HasField("dim_param") and d.dim_param else None
                if key is None:
                    while f"D{fresh}" in symbols.values():
                        fresh += 1
                    name = self.prog.add_symbol(f"D{fresh}")
                    fresh += 1
                elif key in symbols:
                    name = symbols[key]
                else:
                    name = self.prog.add_symbol(key)
                    symbols[key] = name
                dims.append(Dim.symbol(name))
            v = self.prog.add_input(inp.name, dtype, dims)
            if v.name != inp.name:
                self.prog.header.append(f"ONNX input '{inp.name}' is the parameter {v.name}.")
            self.values[inp.name] = v
        for t in self.graph.initializer:
            if t.data_location == TensorProto.EXTERNAL and not t.raw_data:
                raise ModelError(f"initializer '{t.name}' lives in an external file that was "
                                 f"not loaded")
            arr, dtype = tensor_array(t, f"initializer '{t.name}'")
            self.values[t.name] = self.prog.constant(arr, dtype, weight_hint(t.name))

    def run(self) -> ImportResult:
        g = self.graph
        _check_strings(self.model)
        order = self._sorted_nodes()
        for _, nd in order:
            for name in _node_inputs(nd):
                self._uses[name] += 1
        for o in g.output:
            self._uses[o.name] += 1
        try:
            self._inputs()
        except Unsupported as e:
            raise ModelError(str(e)) from None
        counts: Counter = Counter(nd.op_type for _, nd in order)
        for i, nd in order:
            domain = nd.domain if nd.domain not in ("", "ai.onnx") else ""
            op = f"{domain}.{nd.op_type}" if domain else nd.op_type
            if domain or nd.op_type not in CONVERTERS:
                why = (f"ops of domain '{domain}' are not supported" if domain
                       else "no converter for this op (docs/importers.md lists the supported ops)")
                self._fail(op, nd, i, why)
                continue
            n = Node(self, nd, i)
            if any(name in self.poisoned for name in _node_inputs(nd)):
                try:
                    n.check_schema()
                    if nd.op_type in PRECHECKS:
                        PRECHECKS[nd.op_type](n)
                except (Unsupported, ModelError) as e:
                    self._fail(op, nd, i, str(e))
                self._poison(nd)
                continue
            try:
                n.check_schema()
                if nd.op_type in PRECHECKS:
                    PRECHECKS[nd.op_type](n)
                CONVERTERS[nd.op_type](n)
                extra = n.unread_attrs()
                if extra:
                    raise Unsupported("attribute" + ("s " if len(extra) > 1 else " ") +
                                      ", ".join(f"'{a}'" for a in extra) + " not supported")
                for k, o in enumerate(nd.output):
                    if o and o not in self.values and self.is_used(o):
                        raise Unsupported(f"output {k} ('{o}') is not supported")
            except (Unsupported, Undecided) as e:
                self._fail(op, nd, i, str(e))
            except ModelError as e:
                self._fail(op, nd, i, f"invalid node: {e}")
        if self.problems:
            raise ImportFailure(sorted(self.problems, key=lambda p: p.index))
        if not g.output:
            raise ModelError("the graph has no outputs")
        outs = []
        for o in g.output:
            if o.name not in self.values:
                raise ModelError(f"graph output '{o.name}' is not defined")
            v = self.values[o.name]
            if v.is_const() and is_symbolic(v.const):
                raise ModelError(f"graph output '{o.name}' is the shape value "
                                 f"{to_dims(v.const)}, which a dsc function cannot return")
            outs.append(v)
        self.prog.set_returns(outs)
        self.prog.header.insert(0, f"Imported from {self.source} by importers/onnx2dsc.py "
                                   f"(ONNX opset {self.opset}, {len(order)} node"
                                   f"{'' if len(order) == 1 else 's'}).")
        text = self.prog.text()
        weights = {w.name: w.weight_data for w in self.prog.live_weight_values()}
        used_syms = [s for s in self.prog.symbols
                     if any(s in symdim.as_dim(d).symbols() for v in self.prog.inputs
                            for d in v.shape)]
        return ImportResult(text=text, weights=weights, node_counts=counts, symbols=used_syms,
                            n_inputs=len(self.prog.inputs),
                            n_statements=self.prog.statement_count, opset=self.opset)

    def _fail(self, op: str, nd, i: int, reason: str) -> None:
        self.problems.append(Problem(op, nd.name, i, reason))
        self._poison(nd)

    def _poison(self, nd) -> None:
        for o in nd.output:
            if o:
                self.poisoned.add(o)


def _check_strings(msg) -> None:
    """ModelError for a string field that is not UTF-8 (protobuf then gives bytes, not str:
    a corrupt name or op type would reach the converters)."""
    for fd, value in msg.ListFields():
        if fd.type == fd.TYPE_STRING:
            for v in [value] if isinstance(value, (str, bytes)) else value:
                if not isinstance(v, str):
                    raise ModelError(f"a {msg.DESCRIPTOR.name}'s {fd.name} is not UTF-8 text: "
                                     f"{v[:60]!r}")
        elif fd.type == fd.TYPE_MESSAGE:
            for m in [value] if hasattr(value, "ListFields") else value:
                _check_strings(m)


def _node_inputs(nd) -> list[str]:
    """The values a node reads, those of its subgraphs (If/Loop bodies) included."""
    names = [x for x in nd.input if x]
    for a in nd.attribute:
        for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
            inner = {o for n in sub.node for o in n.output} | {i.name for i in sub.input} | \
                    {t.name for t in sub.initializer}
            for n2 in sub.node:
                names += [x for x in _node_inputs(n2) if x not in inner]
    return names


def import_model(model, name: str, source: str = "model.onnx") -> ImportResult:
    return Importer(model, name, source).run()


def supported_ops() -> list[str]:
    return sorted(CONVERTERS)
