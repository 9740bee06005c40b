"""Lowerings both front ends share (torch_index.py and torch_ops.py for torch.export,
onnx_index.py for ONNX), so that the same pattern reads the same way by either route:

- a size used as tensor data: `arange(S, S + 1)` (a shape vector: the concat of such pieces);
- indexing with several integer index tensors (torch's `x[b_idx, kv_idx]`, ONNX's GatherND):
  one flat index into x with the indexed axes merged, `take(reshape(x, [B*S]), b*S + kv,
  axis=0)`; where each index is `arange(0, D)` along its own axis of the broadcast index shape
  (perhaps broadcast: transformers' `padding_mask[batch_idx, kv_idx]`, which the ONNX exporter
  writes as a GatherND of Expands), x itself, permuted and reshaped;
- gather along one axis (torch's gather, ONNX's GatherElements): the flat index of each
  element from the index and the positions of the other axes;
- cumsum: a serial running sum, a `prim` written into the module (`cumsum_i64`, one per
  dtype), over the tensor reshaped to [outer, n, inner];
- isnan: `x != x`.

The functions take Values and the expressions that read them; the front ends' Nodes define
the results. This module imports only the common ones (program, symdim, common).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from . import symdim
from .common import FLOATS, INTS, same_shape
from .program import Bin, Call, DimArg, Dims, Expr, Lit, Raw, Ref, Str, TensorList, Value
from .symdim import product

# ---------------------------------------------------------------------------------------------
# Sizes as data
# ---------------------------------------------------------------------------------------------


def dim_tensor(d, dtype: str) -> Expr:
    """A size used as tensor data: `arange(S, S + 1)`, a 1-element i64 tensor, cast."""
    e: Expr = Call("arange", [DimArg(d), DimArg(symdim.as_dim(d) + 1)])
    if dtype != "i64":
        e = Call("cast", [e], [("dtype", Str(dtype))])
    return e


def shape_value_expr(a: np.ndarray, dtype: str) -> Expr:
    """A constant of symbolic dims (a `Shape` in ONNX, sizes in torch) read as a tensor: each
    element `arange(d, d + 1)`, concatenated and reshaped to a's shape."""
    flat = [symdim.simplify(x) for x in a.reshape(-1)]
    pieces = [Call("arange", [DimArg(d), DimArg(symdim.simplify(symdim.as_dim(d) + 1))])
              for d in flat]
    e: Expr = pieces[0] if len(pieces) == 1 else Call("concat", [TensorList(pieces)],
                                                      [("axis", Raw("0"))])
    if list(a.shape) != [len(flat)]:
        e = Call("reshape", [e, Dims(list(a.shape))])
    if dtype != "i64":
        e = Call("cast", [e], [("dtype", Str(dtype))])
    return e


# ---------------------------------------------------------------------------------------------
# Index tensors
# ---------------------------------------------------------------------------------------------

def one(d) -> bool:
    return symdim.as_dim(d).same(1)


def _big(shape: list) -> list[int]:
    return [i for i, d in enumerate(shape) if not one(d)]


def _def_call(v: Value) -> Call | None:
    d = v.defn
    if d is None or d.is_tuple or not isinstance(d.expr, Call):
        return None
    return d.expr


def _is_zero(e: Expr) -> bool:
    if isinstance(e, (Lit, Raw)):
        return e.text == "0"
    if isinstance(e, DimArg):
        return symdim.as_dim(e.dim).same(0)
    return False


def iota(v: Value, depth: int = 0) -> tuple[object, int] | None:
    """(D, p) when v holds 0, 1, ..., D - 1 along its axis p and is constant along its other
    axes: `arange(0, D)` reshaped (`reshape(arange(0, B), [B, 1, 1, 1])`), broadcast
    (`broadcast_to(..., [B, 1, 1, S])`) or cast to another integer type, or such a constant;
    else None."""
    if v.dtype not in INTS or depth > 24:
        return None
    if v.is_const():
        c = v.const
        big = _big(v.shape)
        if c.dtype == object or len(big) != 1:
            return None
        p = big[0]
        if not np.array_equal(c.reshape(-1), np.arange(c.size)):
            return None
        return v.shape[p], p
    e = _def_call(v)
    if e is None:
        return None
    if e.fn == "arange" and not any(k == "step" for k, _ in e.kwargs) and len(e.args) == 2 \
            and _is_zero(e.args[0]) and v.rank == 1:
        return v.shape[0], 0
    if not e.args or not isinstance(e.args[0], Ref):
        return None
    u = e.args[0].value
    if e.fn == "cast" and u.shape == v.shape:
        return iota(u, depth + 1)
    r = iota(u, depth + 1)
    if r is None:
        return None
    d, pu = r
    if e.fn == "reshape":
        # A reshape that only adds or drops axes of size 1 keeps the others in order.
        bu, bv = _big(u.shape), _big(v.shape)
        if len(bu) != len(bv) or \
                not all(symdim.as_dim(u.shape[i]).same(v.shape[j]) for i, j in zip(bu, bv)):
            return None
        if pu not in bu:
            return None
        return d, bv[bu.index(pu)]
    if e.fn == "broadcast_to":
        p = pu + v.rank - u.rank
        if p < 0 or not symdim.as_dim(v.shape[p]).same(d):
            return None
        return d, p
    return None


