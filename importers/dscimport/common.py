"""What the two front ends (onnx_import.py, torch_import.py) and their op modules share: the
errors and the record of a node that cannot be imported, the result of an import, the table of
converters (each front end has its own instance), the dtype maps, and small shape helpers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import dtypes, symdim

# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


class ModelError(Exception):
    """The model cannot be read at all: not valid ONNX, not an ExportedProgram, an input of a
    type dsc lacks. One line."""


class Unsupported(Exception):
    """A node this importer cannot express in dsc; the message says why."""


@dataclass
class Problem:
    """A node that cannot be imported. `location` says where it is in the model: the ONNX
    node's index (`#3`), or the line of the user's code a torch node came from."""
    op: str
    node: str
    location: str
    reason: str

    def __str__(self) -> str:
        who = f"node '{self.node}'" if self.node else "unnamed node"
        where = f", {self.location}" if self.location else ""
        return f"{self.op} ({who}{where}): {self.reason}"


class ImportFailure(Exception):
    """Every node that cannot be imported, listed at once; nothing is written."""

    def __init__(self, problems: list[Problem]):
        super().__init__(f"{len(problems)} nodes cannot be imported")
        self.problems = problems

    def message(self, source: str) -> str:
        """What the command line prints after `PROG: error: `."""
        kinds = list(dict.fromkeys(p.op for p in self.problems))
        lines = [f"{source}: {plural(len(self.problems), 'node')} cannot be imported "
                 f"(unsupported: {', '.join(kinds)}); nothing was written"]
        return "\n".join(lines + [f"  {p}" for p in self.problems])


# Why both front ends refuse an op whose result's size depends on the data (torch's nonzero,
# masked_select and bool indexing, ONNX's NonZero and Compress), and what to write instead.
DATA_DEPENDENT = ("its result's size depends on the data (a mask selects a number of elements "
                  "known only at run time); dsc's shapes are known from the inputs' shapes: "
                  "where(mask, x, fill) keeps the shape")
# Ops with no converter for that reason, by front end.
DATA_DEPENDENT_OPS = {"NonZero", "Compress", "Unique", "aten.nonzero.default",
                      "aten.masked_select.default", "aten.unique.default",
                      "aten._unique2.default", "aten.nonzero_static.default"}


def no_converter(op: str) -> str:
    """The reason an op with no converter is refused."""
    if op in DATA_DEPENDENT_OPS:
        return DATA_DEPENDENT
    return "no converter for this op (docs/importers.md lists the supported ops)"


# ---------------------------------------------------------------------------------------------
# The result
# ---------------------------------------------------------------------------------------------

def plural(k: int, word: str) -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


@dataclass
class ImportResult:
    text: str                       # the .dsc source
    weights: dict[str, np.ndarray]  # parameter name -> array, for the .safetensors file
    op_counts: Counter              # the source's ops read, by name
    op_unit: str                    # what op_counts counts: "ONNX node", "aten op"
    symbols: list[str]
    n_inputs: int
    n_statements: int
    dsc_path: str | None = None     # where output.write_result wrote the files
    weights_path: str | None = None

    def summary(self, source: str) -> str:
        """The line the command line prints: ops read, statements written, symbols and
        parameters."""
        n_weights = len(self.weights)
        n_values = sum(int(a.size) for a in self.weights.values())
        n_ops = sum(self.op_counts.values())
        top = ", ".join(f"{op} {k}" for op, k in sorted(self.op_counts.items(),
                                                       key=lambda kv: (-kv[1], kv[0])))
        dest = f" -> {self.dsc_path}, {self.weights_path}" if self.dsc_path else ""
        return (f"{source}{dest}: ops: {plural(n_ops, self.op_unit)}{f' ({top})' if top else ''} "
                f"as {plural(self.n_statements, 'dsc statement')}; symbols: "
                f"{', '.join(self.symbols) if self.symbols else 'none'}; parameters: "
                f"{self.n_inputs + n_weights} ({plural(self.n_inputs, 'input')}, "
                f"{plural(n_weights, 'weight')}, {plural(n_values, 'value')})")


# ---------------------------------------------------------------------------------------------
# The converter table
# ---------------------------------------------------------------------------------------------

Converter = Callable[..., None]  # takes the front end's Node


class Registry:
    """One front end's converters: op name -> the function that writes a node of that op as
    dsc, registered with how the op maps (`dsc` and `note`: docs/importers.md's tables) and,
    optionally, a precheck: checks of attributes and used outputs alone, which also run on a
    node whose inputs come from an unsupported one, so that one run lists every problem."""

    def __init__(self, front_end: str):
        self.front_end = front_end
        self.converters: dict[str, Converter] = {}
        self.notes: dict[str, tuple[str, str]] = {}
        self.prechecks: dict[str, Converter] = {}

    def register(self, *ops: str, dsc: str = "", note: str = "",
                 precheck: Converter | None = None):
        """A decorator: `@CONVERTERS.register("Relu", note=...)`."""
        def add(fn: Converter) -> Converter:
            for op in ops:
                if op in self.converters:
                    raise ValueError(f"{self.front_end}: {fn.__name__} and "
                                     f"{self.converters[op].__name__} both convert {op}")
                self.converters[op] = fn
                self.notes[op] = (dsc, note)
                if precheck is not None:
                    self.prechecks[op] = precheck
            return fn
        return add

    def get(self, op: str) -> Converter | None:
        return self.converters.get(op)

    def precheck(self, op: str) -> Converter | None:
        return self.prechecks.get(op)

    def __contains__(self, op: str) -> bool:
        return op in self.converters

    def ops(self) -> list[str]:
        return sorted(self.converters)


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------

# The NumPy types that hold each dtype's values (bf16 in float32: dtypes.py).
NP_DTYPES = dtypes.NP_DTYPES
FLOATS = dtypes.FLOATS
INTS = ("i8", "i32", "i64")
FOLD_LIMIT = 1 << 22  # ops on constants are evaluated at import time up to this many elements


def dtype_of_array(a: np.ndarray) -> str:
    """The dtype of a constant NumPy computed (float32 is f32; under --dtype, the target)."""
    for name, t in NP_DTYPES.items():
        if a.dtype == t:
            return dtypes.mapped(name)
    raise Unsupported(f"constant of numpy dtype {a.dtype}, which dsc does not have")


# ---------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------

def same_shape(a: list, b: list) -> bool:
    return len(a) == len(b) and all(symdim.as_dim(x).same(y) for x, y in zip(a, b))


def axis_text(axis: int, rank: int) -> str:
    """The last axis as -1 (as a person writes it), the others counted from 0."""
    return "-1" if axis == rank - 1 else str(axis)
