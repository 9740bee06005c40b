"""dsc's exceptions: one base class, and one class per kind of failure.

    try:
        out = module.layer(x)
    except dsc.ShapeError as e:   # a violated `where` clause: the message names it and the values
        ...

Each is also the builtin exception a Python user would expect (ShapeError is a ValueError,
InputError a TypeError, dsc.RuntimeError the builtin RuntimeError), so generic handlers keep
working.
"""

from __future__ import annotations

import builtins

__all__ = ["Error", "CompileError", "ShapeError", "InputError", "RuntimeError"]


class Error(Exception):
    """The base class of every error dsc raises."""


class CompileError(Error):
    """The compiler refused the source or an option; the message is its diagnostics, as
    `dscc` prints them (file:line:col: error: ...)."""


class ShapeError(Error, ValueError):
    """A call's shapes violate the function's contract: a `where` clause (the message names the
    clause, its location and the symbols' values, e.g. "where S <= 512 violated: S = 600
    (bert_layer.dsc:8:19)"), a run-time shape fact, or dims that must agree and do not."""


class InputError(Error, TypeError):
    """A call's inputs do not fit the signature: a missing or extra input, or one of the wrong
    dtype, rank or device, or one that is not an array at all."""


class RuntimeError(Error, builtins.RuntimeError):  # noqa: A001 - dsc.RuntimeError by design
    """Anything else that fails at run time: memory, the GPU, a model that cannot be loaded."""


# Shown as dsc.ShapeError (where users catch them), not dsc.errors.ShapeError.
for _cls in (Error, CompileError, ShapeError, InputError, RuntimeError):
    _cls.__module__ = "dsc"
del _cls
