"""aten ops for torch_import.py: arithmetic, comparisons, casts, activations and reductions,
and the helpers torch_nn.py builds on (softmax, normalization, matmul and linear, attention,
convolution). Each converter registers itself in torch_node's table (CONVERTERS) when this
module is imported.

Dtypes follow torch: the result's dtype is the one torch recorded, and an operand of another
dtype is cast to the dtype torch computes in (`x + 1.5` with an i64 x casts x to f32), since
dsc's operators take one dtype. A Python number is a literal of that dtype.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from . import symdim
from .common import FLOATS, INTS, Unsupported, axis_text, same_shape
from .dtypes import round_to
from .program import Bin, Call, Dims, Expr, Lit, Raw, Ref, Str, Unary, Value, broadcast_axes
from .lowering import dim_tensor
from .symdim import Dim
from .torch_node import TORCH_DTYPES, Node, UnsupportedArg, converter, dsc_dtype, norm_axis

# ---------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------


def broadcast(n: Node, shapes: list[list]) -> list:
    """The broadcast of the operands' shapes, as they are written; torch's recorded dim
    where the operands' dims do not settle it."""
    meta = n.out_shape()
    rank = len(meta)
    out = []
    for i, big in broadcast_axes(shapes, rank):
        if not big:
            out.append(1)
        elif all(symdim.as_dim(d).same(big[0]) for d in big):
            out.append(big[0])
        else:
            out.append(meta[i])
    return out


def shape_of(x) -> list:
    return x.shape if isinstance(x, Value) else []


def is_uniform(v: Value):
    """The scalar every element of a constant holds, or the fill of a `full`; else None."""
    if v.is_const() and v.const.dtype != object and v.const.size >= 1:
        flat = v.const.reshape(-1)
        if np.all(flat == flat[0]):
            return flat[0].item()
    return None


def elem(n: Node, x, dtype: str, out_shape: list, others: list[list]) -> Expr:
    """An operand of an elementwise op computed in dtype: a literal for a number or for a
    uniform constant whose shape the other operands already give, else the value (cast)."""
    if isinstance(x, Dim):
        if x.value() is None:
            return dim_tensor(x, dtype)
        x = x.value()
    if isinstance(x, (bool, int, float, np.number)):
        return n.lit(x.item() if isinstance(x, np.number) else x, dtype)
    if not isinstance(x, Value):
        raise Unsupported(f"operand {x!r} is not a tensor or a number")
    u = is_uniform(x)
    if u is None:
        u = n.imp.fills.get(id(x))
    if u is not None and same_shape(broadcast_dims(others), out_shape):
        return n.lit(u, dtype)
    return n.cast(x, dtype)


def broadcast_dims(shapes: list[list]) -> list:
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        big = [d for d in dims if not (isinstance(d, int) and d == 1)]
        out.append(big[0] if big else 1)
    return out


def promote(a, b) -> str:
    """The dtype torch computes `a op b` in (a number next to a tensor counts as torch says)."""
    def dummy(x):
        if isinstance(x, Value):
            return torch.zeros((1,) if x.rank else (), dtype=TORCH_DTYPES[x.dtype])
        if isinstance(x, Dim):
            return 1
        return x
    return dsc_dtype(torch.result_type(dummy(a), dummy(b)), "the computation's dtype")


def binary(n: Node, op: str, a, b, dtype: str, out_dtype: str | None = None) -> Value:
    out = broadcast(n, [shape_of(a), shape_of(b)])
    ea = elem(n, a, dtype, out, [shape_of(b)])
    eb = elem(n, b, dtype, out, [shape_of(a)])
    if isinstance(ea, Lit) and isinstance(eb, Lit):
        ea = n.cast(a, dtype) if isinstance(a, Value) else ea
    return n.define(Bin(op, ea, eb), out_dtype or n.out_dtype(), out)


# ---------------------------------------------------------------------------------------------
# Arithmetic and comparisons
# ---------------------------------------------------------------------------------------------

ARITH = {"add": "+", "sub": "-", "rsub": "-", "mul": "*", "div": "/"}


@converter("aten.add.Tensor", "aten.add.Scalar", "aten.sub.Tensor", "aten.sub.Scalar",
           "aten.rsub.Tensor", "aten.rsub.Scalar", "aten.mul.Tensor", "aten.mul.Scalar",
           "aten.div.Tensor", "aten.div.Scalar", "aten.div.Tensor_mode", "aten.div.Scalar_mode",
           "aten.true_divide.Tensor",
           dsc="`a + b`, `a - b`, `a * b`, `a / b`",
           note="`alpha` scales the second operand; a number or a uniform constant is a "
                "literal; `rounding_mode` only None (dsc has no floor or trunc)")
