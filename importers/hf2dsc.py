#!/usr/bin/env python3
"""Imports a Hugging Face transformers checkpoint into dsc: a readable .dsc file and its weights.

    importers/hf2dsc.py CHECKPOINT_DIR -o OUT_DIR [--dtype bf16|f16|f32]
        [--quantize int8|int4 [--group-size N] [--scale-dtype f16|f32] [--quantize-head]]
        [--traceback]

reads CHECKPOINT_DIR as transformers' `save_pretrained` writes it (config.json and
model.safetensors, or sharded safetensors with their index) and writes OUT_DIR/model.dsc and
OUT_DIR/model.safetensors. The architecture is written from a template for its family (BERT,
GPT-2, LLaMA, Qwen2, Mistral, ViT), filled in from the config; the weights are mapped by name.
Decoders get two entries, `prefill` and `decode`, sharing a KV cache that the caller
preallocates; BERT and ViT get `forward`. The model keeps the checkpoint's dtype (config.json's
`dtype`, else its tensors': a bf16 checkpoint imports as bf16); --dtype converts the weights
and the model's floats to bf16, f16 or f32 (rounded to nearest even). --quantize stores the
linear layers' weights as 8- or 4-bit integers in groups of --group-size values (32 by default)
sharing an f16 scale, read by `matmul_q`; the embeddings, norms and biases keep the model's
dtype, and so does the LM head unless --quantize-head. docs/importers.md ("hf2dsc") has the
signatures, the weight names and layouts, the dtypes, the quantized format, and what is
refused.

Exit status: 0 on success; 1 when the checkpoint cannot be read or imported (every problem is
listed, and nothing is written); 2 on a usage error.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

PROG = "hf2dsc"
REQUIRES = ("numpy", "safetensors")  # and torch for RoPE (hf_llama.py)


def fail(msg: str, status: int = 1) -> int:
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    return status


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="hf2dsc.py", description="Import a transformers "
                                 "checkpoint directory (save_pretrained) into model.dsc and "
                                 "model.safetensors.")
    ap.add_argument("checkpoint", help="the directory save_pretrained wrote")
    ap.add_argument("-o", "--output-dir", required=True, help="directory for model.dsc and "
                    "model.safetensors (created if missing)")
    ap.add_argument("--dtype", choices=("bf16", "f16", "f32"), help="the model's dtype: the "
                    "weights, activations and KV caches (the decoders' logits stay f32); "
                    "default: the checkpoint's (config.json's dtype, else its tensors')")
    ap.add_argument("--quantize", choices=("int8", "int4"), help="store the linear layers' "
                    "weights quantized per group for matmul_q: int8 (scale max|w|/127, as "
                    "llama.cpp's Q8_0) or int4 (scale m/-8, m the group's value of largest "
                    "magnitude, values in [-8, 7], as Q4_0), symmetric, rounded to nearest; "
                    "the embeddings, norms, biases and heads keep the model's dtype "
                    "(LLaMA, Qwen2, Mistral, GPT-2: the attention and MLP projections; BERT, "
                    "ViT: the encoder layers' projections)")
    ap.add_argument("--group-size", type=int, metavar="N", help="values of a row that share a "
                    "scale with --quantize; must divide every quantized layer's input "
                    "features (default 32)")
    ap.add_argument("--scale-dtype", choices=("f16", "f32"), help="the scales' dtype with "
                    "--quantize (default f16)")
    ap.add_argument("--quantize-head", action="store_true", help="with --quantize, quantize "
                    "the LM head too (a tied head: a quantized copy of the token embedding, "
                    "which stays unquantized for the lookup), and an encoder's pooler and "
                    "classifier")
    ap.add_argument("--traceback", action="store_true", help="print a Python traceback on an "
                    "internal error")
    ns = ap.parse_args(argv)
    if ns.quantize is None:
        given = [f for f, v in (("--group-size", ns.group_size), ("--scale-dtype",
                                                                  ns.scale_dtype),
                                ("--quantize-head", ns.quantize_head or None)) if v is not None]
        if given:
            ap.error(f"{', '.join(given)}: only with --quantize=int8|int4")
    elif ns.group_size is not None and ns.group_size < 1:
        ap.error(f"--group-size must be an integer >= 1, got {ns.group_size}")
    return ns


def quantization(ns: argparse.Namespace):
    """hf_weights.Quantization from the options, or None."""
    if ns.quantize is None:
        return None
    from dscimport.hf_weights import Quantization
    return Quantization(8 if ns.quantize == "int8" else 4, ns.group_size or 32,
                        ns.scale_dtype or "f16", ns.quantize_head)


def main(argv: list[str]) -> int:
    ns = parse_args(argv)
    for module in REQUIRES:
        if importlib.util.find_spec(module) is None:
            return fail(f"{module} is not installed: run tools/scripts/install_python_deps.sh "
                        f"--tests")

    from dscimport import dsc_tables
    try:
        from dscimport import hf_checkpoint, hf_import, output
    except dsc_tables.SourceTreeError as e:
        return fail(str(e))
    try:
        result = hf_import.import_checkpoint(ns.checkpoint, ns.dtype, quantization(ns))
    except hf_checkpoint.CheckpointError as e:
        return fail(str(e))
    except hf_import.ImportProblems as e:
        return fail(e.message(ns.checkpoint))
    except Exception as e:  # noqa: BLE001 - a bug in hf2dsc: say so, in one line
        return internal_error(ns.checkpoint, e, ns.traceback)
    try:
        os.makedirs(ns.output_dir, exist_ok=True)
        output.write_files({
            os.path.join(ns.output_dir, "model.dsc"): result.text.encode(),
            os.path.join(ns.output_dir, "model.safetensors"):
                output.safetensors_bytes(result.weights, result.metadata)})
    except OSError as e:
        return fail(f"cannot write to {ns.output_dir}: {e.strerror or e}")
    except Exception as e:  # noqa: BLE001
        return internal_error(ns.checkpoint, e, ns.traceback)
    print(f"{PROG}: {result.summary(ns.checkpoint, ns.output_dir)}")
    return 0


def internal_error(path: str, e: Exception, show_traceback: bool) -> int:
    if show_traceback:
        traceback.print_exc()
    return fail(f"internal error while importing {path}: {type(e).__name__}: {e} (rerun with "
                f"--traceback for details)")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
