"""aten shape, layout and creation ops for torch_import.py: views and reshapes, permutes,
slicing and indexing, concatenation and splitting, padding, repetition, and the ops that
create tensors (full, ones, arange, tril/triu masks). Each converter registers itself in
torch_node's table (CONVERTERS) when this module is imported.

Reshapes read well: a reshape of a reshape reads the first one's input, and the pattern of
torch's core decomposition, flatten, 2-D matmul, unflatten (`view(addmm(view(x)))`, and
`view(bmm(view(a), view(b)))` for batched matmuls), is written as the one matmul on the
unflattened operands, as a person would.
"""

from __future__ import annotations

import numpy as np

from . import symdim
from .common import INTS, Unsupported, axis_text, same_shape
from .program import (Bin, Call, DimArg, Dims, Expr, Lit, Raw, Ref, Str, TensorList, Value,
                      define_split, slice_kwargs)
from .symdim import Dim, product
from .torch_node import Node, UnsupportedArg, converter, norm_axis

BIG = 1 << 62  # a slice bound at least this large means "to the end" (torch writes INT64_MAX)


# ---------------------------------------------------------------------------------------------
# Reshapes
# ---------------------------------------------------------------------------------------------

def _single_use(n: Node, v: Value) -> bool:
    return n.imp.value_users[id(v)] == 1 and v.defn is not None and not v.defn.is_tuple


def _reshape_source(v: Value) -> Value | None:
    """x when v is `reshape(x, ...)`."""
    d = v.defn
    if d is not None and not d.is_tuple and isinstance(d.expr, Call) and \
            d.expr.fn == "reshape" and isinstance(d.expr.args[0], Ref):
        return d.expr.args[0].value
    return None


def _as_shape(x: Value, dims: list) -> Expr:
    """x read with the shape dims (same elements, row-major)."""
    return Ref(x) if same_shape(x.shape, dims) else Call("reshape", [Ref(x), Dims(dims)])


def _unflattened_matmul(n: Node, m: Value, dims: list) -> Expr | None:
    """`reshape(matmul(reshape(x, [N, k]), w) + b, [..., n])` (torch's core Linear) or
    `reshape(matmul(reshape(a, [N, m, k]), reshape(b, [N, k, n])), [..., m, n])` (its batched
    matmul) as the matmul of the unflattened operands, when the intermediates have no other
    use and the leading dims multiply to N."""
    if not _single_use(n, m):
        return None
    e = m.defn.expr
    bias = None
    if isinstance(e, Call) and e.fn == "nn.linear":
        mm, bias = e.args[:2], e.args[2]
    elif isinstance(e, Bin) and e.op == "+" and isinstance(e.a, Call) and e.a.fn == "matmul":
        mm, bias = e.a.args, e.b
    elif isinstance(e, Call) and e.fn == "matmul":
        mm = e.args
    else:
        return None
    if not isinstance(mm[0], Ref):
        return None
    r = mm[0].value
    x = _reshape_source(r)
    if x is None or not _single_use(n, r):
        return None
    if r.rank == 2 and len(dims) >= 2 and symdim.as_dim(dims[-1]).same(m.shape[-1]) and \
            product(dims[:-1]).same(r.shape[0]):
        a = _as_shape(x, list(dims[:-1]) + [r.shape[1]])
        if bias is None:
            return Call("matmul", [a, mm[1]])
        return Call("nn.linear", [a, mm[1], bias]) if isinstance(e, Call) else \
            Bin("+", Call("matmul", [a, mm[1]]), bias)
    if bias is None and isinstance(mm[1], Ref) and r.rank == 3 and len(dims) >= 3 and \
            product(dims[:-2]).same(r.shape[0]) and same_shape(dims[-2:], m.shape[-2:]):
        rb = mm[1].value
        y = _reshape_source(rb)
        if y is not None and _single_use(n, rb) and rb.rank == 3:
            lead = list(dims[:-2])
            return Call("matmul", [_as_shape(x, lead + list(r.shape[1:])),
                                   _as_shape(y, lead + list(rb.shape[1:]))])
    return None


