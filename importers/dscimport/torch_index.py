"""aten indexing and scan ops for torch_import.py: advanced indexing with several index
tensors (`x[b_idx, kv_idx]`, which transformers' mask functions write), gather, cumsum and
diff. Each converter registers itself in torch_node's table (CONVERTERS) when this module is
imported.

dsc's `take` reads one integer index tensor along one axis, so several index tensors (and
gather's index along one axis of every element) become one flat index into the tensor
reshaped to merge the indexed axes: `take(reshape(x, [B*S]), b*S + kv, axis=0)`. Where each
index tensor is `arange(0, D)` laid along its own axis of the broadcast index shape (the
pattern of transformers' `padding_mask[batch_idx, kv_idx]`), every element is read where it
is, and the result is x itself, permuted and reshaped, with no gather at all.

cumsum has no dsc op: it is a serial running sum, written as a `prim` into the imported
module (`cumsum_i64`, one per dtype), over the tensor reshaped to [outer, n, inner].
"""

from __future__ import annotations

import numpy as np

from . import symdim
from .common import FLOATS, INTS, Unsupported, axis_text, same_shape
from .program import Bin, Call, DimArg, Dims, Expr, Lit, Raw, Ref, TensorList, Value
from .symdim import product
from .torch_node import Node, converter, norm_axis
from .torch_ops import dim_tensor, is_uniform
from .torch_layout import emit_full


# ---------------------------------------------------------------------------------------------
# Index tensors
# ---------------------------------------------------------------------------------------------

def _one(d) -> bool:
    return symdim.as_dim(d).same(1)


def _source(v: Value) -> Value | None:
    """u when v is `reshape(u, ...)` (the form an arange takes on its way to an index)."""
    d = v.defn
    if d is None or d.is_tuple:
        return None
    e = d.expr
    if isinstance(e, Call) and e.fn == "reshape" and isinstance(e.args[0], Ref):
        return e.args[0].value
    return None


def iota(v: Value) -> tuple[object, int] | None:
    """(D, p) when v holds 0, 1, ..., D - 1 along its axis p and has size 1 on every other
    axis: `arange(0, D)` reshaped (`reshape(arange(0, B), [B, 1, 1, 1])`), or such a
    constant; else None."""
    big = [i for i, d in enumerate(v.shape) if not _one(d)]
    if len(big) != 1 or v.dtype not in INTS:
        return None
    p = big[0]
    d = v.shape[p]
    if v.is_const():
        c = v.const
        if c.dtype == object or not np.array_equal(c.reshape(-1), np.arange(c.size)):
            return None
        return d, p
    u = v
    for _ in range(16):
        e = u.defn.expr if u.defn is not None and not u.defn.is_tuple else None
        if isinstance(e, Call) and e.fn == "arange" and not any(k == "step" for k, _ in e.kwargs) \
                and len(e.args) == 2 and _is_zero(e.args[0]) and u.rank == 1 and \
                symdim.as_dim(u.shape[0]).same(d):
            return d, p
        src = _source(u)
        if src is None:
            return None
        if [x for x in src.shape if not _one(x)] != [d]:
            return None
        u = src
    return None


def _is_zero(e: Expr) -> bool:
    if isinstance(e, (Lit, Raw)):
        return e.text == "0"
    if isinstance(e, DimArg):
        return symdim.as_dim(e.dim).same(0)
    return False


def nonneg(v: Value) -> bool:
    """Whether v's elements are known to be >= 0 (an arange from 0, a non-negative
    constant)."""
    if v.is_const():
        return v.const.dtype != object and bool(np.all(v.const >= 0))
    if iota(v) is not None:
        return True
    return False


def _dim_expr(n: Node, d) -> Expr:
    """A dim as an i64 operand: a literal, or `arange(S, S + 1)` for a symbolic one."""
    d = symdim.simplify(d)
    if isinstance(d, int):
        return Lit(str(d))
    return dim_tensor(d, "i64")


def _index_expr(n: Node, v: Value, d) -> Expr:
    """An index tensor read as i64, negatives counted from the end of a dim of size d (as
    torch does), unless v is known to be non-negative."""
    e = n.cast(v, "i64")
    if nonneg(v):
        return e
    return Call("where", [Bin("<", e, Lit("0")), Bin("+", e, _dim_expr(n, d)), e])


def _times(e: Expr, d) -> Expr:
    """e * d (e itself when d is 1)."""
    d = symdim.simplify(d)
    if isinstance(d, int) and d == 1:
        return e
    return Bin("*", e, Lit(str(d)) if isinstance(d, int) else dim_tensor(d, "i64"))


def _sum(terms: list[Expr]) -> Expr:
    out = terms[0]
    for t in terms[1:]:
        out = Bin("+", out, t)
    return out


def _broadcast_shape(shapes: list[list]) -> list:
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        big = [d for d in dims if not _one(d)]
        out.append(big[0] if big else 1)
    return out


