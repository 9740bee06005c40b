#!/usr/bin/env python3
"""Checks `dscc generate` on checkpoints imported by importers/hf2dsc.py, against transformers'
own `generate`.

Each decoder family is built from a small random config (2 layers, hidden 64, vocabulary 97)
at a fixed seed and saved with `save_pretrained`: LlamaForCausalLM with grouped-query attention
(2 key/value heads for 4 query heads), GPT2LMHeadModel (tied embeddings, learned positions) and
Qwen2ForCausalLM (q/k/v biases). Each is imported with hf2dsc, built once with
`dscc build --entry=prefill --entry=decode`, and then:

  greedy    `dscc generate` at batch 1 (a prompt of 5) and at batch 3 (prompts of 5, 2 and 7
            tokens, left-padded) must equal `model.generate(do_sample=False)` token for token,
            32 new tokens each;
  eos       with --eos set to the third greedy token of the batch-1 prompt, the row stops
            there, the eos token kept;
  sampling  --temperature 0.8 --top-k 20 --top-p 0.9 --seed 7 twice gives the same tokens,
            and a run with --seed 8 differs (over 32 tokens at batch 3);
and the failures, each a clean `dscc generate: error:` with exit status 1: a model without
`prefill` (an encoder), a weights file without a tensor the model takes, a prompts file with a
word that is no id, and no prompt.

    check_hf_generate.py --dscc build/tools/dscc/dscc [--keep] [-v]

Prints one line per check, then `N passed, M failed`; exits 1 when a check failed, 77 (a skip
for ctest) when transformers, torch, numpy or safetensors is missing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
IMPORTER = os.path.join(SOURCE_DIR, "importers", "hf2dsc.py")
sys.path.insert(0, HERE)
from requirements import skip_unless_installed  # noqa: E402

skip_unless_installed("numpy", "torch", "safetensors", "transformers")
import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.numpy import load_file, save_file  # noqa: E402

from harness import (Tally, crash_reason, first_line, hf2dsc_build, remove_work,  # noqa: E402
                     report_failure, run)

SEED = 20271129
VOCAB = 97
NEW_TOKENS = 32
PROMPTS = [[1, 2, 3, 4, 5], [7, 8], [9, 10, 11, 12, 13, 14, 15]]
TIMEOUT = 600

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
torch.set_num_threads(1)


def decoders():
    llama = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    return {
        "llama": (transformers.LlamaForCausalLM, transformers.LlamaConfig(**llama)),
        "qwen2": (transformers.Qwen2ForCausalLM,
                  transformers.Qwen2Config(**llama, tie_word_embeddings=True)),
        "gpt2": (transformers.GPT2LMHeadModel,
                 transformers.GPT2Config(vocab_size=VOCAB, n_embd=64, n_layer=2, n_head=4,
                                         n_positions=128)),
    }


def reference(model, prompts: list[list[int]]) -> list[list[int]]:
    """transformers' greedy tokens for left-padded prompts."""
    S = max(map(len, prompts))
    ids = torch.tensor([[0] * (S - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (S - len(p)) + [1] * len(p) for p in prompts])
    with torch.no_grad():
        out = model.generate(ids, attention_mask=mask, max_new_tokens=NEW_TOKENS, do_sample=False,
                             eos_token_id=None, pad_token_id=0)
    return [[int(t) for t in row[S:]] for row in out]


class Generate:
    def __init__(self, dscc: str, so: str, weights: str, work: str):
        self.dscc, self.so, self.weights, self.work = dscc, so, weights, work

    def __call__(self, prompts: list[list[int]], *flags: str, weights: str | None = None):
        path = os.path.join(self.work, "prompts.txt")
        with open(path, "w") as f:
            f.write("".join(",".join(map(str, p)) + "\n" for p in prompts))
        return run([self.dscc, "generate", self.so, "--weights", weights or self.weights,
                    "--prompts", path, "--max-new-tokens", str(NEW_TOKENS), *flags], TIMEOUT)


def tokens(r) -> list[list[int]] | None:
    if r.rc != 0:
        return None
    return [[int(t) for t in line.split()] for line in r.stdout.splitlines()]


def problem_of(r, want) -> str | None:
    crash = crash_reason(r)
    if crash:
        return crash
    got = tokens(r)
    if got is None:
        return f"exit {r.rc}: {first_line(r.stderr)}"
    if got != want:
        return f"dsc {got} != transformers {want}"
    return None


def expect_error(tally: Tally, name: str, r, must_say: str) -> None:
    report_failure(tally, name, r, "dscc generate: error: ", [must_say])


def import_and_build(tally: Tally, dscc: str, name: str, cls, config, work: str, entries):
    torch.manual_seed(SEED)
    model = cls(config).eval()
    ckpt, out = os.path.join(work, name + "_ckpt"), os.path.join(work, name)
    model.save_pretrained(ckpt)
    so = os.path.join(work, name + ".so")
    problem = hf2dsc_build(IMPORTER, dscc, ckpt, out, so, entries, TIMEOUT)
    if problem:
        tally.report(f"{name} import and build", problem)
        return None
    return model, so, os.path.join(out, "model.safetensors")


def check_decoder(tally: Tally, dscc: str, name: str, cls, config, work: str) -> None:
    built = import_and_build(tally, dscc, name, cls, config, work, ["prefill", "decode"])
    if not built:
        return
    model, so, weights = built
    gen = Generate(dscc, so, weights, work)
    one = reference(model, PROMPTS[:1])
    tally.report(f"{name} greedy, batch 1", problem_of(gen(PROMPTS[:1]), one))
    tally.report(f"{name} greedy, batch 3 of lengths 5, 2, 7", problem_of(gen(PROMPTS), reference(model, PROMPTS)))
    eos = one[0][2]
    stop = one[0][: one[0].index(eos) + 1]
    tally.report(f"{name} --eos {eos}", problem_of(gen(PROMPTS[:1], "--eos", str(eos)), [stop]))
    sample = ["--temperature", "0.8", "--top-k", "20", "--top-p", "0.9"]
    first, again = gen(PROMPTS, *sample, "--seed", "7"), gen(PROMPTS, *sample, "--seed", "7")
    other = gen(PROMPTS, *sample, "--seed", "8")
    problem = problem_of(again, tokens(first)) if tokens(first) else f"exit {first.rc}: {first_line(first.stderr)}"
    if not problem and tokens(other) == tokens(first):
        problem = "--seed 8 gave the tokens of --seed 7"
    tally.report(f"{name} sampling is reproducible by its seed", problem)

    if name == "llama":
        tensors = load_file(weights)
        dropped = sorted(tensors)[0]
        del tensors[dropped]
        partial = os.path.join(work, "partial.safetensors")
        save_file(tensors, partial)
        expect_error(tally, "a weight missing", gen(PROMPTS[:1], weights=partial), f"no tensor '{dropped}'")
        bad = os.path.join(work, "bad_prompts.txt")
        with open(bad, "w") as f:
            f.write("1,2,x\n")
        expect_error(tally, "a prompt that is no list of ids",
                     run([dscc, "generate", so, "--weights", weights, "--prompts", bad], TIMEOUT),
                     "bad_prompts.txt:1: not a list of token ids")
        expect_error(tally, "no prompt", run([dscc, "generate", so, "--weights", weights], TIMEOUT),
                     "no prompt")


def check_encoder_refused(tally: Tally, dscc: str, work: str) -> None:
    config = transformers.BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=1,
                                     num_attention_heads=4, intermediate_size=128)
    built = import_and_build(tally, dscc, "bert", transformers.BertModel, config, work, ["forward"])
    if not built:
        return
    _, so, weights = built
    expect_error(tally, "an encoder (no prefill)", Generate(dscc, so, weights, work)(PROMPTS[:1]),
                 "has no 'prefill' entry")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dscc", required=True)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ns = ap.parse_args()
    work = tempfile.mkdtemp(prefix="dsc_hf_generate_")
    tally = Tally()
    try:
        for name, (cls, config) in decoders().items():
            check_decoder(tally, ns.dscc, name, cls, config, work)
        check_encoder_refused(tally, ns.dscc, work)
    finally:
        remove_work(work, ns.keep)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
