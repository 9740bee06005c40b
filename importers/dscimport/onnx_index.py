"""ONNX indexing and scan ops for onnx_import.py: GatherND, GatherElements, CumSum and IsNaN,
the ops the dynamo exporter writes for transformers' masks (`padding_mask[batch_idx,
kv_idx]` is a GatherND of Expands), BERT's buffered token type ids (a GatherElements), GPT-2's
packed-sequence check (CumSum) and scaled_dot_product_attention's guard for rows that attend
to no key (IsNaN of the softmax). Each converter registers itself in onnx_node's table
(CONVERTERS) when this module is imported.

The lowerings are lowering.py's, which torch_index.py shares for the same patterns in
torch.export programs (aten.index.Tensor, aten.gather, aten.cumsum), so both routes read
them alike.
"""

from __future__ import annotations

import numpy as np

from . import symdim
from .common import FLOATS, INTS, ModelError, NP_DTYPES, Unsupported
from .lowering import (CUMSUM_DTYPES, index_expr, lower_cumsum, lower_gather, lower_index,
                       uniform_fill)
from .onnx_node import Node, converter, is_symbolic, norm_axis
from .program import (Bin, Call, Dims, Expr, Lit, Ref, Str, TensorList, Value, literal_text,
                      slice_kwargs)


def _i64(n: Node, v: Value) -> Expr:
    e = n.operand(v)
    return e if v.dtype == "i64" else Call("cast", [e], [("dtype", Str("i64"))])


def _full(n: Node, shape: list, fill, dtype: str) -> None:
    t = literal_text(fill, dtype)
    if t is None:
        raise Unsupported(f"a fill of {fill}, which has no dsc literal")
    n.define(Call("full", [Dims(list(shape)), Lit(t)], [("dtype", Str(dtype))]), dtype, shape)


def _check_range(n: Node, x: Value, idx: Value, axes: list[int]) -> None:
    """A constant index out of its dim's range is a malformed model (ONNX leaves it
    undefined)."""
    if not idx.is_const() or is_symbolic(idx.const) or not idx.const.size:
        return
    c = idx.const
    for j, a in enumerate(axes):
        d = symdim.as_dim(x.shape[a]).value()
        col = c if len(axes) == 1 and n.op != "GatherND" else c[..., j]
        if d is not None and (col.min() < -d or col.max() >= d):
            raise ModelError(f"{n.op} index {int(col.min() if col.min() < -d else col.max())} "
                             f"is out of range for a dim of {d}")


# ---------------------------------------------------------------------------------------------
# GatherND
# ---------------------------------------------------------------------------------------------

def _index_pieces(n: Node, idx: Value, k: int) -> list[Value]:
    """The k index tensors of a GatherND's indices [..., k], each of shape [...]: the pieces
    of the Concat that built them (the exporter's form, each an Unsqueeze of an index along a
    new last axis), else slices of the indices."""
    lead = list(idx.shape[:-1])
    d = idx.defn
    e = d.expr if d is not None and not d.is_tuple else None
    pieces: list[Value] = []
    if isinstance(e, Call) and e.fn == "concat" and isinstance(e.args[0], TensorList) and \
            all(isinstance(it, Ref) and it.value.rank == idx.rank and
                symdim.as_dim(it.value.shape[-1]).same(1) for it in e.args[0].items) and \
            len(e.args[0].items) == k:
        for j, it in enumerate(e.args[0].items):
            u = it.value
            pieces.append(n.prog.define(Call("reshape", [Ref(u), Dims(list(u.shape[:-1]))]),
                                        u.dtype, list(u.shape[:-1]), f"{n.hint()}_i{j}"))
        return pieces
    for j in range(k):
        s = Call("slice", [n.operand(idx)], slice_kwargs("-1", j, j + 1, k, 1))
        pieces.append(n.prog.define(Call("reshape", [s, Dims(lead)]), idx.dtype, lead,
                                    f"{n.hint()}_i{j}"))
    return pieces


@converter("GatherND", note="`batch_dims=0`: as torch's `x[i0, i1, ...]`: one flat index "
           "into x with the indexed axes merged, `take(reshape(x, [...]), i0*D1 + i1, axis=0)`; "
           "indices that are aranges along their own axes (transformers' "
           "`mask[batch_idx, kv_idx]`) read x in place: a reshape")