def emit_reshape(n: Node, x: Value, dims: list, printed: list | None = None) -> None:
    printed = dims if printed is None else printed
    if same_shape(dims, x.shape):
        n.alias(x)
        return
    m = _unflattened_matmul(n, x, dims)
    if m is not None:
        n.define(m, x.dtype, dims)
        return
    src: Expr = n.operand(x)
    inner = _reshape_source(x)
    if inner is not None:
        if same_shape(dims, inner.shape):
            n.imp.value_users[id(inner)] += n.users() - 1
            n.out(inner)
            return
        src = Ref(inner)
    fill = n.imp.fills.get(id(x))
    if fill is not None:
        n.imp.fills[id(n.define(Call("reshape", [src, Dims(printed)]), x.dtype, dims))] = fill
        return
    n.define(Call("reshape", [src, Dims(printed)]), x.dtype, dims)


def _clean(d) -> bool:
    return all(a.isidentifier() for a in symdim.as_dim(d).atoms())


@converter("aten.view.default", "aten.reshape.default", "aten._unsafe_view.default",
           dsc="`reshape(x, [dims])`", note="-1 solved from torch's shapes; the flatten, "
                                            "matmul, unflatten of core ATen read as one matmul")
def _view(n: Node) -> None:
    x = n.tensor("self")
    target = n.dims("size" if "size" in n.given else "shape")
    meta = n.out_shape()
    dims, printed = [], []
    for t, m in zip(target, meta):
        if isinstance(t, int) and t == -1:
            dims.append(m)
            printed.append(m if _clean(m) else -1)
        else:
            dims.append(t)
            printed.append(t)
    emit_reshape(n, x, dims, printed)


@converter("aten.unsqueeze.default", dsc="`reshape`")
def _unsqueeze(n: Node) -> None:
    x = n.tensor("self")
    axis = norm_axis(n.int("dim"), x.rank + 1)
    dims = list(x.shape)
    dims.insert(axis, 1)
    emit_reshape(n, x, dims)


@converter("aten.squeeze.default", "aten.squeeze.dim", "aten.squeeze.dims", dsc="`reshape`",
           note="a dim that is not 1 stays, as in torch")
def _squeeze(n: Node) -> None:
    x = n.tensor("self")
    axes = list(range(x.rank)) if n.op == "aten.squeeze.default" else \
        [norm_axis(a, x.rank) for a in n.ints("dim")]
    removed = {a for a in axes if isinstance(x.shape[a], int) and x.shape[a] == 1}
    dims = [d for a, d in enumerate(x.shape) if a not in removed]
    meta = n.out_shape()
    emit_reshape(n, x, dims if len(dims) == len(meta) else meta)


@converter("aten.flatten.using_ints", "aten.unflatten.int", dsc="`reshape`")
def _flatten(n: Node) -> None:
    x = n.tensor("self")
    meta = n.out_shape()
    if n.op == "aten.flatten.using_ints":
        s = norm_axis(n.int("start_dim"), x.rank)
        e = norm_axis(n.int("end_dim"), x.rank)
        dims = list(x.shape[:s]) + [symdim.simplify(product(x.shape[s:e + 1]))] + \
            list(x.shape[e + 1:])
    else:
        d = norm_axis(n.int("dim"), x.rank)
        sizes = n.dims("sizes")
        k = d + len(sizes)
        dims = list(x.shape[:d]) + [m if isinstance(s, int) and s == -1 else s
                                    for s, m in zip(sizes, meta[d:k])] + list(x.shape[d + 1:])
    emit_reshape(n, x, dims)


# ---------------------------------------------------------------------------------------------
# Permutes and broadcasts
# ---------------------------------------------------------------------------------------------

def emit_permute(n: Node, x: Value, perm: list[int]) -> None:
    if perm == list(range(x.rank)):
        n.alias(x)
        return
    shape = [x.shape[p] for p in perm]
    d = x.defn
    if _single_use(n, x) and isinstance(d.expr, Call) and d.expr.fn == "permute" and \
            isinstance(d.expr.args[1], Dims):
        # A permute of a permute is one permute.
        inner = d.expr.args[1].dims
        perm = [inner[p] for p in perm]
        src = d.expr.args[0]
        if perm == list(range(len(perm))):
            if isinstance(src, Ref):
                n.imp.value_users[id(src.value)] += n.users() - 1
                n.out(src.value)
            else:
                n.define(src, x.dtype, shape)
            return
        n.define(Call("permute", [src, Dims(perm)]), x.dtype, shape)
        return
    n.define(Call("permute", [n.operand(x), Dims(perm)]), x.dtype, shape)


