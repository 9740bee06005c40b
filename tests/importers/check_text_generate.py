#!/usr/bin/env python3
"""Checks tools/generate.py (text in, text out through `dscc generate`) against transformers'
`generate` decoded with the same tokenizer.

Nothing is downloaded. A BPE tokenizer (Metaspace words, as LLaMA's SentencePiece writes them)
is trained with the tokenizers package on a few sentences, to exactly the model's vocabulary
of 120 ids (<unk>, <s>, </s>, <pad> first; its post-processor adds <s> to a prompt, as LLaMA's
does), and saved with transformers' PreTrainedTokenizerFast into the checkpoint directory of a
small random LlamaForCausalLM (2 layers, hidden 64, grouped-query attention, eos 2), which is
imported with importers/hf2dsc.py and built with `dscc build --entry=prefill --entry=decode`.
Then:

  batch     two prompts of different lengths (--prompts FILE, --jsonl): the prompt ids equal
            the transformers tokenizer's (BOS included), and each text equals
            `batch_decode(model.generate(do_sample=False), skip_special_tokens=True)` for the
            prompts left-padded (padding_side='left'), 16 new tokens;
  plain     the same run's default output: `[1] TEXT` and `[2] TEXT`;
  one       one --prompt (the tokenizer given as the file): stdout is the text; with
            --continuation-only, the text after the prompt; --bench adds dscc's speeds;
  eos       the tokenizer given as a directory whose generation_config.json names the third
            greedy token as eos_token_id: the text equals transformers' with that eos;
and the failures, each `generate.py: error:` with exit status 1 and no traceback: a tokenizer
file that does not exist, a directory without tokenizer.json, `dscc generate` failing (a weight
missing; its message shown) and the tokenizers package not importable.

    check_text_generate.py --dscc build/tools/dscc/dscc [--keep]

Prints one line per check, then `N passed, M failed`; exits 1 when a check failed, 77 (a skip
for ctest) when torch, transformers, tokenizers, numpy or safetensors is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
IMPORTER = os.path.join(SOURCE_DIR, "importers", "hf2dsc.py")
GENERATE = os.path.join(SOURCE_DIR, "tools", "generate.py")
sys.path.insert(0, HERE)
from requirements import skip_unless_installed  # noqa: E402

skip_unless_installed("numpy", "torch", "safetensors", "transformers", "tokenizers")
import tokenizers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.numpy import load_file, save_file  # noqa: E402

from harness import (Tally, crash_reason, first_line, hf2dsc_build, remove_work,  # noqa: E402
                     report_failure, run)

SEED = 20271130
VOCAB = 120
NEW_TOKENS = 16
SPECIALS = ["<unk>", "<s>", "</s>", "<pad>"]
CORPUS = [
    "the cat sat on the mat.",
    "a dog ran in the park, and the cat slept under a tree.",
    "once upon a time there was a small model that generated text.",
    "the quick brown fox jumps over the lazy dog!",
    "what is the answer? it is forty two, said the computer.",
]
PROMPTS = ["once upon a time the cat", "the quick brown dog ran over the lazy fox and the"]
TIMEOUT = 300

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()
torch.set_num_threads(1)

# Runs generate.py with the tokenizers package made unimportable.
WITHOUT_TOKENIZERS = ("import runpy, sys; sys.modules['tokenizers'] = None; "
                      "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")


def train_tokenizer(path: str) -> transformers.PreTrainedTokenizerFast:
    """A BPE tokenizer of VOCAB ids saved into the checkpoint directory `path`."""
    tok = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Metaspace()
    tok.decoder = tokenizers.decoders.Metaspace()
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=SPECIALS,
                                             show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    tok.post_processor = tokenizers.processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", SPECIALS.index("<s>"))])
    wrapped = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>",
        pad_token="<pad>", padding_side="left")
    wrapped.save_pretrained(path)
    return wrapped


def make_model(path: str) -> transformers.LlamaForCausalLM:
    config = transformers.LlamaConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
        bos_token_id=SPECIALS.index("<s>"), eos_token_id=SPECIALS.index("</s>"),
        pad_token_id=SPECIALS.index("<pad>"))
    torch.manual_seed(SEED)
    model = transformers.LlamaForCausalLM(config).eval()
    model.save_pretrained(path)
    return model


def reference(model, tokenizer, prompts: list[str], **generate_args):
    """transformers' greedy texts for the prompts, left-padded, and the generated ids."""
    enc = tokenizer(prompts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=NEW_TOKENS, do_sample=False, **generate_args)
    return tokenizer.batch_decode(out, skip_special_tokens=True), out[:, enc["input_ids"].shape[1]:]


