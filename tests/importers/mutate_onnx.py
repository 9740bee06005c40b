#!/usr/bin/env python3
"""Mutation test of importers/onnx2dsc.py (issue 15): malformed and mutated ONNX files may
only end in a clean error or a correct model.

    mutate_onnx.py --dscc build/tools/dscc/dscc [--seed N] [--count N | --seconds S]
                   [--index I] [--keep-failures DIR] [-v]

The seeds are the committed models of tests/importers/models/ (make_models.py); the three
broken ones (unsupported, unsupported_conv, cycle) are used only for byte-level mutants. Mutant
I of seed N is a pure function of (N, I), so `--seed N --index I` rebuilds it alone. Each
mutant is one of:

  bytes      1 to 3 of: truncation at a random point, random bytes overwritten, bytes
             inserted, a range deleted, a chunk duplicated elsewhere;
  structure  1 or 2 edits of the parsed protobuf: an op_type changed (to a similar op, any
             supported op or an unsupported one), a node deleted (its output left dangling or
             bypassed), a node input rewired (to another value, a later one for a cycle, the
             node's own output, a dangling name, or ""), an attribute changed, deleted, added
             or given the wrong type (axis out of range, perm of the wrong length, negative
             values), an initializer's dims, dtype or data length changed, a graph input's
             dims changed (0, negative, dim_param renamed or cleared, a dim added or dropped)
             or its element type, the opset changed (7, 12, 13..21, 22, 99, none), an output
             removed, added or renamed, a node duplicated.

Each mutant is written to a file and imported by `python3 importers/onnx2dsc.py MUTANT.onnx -o
OUT` (a subprocess, with a timeout). The outcomes:

  clean error    exit 1; stderr's first line starts with "onnx2dsc: error: " and any further
                 lines are the indented list of unsupported nodes; no Python traceback, no
                 "internal error" (an exception inside the importer is a bug); OUT holds no file.
  correct model  exit 0 and exactly OUT/NAME.dsc and OUT/NAME.safetensors written; then inputs
                 are made from the graph inputs' shapes (each dim_param, and each unnamed or
                 negative dim, a value in {2, 3}; floats normal, integers in {0, 1}, bools
                 random), ONNX Runtime (CPU, one thread, in a forked child) runs the mutant, and
                     dscc run OUT/NAME.dsc --weights OUT/NAME.safetensors --input ... --output=R
                 runs the import on the same inputs:
                   - ORT runs it: dscc must exit 0 and every output must match ORT's by the
                     tolerance of check_onnx_import.py (its `compare`, imported); an element
                     that is NaN or infinite in ORT's result must be the same in dsc's, the
                     others are compared. A clean dsc error here is a failure too: the importer
                     wrote a model that does not run although ONNX Runtime runs the mutant.
                     On a mismatch, onnx.reference gives a second opinion: matching it is
                     enough, and when it differs from ORT as well the mutant is ill-conditioned
                     (a mutated layer norm whose variance cancels to about 0 under a sqrt) and
                     only the outputs' number, shapes and dtypes are checked.
                   - ORT rejects it (at load or at run): the rule chosen is that dsc must reject
                     it too, with a clean error (exit 1, a message, no signal or sanitizer
                     text), OR produce the same outputs as the ONNX reference implementation
                     (onnx.reference.ReferenceEvaluator, also in a forked child) on the same
                     inputs. When that rejects the model too, a dsc run that succeeds is a
                     failure: the importer accepted a model neither ONNX implementation accepts.
                 Either way a dscc crash (a signal, an exit code other than 0 or 1, sanitizer
                 or assertion text, a timeout) is a failure.
  failure        anything else: a traceback, an internal error, exit 0 with a file missing or
                 an extra file, exit 1 leaving files, a hang past --timeout, a mismatch.

Each failure prints its mutation, saves the mutant (and a .txt with the details) under
--keep-failures (default: a temporary directory, printed) and a command that reproduces it.
The last line is `N mutants: X clean errors, Y correct models, Z failures`; the exit status is
1 when Z > 0, and 77 (a skip for ctest) when onnx, onnxruntime, safetensors or numpy is missing.
The default --count is sized for about a minute on a busy 2-core machine; --seconds S runs
mutants until S seconds have passed, for longer local runs.
"""

from __future__ import annotations

import argparse
import copy
import math
import multiprocessing
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    import safetensors  # noqa: F401 - the importer needs it
    from onnx import TensorProto, helper
except ImportError as e:
    print(f"SKIP: {e.name or e} is not installed: run tools/scripts/install_python_deps.sh --tests")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_onnx_import import IMPORTER, MODELS_DIR, SOURCE_DIR  # noqa: E402