def _arith(n: Node) -> None:
    kind = n.op.split(".")[1]
    a, b = n.arg("self"), n.arg("other")
    dtype = n.out_dtype()
    if "rounding_mode" in n.given or n.op.endswith("_mode"):
        mode = n.arg("rounding_mode")
        if mode is not None:
            raise UnsupportedArg(f"rounding_mode='{mode}' (dsc has no floor or trunc on "
                                 f"tensors)")
    if kind == "div" and dtype in INTS:
        raise Unsupported("integer division of tensors")
    alpha = n.scalar("alpha", 1) if "alpha" in n.defaults else 1
    if kind == "rsub":
        a, b = b, a
    if kind == "mul" and alpha == 1 and (_rms_norm_pattern(n, a, b) or
                                         _silu_pattern(n, a, b)):
        return
    if kind == "add" and alpha == 1 and _linear_pattern(n, a, b):
        return
    if alpha == 1 and isinstance(a, Value) and a.dtype == dtype and \
            isinstance(b, (int, float)) and not isinstance(b, bool) and \
            same_shape(a.shape, n.out_shape()) and \
            ((kind in ("add", "sub") and b == 0) or (kind in ("mul", "div") and b == 1)):
        n.alias(a)  # `arange(S) + 0` (transformers' positions), `x * 1.0`
        return
    out = broadcast(n, [shape_of(a), shape_of(b)])
    ea = elem(n, a, dtype, out, [shape_of(b)])
    eb = elem(n, b, dtype, out, [shape_of(a)])
    if alpha != 1:
        eb = Bin("*", eb, n.lit(alpha, dtype))
    if isinstance(ea, Lit) and isinstance(eb, Lit):
        ea = n.cast(a, dtype) if isinstance(a, Value) else ea
    n.define(Bin(ARITH[kind], ea, eb), dtype, out)


def defined_by(n: Node, v, pattern) -> object | None:
    """v's defining expression when v is a single-use value defined by an expression of
    `pattern`'s type (and, for a call or a binary op, its name)."""
    if not isinstance(v, Value) or v.defn is None or v.defn.is_tuple or \
            n.imp.value_users[id(v)] != 1:
        return None
    e = v.defn.expr
    kind, name = pattern
    if kind == "call" and isinstance(e, Call) and e.fn == name:
        return e
    if kind == "bin" and isinstance(e, Bin) and e.op == name:
        return e
    return None


def _rms_norm_pattern(n: Node, a, b) -> bool:
    """`w * (x * rsqrt(mean(x * x, axis=-1, keepdims=true) + eps))`, an RMSNorm written
    out (LLaMA's), as `nn.rms_norm(x, w, eps=eps)`."""
    for w, u in ((a, b), (b, a)):
        if not isinstance(w, Value) or w.rank != 1:
            continue
        prod = defined_by(n, u, ("bin", "*"))
        if prod is None:
            continue
        for xe, re_ in ((prod.a, prod.b), (prod.b, prod.a)):
            if not isinstance(xe, Ref) or not isinstance(re_, Ref):
                continue
            x = xe.value
            rs = defined_by(n, re_.value, ("call", "rsqrt"))
            if rs is None or not isinstance(rs.args[0], Ref):
                continue
            add = defined_by(n, rs.args[0].value, ("bin", "+"))
            if add is None or not isinstance(add.a, Ref) or not isinstance(add.b, Lit):
                continue
            mean = defined_by(n, add.a.value, ("call", "mean"))
            if mean is None or not isinstance(mean.args[0], Ref) or \
                    [(k, getattr(v, "text", None)) for k, v in mean.kwargs] != \
                    [("axis", "-1"), ("keepdims", "true")]:
                continue
            sq = defined_by(n, mean.args[0].value, ("bin", "*"))
            if sq is None or not all(isinstance(t, Ref) and t.value is x for t in (sq.a, sq.b)):
                continue
            if x.dtype != w.dtype or x.dtype != n.out_dtype() or \
                    not symdim.as_dim(w.shape[0]).same(x.shape[-1]):
                continue
            n.define(Call("nn.rms_norm", [n.operand(x), n.operand(w)],
                          [("eps", Raw(add.b.text))]), x.dtype, x.shape,
                     hint=n.imp.module_of(n.fx)[0] or n.hint())
            return True
    return False


