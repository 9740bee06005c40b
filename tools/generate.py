#!/usr/bin/env python3
"""Generates text with a decoder built by dscc: `dscc generate` from text, through the
checkpoint's own tokenizer.

    tools/generate.py MODEL.so --weights W.safetensors --tokenizer CHECKPOINT_DIR
                      (--prompt TEXT | --prompts FILE | --prompt-ids 1,2,3)...
                      [--max-new-tokens N] [--eos ID]... [--ignore-eos]
                      [--greedy | --temperature T --top-k K --top-p P] [--seed N]
                      [--context C] [--threads N] [--bench]
                      [--continuation-only | --jsonl] [--dscc PATH]

Text prompts are encoded with the `tokenizers` package from the checkpoint's tokenizer.json,
by Tokenizer.encode: the special tokens its post-processor adds (LLaMA's BOS) are added, as
transformers' tokenizer adds them (--no-special-tokens leaves them out); --prompt-ids are
passed as they are. The prompts, in the order --prompt, the lines of --prompts, --prompt-ids,
go to `dscc generate --prompts FILE` (dscc at --dscc, else $DSCC, else build/tools/dscc/dscc
in this source tree, else on PATH), and the ids it prints are decoded with the same tokenizer,
skipping special tokens, as `tokenizer.batch_decode(model.generate(...),
skip_special_tokens=True)` decodes them. tokenizers is needed for every run, since the output
is decoded.

Printed on stdout, per prompt: the prompt followed by its continuation, decoded together
(decoding them together keeps the space a tokenizer puts at the start of a word); with
--continuation-only, the continuation alone; with several prompts, each starts with `[N] `.
--jsonl prints one JSON object per prompt instead: prompt_ids, new_ids, text, continuation.

The default --eos is the checkpoint's: `eos_token_id` of generation_config.json, else of
config.json, in the directory of the tokenizer, as transformers' generate takes it.

Exit status: 0 on success; 1 when a file is missing or unreadable, `tokenizers` is not
installed, or `dscc generate` fails (its error is shown); 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

PROG = "generate.py"
SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILT_DSCC = os.path.join(SOURCE_DIR, "build", "tools", "dscc", "dscc")


class Failure(Exception):
    """A problem to report as `generate.py: error: MESSAGE`, exit status 1."""


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog=PROG, description="Generate text with a decoder built by `dscc build "
        "--entry=prefill --entry=decode`, encoding and decoding with the checkpoint's "
        "tokenizer.json; the tokens come from `dscc generate`.")
    ap.add_argument("model", metavar="MODEL.so",
                    help="the library dscc built from hf2dsc's model.dsc")
    ap.add_argument("--weights", required=True, metavar="W.safetensors",
                    help="the model's weights (hf2dsc's model.safetensors)")
    ap.add_argument("--tokenizer", required=True, metavar="PATH",
                    help="the checkpoint's tokenizer.json, or the directory that holds it")
    ap.add_argument("--prompt", action="append", default=[], metavar="TEXT",
                    help="a prompt, as text; repeatable")
    ap.add_argument("--prompts", metavar="FILE", help="one text prompt per line")
    ap.add_argument("--prompt-ids", action="append", default=[], metavar="1,2,3",
                    help="a prompt as token ids, passed as they are (no BOS added); repeatable")
    ap.add_argument("--no-special-tokens", action="store_true",
                    help="encode without the special tokens the tokenizer's post-processor adds")
    ap.add_argument("--max-new-tokens", type=int, metavar="N",
                    help="tokens to generate per prompt (dscc generate's default, 32)")
    ap.add_argument("--eos", type=int, action="append", default=None, metavar="ID",
                    help="stop a prompt once it generates ID; repeatable (default: the "
                    "checkpoint's eos_token_id)")
    ap.add_argument("--ignore-eos", action="store_true", help="no eos: always N tokens")
    ap.add_argument("--greedy", action="store_true", help="the most likely token (the default)")
    ap.add_argument("--temperature", type=float, metavar="T")
    ap.add_argument("--top-k", type=int, metavar="K")
    ap.add_argument("--top-p", type=float, metavar="P")
    ap.add_argument("--seed", type=int, metavar="N", help="the sampler's seed (default 0)")
    ap.add_argument("--context", type=int, metavar="C", help="the caches' length")
    ap.add_argument("--threads", type=int, metavar="N", help="the runtime's thread count")
    ap.add_argument("--bench", action="store_true",
                    help="dscc generate's prefill and decode speeds, on stderr")
    out = ap.add_mutually_exclusive_group()
    out.add_argument("--continuation-only", action="store_true",
                     help="print only the generated text, not the prompt before it")
    out.add_argument("--jsonl", action="store_true",
                     help="one JSON object per prompt: prompt_ids, new_ids, text, continuation")
    ap.add_argument("--dscc", metavar="PATH", help="the dscc to run (default: $DSCC, else "
                    "build/tools/dscc/dscc in this source tree, else dscc on PATH)")
    ns = ap.parse_args(argv)
    if not (ns.prompt or ns.prompts or ns.prompt_ids):
        ap.error("no prompt: give --prompt, --prompts or --prompt-ids")
    if ns.eos is not None and ns.ignore_eos:
        ap.error("--eos and --ignore-eos exclude each other")
    return ns


def require_file(path: str, what: str) -> None:
    if not os.path.isfile(path):
        raise Failure(f"{what} {path} does not exist" if not os.path.exists(path)
                      else f"{what} {path} is not a file")


def tokenizer_paths(path: str) -> tuple[str, str]:
    """tokenizer.json and the checkpoint directory, from --tokenizer."""
    if os.path.isdir(path):
        file = os.path.join(path, "tokenizer.json")
        if not os.path.isfile(file):
            raise Failure(f"no tokenizer.json in {path}")
        return file, path
    require_file(path, "tokenizer")
    return path, os.path.dirname(path) or "."


def load_tokenizer(path: str):
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise Failure("the tokenizers package is not installed: run "
                      "tools/scripts/install_python_deps.sh --tests (it comes with transformers), "
                      "or pip install tokenizers") from None
    try:
        tokenizer = Tokenizer.from_file(path)
    except Exception as e:  # noqa: BLE001 - the Rust library's errors are plain Exceptions
        raise Failure(f"cannot read tokenizer {path}: {e}") from None
    # A tokenizer.json may ask for padding or truncation; generate pads itself and needs
    # every token of a prompt.
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def checkpoint_eos(directory: str) -> list[int]:
    """eos_token_id of generation_config.json, else of config.json, as a list (empty: none)."""
    for name in ("generation_config.json", "config.json"):
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                config = json.load(f)
        except (OSError, ValueError) as e:
            raise Failure(f"cannot read {path}: {e}") from None
        eos = config.get("eos_token_id") if isinstance(config, dict) else None
        if eos is None:
            continue
        ids = eos if isinstance(eos, list) else [eos]
        if not all(isinstance(i, int) and i >= 0 for i in ids):
            raise Failure(f"{path}: eos_token_id is {eos!r}, not a token id or a list of them")
        return ids
    return []


def parse_ids(text: str, where: str) -> list[int]:
    words = text.replace(",", " ").split()
    if not words or not all(w.isdigit() for w in words):
        raise Failure(f"{where} expects token ids such as 1,2,3, got '{text}'")
    return [int(w) for w in words]


def read_prompt_file(path: str) -> list[str]:
    require_file(path, "prompts file")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise Failure(f"cannot read {path}: {e}") from None


def encode_prompts(ns: argparse.Namespace, tokenizer) -> list[list[int]]:
    texts = ns.prompt + (read_prompt_file(ns.prompts) if ns.prompts else [])
    prompts = []
    for number, text in enumerate(texts, 1):
        ids = tokenizer.encode(text, add_special_tokens=not ns.no_special_tokens).ids
        if not ids:
            raise Failure(f"prompt {number} ('{text}') encodes to no tokens")
        prompts.append(ids)
    return prompts + [parse_ids(p, "--prompt-ids") for p in ns.prompt_ids]


def find_dscc(flag: str | None) -> str:
    if flag or os.environ.get("DSCC"):
        path = flag or os.environ["DSCC"]
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            source = "--dscc" if flag else "$DSCC"
            raise Failure(f"dscc {path} ({source}) is not an executable file")
        return path
    if os.access(BUILT_DSCC, os.X_OK):
        return BUILT_DSCC
    on_path = shutil.which("dscc")
    if on_path:
        return on_path
    raise Failure(f"no dscc: not built at {BUILT_DSCC} and none on PATH; build it "
                  "(tools/scripts/build.sh) or give --dscc PATH")


def dscc_flags(ns: argparse.Namespace, eos: list[int]) -> list[str]:
    flags = [f"--eos={i}" for i in eos]
    for name in ("max_new_tokens", "temperature", "top_k", "top_p", "seed", "context", "threads"):
        value = getattr(ns, name)
        if value is not None:
            flags.append(f"--{name.replace('_', '-')}={value}")
    return flags + [f for f, on in (("--greedy", ns.greedy), ("--bench", ns.bench)) if on]


def run_dscc(dscc: str, ns: argparse.Namespace, prompts: list[list[int]], eos: list[int]):
    """The ids `dscc generate` generated for each prompt."""
    with tempfile.TemporaryDirectory(prefix="dsc_generate_") as work:
        prompts_file = os.path.join(work, "prompts.txt")
        with open(prompts_file, "w") as f:
            f.write("".join(" ".join(map(str, p)) + "\n" for p in prompts))
        cmd = [dscc, "generate", ns.model, "--weights", ns.weights, "--prompts", prompts_file,
               *dscc_flags(ns, eos)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                               stdin=subprocess.DEVNULL)
        except OSError as e:
            raise Failure(f"cannot run {dscc}: {e.strerror or e}") from None
    if r.returncode != 0:
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()] or ["(no message)"]
        raise Failure(f"dscc generate failed (exit {r.returncode}): " + "\n".join(lines))
    sys.stderr.write(r.stderr)  # --bench's lines
    rows = r.stdout.splitlines()
    if len(rows) != len(prompts):
        raise Failure(f"dscc generate printed {len(rows)} lines of ids for {len(prompts)} prompts")
    try:
        return [[int(t) for t in row.split()] for row in rows]
    except ValueError:
        raise Failure("dscc generate printed a line that is no list of ids: "
                      f"{r.stdout!r}") from None


def completion(tokenizer, prompt: list[int], new: list[int]) -> dict:
    """The prompt and its continuation decoded together, and the continuation alone: the text
    after the decoded prompt (decoding the new ids alone would drop a leading space)."""
    text = tokenizer.decode(prompt + new, skip_special_tokens=True)
    head = tokenizer.decode(prompt, skip_special_tokens=True)
    continuation = text[len(head):] if text.startswith(head) else \
        tokenizer.decode(new, skip_special_tokens=True)
    return {"prompt_ids": prompt, "new_ids": new, "text": text, "continuation": continuation}


def print_results(ns: argparse.Namespace, results: list[dict]) -> None:
    for number, result in enumerate(results, 1):
        if ns.jsonl:
            print(json.dumps(result, ensure_ascii=False))
            continue
        text = result["continuation" if ns.continuation_only else "text"]
        print(f"[{number}] {text}" if len(results) > 1 else text)


def main(argv: list[str]) -> int:
    ns = parse_args(argv)
    try:
        require_file(ns.model, "model")
        require_file(ns.weights, "weights file")
        tokenizer_file, checkpoint = tokenizer_paths(ns.tokenizer)
        dscc = find_dscc(ns.dscc)
        tokenizer = load_tokenizer(tokenizer_file)
        prompts = encode_prompts(ns, tokenizer)
        eos = [] if ns.ignore_eos else ns.eos if ns.eos is not None else checkpoint_eos(checkpoint)
        generated = run_dscc(dscc, ns, prompts, eos)
        print_results(ns, [completion(tokenizer, p, g) for p, g in zip(prompts, generated)])
    except Failure as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # stdout closed early (| head): not an error worth a message
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