from harness import Run, compare_nonfinite, crash_reason, first_line  # noqa: E402

sys.path.insert(0, os.path.join(SOURCE_DIR, "importers"))
from dscimport.onnx_import import supported_ops  # noqa: E402

VALID_SEEDS = ["mlp", "attention_op13", "attention_op17", "attention_op21", "embedding", "ops",
               "ops_extra", "resnet", "conv_ops", "index_ops", "conv1d"]
BROKEN_SEEDS = ["unsupported", "unsupported_conv", "cycle"]  # byte-level mutants only
DEFAULT_SEED = 20270115
DEFAULT_COUNT = 50
MEMORY_LIMIT = 6 << 30  # address space of every child: a mutant must not take the machine
PREFIX = "onnx2dsc: error: "

UNARY_OPS = ["Sqrt", "Exp", "Log", "Tanh", "Erf", "Sigmoid", "Abs", "Relu", "Neg", "Reciprocal",
             "Not", "Gelu", "Identity", "Dropout", "Softmax", "LogSoftmax", "Cast", "Shape",
             "Size", "Flatten", "Transpose", "IsNaN"]
BINARY_OPS = ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Equal", "Less", "Greater",
              "LessOrEqual", "GreaterOrEqual", "And", "Or", "Mod", "MatMul", "Where"]
SHAPE_OPS = ["Reshape", "Expand", "Unsqueeze", "Squeeze", "Gather", "Split", "Concat", "Slice",
             "Range", "ConstantOfShape", "Tile", "GatherElements", "GatherND", "CumSum"]
REDUCE_OPS = ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ArgMax"]
WINDOW_OPS = ["Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
              "BatchNormalization", "ConvTranspose", "LpPool"]
UNSUPPORTED_OPS = ["TopK", "Round", "ConvTranspose", "If", "Trilu", "NoSuchOp", "Einsum",
                   "NonZero"]
ATTR_NAMES = ["axis", "axes", "perm", "keepdims", "to", "alpha", "beta", "transA", "transB",
              "epsilon", "allowzero", "num_outputs", "noop_with_empty_axes", "start", "end",
              "approximate", "fmod", "value", "stash_type", "seed", "kernel_shape", "strides",
              "pads", "dilations", "group", "auto_pad", "ceil_mode", "count_include_pad",
              "storage_order", "momentum", "training_mode", "bogus"]
DTYPES = [TensorProto.DOUBLE, TensorProto.INT64, TensorProto.INT32, TensorProto.FLOAT16,
          TensorProto.UINT8, TensorProto.BFLOAT16, TensorProto.BOOL, TensorProto.STRING,
          TensorProto.INT8, TensorProto.FLOAT, 0, 99]


# ---------------------------------------------------------------------------------------------
# Mutations
# ---------------------------------------------------------------------------------------------

class Skip(Exception):
    """This mutation does not apply to this model (try another)."""


def mutate_bytes(rng: random.Random, data: bytes) -> tuple[bytes, list[str]]:
    b = bytearray(data)
    done = []
    # Most edits break the protobuf's framing; overwritten bytes often land in weights or
    # names and leave a readable model, so they come more often.
    for _ in range(rng.choices([1, 2, 3], [6, 3, 1])[0]):
        kind = rng.choices(["truncate", "overwrite", "insert", "delete", "duplicate"],
                           [1, 4, 1, 1, 1])[0]
        n = len(b)
        if kind == "truncate":
            at = rng.randrange(0, max(n, 1))
            del b[at:]
            done.append(f"truncated to {at} bytes")
        elif kind == "overwrite" and n:
            at = [rng.randrange(n) for _ in range(rng.randint(1, 8))]
            for i in at:
                b[i] = rng.randrange(256)
            done.append(f"bytes overwritten at {sorted(at)}")
        elif kind == "insert":
            at = rng.randrange(n + 1)
            k = rng.randint(1, 16)
            b[at:at] = bytes(rng.randrange(256) for _ in range(k))
            done.append(f"{k} random bytes inserted at {at}")
        elif kind == "delete" and n:
            at = rng.randrange(n)
            k = rng.randint(1, 64)
            del b[at:at + k]
            done.append(f"bytes {at}..{at + k} deleted")
        elif kind == "duplicate" and n:
            a = rng.randrange(n)
            k = rng.randint(1, 256)
            to = rng.randrange(n + 1)
            b[to:to] = b[a:a + k]
            done.append(f"bytes {a}..{a + k} copied to {to}")
    return bytes(b), done


def value_names(g) -> list[str]:
    names = [i.name for i in g.input] + [t.name for t in g.initializer]
    for nd in g.node:
        names += [o for o in nd.output if o]
    return list(dict.fromkeys(names))


def pick_node(rng: random.Random, g, pred=None):
    idx = [i for i, nd in enumerate(g.node) if pred is None or pred(nd)]
    if not idx:
        raise Skip
    i = rng.choice(idx)
    return i, g.node[i]


def node_label(i: int, nd) -> str:
    return f"node #{i} '{nd.name or nd.op_type}' ({nd.op_type})"


def m_op_type(rng, m) -> str:
    g = m.graph
    i, nd = pick_node(rng, g, lambda nd: nd.op_type != "Constant" or rng.random() < 0.2)
    old = nd.op_type
    r = rng.random()
    if r < 0.5:
        group = next((grp for grp in (UNARY_OPS, BINARY_OPS, SHAPE_OPS, REDUCE_OPS, WINDOW_OPS)
                      if old in grp), BINARY_OPS)
        new = rng.choice(group)
    elif r < 0.85:
        new = rng.choice(supported_ops())
    else:
        new = rng.choice(UNSUPPORTED_OPS)
    nd.op_type = new
    extra = ""
    if rng.random() < 0.5:
        del nd.attribute[:]
        extra = ", attributes dropped"
    return f"{node_label(i, nd)}: op_type {old} -> {new}{extra}"


def m_delete_node(rng, m) -> str:
    g = m.graph
    i, nd = pick_node(rng, g)
    label = node_label(i, nd)
    if rng.random() < 0.5 and nd.input and nd.output:
        src, dst = nd.input[0], nd.output[0]
        for other in g.node:
            for k, x in enumerate(other.input):
                if x == dst:
                    other.input[k] = src
        for o in g.output:
            if o.name == dst:
                o.name = src
        del g.node[i]
        return f"{label} deleted, its readers rewired to its input '{src}'"
    del g.node[i]
    return f"{label} deleted (its outputs dangle)"


def m_rewire(rng, m) -> str:
    g = m.graph
    i, nd = pick_node(rng, g, lambda nd: len(nd.input) > 0)
    k = rng.randrange(len(nd.input))
    old = nd.input[k]
    r = rng.random()
    later = [o for nd2 in g.node[i + 1:] for o in nd2.output if o]
    if r < 0.45:
        new = rng.choice(value_names(g))
    elif r < 0.65 and later:
        new = rng.choice(later)
    elif r < 0.75 and nd.output:
        new = nd.output[0]
    elif r < 0.9:
        new = "no_such_value"
    else:
        new = ""
    nd.input[k] = new
    return f"{node_label(i, nd)}: input {k} '{old}' -> '{new}'"


def random_attr_value(rng):
    return rng.choice([rng.choice([-99, -5, -2, -1, 0, 1, 2, 3, 4, 7, 99, 1 << 40]),
                       rng.choice([0.0, -1.0, 1.5, 1e-30, 1e30, float("nan"), float("inf")]),
                       rng.choice(["bogus", "", "tanh", "none"]),
                       [rng.randint(-4, 4) for _ in range(rng.randint(1, 5))],
                       [0.5, 1.5],
                       helper.make_tensor("t", rng.choice([TensorProto.FLOAT, TensorProto.INT64,
                                                           TensorProto.UINT8]), [1], [1])])


def short(v) -> str:
    if isinstance(v, TensorProto):
        return f"tensor({TensorProto.DataType.Name(v.data_type)}, dims {list(v.dims)})"
    return repr(v)


def m_attribute(rng, m) -> str:
    g = m.graph
    r = rng.random()
    if r < 0.2:  # add
        i, nd = pick_node(rng, g)
        name = rng.choice(ATTR_NAMES)
        v = random_attr_value(rng)
        for k, a in enumerate(nd.attribute):
            if a.name == name:
                del nd.attribute[k]
                break
        nd.attribute.append(helper.make_attribute(name, v))
        return f"{node_label(i, nd)}: attribute {name}={short(v)} added"
    i, nd = pick_node(rng, g, lambda nd: len(nd.attribute) > 0)
    k = rng.randrange(len(nd.attribute))
    a = nd.attribute[k]
    label = f"{node_label(i, nd)}: attribute '{a.name}'"
    if r < 0.35:
        del nd.attribute[k]
        return f"{label} deleted"
    if r < 0.5:  # the wrong type
        v = random_attr_value(rng)
        nd.attribute[k].CopyFrom(helper.make_attribute(a.name, v))
        return f"{label} replaced by {short(v)} (maybe of another type)"
    A = onnx.AttributeProto
    if a.type == A.INT:
        old = a.i
        a.i = rng.choice([-99, -5, -3, -2, -1, 0, 1, 2, 3, 5, 99, old + 1, old - 1, -old])
        return f"{label} {old} -> {a.i}"
    if a.type == A.INTS:
        old = list(a.ints)
        new = list(old)
        how = rng.choice(["reverse", "drop", "append", "negate", "zero", "dup", "out of range"])
        if how == "reverse":
            new.reverse()
        elif how == "drop" and new:
            new.pop(rng.randrange(len(new)))
        elif how == "append":
            new.append(rng.choice([0, 1, 2, 3, -1, 5]))
        elif how == "negate" and new:
            j = rng.randrange(len(new))
            new[j] = -new[j] - rng.randint(0, 1)
        elif how == "zero":
            new = [0] * len(new)
        elif how == "dup" and new:
            new[rng.randrange(len(new))] = new[0]
        elif new:
            new[rng.randrange(len(new))] = rng.choice([7, -7, 99])
        del a.ints[:]
        a.ints.extend(new)
        return f"{label} {old} -> {new}"
    if a.type == A.FLOAT:
        old = a.f
        a.f = rng.choice([0.0, -1.0, 2.0, 1e-30, 1e30, float("nan"), float("inf")])
        return f"{label} {old} -> {a.f}"
    if a.type == A.STRING:
        old = a.s
        a.s = rng.choice([b"bogus", b"", b"tanh", b"none"])
        return f"{label} {old!r} -> {a.s!r}"
    if a.type == A.TENSOR:
        return f"{label}: " + mutate_tensor(rng, a.t)
    del nd.attribute[k]
    return f"{label} deleted"


def mutate_tensor(rng, t) -> str:
    what = rng.choice(["dims", "dtype", "data"])
    if what == "dims":
        old = list(t.dims)
        new = list(old)
        how = rng.choice(["append 1", "drop", "+1", "0", "negative", "swap", "flatten"])
        if how == "append 1":
            new.append(1)
        elif how == "drop" and new:
            new.pop()
        elif how == "+1" and new:
            new[rng.randrange(len(new))] += 1
        elif how == "0" and new:
            new[rng.randrange(len(new))] = 0
        elif how == "negative" and new:
            new[rng.randrange(len(new))] = -rng.randint(1, 3)
        elif how == "swap" and len(new) >= 2:
            new[0], new[-1] = new[-1], new[0]
        else:
            new = [math.prod(new)]
        del t.dims[:]
        t.dims.extend(new)
        return f"tensor '{t.name}' dims {old} -> {new}"
    if what == "dtype":
        old = t.data_type
        t.data_type = rng.choice(DTYPES)
        name = TensorProto.DataType.Name if t.data_type in TensorProto.DataType.values() else str
        return f"tensor '{t.name}' dtype {TensorProto.DataType.Name(old)} -> " \
               f"{name(t.data_type)}"
    if t.raw_data:
        old = len(t.raw_data)
        k = rng.choice([-old, -8, -4, -1, 1, 4, 8])
        t.raw_data = t.raw_data[:old + k] if k < 0 else t.raw_data + bytes(k)
        return f"tensor '{t.name}' raw_data {old} -> {len(t.raw_data)} bytes"
    for field in ("float_data", "int64_data", "int32_data", "double_data"):
        data = getattr(t, field)
        if len(data):
            old = len(data)
            if rng.random() < 0.5:
                del data[-1:]
            else:
                data.append(data[0])
            return f"tensor '{t.name}' {field} {old} -> {len(data)} values"
    t.raw_data = b"\x00" * rng.choice([1, 3, 4, 8])
    return f"tensor '{t.name}' given {len(t.raw_data)} bytes of raw_data"


def m_initializer(rng, m) -> str:
    g = m.graph
    if not g.initializer:
        raise Skip
    t = rng.choice(list(g.initializer))
    return "initializer " + mutate_tensor(rng, t)


