"""dsc.compile, dsc.load and dsc.Module: a compiled model in this process."""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections.abc import Mapping
from typing import Any

from . import _dsc
from .errors import Error, InputError
from .source import read_source

__all__ = ["Module", "compile", "load"]

Function = _dsc.Function


def _prepare(obj: Any) -> Any:
    """What a call does with an argument it cannot view as it is: a strided array or tensor is
    copied to a dense one (np.ascontiguousarray, Tensor.contiguous), a tensor that requires
    grad is detached. Anything else is returned as it is (and refused by the caller)."""
    module = type(obj).__module__
    if module == "numpy":
        import numpy
        return numpy.ascontiguousarray(obj)
    if module == "torch" or module.startswith("torch."):
        if getattr(obj, "requires_grad", False):
            obj = obj.detach()
        return obj.contiguous()
    return obj


def _build_args(target: str, entry: str | list[str] | None, fusion: bool, gemm: str | None,
                cpu: str | None, vector_width: int | None, cuda_arch: str | None,
                verbose: bool) -> list[str]:
    """`dscc build`'s command-line options for these keyword arguments."""
    args = [f"--target={target}"]
    entries = [entry] if isinstance(entry, str) else list(entry or [])
    args += [f"--entry={e}" for e in entries]
    if not fusion:
        args.append("--no-fusion")
    if gemm:
        args.append(f"--gemm={gemm}")
    if cpu:
        args.append(f"--cpu={cpu}")
    if vector_width:
        args.append(f"--vector-width={vector_width}")
    if cuda_arch:
        args.append(f"--cuda-arch={cuda_arch}")
    if not verbose:
        args.append("--quiet")
    return args


def compile(source: str | os.PathLike, *, target: str = "cpu",  # noqa: A001 - dsc.compile
            entry: str | list[str] | None = None, fusion: bool = True, gemm: str | None = None,
            cpu: str | None = None, vector_width: int | None = None,
            cuda_arch: str | None = None, verbose: bool = False) -> "Module":
    """Compiles .dsc source once, for every shape its `where` clauses allow: the pipeline and
    options of `dscc build`, in this process.

    source: .dsc text, or the path of a .dsc file (see dsc.source.read_source).
    target: "cpu" (this machine's CPU, through LLVM) or "cuda" (NVIDIA GPUs: kernels compiled
        by NVRTC for `cuda_arch`, default "80,90"; host code on the CPU).
    entry: the entry function(s) to compile; default every fn whose parameters are tensors with
        known dims.
    fusion: False compiles one kernel per op (`--no-fusion`).
    gemm: "dsc", "blas" or "cublas": the routine f32 matmuls call (default: the target's).
    cpu, vector_width: `--cpu=native|generic|NAME`, `--vector-width=128|256|512`.
    verbose: print dscc's progress lines on stderr.

    >>> m = dsc.compile("examples/mlp.dsc")
    >>> y = m.mlp(x, w1, b1, w2, b2)        # NumPy arrays or torch tensors, any batch size

    Raises dsc.CompileError with the compiler's diagnostics. The GIL is released while it runs.
    """
    text, name = read_source(source)
    args = _build_args(target, entry, fusion, gemm, cpu, vector_width, cuda_arch, verbose)
    directory = tempfile.mkdtemp(prefix="dsc-")
    stem = "module" if text is not None else os.path.splitext(os.path.basename(name))[0]
    path = os.path.join(directory, f"{stem}.so")
    try:
        log = _dsc.build_library(text, name, args, path)
        if verbose and log:
            import sys
            sys.stderr.write(log)
        module = Module(path, _source=(text, name, args))
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    # The library stays loaded after its file is gone; the directory goes with the module.
    weakref.finalize(module, shutil.rmtree, directory, True)
    return module


def load(path: str | os.PathLike) -> "Module":
    """Loads a model built by `dscc build` or saved by Module.save.

    Raises dsc.RuntimeError when the file is missing or not a dsc model.
    """
    return Module(os.fspath(path))