# ---------------------------------------------------------------------------------------------
# index.Tensor
# ---------------------------------------------------------------------------------------------

@converter("aten.index.Tensor", dsc="`take(x, indices, axis=)`; several indices: "
           "`take(reshape(x, [...]), i*D + j, axis=)`, or x itself reshaped",
           note="integer index tensors on any axes, broadcast together (negatives count from "
                "the end); each an arange along its own axis of the index shape "
                "(transformers' `mask[batch_idx, kv_idx]`) reads x in place: a reshape; "
                "bool masks unsupported (a data-dependent shape)")
def _index(n: Node) -> None:
    x = n.tensor("self")
    idx = n.arg("indices")
    present = [(k, v) for k, v in enumerate(idx) if v is not None]
    if not present:
        n.alias(x)
        return
    for _, v in present:
        if not isinstance(v, Value):
            raise Unsupported(f"an index {v!r} that is not a tensor")
        if v.dtype not in INTS:
            raise Unsupported(f"indexing with a {v.dtype} tensor: a mask selects a number of "
                              f"elements known only at run time (torch.where(mask, x, fill) "
                              f"keeps the shape)")
    out_shape = n.out_shape()
    if len(present) == 1:
        axis, iv = present[0]
        n.define(Call("take", [n.operand(x), n.operand(iv)], [("axis", Raw(str(axis)))]),
                 x.dtype)
        return
    axes = [k for k, _ in present]
    k = len(axes)
    adjacent = axes == list(range(axes[0], axes[0] + k))
    ishape = _broadcast_shape([v.shape for _, v in present])
    base = axes[0] if adjacent else 0
    if _index_in_place(n, x, present, ishape, base, out_shape):
        return
    # x with the indexed axes first (when they are not adjacent, torch puts the index dims
    # first), merged into one axis, then one flat index.
    e: Expr = n.operand(x)
    shape = list(x.shape)
    if not adjacent:
        perm = axes + [a for a in range(x.rank) if a not in axes]
        e = Call("permute", [e, Dims(perm)])
        shape = [x.shape[a] for a in perm]
        axes = list(range(k))
    block = [shape[a] for a in axes]
    terms = []
    for j, (_, v) in enumerate(present):
        t = _times(_index_expr(n, v, block[j]), product(block[j + 1:]))
        terms.append(t)
    flat = _sum(terms)
    if not ishape and any(isinstance(symdim.simplify(b), symdim.Dim) for b in block[1:]):
        flat = Call("reshape", [flat, Dims([])])
    merged = shape[:base] + [symdim.simplify(product(block))] + shape[base + k:]
    e = Call("reshape", [e, Dims(merged)]) if not same_shape(merged, shape) else e
    n.define(Call("take", [e, flat], [("axis", Raw(str(base)))]), x.dtype, out_shape)


def _index_in_place(n: Node, x: Value, present: list, ishape: list, base: int,
                    out_shape: list) -> bool:
    """x[i0, i1, ...] where each index is arange(0, D) along its own axis of the index shape,
    D the dim it indexes: element (..., i, ...) of the result is x's own, so the result is x
    permuted (the indexed axes in the order of their index's axis) and reshaped."""
    at = []  # each indexed axis: its position in the result
    for axis, v in present:
        it = iota(v)
        if it is None or not symdim.as_dim(it[0]).same(x.shape[axis]):
            return False
        at.append(base + it[1] + len(ishape) - v.rank)
    if len(set(at)) != len(at):
        return False
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
    e: Expr = n.operand(x)
    if perm != list(range(x.rank)):
        e = Call("permute", [e, Dims(perm)])
    if not same_shape([x.shape[a] for a in perm], out_shape):
        e = Call("reshape", [e, Dims(out_shape)])
    if isinstance(e, Ref):
        n.alias(x)
        return True
    n.define(e, x.dtype, out_shape)
    return True


# ---------------------------------------------------------------------------------------------
# gather
# ---------------------------------------------------------------------------------------------

@converter("aten.gather.default", dsc="`take(reshape(x, [N]), flat index, axis=0)`",
           note="the flat index of each element from gather's index and the positions of the "
                "other axes; a gather from a uniform tensor (BERT's buffered token type ids) "
                "is a `full`")
def _gather(n: Node) -> None:
    x = n.tensor("self")
    axis = norm_axis(n.int("dim"), x.rank)
    idx = n.tensor("index")
    n.arg("sparse_grad")
    if idx.dtype not in INTS:
        raise Unsupported(f"gather with a {idx.dtype} index")
    if idx.rank != x.rank:
        raise Unsupported(f"gather with an index of rank {idx.rank} for rank {x.rank}")
    u = is_uniform(x)
    if u is None:
        u = n.imp.fills.get(id(x))
    if u is not None:
        emit_full(n, idx.shape, u, x.dtype)
        return
    if x.rank == 1:
        n.define(Call("take", [n.operand(x), n.operand(idx)], [("axis", Raw("0"))]), x.dtype,
                 idx.shape)
        return
    terms = []
    for d in range(x.rank):
        stride = product(x.shape[d + 1:])
        if d == axis:
            t = _times(n.cast(idx, "i64"), stride)
        elif _one(idx.shape[d]):
            continue
        else:
            dims = [1] * idx.rank
            dims[d] = idx.shape[d]
            pos = Call("reshape", [Call("arange", [Lit("0"), DimArg(idx.shape[d])]), Dims(dims)])
            t = _times(pos, stride)
        terms.append(t)
    flat = _sum(terms)
    total = symdim.simplify(product(x.shape))
    n.define(Call("take", [Call("reshape", [n.operand(x), Dims([total])]), flat],
                  [("axis", Raw("0"))]), x.dtype, idx.shape)


