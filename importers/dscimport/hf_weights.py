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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import dtypes
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
    dtype: str = ""             # the stored dtype: the import's, f32 for a derived constant


class WeightTable:
    def __init__(self, ckpt: Checkpoint, dtype: str | None = None):
        """dtype: the weights' (and the model's floats') dtype; None keeps the checkpoint's."""
        self.ckpt = ckpt
        self.dtype, self.dtype_why = (dtype, "--dtype") if dtype else checkpoint_dtype(ckpt)
        self.weights: dict[str, Weight] = {}
        self.problems: list[str] = []
        self.bad_dtypes: dict[str, list[str]] = {}

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

    def linear(self, hf_name: str, in_dim: int, out_dim: int) -> str:
        """An nn.Linear weight, [out, in] in the checkpoint, stored transposed, [in, out], so
        that the .dsc reads `matmul(x, w)`; its parameter name."""
        return self._add(hf_name, (out_dim, in_dim), (in_dim, out_dim),
                         lambda a: np.ascontiguousarray(a.T))

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
            a = w.make(None if w.derived else self.ckpt.load(w.source))
            assert a.shape == w.shape, (name, a.shape, w.shape)
            out[name] = dtypes.storage(a, w.dtype)
        return out
