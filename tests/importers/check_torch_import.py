#!/usr/bin/env python3
"""Checks importers/torch2dsc.py (and its module, importers/dscimport/torch_import.py) on
small models built here with PyTorch at fixed seeds:

  numeric  an MLP, a BERT encoder layer, a GPT-2 block against a KV cache (the past length P
           is a symbol, 0 included), a LLaMA-style block (RMSNorm, rotary embedding, causal
           mask, SwiGLU), two models of other ops, one of sin, cos, argmax and argmin, and a
           small convolutional network
           (dynamic batch and image size) are exported with torch.export
           (named Dims), imported with `to_dsc` both as exported and after
           `run_decompositions()` (core ATen), built once with `dscc build`, and run with
           `dscc run` at five shapes or more (1 and primes); every output is compared with
           the PyTorch model's own on the same inputs;
  golden   the MLP saved as a .pt2 and imported by the command line (`--dim x.0=B`) must
           equal tests/importers/golden/torch_mlp.dsc exactly (--update-golden rewrites it)
           and pass `dscc check`; the module, fed the live ExportedProgram, must write the
           same function (the Dim names recovered from the export);
  errors   a program with unsupported ops (each listed with its op, node and source line),
           one that updates a buffer in place, a truncated .pt2, a missing file and a
           non-program passed to `to_dsc`: each fails cleanly and writes nothing.

    check_torch_import.py --dscc build/tools/dscc/dscc [--only numeric,golden,errors]

Prints one line per case (PASS or FAIL, then details), then `N passed, M failed`; exits 1 when
a case failed, 77 (a skip for ctest) when torch, numpy or safetensors is missing.

Tolerance, as check_onnx_import.py: every element must satisfy
    |dsc - torch| <= TOL * (rms(torch) + |torch|),  TOL = 1e-4.
Both compute in f32; they land near 1e-7 on these models, and a wrong op (a missing rotary
half, the wrong causal offset, tanh GELU for erf GELU) is far outside it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
import tempfile
import warnings
from dataclasses import dataclass
from typing import Callable

try:
    import numpy  # noqa: F401 - harness.py needs it
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.export import Dim, export
except ImportError as e:
    print(f"SKIP: {e.name or e} is not installed: run tools/scripts/install_python_deps.sh --tests")
    sys.exit(77)
if importlib.util.find_spec("safetensors") is None:  # the importer writes weights with it
    print("SKIP: safetensors is not installed: run tools/scripts/install_python_deps.sh --tests")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
IMPORTERS = os.path.join(SOURCE_DIR, "importers")
IMPORTER = os.path.join(IMPORTERS, "torch2dsc.py")
GOLDEN = os.path.join(HERE, "golden", "torch_mlp.dsc")
sys.path.insert(0, IMPORTERS)
sys.path.insert(0, HERE)
from harness import (Checker as BaseChecker, check_dscc_arg, compare_nonfinite,  # noqa: E402
                     compare_outputs, exit_problem, first_line, run, run_checks,
                     save_inputs)

from dscimport import torch_import  # noqa: E402
from zoo.models import BertLayer, GPT2Block, LlamaBlock  # noqa: E402

SEED = 20270112

warnings.filterwarnings("ignore")
torch.set_num_threads(1)


# ---------------------------------------------------------------------------------------------
# The models
# ---------------------------------------------------------------------------------------------

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return torch.softmax(self.fc2(h), dim=-1)


# The BERT, GPT-2 and LLaMA blocks are the model zoo's (importers/zoo/models.py), at small
# sizes and in the variants that exercise other ops: BERT with HF's attention dropout and
# `.contiguous().view`, GPT-2 with F.scaled_dot_product_attention and a bool mask, LLaMA with
# as many KV heads as heads over a whole prompt (triu mask) and RMSNorm eps 1e-6.

def bert_layer():
    return BertLayer(d=64, heads=4, ff=128, hf_ops=True)


def gpt2_block():
    return GPT2Block(d=64, heads=4, max_pos=128, sdpa=True)


def llama_block():
    return LlamaBlock(d=64, heads=4, kv_heads=4, ff=172, max_pos=256, norm_eps=1e-6)


class Ops(nn.Module):
    """Ops the blocks above do not use: embeddings, is_causal attention, variance, stack,
    repeat, clamp, where with a scalar, pad, chunk, integer arithmetic cast to float."""

    def __init__(self, vocab=40, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.proj = nn.Linear(d, d)

    def forward(self, ids, x):
        B, S = ids.shape
        e = self.emb(ids)
        q = e.view(B, S, 2, 8).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        a = a.transpose(1, 2).reshape(B, S, 16)
        var = e.var(-1, unbiased=False, keepdim=True)
        z = (e - e.mean(-1, keepdim=True)) / torch.sqrt(var + 1e-5)
        st = torch.stack([z, a], dim=1).sum(1)
        c0, c1 = self.proj(st).chunk(2, dim=-1)
        r = torch.clamp(c0, -0.5, 0.5) + torch.where(c1 > 0, c1, 0.1 * c1)
        p = F.pad(r, (1, 2), value=0.25)
        pos = torch.arange(S).to(torch.float32) / 8.0
        y = p * pos[None, :, None] + x.repeat(1, 2, 1)[:, :1]
        return y, (ids * 2 + 1).float().amax(-1)


class MoreOps(nn.Module):
    """Activations, powers, std, log_softmax, nn.RMSNorm, bool masks with | & ~, masked_fill
    with a tensor, gathers, narrow/select/unbind, flatten/unflatten, tril of a computed
    tensor, all/any, baddbmm, split with sizes, zeros_like cast to integers."""

    def __init__(self):
        super().__init__()
        self.norm = nn.RMSNorm(8, eps=1e-5)
        self.table = nn.Parameter(torch.randn(10, 8))

    def forward(self, x, ids):
        B, S, D = x.shape
        a = F.hardtanh(x) + F.leaky_relu(x, 0.2) + torch.reciprocal(x.abs() + 1) + x.square()
        b = torch.pow(x.abs() + 1, x.tanh()) + torch.pow(2.0, x.sigmoid()) + x.abs().pow(1.5)
        c = torch.log_softmax(a, -1) + b.std(-1, keepdim=True) + self.norm(x)
        d = torch.maximum(a, b) - torch.minimum(a, c) + torch.clamp(c, min=a, max=a + 1)
        m = (x > 0) | (x < -1)
        e = d.masked_fill(~m, 0.5).masked_fill(m & (x > 2), torch.tensor(3.0))
        f = torch.index_select(self.table, 0, ids[0]) + self.table[ids[1]]
        g = x.narrow(1, 0, 1).squeeze(1) + x.select(1, -1) + x.unbind(2)[3][:, :1]
        h = x.flatten(1).unflatten(1, (S, 2, 4)).sum(2)
        t = torch.tril(x.transpose(1, 2)[:, :, :1].repeat(1, 1, 5), diagonal=-1)
        flags = (x > -3).all(-1).float() + (x > 2).any().float()
        w = x.transpose(1, 2)[:, :, :1].expand(B, D, D) / 8
        bb = torch.baddbmm(x, x, w, beta=0.5, alpha=2.0)
        lo, hi = torch.split(x, [3, 5], -1)
        return (e, f, g.sum(-1, keepdim=True) + h.sum(-1), t, flags,
                bb + lo.mean() + hi.amin(-1, keepdim=True),
                torch.zeros_like(x[:, :, 0]).long() + ids.sum())


class ArgTrig(nn.Module):
    """sin and cos; argmax and argmin over the last, a middle and the first axis, with and
    without keepdim, and over the whole tensor; integers full of ties (the first index wins)."""

    def forward(self, x, ids):
        s = torch.sin(3 * x) * torch.cos(x)
        return (s, x.argmax(-1), torch.argmin(x, dim=1, keepdim=True), s.argmax(0),
                ids.argmax(-1), ids.argmin(dim=0, keepdim=True), x.argmax())


class ConvNet(nn.Module):
    """A ResNet-style stem: strided convolution, batch norm (inference), ReLU, a grouped
    convolution, global average pooling, flatten, a classifier."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, groups=2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 5)
        with torch.no_grad():
            self.bn1.running_mean.normal_()
            self.bn1.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        h = torch.relu(self.conv2(h)) + h
        return self.fc(torch.flatten(self.pool(h), 1))


