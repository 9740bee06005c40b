"""aten's neural-network ops for torch_import.py: softmax and normalization (layer, RMS and
batch norm, folded into the convolution before it where it can be), contraction (matmul,
linear, addmm, attention) and convolution and pooling. Each converter registers itself in
torch_node's table (CONVERTERS) when this module is imported; the shared helpers (broadcasting,
dtype promotion, reductions) are torch_ops.py's."""

from __future__ import annotations

import math

import numpy as np
import torch

from . import symdim
from .common import FLOATS, INTS, Unsupported, axis_text, same_shape
from .dtypes import round_to
from .program import Bin, Call, DimArg, Dims, Expr, Lit, Raw, Ref, Value
from .torch_node import (TORCH_DTYPES, Node, UnsupportedArg, converter, norm_axis, op_name,
                         short_op)
from .torch_ops import defined_by, reduction, where


# ---------------------------------------------------------------------------------------------
# Softmax and normalization
# ---------------------------------------------------------------------------------------------

@converter("aten.softmax.int", "aten._softmax.default", "aten.log_softmax.int",
           "aten._log_softmax.default", "aten._safe_softmax.default",
           dsc="`nn.softmax(x, axis=)`, `nn.log_softmax`",
           note="_safe_softmax gives 0 for rows that are all -inf, as torch does")
def _softmax(n: Node) -> None:
    x = n.tensor("self")
    axis = norm_axis(n.int("dim"), x.rank)
    dtype = n.out_dtype()
    if "half_to_float" in n.defaults or "half_to_float" in n.given:
        n.arg("half_to_float")
    if "dtype" in n.defaults or "dtype" in n.given:
        n.arg("dtype")
    fn = "nn.log_softmax" if "log_softmax" in n.op else "nn.softmax"
    kw = [("axis", Raw(axis_text(axis, x.rank)))]
    e: Expr = Call(fn, [n.cast(x, dtype)], kw)
    if n.op == "aten._safe_softmax.default":
        m = Call("max", [n.cast(x, dtype)], kw + [("keepdims", Raw("true"))])
        e = Call("where", [Bin("==", m, n.lit(-math.inf, dtype)), n.lit(0.0, dtype), e])
    n.define(e, dtype, x.shape)


def _layer_norm(n: Node, x: Value, normalized: list, w: Value | None, b: Value | None,
                eps: float) -> Value:
    dtype = x.dtype
    k = len(normalized)
    if k == 1:
        args = [n.operand(x), n.operand(w) if w is not None else n.lit(1.0, dtype),
                n.operand(b) if b is not None else n.lit(0.0, dtype)]
        return n.define(Call("nn.layer_norm", args, [("eps", Raw(n.lit(eps, "f32").text))]),
                        dtype, x.shape)
    axes = list(range(x.rank - k, x.rank))
    kw = [("axis", Dims(axes)), ("keepdims", Raw("true"))]
    xr = n.operand(x)
    reduced = [1 if i in axes else d for i, d in enumerate(x.shape)]
    mu = n.prog.define(Call("mean", [xr], kw), dtype, reduced, n.hint() + "_mean")
    cen = n.prog.define(Bin("-", xr, Ref(mu)), dtype, x.shape, n.hint() + "_centered")
    var = n.prog.define(Call("mean", [Bin("*", Ref(cen), Ref(cen))], kw), dtype, reduced,
                        n.hint() + "_var")
    y: Expr = Bin("*", Ref(cen), Call("rsqrt", [Bin("+", Ref(var), n.lit(eps, dtype))]))
    if w is not None:
        y = Bin("*", y, n.operand(w))
    if b is not None:
        y = Bin("+", y, n.operand(b))
    return n.define(y, dtype, x.shape)


@converter("aten.layer_norm.default", "aten.native_layer_norm.default",
           dsc="`nn.layer_norm(x, w, b, eps=)`",
           note="over several axes: written out with `mean` and `rsqrt`; native_layer_norm's "
                "mean and rstd outputs unsupported")
def _layer_norm_op(n: Node) -> None:
    x = n.tensor("input")
    normalized = n.dims("normalized_shape")
    w, b = n.opt_tensor("weight"), n.opt_tensor("bias")
    eps = float(n.scalar("eps"))
    if n.op == "aten.native_layer_norm.default":
        v = _layer_norm(n, x, normalized, w, b, eps)
        n.out([v, None, None])
        return
    _layer_norm(n, x, normalized, w, b, eps)


@converter("aten.rms_norm.default", dsc="`nn.rms_norm(x, w, eps=)`",
           note="over the last axis; eps=None is the dtype's machine epsilon, as torch does")