@converter("aten.permute.default", dsc="`permute(x, perm)`")
def _permute(n: Node) -> None:
    x = n.tensor("self")
    emit_permute(n, x, [norm_axis(p, x.rank) for p in n.ints("dims")])


@converter("aten.transpose.int", "aten.t.default", dsc="`permute(x, perm)`")
def _transpose(n: Node) -> None:
    x = n.tensor("self")
    if n.op == "aten.t.default":
        a, b = (0, 1) if x.rank == 2 else (0, 0)
    else:
        a, b = norm_axis(n.int("dim0"), x.rank), norm_axis(n.int("dim1"), x.rank)
    perm = list(range(x.rank))
    perm[a], perm[b] = perm[b], perm[a]
    emit_permute(n, x, perm)


@converter("aten.expand.default", dsc="`broadcast_to(x, [dims])`",
           note="-1 keeps the dim; an expand that changes nothing is dropped")
def _expand(n: Node) -> None:
    x = n.tensor("self")
    n.arg("implicit")
    size = n.dims("size")
    dims = []
    for i, s in enumerate(size):
        j = i - (len(size) - x.rank)
        dims.append(x.shape[j] if isinstance(s, int) and s == -1 and j >= 0 else s)
    if same_shape(dims, x.shape):
        n.alias(x)
        return
    fill = n.imp.fills.get(id(x))
    uniform = x.is_const() and x.const.dtype != object and x.const.size >= 1 and \
        bool(np.all(x.const == x.const.flat[0]))
    if fill is not None or uniform:
        # An expanded constant of one value (BERT's buffer of token type ids) is a `full`.
        val = fill if fill is not None else x.const.reshape(-1)[0].item()
        emit_full(n, dims, val, x.dtype)
        return
    n.define(Call("broadcast_to", [n.operand(x), Dims(dims)]), x.dtype, dims)


@converter("aten.repeat.default", dsc="`reshape(broadcast_to(reshape(x, ...), ...), ...)`",
           note="each repeated axis gets a new axis of the repeat count, broadcast, merged")
def _repeat(n: Node) -> None:
    x = n.tensor("self")
    reps = n.dims("repeats")
    shape = [1] * (len(reps) - x.rank) + list(x.shape)
    if all(isinstance(r, int) and r == 1 for r in reps):
        emit_reshape(n, x, shape)
        return
    inter, big, final = [], [], []
    for r, d in zip(reps, shape):
        inter += [1, d]
        big += [r, d]
        final.append(symdim.simplify(symdim.as_dim(r) * d))
    e = Call("reshape", [Call("broadcast_to", [Call("reshape", [n.operand(x), Dims(inter)]),
                                                Dims(big)]), Dims(final)])
    n.define(e, x.dtype, final)


# ---------------------------------------------------------------------------------------------
# Slicing and indexing
# ---------------------------------------------------------------------------------------------

def emit_slice(n: Node, x: Value, axis: int, start, end, step: int, length) -> Value:
    """x[start:end:step] along axis (bounds already normalized to 0 <= start <= end <= dim)."""
    d = x.shape[axis]
    kw = slice_kwargs(axis_text(axis, x.rank), start, end, d, step)
    shape = list(x.shape)
    shape[axis] = length
    if len(kw) == 1:
        n.alias(x)
        return x
    return n.define(Call("slice", [n.operand(x)], kw), x.dtype, shape)