def _gather_nd(n: Node) -> None:
    x, idx = n.input(0), n.input(1)
    batch_dims = int(n.attr("batch_dims", 0))
    if idx.dtype not in INTS:
        raise ModelError(f"GatherND indices of {idx.dtype}")
    if idx.rank < 1:
        raise ModelError("GatherND indices of rank 0")
    if batch_dims != 0:
        raise Unsupported(f"batch_dims={batch_dims} (only 0, the form torch's exporter writes)")
    k = idx.shape[-1]
    if not isinstance(symdim.simplify(k), int):
        raise Unsupported(f"indices whose last dim {k} is not known at import time")
    k = int(symdim.simplify(k))
    if not 1 <= k <= x.rank:
        raise ModelError(f"indices of last dim {k} for data of rank {x.rank}")
    _check_range(n, x, idx, list(range(k)))
    out_shape = list(idx.shape[:-1]) + list(x.shape[k:])
    if x.is_const() and idx.is_const() and not is_symbolic(x.const) and \
            not is_symbolic(idx.const):
        c = idx.const.astype(np.int64)
        n.const_out(x.const[tuple(np.moveaxis(c, -1, 0))], dtype=x.dtype)
        return
    fill = uniform_fill(x)
    if fill is not None:
        _full(n, out_shape, fill, x.dtype)
        return
    pieces = _index_pieces(n, idx, k)
    e = lower_index(x, n.operand(x), list(enumerate(pieces)), lambda v: _i64(n, v), out_shape)
    if isinstance(e, Ref):
        n.out(x)
        return
    n.define(e, x.dtype, out_shape)


# ---------------------------------------------------------------------------------------------
# GatherElements
# ---------------------------------------------------------------------------------------------

@converter("GatherElements", note="as torch's gather: `take(reshape(x, [N]), flat index, "
           "axis=0)` with the flat index of each element; negative indices count from the end; "
           "from a uniform tensor (BERT's buffered token type ids) a `full`")
def _gather_elements(n: Node) -> None:
    x, idx = n.input(0), n.input(1)
    axis = norm_axis(n.attr("axis", 0), x.rank, "axis")
    if idx.dtype not in INTS:
        raise ModelError(f"GatherElements indices of {idx.dtype}")
    if idx.rank != x.rank:
        raise ModelError(f"indices of rank {idx.rank} for data of rank {x.rank}")
    _check_range(n, x, idx, [axis])
    if x.is_const() and idx.is_const() and not is_symbolic(x.const) and \
            not is_symbolic(idx.const):
        c = idx.const.astype(np.int64)
        c = np.where(c < 0, c + x.const.shape[axis], c)
        n.const_out(np.take_along_axis(x.const, c, axis=axis), dtype=x.dtype)
        return
    fill = uniform_fill(x)
    if fill is not None:
        _full(n, list(idx.shape), fill, x.dtype)
        return
    ie = index_expr(_i64(n, idx), idx, x.shape[axis])
    n.define(lower_gather(x, n.operand(x), axis, idx, ie), x.dtype, list(idx.shape))


# ---------------------------------------------------------------------------------------------
# CumSum
# ---------------------------------------------------------------------------------------------

def _check_cumsum(n: Node) -> None:
    if n.flag("exclusive", 0):
        raise Unsupported("exclusive=1 (only the inclusive sum, torch.cumsum's)")
    if n.flag("reverse", 0):
        raise Unsupported("reverse=1 (only the forward sum, torch.cumsum's)")


@converter("CumSum", note="as torch's cumsum: `cumsum_DTYPE(reshape(x, [outer, n, inner]))`, a "
           "prim written into the module (serial along the axis, in f64 for floats); "
           "`exclusive=0`, `reverse=0` only", precheck=_check_cumsum)
def _cumsum(n: Node) -> None:
    _check_cumsum(n)
    x = n.input(0)
    if x.dtype not in CUMSUM_DTYPES:
        raise Unsupported(f"CumSum of {x.dtype} (dsc's cumsum takes "
                          f"{', '.join(CUMSUM_DTYPES)})")
    axes = n.const(1, "the axis")
    if n.input(1).dtype not in INTS or np.asarray(axes).size != 1:
        raise ModelError(f"the axis is {n.input(1).type_text()}; it must be one integer")
    if x.rank == 0:
        raise ModelError("CumSum of a 0-d tensor")
    axis = norm_axis(int(np.asarray(axes).reshape(-1)[0]), x.rank, "axis")
    if x.is_const() and not is_symbolic(x.const):
        n.const_out(np.cumsum(x.const, axis=axis).astype(NP_DTYPES[x.dtype]), dtype=x.dtype)
        return
    n.define(lower_cumsum(n.prog, x, n.operand(x), axis, x.dtype), x.dtype, list(x.shape))


# ---------------------------------------------------------------------------------------------
# IsNaN
# ---------------------------------------------------------------------------------------------

@converter("IsNaN", note="`x != x` (true for NaN alone); the exporter's guard after a softmax "
           "whose row is all masked, as torch's `_safe_softmax`")
def _isnan(n: Node) -> None:
    x = n.input(0)
    if x.dtype not in FLOATS:
        raise ModelError(f"IsNaN of {x.dtype}")
    if x.is_const() and not is_symbolic(x.const):
        n.const_out(np.isnan(x.const), dtype="bool")
        return
    e = n.operand(x)
    n.define(Bin("!=", e, e), "bool", list(x.shape))

