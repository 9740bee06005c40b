#!/usr/bin/env python3
"""Imports a torch.export program into dsc: a readable .dsc file and a .safetensors file.

    importers/torch2dsc.py MODEL.pt2 -o DIR [--name NAME] [--dim SYM=NAME]...

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
docs/importers.md has the rules and the table of supported ops.

Exit status: 0 on success; 1 when the program cannot be read or some nodes cannot be imported
(all of them are listed, and nothing is written); 2 on a usage error.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dscimport import cli  # noqa: E402 - the standard library only

PROG = "torch2dsc"


def fail(msg: str) -> int:
    return cli.fail(PROG, msg)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="torch2dsc.py", description="Import a torch.export program (.pt2) into a .dsc "
        "file and a .safetensors file of weights.")
    cli.add_output_args(ap, "the .pt2 file (torch.export.save)")
    ap.add_argument("--dim", action="append", default=[], metavar="SYM=NAME",
                    help="name a dynamic dim: INPUT.AXIS=NAME (x.1=S) or TORCHSYM=NAME "
                    "(s77=S); repeatable")
    cli.add_traceback_arg(ap)
    ns = ap.parse_args(argv)

    dim_names = {}
    for spec in ns.dim:
        key, sep, val = spec.partition("=")
        if not sep or not key or not val.isidentifier():
            print(f"{PROG}: error: --dim takes INPUT.AXIS=NAME or TORCHSYM=NAME with NAME an "
                  f"identifier, got '{spec}'", file=sys.stderr)
            return 2
        dim_names[key] = val

    path = ns.model
    name = cli.output_name(PROG, path, ".pt2", ns.name)
    if name is None:
        return 2

    if not os.path.isfile(path):
        return fail(f"cannot read {path}: " + ("it is a directory" if os.path.isdir(path)
                                               else "no such file"))
    if not os.access(path, os.R_OK):
        return fail(f"cannot read {path}: permission denied")

    for module in ("numpy", "safetensors", "torch"):
        if importlib.util.find_spec(module) is None:
            return fail(f"{module} is not installed: run tools/scripts/install_python_deps.sh")
    try:
        import torch
    except ImportError as e:
        return fail(f"torch cannot be imported: {e}")

    from dscimport import torch_import as ti

    try:
        # torch logs a traceback when the archive does not deserialize, then raises.
        logging.disable(logging.CRITICAL)
        ep = torch.export.load(path)
    except Exception as e:  # noqa: BLE001 - zip, pickle and json errors all mean "unreadable"
        detail = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return fail(f"{path} is not a readable torch.export program ({detail[:200]})")
    finally:
        logging.disable(logging.NOTSET)

    try:
        result = ti.to_dsc(ep, ns.output_dir, name, dim_names=dim_names,
                           source=os.path.basename(path))
    except ti.ModelError as e:
        return fail(f"{path}: {e}")
    except ti.ImportFailure as e:
        print(f"{PROG}: error: {e.message(path)}", file=sys.stderr)
        return 1
    except OSError as e:
        return fail(f"cannot write to {ns.output_dir}: {e.strerror or e}")
    except Exception as e:  # noqa: BLE001 - a bug in the importer: say so, in one line
        return cli.internal_error(PROG, path, e, ns.traceback)
    print(f"{PROG}: {result.summary(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