def _linear_pattern(n: Node, a, b) -> bool:
    """`matmul(x, w) + b` with a matrix w and a vector b (a Linear decomposed) as
    `nn.linear(x, w, b)`."""
    for m, bias in ((a, b), (b, a)):
        mm = defined_by(n, m, ("call", "matmul"))
        if mm is None or not isinstance(bias, Value) or bias.rank != 1 or \
                not isinstance(mm.args[1], Ref) or mm.args[1].value.rank != 2 or \
                bias.dtype != m.dtype or m.dtype != n.out_dtype() or \
                not symdim.as_dim(bias.shape[0]).same(m.shape[-1]):
            continue
        n.define(Call("nn.linear", [mm.args[0], mm.args[1], n.operand(bias)]), m.dtype,
                 m.shape)
        return True
    return False


def _silu_pattern(n: Node, a, b) -> bool:
    """`x * sigmoid(x)` (torch's core decomposition of SiLU) as `nn.silu(x)`."""
    for x, s in ((a, b), (b, a)):
        sig = defined_by(n, s, ("call", "sigmoid"))
        if sig is not None and isinstance(x, Value) and isinstance(sig.args[0], Ref) and \
                sig.args[0].value is x and x.dtype == n.out_dtype():
            n.define(Call("nn.silu", [n.operand(x)]), x.dtype, x.shape)
            return True
    return False


COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


@converter(*[f"aten.{k}.{o}" for k in COMPARE for o in ("Tensor", "Scalar")],
           dsc="`== != < <= > >=`", note="bool result; operands promoted as torch does")
def _compare(n: Node) -> None:
    a, b = n.arg("self"), n.arg("other")
    binary(n, COMPARE[n.op.split(".")[1]], a, b, promote(a, b), "bool")


LOGIC = {"logical_and": "&&", "logical_or": "||", "bitwise_and": "&&", "bitwise_or": "||",
         "logical_xor": "!=", "bitwise_xor": "!=", "__and__": "&&", "__or__": "||",
         "__xor__": "!="}


@converter("aten.logical_and.default", "aten.logical_or.default", "aten.logical_xor.default",
           "aten.bitwise_and.Tensor", "aten.bitwise_or.Tensor", "aten.bitwise_xor.Tensor",
           "aten.__and__.Tensor", "aten.__or__.Tensor", "aten.__xor__.Tensor",
           dsc="`&&`, `\\|\\|`, `!=`", note="bitwise ops of bools only; `x && true` is x")
def _logic(n: Node) -> None:
    kind = n.op.split(".")[1]
    a, b = n.tensor("self"), n.tensor("other")
    if not kind.startswith("logical") and not (a.dtype == b.dtype == "bool"):
        raise Unsupported(f"{kind} of {a.dtype} and {b.dtype} (dsc has bitwise ops on bools "
                          f"only)")
    # `x && true` (torch's causal masks AND with a `full` of true) is x.
    out_shape = n.out_shape()
    for x, y in ((a, b), (b, a)):
        u = is_uniform(y) if is_uniform(y) is not None else n.imp.fills.get(id(y))
        if u is not None and x.dtype == "bool" and same_shape(x.shape, out_shape) and \
                ((LOGIC[kind] == "&&" and bool(u)) or (LOGIC[kind] == "||" and not bool(u))):
            n.alias(x)
            return
    ea = Call("cast", [n.operand(a)], [("dtype", Str("bool"))]) if a.dtype != "bool" \
        else n.operand(a)
    eb = Call("cast", [n.operand(b)], [("dtype", Str("bool"))]) if b.dtype != "bool" \
        else n.operand(b)
    n.define(Bin(LOGIC[kind], ea, eb), "bool", broadcast(n, [a.shape, b.shape]))


@converter("aten.logical_not.default", "aten.bitwise_not.default", dsc="`!x`",
           note="bitwise_not of bools only")
def _not(n: Node) -> None:
    x = n.tensor("self")
    if n.op.startswith("aten.bitwise") and x.dtype != "bool":
        raise Unsupported(f"bitwise_not of {x.dtype} (dsc has bitwise ops on bools only)")
    e = n.operand(x) if x.dtype == "bool" else Call("cast", [n.operand(x)],
                                                    [("dtype", Str("bool"))])
    n.define(Unary("!", e), "bool", x.shape)


@converter("aten.isnan.default", dsc="`x != x`", note="true for NaN alone (as onnx2dsc "
           "reads IsNaN)")
def _isnan(n: Node) -> None:
    x = n.tensor("self")
    if x.dtype not in FLOATS:
        n.define(Call("full", [Dims(list(x.shape)), Lit("false")], [("dtype", Str("bool"))]),
                 "bool", x.shape)
        return
    e = n.operand(x)
    n.define(Bin("!=", e, e), "bool", x.shape)


@converter("aten.maximum.default", "aten.minimum.default", "aten.max.other",
           "aten.min.other", dsc="`maximum`, `minimum`",
           note="max.other and min.other (`torch.min(a, b)`) are the elementwise ones")
def _maxmin(n: Node) -> None:
    a, b = n.tensor("self"), n.tensor("other")
    dtype = n.out_dtype()
    out = broadcast(n, [a.shape, b.shape])
    fn = {"max": "maximum", "min": "minimum"}.get(n.op.split(".")[1], n.op.split(".")[1])
    ea = elem(n, a, dtype, out, [b.shape])
    eb = elem(n, b, dtype, out, [a.shape])
    if isinstance(ea, Lit) and isinstance(eb, Lit):
        ea = n.cast(a, dtype)
    n.define(Call(fn, [ea, eb]), dtype, out)


@converter("aten.clamp.default", "aten.clamp.Tensor", "aten.clamp_min.default",
           "aten.clamp_max.default", "aten.hardtanh.default",
           dsc="`maximum(x, lo)`, `minimum(x, hi)`")
def _clamp(n: Node) -> None:
    x = n.tensor("self")
    dtype = n.out_dtype()
    if n.op == "aten.hardtanh.default":
        lo, hi = n.scalar("min_val"), n.scalar("max_val")
    elif n.op == "aten.clamp_min.default":
        lo, hi = n.arg("min"), None
    elif n.op == "aten.clamp_max.default":
        lo, hi = None, n.arg("max")
    else:
        lo, hi = n.arg("min"), n.arg("max")
    e = n.cast(x, dtype)
    out = n.out_shape()
    if lo is not None:
        e = Call("maximum", [e, elem(n, lo, dtype, out, [x.shape])])
    if hi is not None:
        e = Call("minimum", [e, elem(n, hi, dtype, out, [x.shape])])
    n.define(e, dtype, broadcast(n, [x.shape] + [shape_of(v) for v in (lo, hi)]))


@converter("aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther",
           "aten.where.Scalar", dsc="`where(c, a, b)`")
def _where(n: Node) -> None:
    c, a, b = n.arg("condition"), n.arg("self"), n.arg("other")
    where(n, c, a, b)


def where(n: Node, c: Value, a, b) -> None:
    dtype = n.out_dtype()
    if not isinstance(c, Value):
        raise Unsupported("the condition is not a tensor")
    out = broadcast(n, [c.shape, shape_of(a), shape_of(b)])
    ec = n.operand(c) if c.dtype == "bool" else Call("cast", [n.operand(c)],
                                                     [("dtype", Str("bool"))])
    ea = elem(n, a, dtype, out, [c.shape, shape_of(b)])
    eb = elem(n, b, dtype, out, [c.shape, shape_of(a)])
    if isinstance(ea, Lit) and isinstance(eb, Lit):
        if isinstance(a, Value):
            ea = n.cast(a, dtype)
        elif isinstance(b, Value):
            eb = n.cast(b, dtype)
        else:
            arr = round_to(a, dtype)
            ea = n.operand(n.prog.constant(arr, dtype, f"{n.hint()}_c"))
    n.define(Call("where", [ec, ea, eb]), dtype, out)


@converter("aten.masked_fill.Scalar", "aten.masked_fill.Tensor", dsc="`where(mask, v, x)`",
           note="-inf (no literal) is a 0-d weight `neg_inf`")
def _masked_fill(n: Node) -> None:
    x, mask, v = n.tensor("self"), n.tensor("mask"), n.arg("value")
    where(n, mask, v, x)


# ---------------------------------------------------------------------------------------------
# Unary ops and activations
# ---------------------------------------------------------------------------------------------

