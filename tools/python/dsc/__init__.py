"""dsc: a compiler for machine-learning models with dynamic shapes.

A model is compiled once and runs at every shape its `where` clauses allow:

    import dsc, numpy as np
    m = dsc.compile("examples/mlp.dsc")             # or .dsc text; target="cuda" for GPUs
    y = m.mlp(x, w1, b1, w2, b2)                    # NumPy arrays or torch tensors, no copies
    m.save("mlp.so"); m = dsc.load("mlp.so")

    compiled = torch.compile(model, backend="dsc", dynamic=True)   # one compile, every shape

docs/python.md has the whole API; help(dsc.compile) and help(dsc.Module) the details.
"""

from __future__ import annotations

import sys as _sys

from . import _dsc
from .errors import CompileError, Error, InputError, RuntimeError, ShapeError
from .introspect import CheckResult, Proof, check, prove
from .module import Function, Module, compile, load

_dsc._set_error_classes(CompileError, ShapeError, InputError, RuntimeError)

__all__ = [
    "CheckResult", "CompileError", "Error", "Function", "InputError", "Module", "Proof",
    "RuntimeError", "ShapeError", "check", "compile", "cuda_available", "export",
    "get_num_threads", "load", "prove", "register_torch_backend", "set_num_threads", "to_device",
    "to_host",
]
__version__ = "0.1.0"


def set_num_threads(n: int) -> None:
    """Sets the runtime's thread pool size (the calling thread included); n < 1 restores the
    default (DSC_NUM_THREADS, else the CPUs this process may use). Also sets OpenBLAS's."""
    _dsc.set_num_threads(int(n))


def get_num_threads() -> int:
    """The runtime's thread pool size."""
    return _dsc.get_num_threads()


def to_device(array, device: str = "cuda"):
    """A dense copy of `array` (NumPy, torch or any DLPack producer) on `device`: "cuda" (the
    GPU, or the block emulator under DSC_CUDA_EMULATE=1) gives a DLPack object that functions
    compiled with target="cuda" take and torch.from_dlpack reads; "cpu" gives a NumPy array.
    For NumPy users with no GPU array library; torch users pass CUDA tensors directly."""
    from .module import _prepare
    return _dsc.copy_to(array, device, _prepare)


def to_host(array):
    """A NumPy array holding a copy of `array` (a result on the GPU, say)."""
    return to_device(array, "cpu")


def cuda_available() -> bool:
    """Whether functions compiled with target="cuda" can run here (a GPU, or the block
    emulator with DSC_CUDA_EMULATE=1)."""
    return _dsc.cuda_available() == ""


def export(module, example_inputs, dynamic_shapes=None, **kwargs):
    """torch.export of `module`, imported into .dsc ahead of time (importers/torch2dsc.py's
    route): returns dsc.torch_backend.Exported, with .source (the .dsc text), .entry, .weights
    (name -> tensor) and .inputs. Compile it with dsc.compile(e.source).bind(e.weights) and
    call it with the module's inputs. Keyword arguments (name, dtype, strict) and
    dynamic_shapes are torch.export's and torch2dsc's; see help(dsc.torch_backend.export)."""
    from .torch_backend import export as export_program
    return export_program(module, example_inputs, dynamic_shapes, **kwargs)


def register_torch_backend(name: str = "dsc") -> None:
    """Makes torch.compile(model, backend="dsc") name dsc's backend (dsc.torch_backend.backend).
    `import dsc` does it when torch is imported already, and an installed package (pip) also
    through its torch_dynamo_backends entry point; otherwise call this once."""
    from .torch_backend import register
    register(name)


if "torch" in _sys.modules:
    register_torch_backend()