def nonneg(v: Value) -> bool:
    """Whether v's elements are known to be >= 0 (an arange from 0, a non-negative
    constant)."""
    if v.is_const():
        return v.const.dtype != object and bool(np.all(v.const >= 0))
    return iota(v) is not None


def _dim_expr(d) -> Expr:
    """A dim as an i64 operand: a literal, or `arange(S, S + 1)` for a symbolic one."""
    d = symdim.simplify(d)
    if isinstance(d, int):
        return Lit(str(d))
    return dim_tensor(d, "i64")


def index_expr(e: Expr, v: Value, d) -> Expr:
    """The i64 index e (read from v), negatives counted from the end of a dim of size d (as
    torch and ONNX do), unless v is known to be non-negative."""
    if nonneg(v):
        return e
    return Call("where", [Bin("<", e, Lit("0")), Bin("+", e, _dim_expr(d)), e])


def times(e: Expr, d) -> Expr:
    """e * d (e itself when d is 1)."""
    d = symdim.simplify(d)
    if isinstance(d, int) and d == 1:
        return e
    return Bin("*", e, Lit(str(d)) if isinstance(d, int) else dim_tensor(d, "i64"))


def sum_terms(terms: list[Expr]) -> Expr:
    out = terms[0]
    for t in terms[1:]:
        out = Bin("+", out, t)
    return out


def broadcast_shape(shapes: list[list]) -> list:
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        big = [d for d in dims if not one(d)]
        out.append(big[0] if big else 1)
    return out


# ---------------------------------------------------------------------------------------------
# Several index tensors: x[i0, i1, ...] (torch's index.Tensor, ONNX's GatherND)
# ---------------------------------------------------------------------------------------------

def lower_index(x: Value, xe: Expr, present: list[tuple[int, Value]],
                as_i64: Callable[[Value], Expr], out_shape: list) -> Expr:
    """The expression of x[...] with integer index tensors on the axes of `present` (axis,
    index), broadcast together, as torch's advanced indexing reads them: the index dims take
    the place of the indexed axes when these are adjacent, else they come first. `xe` reads x;
    `as_i64(v)` reads an index as i64. Ref(x) when the result is x itself."""
    axes = [k for k, _ in present]
    k = len(axes)
    if k == 1:
        axis, iv = present[0]
        return Call("take", [xe, as_i64(iv)], [("axis", Raw(str(axis)))])
    adjacent = axes == list(range(axes[0], axes[0] + k))
    ishape = broadcast_shape([v.shape for _, v in present])
    base = axes[0] if adjacent else 0
    e = _index_in_place(x, xe, present, ishape, base, out_shape)
    if e is not None:
        return e
    # x with the indexed axes first (when they are not adjacent, the index dims come first),
    # merged into one axis, then one flat index.
    e = xe
    shape = list(x.shape)
    if not adjacent:
        perm = axes + [a for a in range(x.rank) if a not in axes]
        e = Call("permute", [e, Dims(perm)])
        shape = [x.shape[a] for a in perm]
        axes = list(range(k))
    block = [shape[a] for a in axes]
    terms = [times(index_expr(as_i64(v), v, block[j]), product(block[j + 1:]))
             for j, (_, v) in enumerate(present)]
    flat = sum_terms(terms)
    if not ishape and any(isinstance(symdim.simplify(b), symdim.Dim) for b in block[1:]):
        flat = Call("reshape", [flat, Dims([])])
    merged = shape[:base] + [symdim.simplify(product(block))] + shape[base + k:]
    e = Call("reshape", [e, Dims(merged)]) if not same_shape(merged, shape) else e
    e = Call("take", [e, flat], [("axis", Raw(str(base)))])
    taken = shape[:base] + ishape + shape[base + k:]
    if not same_shape(taken, out_shape):
        e = Call("broadcast_to", [e, Dims(out_shape)])
    return e