UNARY = {"exp": "exp", "log": "log", "tanh": "tanh", "erf": "erf", "sqrt": "sqrt",
         "rsqrt": "rsqrt", "sigmoid": "sigmoid", "abs": "abs", "sin": "sin", "cos": "cos",
         "relu": "nn.relu", "silu": "nn.silu"}


@converter(*[f"aten.{k}.default" for k in UNARY],
           dsc="`exp log tanh erf sqrt rsqrt sigmoid abs sin cos`, `nn.relu`, `nn.silu`",
           note="an integer input is cast to the float result first")
def _unary(n: Node) -> None:
    x = n.tensor("self")
    dtype = n.out_dtype()
    n.define(Call(UNARY[n.op.split(".")[1]], [n.cast(x, dtype)]), dtype, x.shape)


@converter("aten.neg.default", dsc="`-x`")
def _neg(n: Node) -> None:
    x = n.tensor("self")
    n.define(Unary("-", n.operand(x)), x.dtype, x.shape)


@converter("aten.reciprocal.default", dsc="`1.0 / x`")
def _reciprocal(n: Node) -> None:
    x = n.tensor("self")
    dtype = n.out_dtype()
    n.define(Bin("/", n.lit(1.0, dtype), n.cast(x, dtype)), dtype, x.shape)


@converter("aten.square.default", dsc="`x * x`")
def _square(n: Node) -> None:
    x = n.tensor("self")
    e = n.cast(x, n.out_dtype())
    n.define(Bin("*", e, e), n.out_dtype(), x.shape)


GELU = {"none": "nn.gelu", "tanh": "nn.gelu_tanh"}


@converter("aten.gelu.default", dsc="`nn.gelu`, `nn.gelu_tanh`", note="approximate='none' "
           "or 'tanh'")
def _gelu(n: Node) -> None:
    x = n.tensor("self")
    approx = n.arg("approximate")
    if approx not in GELU:
        raise UnsupportedArg(f"approximate='{approx}'")
    n.define(Call(GELU[approx], [n.operand(x)]), x.dtype, x.shape)


@converter("aten.leaky_relu.default", dsc="`where(x >= 0.0, x, x * slope)`")
def _leaky_relu(n: Node) -> None:
    x = n.tensor("self")
    slope = n.scalar("negative_slope")
    xe = n.operand(x)
    n.define(Call("where", [Bin(">=", xe, n.lit(0.0, x.dtype)), xe,
                            Bin("*", xe, n.lit(slope, x.dtype))]), x.dtype, x.shape)


@converter("aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor", "aten.pow.Scalar",
           dsc="`x * x`, `sqrt`, `rsqrt`, `1.0 / x`, `pow(x, y)`",
           note="by the exponent: 2, 3, 0.5, -0.5, -1, 1, else `pow`")
def _pow(n: Node) -> None:
    x, y = n.arg("self"), n.arg("exponent")
    dtype = n.out_dtype()
    if dtype not in FLOATS:
        raise Unsupported(f"pow of {dtype} (dsc's pow takes floats)")
    if isinstance(x, Value) and isinstance(y, (int, float)) and not isinstance(y, bool):
        xr = n.cast(x, dtype)
        e = float(y)
        special = {2.0: lambda: Bin("*", xr, xr), 3.0: lambda: Bin("*", Bin("*", xr, xr), xr),
                   0.5: lambda: Call("sqrt", [xr]), -0.5: lambda: Call("rsqrt", [xr]),
                   -1.0: lambda: Bin("/", n.lit(1.0, dtype), xr)}
        if e == 1.0 and x.dtype == dtype:
            n.alias(x)
            return
        if e in special:
            n.define(special[e](), dtype, x.shape)
            return
    out = broadcast(n, [shape_of(x), shape_of(y)])
    ex = elem(n, x, dtype, out, [shape_of(y)])
    ey = elem(n, y, dtype, out, [shape_of(x)])
    n.define(Call("pow", [ex, ey]), dtype, out)


# ---------------------------------------------------------------------------------------------
# Casts and values that are their input
# ---------------------------------------------------------------------------------------------

@converter("aten._to_copy.default", "aten.to.dtype", "aten.to.dtype_layout", "aten.to.device",
           "aten.type_as.default",
           dsc="`cast(x, dtype=...)`", note="dropped when the dtype does not change")
