"""What every ONNX converter works with: `Node`, the per-node context (attributes, inputs
known at import time or not, outputs defined as dsc values), the table the converters register
in (CONVERTERS, onnx_import.py fills it by importing onnx_ops.py, onnx_layout.py and
onnx_conv.py), ONNX's element types, the folding helpers (numpy over object arrays of
symbolic Dims) and the names values get from the graph.
"""

from __future__ import annotations

import math
import re

import numpy as np

from . import dtypes, symdim
from .common import (INTS, ModelError, Registry, Unsupported, dtype_of_array,
                     same_shape)
from .lowering import shape_value_expr
from .program import Expr, Lit, Value, broadcast_axes, identifier, literal_text
from .symdim import Dim

MIN_OPSET, MAX_OPSET = 13, 21

try:  # onnx is imported lazily by the CLI; this module needs it for the enums and schemas.
    from onnx import AttributeProto, TensorProto, defs, helper, numpy_helper
except ImportError:  # pragma: no cover - the CLI reports a missing onnx first
    AttributeProto = TensorProto = defs = helper = numpy_helper = None  # type: ignore[assignment]


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------

def _onnx_dtypes() -> dict[int, str]:
    return {
        TensorProto.FLOAT: "f32", TensorProto.DOUBLE: "f64", TensorProto.FLOAT16: "f16",
        TensorProto.BFLOAT16: "bf16", TensorProto.INT64: "i64", TensorProto.INT32: "i32",
        TensorProto.INT8: "i8", TensorProto.BOOL: "bool",
    }


def dtype_of_enum(elem_type: int, what: str) -> str:
    """The dsc dtype of an ONNX element type (under --dtype, a float is the target:
    dtypes.py)."""
    d = _onnx_dtypes().get(elem_type)
    if d is None:
        name = TensorProto.DataType.Name(elem_type) if elem_type in TensorProto.DataType.values() \
            else str(elem_type)
        raise Unsupported(f"{what} has element type {name}, which dsc does not have "
                          f"(it has {', '.join(sorted(set(_onnx_dtypes().values())))})")
    return dtypes.mapped(d)

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
    return dtypes.round_to(arr, dtype), dtype


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

# ---------------------------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------------------------

def value_hint(onnx_name: str, op_type: str) -> str:
    """A readable name for a node output: `/attention/self/query/MatMul_output_0` becomes
    `query_matmul`, `onnx::Add_12` `add_12`; plain names stay as they are."""
    s = onnx_name
    if re.match(r"^val_\d+$", s):
        # torch's dynamo exporter names the values it makes `val_123`: named after the op.
        return identifier(op_type.lower(), "t")
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
    """One ONNX node as its converter sees it. `imp` is the onnx_import.Importer reading the
    graph: its values, and the graph around the node (`readers`, `is_used`, `folded`)."""

    def __init__(self, imp, node, index: int):
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
        if not is_symbolic(a):
            a = dtypes.round_to(a, dtype)
        self.out(self.prog.constant(a, dtype, self.hint(i)), i)

    def define(self, expr: Expr, dtype: str, shape: list, i: int = 0) -> Value:
        v = self.prog.define(expr, dtype, shape, self.hint(i))
        self.out(v, i)
        return v

    # -- operands -------------------------------------------------------------------------

    def operand(self, v: Value) -> Expr:
        if v.is_const():
            if is_symbolic(v.const):
                # A shape value read as data (a dim cast to float and multiplied into
                # activations, or a mask's length): `arange(S, S + 1)` per element, as
                # torch2dsc reads a size used as data.
                return shape_value_expr(v.const, v.dtype)
            if generic_name(v.hint):
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


def generic_name(hint: str) -> bool:
    """`constant_3`, `MatMul_1234`, the dynamo exporter's `val_12`: names that say nothing
    about the value."""
    m = re.match(r"^([A-Za-z]+)(_\d+)?$", hint)
    return bool(m) and (m.group(1).lower() == "constant" or
                        (m.group(1) == "val" and m.group(2) is not None) or
                        (m.group(2) is not None and m.group(1) in CONVERTERS))


# ONNX op type -> its converter, a function of a Node; `@converter("Relu", note=...)`
# registers one. The prechecks read attributes and used outputs alone, and also run on nodes
# downstream of an unsupported one (whose inputs are unknown), so that one run lists every
# problem.
CONVERTERS = Registry("onnx2dsc")
converter = CONVERTERS.register


def same_dtype(n: Node, *vals: Value | None) -> None:
    """ONNX gives these operands one type T; dsc would reject the mix only later, or not."""
    types = [v.dtype for v in vals if v is not None]
    if len(set(types)) > 1:
        raise ModelError(f"{n.op} of {' and '.join(types)}: the operands must have one type")


def norm_axis(axis: int, rank: int, what: str) -> int:
    """An axis attribute counted from 0; out of range, it is a ModelError."""
    if not -rank <= axis < rank:
        raise ModelError(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank
