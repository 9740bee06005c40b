"""aten indexing and scan ops for torch_import.py: advanced indexing with several index
tensors (`x[b_idx, kv_idx]`, which transformers' mask functions write), gather, cumsum and
diff. Each converter registers itself in torch_node's table (CONVERTERS) when this module is
imported. The lowerings themselves (one flat index into x with the indexed axes merged, or x
itself where each index is an arange along its own axis; the cumsum prim) are in
lowering.py, which onnx_index.py shares for GatherND, GatherElements and CumSum."""

from __future__ import annotations

from . import symdim
from .common import DATA_DEPENDENT, INTS, Unsupported, axis_text
from .lowering import CUMSUM_DTYPES, lower_cumsum, lower_gather, lower_index
from .program import Bin, Call, DimArg, Raw, Ref, TensorList, Value
from .torch_node import Node, converter, norm_axis
from .torch_ops import is_uniform
from .torch_layout import emit_full


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
            raise Unsupported(f"indexing with a {v.dtype} tensor: {DATA_DEPENDENT}")
    e = lower_index(x, n.operand(x), present, lambda v: n.cast(v, "i64"), n.out_shape())
    if isinstance(e, Ref):
        n.alias(x)
        return
    n.define(e, x.dtype, n.out_shape() if len(present) > 1 else None)


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
    n.define(lower_gather(x, n.operand(x), axis, idx, n.cast(idx, "i64")), x.dtype, idx.shape)


# ---------------------------------------------------------------------------------------------
# cumsum and diff
# ---------------------------------------------------------------------------------------------

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
    e = lower_cumsum(n.prog, x, n.cast(x, dtype), axis, dtype)
    n.define(e, dtype, list(x.shape))


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