def m_input(rng, m) -> str:
    g = m.graph
    inits = {t.name for t in g.initializer}
    ins = [i for i in g.input if i.name not in inits]
    if not ins:
        raise Skip
    inp = rng.choice(ins)
    tt = inp.type.tensor_type
    label = f"input '{inp.name}'"
    if rng.random() < 0.12:
        old = tt.elem_type
        tt.elem_type = rng.choice([TensorProto.DOUBLE, TensorProto.INT64, TensorProto.FLOAT16,
                                   TensorProto.UINT8, TensorProto.BOOL, TensorProto.INT32])
        return f"{label} elem_type {TensorProto.DataType.Name(old)} -> " \
               f"{TensorProto.DataType.Name(tt.elem_type)}"
    if rng.random() < 0.05:
        tt.ClearField("shape")
        return f"{label}: shape removed"
    dims = tt.shape.dim
    how = rng.choice(["0", "negative", "rename", "rename", "clear", "value", "add", "drop"])
    if how == "add" or not len(dims):
        d = dims.add()
        d.dim_value = rng.choice([1, 2, 3])
        return f"{label}: dim {d.dim_value} appended"
    j = rng.randrange(len(dims))
    d = dims[j]
    old = d.dim_param or d.dim_value
    if how == "0":
        d.dim_value = 0
    elif how == "negative":
        d.dim_value = rng.choice([-1, -2, -100])
    elif how == "rename":
        params = sorted({x.dim_param for i in ins for x in i.type.tensor_type.shape.dim
                         if x.dim_param})
        d.dim_param = rng.choice(params + ["renamed", "1 bad-name", "fn", "where", "x",
                                           "D0", "batch_size"])
    elif how == "clear":
        d.Clear()
    elif how == "value":
        d.dim_value = rng.choice([1, 2, 3, 7, 16, 33])
    else:
        del dims[j]
        return f"{label}: dim {j} ({old}) dropped"
    new = d.dim_param if d.HasField("dim_param") else \
        d.dim_value if d.HasField("dim_value") else "(unset)"
    return f"{label}: dim {j} {old!r} -> {new!r}"


def m_opset(rng, m) -> str:
    ops = [o for o in m.opset_import if o.domain in ("", "ai.onnx")]
    r = rng.random()
    if r < 0.1 and ops:
        m.opset_import.remove(ops[0])
        return "the default-domain opset import removed"
    if r < 0.15:
        m.ir_version = rng.choice([3, 6, 11, 99])
        return f"ir_version -> {m.ir_version}"
    if r < 0.2 and ops:
        ops[0].domain = "com.microsoft"
        return "the opset import's domain -> com.microsoft"
    if not ops:
        raise Skip
    old = ops[0].version
    ops[0].version = rng.choice([7, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 99, 0, -1])
    return f"opset {old} -> {ops[0].version}"


def m_outputs(rng, m) -> str:
    g = m.graph
    r = rng.random()
    if r < 0.45 and len(g.output):
        j = rng.randrange(len(g.output))
        name = g.output[j].name
        del g.output[j]
        return f"output {j} '{name}' removed ({len(g.output)} left)"
    if r < 0.8:
        outs = [o for nd in g.node for o in nd.output if o]
        if not outs:
            raise Skip
        name = rng.choice(outs)
        g.output.append(onnx.ValueInfoProto(name=name))
        return f"output '{name}' added (no type)"
    if not len(g.output):
        raise Skip
    j = rng.randrange(len(g.output))
    old = g.output[j].name
    g.output[j].name = rng.choice(["no_such_value"] + value_names(g))
    return f"output {j} '{old}' renamed to '{g.output[j].name}'"


def m_duplicate(rng, m) -> str:
    g = m.graph
    i, nd = pick_node(rng, g)
    g.node.insert(rng.randrange(len(g.node) + 1), copy.deepcopy(nd))
    return f"{node_label(i, nd)} duplicated (its outputs defined twice)"


STRUCTURE = [(m_op_type, 4), (m_delete_node, 2), (m_rewire, 3), (m_attribute, 5),
             (m_initializer, 3), (m_input, 3), (m_opset, 1), (m_outputs, 2), (m_duplicate, 1)]


def make_mutant(seed: int, index: int, originals: dict[str, bytes]) -> tuple[str, bytes, str]:
    """(seed model, the mutant's bytes, what was done): a function of (seed, index) alone."""
    rng = random.Random(f"mutate_onnx/{seed}/{index}")
    if rng.random() < 0.3:
        name = rng.choice(VALID_SEEDS + BROKEN_SEEDS)
        data, done = mutate_bytes(rng, originals[name])
        return name, data, "bytes: " + "; ".join(done)
    name = rng.choice(VALID_SEEDS)
    m = onnx.load_model_from_string(originals[name])
    done = []
    want = 1 if rng.random() < 0.7 else 2
    tries = 0
    while len(done) < want and tries < 20:
        tries += 1
        fn = rng.choices([f for f, _ in STRUCTURE], [w for _, w in STRUCTURE])[0]
        try:
            done.append(fn(rng, m))
        except (Skip, ValueError):  # ValueError: onnx.helper refused the value
            continue
    return name, m.SerializeToString(), "structure: " + "; ".join(done)


# ---------------------------------------------------------------------------------------------
# Running things
# ---------------------------------------------------------------------------------------------

