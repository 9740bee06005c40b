#!/usr/bin/env python3
"""Checks low precision end to end (issue 36): models in bf16 and f16 imported by torch2dsc,
onnx2dsc and hf2dsc, built by `dscc build` and run through the runtime's C API (capi.py:
.npy has no bfloat16, so `dscc run` cannot pass bf16 tensors), against torch, ONNX Runtime and
transformers.

  rounding  importers/dscimport/dtypes.py's conversion to bf16 and f16 equals torch's
            `.to(...)` bit for bit on 2^20 random f32 bit patterns and the edge cases (ties,
            subnormals, infinities, NaN), except that a finite value beyond the dtype's range
            saturates to its largest finite value; the .safetensors writer's BF16 tensors read
            back with the safetensors package as the same bf16 values;
  torch     an MLP and a transformer block (LayerNorm, softmax attention under a padding mask
            filled with the dtype's minimum, a row with every key masked among them, and erf
            GELU), each exported in bf16 and in f16 and imported in its dtype, and exported in
            f32 and converted (`torch2dsc.py --dtype=bf16` on a .pt2, `to_dsc(dtype="f16")`),
            run at B = 1, 7, 13 (MLP) and (B, S) = (1, 1), (2, 7), (3, 13) (block), against
            the model in torch in the same dtype;
  onnx      the block exported to ONNX in f16 (TorchScript exporter, opset 17) and in bf16
            (the dynamo exporter: the TorchScript one writes bf16's Cast as `to=15`, torch's
            number for bfloat16, which is ONNX's COMPLEX128) and imported in its dtype,
            against torch in that dtype; tests/importers/models/mlp.onnx (f32) converted by
            `onnx2dsc.py --dtype=bf16`, against ONNX Runtime (f32);
  hf        hf2dsc --dtype=bf16 on small random checkpoints (check_hf2dsc.py's): BertModel
            (last_hidden_state at the real tokens), LlamaForCausalLM and GPT2LMHeadModel
            (prefill's last logits, then two decode steps on the bf16 caches it returned);
            hf2dsc --dtype=f16 on the LLaMA and on ViTModel (a bf16 conv2d); and the LLaMA
            saved in bf16 imported without --dtype (it keeps bf16): against transformers in
            f32 (on the bf16 weights for the last). Each .safetensors must hold its dtype's
            tensors ("BF16", "F16"; RoPE's frequencies "F32").

Every float parameter of a built entry must have the expected dtype, and the outputs are
compared within harness.py's TOLERANCES[dtype] (it says why those values):
    |dsc - ref| <= TOLERANCES[dtype] * (rms(ref) + |ref|).

    check_low_precision.py --dscc build/tools/dscc/dscc [--runtime libdsc_runtime.so]
                           [--only rounding,torch,onnx,hf] [--filter REGEX] [--keep] [-v]

Prints one line per check (PASS or FAIL, then details: the worst error as a fraction of the
tolerance), then `N passed, M failed`; exits 1 when a check failed, 77 (a skip for ctest)
when torch, numpy, safetensors, onnx, onnxruntime or transformers is missing.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import logging
import os
import re
import sys
import tempfile
import warnings
from dataclasses import dataclass
from typing import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
IMPORTERS = os.path.join(SOURCE_DIR, "importers")
sys.path.insert(0, HERE)
sys.path.insert(0, IMPORTERS)
from requirements import skip_unless_installed  # noqa: E402

skip_unless_installed("numpy", "torch", "safetensors", "onnx", "onnxruntime", "transformers")
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import transformers  # noqa: E402
from torch.export import Dim, export  # noqa: E402

from capi import Runtime, find_runtime, read_safetensors  # noqa: E402
from check_hf2dsc import ARCHS, SEED, VOCAB, bert_config, llama_like, vit_config  # noqa: E402
from hf_models import positions, randomize  # noqa: E402
from harness import (TOLERANCES, Checker, check_dscc_arg, compare, exit_problem,  # noqa: E402
                     remove_work, run, tally)

from dscimport import dtypes  # noqa: E402
from dscimport.output import safetensors_bytes  # noqa: E402
from dscimport.torch_import import to_dsc  # noqa: E402

PARTS = ("rounding", "torch", "onnx", "hf")
TORCH_DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
STORED = {"bf16": "BF16", "f16": "F16", "f32": "F32"}

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
torch.set_num_threads(1)


# ---------------------------------------------------------------------------------------------
# The torch models
# ---------------------------------------------------------------------------------------------

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)


class Block(nn.Module):
    """A pre-norm transformer block: LayerNorm, softmax attention whose masked scores are the
    dtype's minimum (transformers' masked fill), erf GELU."""

    def __init__(self, d=32, heads=4, ff=64):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, ff)
        self.down = nn.Linear(ff, d)
        with torch.no_grad():  # norms away from their initial ones
            for p in (self.ln1.weight, self.ln1.bias, self.ln2.weight, self.ln2.bias):
                p.add_(0.2 * torch.randn(p.shape))

    def forward(self, x, mask):
        B, S, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, S, 3, self.heads, D // self.heads) \
            .permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / (D // self.heads) ** 0.5
        scores = scores.masked_fill(mask[:, None, None, :] == 0, torch.finfo(scores.dtype).min)
        a = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, S, D)
        x = x + self.proj(a)
        return x + self.down(F.gelu(self.up(self.ln2(x))))


def block_inputs(g: torch.Generator, b: int, s: int) -> dict:
    """x, and a mask of 1 at tokens: row 1 padded at the end, row 2 with every key masked."""
    mask = torch.ones(b, s, dtype=torch.long)
    if b > 1:
        mask[1, s - s // 3:] = 0
    if b > 2:
        mask[2] = 0
    return {"x": torch.randn(b, s, 32, generator=g), "mask": mask}


@dataclass
class TorchCase:
    name: str
    make: Callable[[], nn.Module]
    inputs: Callable[[torch.Generator, dict], dict]  # f32 and integer tensors by name
    dims: Callable[[], dict]
    cli_dims: list[str]                             # torch2dsc's --dim for a .pt2
    shapes: list[dict]


def bs_dims():
    b, s = Dim("B", min=1, max=64), Dim("S", min=1, max=64)
    return {"x": {0: b, 1: s}, "mask": {0: b, 1: s}}


TORCH_CASES = [
    TorchCase("mlp", MLP, lambda g, sh: {"x": torch.randn(sh["B"], 32, generator=g)},
              lambda: {"x": {0: Dim("B", min=1, max=1024)}}, ["x.0=B"],
              [{"B": 1}, {"B": 7}, {"B": 13}]),
    TorchCase("block", Block, lambda g, sh: block_inputs(g, sh["B"], sh["S"]), bs_dims,
              ["x.0=B", "x.1=S"], [{"B": 1, "S": 1}, {"B": 2, "S": 7}, {"B": 3, "S": 13}]),
]
# (dtype, how): "native" exports the model in the dtype and imports it as it is; "cli" and
# "to_dsc" export it in f32 and convert it, by torch2dsc.py --dtype or to_dsc(dtype=).
TORCH_ROUTES = [("bf16", "native"), ("f16", "native"), ("bf16", "cli"), ("f16", "to_dsc")]


def in_dtype(inputs: dict, dt: str) -> dict:
    """The inputs with their floats in torch's dtype dt."""
    return {k: v.to(TORCH_DTYPES[dt]) if v.is_floating_point() else v for k, v in inputs.items()}


