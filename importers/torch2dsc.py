#!/usr/bin/env python3
"""Imports a torch.export program into dsc: a readable .dsc file and a .safetensors file.

    importers/torch2dsc.py MODEL.pt2 -o DIR [--name NAME] [--dim SYM=NAME]... [--dtype DT]

reads MODEL.pt2 (written by torch.export.save) with torch.export.load and writes DIR/NAME.dsc
(one function, NAME, whose parameters are the program's inputs and then its weights) and
DIR/NAME.safetensors (the parameters and buffers it reads, under the parameter names), and
prints one line: the aten ops read, the statements written, the symbols and the parameters.
NAME defaults to the file's name without `.pt2`. Run the result with

    dscc run DIR/NAME.dsc --weights DIR/NAME.safetensors --input x=x.npy --output=out

Dynamic dims become symbols with torch's ranges as `where` clauses (`1 <= S <= 512`). A .pt2
keeps no Dim names, so the symbols are D0, D1, ... unless named with --dim: `--dim x.1=S`
(input x, axis 1) or `--dim s77=S` (torch's symbol). From Python, `to_dsc(ep, DIR)` in
importers/dscimport/torch_import.py names them from the export itself.
A program in bf16 or f16 imports in its dtypes; --dtype=bf16|f16|f32 converts every
floating-point tensor (weights rounded to nearest even), integer tensors untouched.
docs/importers.md has the rules and the table of supported ops.

Exit status: 0 on success; 1 when the program cannot be read or some nodes cannot be imported
(all of them are listed, and nothing is written); 2 on a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dscimport import cli  # noqa: E402 - the standard library only


def add_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--dim", action="append", default=[], metavar="SYM=NAME",
                    help="name a dynamic dim: INPUT.AXIS=NAME (x.1=S) or TORCHSYM=NAME "
                    "(s77=S); repeatable")


def check_args(ns: argparse.Namespace) -> str | None:
    """--dim, read into ns.dim_names."""
    ns.dim_names = {}
    for spec in ns.dim:
        key, sep, val = spec.partition("=")
        if not sep or not key or not val.isidentifier():
            return (f"--dim takes INPUT.AXIS=NAME or TORCHSYM=NAME with NAME an identifier, "
                    f"got '{spec}'")
        ns.dim_names[key] = val
    return None


def load(path: str):
    from dscimport.torch_load import load_pt2
    return load_pt2(path)


def convert(ep, name: str, source: str, ns: argparse.Namespace):
    from dscimport.torch_import import import_program
    return import_program(ep, name, source=source, dim_names=ns.dim_names, dtype=ns.dtype)


FRONTEND = cli.Frontend(
    prog="torch2dsc", description="Import a torch.export program (.pt2) into a .dsc file and "
    "a .safetensors file of weights.", model_help="the .pt2 file (torch.export.save)",
    suffix=".pt2", what="torch.export program", requires=("numpy", "safetensors", "torch"),
    install="tools/scripts/install_python_deps.sh", load=load, convert=convert,
    add_args=add_args, check_args=check_args)


def main(argv: list[str]) -> int:
    return cli.main(FRONTEND, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
