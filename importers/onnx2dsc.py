#!/usr/bin/env python3
"""Imports an ONNX model into dsc: a readable .dsc file and a .safetensors file of weights.

    importers/onnx2dsc.py MODEL.onnx -o DIR [--name NAME]

writes DIR/NAME.dsc (one function, NAME, whose parameters are the model's inputs and then its
weights) and DIR/NAME.safetensors (the weights, under the parameter names), and prints one
line: the nodes read, the statements written, the symbols and the parameters. NAME defaults to
the model file's name without `.onnx`. Run the result with

    dscc run DIR/NAME.dsc --weights DIR/NAME.safetensors --input x=x.npy --output=out

Dynamic dims become symbols (`dim_param` names, sanitized; unnamed ones D0, D1, ...), each with
`where SYM >= 1`; shape computations are folded into symbolic shapes. docs/importers.md has
the rules and the table of supported ops.

Exit status: 0 on success; 1 when the model cannot be read or some nodes cannot be imported
(all of them are listed, and nothing is written); 2 on a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dscimport import cli  # noqa: E402 - the standard library only

PROG = "onnx2dsc"


def plural(k: int, word: str) -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


def fail(msg: str) -> int:
    return cli.fail(PROG, msg)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="onnx2dsc.py", description="Import an ONNX model into a .dsc file and a "
        ".safetensors file of weights.")
    cli.add_output_args(ap, "the .onnx file")
    cli.add_traceback_arg(ap)
    ns = ap.parse_args(argv)

    try:
        import numpy  # noqa: F401
        import onnx
        import safetensors  # noqa: F401
    except ImportError as e:
        return fail(f"{e.name or e} is not installed: run tools/scripts/install_python_deps.sh "
                    f"--tests")

    from dscimport.onnx_import import ImportFailure, ModelError, import_model
    from dscimport.output import safetensors_bytes, write_files
    from dscimport.program import identifier

    path = ns.model
    name = cli.output_name(PROG, path, ".onnx", ns.name)
    if name is None:
        return 2

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return fail(f"cannot read {path}: {e.strerror or e}")
    try:
        model = onnx.load_model_from_string(data)
        if not model.HasField("graph"):
            raise ValueError("it has no graph")
        if any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
            from onnx.external_data_helper import load_external_data_for_model
            load_external_data_for_model(model, os.path.dirname(os.path.abspath(path)))
    except Exception as e:  # noqa: BLE001 - protobuf raises several kinds; all mean "unreadable"
        detail = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return fail(f"{path} is not a readable ONNX model ({detail})")

    try:
        result = import_model(model, identifier(name, "model"), source=os.path.basename(path))
        weights = safetensors_bytes(result.weights)
    except ModelError as e:
        return fail(f"{path}: {e}")
    except ImportFailure as e:
        kinds = list(dict.fromkeys(p.op for p in e.problems))
        print(f"{PROG}: error: {path}: {len(e.problems)} node"
              f"{'s' if len(e.problems) != 1 else ''} cannot be imported (unsupported: "
              f"{', '.join(kinds)}); nothing was written", file=sys.stderr)
        for p in e.problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - a bug in the importer: say so, in one line
        return cli.internal_error(PROG, path, e, ns.traceback)

    out_dir = ns.output_dir
    dsc_path = os.path.join(out_dir, name + ".dsc")
    st_path = os.path.join(out_dir, name + ".safetensors")
    try:
        os.makedirs(out_dir, exist_ok=True)
        write_files({dsc_path: result.text.encode(),
                     st_path: weights})
    except OSError as e:
        return fail(f"cannot write to {out_dir}: {e.strerror or e}")

    n_weights = len(result.weights)
    n_values = sum(int(a.size) for a in result.weights.values())
    n_nodes = sum(result.op_counts.values())
    top = ", ".join(f"{op} {k}" for op, k in sorted(result.op_counts.items(),
                                                   key=lambda kv: (-kv[1], kv[0])))
    syms = ", ".join(result.symbols) if result.symbols else "none"
    print(f"{PROG}: {path} -> {dsc_path}, {st_path}: ops: {plural(n_nodes, 'ONNX node')}"
          f"{f' ({top})' if top else ''} as {plural(result.n_statements, 'dsc statement')}; "
          f"symbols: {syms}; parameters: "
          f"{result.n_inputs + n_weights} ({plural(result.n_inputs, 'input')}, "
          f"{plural(n_weights, 'weight')}, {plural(n_values, 'value')})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
