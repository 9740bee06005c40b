"""ONNX arithmetic, comparison, logic, activation, cast, normalization, softmax, matmul and
reduction ops for onnx_import.py, as dsc's operators, elementwise ops, nn.* composites,
`matmul` and reductions. A converter registers itself in onnx_node's table (CONVERTERS) when
this module is imported; an op whose inputs are all known at import time is folded with numpy.
"""

from __future__ import annotations

import numpy as np

from . import symdim
from .common import (FLOATS, FOLD_LIMIT, INTS, ModelError, Unsupported, axis_text,
                     same_shape)
from .onnx_node import (ROLES, Node, broadcast_shapes, contiguous, converter, dtype_of_enum,
                        finite_literal, generic_name, is_symbolic, norm_axis, same_dtype)
from .program import Bin, Call, Dims, Expr, Lit, Raw, Ref, Str, Unary, Value, literal_text
from .symdim import Dim, Undecided


def int_div_trunc(a, b):
    """ONNX integer Div (truncates toward zero); Dims are >= 0 and divide by floor."""
    if isinstance(a, Dim) or isinstance(b, Dim):
        return a // b
    a, b = int(a), int(b)
    q = abs(a) // abs(b) if b else 0
    return q if (a >= 0) == (b > 0) else -q


_int_div = np.frompyfunc(int_div_trunc, 2, 1)


# ---------------------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------------------

BINARY = {"Add": ("+", np.add), "Sub": ("-", np.subtract), "Mul": ("*", np.multiply),
          "Div": ("/", None)}
COMPARE = {"Equal": ("==", np.equal), "Less": ("<", np.less), "Greater": (">", np.greater),
           "LessOrEqual": ("<=", np.less_equal), "GreaterOrEqual": (">=", np.greater_equal)}
LOGICAL = {"And": ("&&", np.logical_and), "Or": ("||", np.logical_or)}


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
            # A length read as data (`seq` as a float scale): `cast(arange(S, S + 1), ...)`,
            # as torch2dsc reads a size used as data.
            n.define(Call("cast", [n.operand(x)], [("dtype", Str(to))]), to, list(x.shape))
            return
        n.const_out(x.const, dtype=to)
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

@converter("Softmax", "LogSoftmax", note="`nn.softmax(x, axis=...)`, `nn.log_softmax`")
def _softmax(n: Node) -> None:
    x = n.input(0)
    axis = norm_axis(n.attr("axis", -1), x.rank, "axis")
    fn = "nn.softmax" if n.op == "Softmax" else "nn.log_softmax"
    n.define(Call(fn, [n.operand(x)], [("axis", Raw(axis_text(axis, x.rank)))]),
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
    axis = norm_axis(n.attr("axis", -1), x.rank, "axis")
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
            if generic_name(v.hint):
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
    axes = sorted({norm_axis(a, x.rank, "axis") for a in axes}) if axes else list(range(x.rank))
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
        kw.append(("axis", Raw(axis_text(axes[0], x.rank)) if len(axes) == 1
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
    axis = norm_axis(n.attr("axis", 0), x.rank, "axis")
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
