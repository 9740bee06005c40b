#!/usr/bin/env python3
"""Builds the small ONNX models that tests/importers/check_onnx_import.py imports, with
onnx.helper (no torch), at fixed seeds, into tests/importers/models/*.onnx.

    make_models.py            # (re)write the models
    make_models.py --check    # exit 1 unless the committed files are what this script writes

The models are written the way torch.onnx.export writes them (node names like
`/attn/MatMul`, shapes computed from Shape/Gather/Unsqueeze/Concat, transposed Linear weights
in Gemm, HF's extended attention mask), at hidden size 16 with 2 heads, so each file is a few
KB:

  mlp             Gemm(transB=1) + Relu + Gemm + Softmax, dynamic `batch` (opset 17; the golden)
  attention_op13  a BERT encoder layer: fused QKV MatMul, Split (sizes as an input), reshape to
                  heads from Shape/Gather/Concat, Transpose, scaled scores, the int mask made
                  additive (Unsqueeze, Cast, Sub, Mul), Softmax, Reshape [0, 0, -1], both layer
                  norms decomposed (ReduceMean axes attribute, Pow, Sqrt, Div), Erf GELU
  attention_op17  the same with LayerNormalization for the first norm
  attention_op21  the same with Split num_outputs, ReduceMean axes as an input, and Gelu
  embedding       word/position/type embeddings (Gather as take), position ids sliced to the
                  sequence length, ConstantOfShape, Range, LayerNormalization, a pooler on
                  token 0 (Gather of a scalar, Gemm, Tanh); two outputs (opset 18)
  ops             elementwise and layout ops: Where, Expand, Pow (2, 0.5, 3, general), Sqrt,
                  Tanh, Sigmoid, Exp, Neg, Abs, Max, ReduceSum/ReduceMean (keepdims 0 and 1),
                  Slice (negative, INT64_MAX, step 2, symbolic end), Concat, Softmax on a
                  middle axis, Squeeze/Unsqueeze, Transpose, Identity, Constant, Gemm with
                  alpha/beta; an input with an unnamed dynamic dim; three outputs (opset 18)
  ops_extra       Log, LogSoftmax, Gelu (tanh), Reciprocal, Min of three, Less, GreaterOrEqual,
                  LessOrEqual, And, Or, Not, Equal of ints, Cast of bool, Flatten, Size (in a
                  Reshape target), Mod and Shape(start=1) folded into Slice bounds, Dropout,
                  ReduceMax, ReduceMin (opset 20)
  arg_trig        Sin, Cos, ArgMax and ArgMin over the first, a middle and the last axis,
                  keepdims 0 and 1, the default axis 0, on floats and on integers full of ties
                  (opset 13)
  resnet          a ResNet-18-style network at 8 and 16 channels: conv7x7/2 + BatchNormalization
                  + Relu + MaxPool 3x3/2, a basic block, a strided block with a 1x1/2
                  downsample, GlobalAveragePool, Flatten, Gemm; every BatchNormalization
                  after a Conv (one Conv with a bias); dynamic batch, height and width (opset 17)
  conv_ops        a grouped dilated Conv with unequal pads, auto_pad SAME_UPPER, a
                  BatchNormalization with a run-time variance and one of constants not after a
                  Conv, AveragePool with and without count_include_pad (equal and unequal
                  pads), MaxPool 2x3 with strides [1, 2], GlobalMaxPool, GlobalAveragePool;
                  four outputs (opset 18)
  unsupported     TopK, CumSum, a Cast to uint8 and a LayerNormalization whose Mean output is
                  used: the importer must list all four and write nothing
  unsupported_conv  a 3-D Conv, a MaxPool with ceil_mode=1, an AveragePool with unequal pads
                  that does not count them, a BatchNormalization in training mode: all four
                  listed
  cycle           two Adds that read each other: the importer must say the graph has a cycle
"""

from __future__ import annotations

