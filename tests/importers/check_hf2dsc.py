#!/usr/bin/env python3
"""Checks importers/hf2dsc.py: transformers checkpoints written by save_pretrained, imported,
built with `dscc build` and run with `dscc run`, against transformers' own forward.

Each architecture is built here from a small random config (2 layers, hidden 64, vocabulary
100; the LLaMA family with 2 key/value heads for 4 query heads) at a fixed seed, its 1-D
weights moved off their initial ones and zeros, and saved with `save_pretrained`:

  encoders  BertModel (last_hidden_state) and BertForSequenceClassification (logits), at
            (B, S) = (1, 7), (1, 1) and (3, 13) with a row padded by 4 at the end and one by 12
            at the start;
  decoders  GPT2LMHeadModel (tied embeddings), LlamaForCausalLM (also with every bias, tied
            embeddings and head_dim 32 for hidden 64 and 4 heads), Qwen2ForCausalLM (q/k/v
            biases, tied embeddings) and MistralForCausalLM (a sliding window of 24, which
            bounds the context), at (B, S) = (1, 7), (1, 1) and (3, 13) with rows left-padded
            by 0, 4 and 12 tokens: `prefill`'s last logits and the caches it writes (against
            transformers' past_key_values; the cache beyond the prompt must stay as passed),
            then three `decode` steps (the greedy next token, the mask grown by one), each
            step's logits against transformers' forward over the whole sequence so far with
            generate's position ids; and that both entries write every cache in place (the
            host programs `dscc build --print-after=lower_host` prints);
  vision    ViTModel (last_hidden_state) and ViTForImageClassification (logits), 32x32 images
            in patches of 8, at batch 1, 2 and 3.

and the failures, each a clean `hf2dsc: error:` with exit status 1 and nothing written: a
missing tensor, a tensor of the wrong shape, an unknown model_type, several config problems
listed together, integer weights, a directory with no config. (bf16 and f16 imports are
check_low_precision.py's.)

    check_hf2dsc.py --dscc build/tools/dscc/dscc [--filter REGEX] [--keep] [-v]

Prints one line per check (PASS or FAIL, then details), then `N passed, M failed`; exits 1 when
a check failed, 77 (a skip for ctest) when transformers, torch, numpy or safetensors is missing.
The tolerance is harness.py's: |dsc - transformers| <= 1e-4 * (rms + |ref|).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import warnings
from dataclasses import dataclass
from typing import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
IMPORTER = os.path.join(SOURCE_DIR, "importers", "hf2dsc.py")
sys.path.insert(0, HERE)
from requirements import skip_unless_installed  # noqa: E402

skip_unless_installed("numpy", "torch", "safetensors", "transformers")
import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

from hf_models import positions, randomize  # noqa: E402
from harness import (Checker, check_dscc_arg, compare, exit_problem, remove_work,  # noqa: E402
                     run, save_inputs, tally)

SEED = 20270135
VOCAB = 100
STEPS = 3  # decode steps after each prefill

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
torch.set_num_threads(1)


def bert_config(**kw):
    return transformers.BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, intermediate_size=128,
                                   max_position_embeddings=64, **kw)


def llama_like(cls: str, cfg: str, **kw):
    return lambda: getattr(transformers, cls)(getattr(transformers, cfg)(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=128, max_position_embeddings=128, **kw))


def vit_config(**kw):
    return transformers.ViTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=128, image_size=32, patch_size=8, **kw)


@dataclass
class Arch:
    name: str
    make: Callable
    decoder: bool
    output: str = "logits"   # the encoders' output compared
    vision: bool = False     # images in, at batch 1, 2 and 3


ARCHS = [
    Arch("bert", lambda: transformers.BertModel(bert_config()), False, "last_hidden_state"),
    Arch("bert_classifier", lambda: transformers.BertForSequenceClassification(
        bert_config(num_labels=3)), False),
    Arch("gpt2", lambda: transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=VOCAB, n_embd=64, n_layer=2, n_head=4, n_positions=64, bos_token_id=1,
        eos_token_id=2)), True),
    Arch("llama", llama_like("LlamaForCausalLM", "LlamaConfig", rope_theta=500.0), True),
    # Biases on every projection, tied embeddings and a head dim that is not hidden / heads.
    Arch("llama_variant", llama_like("LlamaForCausalLM", "LlamaConfig", attention_bias=True,
                                     mlp_bias=True, tie_word_embeddings=True, head_dim=32),
         True),
    Arch("qwen2", llama_like("Qwen2ForCausalLM", "Qwen2Config", tie_word_embeddings=True),
         True),
    Arch("mistral", llama_like("MistralForCausalLM", "MistralConfig", sliding_window=24), True),
    Arch("vit", lambda: transformers.ViTModel(vit_config()), False, "last_hidden_state",
         vision=True),
    Arch("vit_classifier", lambda: transformers.ViTForImageClassification(
        vit_config(num_labels=5)), False, vision=True),
]

# (B, S, padding of each row): at the end for the encoders, at the start for the decoders.
SHAPES = [(1, 7, [0]), (1, 1, [0]), (3, 13, [0, 4, 12])]


class Hf2dscChecker(Checker):
    def arch(self, arch: Arch) -> None:
        torch.manual_seed(SEED)
        model = arch.make().eval()
        randomize(model, SEED + 7)
        ckpt = os.path.join(self.work, "ckpt", arch.name)
        model.save_pretrained(ckpt)
        out = os.path.join(self.work, arch.name)
        r = self.cli([ckpt, "-o", out])
        problem = exit_problem(r, "hf2dsc exit")
        self.report(f"{arch.name} import", problem is None,
                    problem or r.stdout.strip().split(": ", 1)[-1])
        if problem:
            return
        if self.verbose:
            with open(os.path.join(out, "model.dsc")) as f:
                print(f.read())
        so = os.path.join(out, "model.so")
        entries = ["prefill", "decode"] if arch.decoder else ["forward"]
        # The host programs, printed after lower_host, say which buffers are updated in place.
        r = run([self.dscc, "build", os.path.join(out, "model.dsc"), "-o", so, "-q",
                 "--print-after=lower_host", *[f"--entry={e}" for e in entries]], self.timeout)
        problem = exit_problem(r, "dscc build exit")
        if problem:
            self.report(f"{arch.name} dscc build", False, problem)
            return
        if arch.decoder:
            self.in_place(arch.name, r.stdout, 2 * model.config.num_hidden_layers)
        weights = os.path.join(out, "model.safetensors")
        if arch.vision:
            for b in (1, 2, 3):
                g = torch.Generator().manual_seed(SEED + b)
                self.see(model, arch, f"{arch.name} B={b}", so, weights,
                         torch.randn(b, 3, 32, 32, generator=g))
            return
        for k, (b, s, pads) in enumerate(SHAPES):
            g = torch.Generator().manual_seed(SEED + 31 * k)
            ids = torch.randint(3, VOCAB, (b, s), generator=g)
            mask = torch.ones(b, s, dtype=torch.long)
            for row, pad in enumerate(pads):
                if pad and (arch.decoder or row % 2 == 0):
                    mask[row, :pad] = 0
                elif pad:
                    mask[row, s - pad:] = 0
            label = f"{arch.name} B={b},S={s}"
            if arch.decoder:
                self.generate(model, label, so, weights, ids, mask)
            else:
                self.encode(model, arch, label, so, weights, ids, mask)

    def in_place(self, name: str, host_text: str, n_caches: int) -> None:
        """Each entry writes every cache in place: its host program has a line
        `buffer %N ck: f32[...] alias %M updated in place` per cache."""
        counts = {}
        for part in re.split(r"^host ", host_text, flags=re.MULTILINE)[1:]:
            entry = part.split("(", 1)[0]
            counts[entry] = len(re.findall(r"alias %\d+ updated in place", part))
        ok = all(counts.get(e) == n_caches for e in ("prefill", "decode"))
        self.report(f"{name} caches updated in place", ok,
                    f"{n_caches} caches; updated in place: "
                    f"{', '.join(f'{e} {counts.get(e)}' for e in ('prefill', 'decode'))}")

    def dscc_run(self, label: str, so: str, weights: str, entry: str, inputs: dict,
                 n_out: int) -> list[np.ndarray] | None:
        case = os.path.join(self.work, "cases", re.sub(r"[^A-Za-z0-9_=-]+", "_", label))
        os.makedirs(case, exist_ok=True)
        r = run([self.dscc, "run", so, f"--entry={entry}", "--weights", weights,
                 f"--output={case}/out", *save_inputs(inputs, case)], self.timeout)
        problem = exit_problem(r, "dscc run exit")
        if problem:
            self.report(label, False, problem)
            return None
        outs = [np.load(os.path.join(case, "out", f"output{i}.npy")) for i in range(n_out)
                if os.path.exists(os.path.join(case, "out", f"output{i}.npy"))]
        if len(outs) != n_out or os.path.exists(os.path.join(case, "out",
                                                             f"output{n_out}.npy")):
            self.report(label, False, f"expected {n_out} outputs")
            return None
        return outs

    def encode(self, model, arch: Arch, label: str, so: str, weights: str, ids, mask) -> None:
        outs = self.dscc_run(label, so, weights, "forward", {"ids": ids, "mask": mask}, 1)
        if outs is None:
            return
        with torch.no_grad():
            ref = getattr(model(input_ids=ids, attention_mask=mask), arch.output).numpy()
        if arch.output == "last_hidden_state":
            # Padded tokens' states are not meaningful (and differ in transformers' sdpa).
            keep = mask.numpy().astype(bool)
            ok, detail = compare(np.where(keep[..., None], outs[0], 0),
                                 np.where(keep[..., None], ref, 0))
        else:
            ok, detail = compare(outs[0], ref)
        self.report(label, ok, f"{arch.output}: {detail}")

    def see(self, model, arch: Arch, label: str, so: str, weights: str, pixels) -> None:
        outs = self.dscc_run(label, so, weights, "forward", {"pixels": pixels}, 1)
        if outs is None:
            return
        with torch.no_grad():
            ref = getattr(model(pixel_values=pixels), arch.output).numpy()
        ok, detail = compare(outs[0], ref)
        self.report(label, ok, f"{arch.output}: {detail}")

    def generate(self, model, label: str, so: str, weights: str, ids, mask) -> None:
        cfg = model.config
        b, s = ids.shape
        kv = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
        hd = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        ctx = s + STEPS + 2  # the cache's C, past every token the steps write
        caches = {f"cache_{t}_{i}": np.zeros((b, kv, ctx, hd), np.float32)
                  for i in range(cfg.num_hidden_layers) for t in "kv"}
        outs = self.dscc_run(f"{label} prefill", so, weights, "prefill",
                             {"ids": ids, "mask": mask, **caches}, 1 + len(caches))
        if outs is None:
            return
        with torch.no_grad():
            ref = model(input_ids=ids, attention_mask=mask, position_ids=positions(mask),
                        use_cache=True)
        ok, detail = compare(outs[0], ref.logits[:, -1].numpy())
        details = [f"logits: {detail}"]
        # The cache at real tokens (a padded token's keys are never read, and past the first
        # layer they differ: transformers and dsc treat a query that sees no key differently).
        real = mask.numpy().astype(bool)[:, None, :, None]
        for i, layer in enumerate(ref.past_key_values.layers):
            for t, want in (("k", layer.keys), ("v", layer.values)):
                got = outs[1 + 2 * i + (t == "v")]
                good, d = compare(np.where(real, got[:, :, :s], 0),
                                  np.where(real, want.numpy(), 0))
                ok &= good
                if not good:
                    details.append(f"cache_{t}_{i}: {d}")
                if np.any(got[:, :, s:] != 0):
                    ok = False
                    details.append(f"cache_{t}_{i} changed past the prompt")
        self.report(f"{label} prefill", ok, "; ".join(details))
        caches = dict(zip(caches, outs[1:]))
        token = ref.logits[:, -1].argmax(-1, keepdim=True)
        for step in range(STEPS):
            ids = torch.cat([ids, token], dim=1)
            mask = torch.cat([mask, torch.ones(b, 1, dtype=torch.long)], dim=1)
            name = f"{label} decode {step + 1} (L={ids.shape[1]})"
            outs = self.dscc_run(name, so, weights, "decode",
                                 {"ids": token, "mask": mask, **caches}, 1 + len(caches))
            if outs is None:
                return
            with torch.no_grad():
                logits = model(input_ids=ids, attention_mask=mask,
                               position_ids=positions(mask)).logits[:, -1]
            ok, detail = compare(outs[0], logits.numpy())
            self.report(name, ok, f"logits: {detail}")
            caches = dict(zip(caches, outs[1:]))
            token = logits.argmax(-1, keepdim=True)

    # -----------------------------------------------------------------------------------------
    # Failures
    # -----------------------------------------------------------------------------------------

    def variant(self, name: str, edit_config=None, edit_tensors=None, dtype=None) -> str:
        """A copy of a small LLaMA checkpoint with its config or tensors edited."""
        src = os.path.join(self.work, "ckpt", "base_llama")
        if not os.path.isdir(src):
            torch.manual_seed(SEED)
            next(a for a in ARCHS if a.name == "llama").make().save_pretrained(src)
        dst = os.path.join(self.work, "ckpt", name)
        shutil.copytree(src, dst)
        if edit_config:
            path = os.path.join(dst, "config.json")
            with open(path) as f:
                config = json.load(f)
            edit_config(config)
            with open(path, "w") as f:
                json.dump(config, f)
        if edit_tensors or dtype:
            path = os.path.join(dst, "model.safetensors")
            tensors = load_file(path)
            if edit_tensors:
                edit_tensors(tensors)
            if dtype:
                tensors = {k: v.to(dtype) for k, v in tensors.items()}
            save_file(tensors, path)
        return dst

    def errors(self) -> None:
        up = "model.layers.1.mlp.up_proj.weight"
        k0 = "model.layers.0.self_attn.k_proj.weight"
        self.expect_failure("error: missing tensor",
                            [self.variant("missing", edit_tensors=lambda t: t.pop(up))],
                            [f"tensor '{up}' is missing (expected shape [128, 64])",
                             "1 tensor problem"])
        self.expect_failure("error: wrong shape",
                            [self.variant("shape", edit_tensors=lambda t: t.update(
                                {k0: torch.zeros(64, 64)}))],
                            [f"tensor '{k0}' has shape [64, 64], expected [32, 64]"])

        def unknown(c):
            c["model_type"] = "t5x"
        self.expect_failure("error: unknown model_type",
                            [self.variant("unknown", edit_config=unknown)],
                            ["model_type 't5x' is not supported", "llama (LlamaForCausalLM)"])

        def several(c):
            c["rope_parameters"] = {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0}
            c["hidden_act"] = "gelu_fast"
            c["num_key_value_heads"] = 3
        self.expect_failure("error: config problems listed together",
                            [self.variant("several", edit_config=several)],
                            ["3 config problems", "rope_type 'llama3'", "'gelu_fast'",
                             "'num_attention_heads' (4) is not a multiple of "
                             "'num_key_value_heads' (3)"])
        self.expect_failure("error: integer weights",
                            [self.variant("int32", dtype=torch.int32)],
                            ["tensors are I32", "floating-point weights"])
        empty = os.path.join(self.work, "ckpt", "empty")
        os.makedirs(empty)
        self.expect_failure("error: no config.json", [empty], ["config.json"], one_line=True)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dscc", required=True, help="the dscc binary")
    ap.add_argument("--filter", help="only the architectures (and `error`s) matching this regex")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per command")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("-v", "--verbose", action="store_true")
    ns = ap.parse_args(argv)
    if not check_dscc_arg("check_hf2dsc.py", {"numeric"}, ns.dscc):
        return 2
    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    work = tempfile.mkdtemp(prefix="dsc-hf2dsc-")
    checker = Hf2dscChecker(IMPORTER, ns.dscc, work, ns.timeout, ns.verbose)
    try:
        for arch in ARCHS:
            if ns.filter and not re.search(ns.filter, arch.name):
                continue
            try:
                checker.arch(arch)
            except Exception as e:  # noqa: BLE001 - a failed architecture, not a crash
                checker.report(arch.name, False, f"{type(e).__name__}: {e}")
        if not ns.filter or re.search(ns.filter, "error"):
            checker.errors()
    finally:
        remove_work(work, ns.keep)
    return tally(checker)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
