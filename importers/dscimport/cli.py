"""What the importers' command lines (onnx2dsc.py, torch2dsc.py) share: the arguments every
importer takes, the steps from a model file to NAME.dsc and NAME.safetensors, and the one-line
errors and exit statuses. A command line describes its format in a `Frontend`: its own
options, how a file is loaded, how a loaded model is imported. This module imports only the
standard library, so a script can use it before checking that the importer's own dependencies
are installed.

Exit status: 0 on success; 1 when the model cannot be read or imported (every node that cannot
be imported is listed, and nothing is written); 2 on a usage error.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
import traceback
from dataclasses import dataclass
from typing import Callable


# What --dtype takes: dscimport/dtypes.py's TARGETS (not imported here: this module needs only
# the standard library).
DTYPE_CHOICES = ("bf16", "f16", "f32")


@dataclass
class Frontend:
    prog: str                # "onnx2dsc": the prefix of every message
    description: str
    model_help: str
    suffix: str              # the model file's suffix, which NAME drops
    what: str                # "ONNX model": `PATH is not a readable ONNX model (...)`
    requires: tuple[str, ...]  # the modules the import needs
    install: str             # the command that installs them
    # Reads the model from its file; any exception means the file is unreadable.
    load: Callable[[str], object]
    # Imports a loaded model as the function NAME: (model, NAME, the file's base name, the
    # parsed arguments) -> common.ImportResult; raises common.ModelError or ImportFailure.
    convert: Callable[[object, str, str, argparse.Namespace], object]
    # The format's own options, and their check: a message for a usage error, or None.
    add_args: Callable[[argparse.ArgumentParser], None] = lambda ap: None
    check_args: Callable[[argparse.Namespace], str | None] = lambda ns: None


def fail(prog: str, msg: str, status: int = 1) -> int:
    """Says `PROG: error: MSG` on stderr; returns the exit status."""
    print(f"{prog}: error: {msg}", file=sys.stderr)
    return status


def first_line(e: Exception) -> str:
    """An exception's message in one line (its type when it has none)."""
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def parse_args(fe: Frontend, argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog=f"{fe.prog}.py", description=fe.description)
    ap.add_argument("model", help=fe.model_help)
    ap.add_argument("-o", "--output-dir", required=True, help="directory for NAME.dsc and "
                    "NAME.safetensors (created if missing)")
    ap.add_argument("--name", help="output file stem and function name (default: the model "
                    "file's name)")
    ap.add_argument("--dtype", choices=DTYPE_CHOICES, help="convert every floating-point "
                    "tensor (weights, inputs, outputs and the values between) to this dtype, "
                    "rounding to nearest even; integer and bool tensors are untouched (default: "
                    "keep the model's dtypes, bf16 and f16 included)")
    fe.add_args(ap)
    ap.add_argument("--traceback", action="store_true", help="print a Python traceback on an "
                    "internal error")
    return ap.parse_args(argv)


def output_name(path: str, suffix: str, name: str | None) -> str:
    """--name, or the model file's name less suffix."""
    stem = os.path.basename(path)
    if stem.endswith(suffix):
        stem = stem[:-len(suffix)]
    return name or stem


def unreadable(path: str) -> str | None:
    """Why the model file cannot be read, or None."""
    if not os.path.isfile(path):
        return "it is a directory" if os.path.isdir(path) else "no such file"
    if not os.access(path, os.R_OK):
        return "permission denied"
    return None


def missing_module(fe: Frontend) -> str | None:
    """Why a module the import needs cannot be used, or None."""
    for module in fe.requires:
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed: run {fe.install}"
    for module in fe.requires:
        try:
            importlib.import_module(module)
        except ImportError as e:
            return f"{module} cannot be imported: {e}"
    return None


def main(fe: Frontend, argv: list[str]) -> int:
    ns = parse_args(fe, argv)
    usage = fe.check_args(ns)
    if usage is not None:
        return fail(fe.prog, usage, 2)
    path = ns.model
    name = output_name(path, fe.suffix, ns.name)
    if not name or "/" in name or name in (".", ".."):
        return fail(fe.prog, f"--name must be a file name, got '{name}'", 2)
    why = unreadable(path)
    if why is not None:
        return fail(fe.prog, f"cannot read {path}: {why}")
    why = missing_module(fe)
    if why is not None:
        return fail(fe.prog, why)

    from . import dsc_tables
    try:
        from . import common, output, program
    except dsc_tables.SourceTreeError as e:
        return fail(fe.prog, str(e))

    try:
        model = fe.load(path)
    except Exception as e:  # noqa: BLE001 - every reader's errors mean "unreadable"
        return fail(fe.prog, f"{path} is not a readable {fe.what} ({first_line(e)[:200]})")
    try:
        result = fe.convert(model, program.identifier(name, "model"), os.path.basename(path),
                            ns)
    except common.ModelError as e:
        return fail(fe.prog, f"{path}: {e}")
    except common.ImportFailure as e:
        return fail(fe.prog, e.message(path))
    except Exception as e:  # noqa: BLE001 - a bug in the importer: say so, in one line
        return internal_error(fe.prog, path, e, ns.traceback)
    try:
        output.write_result(result, ns.output_dir, name)
    except OSError as e:
        return fail(fe.prog, f"cannot write to {ns.output_dir}: {e.strerror or e}")
    except Exception as e:  # noqa: BLE001
        return internal_error(fe.prog, path, e, ns.traceback)
    print(f"{fe.prog}: {result.summary(path)}")
    return 0


def internal_error(prog: str, path: str, e: Exception, show_traceback: bool) -> int:
    """A bug in the importer, said in one line (with the traceback first if asked for)."""
    if show_traceback:
        traceback.print_exc()
    return fail(prog, f"internal error while importing {path}: {type(e).__name__}: {e} "
                f"(rerun with --traceback for details)")