def _index_in_place(x: Value, xe: Expr, present: list, ishape: list, base: int,
                    out_shape: list) -> Expr | None:
    """x[i0, i1, ...] where each index is arange(0, D) along its own axis of the index shape,
    D the dim it indexes, and every other axis of the index shape has size 1: element
    (..., i, ...) of the result is x's own, so the result is x permuted (the indexed axes in
    the order of their index's axis) and reshaped. None otherwise."""
    at = []  # each indexed axis: its position in the result
    for axis, v in present:
        it = iota(v)
        if it is None or not symdim.as_dim(it[0]).same(x.shape[axis]):
            return None
        at.append(base + it[1] + len(ishape) - v.rank)
    if len(set(at)) != len(at):
        return None
    if any(base + i not in at for i in _big(ishape)):
        return None
    indexed = [a for a, _ in present]
    pos = {}
    out_axis = 0
    for a in range(x.rank):
        if a in indexed:
            continue
        if out_axis == base:
            out_axis += len(ishape)
        pos[a] = out_axis
        out_axis += 1
    for a, p in zip(indexed, at):
        pos[a] = p
    perm = sorted(range(x.rank), key=lambda a: pos[a])
    e = xe
    if perm != list(range(x.rank)):
        e = Call("permute", [e, Dims(perm)])
    if not same_shape([x.shape[a] for a in perm], out_shape):
        e = Call("reshape", [e, Dims(out_shape)])
    return e


# ---------------------------------------------------------------------------------------------
# Gather along one axis (torch's gather, ONNX's GatherElements)
# ---------------------------------------------------------------------------------------------

def lower_gather(x: Value, xe: Expr, axis: int, idx: Value, idx_e: Expr) -> Expr:
    """out[i][j][k] = x[i][idx[i][j][k]][k] (axis 1): `take(reshape(x, [N]), flat, axis=0)`
    with the flat index of each element; idx_e reads the index as i64 (negatives already
    resolved)."""
    if x.rank == 1:
        return Call("take", [xe, idx_e], [("axis", Raw("0"))])
    terms = []
    for d in range(x.rank):
        stride = product(x.shape[d + 1:])
        if d == axis:
            t = times(idx_e, stride)
        elif one(idx.shape[d]):
            continue
        else:
            dims = [1] * idx.rank
            dims[d] = idx.shape[d]
            pos = Call("reshape", [Call("arange", [Lit("0"), DimArg(idx.shape[d])]), Dims(dims)])
            t = times(pos, stride)
        terms.append(t)
    flat = sum_terms(terms)
    total = symdim.simplify(product(x.shape))
    return Call("take", [Call("reshape", [xe, Dims([total])]), flat], [("axis", Raw("0"))])


# ---------------------------------------------------------------------------------------------
# cumsum
# ---------------------------------------------------------------------------------------------

CUMSUM_DTYPES = ("f16", "bf16", "f32", "f64", "i32", "i64")


def cumsum_prim(dtype: str) -> tuple[str, str]:
    """The prim `cumsum_DTYPE`: a running sum along the middle axis of [a, n, b], serial
    along it, in f64 for floats (as torch accumulates on the CPU)."""
    name = f"cumsum_{dtype}"
    acc = "f64" if dtype in FLOATS else dtype
    zero = "0.0" if acc in FLOATS else "0"
    load = "x[i, j, k]" if acc == dtype else f'cast(x[i, j, k], "{acc}")'
    store = "acc" if acc == dtype else f'cast(acc, "{dtype}")'
    text = (f"# y[i, j, k] = x[i, 0, k] + ... + x[i, j, k]: a running sum along the middle "
            f"axis.\n"
            f"prim {name}(x: {dtype}[a, n, b]) -> (y: {dtype}[a, n, b]) {{\n"
            f"  parallel for i in 0..a {{\n"
            f"    for k in 0..b {{\n"
            f"      var acc: {acc} = {zero}\n"
            f"      for j in 0..n {{\n"
            f"        acc = acc + {load}\n"
            f"        y[i, j, k] = {store}\n"
            f"      }}\n"
            f"    }}\n"
            f"  }}\n"
            f"}}\n")
    return name, text


def lower_cumsum(prog, x: Value, xe: Expr, axis: int, dtype: str) -> Expr:
    """`reshape(cumsum_DTYPE(reshape(x, [outer, n, inner])), x's shape)`; xe reads x in
    dtype. The prim is added to prog."""
    name, text = cumsum_prim(dtype)
    prog.add_prim(name, text)
    outer = symdim.simplify(product(x.shape[:axis]))
    inner = symdim.simplify(product(x.shape[axis + 1:]))
    dims3 = [outer, x.shape[axis], inner]
    e: Expr = Call(name, [Call("reshape", [xe, Dims(dims3)])])
    return Call("reshape", [e, Dims(list(x.shape))])


def uniform_fill(v: Value):
    """The scalar every element of v holds, when v is a uniform constant or a `full`; else
    None."""
    if v.is_const() and v.const.dtype != object and v.const.size >= 1:
        flat = v.const.reshape(-1)
        if np.all(flat == flat[0]):
            return flat[0].item()
        return None
    e = _def_call(v)
    if e is not None and e.fn == "full" and len(e.args) == 2 and isinstance(e.args[1], Lit):
        t = e.args[1].text
        if t in ("true", "false"):
            return t == "true"
        try:
            return int(t) if v.dtype in INTS else float(t)
        except ValueError:
            return None
    return None
