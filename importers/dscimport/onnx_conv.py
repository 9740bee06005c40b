"""ONNX convolution, normalization and pooling ops for onnx_import.py: Conv,
BatchNormalization, MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool, as dsc's
conv2d, max_pool2d, avg_pool2d, mean and max over NCHW tensors. Each converter registers itself
in onnx_node's table (CONVERTERS) when this module is imported.

A BatchNormalization (inference) whose input is a Conv with constant weights, read by nothing
else, is folded into that Conv at import time: the Conv looks one node ahead and writes
`conv2d(x, w * s) + (b - mean) * s + beta`, s = scale / sqrt(var + eps), computed in float64,
so the .dsc has one conv and one bias where the model had two ops. Any other
BatchNormalization is `x * s + t` per channel (constants folded when the statistics are).

Windows: ONNX gives `pads` as [h_begin, w_begin, h_end, w_end]. dsc's ops pad both sides
alike, so unequal sides are written as an explicit `pad` of zeros before a Conv (and before an
AveragePool that counts the padding); a MaxPool, or an AveragePool that does not count it,
with unequal sides is unsupported. `auto_pad` SAME_UPPER/SAME_LOWER is read where the padding
does not depend on a symbolic input size (stride 1, or a constant size). Every output size is
`(H + pads - dilation*(k - 1) - 1) / stride + 1`, as dsc infers it.
"""

from __future__ import annotations

import numpy as np

from . import symdim
from .common import FLOATS, INTS, ModelError, Unsupported
from .onnx_node import (Node, converter, finite_literal, generic_name, is_symbolic,
                        same_dtype)
from .program import Bin, Call, Dims, Expr, Lit, Raw, Value


# ---------------------------------------------------------------------------------------------
# Windows
# ---------------------------------------------------------------------------------------------

AUTO_PADS = ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER")


def _ints_attr(n: Node, name: str, default: list[int], count: int,
               one_d: bool = False) -> list[int]:
    """A 2-D window's attribute (count values per spatial axis, pads twice). For a 1-D Conv
    (`one_d`, over [N, C, L], read as a conv2d of height 1) the attribute has half the values
    and the height gets the neutral ones: kernel, stride and dilation 1, no padding."""
    v = n.attr(name)
    if v is None:
        return list(default)
    v = [int(x) for x in v]
    if one_d:
        if len(v) != count // 2:
            raise ModelError(f"attribute '{name}' has {len(v)} values; a 1-D {n.op} takes "
                             f"{count // 2}")
        neutral = 0 if name == "pads" else 1
        return [neutral, v[0], neutral, v[1]] if name == "pads" else [neutral] + v
    if len(v) != count:
        raise ModelError(f"attribute '{name}' has {len(v)} values; a 2-D {n.op} takes {count}")
    return v


def _check_auto_pad(n: Node) -> str:
    a = n.attr("auto_pad", "NOTSET")
    if a not in AUTO_PADS:
        raise ModelError(f"auto_pad is '{a}'; it must be one of {', '.join(AUTO_PADS)}")
    return a


