"""What the importers' command lines (onnx2dsc.py, torch2dsc.py) share: the arguments every
importer takes, the output name, and the one-line errors. It imports only the standard library,
so a script can use it before checking that the importer's own dependencies are installed."""

from __future__ import annotations

import argparse
import os
import sys
import traceback


def add_output_args(ap: argparse.ArgumentParser, model_help: str) -> None:
    """The model file, -o/--output-dir and --name."""
    ap.add_argument("model", help=model_help)
    ap.add_argument("-o", "--output-dir", required=True, help="directory for NAME.dsc and "
                    "NAME.safetensors (created if missing)")
    ap.add_argument("--name", help="output file stem and function name (default: the model "
                    "file's name)")


def add_traceback_arg(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--traceback", action="store_true", help="print a Python traceback on an "
                    "internal error")


def fail(prog: str, msg: str) -> int:
    """Says `PROG: error: MSG` on stderr; exit status 1."""
    print(f"{prog}: error: {msg}", file=sys.stderr)
    return 1


def output_name(prog: str, path: str, suffix: str, name: str | None) -> str | None:
    """--name, or the model file's name less suffix; None (said on stderr) if it is not a
    file name."""
    stem = os.path.basename(path)
    if stem.endswith(suffix):
        stem = stem[:-len(suffix)]
    name = name or stem
    if not name or "/" in name or name in (".", ".."):
        print(f"{prog}: error: --name must be a file name, got '{name}'", file=sys.stderr)
        return None
    return name


def internal_error(prog: str, path: str, e: Exception, show_traceback: bool) -> int:
    """A bug in the importer, said in one line (with the traceback first if asked for)."""
    if show_traceback:
        traceback.print_exc()
    return fail(prog, f"internal error while importing {path}: {type(e).__name__}: {e} "
                f"(rerun with --traceback for details)")