def _rms_norm(n: Node) -> None:
    x = n.tensor("input")
    normalized = n.dims("normalized_shape")
    w = n.opt_tensor("weight")
    eps = n.arg("eps")
    if eps is None:
        eps = float(torch.finfo(TORCH_DTYPES[x.dtype]).eps)
    if len(normalized) != 1:
        raise Unsupported(f"rms_norm over {len(normalized)} axes")
    args = [n.operand(x), n.operand(w) if w is not None else n.lit(1.0, x.dtype)]
    n.define(Call("nn.rms_norm", args, [("eps", Raw(n.lit(float(eps), "f32").text))]),
             x.dtype, x.shape)


def _bn_stats(n: Node) -> tuple[np.ndarray, np.ndarray]:
    """A batch norm in inference as `x * scale + shift` per channel (float64 arrays)."""
    w, b = n.opt_tensor("weight"), n.opt_tensor("bias")
    mean, var = n.opt_tensor("running_mean"), n.opt_tensor("running_var")
    eps = float(n.scalar("eps"))
    n.arg("momentum")
    if n.op == "aten.batch_norm.default":
        if n.arg("training"):
            raise UnsupportedArg("training=True")
        n.arg("cudnn_enabled")
    for t, what in ((mean, "running_mean"), (var, "running_var"), (w, "weight"), (b, "bias")):
        if t is not None and not t.is_const():
            raise Unsupported(f"the {what} is computed at run time")
    if mean is None or var is None:
        raise Unsupported("batch norm without running statistics")
    scale = 1.0 / np.sqrt(var.const.astype(np.float64) + eps)
    if w is not None:
        scale = scale * w.const.astype(np.float64)
    shift = -mean.const.astype(np.float64) * scale + \
        (b.const.astype(np.float64) if b is not None else 0.0)
    return scale, shift


BATCH_NORMS = ("aten._native_batch_norm_legit_no_training.default", "aten.batch_norm.default")


def _foldable_bn(n: Node, o: int):
    """The batch norm that alone reads this convolution's result, with its per-channel scale
    and shift and the name for the folded bias, when it can be folded into the convolution's
    weights (inference, constant statistics of o channels); else None."""
    users = list(n.fx.users)
    if len(users) != 1 or op_name(users[0].target) not in BATCH_NORMS or \
            users[0].args[0] is not n.fx or users[0] in n.imp.poisoned:
        return None
    bn = Node(n.imp, users[0])
    bn.mark_read("input")  # this convolution, not converted yet
    try:
        scale, shift = _bn_stats(bn)
        bn.check_args()
    except Exception:  # noqa: BLE001 - the batch norm's own converter reports it
        return None
    if scale.shape != (o,):
        return None
    b, mean = bn.opt_tensor("bias"), bn.opt_tensor("running_mean")
    bias_hint = b.hint if b is not None else \
        mean.hint.removesuffix("_running_mean").removesuffix("_mean") + "_bias"
    return users[0], scale, shift, bias_hint


@converter(*BATCH_NORMS,
           dsc="folded into the convolution before it; else `x * scale + shift`",
           note="inference only: after a convolution with constant weights that nothing else "
                "reads, its weights become `w * s` and its bias `(b - mean) * s + beta`; "
                "otherwise the running statistics are folded into two weights")
def _batch_norm(n: Node) -> None:
    x = n.tensor("input")
    folded = n.imp.folded.get(n.fx)
    if folded is not None:
        for name in n.given:
            n.arg(name)
        if isinstance(n.meta, (list, tuple)):
            n.out([folded] + [None] * (len(n.meta) - 1))
        else:
            n.alias(folded)
        return
    stats = _bn_stats(n)
    mean, w = n.opt_tensor("running_mean"), n.opt_tensor("weight")
    c = mean.const.shape[0]
    scale, shift = stats
    bshape = [c] + [1] * (x.rank - 2)
    hint = (w or mean).hint.rsplit("_", 1)[0] or "bn"
    sc = n.prog.constant(round_to(scale, x.dtype).reshape(bshape), x.dtype,
                         hint + "_scale")
    sh = n.prog.constant(round_to(shift, x.dtype).reshape(bshape), x.dtype,
                         hint + "_shift")
    v = n.define(Bin("+", Bin("*", n.operand(x), n.prog.operand(sc)), n.prog.operand(sh)),
                 x.dtype, x.shape)
    if isinstance(n.meta, (list, tuple)):
        n.out([v] + [None] * (len(n.meta) - 1))


# ---------------------------------------------------------------------------------------------
# Contraction
# ---------------------------------------------------------------------------------------------