def as_numpy(inputs: dict) -> dict:
    """Torch tensors as NumPy arrays (bf16 as float32 values: capi.py passes them as bf16)."""
    return {k: (v.float() if v.dtype == torch.bfloat16 else v).numpy() for k, v in inputs.items()}


# ---------------------------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------------------------

class LowPrecisionChecker(Checker):
    def __init__(self, dscc: str, runtime: Runtime, work: str, timeout: float, verbose: bool):
        super().__init__(os.path.join(IMPORTERS, "torch2dsc.py"), dscc, work, timeout, verbose)
        self.rt = runtime

    def importer(self, tool: str, args: list[str]) -> str | None:
        r = run([sys.executable, os.path.join(IMPORTERS, tool), *args], self.timeout)
        return exit_problem(r, f"{tool} exit")

    def build(self, label: str, dsc: str, entries: list[str]):
        """The built model loaded, or None (reported)."""
        so = os.path.splitext(dsc)[0] + ".so"
        problem = exit_problem(run([self.dscc, "build", dsc, "-o", so, "-q",
                                    *[f"--entry={e}" for e in entries]], self.timeout),
                               "dscc build exit")
        if problem:
            self.report(f"{label} build", False, problem)
            return None
        if self.verbose:
            with open(dsc) as f:
                print(f.read())
        return self.rt.load(so)

    def check_dtypes(self, label: str, model, entry: str, weights_path: str, dt: str,
                     f32_weights: tuple[str, ...] = ()) -> bool:
        """Every float parameter of the entry is dt, and every weight in the file is stored as
        dt (those named in f32_weights as f32); reported."""
        problems = []
        for name, type_text in model.params(entry):
            pdt = type_text.split("[", 1)[0]
            want = "f32" if name in f32_weights else dt
            if pdt in dtypes.FLOATS and pdt != want:
                problems.append(f"parameter {name}: {type_text}, expected {want}")
        from dscimport.hf_checkpoint import read_header
        stored = {}
        for name, info in read_header(weights_path).items():
            want = STORED["f32" if name in f32_weights else dt]
            stored[info.dtype] = stored.get(info.dtype, 0) + 1
            if info.dtype != want:
                problems.append(f"weight {name} is stored as {info.dtype}, expected {want}")
        self.report(f"{label} dtypes", not problems, "; ".join(problems[:4]) or
                    f"float parameters {dt}; stored: " +
                    ", ".join(f"{k} {v}" for k, v in sorted(stored.items())))
        return not problems

    def compare(self, label: str, got: np.ndarray, ref: np.ndarray, dt: str,
                what: str = "") -> None:
        ok, detail = compare(np.asarray(got, np.float32), np.asarray(ref, np.float32),
                             TOLERANCES[dt])
        self.report(label, ok, f"{what}{dt} tolerance {TOLERANCES[dt]:g}: {detail}")

    # -- rounding -------------------------------------------------------------------------

    def rounding(self) -> None:
        rng = np.random.default_rng(SEED)
        bits = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32)
        ties = (rng.integers(0, 1 << 16, 4096).astype(np.uint32) << 16) | 0x8000  # bf16 ties
        edge = np.array([0, 0x80000000, 1, 0x807FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000,
                         0xFFC00001, 0x7F7FFFFF, 0xFF7F8000, 0x7F7F7FFF, 0x477FF000,
                         0x477FEFFF, 0x38800000, 0x33800000], np.uint32)
        f = np.concatenate([bits, ties, edge]).view(np.float32)
        t = torch.from_numpy(f.copy())
        for dt in ("bf16", "f16"):
            want = t.to(TORCH_DTYPES[dt]).float().numpy()
            got = dtypes.round_to(f, dt).astype(np.float32)
            over = np.isinf(want) & np.isfinite(f)  # torch overflows; dtypes.py saturates
            # NaN stays NaN (torch's is positive; dtypes.py keeps the sign, as NumPy does).
            same = (got.view(np.uint32) == want.view(np.uint32)) | \
                (np.isnan(got) & np.isnan(want))
            sat = got[over] == np.copysign(dtypes.MAX_FINITE[dt], f[over])
            bad = int(np.sum(~same & ~over)) + int(np.sum(~sat))
            self.report(f"rounding to {dt}", bad == 0,
                        f"{f.size} values, {bad} differ from torch's .to(); {int(over.sum())} "
                        f"beyond the range saturated")
        w = {"a": dtypes.storage(f[:4096].reshape(64, 64), "bf16"),
             "b": dtypes.storage(f[:10], "f16")}
        from safetensors.torch import load
        back = load(safetensors_bytes(w))
        ok = back["a"].dtype == torch.bfloat16 and back["b"].dtype == torch.float16 and \
            np.array_equal(back["a"].view(torch.int16).numpy().view(np.uint16), w["a"]) and \
            np.array_equal(back["b"].numpy(), w["b"], equal_nan=True)
        self.report("safetensors BF16 and F16 read back", bool(ok),
                    f"a: {back['a'].dtype}, b: {back['b'].dtype}, the same bits")

    # -- torch ----------------------------------------------------------------------------

    def torch_case(self, case: TorchCase, dt: str, how: str) -> None:
        label = f"torch {case.name} {dt} ({how})"
        torch.manual_seed(SEED)
        model = case.make().eval()
        g = torch.Generator().manual_seed(SEED)
        example = case.inputs(g, case.shapes[-1])
        ref_model = copy.deepcopy(model).to(TORCH_DTYPES[dt])
        out_dir = os.path.join(self.work, "torch", f"{case.name}_{dt}_{how}")
        name = f"{case.name}_{dt}"
        if how == "native":
            ep = export(ref_model, tuple(in_dtype(example, dt).values()),
                        dynamic_shapes=case.dims())
            to_dsc(ep, out_dir, name)
        elif how == "to_dsc":
            ep = export(model, tuple(example.values()), dynamic_shapes=case.dims())
            to_dsc(ep, out_dir, name, dtype=dt)
        else:
            ep = export(model, tuple(example.values()), dynamic_shapes=case.dims())
            pt2 = os.path.join(self.work, "torch", f"{case.name}.pt2")
            torch.export.save(ep, pt2)
            problem = self.importer("torch2dsc.py", [pt2, "-o", out_dir, "--name", name,
                                                     "--dtype", dt,
                                                     *[f"--dim={d}" for d in case.cli_dims]])
            if problem:
                self.report(f"{label} import", False, problem)
                return
        dsc = os.path.join(out_dir, f"{name}.dsc")
        m = self.build(label, dsc, [name])
        weights_path = os.path.join(out_dir, f"{name}.safetensors")
        if m is None or not self.check_dtypes(label, m, name, weights_path, dt):
            return
        weights = read_safetensors(weights_path)
        for k, shape in enumerate(case.shapes):
            inputs = in_dtype(case.inputs(torch.Generator().manual_seed(SEED + k), shape), dt)
            outs = m.run(name, as_numpy(inputs), weights)
            with torch.no_grad():
                ref = ref_model(*inputs.values()).float().numpy()
            where = ",".join(f"{s}={v}" for s, v in shape.items())
            if len(outs) != 1 or outs[0][1] != dt:
                self.report(f"{label} {where}", False, f"outputs {[o[1] for o in outs]}, "
                            f"expected one {dt}")
                continue
            self.compare(f"{label} {where}", outs[0][0], ref, dt, "vs torch: ")

    # -- onnx -----------------------------------------------------------------------------

    def onnx_block(self, dt: str) -> None:
        label = f"onnx block {dt}"
        torch.manual_seed(SEED)
        model = Block().eval().to(TORCH_DTYPES[dt])
        example = in_dtype(block_inputs(torch.Generator().manual_seed(SEED), 2, 5), dt)
        path = os.path.join(self.work, "onnx", f"block_{dt}.onnx")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if dt == "f16":
            torch.onnx.export(model, tuple(example.values()), path, dynamo=False,
                              opset_version=17, input_names=["x", "mask"], output_names=["y"],
                              dynamic_axes={"x": {0: "B", 1: "S"}, "mask": {0: "B", 1: "S"}})
        else:
            logging.getLogger("torch.onnx").setLevel(logging.ERROR)
            with contextlib.redirect_stdout(io.StringIO()):  # the exporter's progress lines
                torch.onnx.export(model, tuple(example.values()), path, dynamo=True,
                                  input_names=["x", "mask"], output_names=["y"],
                                  dynamic_shapes=bs_dims(), verbose=False)
        out_dir = os.path.join(self.work, "onnx", f"block_{dt}")
        problem = self.importer("onnx2dsc.py", [path, "-o", out_dir])
        if problem:
            self.report(f"{label} import", False, problem)
            return
        name = f"block_{dt}"
        m = self.build(label, os.path.join(out_dir, f"{name}.dsc"), [name])
        weights_path = os.path.join(out_dir, f"{name}.safetensors")
        if m is None or not self.check_dtypes(label, m, name, weights_path, dt):
            return
        weights = read_safetensors(weights_path)
        for k, (b, s) in enumerate(((1, 1), (2, 7), (3, 13))):
            inputs = in_dtype(block_inputs(torch.Generator().manual_seed(SEED + k), b, s), dt)
            (out, odt), = m.run(name, as_numpy(inputs), weights)
            with torch.no_grad():
                ref = model(*inputs.values()).float().numpy()
            self.compare(f"{label} B={b},S={s}", out, ref, dt, "vs torch: ")

    def onnx_converted(self) -> None:
        label = "onnx mlp.onnx --dtype=bf16"
        path = os.path.join(HERE, "models", "mlp.onnx")
        out_dir = os.path.join(self.work, "onnx", "mlp_bf16")
        problem = self.importer("onnx2dsc.py", [path, "-o", out_dir, "--dtype", "bf16"])
        if problem:
            self.report(f"{label} import", False, problem)
            return
        m = self.build(label, os.path.join(out_dir, "mlp.dsc"), ["mlp"])
        weights_path = os.path.join(out_dir, "mlp.safetensors")
        if m is None or not self.check_dtypes(label, m, "mlp", weights_path, "bf16"):
            return
        weights = read_safetensors(weights_path)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        rng = np.random.default_rng(SEED)
        for b in (1, 7, 13):
            x = dtypes.round_to(rng.standard_normal((b, 32)).astype(np.float32), "bf16")
            (out, _), = m.run("mlp", {"x": x}, weights)
            ref = sess.run(None, {sess.get_inputs()[0].name: x})[0]
            self.compare(f"{label} batch={b}", out, ref, "bf16", "vs ONNX Runtime f32: ")

    # -- hf2dsc ---------------------------------------------------------------------------

    def hf(self, name: str, make, dt: str, flag: bool, save_dtype=None) -> None:
        """hf2dsc on a checkpoint of make() (saved in save_dtype), with --dtype=dt when flag,
        against transformers in f32 on the checkpoint's weights."""
        label = f"hf2dsc {name}"
        torch.manual_seed(SEED)
        model = make().eval()
        randomize(model, SEED + 7)
        ckpt = os.path.join(self.work, "hf", f"ckpt_{name}")
        (model.to(save_dtype) if save_dtype else model).save_pretrained(ckpt)
        model = model.float()  # the reference: f32, on the weights as saved
        out = os.path.join(self.work, "hf", name)
        problem = self.importer("hf2dsc.py", [ckpt, "-o", out,
                                              *(["--dtype", dt] if flag else [])])
        if problem:
            self.report(f"{label} import", False, problem)
            return
        decoder = model.config.model_type in ("llama", "gpt2")
        vision = model.config.model_type == "vit"
        entries = ["prefill", "decode"] if decoder else ["forward"]
        m = self.build(label, os.path.join(out, "model.dsc"), entries)
        weights_path = os.path.join(out, "model.safetensors")
        if m is None or not self.check_dtypes(label, m, entries[0], weights_path, dt,
                                              ("rotary_inv_freq",)):
            return
        weights = read_safetensors(weights_path)
        if vision:
            for b in (1, 3):
                pixels = torch.randn(b, 3, 32, 32, generator=torch.Generator().manual_seed(b))
                pixels = pixels.to(TORCH_DTYPES[dt]).float()  # the values dt holds
                (got, odt), = m.run("forward", {"pixels": pixels.numpy()}, weights)
                with torch.no_grad():
                    ref = model(pixel_values=pixels).last_hidden_state.numpy()
                self.compare(f"{label} B={b}", got, ref, dt,
                             f"last_hidden_state ({odt}) vs transformers f32: ")
            return
        for k, (b, s, pads) in enumerate([(1, 7, [0]), (1, 1, [0]), (3, 13, [0, 4, 12])]):
            g = torch.Generator().manual_seed(SEED + 31 * k)
            ids = torch.randint(3, VOCAB, (b, s), generator=g)
            mask = torch.ones(b, s, dtype=torch.long)
            for row, pad in enumerate(pads):
                if pad:
                    mask[row, :pad] = 0
            where = f"{label} B={b},S={s}"
            if decoder:
                self.hf_generate(where, model, m, weights, ids, mask, dt)
                continue
            (got, odt), = m.run("forward", {"ids": ids.numpy(), "mask": mask.numpy()}, weights)
            with torch.no_grad():
                ref = model(input_ids=ids, attention_mask=mask).last_hidden_state.numpy()
            real = mask.numpy().astype(bool)[..., None]  # padded tokens' states mean nothing
            self.compare(where, np.where(real, got, 0), np.where(real, ref, 0), dt,
                         f"last_hidden_state ({odt}) vs transformers f32: ")

    def hf_generate(self, label: str, model, m, weights, ids, mask, dt: str) -> None:
        cfg = model.config
        b, s = ids.shape
        hd = cfg.hidden_size // cfg.num_attention_heads
        kv = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
        caches = {f"cache_{t}_{i}": np.zeros((b, kv, s + 3, hd), np.float32)
                  for i in range(cfg.num_hidden_layers) for t in "kv"}
        entry, feed = "prefill", ids
        for step in range(3):
            outs = m.run(entry, {"ids": feed.numpy(), "mask": mask.numpy(), **caches}, weights)
            kinds = [o[1] for o in outs]
            if kinds != ["f32"] + [dt] * len(caches):
                self.report(f"{label} {entry}", False, f"outputs {kinds}: expected the "
                            f"logits f32 and {len(caches)} caches {dt}")
                return
            with torch.no_grad():
                ref = model(input_ids=ids, attention_mask=mask,
                            position_ids=positions(mask)).logits[:, -1].numpy()
            name = f"{label} {entry}" + (f" {step} (L={ids.shape[1]})" if step else "")
            self.compare(name, outs[0][0], ref, dt, "logits vs transformers f32: ")
            caches = dict(zip(caches, (o[0] for o in outs[1:])))
            feed = torch.from_numpy(ref).argmax(-1, keepdim=True)
            ids = torch.cat([ids, feed], dim=1)
            mask = torch.cat([mask, torch.ones(b, 1, dtype=torch.long)], dim=1)
            entry = "decode"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dscc", required=True, help="the dscc binary")
    ap.add_argument("--runtime", help="libdsc_runtime.so (default: beside dscc, or the build "
                    "tree's runtime/)")
    ap.add_argument("--only", default=",".join(PARTS), help="comma-separated parts: "
                    + ", ".join(PARTS))
    ap.add_argument("--filter", help="only the checks whose label matches this regex")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per command")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("-v", "--verbose", action="store_true")
    ns = ap.parse_args(argv)
    parts = set(ns.only.split(","))
    if parts - set(PARTS):
        ap.error(f"unknown parts: {', '.join(sorted(parts - set(PARTS)))}")
    if not check_dscc_arg("check_low_precision.py", {"numeric"}, ns.dscc):
        return 2
    lib = ns.runtime or find_runtime(ns.dscc)
    if not lib or not os.path.isfile(lib):
        print(f"check_low_precision.py: no libdsc_runtime.so for {ns.dscc} (give --runtime)",
              file=sys.stderr)
        return 2
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"onnxruntime {ort.__version__}")
    work = tempfile.mkdtemp(prefix="dsc-lowp-")
    checker = LowPrecisionChecker(ns.dscc, Runtime(lib), work, ns.timeout, ns.verbose)
    llama = llama_like("LlamaForCausalLM", "LlamaConfig", rope_theta=500.0)
    gpt2 = next(a.make for a in ARCHS if a.name == "gpt2")
    checks: list[tuple[str, str, Callable[[], None]]] = [("rounding", "rounding",
                                                          checker.rounding)]
    for case in TORCH_CASES:
        for dt, how in TORCH_ROUTES:
            checks.append(("torch", f"torch {case.name} {dt} ({how})",
                           lambda c=case, d=dt, h=how: checker.torch_case(c, d, h)))
    checks += [("onnx", f"onnx block {dt}", lambda d=dt: checker.onnx_block(d))
               for dt in ("f16", "bf16")]
    checks.append(("onnx", "onnx mlp.onnx --dtype=bf16", checker.onnx_converted))
    checks += [
        ("hf", "hf2dsc bert bf16", lambda: checker.hf(
            "bert_bf16", lambda: transformers.BertModel(bert_config()), "bf16", True)),
        ("hf", "hf2dsc llama bf16", lambda: checker.hf("llama_bf16", llama, "bf16", True)),
        ("hf", "hf2dsc gpt2 bf16", lambda: checker.hf("gpt2_bf16", gpt2, "bf16", True)),
        ("hf", "hf2dsc vit f16", lambda: checker.hf(
            "vit_f16", lambda: transformers.ViTModel(vit_config()), "f16", True)),
        ("hf", "hf2dsc llama f16", lambda: checker.hf("llama_f16", llama, "f16", True)),
        ("hf", "hf2dsc llama saved in bf16", lambda: checker.hf(
            "llama_saved_bf16", llama, "bf16", False, torch.bfloat16)),
    ]
    try:
        for part, label, fn in checks:
            if part not in parts or (ns.filter and not re.search(ns.filter, label)):
                continue
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - a failed check, not a crash of the script
                checker.report(label, False, f"{type(e).__name__}: {e}")
    finally:
        remove_work(work, ns.keep)
    return tally(checker)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