class Module:
    """A compiled model: its entry functions, called as attributes or by name.

        out = module.layer(x, mask)          # or module["layer"](x, mask)

    A call takes NumPy arrays, torch tensors (CPU or CUDA) or any DLPack producer, without
    copying them; dense row-major inputs are used in place, strided ones are copied first (and
    a tensor that requires grad is detached). Results are NumPy arrays when the first argument
    is one, torch tensors when it is a torch tensor (both own dsc's memory, no copy), and
    otherwise DLPack objects that np.from_dlpack and torch.from_dlpack take without a copy. An
    input the function updates in place (an `update_slice` returned) comes back as the
    caller's own object. One result is returned as it is, several as a tuple.

    Calls release the GIL: several threads may call one module at once.
    """

    def __init__(self, path: str, *, _source: tuple[str | None, str, list[str]] | None = None):
        self._path = path
        self._library = _dsc.Library(path, _prepare)
        self._source = _source
        self._functions: dict[str, Function] = {
            name: self._library.function(name) for name in self._library.function_names}
        self._constants: list[Any] = []
        weakref.finalize(self, _release_constants, self._constants)

    @property
    def path(self) -> str:
        """The shared library this module was loaded from."""
        return self._path

    @property
    def functions(self) -> dict[str, Function]:
        """The entry functions by name, each with .params, .outputs, .where_clauses and .signature."""
        return dict(self._functions)

    def __getitem__(self, name: str) -> Function:
        try:
            return self._functions[name]
        except KeyError:
            raise KeyError(f"the module has no function '{name}' (it has: "
                           f"{', '.join(self._functions) or 'none'})") from None

    def __getattr__(self, name: str) -> Function:
        functions = self.__dict__.get("_functions")
        if functions is not None and name in functions:
            return functions[name]
        raise AttributeError(f"dsc.Module has no function or attribute '{name}' (its functions: "
                             f"{', '.join(functions or []) or 'none'})")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._functions))

    def __repr__(self) -> str:
        lines = [f"<dsc.Module {os.path.basename(self._path)}"]
        for f in self._functions.values():
            lines.append(f"  fn {f.signature} [{f.device}]")
        return "\n".join(lines) + ">"

    def save(self, path: str | os.PathLike) -> None:
        """Writes the compiled library to `path`; dsc.load(path) or `dscc run path` run it."""
        shutil.copyfile(self._path, os.fspath(path))

    def bind(self, weights: Mapping[str, Any] | str | os.PathLike, *, strict: bool = True) -> "Module":
        """Gives parameters once, by name, so that later calls pass only the other inputs:

            m = dsc.compile("examples/bert_layer.dsc").bind("bert.safetensors")
            out = m.layer(x, mask)

        `weights` maps parameter names to arrays or tensors, or is a .safetensors path. Every
        function with a parameter of that name gets it. The arrays are kept (not copied) and
        declared constant: the caller promises not to change them, and matmuls pack them once,
        on the first call, instead of on every call. With strict (the default), a name that no
        function has is an InputError. Returns the module.
        """
        if isinstance(weights, (str, os.PathLike)):
            weights = _load_safetensors(os.fspath(weights))
        names = {p["name"] for f in self._functions.values() for p in f.params}
        unknown = sorted(set(weights) - names)
        if strict and unknown:
            raise InputError(f"bind: no function has a parameter named {', '.join(unknown)}")
        kept: dict[int, Any] = {}
        for f in self._functions.values():
            for p in f.params:
                if p["name"] in weights:
                    value = f.bind(p["name"], weights[p["name"]])
                    kept[id(value)] = value
        for value in kept.values():
            self._declare_constant(value)
        return self

    def _declare_constant(self, value: Any) -> None:
        """Declares a CPU array's memory constant (the GEMM packs it once); other devices and
        memory already declared (by another module binding the same array) are left as they
        are."""
        try:
            _dsc.declare_constant(value)
        except (TypeError, Error):
            return
        self._constants.append(value)

    def explain_fusion(self, fn: str | None = None) -> str:
        """Why each op was fused or not (`dscc check --explain-fusion`), for one fn or all.
        Needs the source: a module from dsc.compile, not dsc.load."""
        text, name, _ = self._require_source("explain_fusion")
        return _dsc.explain_fusion(text, name, fn or "")

    def ir(self, after: str = "legalize") -> str:
        """The IR after pass `after` (a pass name as `dscc build --print-after` takes it, or
        "llvm" for the optimized LLVM IR), compiled with this module's options. Needs the
        source: a module from dsc.compile, not dsc.load."""
        text, name, args = self._require_source("ir")
        return _dsc.print_ir(text, name, args, after)

    def _require_source(self, what: str) -> tuple[str | None, str, list[str]]:
        if self._source is None:
            raise InputError(f"Module.{what} needs the module's source: it is known for "
                             "modules from dsc.compile, not for dsc.load")
        return self._source


def _release_constants(constants: list[Any]) -> None:
    for value in constants:
        try:
            _dsc.release_constant(value)
        except Exception:  # noqa: BLE001 - at exit, or released already
            pass


def _load_safetensors(path: str) -> dict[str, Any]:
    """The tensors of a .safetensors file: NumPy arrays, or torch tensors for dtypes NumPy
    lacks (bf16)."""
    try:
        from safetensors.numpy import load_file
        return load_file(path)
    except (ValueError, TypeError) as e:
        try:
            from safetensors.torch import load_file as load_torch
        except ImportError:
            raise InputError(f"bind: cannot read {path} with NumPy ({e}); torch reads bf16") from e
        return load_torch(path)
