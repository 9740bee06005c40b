"""The weights of an hf2dsc import: which checkpoint tensors the .dsc reads, under which
parameter names, in which layout, and the constants hf2dsc derives from the config.

A template asks for each tensor by its checkpoint name with the shape the config implies. The
parameter is the checkpoint name made an identifier (`model.layers.0.mlp.up_proj.weight` is
`model_layers_0_mlp_up_proj_weight`), and the parameters are declared in the order the
template first asks for them. A tensor that is missing, has another shape or another dtype
than the one imported is a problem, and every problem is collected before any data is loaded.
Nothing is converted: hf2dsc imports f32 weights as f32 (low precision is issue 36).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .hf_checkpoint import Checkpoint
from .program import identifier

# The dtypes hf2dsc imports: `--dtype` -> (the safetensors dtype, the dsc dtype).
DTYPES = {"f32": ("F32", "f32")}
LOW_PRECISION = ("F16", "BF16")
LOW_PRECISION_WHY = ("low-precision weights are issue 36; hf2dsc imports f32 checkpoints "
                     "only and never converts silently")


@dataclass
class Weight:
    name: str                   # the parameter's dsc name
    shape: tuple[int, ...]      # as the .dsc declares it
    source: str                 # the checkpoint tensor, or what derived it
    # How the stored array is made: from the checkpoint tensor's data, or from nothing (a
    # derived constant).
    make: Callable[[np.ndarray | None], np.ndarray]
    derived: bool = False


class WeightTable:
    def __init__(self, ckpt: Checkpoint, dtype: str = "f32"):
        self.ckpt = ckpt
        self.st_dtype, self.dtype = DTYPES[dtype]
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
        if info.dtype != self.st_dtype:
            self.bad_dtypes.setdefault(info.dtype, []).append(hf_name)
            ok = False
        return ok

    def _add(self, hf_name: str, shape: tuple[int, ...], stored: tuple[int, ...],
             make: Callable[[np.ndarray], np.ndarray]) -> str:
        name = identifier(hf_name, "w")
        if name in self.weights:
            return name
        self._check(hf_name, shape)
        self.weights[name] = Weight(name, stored, hf_name, make)
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
        """A constant hf2dsc computes (source says from what); its parameter name."""
        self.weights[name] = Weight(name, tuple(value.shape), source, lambda _: value, True)
        return name

    def all_problems(self) -> list[str]:
        """The shape and presence problems, then one line per dtype that is not imported."""
        out = list(self.problems)
        for dtype, names in self.bad_dtypes.items():
            example = ", ".join(f"'{n}'" for n in names[:3]) + (", ..." if len(names) > 3
                                                                else "")
            why = LOW_PRECISION_WHY if dtype in LOW_PRECISION else \
                f"hf2dsc imports {self.st_dtype} tensors only"
            out.append(f"{len(names)} tensors are {dtype}, not {self.st_dtype} ({example}): "
                       f"{why}")
        return out

    def param(self, name: str) -> str:
        """`name: f32[d0, d1]`, the weight's parameter declaration."""
        w = self.weights[name]
        return f"{name}: {self.dtype}[{', '.join(str(d) for d in w.shape)}]"

    def params(self) -> list[str]:
        return [self.param(n) for n in self.weights]

    def arrays(self) -> dict[str, np.ndarray]:
        """Every weight's data, in parameter order (the checkpoint's tensors loaded now)."""
        out = {}
        for name, w in self.weights.items():
            a = w.make(None if w.derived else self.ckpt.load(w.source))
            assert a.shape == w.shape, (name, a.shape, w.shape)
            out[name] = a
        return out