def _bound(v, d, default):
    """A torch slice bound: None is the default; negatives count from the end; huge values
    mean the end; a constant is clamped to the (constant) dim."""
    if v is None:
        return default
    v = symdim.simplify(v)
    if isinstance(v, int):
        if v >= BIG:
            return d
        if v <= -BIG:
            return 0
        if v < 0:
            v = symdim.simplify(symdim.as_dim(d) + v)
            if isinstance(v, int):
                v = max(v, 0)
        if isinstance(v, int) and isinstance(d, int):
            v = min(v, d)
    return v


@converter("aten.slice.Tensor", dsc="`slice(x, axis=, start=, end=, step=)`",
           note="bounds may be symbolic (`end=P + S`); negative steps unsupported")
def _slice(n: Node) -> None:
    x = n.tensor("self")
    axis = norm_axis(n.int("dim"), x.rank)
    step = n.int("step")
    if step <= 0:
        raise UnsupportedArg(f"step={step} (dsc slices with positive steps)")
    d = x.shape[axis]
    start = _bound(n.arg("start"), d, 0)
    end = _bound(n.arg("end"), d, d)
    length = n.out_shape()[axis]
    if step == 1 and _clean(length):
        # torch's length accounts for clamping exactly: end is start + length.
        end = symdim.simplify(symdim.as_dim(start) + length)
    emit_slice(n, x, axis, start, end, step, length)


@converter("aten.narrow.default", dsc="`slice(x, axis=, start=, end=)`")
def _narrow(n: Node) -> None:
    x = n.tensor("self")
    axis = norm_axis(n.int("dim"), x.rank)
    start = _bound(n.dim("start"), x.shape[axis], 0)
    length = n.dim("length")
    emit_slice(n, x, axis, start, symdim.simplify(symdim.as_dim(start) + length), 1, length)


def _select(n: Node, x: Value, axis: int, index) -> tuple[Expr, list]:
    d = x.shape[axis]
    i = symdim.simplify(index)
    if isinstance(i, int) and i < 0:
        i = symdim.simplify(symdim.as_dim(d) + i)
    kw: list = [("axis", Raw(axis_text(axis, x.rank)))]
    if not symdim.as_dim(i).same(0):
        kw.append(("start", DimArg(i)))
    end = symdim.simplify(symdim.as_dim(i) + 1)
    if not symdim.as_dim(end).same(d):
        kw.append(("end", DimArg(end)))
    e: Expr = Call("slice", [n.operand(x)], kw) if len(kw) > 1 else n.operand(x)
    dims = [s for k, s in enumerate(x.shape) if k != axis]
    return Call("reshape", [e, Dims(dims)]), dims


@converter("aten.select.int", dsc="`reshape(slice(x, axis=, start=i, end=i + 1), [dims])`")
def _select_op(n: Node) -> None:
    x = n.tensor("self")
    axis = norm_axis(n.int("dim"), x.rank)
    e, dims = _select(n, x, axis, n.dim("index"))
    n.define(e, x.dtype, dims)


@converter("aten.index_select.default", dsc="`take(x, indices, axis=)`")
def _index_select(n: Node) -> None:
    x, idx = n.tensor("self"), n.tensor("index")
    axis = norm_axis(n.int("dim"), x.rank)
    n.define(Call("take", [n.operand(x), n.operand(idx)], [("axis", Raw(str(axis)))]), x.dtype)


# ---------------------------------------------------------------------------------------------
# Concatenation and splitting
# ---------------------------------------------------------------------------------------------

def emit_concat(n: Node, vals: list[Value], axis: int, dtype: str, shape: list) -> None:
    vals = [v for v in vals if symdim.as_dim(v.shape[axis]).value() != 0] or vals[:1]
    if len(vals) == 1 and vals[0].dtype == dtype:
        n.alias(vals[0])
        return
    if len(vals) == 1:
        n.define(n.cast(vals[0], dtype), dtype, shape)
        return
    rank = vals[0].rank
    n.define(Call("concat", [TensorList([n.cast(v, dtype) for v in vals])],
                  [("axis", Raw(axis_text(axis, rank)))]), dtype, shape)