class IndexOps(nn.Module):
    """What transformers' models need beyond the blocks above (issue 34): indexing with
    several index tensors (adjacent, with negatives; apart; each an arange along its own axis,
    as create_causal_mask's `padding_mask[batch_idx, kv_idx]`), gather along each axis,
    cumsum of bools, floats and int32, diff with prepend, append and n=2, min/max of two
    tensors, 1-D convolutions (strided, padded, dilated, grouped) and in-place updates of a
    fresh tensor (made functional on import)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2)
        self.conv2 = nn.Conv1d(6, 5, 1)

    def forward(self, x, ids, mask, sig):
        B, S, D = x.shape
        rows = torch.arange(B)
        a = x[rows[:, None], ids]
        zeros, fours = ids * 0, (ids > 0).long() * 4
        b = x[zeros, :, fours]
        m = mask.bool()[rows[:, None, None], torch.arange(S)[None, None, :]]
        pos = ids.clamp(min=0)
        g = torch.gather(x, 1, pos[:, :, None].expand(B, S, D)) + \
            torch.gather(x, 2, (ids > 0).long()[:, :, None] * 3) + \
            torch.gather(x, 0, torch.zeros(1, S, D, dtype=torch.long))
        c = mask.bool().cumsum(-1)
        d = torch.diff(x, dim=1, prepend=x[:, :1]) + x.cumsum(1) - x.cumsum(0)
        e = torch.diff(torch.cat([ids[:, :1], ids[:, :1], ids], 1), n=2, dim=1) + \
            ids.int().cumsum(0, dtype=torch.int32)
        f = torch.diff(mask.bool(), dim=-1, append=mask[:, -1:].bool())
        h = torch.min(x, x * 0.5 + 0.1) + torch.max(x, torch.full_like(x, 0.2))
        t = x * 2
        t += 1
        t.mul_(h)
        y = self.conv2(F.gelu(self.conv(sig)))
        return a, b, m, g, c, d, e, f, t, y


# ---------------------------------------------------------------------------------------------
# Cases: a model, its example inputs, its dims, and the shapes to run at
# ---------------------------------------------------------------------------------------------

@dataclass
class Case:
    name: str
    make: Callable[[], nn.Module]
    inputs: Callable[[torch.Generator, dict], tuple]
    dims: Callable[[], dict]
    example: dict
    shapes: list[dict]
    input_names: list[str]


def randn(g, *shape):
    return torch.randn(*shape, generator=g)


def padding_mask(g, b, s):
    keep = torch.randint(1, s + 1, (b,), generator=g)
    return (torch.arange(s)[None, :] < keep[:, None]).to(torch.int64)


BS = [{"B": 1, "S": 1}, {"B": 2, "S": 7}, {"B": 3, "S": 13}, {"B": 1, "S": 31},
      {"B": 2, "S": 2}]

CASES = [
    Case("mlp", MLP, lambda g, s: (randn(g, s["B"], 32),),
         lambda: {"x": {0: Dim("B", min=1, max=1024)}}, {"B": 4},
         [{"B": b} for b in (1, 2, 7, 13, 31)], ["x"]),
    Case("bert_layer", bert_layer,
         lambda g, s: (randn(g, s["B"], s["S"], 64), padding_mask(g, s["B"], s["S"])),
         lambda: {"x": {0: Dim("B", min=1, max=64), 1: Dim("S", min=1, max=512)},
                  "mask": {0: Dim("B", min=1, max=64), 1: Dim("S", min=1, max=512)}},
         {"B": 2, "S": 8}, BS, ["x", "mask"]),
    Case("gpt2_block", gpt2_block,
         lambda g, s: (randn(g, s["B"], s["S"], 64), randn(g, s["B"], 4, s["P"], 16),
                       randn(g, s["B"], 4, s["P"], 16)),
         lambda: {"x": {0: Dim("B", min=1, max=16), 1: Dim("S", min=1, max=32)},
                  "past_k": {0: Dim("B", min=1, max=16), 2: Dim("P", min=0, max=64)},
                  "past_v": {0: Dim("B", min=1, max=16), 2: Dim("P", min=0, max=64)}},
         {"B": 2, "S": 3, "P": 5},
         [{"B": 1, "S": 1, "P": 0}, {"B": 1, "S": 1, "P": 1}, {"B": 2, "S": 1, "P": 7},
          {"B": 3, "S": 5, "P": 13}, {"B": 2, "S": 3, "P": 31}, {"B": 1, "S": 13, "P": 2}],
         ["x", "past_k", "past_v"]),
    Case("llama_block", llama_block, lambda g, s: (randn(g, s["B"], s["S"], 64),),
         lambda: {"x": {0: Dim("B", min=1, max=64), 1: Dim("S", min=1, max=256)}},
         {"B": 2, "S": 8}, BS, ["x"]),
    Case("ops", Ops,
         lambda g, s: (torch.randint(0, 40, (s["B"], s["S"]), generator=g),
                       randn(g, s["B"], 1, 1)),
         lambda: {"ids": {0: Dim("B", min=1, max=64), 1: Dim("S", min=1, max=128)},
                  "x": {0: Dim("B", min=1, max=64)}},
         {"B": 2, "S": 8}, BS, ["ids", "x"]),
    Case("more_ops", MoreOps,
         lambda g, s: (2 * randn(g, s["B"], s["S"], 8),
                       torch.randint(0, 10, (2, 6), generator=g)),
         lambda: {"x": {0: Dim("B", min=1, max=16), 1: Dim("S", min=1, max=64)}, "ids": None},
         {"B": 2, "S": 5}, BS, ["x", "ids"]),
    Case("arg_trig", ArgTrig,
         lambda g, s: (2 * randn(g, s["B"], s["S"], 5),
                       torch.randint(0, 3, (s["B"], s["S"]), generator=g)),
         lambda: {"x": {0: Dim("B", min=1, max=64), 1: Dim("S", min=1, max=128)},
                  "ids": {0: Dim("B", min=1, max=64), 1: Dim("S", min=1, max=128)}},
         {"B": 2, "S": 8}, BS, ["x", "ids"]),
    Case("index_ops", IndexOps,
         lambda g, s: (randn(g, s["B"], s["S"], 5),
                       torch.randint(-s["S"], s["S"], (s["B"], s["S"]), generator=g),
                       padding_mask(g, s["B"], s["S"]), randn(g, s["B"], 4, s["L"])),
         lambda: {"x": {0: Dim("B", min=1, max=64), 1: Dim("S", min=1, max=128)},
                  "ids": {0: Dim("B", min=1, max=64), 1: Dim("S", min=1, max=128)},
                  "mask": {0: Dim("B", min=1, max=64), 1: Dim("S", min=1, max=128)},
                  "sig": {0: Dim("B", min=1, max=64), 2: Dim("L", min=5, max=256)}},
         {"B": 2, "S": 8, "L": 9},
         [{"B": 1, "S": 1, "L": 5}, {"B": 2, "S": 7, "L": 6}, {"B": 3, "S": 13, "L": 11},
          {"B": 1, "S": 31, "L": 7}, {"B": 2, "S": 2, "L": 13}], ["x", "ids", "mask", "sig"]),
    Case("convnet", ConvNet, lambda g, s: (randn(g, s["N"], 3, s["H"], s["H"]),),
         lambda: {"x": {0: Dim("N", min=1, max=32), 2: Dim("H", min=4, max=224),
                        3: Dim("H", min=4, max=224)}},
         {"N": 2, "H": 16},
         [{"N": 1, "H": 4}, {"N": 2, "H": 7}, {"N": 1, "H": 13}, {"N": 3, "H": 16},
          {"N": 2, "H": 31}], ["x"]),
]


def build(case: Case):
    """The model at a fixed seed and its ExportedProgram."""
    torch.manual_seed(SEED)
    model = case.make().eval()
    g = torch.Generator().manual_seed(SEED)
    args = case.inputs(g, case.example)
    ep = export(model, args, dynamic_shapes=case.dims())
    return model, ep


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------

class Checker(BaseChecker):
    def __init__(self, dscc: str | None, work: str, timeout: float, verbose: bool):
        super().__init__(IMPORTER, dscc, work, timeout, verbose)

    # -- numeric --------------------------------------------------------------------------

    def numeric(self, case: Case, forms: list[str]) -> None:
        model, ep = build(case)
        for form in forms:
            prog = ep if form == "export" else ep.run_decompositions()
            label = f"{case.name} ({form})"
            out = os.path.join(self.work, "import", f"{case.name}_{form}")
            try:
                res = torch_import.to_dsc(prog, out, case.name, dynamic_shapes=case.dims())
            except torch_import.ImportFailure as e:
                self.report(f"import {label}", False, e.message(case.name))
                continue
            want = sorted({d.__name__ for per in case.dims().values() if per
                           for d in per.values()})
            if sorted(res.symbols) != want:
                self.report(f"import {label}", False, f"symbols {res.symbols}, expected {want}")
                continue
            self.report(f"import {label}", True, res.summary(case.name))
            if self.verbose:
                print(res.text)
            so = os.path.join(out, f"{case.name}.so")
            r = run([self.dscc, "build", res.dsc_path, "-o", so, "-q"], self.timeout)
            problem = exit_problem(r)
            if problem:
                self.report(f"{label} dscc build", False, problem +
                            (f"\n{r.stderr}" if self.verbose else ""))
                continue
            for k, sym in enumerate(case.shapes):
                self.run_shape(case, model, form, res, so, k, sym)

    def run_shape(self, case: Case, model, form: str, res, so: str, k: int, sym: dict) -> None:
        label = f"{case.name} ({form}) " + ",".join(f"{a}={b}" for a, b in sym.items())
        g = torch.Generator().manual_seed(SEED + 101 * k + len(case.name))
        args = case.inputs(g, sym)
        case_dir = os.path.join(self.work, re.sub(r"[^A-Za-z0-9_=-]+", "_", label))
        os.makedirs(case_dir)
        cmd = [self.dscc, "run", so, "--weights", res.weights_path, f"--output={case_dir}/out",
               *save_inputs(dict(zip(case.input_names, args)), case_dir)]
        r = run(cmd, self.timeout)
        problem = exit_problem(r, "dscc run exit")
        if problem:
            self.report(label, False, problem + (f"\n{r.stderr}" if self.verbose else ""))
            return
        with torch.no_grad():
            refs = model(*args)
        refs = list(refs) if isinstance(refs, (tuple, list)) else [refs]
        named = [(f"output {i}", ref.numpy()) for i, ref in enumerate(refs)]
        self.report(label, *compare_outputs(os.path.join(case_dir, "out"), named, "torch",
                                            compare_nonfinite))

    # -- golden ---------------------------------------------------------------------------

    def golden(self, update: bool) -> None:
        _, ep = build(CASES[0])
        pt2 = os.path.join(self.work, "torch_mlp.pt2")
        torch.export.save(ep, pt2)
        out = os.path.join(self.work, "golden")
        r = self.cli([pt2, "-o", out, "--dim", "x.0=B"])
        problem = exit_problem(r)
        files = sorted(os.listdir(out)) if os.path.isdir(out) else []
        if problem is None and files != ["torch_mlp.dsc", "torch_mlp.safetensors"]:
            problem = f"the output directory holds {files}"
        if problem is None and not re.search(r"^torch2dsc: .* -> .*torch_mlp\.dsc, .*: ops: "
                                             r"\d+ aten ops .* symbols: B; parameters: 5 ",
                                             r.stdout):
            problem = f"no summary line: {first_line(r.stdout)}"
        self.report("torch2dsc torch_mlp.pt2", problem is None, problem or r.stdout.strip())
        if problem:
            return
        with open(os.path.join(out, "torch_mlp.dsc")) as f:
            got = f.read()
        want = self.check_golden(got, GOLDEN, update, "imported")
        if want is None:
            return
        # The module names the dim B from the live export, with no --dim.
        res = torch_import.import_program(ep, "torch_mlp")

        def body(t: str) -> str:
            return "\n".join(ln for ln in t.splitlines() if not ln.startswith("#"))
        self.report("to_dsc names the Dim from the export", body(res.text) == body(want),
                    "same function as the golden" if body(res.text) == body(want) else
                    f"differs:\n{res.text}")

    # -- errors ---------------------------------------------------------------------------

    def errors(self) -> None:
        class Unsupported(nn.Module):
            def forward(self, x):
                a = torch.tan(x)
                b = torch.cumprod(a, dim=-1)
                c = F.gelu(x) + b
                d = F.scaled_dot_product_attention(c[:, None], c[:, None], c[:, None],
                                                   dropout_p=0.5)
                return d[:, 0], torch.floor(x)

        ep = export(Unsupported(), (torch.randn(2, 8),),
                    dynamic_shapes={"x": {0: Dim("B", min=1, max=64)}})
        pt2 = os.path.join(self.work, "unsupported.pt2")
        torch.export.save(ep, pt2)
        me = os.path.basename(__file__)
        self.expect_failure(
            "unsupported ops are all listed", [pt2],
            ["4 nodes cannot be imported", "nothing was written",
             "aten.tan.default (node 'tan', ", f"{me}:", "a = torch.tan(x)",
             "aten.cumprod.default (node 'cumprod'", "b = torch.cumprod(a, dim=-1)",
             "aten.scaled_dot_product_attention.default", "dropout_p",
             "aten.floor.default (node 'floor'", "no converter for this op"])

        class Counter(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("steps", torch.zeros(1))

            def forward(self, x):
                self.steps.add_(1)
                return x * 2

        # In place, through the module (the command line is checked above).
        ep = export(Counter(), (torch.randn(2, 8),)).run_decompositions()
        out = os.path.join(self.work, "fail", "mutation")
        try:
            torch_import.to_dsc(ep, out, "counter")
            self.report("a buffer updated in place", False, "no error")
        except torch_import.ImportFailure as e:
            msg = e.message("counter")
            want = ["updates buffer 'steps' in place", "self.steps.add_(1)"]
            missing = [w for w in want if w not in msg]
            ok = not missing and not os.path.exists(out)
            self.report("a buffer updated in place", ok, msg.splitlines()[-1].strip() if ok
                        else f"does not say {missing} or wrote files:\n{msg}")

        # Sizes that depend on the data: refused with onnx2dsc's reason for NonZero, and the
        # workaround.
        class Masked(nn.Module):
            def forward(self, x):
                return x[x > 0], torch.nonzero(x)

        ep = export(Masked(), (torch.randn(4, 3),))
        try:
            torch_import.import_program(ep, "masked")
            self.report("sizes that depend on the data", False, "no error")
        except torch_import.ImportFailure as e:
            msg = e.message("masked")
            want = ["2 nodes cannot be imported", "return x[x > 0], torch.nonzero(x)",
                    "aten.nonzero.default", "depends on the data",
                    "where(mask, x, fill) keeps the shape"]
            missing = [w for w in want if w not in msg]
            self.report("sizes that depend on the data", not missing,
                        msg.splitlines()[0] if not missing else f"does not say {missing}:\n{msg}")

        pt2 = os.path.join(self.work, "unsupported.pt2")
        with open(pt2, "rb") as f:
            data = f.read()
        trunc = os.path.join(self.work, "truncated.pt2")
        with open(trunc, "wb") as f:
            f.write(data[:len(data) // 2])
        self.expect_failure("truncated .pt2", [trunc],
                            ["is not a readable torch.export program"], one_line=True)
        self.expect_failure("a missing file", [os.path.join(self.work, "no_such.pt2")],
                            ["cannot read"], one_line=True)
        out = os.path.join(self.work, "fail", "module")
        try:
            torch_import.to_dsc(MLP(), out)
            self.report("to_dsc of a module", False, "no error")
        except torch_import.ModelError as e:
            ok = "export it first" in str(e) and not os.path.exists(out)
            self.report("to_dsc of a module", ok, str(e))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dscc", help="the dscc binary (needed by numeric and golden)")
    ap.add_argument("--only", default="numeric,golden,errors",
                    help="comma-separated: numeric, golden, errors (default: all)")
    ap.add_argument("--filter", help="numeric: only the models whose name matches this regex")
    ap.add_argument("--forms", default="export,core", help="numeric: the programs to import, "
                    "as exported and/or after run_decompositions (default: export,core)")
    ap.add_argument("--update-golden", action="store_true", help="rewrite golden/torch_mlp.dsc")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per command")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("-v", "--verbose", action="store_true")
    ns = ap.parse_args(argv)
    parts = {p.strip() for p in ns.only.split(",") if p.strip()}
    unknown = parts - {"numeric", "golden", "errors"}
    forms = [f.strip() for f in ns.forms.split(",") if f.strip()]
    if unknown or not set(forms) <= {"export", "core"}:
        print(f"check_torch_import.py: unknown --only or --forms part(s): "
              f"{', '.join(sorted(unknown | (set(forms) - {'export', 'core'})))}",
              file=sys.stderr)
        return 2
    if not check_dscc_arg("check_torch_import.py", parts, ns.dscc):
        return 2

    work = tempfile.mkdtemp(prefix="dsc-torch-")
    checker = Checker(ns.dscc, work, ns.timeout, ns.verbose)
    return run_checks(checker, parts, ns, CASES, lambda case: checker.numeric(case, forms))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
