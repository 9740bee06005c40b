#!/usr/bin/env python3
"""Mutated transformers checkpoints and quantized weight files (issue 40, item 6).

Three small checkpoints (GPT-2, LLaMA, BERT) written by save_pretrained are mutated at random:
a config.json field deleted or given a value of another type or range, a tensor renamed,
dropped, added, reshaped or given another dtype, the safetensors file cut short or its header
garbled. hf2dsc must end either in an import whose model.dsc `dscc check` accepts, or in one
clean `hf2dsc: error:` line with exit status 1; an internal error, a traceback or a crash
fails. Then a model imported with --quantize int4 is run by `dscc run --weights` on mutated
copies of its quantized weight file (the packed values' or scales' dtype, shape or name
changed, the file cut short): each run must succeed or end in one `error:` message.

    mutate_checkpoints.py --dscc build/tools/dscc/dscc [--mutations N] [--seed S]

Exits 1 on the first failure (printing the mutation), 77 (a skip for ctest) when torch,
transformers or safetensors is missing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "importers"))

try:
    import numpy as np
    import torch
    import transformers
    from safetensors.numpy import load_file, save_file
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

import hf2dsc  # noqa: E402

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
VOCAB = 100


def checkpoints(work: str) -> dict[str, str]:
    torch.manual_seed(0)
    models = {
        "gpt2": transformers.GPT2LMHeadModel(transformers.GPT2Config(
            vocab_size=VOCAB, n_embd=64, n_layer=2, n_head=4, n_positions=64)),
        "llama": transformers.LlamaForCausalLM(transformers.LlamaConfig(
            vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, intermediate_size=128, max_position_embeddings=128)),
        "bert": transformers.BertModel(transformers.BertConfig(
            vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=128, max_position_embeddings=64)),
    }
    out = {}
    for name, model in models.items():
        path = os.path.join(work, "base", name)
        with contextlib.redirect_stderr(io.StringIO()):
            model.save_pretrained(path)
        out[name] = path
    return out


ODD_VALUES = [None, "text", -1, 0, 1, 3.5, 10**12, [], {}, True, [1, 2]]


def mutate_config(rng: random.Random, path: str) -> str:
    with open(os.path.join(path, "config.json")) as f:
        config = json.load(f)
    key = rng.choice(sorted(config))
    if rng.random() < 0.2:
        del config[key]
        what = f"config.json: '{key}' deleted"
    else:
        value = rng.choice(ODD_VALUES)
        config[key] = value
        what = f"config.json: '{key}' = {json.dumps(value)}"
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config, f)
    return what


def mutate_tensors(rng: random.Random, path: str) -> str:
    file = os.path.join(path, "model.safetensors")
    kind = rng.choice(["rename", "drop", "add", "reshape", "dtype", "scalar", "truncate",
                       "header"])
    if kind == "truncate":
        size = os.path.getsize(file)
        cut = rng.randrange(0, size)
        with open(file, "r+b") as f:
            f.truncate(cut)
        return f"model.safetensors cut to {cut} bytes"
    if kind == "header":
        with open(file, "r+b") as f:
            f.seek(8 + rng.randrange(0, 64))
            f.write(bytes([rng.randrange(256)]))
        return "model.safetensors: a byte of the header changed"
    try:
        tensors = load_file(file)
    except Exception:  # noqa: BLE001 - corrupted by an earlier mutation: leave it so
        return "nothing more (the file is already corrupt)"
    name = rng.choice(sorted(tensors))
    if kind == "rename":
        new = name.replace("weight", "bias") if "weight" in name else name + ".x"
        tensors[new] = tensors.pop(name)
        what = f"'{name}' renamed '{new}'"
    elif kind == "drop":
        del tensors[name]
        what = f"'{name}' dropped"
    elif kind == "add":
        tensors["extra." + name] = tensors[name].copy()
        what = f"'extra.{name}' added"
    elif kind == "reshape":
        t = tensors[name]
        tensors[name] = np.ascontiguousarray(t[:-1] if t.ndim and t.shape[0] > 1 else t.reshape(-1)[:1])
        what = f"'{name}' reshaped to {tensors[name].shape}"
    elif kind == "dtype":
        dtype = rng.choice([np.int32, np.float64, np.float16, np.int8, np.uint8])
        tensors[name] = tensors[name].astype(dtype)
        what = f"'{name}' stored as {np.dtype(dtype).name}"
    else:
        tensors[name] = np.array(1.5, dtype=tensors[name].dtype)
        what = f"'{name}' a scalar"
    save_file(tensors, file)
    return what


def import_checkpoint(src: str, out: str, extra: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = hf2dsc.main([src, "-o", out] + extra)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
    return rc, err.getvalue()


def clean_failure(rc: int, stderr: str, prefix: str) -> str | None:
    """None when `rc`/`stderr` is a clean failure, else what is wrong with it."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    if rc != 1:
        return f"exit status {rc}"
    if "Traceback" in stderr or "internal error" in stderr:
        return "an internal error"
    if not any(prefix in line for line in lines):
        return f"no '{prefix}' line"
    return None


