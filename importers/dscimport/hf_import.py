"""hf2dsc's driver: from a save_pretrained checkpoint directory to the .dsc text and its
weights. The config's model_type picks the template (one module per architecture family);
the template reads the config and asks for the checkpoint's tensors by name and shape. Every
problem is collected: first the config's (an unsupported model_type or architecture, a field
that would change the math), then, if there are none, the tensors' (missing, another shape,
not floating-point), and the import fails with all of them before anything is loaded or
written. The model's dtype is the checkpoint's, or --dtype's (hf_weights.checkpoint_dtype);
with --quantize the linear weights are stored quantized (hf_weights.Quantization).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from . import hf_bert, hf_gpt2, hf_llama, hf_vit, quantize
from .hf_checkpoint import Checkpoint
from .hf_config import Config
from .hf_weights import Quantization, WeightTable

# model_type -> (the template's module, the architectures it imports).
FAMILIES = {
    "bert": (hf_bert, hf_bert.ARCHITECTURES),
    "gpt2": (hf_gpt2, hf_gpt2.ARCHITECTURES),
    "llama": (hf_llama, ("LlamaForCausalLM",)),
    "qwen2": (hf_llama, ("Qwen2ForCausalLM",)),
    "mistral": (hf_llama, ("MistralForCausalLM",)),
    "vit": (hf_vit, hf_vit.ARCHITECTURES),
}


class ImportProblems(Exception):
    """What keeps a checkpoint from being imported, every problem at once."""

    def __init__(self, what: str, problems: list[str]):
        super().__init__(what)
        self.what = what
        self.problems = problems

    def message(self, path: str) -> str:
        n = len(self.problems)
        lines = [f"{path}: {n} {self.what} problem{'s' if n != 1 else ''}; nothing was written"]
        return "\n".join(lines + [f"  - {p}" for p in self.problems])


@dataclass
class HfImport:
    text: str
    weights: dict[str, np.ndarray]
    architecture: str
    entries: list[str]
    n_derived: int
    dtype: str = "f32"
    dtype_why: str = ""
    quant: Quantization | None = None
    n_quantized: int = 0        # the linear weights stored quantized
    metadata: dict[str, str] | None = None  # the .safetensors header's __metadata__

    def summary(self, path: str, out_dir: str) -> str:
        n_values = sum(int(a.size) for a in self.weights.values())
        quantized = ""
        if self.quant:
            n_bytes = sum(int(a.nbytes) for a in self.weights.values())
            quantized = (f"; {self.n_quantized} linear weights quantized to "
                         f"{self.quant.describe()}, {n_bytes} bytes of weights")
        return (f"{path} ({self.architecture}) -> {os.path.join(out_dir, 'model.dsc')}, "
                f"{os.path.join(out_dir, 'model.safetensors')}: entries "
                f"{', '.join(self.entries)}; {len(self.weights)} weights "
                f"({self.n_derived} derived), {n_values} values; {self.dtype} "
                f"({self.dtype_why}){quantized}")


def architecture(cfg: Config) -> tuple[object, str]:
    """The template module and the architecture name, or problems recorded in cfg."""
    model_type = cfg.data.get("model_type")
    archs = cfg.data.get("architectures")
    arch = archs[0] if isinstance(archs, list) and len(archs) == 1 and \
        isinstance(archs[0], str) else None
    if not isinstance(model_type, str) or model_type not in FAMILIES:
        known = ", ".join(f"{t} ({', '.join(a)})" for t, (_, a) in FAMILIES.items())
        cfg.problem(f"model_type {model_type!r} is not supported; hf2dsc imports {known}")
        return None, ""
    module, supported = FAMILIES[model_type]
    if arch not in supported:
        said = f"architectures is {archs!r}" if archs is not None else "config.json names no " \
            "architectures"
        cfg.problem(f"{said}: hf2dsc imports {model_type} as {', '.join(supported)}")
        return None, ""
    return module, arch


def header(path: str, arch: str, config: dict, table: WeightTable) -> str:
    version = config.get("transformers_version", "an unknown version")
    text = (f"# {arch} from {os.path.basename(os.path.normpath(path))} (saved by transformers "
            f"{version}),\n# imported by importers/hf2dsc.py (docs/importers.md, \"hf2dsc\"); "
            f"{table.dtype}: {table.dtype_why}.")
    q = table.quant
    if q:
        text += (f"\n# --quantize={q.name()}: the linear layers' weights are {q.bits}-bit "
                 f"integers in groups of {q.group_size} with {q.scale_dtype}\n# scales, read "
                 f"by matmul_q; the embeddings, norms and biases "
                 + ("are" if q.head else "and any head (LM head, pooler,\n# classifier) are")
                 + f" {table.dtype}.")
    return text


def import_checkpoint(path: str, dtype: str | None = None,
                      quant: Quantization | None = None) -> HfImport:
    """dtype: the model's ("bf16", "f16", "f32"; None keeps the checkpoint's); quant: how the
    linear weights are quantized (None: not). Raises hf_checkpoint.CheckpointError
    (unreadable) or ImportProblems."""
    ckpt = Checkpoint(path)
    cfg = Config(ckpt.config)
    module, arch = architecture(cfg)
    table = WeightTable(ckpt, dtype, quant)
    text, entries = "", []
    if module is not None:
        text, entries = module.build(cfg, table, arch, header(path, arch, ckpt.config, table))
    if cfg.problems:
        raise ImportProblems("config", cfg.problems)
    if table.all_problems():
        raise ImportProblems("tensor", table.all_problems())
    try:
        weights = table.arrays()
    except quantize.QuantizeError as e:
        raise ImportProblems("tensor", [str(e)]) from None
    return HfImport(text, weights, arch, entries,
                    sum(1 for w in table.weights.values() if w.derived), table.dtype,
                    table.dtype_why, quant, len(table.quantized),
                    quant.metadata(table.quantized) if quant else None)