def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(cmd: list[str], timeout: float) -> Run:
    """check_onnx_import.run, with the memory of the child limited."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                           timeout=timeout, stdin=subprocess.DEVNULL, preexec_fn=limit_memory)
        return Run(p.returncode, p.stdout, p.stderr)
    except subprocess.TimeoutExpired as e:
        def text(b):
            return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
        return Run(None, text(e.stdout), text(e.stderr))


def _child(conn, fn, args) -> None:
    try:
        limit_memory()
        conn.send(("ok", fn(*args)))
    except BaseException as e:  # noqa: BLE001 - everything goes back to the parent
        msg = str(e).strip().splitlines()
        conn.send(("error", f"{type(e).__name__}: {msg[0] if msg else ''}"))
    finally:
        conn.close()


def in_child(fn, args, timeout: float) -> tuple[str, object]:
    """fn(*args) in a forked child (ORT may crash or hang on a mutant): ("ok", result),
    ("error", message), or ("crash", how)."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child, args=(send, fn, args), daemon=True)
    p.start()
    send.close()
    try:
        if recv.poll(timeout):
            try:
                return recv.recv()
            except EOFError:
                pass
        else:
            return "crash", f"no answer in {timeout:.0f} s"
    finally:
        if p.is_alive():
            p.kill()
        p.join()
        recv.close()
    return "crash", f"exit code {p.exitcode}"


def ort_outputs(data: bytes, feeds: dict) -> list:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 4
    sess = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
    return [np.asarray(a) for a in sess.run(None, feeds)]


def reference_outputs(data: bytes, feeds: dict) -> list:
    from onnx.reference import ReferenceEvaluator
    m = onnx.load_model_from_string(data)
    return [np.asarray(a) for a in ReferenceEvaluator(m).run(None, feeds)]


NP_OF = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64,
         TensorProto.FLOAT16: np.float16, TensorProto.INT64: np.int64,
         TensorProto.INT32: np.int32, TensorProto.INT8: np.int8, TensorProto.BOOL: np.bool_}


def make_feeds(m, rng: np.random.Generator) -> dict[str, np.ndarray]:
    inits = {t.name for t in m.graph.initializer}
    sym: dict[str, int] = {}
    feeds = {}
    for inp in m.graph.input:
        if inp.name in inits:
            continue
        tt = inp.type.tensor_type
        shape = []
        for d in tt.shape.dim:
            if d.HasField("dim_value") and d.dim_value >= 0:
                shape.append(int(d.dim_value))
            elif d.dim_param:
                shape.append(sym.setdefault(d.dim_param, int(rng.integers(2, 4))))
            else:
                shape.append(int(rng.integers(2, 4)))
        t = NP_OF.get(tt.elem_type, np.float32)
        if t == np.bool_:
            a = rng.integers(0, 2, size=shape).astype(np.bool_)
        elif np.issubdtype(t, np.integer):
            a = rng.integers(0, 2, size=shape).astype(t)
        else:
            a = rng.standard_normal(shape).astype(t)
        feeds[inp.name] = a
    return feeds


def clean_dscc_error(r: Run) -> str | None:
    """None when dscc failed cleanly (exit 1 with an error message); else what is wrong."""
    crash = crash_reason(r)
    if crash:
        return crash
    if r.rc != 1:
        return f"exit code {r.rc}"
    if not re.search(r"(?i)\berror\b", r.stderr):
        return "exit 1 without an error message"
    return None


# ---------------------------------------------------------------------------------------------
# One mutant
# ---------------------------------------------------------------------------------------------

