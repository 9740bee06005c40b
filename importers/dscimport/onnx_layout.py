"""ONNX shape and layout ops for onnx_import.py: Shape, Size, Constant, ConstantOfShape,
Reshape, Flatten, Unsqueeze, Squeeze, Transpose, Concat, Split, Slice, Gather, Expand, Range and
Trilu. Shape computations fold here (into symbolic Dims); the rest become dsc's layout ops.
Each converter registers itself in onnx_node's table (CONVERTERS) when this module is imported.
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes, symdim
from .common import (FOLD_LIMIT, INTS, NP_DTYPES, ModelError, Unsupported, axis_text,
                     same_shape)
from .onnx_node import (Node, broadcast_shapes, contiguous, converter, finite_literal,
                        is_symbolic, norm_axis, same_dtype, tensor_array, to_dims)
from .program import (Bin, Call, DimArg, Dims, Expr, Lit, Raw, Ref, Str, TensorList, Value,
                      define_split, literal_text, slice_kwargs)
from .symdim import Dim, dmax, dmin, product


@converter("Shape", note="folded: the input's symbolic dims (start/end honoured)")
def _shape(n: Node) -> None:
    x = n.input(0)
    r = x.rank
    start, end = n.attr("start", 0), n.attr("end", r)
    start = min(max(start + r if start < 0 else start, 0), r)
    end = min(max(end + r if end < 0 else end, 0), r)
    dims = np.empty(max(end - start, 0), dtype=object)
    dims[:] = x.shape[start:end]
    n.const_out(dims)


@converter("Size", note="folded: the product of the dims")
def _size(n: Node) -> None:
    n.const_out(np.array(symdim.simplify(product(n.input(0).shape)), dtype=object))


@converter("Constant", note="a value known at import time (value, value_float(s), value_int(s))")
def _constant(n: Node) -> None:
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        v = n.attr(key)
        if v is None:
            continue
        dtype = None
        if key == "value":
            arr, dtype = tensor_array(v, "the constant")
        elif key.startswith("value_float"):
            arr = np.array(v, dtype=np.float32)
        else:
            arr = np.array(v, dtype=np.int64)
        n.const_out(arr, dtype=dtype)
        return
    for key in ("sparse_value", "value_string", "value_strings"):
        n.attr(key)
    raise Unsupported("a sparse or string constant")


@converter("ConstantOfShape", note="folded when small; else `full([dims], value, dtype=...)`")
def _constant_of_shape(n: Node) -> None:
    dims = to_dims(n.int_const(0, "the shape"))
    t = n.attr("value")
    if t is not None:
        val, dtype = tensor_array(t, "the value")
        if val.size != 1:
            raise ModelError(f"the value has {val.size} elements, not one")
        val = val.reshape(-1)[0]
    else:
        val, dtype = np.float32(0.0), dtypes.mapped("f32")
    if any(isinstance(d, int) and d < 0 for d in dims):
        raise ModelError(f"ConstantOfShape of a negative dim: {dims}")
    if all(isinstance(d, int) for d in dims) and math.prod(dims) <= 4096:
        n.const_out(np.full(dims, val, dtype=NP_DTYPES[dtype]), dtype=dtype)
        return
    n.define(Call("full", [Dims(dims), Lit(finite_literal(val.item(), dtype, "the value"))],
                  [("dtype", Str(dtype))]), dtype, dims)


def _reshape_target(n: Node, x: Value, target: list, allowzero: bool) -> tuple[list, list]:
    """(dims for the type, dims to print): 0 copies the input's dim, -1 is solved."""
    dims = []
    infer = None
    for i, t in enumerate(target):
        tv = symdim.as_dim(t).value()
        if tv == 0 and not allowzero:
            if i >= x.rank:
                raise ModelError(f"Reshape: 0 at position {i} for an input of rank {x.rank}")
            dims.append(x.shape[i])
        elif tv == -1:
            if infer is not None:
                raise ModelError("Reshape: two -1 dims")
            infer = i
            dims.append(-1)
        elif tv is not None and tv < -1:
            raise ModelError(f"Reshape: dim {tv}")
        else:
            dims.append(symdim.simplify(t))
    printed = list(dims)
    if infer is not None:
        total = product(x.shape)
        known = product(d for i, d in enumerate(dims) if i != infer)
        if symdim.as_dim(known).value() == 0:
            raise ModelError(f"Reshape: -1 beside a 0 dim in {target}")
        q = total // known
        dims[infer] = symdim.simplify(q)
        if (q * known).same(total):
            printed[infer] = dims[infer]
    return dims, printed


