#!/usr/bin/env python3
"""Checks importers/torch2dsc.py on Hugging Face transformers models called the way their users
call them (issue 34): each family is built here from a small random config (2 layers, hidden
64, vocabulary 100) at a fixed seed, exported by torch.export with `input_ids` and a padded
`attention_mask` (and `token_type_ids` where the model has them) with dynamic batch B and
sequence S, imported, built once with `dscc build`, and run with `dscc run` at batch 1, odd
lengths (7, 61) and padded rows (rows whose mask is 0 at the end, and at the start). Every
output (the ModelOutput's tensors in order) is compared with transformers eager on the same
inputs. BERT, GPT-2 and Whisper are saved as a .pt2 (whose program returns a ModelOutput) and
imported by the command line (`--dim input_ids.0=B --dim input_ids.1=S`); the others by
`to_dsc`, from the live program.

  text     BERT (with and without token_type_ids), DistilBERT, GPT-2 (with a mask, and with
           ids alone: its packed-sequence check, diff and cumsum), LLaMA, Qwen2, Mistral,
           T5's encoder;
  parts    families built from the same parts, at three shapes: RoBERTa and OPT (positions
           from the mask's cumsum), ALBERT, DeBERTa-v2, BART's encoder, Falcon, Gemma, Phi-3,
           Qwen3, GPT-NeoX; LLaMA with transformers' eager attention; LLaMA with its LM head
           and BERT with a classifier;
  fixed    models whose sequence transformers fixes: Whisper's encoder (conv1d over mel
           frames, dynamic batch) and ViT (dynamic batch).

With `--forms core` the programs are imported after `run_decompositions()` (core ATen)
instead; a family whose decomposition torch itself cannot do (GPT-2 under torch 2.15) is
noted and skipped.

    check_hf_import.py --dscc build/tools/dscc/dscc [--forms export,core] [--filter REGEX]
                       [--keep] [-v]

Prints one line per check (PASS or FAIL, then details), then `N passed, M failed`; exits 1 when
a check failed, 77 (a skip for ctest) when transformers, torch, numpy or safetensors is missing.
The tolerance is harness.py's: |dsc - transformers| <= 1e-4 * (rms + |ref|).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
IMPORTER = os.path.join(SOURCE_DIR, "importers", "torch2dsc.py")
sys.path.insert(0, HERE)
from requirements import skip_unless_installed  # noqa: E402

skip_unless_installed("numpy", "torch", "safetensors", "transformers")  # harness.py needs numpy
import torch  # noqa: E402
import transformers  # noqa: E402
from torch.export import Dim, export  # noqa: E402

from hf_models import randomize  # noqa: E402
from harness import (Checker, check_dscc_arg, compare_outputs, exit_problem,  # noqa: E402
                     remove_work, run, save_inputs, tally)

sys.path.insert(0, os.path.join(SOURCE_DIR, "importers"))
from dscimport import torch_import  # noqa: E402

SEED = 20270134
VOCAB = 100

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
torch.set_num_threads(1)


# ---------------------------------------------------------------------------------------------
# The families
# ---------------------------------------------------------------------------------------------

def _cfg(name: str, **kw):
    return getattr(transformers, name)(**kw)


def _decoder(cls: str, cfg: str, **extra):
    def make():
        return getattr(transformers, cls)(_cfg(cfg, vocab_size=VOCAB, hidden_size=64,
                                               num_hidden_layers=2, num_attention_heads=4,
                                               num_key_value_heads=2, intermediate_size=128,
                                               max_position_embeddings=128, **extra))
    return make


def bert():
    return transformers.BertModel(_cfg("BertConfig", vocab_size=VOCAB, hidden_size=64,
                                       num_hidden_layers=2, num_attention_heads=4,
                                       intermediate_size=128, max_position_embeddings=128,
                                       type_vocab_size=2))


def distilbert():
    return transformers.DistilBertModel(_cfg("DistilBertConfig", vocab_size=VOCAB, dim=64,
                                             n_layers=2, n_heads=4, hidden_dim=128,
                                             max_position_embeddings=128))


def gpt2():
    return transformers.GPT2Model(_cfg("GPT2Config", vocab_size=VOCAB, n_embd=64, n_layer=2,
                                       n_head=4, n_positions=128, bos_token_id=1,
                                       eos_token_id=2))


def roberta():
    return transformers.RobertaModel(_cfg("RobertaConfig", vocab_size=VOCAB, hidden_size=64,
                                          num_hidden_layers=2, num_attention_heads=4,
                                          intermediate_size=128, max_position_embeddings=130,
                                          pad_token_id=1))


def albert():
    return transformers.AlbertModel(_cfg("AlbertConfig", vocab_size=VOCAB, embedding_size=32,
                                         hidden_size=64, num_hidden_layers=2,
                                         num_attention_heads=4, intermediate_size=128,
                                         max_position_embeddings=128))


def deberta_v2():
    return transformers.DebertaV2Model(_cfg("DebertaV2Config", vocab_size=VOCAB, hidden_size=64,
                                            num_hidden_layers=2, num_attention_heads=4,
                                            intermediate_size=128,
                                            max_position_embeddings=128))


def opt():
    return transformers.OPTModel(_cfg("OPTConfig", vocab_size=VOCAB, hidden_size=64,
                                      num_hidden_layers=2, num_attention_heads=4, ffn_dim=128,
                                      max_position_embeddings=128, word_embed_proj_dim=64,
                                      pad_token_id=1, bos_token_id=2, eos_token_id=2))


def falcon():
    return transformers.FalconModel(_cfg("FalconConfig", vocab_size=VOCAB, hidden_size=64,
                                         num_hidden_layers=2, num_attention_heads=4))


def bart_encoder():
    return transformers.BartModel(_cfg("BartConfig", vocab_size=VOCAB, d_model=64,
                                       encoder_layers=2, decoder_layers=1,
                                       encoder_attention_heads=4, decoder_attention_heads=4,
                                       encoder_ffn_dim=128, decoder_ffn_dim=128,
                                       max_position_embeddings=128)).get_encoder()


def t5_encoder():
    return transformers.T5EncoderModel(_cfg("T5Config", vocab_size=VOCAB, d_model=64, d_kv=16,
                                            d_ff=128, num_layers=2, num_heads=4,
                                            relative_attention_num_buckets=8,
                                            relative_attention_max_distance=20))


def whisper_encoder():
    from transformers.models.whisper.modeling_whisper import WhisperEncoder
    return WhisperEncoder(_cfg("WhisperConfig", vocab_size=VOCAB, d_model=64, encoder_layers=2,
                               encoder_attention_heads=4, encoder_ffn_dim=128, decoder_layers=1,
                               decoder_attention_heads=4, decoder_ffn_dim=128, num_mel_bins=16,
                               max_source_positions=16, max_target_positions=32,
                               pad_token_id=0, bos_token_id=1, eos_token_id=2,
                               decoder_start_token_id=1))


def vit():
    return transformers.ViTModel(_cfg("ViTConfig", hidden_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, intermediate_size=128,
                                      image_size=32, patch_size=8, num_channels=3))


def text_inputs(mask=True, token_types=False):
    """The inputs of a text model at (B, S): ids, and a mask as a tokenizer pads a batch: rows
    1, 4, 7, ... keep a random prefix (padded at the end), rows 2, 5, ... a random suffix
    (padded at the start, as for generation: their first queries attend to no key)."""
    def inputs(g, b, s):
        out = {"input_ids": torch.randint(0, VOCAB, (b, s), generator=g)}
        if mask:
            m = torch.ones(b, s, dtype=torch.long)
            for r in range(1, b):
                keep = int(torch.randint(1, s + 1, (1,), generator=g))
                if r % 3 == 1:
                    m[r, keep:] = 0
                elif r % 3 == 2:
                    m[r, :s - keep] = 0
            out["attention_mask"] = m
        if token_types:
            out["token_type_ids"] = torch.randint(0, 2, (b, s), generator=g)
        return out
    return inputs


@dataclass
class Family:
    name: str
    make: Callable
    inputs: Callable                       # (generator, B, S) -> {name: tensor}
    shapes: list[tuple[int, int]]          # (B, S) to run at
    dims: tuple[str, ...] = ("B", "S")     # the dynamic dims of every input, by axis
    call: dict = field(default_factory=dict)   # keyword arguments fixed at export


TEXT_SHAPES = [(1, 7), (2, 61), (3, 7), (1, 1), (4, 13)]
# The families saved as a .pt2 and imported by the command line (the others by to_dsc, from
# the live program: a torch2dsc process takes about 6 s, mostly importing torch).
VIA_PT2 = ("bert", "gpt2", "whisper_encoder")
# For the families built from the same parts, and for every family after
# run_decompositions(): batch 1, an odd length, and rows padded at the end and at the start.
SHORT_SHAPES = [(1, 7), (3, 61), (4, 13)]
NO_CACHE = {"use_cache": False}

FAMILIES = [
    Family("bert", bert, text_inputs(token_types=True), TEXT_SHAPES),
    Family("bert_no_token_types", bert, text_inputs(), TEXT_SHAPES),
    Family("distilbert", distilbert, text_inputs(), TEXT_SHAPES),
    Family("gpt2", gpt2, text_inputs(), TEXT_SHAPES, call=NO_CACHE),
    Family("gpt2_ids_only", gpt2, text_inputs(mask=False), TEXT_SHAPES, call=NO_CACHE),
    Family("llama", _decoder("LlamaModel", "LlamaConfig"), text_inputs(), TEXT_SHAPES,
           call=NO_CACHE),
    Family("qwen2", _decoder("Qwen2Model", "Qwen2Config"), text_inputs(), TEXT_SHAPES,
           call=NO_CACHE),
    Family("mistral", _decoder("MistralModel", "MistralConfig", sliding_window=None),
           text_inputs(), TEXT_SHAPES, call=NO_CACHE),
    Family("t5_encoder", t5_encoder, text_inputs(), TEXT_SHAPES),
    # Built from the same parts: positions from the mask's cumsum (RoBERTa, OPT), factorized
    # embeddings (ALBERT), relative position buckets with gathers (DeBERTa-v2), parallel
    # attention and MLP (Falcon), grouped-query variants (Gemma, Phi-3, Qwen3, GPT-NeoX).
    Family("roberta", roberta, text_inputs(), SHORT_SHAPES),
    Family("albert", albert, text_inputs(token_types=True), SHORT_SHAPES),
    Family("deberta_v2", deberta_v2, text_inputs(token_types=True), SHORT_SHAPES),
    Family("bart_encoder", bart_encoder, text_inputs(), SHORT_SHAPES),
    Family("opt", opt, text_inputs(), SHORT_SHAPES, call=NO_CACHE),
    Family("falcon", falcon, text_inputs(), SHORT_SHAPES, call=NO_CACHE),
    Family("gemma", _decoder("GemmaModel", "GemmaConfig", head_dim=16), text_inputs(),
           SHORT_SHAPES, call=NO_CACHE),
    Family("phi3", _decoder("Phi3Model", "Phi3Config", pad_token_id=0, bos_token_id=1,
                            eos_token_id=2), text_inputs(), SHORT_SHAPES, call=NO_CACHE),
    Family("qwen3", _decoder("Qwen3Model", "Qwen3Config", head_dim=16), text_inputs(),
           SHORT_SHAPES, call=NO_CACHE),
    Family("gpt_neox", _decoder("GPTNeoXModel", "GPTNeoXConfig"), text_inputs(), SHORT_SHAPES,
           call=NO_CACHE),
    # transformers' eager attention (an additive mask of the dtype's minimum, softmax written
    # out) and a model with its head (logits), as generation calls it.
    Family("llama_eager", _decoder("LlamaModel", "LlamaConfig", attn_implementation="eager"),
           text_inputs(), SHORT_SHAPES, call=NO_CACHE),
    Family("llama_causal_lm", _decoder("LlamaForCausalLM", "LlamaConfig"), text_inputs(),
           SHORT_SHAPES, call=NO_CACHE),
    Family("bert_classifier", lambda: transformers.BertForSequenceClassification(
        bert().config), text_inputs(token_types=True), SHORT_SHAPES),
    Family("whisper_encoder", whisper_encoder,
           lambda g, b, s: {"input_features": torch.randn(b, 16, 32, generator=g)},
           [(1, 0), (2, 0), (5, 0)], dims=("B",)),
    Family("vit", vit, lambda g, b, s: {"pixel_values": torch.randn(b, 3, 32, 32, generator=g)},
           [(1, 0), (2, 0), (3, 0)], dims=("B",)),
]


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------

class HFChecker(Checker):
    def family(self, fam: Family, forms: list[str]) -> None:
        torch.manual_seed(SEED)
        model = fam.make().eval()
        randomize(model, SEED + 7)
        g = torch.Generator().manual_seed(SEED)
        example = fam.inputs(g, 2, 8)
        spec = {name: {i: Dim(d, min=1, max=64 if d == "B" else 120)
                       for i, d in enumerate(fam.dims)} for name in example}
        for k in fam.call:
            spec[k] = None
        try:
            ep = export(model, (), {**example, **fam.call}, dynamic_shapes=spec)
        except Exception as e:  # noqa: BLE001 - transformers' code refused by torch.export
            self.report(f"{fam.name} export", False, f"{type(e).__name__}: "
                        f"{str(e).splitlines()[0] if str(e) else ''}")
            return
        for form in forms:
            prog = ep
            if form == "core":
                try:
                    prog = ep.run_decompositions()
                except Exception as e:  # noqa: BLE001 - torch's own decomposition fails
                    print(f"NOTE {fam.name} (core): torch's run_decompositions() fails: "
                          f"{str(e).splitlines()[0] if str(e) else type(e).__name__}")
                    continue
            self.form(fam, model, example, prog, form, spec)

    def form(self, fam: Family, model, example: dict, ep, form: str, spec: dict) -> None:
        name = fam.name if form == "export" else f"{fam.name}_{form}"
        out = os.path.join(self.work, name)
        if fam.name in VIA_PT2:
            # Saved and imported by the command line, which does not import transformers:
            # the program's ModelOutput is read through a stand-in.
            pt2 = os.path.join(self.work, f"{name}.pt2")
            torch.export.save(ep, pt2)
            first = next(iter(example))
            args = [pt2, "-o", out] + [a for i, d in enumerate(fam.dims)
                                       for a in ("--dim", f"{first}.{i}={d}")]
            r = self.cli(args)
            problem = exit_problem(r, "torch2dsc exit")
            self.report(f"{name} import (.pt2)", problem is None,
                        (problem + ("\n" + r.stderr if self.verbose else "")) if problem
                        else r.stdout.strip())
            if problem:
                return
        else:
            try:
                res = torch_import.to_dsc(ep, out, name, dynamic_shapes=spec)
            except torch_import.ImportFailure as e:
                self.report(f"{name} import", False, e.message(name))
                return
            self.report(f"{name} import", True, res.summary(name))
        dsc = os.path.join(out, f"{name}.dsc")
        weights = os.path.join(out, f"{name}.safetensors")
        if self.verbose:
            with open(dsc) as f:
                print(f.read())
        so = os.path.join(out, f"{name}.so")
        r = run([self.dscc, "build", dsc, "-o", so, "-q"], self.timeout)
        problem = exit_problem(r, "dscc build exit")
        if problem:
            self.report(f"{name} dscc build", False, problem)
            return
        shapes = fam.shapes if form == "export" else \
            [sh for sh in fam.shapes if sh in SHORT_SHAPES] or fam.shapes[:2]
        for k, (b, s) in enumerate(shapes):
            self.run_shape(fam, name, model, so, weights, k, b, s)

    def run_shape(self, fam: Family, name: str, model, so: str, weights: str, k: int, b: int,
                  s: int) -> None:
        label = f"{name} B={b}" + (f",S={s}" if "S" in fam.dims else "")
        g = torch.Generator().manual_seed(SEED + 101 * k + len(fam.name))
        inputs = fam.inputs(g, b, s)
        case = os.path.join(self.work, re.sub(r"[^A-Za-z0-9_=-]+", "_", label))
        os.makedirs(case)
        cmd = [self.dscc, "run", so, "--weights", weights, f"--output={case}/out",
               *save_inputs(inputs, case)]
        r = run(cmd, self.timeout)
        problem = exit_problem(r, "dscc run exit")
        if problem:
            self.report(label, False, problem)
            return
        self.report(label, *self.compare_case(model, fam, inputs, os.path.join(case, "out")))

    def compare_case(self, model, fam: Family, inputs: dict, out_dir: str) -> tuple[bool, str]:
        """Compares `dscc run`'s outputs in out_dir with transformers eager's."""
        with torch.no_grad():
            ref = model(**inputs, **fam.call)
        refs = [v for v in ref.to_tuple() if isinstance(v, torch.Tensor)]
        named = [(f"output {i}", t.numpy()) for i, t in enumerate(refs)]
        return compare_outputs(out_dir, named, "transformers")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dscc", required=True, help="the dscc binary")
    ap.add_argument("--filter", help="only the families whose name matches this regex")
    ap.add_argument("--forms", default="export", help="the programs to import: as exported "
                    "and/or after run_decompositions(), export,core (default: export)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per command")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("-v", "--verbose", action="store_true")
    ns = ap.parse_args(argv)
    if not check_dscc_arg("check_hf_import.py", {"numeric"}, ns.dscc):
        return 2
    forms = [f.strip() for f in ns.forms.split(",") if f.strip()]
    if not forms or not set(forms) <= {"export", "core"}:
        print(f"check_hf_import.py: --forms takes export and/or core, got '{ns.forms}'",
              file=sys.stderr)
        return 2
    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    work = tempfile.mkdtemp(prefix="dsc-hf-")
    checker = HFChecker(IMPORTER, ns.dscc, work, ns.timeout, ns.verbose)
    try:
        for fam in FAMILIES:
            if ns.filter and not re.search(ns.filter, fam.name):
                continue
            try:
                checker.family(fam, forms)
            except Exception as e:  # noqa: BLE001 - a failed family, not a crash of the script
                checker.report(fam.name, False, f"{type(e).__name__}: {e}")
    finally:
        remove_work(work, ns.keep)
    return tally(checker)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