class Tester:
    def __init__(self, ns, work: str):
        self.ns = ns
        self.work = work
        self.originals = {}
        for name in VALID_SEEDS + BROKEN_SEEDS:
            with open(os.path.join(MODELS_DIR, f"{name}.onnx"), "rb") as f:
                self.originals[name] = f.read()
        self.counts = {"clean error": 0, "correct model": 0, "failure": 0}
        self.detail_counts: dict[str, int] = {}
        self.keep_dir: str | None = ns.keep_failures

    def test(self, index: int) -> None:
        seed_name, data, what = make_mutant(self.ns.seed, index, self.originals)
        d = os.path.join(self.work, str(index))
        os.makedirs(d)
        path = os.path.join(d, f"{seed_name}.onnx")
        with open(path, "wb") as f:
            f.write(data)
        try:
            kind, detail, log = self.classify(index, path, data, d)
        except Exception:  # noqa: BLE001 - a bug of this script: report it as a failure
            kind, detail, log = "failure", "the harness raised", traceback.format_exc()
        self.counts[kind] += 1
        key = f"{kind}: {detail.split(':')[0]}" if kind != "failure" else "failure"
        self.detail_counts[key] = self.detail_counts.get(key, 0) + 1
        line = f"#{index} {seed_name} {what}"
        if kind == "failure":
            print(f"FAIL {line}\n  {detail}", flush=True)
            self.save_failure(index, seed_name, data, what, detail, log)
        elif self.ns.verbose:
            print(f"ok   {line}\n  {kind}: {detail}", flush=True)
        shutil.rmtree(d, ignore_errors=True)

    def save_failure(self, index, seed_name, data, what, detail, log) -> None:
        if self.keep_dir is None:
            self.keep_dir = tempfile.mkdtemp(prefix="dsc-onnx-mutants-")
        os.makedirs(self.keep_dir, exist_ok=True)
        stem = os.path.join(self.keep_dir, f"mutant_{self.ns.seed}_{index}_{seed_name}")
        with open(stem + ".onnx", "wb") as f:
            f.write(data)
        repro = (f"{sys.executable} {os.path.relpath(__file__)} --dscc {self.ns.dscc} "
                 f"--seed {self.ns.seed} --index {index} -v")
        with open(stem + ".txt", "w") as f:
            f.write(f"seed model: {seed_name}\nmutation: {what}\nfailure: {detail}\n"
                    f"reproduce: {repro}\n\n{log}\n")
        print(f"  saved {stem}.onnx; reproduce: {repro}", flush=True)

    def classify(self, index: int, path: str, data: bytes, d: str) -> tuple[str, str, str]:
        out = os.path.join(d, "out")
        r = run([sys.executable, IMPORTER, path, "-o", out], self.ns.timeout)
        log = f"$ onnx2dsc.py {path} -o {out}\nexit {r.rc}\n--- stdout\n{r.stdout}" \
              f"--- stderr\n{r.stderr}"
        left = sorted(os.listdir(out)) if os.path.isdir(out) else []
        if r.rc is None:
            return "failure", f"onnx2dsc timed out after {self.ns.timeout:.0f} s", log
        if "Traceback (most recent call last)" in r.stderr + r.stdout:
            return "failure", f"onnx2dsc printed a traceback: {first_line(r.stderr)}", log
        if "internal error" in r.stderr:
            return "failure", f"onnx2dsc: {first_line(r.stderr)}", log
        if r.rc == 1:
            lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
            problems = []
            if not lines or not lines[0].startswith(PREFIX) or len(lines[0]) <= len(PREFIX):
                problems.append(f"stderr does not start with '{PREFIX}'")
            if any(not ln.startswith("  ") for ln in lines[1:]):
                problems.append("stderr has unindented lines after the first")
            if left:
                problems.append(f"files left in the output directory: {', '.join(left)}")
            if problems:
                return "failure", "onnx2dsc exit 1: " + "; ".join(problems), log
            return "clean error", f"import: {lines[0][len(PREFIX):][:150]}", log
        if r.rc != 0:
            return "failure", f"onnx2dsc exit code {r.rc}: {first_line(r.stderr)}", log
        stem = os.path.basename(path)[:-5]
        want = [f"{stem}.dsc", f"{stem}.safetensors"]
        if left != sorted(want):
            return "failure", f"onnx2dsc exit 0 but the output directory holds {left}", log
        return self.check_model(index, data, os.path.join(out, want[0]),
                                os.path.join(out, want[1]), d, log)

    def check_model(self, index, data, dsc, weights, d, log) -> tuple[str, str, str]:
        m = onnx.load_model_from_string(data)
        feeds = make_feeds(m, np.random.default_rng([self.ns.seed, index]))
        with open(dsc) as f:
            text = f.read()
        log += f"\n--- {os.path.basename(dsc)}\n{text}"
        renamed = dict(re.findall(r"^# ONNX input '(.*)' is the parameter (\w+)\.$", text,
                                  re.M))
        args = []
        for k, (name, a) in enumerate(feeds.items()):
            p = os.path.join(d, f"in{k}.npy")
            np.save(p, a, allow_pickle=False)
            args += ["--input", f"{renamed.get(name, name)}={p}"]
        res = os.path.join(d, "res")
        cmd = [self.ns.dscc, "run", dsc, "--weights", weights, *args, f"--output={res}",
               "--threads=1", "-q"]
        r = run(cmd, self.ns.timeout)
        log += f"\n$ {' '.join(cmd)}\nexit {r.rc}\n--- stdout\n{r.stdout}--- stderr\n{r.stderr}"
        log += "\ninputs: " + ", ".join(f"{k}: {a.dtype}{list(a.shape)}" for k, a in feeds.items())
        crash = crash_reason(r)
        if crash:
            return "failure", f"dscc run: {crash}: {first_line(r.stdout + r.stderr)}", log
        got = []
        if r.rc == 0:
            while os.path.isfile(os.path.join(res, f"output{len(got)}.npy")):
                got.append(np.load(os.path.join(res, f"output{len(got)}.npy")))
        status, ref = in_child(ort_outputs, (data, feeds), self.ns.timeout)
        if status == "ok":
            log += "\nONNX Runtime: ran"
            if r.rc != 0:
                return "failure", f"ONNX Runtime runs the mutant but dscc run exits {r.rc}: " \
                                  f"{first_line(r.stderr)}", log
            ok, detail = match(got, ref)
            if ok:
                return "correct model", f"matches ONNX Runtime ({plural(len(got), 'output')})", log
            # A second opinion: a mutant may be ill-conditioned (a variance that cancels to
            # about 0 under a sqrt), where two correct implementations differ too.
            status2, ref2 = in_child(reference_outputs, (data, feeds), self.ns.timeout)
            if status2 == "ok" and len(ref2) == len(ref):
                ref2 = [np.asarray(b).astype(a.dtype) for a, b in zip(ref, ref2)]
                if match(got, ref2)[0]:
                    return "correct model", "matches onnx.reference (not ONNX Runtime)", log
                if not match(ref2, ref)[0] and all(
                        a.shape == b.shape and a.dtype == b.dtype for a, b in zip(got, ref)):
                    return "correct model", "ill-conditioned: ONNX Runtime and onnx.reference " \
                                            "differ too; shapes and dtypes match", log
            log += f"\nonnx.reference: {status2}" + ("" if status2 == "ok" else f": {ref2}")
            return "failure", f"mismatch with ONNX Runtime: {detail}", log
        log += f"\nONNX Runtime: {status}: {ref}"
        if r.rc != 0:
            problem = clean_dscc_error(r)
            if problem:
                return "failure", f"dscc run: {problem}: {first_line(r.stderr)}", log
            return "clean error", f"dsc: {first_line(r.stderr)[:150]} (ORT: {str(ref)[:80]})", log
        status2, ref2 = in_child(reference_outputs, (data, feeds), self.ns.timeout)
        if status2 != "ok":
            log += f"\nonnx.reference: {status2}: {ref2}"
            return "failure", f"dscc runs a model that ONNX Runtime ({str(ref)[:200]}) and " \
                              f"onnx.reference ({str(ref2)[:200]}) reject", log
        ok, detail = match(got, ref2)
        if not ok:
            return "failure", f"ONNX Runtime rejects the mutant ({str(ref)[:200]}), dscc runs " \
                              f"it, and its outputs differ from onnx.reference's: {detail}", log
        return "correct model", f"matches onnx.reference ({plural(len(got), 'output')}; " \
                                f"ONNX Runtime rejects it)", log