@converter("Reshape", note="`reshape(x, [dims])` with the target folded; 0 and -1 resolved")
def _reshape(n: Node) -> None:
    x = n.input(0)
    target = to_dims(n.int_const(1, "the target shape"))
    dims, printed = _reshape_target(n, x, target, n.flag("allowzero", 0))
    _emit_reshape(n, x, dims, printed)


def _emit_reshape(n: Node, x: Value, dims: list, printed: list | None = None) -> None:
    printed = dims if printed is None else printed
    if x.is_const() and all(isinstance(d, int) for d in dims):
        n.const_out(x.const.reshape(dims), dtype=None if is_symbolic(x.const) else x.dtype)
        return
    if same_shape(dims, x.shape):
        n.out(x)
        return
    src: Expr = n.operand(x)
    # A reshape of a reshape reads the first one's input (row-major order is kept).
    d = x.defn
    if d is not None and not d.is_tuple and isinstance(d.expr, Call) and d.expr.fn == "reshape" \
            and isinstance(d.expr.args[0], Ref):
        inner = d.expr.args[0].value
        if same_shape(dims, inner.shape):
            n.out(inner)
            return
        src = d.expr.args[0]
    n.define(Call("reshape", [src, Dims(printed)]), x.dtype, dims)


@converter("Flatten", note="`reshape(x, [outer, inner])`")
def _flatten(n: Node) -> None:
    x = n.input(0)
    axis = n.attr("axis", 1)
    axis = axis + x.rank if axis < 0 else axis
    if not 0 <= axis <= x.rank:
        raise ModelError(f"Flatten axis {axis} out of range")
    dims = [symdim.simplify(product(x.shape[:axis])), symdim.simplify(product(x.shape[axis:]))]
    _emit_reshape(n, x, dims)


def _unsqueeze_axes(n: Node) -> list[int]:
    return n.ints(1, "axes") if n.has(1) else list(n.attr("axes", []) or [])


@converter("Unsqueeze", note="`reshape` (folded on shape values); axes as an input (13+)")
def _unsqueeze(n: Node) -> None:
    x = n.input(0)
    axes = _unsqueeze_axes(n)
    r = x.rank + len(axes)
    axes = sorted(norm_axis(a, r, "axis") for a in axes)
    if len(set(axes)) != len(axes):
        raise ModelError(f"Unsqueeze: an axis repeats in {axes}")
    dims = list(x.shape)
    for a in axes:
        dims.insert(a, 1)
    _emit_reshape(n, x, dims)


@converter("Squeeze", note="`reshape` (folded on shape values); axes as an input (13+)")
def _squeeze(n: Node) -> None:
    x = n.input(0)
    axes = _unsqueeze_axes(n)
    if axes:
        axes = {norm_axis(a, x.rank, "axis") for a in axes}
        for a in axes:
            if symdim.as_dim(x.shape[a]).decide_eq(1) is False:
                raise ModelError(f"Squeeze of axis {a}, whose dim is {x.shape[a]}")
    else:
        axes = set()
        for i, d in enumerate(x.shape):
            eq = symdim.as_dim(d).decide_eq(1)
            if eq is None:
                raise Unsupported(f"Squeeze without axes of dim {d}, which may or may not be 1")
            if eq:
                axes.add(i)
    _emit_reshape(n, x, [d for i, d in enumerate(x.shape) if i not in axes])


@converter("Transpose", note="`permute(x, perm)`")
def _transpose(n: Node) -> None:
    x = n.input(0)
    perm = n.attr("perm") or list(range(x.rank))[::-1]
    perm = [norm_axis(p, x.rank, "perm entry") for p in perm]
    if sorted(perm) != list(range(x.rank)):
        raise ModelError(f"Transpose perm {perm} is not a permutation")
    if x.is_const() and x.const.size <= FOLD_LIMIT:
        n.const_out(contiguous(np.transpose(x.const, perm)),
                    dtype=None if is_symbolic(x.const) else x.dtype)
        return
    if perm == list(range(x.rank)):
        n.out(x)
        return
    n.define(Call("permute", [n.operand(x), Dims(perm)]), x.dtype, [x.shape[p] for p in perm])