def _cast(n: Node) -> None:
    x = n.tensor("self")
    for a in ("dtype", "other", "copy", "non_blocking"):
        if a in n.given or a in n.defaults:
            n.arg(a)
    to = n.out_dtype()
    if to == x.dtype:
        n.alias(x)
        return
    fill = n.imp.fills.get(id(x))
    if fill is not None:
        v = n.define(Call("full", [Dims(x.shape), n.lit(fill, to)], [("dtype", Str(to))]), to,
                     x.shape)
        n.imp.fills[id(v)] = fill
        return
    n.define(Call("cast", [n.operand(x)], [("dtype", Str(to))]), to, x.shape)


@converter("aten.clone.default", "aten.contiguous.default", "aten.alias.default",
           "aten.detach.default", "aten.detach_.default", "aten.lift_fresh_copy.default",
           "aten.dropout.default", "aten.feature_dropout.default", "aten.alpha_dropout.default",
           "aten.native_dropout.default",
           dsc="the input", note="dropout only with train=False (inference); native_dropout's "
                                 "mask output unsupported")
def _identity(n: Node) -> None:
    x = n.tensor("input" if "input" in n.defaults or "input" in n.given else "self")
    if "train" in n.given or "train" in n.defaults:
        if n.arg("train"):
            raise UnsupportedArg("train=True (dropout at inference only)")
        n.arg("p")
    if n.op == "aten.native_dropout.default":
        n.imp.value_users[id(x)] -= 1
        n.out([x, None])
        return
    n.alias(x)


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------

def _reduce_axes(n: Node, x: Value, name: str = "dim") -> list[int]:
    dims = n.ints(name) if n.arg(name) is not None else []
    return sorted({norm_axis(d, x.rank) for d in dims}) if dims else list(range(x.rank))


def reduction(n: Node, callee: str, x: Value | Expr, xshape: list, axes: list[int],
              keepdim: bool, dtype: str) -> Value:
    rank = len(xshape)
    kw: list = []
    if len(axes) != rank or rank == 0:
        kw.append(("axis", Raw(axis_text(axes[0], rank)) if len(axes) == 1 else Dims(axes)))
    if keepdim:
        kw.append(("keepdims", Raw("true")))
    e = n.operand(x) if isinstance(x, Value) else x
    shape = [1 if i in axes else d for i, d in enumerate(xshape)] if keepdim else \
        [d for i, d in enumerate(xshape) if i not in axes]
    return n.define(Call(callee, [e], kw), dtype, shape)


REDUCE = {"mean": "mean", "sum": "sum", "amax": "max", "amin": "min", "max": "max",
          "min": "min"}


@converter("aten.mean.dim", "aten.mean.default", "aten.sum.dim_IntList", "aten.sum.default",
           "aten.amax.default", "aten.amin.default", "aten.max.dim", "aten.min.dim",
           "aten.max.default", "aten.min.default",
           dsc="`mean sum max min(x, axis=, keepdims=)`",
           note="max.dim/min.dim: the values only (indices unsupported)")
def _reduce(n: Node) -> None:
    x = n.tensor("self")
    kind = n.op.split(".")[1]
    if n.op in ("aten.max.dim", "aten.min.dim"):
        axes = [norm_axis(n.int("dim"), x.rank)]
    else:
        axes = _reduce_axes(n, x) if "dim" in n.defaults or "dim" in n.given else \
            list(range(x.rank))
    keepdim = bool(n.arg("keepdim")) if "keepdim" in n.defaults or "keepdim" in n.given \
        else False
    dtype = n.out_dtype() if not isinstance(n.meta, (list, tuple)) else n.out_dtype(0)
    if "dtype" in n.defaults or "dtype" in n.given:
        n.arg("dtype")
    if kind == "mean" and dtype not in FLOATS:
        raise Unsupported(f"mean of {dtype}")
    src: Value | Expr = x if x.dtype == dtype else n.cast(x, dtype)
    if n.op in ("aten.max.dim", "aten.min.dim"):
        shape = n.out_shape(0)
        kw: list = [("axis", Raw(axis_text(axes[0], x.rank)))]
        if keepdim:
            kw.append(("keepdims", Raw("true")))
        v = n.prog.define(Call(REDUCE[kind], [n.operand(x)], kw), dtype, shape, n.hint(0))
        n.out([v, None])
        return
    reduction(n, REDUCE[kind], src, x.shape, axes, keepdim, dtype)


@converter("aten.argmax.default", "aten.argmin.default",
           dsc="`argmax argmin(x, axis=, keepdims=)`",
           note="dim=None: over the tensor flattened by a reshape")