def transposed(n: Node, w: Value) -> Expr:
    """w^T for a rank-2 w: a constant is stored transposed (dsc's [in, out]), keeping its
    name; a computed one gets a `permute`."""
    if w.is_const() and w.const.dtype != object:
        key = ("T", id(w))
        t = n.imp.fold_memo.get(key)
        if t is None:
            t = n.prog.constant(np.ascontiguousarray(w.const.T), w.dtype, w.hint)
            n.imp.fold_memo[key] = t
        return n.operand(t)
    return Call("permute", [n.operand(w), Dims([1, 0])])


@converter("aten.linear.default", dsc="`nn.linear(x, w, b)`, `matmul(x, w)` without bias",
           note="the constant weight is stored transposed, [in, out]")
def _linear(n: Node) -> None:
    x, w, b = n.tensor("input"), n.tensor("weight"), n.opt_tensor("bias")
    wt = transposed(n, w) if w.rank == 2 else n.operand(w)
    if b is None:
        n.define(Call("matmul", [n.operand(x), wt]))
    else:
        n.define(Call("nn.linear", [n.operand(x), wt, n.operand(b)]))


@converter("aten.matmul.default", "aten.mm.default", "aten.bmm.default",
           dsc="`matmul(a, b)`", note="batched, 1-D operands as NumPy")
def _matmul(n: Node) -> None:
    a, b = n.tensor("self"), n.tensor("other" if "other" in n.given else "mat2")
    dtype = n.out_dtype()
    n.define(Call("matmul", [_unbroadcast(n, a, dtype), _unbroadcast(n, b, dtype)]), dtype)


def _unbroadcast(n: Node, v: Value, dtype: str) -> Expr:
    """A matmul operand: `broadcast_to(w, [B, k, n])` of a matrix w (torch's core
    decomposition of a Linear on a 3-D input) is w itself, since matmul broadcasts."""
    e = defined_by(n, v, ("call", "broadcast_to"))
    if e is not None and isinstance(e.args[0], Ref) and e.args[0].value.rank == 2 and \
            e.args[0].value.dtype == dtype and \
            same_shape(e.args[0].value.shape, v.shape[-2:]):
        return e.args[0]
    return n.cast(v, dtype)


@converter("aten.addmm.default", "aten.baddbmm.default",
           dsc="`nn.linear(a, b, c)`, or `matmul(a, b) * alpha + c * beta`",
           note="torch's core decomposition of Linear (addmm of a transposed weight) reads as "
                "`nn.linear`")
def _addmm(n: Node) -> None:
    c = n.tensor("self")
    a = n.tensor("mat1" if "mat1" in n.given else "batch1")
    b = n.tensor("mat2" if "mat2" in n.given else "batch2")
    beta, alpha = n.scalar("beta", 1), n.scalar("alpha", 1)
    dtype = n.out_dtype()
    if alpha == 1 and beta == 1 and c.rank == 1:
        n.define(Call("nn.linear", [n.operand(a), n.operand(b), n.operand(c)]), dtype)
        return
    e: Expr = Call("matmul", [n.operand(a), n.operand(b)])
    if alpha != 1:
        e = Bin("*", e, n.lit(alpha, dtype))
    if beta != 0:
        ec: Expr = n.operand(c)
        if beta != 1:
            ec = Bin("*", ec, n.lit(beta, dtype))
        e = Bin("+", e, ec)
    n.define(e, dtype)


@converter("aten.scaled_dot_product_attention.default",
           dsc="`nn.attention(q, k, v, mask=, scale=)`, `nn.masked_attention(q, k, v, keep, "
               "scale=)`",
           note="rank-4 q, k, v; a bool mask is nn.masked_attention's `keep` (a query that "
                "attends to no key gives 0, as in torch); is_causal an additive mask of 0 "
                "and -inf; dropout_p=0 only; enable_gqa only with equal head counts")