# ---------------------------------------------------------------------------------------------
# cumsum and diff
# ---------------------------------------------------------------------------------------------

CUMSUM_DTYPES = ("f16", "f32", "f64", "i32", "i64")


def cumsum_prim(dtype: str) -> tuple[str, str]:
    """The prim `cumsum_DTYPE`: a running sum along the middle axis of [a, n, b], serial
    along it, in f64 for floats (as torch accumulates on the CPU)."""
    name = f"cumsum_{dtype}"
    acc = "f64" if dtype in FLOATS else dtype
    zero = "0.0" if acc in FLOATS else "0"
    load = "x[i, j, k]" if acc == dtype else f'cast(x[i, j, k], "{acc}")'
    store = "acc" if acc == dtype else f'cast(acc, "{dtype}")'
    text = (f"# y[i, j, k] = x[i, 0, k] + ... + x[i, j, k]: torch.cumsum along the middle axis.\n"
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


@converter("aten.cumsum.default", dsc="`cumsum_DTYPE(reshape(x, [outer, n, inner]))`, a prim "
           "written into the module", note="a serial running sum per row (in f64 for floats); "
           "bool and small integers sum as i64, as in torch")
def _cumsum(n: Node) -> None:
    x = n.tensor("self")
    n.arg("dtype")
    dtype = n.out_dtype()
    if dtype not in CUMSUM_DTYPES:
        raise Unsupported(f"cumsum to {dtype}")
    if x.rank == 0:
        n.define(n.cast(x, dtype), dtype, [])
        return
    axis = norm_axis(n.int("dim"), x.rank)
    name, text = cumsum_prim(dtype)
    n.prog.add_prim(name, text)
    outer = symdim.simplify(product(x.shape[:axis]))
    inner = symdim.simplify(product(x.shape[axis + 1:]))
    dims3 = [outer, x.shape[axis], inner]
    e: Expr = Call(name, [Call("reshape", [n.cast(x, dtype), Dims(dims3)])])
    n.define(Call("reshape", [e, Dims(list(x.shape))]), dtype, list(x.shape))


@converter("aten.diff.default", dsc="`slice(y, axis=, start=1) - slice(y, axis=, end=L - 1)`",
           note="prepend and append concatenated first; n times; bools compare with `!=`")
def _diff(n: Node) -> None:
    x = n.tensor("self")
    times = n.int("n")
    if x.rank == 0:
        raise Unsupported("diff of a 0-d tensor")
    axis = norm_axis(n.int("dim"), x.rank)
    pre, app = n.opt_tensor("prepend"), n.opt_tensor("append")
    dtype = n.out_dtype()
    pieces = [v for v in (pre, x, app) if v is not None]
    for v in pieces:
        if v.rank != x.rank:
            raise Unsupported("diff with a prepend or append of another rank")
    length = symdim.simplify(sum((symdim.as_dim(v.shape[axis]) for v in pieces),
                                 symdim.Dim.const(0)))
    shape = list(x.shape)
    shape[axis] = length
    if len(pieces) > 1:
        y = n.prog.define(Call("concat", [TensorList([n.cast(v, dtype) for v in pieces])],
                               [("axis", Raw(axis_text(axis, x.rank)))]), dtype, shape,
                          n.hint() + "_cat")
    else:
        y = x
    if times == 0:
        n.define(n.cast(y, dtype), dtype, n.out_shape())
        return
    out_shape = n.out_shape()
    if any(symdim.as_dim(d).value() == 0 for d in out_shape):
        emit_full(n, out_shape, 0, dtype)  # torch's result is empty
        return
    ax = Raw(axis_text(axis, x.rank))
    op = "!=" if dtype == "bool" else "-"
    for step in range(times):
        end = symdim.simplify(symdim.as_dim(length) - 1)
        e = Bin(op, Call("slice", [n.operand(y)], [("axis", ax), ("start", DimArg(1))]),
                Call("slice", [n.operand(y)], [("axis", ax), ("end", DimArg(end))]))
        shape = list(shape)
        shape[axis] = end
        if step + 1 == times:
            n.define(e, dtype, out_shape)
            return
        y = n.prog.define(e, dtype, shape, n.hint() + f"_{step + 1}")
        length = end