class Window:
    """The kernel, strides, dilations and pads (begin, end per spatial axis) of a 2-D window."""

    def __init__(self, kernel: list[int], strides: list[int], dilations: list[int],
                 pads: list[tuple[int, int]]):
        self.kernel, self.strides, self.dilations, self.pads = kernel, strides, dilations, pads

    def symmetric(self) -> bool:
        return all(b == e for b, e in self.pads)

    def out_dims(self, dims: list) -> list:
        out = []
        for a, d in enumerate(dims):
            b, e = self.pads[a]
            room = symdim.simplify(d + b + e - self.dilations[a] * (self.kernel[a] - 1) - 1)
            if isinstance(room, int) and room < 0:
                reach = self.dilations[a] * (self.kernel[a] - 1) + 1
                raise ModelError(f"the padded input {['height', 'width'][a]} {d + b + e} is "
                                 f"smaller than the (dilated) kernel's {reach}")
            out.append(symdim.simplify(room // self.strides[a] + 1))
        return out


def _window(n: Node, x: Value, kernel: list[int], dilations_attr: bool,
            one_d: bool = False) -> Window:
    """The window of a 2-D Conv or pool from its attributes (`kernel` already known); x is
    NCHW (for a 1-D Conv, its input viewed as [N, C, 1, L])."""
    auto = _check_auto_pad(n)
    strides = _ints_attr(n, "strides", [1, 1], 2, one_d)
    dilations = _ints_attr(n, "dilations", [1, 1], 2, one_d) if dilations_attr else [1, 1]
    pads_attr = _ints_attr(n, "pads", [0, 0, 0, 0], 4, one_d)
    if any(s < 1 for s in strides) or any(d < 1 for d in dilations) or \
            any(p < 0 for p in pads_attr) or any(k < 1 for k in kernel):
        raise ModelError(f"strides {strides}, dilations {dilations}, pads {pads_attr} and "
                         f"kernel {kernel} must be positive (pads >= 0)")
    if auto == "NOTSET":
        pads = [(pads_attr[0], pads_attr[2]), (pads_attr[1], pads_attr[3])]
    elif auto == "VALID":
        pads = [(0, 0), (0, 0)]
    else:
        pads = []
        for a in range(2):
            size, s = x.shape[2 + a], strides[a]
            reach = dilations[a] * (kernel[a] - 1) + 1
            if s == 1:
                total = reach - 1
            elif isinstance(size, int):
                total = max((-(-size // s) - 1) * s + reach - size, 0)
            else:
                raise Unsupported(f"auto_pad={auto} with stride {s} over the symbolic size "
                                  f"{size}: the padding would depend on {size} % {s}")
            small = total // 2
            pads.append((small, total - small) if auto == "SAME_UPPER" else (total - small, small))
    return Window(kernel, strides, dilations, pads)


def _pair(values: list[int]) -> Expr:
    """`2` for [2, 2], `[1, 2]` otherwise."""
    return Raw(str(values[0])) if values[0] == values[1] else Dims(list(values))


def _explicit_pad(n: Node, x: Expr, w: Window) -> Expr:
    """`pad(x, [0, 0, 0, 0, top, bottom, left, right])`: zeros on the spatial sides."""
    (hb, he), (wb, we) = w.pads
    return Call("pad", [x, Dims([0, 0, 0, 0, hb, he, wb, we])])


def _check_nchw(n: Node, x: Value) -> None:
    if x.rank != 4:
        raise Unsupported(f"input of rank {x.rank}: only 2-D {n.op} (NCHW, rank 4) is supported")


def _channel_const(n: Node, a: np.ndarray, dtype: str, rank: int, hint: str) -> Value:
    """A per-channel constant [C] shaped [C, 1, ...] to broadcast over a rank-`rank` NCHW
    tensor."""
    return n.prog.constant(np.ascontiguousarray(a.reshape([-1] + [1] * (rank - 2))), dtype, hint)


# ---------------------------------------------------------------------------------------------
# Conv, with a BatchNormalization folded into it
# ---------------------------------------------------------------------------------------------

def _check_conv(n: Node) -> None:
    _check_auto_pad(n)


def _foldable_bn(n: Node, dtype: str, out_channels: int):
    """The BatchNormalization this Conv's output feeds, and its per-channel scale and shift
    (float64), when it can be folded: the Conv's output is read by that node alone, and its
    statistics are known. None otherwise (the node is then converted on its own)."""
    out = n.node.output[0]
    readers = n.imp.readers(out)
    if len(readers) != 1 or readers[0] is None:
        return None
    bn = readers[0]
    if bn.op_type != "BatchNormalization" or bn.domain not in ("", "ai.onnx") or \
            list(bn.input[:1]) != [out] or len(bn.input) != 5:
        return None
    attrs = {a.name: a for a in bn.attribute}
    if set(attrs) - {"epsilon", "momentum", "training_mode"} or \
            any(a.ref_attr_name for a in attrs.values()):
        return None
    if "training_mode" in attrs and (attrs["training_mode"].type != attrs["training_mode"].INT
                                     or attrs["training_mode"].i != 0):
        return None
    if any(o and n.imp.is_used(o) for o in bn.output[1:]):
        return None
    eps = 1e-5
    if "epsilon" in attrs:
        if attrs["epsilon"].type != attrs["epsilon"].FLOAT:
            return None
        eps = float(attrs["epsilon"].f)
    params = []
    for name in bn.input[1:]:
        v = n.imp.values.get(name)
        if v is None or not v.is_const() or is_symbolic(v.const) or v.dtype != dtype or \
                list(v.const.shape) != [out_channels]:
            return None
        params.append(v.const.astype(np.float64))
    gamma, beta, mean, var = params
    if not np.isfinite(eps):
        return None
    scale = gamma / np.sqrt(var + eps)
    return bn, scale, beta - mean * scale, n.imp.values[bn.input[2]].hint


@converter("Conv", note="2-D (NCHW): `conv2d(x, w, stride=, padding=, dilation=, groups=) + b` "
                        "(b shaped [O, 1, 1]); unequal pads as an explicit `pad`; a following "
                        "BatchNormalization is folded into w and b; 1-D ([N, C, L], Whisper's) "
                        "as a conv2d of height 1 between reshapes, as torch2dsc reads conv1d",
           precheck=_check_conv)
def _conv(n: Node) -> None:
    x, w, b = n.input(0), n.input(1), n.opt(2)
    same_dtype(n, x, w, b)
    if x.dtype not in FLOATS:
        raise Unsupported(f"Conv of {x.dtype}")
    if x.rank not in (3, 4):
        raise Unsupported(f"input of rank {x.rank}: only 1-D and 2-D Conv (NCL and NCHW, rank 3 "
                          f"and 4) are supported; dsc has conv2d, and reads a 1-D Conv as one "
                          f"of height 1")
    one_d = x.rank == 3
    x_in = x
    if one_d:
        if w.rank != 3:
            raise ModelError(f"weights {w.type_text()}: a 1-D Conv takes rank-3 weights")
        if not all(isinstance(d, int) for d in w.shape):
            raise Unsupported(f"weights {w.type_text()} with symbolic dims")
        # [N, C, L] as [N, C, 1, L], the kernel [O, C/g, K] as [O, C/g, 1, K].
        x4 = [x.shape[0], x.shape[1], 1, x.shape[2]]
        x = n.prog.define(Call("reshape", [n.operand(x), Dims(x4)]), x.dtype, x4,
                          n.hint() + "_in")
        w4 = [w.shape[0], w.shape[1], 1, w.shape[2]]
        if w.is_const() and not is_symbolic(w.const):
            w = n.prog.constant(np.ascontiguousarray(w.const.reshape(w4)), w.dtype, w.hint)
        else:
            w = n.prog.define(Call("reshape", [n.operand(w), Dims(w4)]), w.dtype, w4,
                              n.hint() + "_w")
    _check_nchw(n, x)
    if w.rank != 4:
        raise ModelError(f"weights {w.type_text()}: a 2-D Conv takes rank-4 weights")
    o, i, kh, kw = w.shape
    if not all(isinstance(d, int) for d in (o, i, kh, kw)):
        raise Unsupported(f"weights {w.type_text()} with symbolic dims")
    group = int(n.attr("group", 1))
    kernel = _ints_attr(n, "kernel_shape", [kh, kw], 2, one_d)
    if kernel != [kh, kw]:
        raise ModelError(f"kernel_shape {kernel} differs from the weights' {[kh, kw]}")
    if group < 1 or o % group:
        raise ModelError(f"group {group} does not divide the {o} output channels")
    if symdim.as_dim(x.shape[1]).decide_eq(group * i) is False:
        raise ModelError(f"input channels {x.shape[1]} differ from group * weight in-channels "
                         f"{group} * {i}")
    if b is not None and b.shape != [o]:
        raise ModelError(f"bias {b.type_text()}: it must be [{o}]")
    win = _window(n, x, kernel, dilations_attr=True, one_d=one_d)
    shape = [x.shape[0], o] + win.out_dims(x.shape[2:])

    wv, bias = w, b
    fold = _foldable_bn(n, w.dtype, o) if not one_d and w.is_const() and \
        not is_symbolic(w.const) and \
        (b is None or (b.is_const() and not is_symbolic(b.const))) else None
    if fold is not None:
        bn, scale, shift, beta_hint = fold
        np_dtype = w.const.dtype
        folded_w = (w.const.astype(np.float64) * scale[:, None, None, None]).astype(np_dtype)
        b0 = b.const.astype(np.float64) if b is not None else np.zeros(o)
        folded_b = (b0 * scale + shift).astype(np_dtype)
        wv = n.prog.constant(folded_w, w.dtype, w.hint)
        bias = n.prog.constant(folded_b, w.dtype, b.hint if b is not None else beta_hint)

    # An exporter that folded the BatchNormalization itself leaves weights named
    # `onnx::Conv_193`: they are named after the Conv's module (`layer1_0_conv1_weight`).
    path = n.module_path() or n.hint()
    if generic_name(wv.hint):
        wv.hint = f"{path}_weight"
    if bias is not None and generic_name(bias.hint):
        bias.hint = f"{path}_bias"

    src = n.operand(x)
    kw: list = []
    if win.symmetric():
        if any(p for p, _ in win.pads):
            kw.append(("padding", _pair([p for p, _ in win.pads])))
    else:
        src = _explicit_pad(n, src, win)
    if win.strides != [1, 1]:
        kw.insert(0, ("stride", _pair(win.strides)))
    if win.dilations != [1, 1]:
        kw.append(("dilation", _pair(win.dilations)))
    if group != 1:
        kw.append(("groups", Raw(str(group))))
    e: Expr = Call("conv2d", [src, n.operand(wv)], kw)
    if bias is not None:
        if bias.is_const() and not is_symbolic(bias.const):
            e = Bin("+", e, n.operand_in(_channel_const(n, bias.const, bias.dtype, 4, bias.hint),
                                         [shape], shape))
        else:
            e = Bin("+", e, Call("reshape", [n.operand(bias), Dims([o, 1, 1])]))
    if one_d:
        shape = [shape[0], o, shape[3]]
        e = Call("reshape", [e, Dims(shape)])
    v = n.define(e, x_in.dtype, shape)
    if fold is not None:
        n.imp.folded[fold[0].output[0]] = v


# ---------------------------------------------------------------------------------------------
# BatchNormalization
# ---------------------------------------------------------------------------------------------

def _check_bn(n: Node) -> None:
    n.attr("momentum")
    if n.attr("training_mode", 0) != 0:
        raise Unsupported("training_mode=1 (batch statistics); only inference is supported")
    if n.used(1) or n.used(2):
        raise Unsupported("its running mean or variance output is used (training only)")


@converter("BatchNormalization",
           note="inference: folded into the Conv before it when that Conv's weights and the "
                "statistics are constants; otherwise `x * s + t` per channel",
           precheck=_check_bn)
def _batch_norm(n: Node) -> None:
    eps = float(n.attr("epsilon", 1e-5))
    folded = n.imp.folded.get(n.node.output[0])
    if folded is not None:
        n.out(folded)
        return
    x = n.input(0)
    params = [n.input(i) for i in range(1, 5)]
    same_dtype(n, x, params[0], params[1])
    if x.dtype not in FLOATS:
        raise Unsupported(f"BatchNormalization of {x.dtype}")
    if x.rank < 2:
        raise ModelError(f"input {x.type_text()}: BatchNormalization needs rank >= 2")
    c = x.shape[1]
    for p in params:
        if p.rank != 1 or symdim.as_dim(p.shape[0]).decide_eq(c) is False:
            raise ModelError(f"parameter {p.type_text()} does not match the {c} channels")
    eps_text = finite_literal(eps, "f32", "epsilon")
    per_channel = [c] + [1] * (x.rank - 2)
    if all(p.is_const() and not is_symbolic(p.const) for p in params):
        gamma, beta, mean, var = (p.const.astype(np.float64) for p in params)
        scale = gamma / np.sqrt(var + eps)
        np_dtype = params[0].const.dtype
        s = _channel_const(n, scale.astype(np_dtype), x.dtype, x.rank, n.hint() + "_scale")
        t = _channel_const(n, (beta - mean * scale).astype(np_dtype), x.dtype, x.rank,
                           n.hint() + "_shift")
        e: Expr = Bin("*", n.operand(x), n.operand_in(s, [x.shape], x.shape))
        n.define(Bin("+", e, n.operand_in(t, [x.shape], x.shape)), x.dtype, x.shape)
        return

    def chan(v: Value) -> Expr:
        if v.is_const() and not is_symbolic(v.const):
            return n.operand(_channel_const(n, v.const, v.dtype, x.rank, v.hint))
        return Call("reshape", [n.operand(v), Dims(per_channel)]) if x.rank > 2 else n.operand(v)

    gamma, beta, mean, var = (chan(p) for p in params)
    norm = Bin("*", Bin("-", n.operand(x), mean), Call("rsqrt", [Bin("+", var, Lit(eps_text))]))
    n.define(Bin("+", Bin("*", norm, gamma), beta), x.dtype, x.shape)


# ---------------------------------------------------------------------------------------------
# Pools
# ---------------------------------------------------------------------------------------------

def _check_pool(n: Node) -> None:
    _check_auto_pad(n)
    if n.flag("ceil_mode", 0):
        raise Unsupported("ceil_mode=1: dsc's pools round the output size down")
    if n.op == "MaxPool":
        n.attr("storage_order")
        if n.used(1):
            raise Unsupported("its Indices output is used")
    dil = n.attr("dilations")
    if dil is not None and any(int(d) != 1 for d in dil):
        raise Unsupported(f"dilations {list(dil)}: dsc's pools have no dilation")


@converter("MaxPool", "AveragePool",
           note="2-D (NCHW): `max_pool2d(x, kernel, stride=, padding=)`, `avg_pool2d(..., "
                "count_include_pad=)`; pads below the kernel; ceil_mode=0, no dilation",
           precheck=_check_pool)
def _pool(n: Node) -> None:
    x = n.input(0)
    average = n.op == "AveragePool"
    if x.dtype not in (FLOATS if average else FLOATS + INTS):
        raise Unsupported(f"{n.op} of {x.dtype}")
    _check_nchw(n, x)
    kernel = _ints_attr(n, "kernel_shape", [], 2)
    include_pad = average and n.flag("count_include_pad", 0)
    win = _window(n, x, kernel, dilations_attr=False)
    src = n.operand(x)
    pads = [p for p, _ in win.pads]
    if not win.symmetric():
        if not include_pad:
            what = "avg_pool2d without count_include_pad" if average else "max_pool2d"
            raise Unsupported(f"pads {[b for b, _ in win.pads] + [e for _, e in win.pads]} "
                              f"differ between the two sides, which dsc's {what} cannot "
                              f"express (it pads both alike)")
        src = _explicit_pad(n, src, win)
        pads = [0, 0]
    if any(p >= k for p, k in zip(pads, kernel)):
        raise Unsupported(f"pads {pads} not below the kernel {kernel}: some windows would "
                          f"hold padding only")
    kw: list = []
    if win.strides != kernel:
        kw.append(("stride", _pair(win.strides)))
    if any(pads):
        kw.append(("padding", _pair(pads)))
    if include_pad and any(pads):
        kw.append(("count_include_pad", Raw("true")))
    shape = [x.shape[0], x.shape[1]] + win.out_dims(x.shape[2:])
    n.define(Call("avg_pool2d" if average else "max_pool2d", [src, _pair(kernel)], kw),
             x.dtype, shape)


@converter("GlobalAveragePool", "GlobalMaxPool",
           note="`mean(x, axis=[2, 3], keepdims=true)`, `max(...)`: over every spatial axis")
def _global_pool(n: Node) -> None:
    x = n.input(0)
    average = n.op == "GlobalAveragePool"
    if x.dtype not in (FLOATS if average else FLOATS + INTS):
        raise Unsupported(f"{n.op} of {x.dtype}")
    if x.rank < 3:
        raise ModelError(f"input {x.type_text()}: {n.op} needs rank >= 3")
    axes = list(range(2, x.rank))
    n.define(Call("mean" if average else "max", [n.operand(x)],
                  [("axis", Dims(axes) if len(axes) > 1 else Raw(str(axes[0]))),
                   ("keepdims", Raw("true"))]),
             x.dtype, list(x.shape[:2]) + [1] * len(axes))