def _sdpa(n: Node) -> None:
    q, k, v = n.tensor("query"), n.tensor("key"), n.tensor("value")
    mask = n.opt_tensor("attn_mask")
    if float(n.scalar("dropout_p")) != 0.0:
        raise UnsupportedArg("dropout_p != 0 (dropout at inference only)")
    causal = bool(n.arg("is_causal"))
    scale = n.arg("scale")
    gqa = bool(n.arg("enable_gqa"))
    if q.rank != 4 or k.rank != 4 or v.rank != 4:
        raise Unsupported(f"attention over ranks {q.rank}, {k.rank}, {v.rank} (nn.attention "
                          f"takes [B, H, S, D])")
    if gqa and not symdim.as_dim(q.shape[1]).same(k.shape[1]):
        raise UnsupportedArg("enable_gqa=True with fewer key heads than query heads")
    dtype = q.dtype
    if scale is None:
        e = q.shape[-1]
        if not isinstance(e, int):
            raise Unsupported(f"the default scale 1/sqrt({e}) of a symbolic head size")
        scale = 1.0 / math.sqrt(e)
    kw: list = []
    L, S = q.shape[2], k.shape[2]
    if causal:
        if mask is not None:
            raise Unsupported("both attn_mask and is_causal")
        rows = Call("reshape", [Call("arange", [Lit("0"), DimArg(L)]), Dims([L, 1])])
        keep = Bin("<=", Call("arange", [Lit("0"), DimArg(S)]), rows)
        kw.append(("mask", Call("where", [keep, n.lit(0.0, dtype), n.lit(-math.inf, dtype)])))
    kw.append(("scale", Raw(n.lit(float(scale), "f32").text)))
    if not causal and mask is not None and mask.dtype == "bool":
        # A query whose every key is masked (a row of left padding) gives 0, as in torch.
        n.define(Call("nn.masked_attention", [n.operand(q), n.operand(k), n.operand(v),
                                              n.operand(mask)], kw[-1:]), dtype)
        return
    if not causal and mask is not None:
        kw.insert(0, ("mask", n.cast(mask, dtype)))
    n.define(Call("nn.attention", [n.operand(q), n.operand(k), n.operand(v)], kw), dtype)


# ---------------------------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------------------------

def _pair(xs: list[int], what: str) -> Expr:
    if len(xs) == 1 or (len(xs) == 2 and xs[0] == xs[1]):
        return Raw(str(xs[0]))
    if len(xs) == 2:
        return Dims(xs)
    raise Unsupported(f"{what} {xs} (conv2d takes one int or a pair)")


@converter("aten.conv2d.default", "aten.conv1d.default", "aten.convolution.default",
           dsc="`conv2d(x, w, stride=, padding=, dilation=, groups=)` + bias",
           note="2-D, not transposed; the bias is added as `reshape(b, [C, 1, 1])`; a 1-D "
                "convolution (Whisper's) is a conv2d of height 1 between reshapes")
def _conv(n: Node) -> None:
    x, w, b = n.tensor("input"), n.tensor("weight"), n.opt_tensor("bias")
    one_d = x.rank == 3
    if x.rank not in (3, 4) or w.rank != x.rank:
        raise Unsupported(f"a convolution of rank {x.rank} (dsc has conv2d; 1-D convolutions "
                          f"of batched [N, C, L] inputs are read as conv2d)")
    if n.op == "aten.convolution.default":
        if n.arg("transposed"):
            raise UnsupportedArg("transposed=True")
        n.arg("output_padding")
    kw: list = []
    for name, default in (("stride", 1), ("padding", 0), ("dilation", 1)):
        vals = n.ints(name)
        if one_d:
            if len(vals) > 1:
                raise UnsupportedArg(f"{name}={vals} for a 1-D convolution")
            vals = [default] + (vals or [default])  # the height of 1 is not strided or padded
        if vals and any(v != default for v in vals):
            kw.append((name, _pair(vals, name)))
    groups = n.int("groups")
    if groups != 1:
        kw.append(("groups", Raw(str(groups))))
    if one_d:
        # [N, C, L] as [N, C, 1, L], the kernel [O, C/g, K] as [O, C/g, 1, K].
        w4 = [w.shape[0], w.shape[1], 1, w.shape[2]]
        if w.is_const() and w.const.dtype != object:
            w = n.prog.constant(w.const.reshape([int(d) for d in w4]), w.dtype, w.hint)
        else:
            w = n.prog.define(Call("reshape", [n.operand(w), Dims(w4)]), w.dtype, w4,
                              n.hint() + "_w")
    fold = _foldable_bn(n, w.shape[0]) if w.is_const() and w.rank == 4 and \
        x.dtype in FLOATS and (b is None or b.is_const()) else None
    if fold is not None:
        # As inference engines do (and onnx2dsc): w * s and (b - mean) * s + beta.
        bn_fx, scale, shift, bias_hint = fold
        w = n.prog.constant(round_to(w.const.astype(np.float64) * scale[:, None, None, None],
                                     x.dtype), w.dtype, w.hint)
        b0 = b.const.astype(np.float64) if b is not None else 0.0
        b = n.prog.constant(round_to(b0 * scale + shift, x.dtype), w.dtype, bias_hint)
    xe: Expr = n.operand(x)
    if one_d:
        xe = Call("reshape", [xe, Dims([x.shape[0], x.shape[1], 1, x.shape[2]])])
    e: Expr = Call("conv2d", [xe, n.operand(w)], kw)
    if b is not None:
        if b.is_const():
            bb = n.prog.constant(b.const.reshape(-1, 1, 1), b.dtype, b.hint)
            e = Bin("+", e, n.operand(bb))
        else:
            e = Bin("+", e, Call("reshape", [n.operand(b), Dims([b.shape[0], 1, 1])]))
    if one_d:
        e = Call("reshape", [e, Dims(n.out_shape())])
    v = n.define(e)
    if fold is not None:
        n.imp.folded[fold[0]] = v