@converter("Concat", note="`concat([a, b], axis=...)`; folded on shape values")
def _concat(n: Node) -> None:
    vals = [n.input(i) for i in range(n.n_inputs) if n.has(i)]
    same_dtype(n, *vals)
    r = vals[0].rank
    axis = norm_axis(n.attr("axis"), r, "axis")
    for v in vals[1:]:
        if v.rank != r:
            raise ModelError(f"Concat of ranks {r} and {v.rank}")
        for i in range(r):
            if i != axis and symdim.as_dim(vals[0].shape[i]).decide_eq(v.shape[i]) is False:
                raise ModelError(f"Concat: dims {vals[0].shape[i]} and {v.shape[i]} of axis {i} "
                                 f"differ")
    if all(v.is_const() for v in vals):
        arrs = [v.const for v in vals]
        sym = any(is_symbolic(a) for a in arrs)
        if sym:
            arrs = [a.astype(object) for a in arrs]
        if sum(a.size for a in arrs) <= FOLD_LIMIT:
            n.const_out(np.concatenate(arrs, axis=axis), dtype=None if sym else vals[0].dtype)
            return
    # Pieces of length 0 along the axis (torch exports some) add nothing.
    vals = [v for v in vals if symdim.as_dim(v.shape[axis]).value() != 0] or vals[:1]
    if len(vals) == 1:
        n.out(vals[0])
        return
    shape = list(vals[0].shape)
    shape[axis] = symdim.simplify(sum((symdim.as_dim(v.shape[axis]) for v in vals), Dim.const(0)))
    n.define(Call("concat", [TensorList([n.operand(v) for v in vals])],
                  [("axis", Raw(axis_text(axis, r)))]), vals[0].dtype, shape)


@converter("Split", note="`let a, b = split(x, n or [sizes], axis=...)`; sizes as an input "
                         "(13+) or num_outputs (18+)")