class Generate:
    def __init__(self, dscc: str, so: str, weights: str):
        self.dscc, self.so, self.weights = dscc, so, weights

    def __call__(self, tokenizer: str, *flags: str, weights: str | None = None, python=()):
        """tools/generate.py on the model (its weights, or `weights`) with NEW_TOKENS tokens;
        `python` is arguments for the interpreter before the script."""
        return run([sys.executable, *python, GENERATE, self.so,
                    "--weights", weights or self.weights, "--tokenizer", tokenizer,
                    "--max-new-tokens", str(NEW_TOKENS), "--dscc", self.dscc, *flags], TIMEOUT)


def ok_problem(r) -> str | None:
    return crash_reason(r) or (f"exit {r.rc}: {first_line(r.stderr)}" if r.rc else None)


def jsonl(r) -> list[dict]:
    return [json.loads(line) for line in r.stdout.splitlines()]


def expect_error(tally: Tally, name: str, r, *must_say: str) -> None:
    report_failure(tally, name, r, "generate.py: error: ", list(must_say))


def build(tally: Tally, dscc: str, work: str):
    ckpt, out = os.path.join(work, "ckpt"), os.path.join(work, "out")
    tokenizer = train_tokenizer(ckpt)
    size = len(tokenizer)
    if size != VOCAB:
        tally.report("the tokenizer", f"trained to {size} ids, expected {VOCAB}")
        return None
    model = make_model(ckpt)
    so = os.path.join(work, "model.so")
    problem = hf2dsc_build(IMPORTER, dscc, ckpt, out, so, ["prefill", "decode"], TIMEOUT)
    if problem:
        tally.report("import and build", problem)
        return None
    return ckpt, model, tokenizer, Generate(dscc, so, os.path.join(out, "model.safetensors"))


def check_batch(tally: Tally, work: str, ckpt: str, model, tokenizer, gen: Generate) -> None:
    prompts = os.path.join(work, "prompts.txt")
    with open(prompts, "w") as f:
        f.write("".join(p + "\n" for p in PROMPTS))
    want, _ = reference(model, tokenizer, PROMPTS)
    tokenizer_file = os.path.join(ckpt, "tokenizer.json")
    r = gen(tokenizer_file, "--prompts", prompts, "--jsonl")
    problem = ok_problem(r)
    if not problem:
        got = jsonl(r)
        ids = [tokenizer(p)["input_ids"] for p in PROMPTS]
        if [g["prompt_ids"] for g in got] != ids:
            problem = f"prompt ids {[g['prompt_ids'] for g in got]} != transformers' {ids}"
        elif [g["text"] for g in got] != want:
            problem = f"texts {[g['text'] for g in got]} != transformers' {want}"
    tally.report(f"batch of 2 ({', '.join(str(len(tokenizer(p)['input_ids'])) for p in PROMPTS)} "
                 f"tokens), {NEW_TOKENS} greedy tokens: text equals transformers'", problem)

    r = gen(tokenizer_file, "--prompts", prompts)
    plain = "".join(f"[{i}] {t}\n" for i, t in enumerate(want, 1))
    problem = ok_problem(r) or (None if r.stdout == plain else f"{r.stdout!r} != {plain!r}")
    tally.report("the default output: [N] and the text per prompt", problem)


