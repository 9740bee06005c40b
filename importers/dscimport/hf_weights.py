"""The weights of an hf2dsc import: which checkpoint tensors the .dsc reads, under which
parameter names, in which layout, and the constants hf2dsc derives from the config.

A template asks for each tensor by its checkpoint name with the shape the config implies. The
parameter is the checkpoint name made an identifier (`model.layers.0.mlp.up_proj.weight` is
`model_layers_0_mlp_up_proj_weight`), and the parameters are declared in the order the
template first asks for them. A tensor that is missing, has another shape or is not
floating-point is a problem, and every problem is collected before any data is loaded.

The weights' dtype (`checkpoint_dtype`) is the checkpoint's own unless `--dtype` names another:
the config's `dtype` (transformers' `torch_dtype` before 4.56) when it is float32, float16 or
bfloat16, else the one dtype of its floating-point tensors, else f32. Every checkpoint tensor
is converted to it (rounded to nearest even: dtypes.py); the constants hf2dsc derives stay f32
(RoPE's frequencies, as transformers keeps them).

With `--quantize` (a `Quantization`), the linear weights a template asks for with `linear` or
`conv1d` are stored quantized per group (quantize.py) from the checkpoint's values, in
nn.Linear's orientation [out, in]: for a checkpoint key `P.weight`, the parameters
`P_qweight` (i8) and `P_scales` (f16 or f32), read by `matmul_q`; no full-precision copy is
stored. A template gets a `Linear` either way and writes its product with `Linear.product`.
The LM head (and an encoder's pooler and classifier) is asked for with `head=True` and stays
unquantized unless `--quantize-head`; a tied head quantized is a quantized copy of the
embedding (`lm_head_qweight`), and the embedding itself stays as it is for `take`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import dtypes, quantize
from .hf_checkpoint import Checkpoint
from .program import identifier

# The checkpoint dtypes hf2dsc reads (and converts to the import's dtype).
FLOAT_TENSORS = ("F32", "F16", "BF16", "F64")


def checkpoint_dtype(ckpt: Checkpoint) -> tuple[str, str]:
    """The dsc dtype a checkpoint keeps when --dtype names none, and where it comes from."""
    for key in ("dtype", "torch_dtype"):
        name = dtypes.TORCH_NAMES.get(str(ckpt.config.get(key)).replace("torch.", ""))
        if name in dtypes.TARGETS:
            return name, f"config.json's {key}"
    found = {dtypes.SAFETENSORS[t.dtype] for t in ckpt.tensors.values()
             if t.dtype in dtypes.SAFETENSORS}
    if len(found) == 1 and next(iter(found)) in dtypes.TARGETS:
        return found.pop(), "the checkpoint's tensors"
    return "f32", "the default"


@dataclass
class Weight:
    name: str                   # the parameter's dsc name
    shape: tuple[int, ...]      # as the .dsc declares it
    source: str                 # the checkpoint tensor, or what derived it
    # How the stored array is made: from the checkpoint tensor's data, or from nothing (a
    # derived constant).
    make: Callable[[np.ndarray | None], np.ndarray]
    derived: bool = False
    dtype: str = ""             # the stored dtype: the import's, f32 for a derived constant,
                                # i8 and the scales' for a quantized weight
    # The array is made by `make` from nothing, after the weight before it was made from the
    # same checkpoint tensor (a quantized weight's scales, made with its values).
    follows: bool = False


@dataclass
class Quantization:
    """--quantize: the linear weights stored per group at `bits`, with scales of
    `scale_dtype`; `head` also the LM head (and an encoder's pooler and classifier)."""
    bits: int                   # 8 or 4
    group_size: int = 32
    scale_dtype: str = "f16"    # or f32
    head: bool = False

    def name(self) -> str:
        return f"int{self.bits}"

    def describe(self) -> str:
        return (f"{self.name()} (groups of {self.group_size}, {self.scale_dtype} scales"
                f"{', the head too' if self.head else ''})")

    def metadata(self, weights: dict[str, str]) -> dict[str, str]:
        """The .safetensors header's `__metadata__` entry that describes the quantization;
        weights: each quantized weight's values parameter (P_qweight) -> its checkpoint
        tensor."""
        import json
        return {"quantization": json.dumps({
            "format": "dsc matmul_q", "bits": self.bits, "group_size": self.group_size,
            "scale_dtype": self.scale_dtype, "symmetric": True,
            "method": ("round to nearest; scale = max|w| / 127 per group" if self.bits == 8
                       else "round to nearest, clamped to [-8, 7]; scale = m / -8 per group, "
                       "m the value of the largest magnitude (llama.cpp's Q4_0)"),
            "layout": ("qweight i8[N, K]" if self.bits == 8 else
                       "qweight i8[N, K/2], two values a byte, the low nibble the even k, a "
                       "nibble u meaning u - 8") + "; scales [N, K / group_size]; value k of "
                       "row n = q(n, k) * scales[n, k / group_size] (docs/language.md, "
                       "Quantized weights)",
            "weights": weights}, separators=(",", ":"))}


@dataclass
class Linear:
    """An nn.Linear weight as the .dsc reads it: one parameter [in, out] for `matmul`, or two,
    the quantized values [out, in] (or [out, in / 2]) and their scales, for `matmul_q`."""
    names: list[str]            # the parameters, in the order they are passed
    types: list[str]            # their dsc types
    bits: int = 0               # 0: not quantized

    def local(self, role: str) -> list[str]:
        """The names of a function's parameters for this weight: `role` (the values) and
        `role_scales`."""
        return [role] if not self.bits else [role, f"{role}_scales"]

    def params(self, role: str) -> list[str]:
        """A function's parameter declarations for this weight, under `role`."""
        return [f"{n}: {t}" for n, t in zip(self.local(role), self.types)]

    def product(self, x: str, role: str | None = None) -> str:
        """x times the weight: `matmul(x, w)` or `matmul_q(x, q, scales, bits=B)`, with the
        parameters named after `role` (a function's) or the weight's own."""
        names = self.local(role) if role else self.names
        if not self.bits:
            return f"matmul({x}, {names[0]})"
        return f"matmul_q({x}, {names[0]}, {names[1]}, bits={self.bits})"


class WeightTable:
    def __init__(self, ckpt: Checkpoint, dtype: str | None = None,
                 quant: Quantization | None = None):
        """dtype: the weights' (and the model's floats') dtype; None keeps the checkpoint's.
        quant: how the linear weights are quantized (None: not)."""
        self.ckpt = ckpt
        self.dtype, self.dtype_why = (dtype, "--dtype") if dtype else checkpoint_dtype(ckpt)
        self.quant = quant
        self.weights: dict[str, Weight] = {}
        self.problems: list[str] = []
        self.bad_dtypes: dict[str, list[str]] = {}
        # The quantized weights (the values' parameter -> the checkpoint tensor), and the
        # tensors whose rows the group size does not fit (the reason -> the tensors).
        self.quantized: dict[str, str] = {}
        self.bad_groups: dict[str, list[str]] = {}

    def _check(self, hf_name: str, shape: tuple[int, ...]) -> bool:
        info = self.ckpt.tensors.get(hf_name)
        if info is None:
            self.problems.append(f"tensor '{hf_name}' is missing (expected shape "
                                 f"{list(shape)})")
            return False
        ok = True
        if info.shape != shape:
            self.problems.append(f"tensor '{hf_name}' has shape {list(info.shape)}, expected "
                                 f"{list(shape)}")
            ok = False
        if info.dtype not in FLOAT_TENSORS:
            self.bad_dtypes.setdefault(info.dtype, []).append(hf_name)
            ok = False
        return ok

    def _add(self, hf_name: str, shape: tuple[int, ...], stored: tuple[int, ...],
             make: Callable[[np.ndarray], np.ndarray]) -> str:
        name = identifier(hf_name, "w")
        if name in self.weights:
            return name
        self._check(hf_name, shape)
        self.weights[name] = Weight(name, stored, hf_name, make, dtype=self.dtype)
        return name

    def tensor(self, hf_name: str, shape: tuple[int, ...]) -> str:
        """A tensor stored as it is; its parameter name."""
        return self._add(hf_name, tuple(shape), tuple(shape), lambda a: a)

    def linear(self, hf_name: str, in_dim: int, out_dim: int, head: bool = False) -> Linear:
        """An nn.Linear weight, [out, in] in the checkpoint: stored transposed, [in, out], so
        that the .dsc reads `matmul(x, w)`, or quantized (--quantize; a head only with
        --quantize-head)."""
        if self._quantizes(head):
            return self._quantized(hf_name, (out_dim, in_dim), in_dim, out_dim, lambda a: a)
        name = self._add(hf_name, (out_dim, in_dim), (in_dim, out_dim),
                         lambda a: np.ascontiguousarray(a.T))
        return Linear([name], [self.param(name).split(": ", 1)[1]])

    def conv1d(self, hf_name: str, in_dim: int, out_dim: int) -> Linear:
        """A GPT-2 Conv1D weight, [in, out] in the checkpoint: stored as it is, or quantized
        from its transpose."""
        if self._quantizes(False):
            return self._quantized(hf_name, (in_dim, out_dim), in_dim, out_dim, lambda a: a.T)
        name = self.tensor(hf_name, (in_dim, out_dim))
        return Linear([name], [self.param(name).split(": ", 1)[1]])

    def tied_head(self, hf_name: str, vocab: int, hidden: int) -> Linear | None:
        """With --quantize-head, the LM head of tied embeddings quantized from the embedding
        `hf_name` ([vocab, hidden], nn.Linear's orientation already), as `lm_head_qweight`
        and `lm_head_scales`; None otherwise (the .dsc reads the embedding)."""
        if not self._quantizes(True):
            return None
        return self._quantized(hf_name, (vocab, hidden), hidden, vocab, lambda a: a, "lm_head")

    def linear_note(self, layout: str = "transposed to [in, out]",
                    head_name: str | None = "LM head is") -> str:
        """How the .dsc's comment says the linear weights are stored (`layout`: how the
        unquantized ones are; head_name: the heads that are not quantized without
        --quantize-head, None when there are none)."""
        q = self.quant
        if q is None:
            return f"the linear ones {layout}"
        values = "[out, in]" if q.bits == 8 else "[out, in / 2] (two a byte)"
        return (f"the linear ones quantized to {q.name()} (matmul_q): for a key P.weight, "
                f"P_qweight {values} and P_scales {q.scale_dtype}[out, in / {q.group_size}]"
                + ("" if q.head or not head_name else f"; the {head_name} {layout}"))

    def _quantizes(self, head: bool) -> bool:
        return self.quant is not None and (not head or self.quant.head)

    def _quantized(self, hf_name: str, shape: tuple[int, ...], in_dim: int, out_dim: int,
                   rows: Callable[[np.ndarray], np.ndarray], base: str | None = None
                   ) -> Linear:
        """The two parameters of a quantized weight: the checkpoint tensor hf_name (of
        `shape`), made [out, in] by `rows`, quantized per group."""
        q = self.quant
        base = base or (hf_name[:-len(".weight")] if hf_name.endswith(".weight") else hf_name)
        qname, sname = identifier(base + ".qweight", "w"), identifier(base + ".scales", "w")
        types = [f"i8[{out_dim}, {in_dim if q.bits == 8 else in_dim // 2}]",
                 f"{q.scale_dtype}[{out_dim}, {in_dim // q.group_size}]"]
        out = Linear([qname, sname], types, q.bits)
        if qname in self.weights:
            return out
        self._check(hf_name, shape)
        if in_dim % q.group_size:
            why = f"--group-size={q.group_size} does not divide the {in_dim} input features"
            self.bad_groups.setdefault(why, []).append(hf_name)
        elif q.bits == 4 and in_dim % 2:
            why = (f"--quantize=int4 stores two values a byte, and there are an odd {in_dim} "
                   f"input features")
            self.bad_groups.setdefault(why, []).append(hf_name)
        self.quantized[qname] = hf_name
        made: list[np.ndarray] = []

        def values(a: np.ndarray) -> np.ndarray:
            try:
                qw, scales = quantize.quantize(np.asarray(rows(a)), q.bits, q.group_size,
                                               q.scale_dtype)
            except quantize.QuantizeError as e:
                raise quantize.QuantizeError(f"tensor '{hf_name}' cannot be quantized to "
                                             f"{q.name()}: {e}") from None
            made.append(scales)
            return qw

        stored = (out_dim, in_dim if q.bits == 8 else in_dim // 2)
        self.weights[qname] = Weight(qname, stored, hf_name, values, dtype="i8")
        self.weights[sname] = Weight(sname, (out_dim, in_dim // q.group_size),
                                     f"{hf_name} (scales)", lambda _: made.pop(),
                                     dtype=q.scale_dtype, follows=True)
        return out

    def derived(self, name: str, value: np.ndarray, source: str) -> str:
        """A constant hf2dsc computes (source says from what), kept in f32; its parameter
        name."""
        self.weights[name] = Weight(name, tuple(value.shape), source, lambda _: value, True,
                                    "f32")
        return name

    def all_problems(self) -> list[str]:
        """The shape and presence problems, then one line per dtype that is not imported."""
        out = list(self.problems)
        for dtype, names in self.bad_dtypes.items():
            example = ", ".join(f"'{n}'" for n in names[:3]) + (", ..." if len(names) > 3
                                                                else "")
            out.append(f"{len(names)} tensors are {dtype} ({example}): hf2dsc reads "
                       f"floating-point weights ({', '.join(FLOAT_TENSORS)})")
        for why, names in self.bad_groups.items():
            example = ", ".join(f"'{n}'" for n in names[:3]) + (", ..." if len(names) > 3
                                                                else "")
            out.append(f"{why} of {len(names)} linear weight{'s' if len(names) != 1 else ''} "
                       f"({example}): the group size must divide the input features of every "
                       f"quantized layer")
        return out

    def param(self, name: str) -> str:
        """`name: bf16[d0, d1]`, the weight's parameter declaration."""
        w = self.weights[name]
        return f"{name}: {w.dtype}[{', '.join(str(d) for d in w.shape)}]"

    def params(self) -> list[str]:
        return [self.param(n) for n in self.weights]

    def arrays(self) -> dict[str, np.ndarray]:
        """Every weight's data as the .safetensors file stores it (bf16 as its bits), in
        parameter order (the checkpoint's tensors loaded now)."""
        out = {}
        for name, w in self.weights.items():
            a = w.make(None if w.derived or w.follows else self.ckpt.load(w.source))
            assert a.shape == w.shape, (name, a.shape, w.shape)
            out[name] = a if w.dtype == "i8" or w.follows else dtypes.storage(a, w.dtype)
        return out