def _split(n: Node) -> None:
    x = n.input(0)
    axis = norm_axis(n.attr("axis", 0), x.rank, "axis")
    d = x.shape[axis]
    k = n.n_outputs
    num_outputs = n.attr("num_outputs")
    if n.has(1):
        sizes = to_dims(n.int_const(1, "split"))
    else:
        parts = num_outputs if num_outputs is not None else k
        if parts < 1:
            raise ModelError(f"Split into {parts} pieces")
        dv = symdim.as_dim(d).value()
        if dv is not None:
            chunk = -(-dv // parts)
            sizes = [chunk] * (parts - 1) + [dv - chunk * (parts - 1)]
        else:
            sizes = [symdim.simplify(symdim.as_dim(d) // parts)] * parts
    if len(sizes) != k:
        raise ModelError(f"Split into {len(sizes)} pieces has {k} outputs")
    if x.is_const() and all(isinstance(s, int) for s in sizes):
        bounds = np.cumsum(sizes)[:-1]
        for i, piece in enumerate(np.split(x.const, bounds, axis=axis)):
            n.const_out(piece, i, dtype=None if is_symbolic(x.const) else x.dtype)
        return
    if k == 1:
        n.out(x)
        return
    vals = define_split(n.prog, n.operand(x), x.dtype, x.shape, axis, axis_text(axis, x.rank),
                        sizes, [n.hint(i) for i in range(k)])
    for i, v in enumerate(vals):
        n.out(v, i)


BIG = 1 << 31  # slice bounds at least this large mean "to the end" (torch writes INT64_MAX)


def _slice_bound(v, d, clamp_hi) -> object:
    """ONNX's start/end for dim d: negatives count from the end, then clamp to [0, d]."""
    if isinstance(v, int) or (isinstance(v, Dim) and v.is_const()):
        v = int(symdim.simplify(v))
        if v >= BIG:
            return d
        if v <= -BIG:
            return 0
        if v < 0:
            return symdim.simplify(dmax(symdim.as_dim(d) + v, 0))
    return symdim.simplify(dmin(v, d)) if clamp_hi else v


@converter("Slice", note="`slice(x, axis=, start=, end=, step=)` per axis; bounds may be "
                         "symbolic (folded), clamped as ONNX does with `min`/`max`")
def _slice(n: Node) -> None:
    x = n.input(0)
    starts = to_dims(n.int_const(1, "starts"))
    ends = to_dims(n.int_const(2, "ends"))
    axes = n.ints(3, "axes") if n.has(3) else list(range(len(starts)))
    steps = n.ints(4, "steps") if n.has(4) else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ModelError("Slice: starts, ends, axes and steps differ in length")
    axes = [norm_axis(a, x.rank, "axis") for a in axes]
    if 0 in steps:
        raise ModelError("Slice: a step is 0")
    if len(set(axes)) != len(axes):
        raise ModelError(f"Slice: an axis repeats in {axes}")
    numeric = all(isinstance(v, int) for v in starts + ends)
    if x.is_const() and numeric:
        idx = [slice(None)] * x.rank
        for a, s, e, st in zip(axes, starts, ends, steps):
            idx[a] = slice(s, e, st)
        n.const_out(contiguous(x.const[tuple(idx)]),
                    dtype=None if is_symbolic(x.const) else x.dtype)
        return
    e_x: Expr = n.operand(x)
    shape = list(x.shape)
    for a, s, e, st in zip(axes, starts, ends, steps):
        if st <= 0:
            raise Unsupported(f"step {st} (dsc slices with positive steps)")
        d = shape[a]
        s = _slice_bound(s, d, clamp_hi=True)
        e = _slice_bound(e, d, clamp_hi=True)
        length = symdim.simplify((symdim.as_dim(e) - s + st - 1) // st)
        if symdim.as_dim(s).same(0) and symdim.as_dim(e).same(d) and st == 1:
            continue
        kw = slice_kwargs(axis_text(a, x.rank), s, e, d, st)
        shape[a] = length
        e_x = Call("slice", [e_x], kw)
    if isinstance(e_x, Ref) and e_x.value is x:
        n.out(x)
        return
    n.define(e_x, x.dtype, shape)


@converter("Gather", note="folded on shape values; else `take(x, indices, axis=...)` "
                          "(embeddings)")
def _gather(n: Node) -> None:
    x, idx = n.input(0), n.input(1)
    axis = norm_axis(n.attr("axis", 0), x.rank, "axis")
    if idx.dtype not in INTS:
        raise ModelError(f"Gather indices of {idx.dtype}")
    if idx.is_const() and not is_symbolic(idx.const) and idx.const.size:
        d = symdim.as_dim(x.shape[axis]).value()
        lo, hi = int(idx.const.min()), int(idx.const.max())
        if d is not None and (lo < -d or hi >= d):
            raise ModelError(f"Gather index {lo if lo < -d else hi} is out of range for a dim "
                             f"of {d}")
    if x.is_const() and idx.is_const() and not is_symbolic(idx.const):
        if idx.const.size <= FOLD_LIMIT:
            n.const_out(np.take(x.const, idx.const.astype(np.int64), axis=axis),
                        dtype=None if is_symbolic(x.const) else x.dtype)
            return
    shape = list(x.shape[:axis]) + list(idx.shape) + list(x.shape[axis + 1:])
    n.define(Call("take", [n.operand(x), n.operand(idx)], [("axis", Raw(str(axis)))]),
             x.dtype, shape)


@converter("Expand", note="`broadcast_to(x, [dims])` (the two-way broadcast folded); a "
                          "constant is `full`")
def _expand(n: Node) -> None:
    x = n.input(0)
    target = to_dims(n.int_const(1, "the shape"))
    out = broadcast_shapes([x.shape, target], n.op)
    if x.is_const() and all(isinstance(d, int) for d in out) and math.prod(out) <= FOLD_LIMIT:
        n.const_out(contiguous(np.broadcast_to(x.const, out)),
                    dtype=None if is_symbolic(x.const) else x.dtype)
        return
    if same_shape(out, x.shape):
        n.out(x)
        return
    if x.is_const() and not is_symbolic(x.const):
        flat = x.const.reshape(-1)
        if flat.size and np.all(flat == flat[0]):
            t = literal_text(flat[0].item(), x.dtype)
            if t is not None:
                n.define(Call("full", [Dims(out), Lit(t)], [("dtype", Str(x.dtype))]),
                         x.dtype, out)
                return
    n.define(Call("broadcast_to", [n.operand(x), Dims(out)]), x.dtype, out)


@converter("Range", note="folded when constant; else `arange(start, end, step)` over symbols")
def _range(n: Node) -> None:
    for i in range(3):
        if n.input(i).rank != 0 or n.input(i).dtype != n.input(0).dtype:
            raise ModelError(f"input {i} is {n.input(i).type_text()}; Range takes three scalars "
                             f"of one type")
    start, limit, delta = (np.asarray(n.const(i, w)).reshape(-1)[0]
                           for i, w in ((0, "start"), (1, "limit"), (2, "delta")))
    dtype = n.input(0).dtype
    vals = [symdim.simplify(v) if isinstance(v, (Dim, np.integer, int)) else v
            for v in (start, limit, delta)]
    if not any(isinstance(v, Dim) for v in vals):
        s, e, st = (np.asarray(v).item() for v in vals)
        if not all(math.isfinite(v) for v in (s, e, st)) or st == 0:
            raise ModelError(f"Range({s}, {e}, {st})")
        length = max(math.ceil((e - s) / st), 0)
        if length > FOLD_LIMIT:
            raise Unsupported(f"a constant Range of {length} elements")
        n.const_out(np.arange(s, e, st).astype(NP_DTYPES[dtype]), dtype=dtype)
        return
    if dtype not in INTS:
        raise Unsupported(f"a Range of {dtype} with symbolic bounds")
    s, e, st = vals
    if isinstance(st, Dim) or st <= 0:
        raise Unsupported(f"Range with step {st}")
    length = symdim.simplify(dmax((symdim.as_dim(e) - s + st - 1) // st, 0))
    args: list[Expr] = [DimArg(s), DimArg(e)]
    kw = [("step", Raw(str(st)))] if st != 1 else []
    if dtype != "i64":
        kw.append(("dtype", Str(dtype)))
    n.define(Call("arange", args, kw), dtype, [length])


def _uniform_fill(x: Value):
    """The value every element of x holds, when that is known: a constant, or a `full`."""
    if x.is_const() and not is_symbolic(x.const) and x.const.size:
        flat = x.const.reshape(-1)
        return flat[0].item() if np.all(flat == flat[0]) else None
    d = x.defn
    if d is not None and not d.is_tuple and isinstance(d.expr, Call) and d.expr.fn == "full" \
            and isinstance(d.expr.args[1], Lit):
        t = d.expr.args[1].text
        return {"true": True, "false": False}.get(t, None) if x.dtype == "bool" else float(t)
    return None


@converter("Trilu", note="`where(arange(0, C) - reshape(arange(0, R), [R, 1]) >= k, x, 0)` "
                         "(`<=` for the lower triangle); of a tensor of ones or true, the "
                         "comparison itself")
def _trilu(n: Node) -> None:
    x = n.input(0)
    upper = n.flag("upper", 1)
    k = 0
    if n.has(1):
        kv = n.const(1, "k")
        if n.input(1).dtype not in INTS or kv.size != 1:
            raise ModelError(f"k is {n.input(1).type_text()}; it must be an integer scalar")
        k = symdim.simplify(kv.reshape(-1)[0])
        if isinstance(k, Dim):
            raise Unsupported(f"a diagonal k = {k} that depends on the shapes")
    if x.rank < 2:
        raise ModelError(f"Trilu of {x.type_text()}: it needs rank >= 2")
    if x.is_const() and not is_symbolic(x.const) and x.const.size <= FOLD_LIMIT:
        fn = np.triu if upper else np.tril
        n.const_out(fn(x.const, k), dtype=x.dtype)
        return
    r, c = x.shape[-2], x.shape[-1]
    diff = Bin("-", Call("arange", [Lit("0"), DimArg(c)]),
               Call("reshape", [Call("arange", [Lit("0"), DimArg(r)]), Dims([r, 1])]))
    cond = Bin(">=" if upper else "<=", diff, Lit(str(k)))
    fill = _uniform_fill(x)
    if fill is not None and fill == 1 and same_shape(x.shape, [r, c]):
        n.define(cond if x.dtype == "bool" else Call("cast", [cond], [("dtype", Str(x.dtype))]),
                 x.dtype, x.shape)
        return
    zero = Lit("false") if x.dtype == "bool" else Lit(literal_text(0, x.dtype))
    n.define(Call("where", [cond, n.operand(x), zero]), x.dtype, x.shape)