def plural(k: int, word: str) -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


def match(got: list, ref: list) -> tuple[bool, str]:
    """Every output of dsc against the reference's, by compare_outputs."""
    if len(got) != len(ref):
        return False, f"dscc wrote {len(got)} outputs, the reference gives {len(ref)}"
    details, ok = [], True
    for i, (a, b) in enumerate(zip(got, ref)):
        good, detail = compare_nonfinite(a, np.asarray(b))
        ok &= good
        details.append(f"output{i}: {detail}")
    return ok, "; ".join(details)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dscc", required=True, help="the dscc binary")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--count", type=int, default=DEFAULT_COUNT,
                    help=f"how many mutants (default {DEFAULT_COUNT})")
    ap.add_argument("--seconds", type=float,
                    help="run mutants until this many seconds have passed (instead of --count)")
    ap.add_argument("--index", type=int, action="append",
                    help="run only mutant I (repeatable): reproduces a failure")
    ap.add_argument("--start", type=int, default=0, help="the first index (default 0)")
    ap.add_argument("--keep-failures", metavar="DIR",
                    help="save failing mutants here (default: a temporary directory)")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per command")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per mutant")
    ns = ap.parse_args(argv)
    if not (os.path.isfile(ns.dscc) and os.access(ns.dscc, os.X_OK)):
        print(f"mutate_onnx.py: {ns.dscc} is not an executable", file=sys.stderr)
        return 2

    work = tempfile.mkdtemp(prefix="dsc-onnx-mutate-")
    tester = Tester(ns, work)
    start = time.monotonic()
    try:
        if ns.index:
            for i in ns.index:
                tester.test(i)
        else:
            i = ns.start
            while (time.monotonic() - start < ns.seconds) if ns.seconds is not None \
                    else i < ns.start + ns.count:
                tester.test(i)
                i += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    c = tester.counts
    n = sum(c.values())
    for key, k in sorted(tester.detail_counts.items()):
        print(f"  {k:5d} {key}")
    if tester.keep_dir and c["failure"]:
        print(f"failing mutants saved in {tester.keep_dir}")
    print(f"seed {ns.seed}, {time.monotonic() - start:.0f} s")
    print(f"{n} mutants: {c['clean error']} clean errors, {c['correct model']} correct models, "
          f"{c['failure']} failures")
    return 1 if c["failure"] or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