def _arg_reduce(n: Node) -> None:
    x = n.tensor("self")
    callee = n.op.split(".")[1]
    if x.dtype not in FLOATS + INTS:
        raise Unsupported(f"{callee} of {x.dtype}")
    dim = n.arg("dim")
    keepdim = bool(n.arg("keepdim"))
    if dim is None or x.rank == 0:
        flat = Call("reshape", [n.operand(x), Dims([-1])])
        if not keepdim:
            n.define(Call(callee, [flat]), "i64", [])
            return
        n.define(Call("reshape", [Call(callee, [flat], [("keepdims", Raw("true"))]),
                                  Dims([1] * x.rank)]), "i64", [1] * x.rank)
        return
    axis = norm_axis(dim, x.rank)
    kw: list = []
    if axis != x.rank - 1:
        kw.append(("axis", Raw(axis_text(axis, x.rank))))
    if keepdim:
        kw.append(("keepdims", Raw("true")))
    n.define(Call(callee, [n.operand(x)], kw), "i64", n.out_shape())


@converter("aten.any.dim", "aten.any.dims", "aten.any.default", "aten.all.dim",
           "aten.all.dims", "aten.all.default",
           dsc="`max(cast(x, dtype=\"i32\"), axis=) > 0`, `min(...) > 0`")
def _any_all(n: Node) -> None:
    x = n.tensor("self")
    if n.op.endswith(".dim"):
        axes = [norm_axis(n.int("dim"), x.rank)]
    elif n.op.endswith(".dims"):
        axes = _reduce_axes(n, x)
    else:
        axes = list(range(x.rank))
    keepdim = bool(n.arg("keepdim")) if not n.op.endswith(".default") else False
    as_int = Call("cast", [n.operand(x) if x.dtype == "bool" else
                           Bin("!=", n.operand(x), n.lit(0, x.dtype))], [("dtype", Str("i32"))])
    callee = "max" if n.op.startswith("aten.any") else "min"
    rank = x.rank
    kw: list = []
    if len(axes) != rank or rank == 0:
        kw.append(("axis", Raw(axis_text(axes[0], rank)) if len(axes) == 1 else Dims(axes)))
    if keepdim:
        kw.append(("keepdims", Raw("true")))
    n.define(Bin(">", Call(callee, [as_int], kw), Lit("0")), "bool", n.out_shape())


@converter("aten.var.correction", "aten.var.dim", "aten.std.correction", "aten.std.dim",
           dsc="`mean` of the squared deviation (`sqrt` for std)",
           note="a correction needs a constant count of reduced elements")
def _var(n: Node) -> None:
    x = n.tensor("self")
    axes = _reduce_axes(n, x)
    keepdim = bool(n.arg("keepdim"))
    if n.op.endswith(".correction"):
        corr = n.arg("correction")
        corr = 1 if corr is None else corr
    else:
        corr = 1 if n.arg("unbiased") else 0
    dtype = n.out_dtype()
    if dtype not in FLOATS:
        raise Unsupported(f"var of {dtype}")
    xe = n.operand(x)
    mu = n.prog.define(Call("mean", [xe], [("axis", Dims(axes) if len(axes) > 1 else
                                            Raw(axis_text(axes[0], x.rank))),
                                           ("keepdims", Raw("true"))]), dtype,
                       [1 if i in axes else d for i, d in enumerate(x.shape)],
                       n.hint() + "_mean")
    cen = n.prog.define(Bin("-", xe, Ref(mu)), dtype, x.shape, n.hint() + "_centered")
    sq = Bin("*", Ref(cen), Ref(cen))
    kw: list = [("axis", Dims(axes) if len(axes) > 1 else Raw(axis_text(axes[0], x.rank)))]
    if keepdim:
        kw.append(("keepdims", Raw("true")))
    e: Expr = Call("mean", [sq], kw)
    if corr:
        count = symdim.as_dim(1)
        for i in axes:
            count = count * x.shape[i]
        c = count.value()
        if c is None:
            raise Unsupported(f"a variance with correction {corr} over {count} elements "
                              f"(dsc cannot divide by a symbol)")
        e = Bin("*", e, n.lit(c / (c - corr) if c != corr else math.inf, dtype))
    if n.op.startswith("aten.std"):
        e = Call("sqrt", [e])
    n.define(e, dtype, n.out_shape())