@converter("aten.adaptive_avg_pool2d.default", "aten._adaptive_avg_pool2d.default",
           dsc="`mean(x, axis=[2, 3], keepdims=true)`", note="output size 1 only")
def _adaptive_avg_pool(n: Node) -> None:
    x = n.tensor("self")
    if n.ints("output_size") not in ([1, 1], [1]):
        raise UnsupportedArg(f"output_size={n.ints('output_size')} (only 1: a global "
                             f"average)")
    r = x.rank
    reduction(n, "mean", x, x.shape, [r - 2, r - 1], True, x.dtype)


def _window(n: Node, name: str, default: list[int] | None = None) -> list[int]:
    """A pool's kernel_size, stride or padding as two ints (torch also takes one for both;
    an empty stride means the kernel)."""
    vals = n.ints(name)
    if not vals and default is not None:
        return list(default)
    if len(vals) == 1:
        return vals * 2
    if len(vals) != 2:
        raise UnsupportedArg(f"{name}={vals} (a 2-D pool takes one int or a pair)")
    return vals


@converter("aten.max_pool2d.default", "aten.max_pool2d_with_indices.default",
           "aten.avg_pool2d.default",
           dsc="`max_pool2d(x, k, stride=, padding=)`, `avg_pool2d(x, k, stride=, padding=, "
               "count_include_pad=)`",
           note="NCHW; ceil_mode=False, dilation 1, no divisor_override; "
                "max_pool2d_with_indices (core ATen): the values only")
def _pool(n: Node) -> None:
    x = n.tensor("self")
    average = n.op == "aten.avg_pool2d.default"
    with_indices = n.op == "aten.max_pool2d_with_indices.default"
    if x.rank != 4:
        raise Unsupported(f"a pool of a rank-{x.rank} input (dsc's pools take NCHW)")
    if x.dtype not in (FLOATS if average else FLOATS + INTS):
        raise Unsupported(f"{short_op(n.fx.target)} of {x.dtype}")
    kernel = _window(n, "kernel_size")
    stride = _window(n, "stride", kernel)
    padding = _window(n, "padding", [0, 0])
    if n.arg("ceil_mode"):
        raise UnsupportedArg("ceil_mode=True (dsc's pools round the output size down)")
    if not average and any(d != 1 for d in _window(n, "dilation", [1, 1])):
        raise UnsupportedArg(f"dilation={n.ints('dilation')} (dsc's pools have no dilation)")
    include_pad = False
    if average:
        include_pad = bool(n.arg("count_include_pad"))
        if n.arg("divisor_override") is not None:
            raise UnsupportedArg("divisor_override (dsc divides by the window's size)")
    if any(p >= k for p, k in zip(padding, kernel)):
        raise UnsupportedArg(f"padding {padding} not below the kernel {kernel}")
    kw: list = []
    if stride != kernel:
        kw.append(("stride", _pair(stride, "stride")))
    if any(padding):
        kw.append(("padding", _pair(padding, "padding")))
        if include_pad:
            kw.append(("count_include_pad", Raw("true")))
    call = Call("avg_pool2d" if average else "max_pool2d", [n.operand(x), _pair(kernel,
                                                                                "kernel_size")], kw)
    if with_indices:
        v = n.define(call, n.out_dtype(0), n.out_shape(0))
        n.out([v, None])
    else:
        n.define(call, x.dtype)


@converter("aten.embedding.default", dsc="`take(w, ids, axis=0)`",
           note="padding_idx only matters for training and is ignored")
def _embedding(n: Node) -> None:
    w, ids = n.tensor("weight"), n.tensor("indices")
    n.arg("padding_idx")
    if ids.dtype not in INTS:
        raise Unsupported(f"embedding indices of {ids.dtype}")
    n.define(Call("take", [n.operand(w), n.operand(ids)], [("axis", Raw("0"))]), w.dtype)