import argparse
import math
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # reported by ctest as a skip
    print(f"SKIP: {e.name or e} is not installed (tools/scripts/install_python_deps.sh --tests)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS_DIR = os.path.join(HERE, "models")
IR_VERSION = {13: 7, 17: 8, 18: 8, 20: 9, 21: 10}
INT64_MAX = 2**63 - 1


class Graph:
    """A graph under construction: nodes, initializers and a seeded generator."""

    def __init__(self, seed: int):
        self.nodes: list = []
        self.inits: list = []
        self.rng = np.random.default_rng(seed)
        self.counts: dict[str, int] = {}

    def init(self, name: str, array: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def weight(self, name: str, shape: tuple, kind: str = "matrix") -> str:
        if kind == "matrix":  # 1/sqrt(fan_in) keeps activations O(1)
            a = self.rng.standard_normal(shape) / math.sqrt(shape[0])
        elif kind == "linear":  # torch Linear: [out, in]
            a = self.rng.standard_normal(shape) / math.sqrt(shape[1])
        elif kind == "bias":
            a = 0.1 * self.rng.standard_normal(shape)
        elif kind == "gamma":
            a = 1.0 + 0.1 * self.rng.standard_normal(shape)
        else:
            a = self.rng.standard_normal(shape)
        return self.init(name, a.astype(np.float32))

    def ints(self, name: str, values: list[int]) -> str:
        return self.init(name, np.array(values, dtype=np.int64))

    def scalar(self, value, dtype=np.float32, scope: str = "") -> str:
        """A Constant node holding a scalar, as torch writes them."""
        return self.node("Constant", [], scope=scope,
                         value=numpy_helper.from_array(np.array(value, dtype=dtype)))

    def node(self, op: str, inputs: list[str], scope: str = "", outputs: int = 1,
             out_names: list[str] | None = None, **attrs):
        """Adds `scope/Op` (numbered as torch does: Op, Op_1, ...); returns its output name(s)."""
        key = f"{scope}/{op}"
        k = self.counts.get(key, 0)
        self.counts[key] = k + 1
        name = f"{scope}/{op}" + (f"_{k}" if k else "")
        outs = out_names or [f"{name}_output_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0] if outputs == 1 and not out_names else outs

    def model(self, name: str, opset: int, inputs: list, outputs: list) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, inputs, outputs, initializer=self.inits)
        m = helper.make_model(graph, producer_name="dsc tests/importers/make_models.py",
                              opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = IR_VERSION[opset]
        return m


def tensor(name: str, elem, dims: list) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, dims)


# ---------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------

def mlp() -> onnx.ModelProto:
    g = Graph(seed=1)
    w1 = g.weight("fc1.weight", (64, 32), "linear")
    b1 = g.weight("fc1.bias", (64,), "bias")
    w2 = g.weight("fc2.weight", (10, 64), "linear")
    b2 = g.weight("fc2.bias", (10,), "bias")
    h = g.node("Gemm", ["x", w1, b1], scope="/fc1", alpha=1.0, beta=1.0, transB=1)
    h = g.node("Relu", [h], scope="/act")
    h = g.node("Gemm", [h, w2, b2], scope="/fc2", alpha=1.0, beta=1.0, transB=1)
    g.node("Softmax", [h], scope="/softmax", out_names=["probs"], axis=1)
    return g.model("mlp", 17, [tensor("x", TensorProto.FLOAT, ["batch", 32])],
                   [tensor("probs", TensorProto.FLOAT, ["batch", 10])])


def _layer_norm_decomposed(g: Graph, x: str, gamma: str, beta: str, opset: int,
                           scope: str) -> str:
    """x - mean over the last axis, / sqrt(mean of its square + eps), * gamma + beta."""
    def mean(v: str) -> str:
        if opset >= 18:
            return g.node("ReduceMean", [v, g.ints(f"{scope}.axes{len(g.inits)}", [-1])],
                          scope=scope, keepdims=1)
        return g.node("ReduceMean", [v], scope=scope, axes=[-1], keepdims=1)
    mu = mean(x)
    c = g.node("Sub", [x, mu], scope=scope)
    var = mean(g.node("Pow", [c, g.scalar(2.0, scope=scope)], scope=scope))
    sd = g.node("Sqrt", [g.node("Add", [var, g.scalar(1e-12, scope=scope)], scope=scope)],
                scope=scope)
    y = g.node("Div", [c, sd], scope=scope)
    return g.node("Add", [g.node("Mul", [y, gamma], scope=scope), beta], scope=scope)


def attention(opset: int) -> onnx.ModelProto:
    hidden, heads, ffn = 16, 2, 32
    hd = hidden // heads
    g = Graph(seed=100 + opset)
    w_qkv = g.weight("attn.qkv.weight", (hidden, 3 * hidden))
    b_qkv = g.weight("attn.qkv.bias", (3 * hidden,), "bias")
    w_o = g.weight("attn.out.weight", (hidden, hidden))
    b_o = g.weight("attn.out.bias", (hidden,), "bias")
    g1 = g.weight("ln1.weight", (hidden,), "gamma")
    e1 = g.weight("ln1.bias", (hidden,), "bias")
    w1 = g.weight("ffn.fc1.weight", (hidden, ffn))
    b1 = g.weight("ffn.fc1.bias", (ffn,), "bias")
    w2 = g.weight("ffn.fc2.weight", (ffn, hidden))
    b2 = g.weight("ffn.fc2.bias", (hidden,), "bias")
    g2 = g.weight("ln2.weight", (hidden,), "gamma")
    e2 = g.weight("ln2.bias", (hidden,), "bias")

    def unsqueeze(v: str, axes: list[int], scope: str) -> str:
        return g.node("Unsqueeze", [v, g.ints(f"{scope}.axes{len(g.inits)}", axes)],
                      scope=scope)

    a = "/attn"
    qkv = g.node("Add", [g.node("MatMul", ["x", w_qkv], scope=a), b_qkv], scope=a)
    if opset >= 18:
        q, k, v = g.node("Split", [qkv], scope=a, outputs=3, axis=-1, num_outputs=3)
    else:
        q, k, v = g.node("Split", [qkv, g.ints("split_sizes", [hidden] * 3)], scope=a,
                         outputs=3, axis=-1)
    shape = g.node("Shape", ["x"], scope=a)
    b = g.node("Gather", [shape, g.scalar(0, np.int64, a)], scope=a, axis=0)
    s = g.node("Gather", [shape, g.scalar(1, np.int64, a)], scope=a, axis=0)
    heads_shape = g.node("Concat", [unsqueeze(b, [0], a), unsqueeze(s, [0], a),
                                    g.ints("heads", [heads]), g.ints("head_dim", [hd])],
                         scope=a, axis=0)
    qh = g.node("Transpose", [g.node("Reshape", [q, heads_shape], scope=a)], scope=a,
                perm=[0, 2, 1, 3])
    kh = g.node("Transpose", [g.node("Reshape", [k, heads_shape], scope=a)], scope=a,
                perm=[0, 2, 3, 1])
    vh = g.node("Transpose", [g.node("Reshape", [v, heads_shape], scope=a)], scope=a,
                perm=[0, 2, 1, 3])
    scores = g.node("Div", [g.node("MatMul", [qh, kh], scope=a),
                            g.scalar(math.sqrt(hd), scope=a)], scope=a)
    # HF's extended mask: (1 - mask[:, None, None, :]) * -10000
    m = "/mask"
    ext = g.node("Cast", [unsqueeze(unsqueeze("mask", [1], m), [2], m)], scope=m,
                 to=TensorProto.FLOAT)
    ext = g.node("Sub", [g.scalar(1.0, scope=m), ext], scope=m)
    ext = g.node("Mul", [ext, g.scalar(-10000.0, scope=m)], scope=m)
    p = g.node("Softmax", [g.node("Add", [scores, ext], scope=a)], scope=a, axis=-1)
    ctx = g.node("Transpose", [g.node("MatMul", [p, vh], scope=a)], scope=a, perm=[0, 2, 1, 3])
    ctx = g.node("Reshape", [ctx, g.ints("merge_heads", [0, 0, -1])], scope=a)
    out = g.node("Add", [g.node("MatMul", [ctx, w_o], scope="/attn/out"), b_o],
                 scope="/attn/out")
    h = g.node("Add", ["x", out], scope="/res1")
    if opset >= 17:
        h = g.node("LayerNormalization", [h, g1, e1], scope="/ln1", axis=-1, epsilon=1e-12)
    else:
        h = _layer_norm_decomposed(g, h, g1, e1, opset, "/ln1")
    f = "/ffn"
    t = g.node("Add", [g.node("MatMul", [h, w1], scope=f), b1], scope=f)
    if opset >= 20:
        t = g.node("Gelu", [t], scope=f)
    else:  # torch's exact GELU: x * 0.5 * (1 + erf(x / sqrt(2)))
        e = g.node("Erf", [g.node("Div", [t, g.scalar(1.4142135381698608, scope=f)],
                                  scope=f)], scope=f)
        e = g.node("Add", [e, g.scalar(1.0, scope=f)], scope=f)
        t = g.node("Mul", [g.node("Mul", [t, e], scope=f), g.scalar(0.5, scope=f)], scope=f)
    t = g.node("Add", [g.node("MatMul", [t, w2], scope=f), b2], scope=f)
    h2 = g.node("Add", [h, t], scope="/res2")
    y = _layer_norm_decomposed(g, h2, g2, e2, opset, "/ln2")
    g.nodes.append(helper.make_node("Identity", [y], ["y"], name="/out/Identity"))
    return g.model(f"attention_op{opset}", opset,
                   [tensor("x", TensorProto.FLOAT, ["batch", "seq", hidden]),
                    tensor("mask", TensorProto.INT64, ["batch", "seq"])],
                   [tensor("y", TensorProto.FLOAT, ["batch", "seq", hidden])])


def embedding() -> onnx.ModelProto:
    hidden, vocab, max_pos = 16, 40, 32
    g = Graph(seed=7)
    word = g.weight("embeddings.word_embeddings.weight", (vocab, hidden), "normal")
    pos = g.weight("embeddings.position_embeddings.weight", (max_pos, hidden), "normal")
    typ = g.weight("embeddings.token_type_embeddings.weight", (2, hidden), "normal")
    pos_ids = g.init("embeddings.position_ids", np.arange(max_pos, dtype=np.int64)[None, :])
    gamma = g.weight("embeddings.LayerNorm.weight", (hidden,), "gamma")
    beta = g.weight("embeddings.LayerNorm.bias", (hidden,), "bias")
    wp = g.weight("pooler.dense.weight", (hidden, hidden), "linear")
    bp = g.weight("pooler.dense.bias", (hidden,), "bias")
    e = "/embeddings"
    we = g.node("Gather", [word, "input_ids"], scope=e + "/word_embeddings", axis=0)
    shape = g.node("Shape", ["input_ids"], scope=e)
    seq = g.node("Gather", [shape, g.scalar(1, np.int64, e)], scope=e, axis=0)
    seq1 = g.node("Unsqueeze", [seq, g.ints("axes0", [0])], scope=e)
    ids = g.node("Slice", [pos_ids, g.ints("zero", [0]), seq1, g.ints("axis1", [1])], scope=e)
    pe = g.node("Gather", [pos, ids], scope=e + "/position_embeddings", axis=0)
    tt = g.node("ConstantOfShape", [shape], scope=e,
                value=numpy_helper.from_array(np.array([0], dtype=np.int64)))
    te = g.node("Gather", [typ, tt], scope=e + "/token_type_embeddings", axis=0)
    r = g.node("Range", [g.scalar(0, np.int64, e), seq, g.scalar(1, np.int64, e)], scope=e)
    r = g.node("Cast", [r], scope=e, to=TensorProto.FLOAT)
    r = g.node("Unsqueeze", [g.node("Mul", [r, g.scalar(0.01, scope=e)], scope=e),
                             g.ints("axes_last", [-1])], scope=e)
    x = g.node("Add", [g.node("Add", [g.node("Add", [we, pe], scope=e), te], scope=e), r],
               scope=e)
    g.node("LayerNormalization", [x, gamma, beta], scope=e + "/LayerNorm", axis=-1,
           epsilon=1e-12, out_names=["hidden"])
    first = g.node("Gather", ["hidden", g.scalar(0, np.int64, "/pooler")], scope="/pooler",
                   axis=1)
    pooled = g.node("Gemm", [first, wp, bp], scope="/pooler/dense", transB=1)
    g.node("Tanh", [pooled], scope="/pooler", out_names=["pooled"])
    return g.model("embedding", 18, [tensor("input_ids", TensorProto.INT64, ["batch", "seq"])],
                   [tensor("hidden", TensorProto.FLOAT, ["batch", "seq", hidden]),
                    tensor("pooled", TensorProto.FLOAT, ["batch", hidden])])


def ops() -> onnx.ModelProto:
    g = Graph(seed=11)
    wg = g.weight("head.weight", (4, 8), "linear")
    bg = g.weight("head.bias", (4,), "bias")
    s = "/ops"
    x = "x"
    f = lambda v: g.scalar(v, scope=s)  # noqa: E731
    a = g.node("Tanh", [x], scope=s)
    sig = g.node("Sigmoid", [x], scope=s)
    leaky = g.node("Where", [g.node("Greater", [x, f(0.0)], scope=s), x,
                             g.node("Mul", [x, f(0.1)], scope=s)], scope=s)
    sq = g.node("Sqrt", [g.node("Add", [g.node("Mul", [x, x], scope=s), f(1.0)], scope=s)],
                scope=s)
    pw = g.node("Pow", [g.node("Add", [g.node("Pow", [x, f(2.0)], scope=s), f(1.0)], scope=s),
                        f(0.5)], scope=s)
    p3 = g.node("Pow", [sig, f(3.0)], scope=s)
    pg = g.node("Pow", [g.node("Add", [g.node("Abs", [x], scope=s), f(1.0)], scope=s), f(1.7)],
                scope=s)
    rs = g.node("ReduceSum", [leaky, g.ints("axes2", [2])], scope=s, keepdims=1)
    ex = g.node("Expand", [rs, g.node("Shape", [x], scope=s)], scope=s)
    d = g.node("Sub", [x, ex], scope=s)
    sl1 = g.node("Slice", [x, g.ints("one", [1]), g.ints("int64_max", [INT64_MAX]),
                           g.ints("last", [2]), g.ints("two", [2])], scope=s)
    sl2 = g.node("Slice", [x, g.ints("minus4", [-4]), g.ints("big", [1000]),
                           g.ints("minus1", [-1])], scope=s)
    cat = g.node("Concat", [sl1, sl2], scope=s, axis=-1)
    sm = g.node("Softmax", [cat], scope=s, axis=1)
    c8 = g.node("Constant", [], scope=s, value=numpy_helper.from_array(
        np.linspace(0.5, 1.5, 8).astype(np.float32)))
    mc = g.node("Identity", [g.node("Mul", [sm, c8], scope=s)], scope=s)
    # x[:, :seq-1] and x[:, seq-1:] joined again along the sequence: symbolic slice bounds.
    seq = g.node("Unsqueeze", [g.node("Gather", [g.node("Shape", [x], scope=s),
                                                 g.scalar(1, np.int64, s)], scope=s, axis=0),
                               g.ints("axes0", [0])], scope=s)
    seq_m1 = g.node("Sub", [seq, g.ints("one_", [1])], scope=s)
    head = g.node("Slice", [x, g.ints("zero", [0]), seq_m1, g.ints("axis1", [1])], scope=s)
    tail = g.node("Slice", [x, seq_m1, g.ints("int64_max_", [INT64_MAX]), g.ints("axis1_", [1])],
                  scope=s)
    joined = g.node("Concat", [head, tail], scope=s, axis=1)
    e = g.node("Exp", [g.node("Neg", [g.node("Mul", [x, x], scope=s)], scope=s)], scope=s)
    terms = [g.node("Sub", [a, sig], scope=s), g.node("Div", [sq, pw], scope=s),
             g.node("Mul", [p3, pg], scope=s), d, mc, joined, e]
    out1 = terms[0]
    for t in terms[1:]:
        out1 = g.node("Add", [out1, t], scope=s)
    g.nodes.append(helper.make_node("Identity", [out1], ["out1"], name="/out1"))
    tr = g.node("Transpose", [x], scope=s, perm=[0, 2, 1])
    rm = g.node("ReduceMean", [tr, g.ints("axes_2", [2])], scope=s, keepdims=0)
    uq = g.node("Unsqueeze", [rm, g.ints("axes_1", [1])], scope=s)
    sqz = g.node("Squeeze", [uq, g.ints("axes_1b", [1])], scope=s)
    gm = g.node("Gemm", [sqz, wg, bg], scope="/head", alpha=0.5, beta=2.0, transB=1)
    g.node("Max", [gm, f(0.0)], scope=s, out_names=["out2"])
    z = g.node("Exp", [g.node("Neg", ["z"], scope=s)], scope=s)
    g.node("ReduceSum", [z, g.ints("axes_z", [1])], scope=s, keepdims=0, out_names=["out3"])
    return g.model("ops", 18,
                   [tensor("x", TensorProto.FLOAT, ["batch", "seq", 8]),
                    tensor("z", TensorProto.FLOAT, ["batch", None])],
                   [tensor("out1", TensorProto.FLOAT, ["batch", "seq", 8]),
                    tensor("out2", TensorProto.FLOAT, ["batch", 4]),
                    tensor("out3", TensorProto.FLOAT, ["batch"])])


def ops_extra() -> onnx.ModelProto:
    g = Graph(seed=12)
    s = "/extra"
    x, ids = "x", "ids"
    f = lambda v: g.scalar(v, scope=s)  # noqa: E731
    i = lambda v: g.scalar(v, np.int64, s)  # noqa: E731
    absx = g.node("Abs", [x], scope=s)
    lg = g.node("Log", [g.node("Add", [absx, f(1.0)], scope=s)], scope=s)
    ls = g.node("LogSoftmax", [x], scope=s, axis=-1)
    gt = g.node("Gelu", [x], scope=s, approximate="tanh")
    rc = g.node("Reciprocal", [g.node("Add", [absx, f(0.5)], scope=s)], scope=s)
    mn = g.node("Min", [x, lg, rc], scope=s)
    inside = g.node("And", [g.node("Less", [x, f(0.5)], scope=s),
                            g.node("GreaterOrEqual", [x, f(-0.5)], scope=s)], scope=s)
    pick = g.node("Or", [g.node("Not", [inside], scope=s),
                         g.node("Equal", [ids, i(3)], scope=s)], scope=s)
    # x[:, :k] and x[:, k:] joined again, k = 6 % 4 + 1 folded from Shape(x) with Mod.
    k = g.node("Add", [g.node("Mod", [g.node("Shape", [x], scope=s, start=1), g.ints("four", [4])],
                              scope=s), g.ints("one", [1])], scope=s)
    halves = g.node("Concat", [g.node("Slice", [x, g.ints("zero", [0]), k, g.ints("ax1", [1])],
                                      scope=s),
                               g.node("Slice", [x, k, g.ints("end", [6]), g.ints("ax1b", [1])],
                                      scope=s)], scope=s, axis=1)
    small = g.node("Cast", [g.node("LessOrEqual", [x, f(0.0)], scope=s)], scope=s,
                   to=TensorProto.FLOAT)
    chosen = g.node("Where", [pick, ls, gt], scope=s)
    flat = g.node("Flatten", [g.node("Unsqueeze", [x, g.ints("axes2", [2])], scope=s)],
                  scope=s, axis=1)
    # x reshaped to [Size(x)] and back to Shape(x): Size folds to batch*6.
    size1 = g.node("Unsqueeze", [g.node("Size", [x], scope=s), g.ints("axes0", [0])], scope=s)
    round_trip = g.node("Reshape", [g.node("Reshape", [x, size1], scope=s),
                                    g.node("Shape", [x], scope=s)], scope=s)
    drop = g.node("Dropout", [round_trip], scope=s)
    rmax = g.node("ReduceMax", [x, g.ints("axes1", [1])], scope=s, keepdims=1)
    terms = [chosen, mn, flat, rmax, drop, small, halves]
    out = terms[0]
    for t in terms[1:]:
        out = g.node("Add", [out, t], scope=s)
    g.nodes.append(helper.make_node("Identity", [out], ["out1"], name="/out1"))
    g.node("ReduceMin", [x, g.ints("axes1_", [1])], scope=s, keepdims=0, out_names=["out2"])
    return g.model("ops_extra", 20,
                   [tensor("x", TensorProto.FLOAT, ["batch", 6]),
                    tensor("ids", TensorProto.INT64, ["batch", 6])],
                   [tensor("out1", TensorProto.FLOAT, ["batch", 6]),
                    tensor("out2", TensorProto.FLOAT, ["batch"])])


def arg_trig() -> onnx.ModelProto:
    g = Graph(seed=13)
    s = "/argtrig"
    x, ids = "x", "ids"
    three = g.scalar(3.0, scope=s)
    trig = g.node("Mul", [g.node("Sin", [g.node("Mul", [x, three], scope=s)], scope=s),
                          g.node("Cos", [x], scope=s)], scope=s)
    g.nodes.append(helper.make_node("Identity", [trig], ["trig"], name="/trig"))
    g.node("ArgMax", [x], scope=s, axis=-1, keepdims=0, out_names=["last"])
    g.node("ArgMin", [trig], scope=s, axis=1, out_names=["middle"])
    g.node("ArgMax", [x], scope=s, select_last_index=0, out_names=["first"])
    g.node("ArgMin", [ids], scope=s, axis=1, keepdims=0, out_names=["ties"])
    return g.model("arg_trig", 13,
                   [tensor("x", TensorProto.FLOAT, ["batch", "seq", 5]),
                    tensor("ids", TensorProto.INT64, ["batch", "seq"])],
                   [tensor("trig", TensorProto.FLOAT, ["batch", "seq", 5]),
                    tensor("last", TensorProto.INT64, ["batch", "seq"]),
                    tensor("middle", TensorProto.INT64, ["batch", 1, 5]),
                    tensor("first", TensorProto.INT64, [1, "seq", 5]),
                    tensor("ties", TensorProto.INT64, ["batch"])])


def _scope(param: str) -> str:
    """torch's node scope of a module: `layer1.0.conv1` is `/layer1/layer1.0/conv1`."""
    parts = param.split(".")
    return "".join("/" + ".".join(parts[:i + 1]) if i == 1 else "/" + p
                   for i, p in enumerate(parts))


def _conv_bn(g: Graph, x: str, cin: int, cout: int, k: int, stride: int, conv: str, bn: str,
             bias: bool = False) -> str:
    """Conv (He-initialized, no bias, as torchvision's) then BatchNormalization with running
    statistics far from 0 and 1, so that a fold that drops one of them shows. `conv` and `bn`
    name the modules (`layer1.0.conv1`)."""
    w = g.init(f"{conv}.weight", (g.rng.standard_normal((cout, cin, k, k)) *
                                  math.sqrt(2.0 / (cin * k * k))).astype(np.float32))
    inputs = [x, w] + ([g.weight(f"{conv}.bias", (cout,), "bias")] if bias else [])
    h = g.node("Conv", inputs, scope=_scope(conv), kernel_shape=[k, k], strides=[stride, stride],
               pads=[k // 2] * 4, dilations=[1, 1], group=1)
    gamma = g.weight(f"{bn}.weight", (cout,), "gamma")
    beta = g.weight(f"{bn}.bias", (cout,), "bias")
    mean = g.init(f"{bn}.running_mean", (0.2 * g.rng.standard_normal(cout)).astype(np.float32))
    var = g.init(f"{bn}.running_var", g.rng.uniform(0.5, 2.0, cout).astype(np.float32))
    return g.node("BatchNormalization", [h, gamma, beta, mean, var], scope=_scope(bn),
                  epsilon=1e-5, momentum=0.9)


def _basic_block(g: Graph, x: str, cin: int, cout: int, stride: int, name: str) -> str:
    """torchvision's BasicBlock: conv3x3-bn-relu-conv3x3-bn, plus the input (through a strided
    1x1 conv-bn where the shape changes), then relu."""
    h = _conv_bn(g, x, cin, cout, 3, stride, f"{name}.conv1", f"{name}.bn1")
    h = g.node("Relu", [h], scope=_scope(name) + "/relu")
    h = _conv_bn(g, h, cout, cout, 3, 1, f"{name}.conv2", f"{name}.bn2")
    skip = x
    if stride != 1 or cin != cout:
        skip = _conv_bn(g, x, cin, cout, 1, stride, f"{name}.downsample.0",
                        f"{name}.downsample.1")
    return g.node("Relu", [g.node("Add", [h, skip], scope=_scope(name))],
                  scope=_scope(name) + "/relu")


def resnet() -> onnx.ModelProto:
    g = Graph(seed=18)
    h = _conv_bn(g, "input", 3, 8, 7, 2, "conv1", "bn1", bias=True)
    h = g.node("Relu", [h], scope="/relu")
    h = g.node("MaxPool", [h], scope="/maxpool", kernel_shape=[3, 3], strides=[2, 2],
               pads=[1, 1, 1, 1], ceil_mode=0, dilations=[1, 1])
    h = _basic_block(g, h, 8, 8, 1, "layer1.0")
    h = _basic_block(g, h, 8, 16, 2, "layer2.0")
    h = g.node("GlobalAveragePool", [h], scope="/avgpool")
    h = g.node("Flatten", [h], scope="", axis=1)
    w = g.weight("fc.weight", (10, 16), "linear")
    b = g.weight("fc.bias", (10,), "bias")
    g.node("Gemm", [h, w, b], scope="/fc", out_names=["logits"], alpha=1.0, beta=1.0, transB=1)
    return g.model("resnet", 17,
                   [tensor("input", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
                   [tensor("logits", TensorProto.FLOAT, ["batch", 10])])


def conv_ops() -> onnx.ModelProto:
    g = Graph(seed=19)
    s = "/conv"
    x = "x"
    # Grouped, dilated, unequal pads (an explicit pad), with a bias.
    wg = g.init("grouped.weight", (g.rng.standard_normal((6, 2, 3, 3)) / 4).astype(np.float32))
    bg = g.weight("grouped.bias", (6,), "bias")
    c1 = g.node("Conv", [x, wg, bg], scope=s, group=2, dilations=[1, 2], pads=[0, 2, 2, 2])
    # auto_pad SAME_UPPER at stride 1 (padding 1), no bias; the BatchNormalization after it
    # reads a run-time variance, so it stays unfolded, written out with rsqrt.
    ws = g.init("same.weight", (g.rng.standard_normal((4, 4, 3, 3)) / 6).astype(np.float32))
    c2 = g.node("Conv", [x, ws], scope=s, auto_pad="SAME_UPPER")
    var = g.node("Add", [g.node("Mul", ["v", "v"], scope=s), g.scalar(0.5, scope=s)], scope=s)
    bn2 = g.node("BatchNormalization", [c2, g.weight("bn2.weight", (4,), "gamma"),
                                        g.weight("bn2.bias", (4,), "bias"),
                                        g.init("bn2.mean", np.full(4, 0.25, np.float32)), var],
                 scope=s, epsilon=1e-3)
    # A BatchNormalization of constants after an Add: per-channel scale and shift.
    a = g.node("Add", [x, g.node("Sigmoid", [x], scope=s)], scope=s)
    bn3 = g.node("BatchNormalization", [a, g.weight("bn3.weight", (4,), "gamma"),
                                        g.weight("bn3.bias", (4,), "bias"),
                                        g.init("bn3.mean", np.linspace(-0.5, 0.5, 4)
                                               .astype(np.float32)),
                                        g.init("bn3.var", np.linspace(0.5, 2, 4)
                                               .astype(np.float32))], scope=s)
    # Pools: padding excluded from the average, padding counted (with unequal sides: an
    # explicit pad), a max over a 2x3 window with strides [1, 2], global max and average.
    ap1 = g.node("AveragePool", [bn3], scope=s, kernel_shape=[3, 3], strides=[2, 2],
                 pads=[1, 1, 1, 1])
    ap2 = g.node("AveragePool", [bn2], scope=s, kernel_shape=[2, 2], pads=[1, 0, 0, 1],
                 count_include_pad=1)
    ap3 = g.node("AveragePool", [x], scope=s, kernel_shape=[3, 2], pads=[1, 1, 1, 1],
                 count_include_pad=1)
    mp = g.node("MaxPool", [c1], scope=s, kernel_shape=[2, 3], strides=[1, 2],
                pads=[1, 1, 1, 1])
    gm = g.node("GlobalMaxPool", [mp], scope=s)
    ga = g.node("GlobalAveragePool", [ap2], scope=s)
    g.nodes.append(helper.make_node("Identity", [ap1], ["avg"], name="/out/avg"))
    g.nodes.append(helper.make_node("Identity", [mp], ["max"], name="/out/max"))
    g.nodes.append(helper.make_node("Identity", [ap3], ["avg_pad"], name="/out/avg_pad"))
    g.node("Add", [g.node("ReduceSum", [gm, g.ints("axes1", [1])], scope=s, keepdims=1), ga],
           scope=s, out_names=["pooled"])
    return g.model("conv_ops", 18,
                   [tensor("x", TensorProto.FLOAT, ["batch", 4, "height", "width"]),
                    tensor("v", TensorProto.FLOAT, [4])],
                   [tensor("avg", TensorProto.FLOAT, ["batch", 4, None, None]),
                    tensor("max", TensorProto.FLOAT, ["batch", 6, None, None]),
                    tensor("pooled", TensorProto.FLOAT, ["batch", 4, 1, 1]),
                    tensor("avg_pad", TensorProto.FLOAT, ["batch", 4, None, None])])


def index_ops() -> onnx.ModelProto:
    """The ops the dynamo exporter writes for transformers' models (issue 34): GatherND with
    computed indices (negatives among them) and with the `mask[batch_idx, kv_idx]` pattern (an
    arange per axis, expanded and concatenated), GatherElements, CumSum of floats and ints,
    IsNaN after a Sqrt of negatives, and a shape value used as data (the length times x)."""
    g = Graph(seed=14)
    s = "/index"
    x, y, ids, pos = "x", "y", "ids", "pos"
    i = lambda v: g.scalar(v, np.int64, s)  # noqa: E731
    # y * seq: the length read as data.
    seq = g.node("Shape", [y], scope=s, start=1, end=2)
    scaled = g.node("Mul", [y, g.node("Cast", [seq], scope=s, to=TensorProto.FLOAT)], scope=s)
    ge = g.node("GatherElements", [scaled, ids], scope=s, axis=1)
    g.nodes.append(helper.make_node("Identity", [ge], ["gathered"], name="/gathered"))
    g.node("GatherND", [x, pos], scope=s, out_names=["picked"])
    # x[arange(B)[:, None], arange(S)[None, :]] is x itself.
    b_len = g.node("Squeeze", [g.node("Shape", [x], scope=s, start=0, end=1)], scope=s)
    s_len = g.node("Squeeze", [g.node("Shape", [x], scope=s, start=1, end=2)], scope=s)
    b_idx = g.node("Unsqueeze", [g.node("Range", [i(0), b_len, i(1)], scope=s),
                                 g.ints("ax_1", [1])], scope=s)
    s_idx = g.node("Unsqueeze", [g.node("Range", [i(0), s_len, i(1)], scope=s),
                                 g.ints("ax_0", [0])], scope=s)
    both = g.node("Shape", [g.node("Max", [b_idx, s_idx], scope=s)], scope=s)
    pieces = [g.node("Unsqueeze", [g.node("Expand", [v, both], scope=s), g.ints(f"ax_m{k}", [-1])],
                     scope=s) for k, v in enumerate((b_idx, s_idx))]
    grid = g.node("Concat", pieces, scope=s, axis=-1)
    same = g.node("GatherND", [x, grid], scope=s)
    g.node("CumSum", [g.node("Add", [same, x], scope=s), g.ints("axis1", [1])], scope=s,
           out_names=["running"])
    g.node("CumSum", [ids, g.ints("axis_last", [-1])], scope=s, out_names=["running_ids"])
    root = g.node("Sqrt", [y], scope=s)
    g.node("Where", [g.node("IsNaN", [root], scope=s), g.scalar(0.0, scope=s), root], scope=s,
           out_names=["safe_sqrt"])
    return g.model("index_ops", 18,
                   [tensor(x, TensorProto.FLOAT, ["batch", "seq", 5]),
                    tensor(y, TensorProto.FLOAT, ["batch", "seq"]),
                    tensor(ids, TensorProto.INT64, ["batch", "seq"]),
                    tensor(pos, TensorProto.INT64, ["batch", "seq", 2])],
                   [tensor("gathered", TensorProto.FLOAT, ["batch", "seq"]),
                    tensor("picked", TensorProto.FLOAT, ["batch", "seq", 5]),
                    tensor("running", TensorProto.FLOAT, ["batch", "seq", 5]),
                    tensor("running_ids", TensorProto.INT64, ["batch", "seq"]),
                    tensor("safe_sqrt", TensorProto.FLOAT, ["batch", "seq"])])


def conv1d() -> onnx.ModelProto:
    """1-D Convs over [N, C, L], as Whisper's encoder has them: one with a bias and equal
    pads, one strided, dilated and grouped with unequal pads."""
    g = Graph(seed=15)
    s = "/conv1d"
    c1 = g.node("Conv", ["a", g.weight("conv1.weight", (6, 4, 3)), g.weight("conv1.bias", (6,),
                                                                               "bias")],
                scope=s, kernel_shape=[3], pads=[1, 1])
    g.node("Conv", [g.node("Relu", [c1], scope=s), g.weight("conv2.weight", (4, 3, 3))],
           scope=s, kernel_shape=[3], strides=[2], dilations=[2], pads=[2, 3], group=2,
           out_names=["out"])
    return g.model("conv1d", 17, [tensor("a", TensorProto.FLOAT, ["batch", 4, "length"])],
                   [tensor("out", TensorProto.FLOAT, ["batch", 4, None])])


def unsupported() -> onnx.ModelProto:
    g = Graph(seed=5)
    gamma = g.weight("ln.weight", (8,), "gamma")
    s = "/bad"
    h = g.node("Relu", ["x"], scope=s)
    vals, _ = g.node("TopK", [h, g.ints("k", [2])], scope=s, outputs=2, axis=-1)
    rd = g.node("Round", [h], scope=s)
    u8 = g.node("Cast", [rd], scope=s, to=TensorProto.UINT8)
    ln, mean = g.node("LayerNormalization", [h, gamma], scope=s, outputs=2, axis=-1)
    g.nodes.append(helper.make_node("Identity", [mean], ["ln_mean"], name="/bad/Identity"))
    return g.model("unsupported", 17, [tensor("x", TensorProto.FLOAT, ["batch", 8])],
                   [tensor(vals, TensorProto.FLOAT, ["batch", 2]),
                    tensor(u8, TensorProto.UINT8, ["batch", 8]),
                    tensor(ln, TensorProto.FLOAT, ["batch", 8]),
                    tensor("ln_mean", TensorProto.FLOAT, ["batch", 1])])


def unsupported_conv() -> onnx.ModelProto:
    g = Graph(seed=8)
    s = "/bad"
    w3 = g.weight("conv3d.weight", (2, 2, 1, 1, 1))
    c3 = g.node("Conv", ["v", w3], scope=s)
    mp = g.node("MaxPool", ["x"], scope=s, kernel_shape=[2, 2], ceil_mode=1)
    ap = g.node("AveragePool", ["x"], scope=s, kernel_shape=[3, 3], pads=[0, 0, 1, 1])
    bn = g.node("BatchNormalization", ["x"] + [g.weight(f"bn.{p}", (2,), "gamma")
                                               for p in ("weight", "bias", "mean", "var")],
                scope=s, training_mode=1, outputs=3)[0]
    return g.model("unsupported_conv", 17,
                   [tensor("x", TensorProto.FLOAT, ["batch", 2, 8, 8]),
                    tensor("v", TensorProto.FLOAT, ["batch", 2, 3, 3, 3])],
                   [tensor(c3, TensorProto.FLOAT, ["batch", 2, 3, 3, 3]),
                    tensor(mp, TensorProto.FLOAT, ["batch", 2, 4, 4]),
                    tensor(ap, TensorProto.FLOAT, ["batch", 2, 7, 7]),
                    tensor(bn, TensorProto.FLOAT, ["batch", 2, 8, 8])])


def cycle() -> onnx.ModelProto:
    g = Graph(seed=6)
    g.nodes.append(helper.make_node("Add", ["x", "b"], ["a"], name="/cycle/Add"))
    g.nodes.append(helper.make_node("Add", ["a", "x"], ["b"], name="/cycle/Add_1"))
    return g.model("cycle", 17, [tensor("x", TensorProto.FLOAT, ["batch", 8])],
                   [tensor("a", TensorProto.FLOAT, ["batch", 8])])


MODELS = {
    "mlp": mlp,
    "attention_op13": lambda: attention(13),
    "attention_op17": lambda: attention(17),
    "attention_op21": lambda: attention(21),
    "embedding": embedding,
    "ops": ops,
    "ops_extra": ops_extra,
    "arg_trig": arg_trig,
    "resnet": resnet,
    "conv_ops": conv_ops,
    "index_ops": index_ops,
    "conv1d": conv1d,
    "unsupported": unsupported,
    "unsupported_conv": unsupported_conv,
    "cycle": cycle,
}


def build_all() -> dict[str, bytes]:
    return {f"{name}.onnx": make().SerializeToString(deterministic=True)
            for name, make in MODELS.items()}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="compare the committed models with what this script writes")
    ap.add_argument("--out", default=MODELS_DIR, help=f"directory (default {MODELS_DIR})")
    ns = ap.parse_args(argv)
    files = build_all()
    if ns.check:
        bad = []
        for name, data in files.items():
            path = os.path.join(ns.out, name)
            try:
                with open(path, "rb") as f:
                    ok = f.read() == data
            except OSError:
                ok = False
            if not ok:
                bad.append(name)
        extra = sorted(set(n for n in os.listdir(ns.out) if n.endswith(".onnx")) - set(files)) \
            if os.path.isdir(ns.out) else []
        for name in bad:
            print(f"FAIL {name}: differs from what make_models.py writes (rerun it and commit)")
        for name in extra:
            print(f"FAIL {name}: not written by make_models.py (remove it)")
        passed = len(files) - len(bad)
        print(f"{passed} passed, {len(bad) + len(extra)} failed")
        return 1 if bad or extra else 0
    os.makedirs(ns.out, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(ns.out, name), "wb") as f:
            f.write(data)
        print(f"wrote {os.path.join(ns.out, name)} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