def fuzz_imports(args, rng: random.Random, bases: dict[str, str], work: str) -> int:
    accepted = refused = 0
    for i in range(args.mutations):
        arch = rng.choice(sorted(bases))
        src = os.path.join(work, "mutant")
        shutil.rmtree(src, ignore_errors=True)
        shutil.copytree(bases[arch], src)
        whats = [mutate_config(rng, src) if rng.random() < 0.5 else mutate_tensors(rng, src)
                 for _ in range(rng.choice([1, 1, 2]))]
        out = os.path.join(work, "out")
        shutil.rmtree(out, ignore_errors=True)
        extra = rng.choice([[], [], ["--quantize", "int8"], ["--dtype", "bf16"]])
        rc, stderr = import_checkpoint(src, out, extra)
        label = f"mutation {i} ({arch} {' '.join(extra)}): {'; '.join(whats)}"
        if rc == 0:
            check = subprocess.run([args.dscc, "check", os.path.join(out, "model.dsc")],
                                   capture_output=True, text=True)
            if check.returncode != 0:
                print(f"FAIL {label}: imported, but `dscc check` refuses the model:\n"
                      f"{check.stderr[:2000]}")
                return 1
            accepted += 1
            continue
        problem = clean_failure(rc, stderr, "hf2dsc: error:")
        if problem:
            print(f"FAIL {label}: {problem}:\n{stderr[:2000]}")
            return 1
        refused += 1
    print(f"PASS {args.mutations} mutated checkpoints: {accepted} imported and checked, "
          f"{refused} refused with one clean error")
    return 0


def fuzz_quantized(args, rng: random.Random, bases: dict[str, str], work: str) -> int:
    out = os.path.join(work, "quantized")
    rc, stderr = import_checkpoint(bases["llama"], out, ["--quantize", "int4"])
    if rc != 0:
        print(f"FAIL the int4 import of llama: {stderr}")
        return 1
    model = os.path.join(out, "model.dsc")
    so = os.path.join(out, "model.so")
    built = subprocess.run([args.dscc, "build", model, "-o", so, "-q"], capture_output=True,
                           text=True)
    if built.returncode != 0:
        print(f"FAIL building the int4 model: {built.stderr}")
        return 1
    original = os.path.join(out, "model.safetensors")
    base_run = subprocess.run([args.dscc, "run", so, "--entry=prefill", "--weights", original,
                               "--shape", "B=1,S=5,C=8"], capture_output=True, text=True)
    if base_run.returncode != 0:
        print(f"FAIL running the int4 model on its own weights: {base_run.stderr}")
        return 1
    weights = load_file(original)
    quantized = sorted(k for k in weights if weights[k].dtype == np.int8)
    scales = sorted(k for k in weights if k not in quantized and weights[k].dtype == np.float16)
    ran = refused = 0
    for i in range(args.quantized_mutations):
        tensors = dict(weights)
        name = rng.choice(quantized + scales)
        kind = rng.choice(["dtype", "reshape", "rename", "truncate"])
        if kind == "dtype":
            tensors[name] = tensors[name].astype(rng.choice([np.float32, np.uint8, np.int32]))
        elif kind == "reshape":
            tensors[name] = np.ascontiguousarray(tensors[name][:, :-1])
        elif kind == "rename":
            tensors[name + ".moved"] = tensors.pop(name)
        path = os.path.join(work, "mutated.safetensors")
        save_file(tensors, path)
        if kind == "truncate":
            with open(path, "r+b") as f:
                f.truncate(rng.randrange(8, os.path.getsize(path)))
        run = subprocess.run([args.dscc, "run", so, "--entry=prefill", "--weights", path,
                              "--shape", "B=1,S=5,C=8"], capture_output=True, text=True)
        label = f"quantized mutation {i}: '{name}' {kind}"
        if run.returncode == 0:
            ran += 1
            continue
        problem = clean_failure(run.returncode, run.stderr, "error:")
        if problem or run.returncode < 0:
            print(f"FAIL {label}: {problem or 'a signal'}:\n{run.stderr[:2000]}")
            return 1
        if args.verbose:
            print(f"  {label}: {run.stderr.strip().splitlines()[-1]}")
        refused += 1
    print(f"PASS {args.quantized_mutations} mutated int4 weight files: {ran} ran, {refused} "
          f"refused with one clean error")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dscc", required=True)
    ap.add_argument("--mutations", type=int, default=150)
    ap.add_argument("--quantized-mutations", type=int, default=12)
    ap.add_argument("--seed", type=int, default=40)
    ap.add_argument("-v", "--verbose", action="store_true", help="print each refusal")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as work:
        bases = checkpoints(work)
        return fuzz_imports(args, rng, bases, work) or fuzz_quantized(args, rng, bases, work)


if __name__ == "__main__":
    sys.exit(main())