@converter("aten.cat.default", dsc="`concat([a, b], axis=)`", note="pieces of length 0 dropped")
def _cat(n: Node) -> None:
    vals = n.tensors("tensors")
    vals = [v for v in vals if not (v.rank == 1 and symdim.as_dim(v.shape[0]).value() == 0)]
    rank = vals[0].rank
    axis = norm_axis(n.int("dim"), rank)
    shape = list(vals[0].shape)
    shape[axis] = symdim.simplify(sum((symdim.as_dim(v.shape[axis]) for v in vals),
                                      Dim.const(0)))
    emit_concat(n, vals, axis, n.out_dtype(), shape)


@converter("aten.stack.default", dsc="`concat` of `reshape`s")
def _stack(n: Node) -> None:
    vals = n.tensors("tensors")
    rank = vals[0].rank + 1
    axis = norm_axis(n.int("dim"), rank)
    dtype = n.out_dtype()
    dims = list(vals[0].shape)
    dims.insert(axis, 1)
    pieces = [Call("reshape", [n.cast(v, dtype), Dims(dims)]) for v in vals]
    shape = list(dims)
    shape[axis] = len(vals)
    if len(pieces) == 1:
        n.define(pieces[0], dtype, shape)
        return
    n.define(Call("concat", [TensorList(pieces)], [("axis", Raw(axis_text(axis, rank)))]),
             dtype, shape)


@converter("aten.split.Tensor", "aten.split_with_sizes.default", "aten.chunk.default",
           "aten.unbind.int", "aten.split.sizes",
           dsc="`let a, b = split(x, n or [sizes], axis=)`",
           note="the sizes torch recorded; unbind also reshapes each piece")
def _split(n: Node) -> None:
    x = n.tensor("self")
    axis = norm_axis(n.int("dim"), x.rank)
    for a in ("split_size", "split_sizes", "chunks"):
        if a in n.given:
            n.arg(a)
    metas = n.meta
    k = len(metas)
    unbind = n.op == "aten.unbind.int"
    sizes = [1] * k if unbind else [n.out_shape(i)[axis] for i in range(k)]
    if k == 1:
        if unbind:
            n.out([n.prog.define(Call("reshape", [n.operand(x), Dims(n.out_shape(0))]),
                                 x.dtype, n.out_shape(0), n.hint(0))])
        else:
            n.imp.value_users[id(x)] -= 1
            n.out([x])
        return
    vals = define_split(n.prog, n.operand(x), x.dtype, x.shape, axis, axis_text(axis, x.rank),
                        sizes, [n.hint(i) + ("_slice" if unbind else "") for i in range(k)])
    if unbind:
        vals = [n.prog.define(Call("reshape", [Ref(v), Dims(n.out_shape(i))]), x.dtype,
                              n.out_shape(i), n.hint(i)) for i, v in enumerate(vals)]
    n.out(vals)


# ---------------------------------------------------------------------------------------------
# Padding
# ---------------------------------------------------------------------------------------------

@converter("aten.constant_pad_nd.default", "aten.pad.default",
           dsc="`pad(x, [before0, after0, ...], value=)`", note="constant mode, pads >= 0")