def check_one(tally: Tally, ckpt: str, model, tokenizer, gen: Generate) -> None:
    tokenizer_file = os.path.join(ckpt, "tokenizer.json")
    [want], _ = reference(model, tokenizer, PROMPTS[:1])
    r = gen(tokenizer_file, "--prompt", PROMPTS[0])
    problem = ok_problem(r) or (None if r.stdout == want + "\n" else f"{r.stdout!r} != {want!r}")
    tally.report("one --prompt: the text", problem)

    head = tokenizer.decode(tokenizer(PROMPTS[0])["input_ids"], skip_special_tokens=True)
    r = gen(tokenizer_file, "--prompt", PROMPTS[0], "--continuation-only", "--bench")
    problem = ok_problem(r)
    if not problem and not (want.startswith(head) and r.stdout == want[len(head):] + "\n"):
        problem = f"{r.stdout!r} is not what follows {head!r} in {want!r}"
    if not problem and not all(s in r.stderr for s in ("prefill:", "decode:")):
        problem = f"--bench: no prefill and decode lines on stderr: {r.stderr!r}"
    tally.report("--continuation-only, --bench", problem)


def check_default_eos(tally: Tally, work: str, ckpt: str, model, tokenizer, gen: Generate) -> None:
    _, new = reference(model, tokenizer, PROMPTS)
    eos = int(new[0][2])
    directory = os.path.join(work, "eos_tokenizer")
    os.makedirs(directory)
    shutil.copy(os.path.join(ckpt, "tokenizer.json"), directory)
    with open(os.path.join(directory, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": eos}, f)
    want, _ = reference(model, tokenizer, PROMPTS, eos_token_id=eos)
    r = gen(directory, "--prompt", PROMPTS[0], "--prompt", PROMPTS[1], "--jsonl")
    problem = ok_problem(r)
    if not problem:
        got = jsonl(r)
        if got[0]["new_ids"][-1] != eos or len(got[0]["new_ids"]) > 3:
            problem = f"prompt 1 went on past eos {eos}: {got[0]['new_ids']}"
        elif [g["text"] for g in got] != want:
            problem = f"texts {[g['text'] for g in got]} != transformers' {want}"
    tally.report(f"eos_token_id {eos} from generation_config.json: text equals transformers'",
                 problem)


def check_errors(tally: Tally, work: str, ckpt: str, gen: Generate) -> None:
    tokenizer_file = os.path.join(ckpt, "tokenizer.json")
    missing = os.path.join(work, "nowhere", "tokenizer.json")
    expect_error(tally, "a tokenizer file that does not exist", gen(missing, "--prompt", "the"),
                 f"tokenizer {missing} does not exist")
    expect_error(tally, "a directory without tokenizer.json", gen(work, "--prompt", "the"),
                 f"no tokenizer.json in {work}")

    tensors = load_file(gen.weights)
    dropped = sorted(tensors)[0]
    del tensors[dropped]
    partial = os.path.join(work, "partial.safetensors")
    save_file(tensors, partial)
    expect_error(tally, "dscc generate failing (a weight missing): its error shown",
                 gen(tokenizer_file, "--prompt", "the", weights=partial),
                 "dscc generate failed (exit 1): dscc generate: error: ", f"no tensor '{dropped}'")
    expect_error(tally, "the tokenizers package missing",
                 gen(tokenizer_file, "--prompt", "the", python=("-c", WITHOUT_TOKENIZERS)),
                 "the tokenizers package is not installed: run "
                 "tools/scripts/install_python_deps.sh")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dscc", required=True)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ns = ap.parse_args()
    work = tempfile.mkdtemp(prefix="dsc_text_generate_")
    tally = Tally()
    try:
        built = build(tally, ns.dscc, work)
        if built:
            ckpt, model, tokenizer, gen = built
            check_batch(tally, work, ckpt, model, tokenizer, gen)
            check_one(tally, ckpt, model, tokenizer, gen)
            check_default_eos(tally, work, ckpt, model, tokenizer, gen)
            check_errors(tally, work, ckpt, gen)
    finally:
        remove_work(work, ns.keep)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