def _pad(n: Node) -> None:
    x = n.tensor("self")
    pads = n.dims("pad")
    if n.op == "aten.pad.default":
        mode = n.arg("mode")
        if mode != "constant":
            raise UnsupportedArg(f"mode='{mode}' (dsc pads with a constant)")
    value = n.arg("value")
    value = 0.0 if value is None else value
    if len(pads) % 2 or len(pads) // 2 > x.rank:
        raise Unsupported(f"pad {pads} for rank {x.rank}")
    full = [0] * (2 * x.rank)
    for i in range(len(pads) // 2):
        ax = x.rank - 1 - i
        full[2 * ax], full[2 * ax + 1] = pads[2 * i], pads[2 * i + 1]
    if any(isinstance(p, int) and p < 0 for p in full):
        raise Unsupported(f"negative padding {pads} (a crop)")
    n.define(Call("pad", [n.operand(x), Dims(full)], [("value", n.lit(value, x.dtype))]),
             x.dtype)


# ---------------------------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------------------------

def emit_full(n: Node, dims: list, value, dtype: str) -> Value:
    """`full([dims], value, dtype=)` as the node's result (remembered as a fill)."""
    v = n.define(Call("full", [Dims(dims), n.lit(value, dtype)], [("dtype", Str(dtype))]),
                 dtype, dims)
    n.imp.fills[id(v)] = value
    return v


FULL_VALUES = {"ones": 1, "zeros": 0, "ones_like": 1, "zeros_like": 0, "new_ones": 1,
               "new_zeros": 0}


@converter("aten.full.default", "aten.ones.default", "aten.zeros.default",
           "aten.full_like.default", "aten.ones_like.default", "aten.zeros_like.default",
           "aten.new_full.default", "aten.new_ones.default", "aten.new_zeros.default",
           "aten.fill.Scalar", "aten.scalar_tensor.default",
           dsc="`full([dims], value, dtype=)`", note="folded when the shape is constant")
def _full_op(n: Node) -> None:
    kind = n.op.split(".")[1]
    dtype = n.out_dtype()
    if "dtype" in n.defaults or "dtype" in n.given:
        n.arg("dtype")
    if "self" in n.given:
        n.arg("self")
    if "size" in n.given:
        n.dims("size")
    value = FULL_VALUES.get(kind)
    if value is None:
        name = {"full": "fill_value", "full_like": "fill_value", "new_full": "fill_value",
                "fill": "value", "scalar_tensor": "s"}[kind]
        value = n.scalar(name)
    emit_full(n, n.out_shape(), value, dtype)


@converter("aten.arange.default", "aten.arange.start", "aten.arange.start_step",
           dsc="`arange(start, end, step=)`", note="bounds may be symbolic; a float result is "
                                                   "cast from the integers")
def _arange(n: Node) -> None:
    start = n.arg("start") if "start" in n.given else 0
    end = n.arg("end")
    step = n.arg("step") if "step" in n.given else 1
    n.arg("dtype")
    dtype = n.out_dtype()
    for v, what in ((start, "start"), (end, "end"), (step, "step")):
        if isinstance(v, float) and not v.is_integer():
            raise Unsupported(f"a float arange {what} ({v}) over symbolic bounds")
    step = symdim.simplify(step if not isinstance(step, float) else int(step))
    if isinstance(step, Dim) or step <= 0:
        raise Unsupported(f"arange with step {step}")
    args: list[Expr] = [DimArg(int(start) if isinstance(start, float) else start),
                        DimArg(int(end) if isinstance(end, float) else end)]
    kw = [("step", Raw(str(step)))] if step != 1 else []
    if dtype in ("i32", "i8"):
        kw.append(("dtype", Str(dtype)))
    e: Expr = Call("arange", args, kw)
    if dtype not in INTS:
        e = Call("cast", [e], [("dtype", Str(dtype))])
    n.define(e, dtype)


@converter("aten.tril.default", "aten.triu.default",
           dsc="`where(arange(0, C) - reshape(arange(0, R), [R, 1]) >= k, x, 0)`",
           note="the triangle of a `full` of ones or true is the comparison itself")
def _tri(n: Node) -> None:
    x = n.tensor("self")
    k = n.int("diagonal")
    if x.rank < 2:
        raise Unsupported("tril/triu of rank < 2")
    r, c = x.shape[-2], x.shape[-1]
    diff = Bin("-", Call("arange", [Lit("0"), DimArg(c)]),
               Call("reshape", [Call("arange", [Lit("0"), DimArg(r)]), Dims([r, 1])]))
    cond = Bin(">=" if n.op == "aten.triu.default" else "<=", diff, Lit(str(k)))
    fill = n.imp.fills.get(id(x))
    if fill is None and x.is_const() and x.const.size and np.all(x.const == x.const.flat[0]):
        fill = x.const.flat[0].item()
    if fill is not None and bool(fill) and fill == 1 and same_shape(x.shape, [r, c]):
        if x.dtype == "bool":
            n.define(cond, "bool", x.shape)
        else:
            n.define(Call("cast", [cond], [("dtype", Str(x.dtype))]), x.dtype, x.shape)
        return
    zero = Lit("false") if x.dtype == "bool" else n.lit(0, x.dtype)
    n.define(Call("where", [cond, n.operand(x), zero]), x.dtype, x.shape)
