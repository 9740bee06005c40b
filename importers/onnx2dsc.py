#!/usr/bin/env python3
"""Imports an ONNX model into dsc: a readable .dsc file and a .safetensors file of weights.

    importers/onnx2dsc.py MODEL.onnx -o DIR [--name NAME] [--dtype DT]

writes DIR/NAME.dsc (one function, NAME, whose parameters are the model's inputs and then its
weights) and DIR/NAME.safetensors (the weights, under the parameter names), and prints one
line: the nodes read, the statements written, the symbols and the parameters. NAME defaults to
the model file's name without `.onnx`. Run the result with

    dscc run DIR/NAME.dsc --weights DIR/NAME.safetensors --input x=x.npy --output=out

Dynamic dims become symbols (`dim_param` names, sanitized; unnamed ones D0, D1, ...), each with
`where SYM >= 1`; shape computations are folded into symbolic shapes. FLOAT16 and BFLOAT16
tensors import as f16 and bf16; --dtype=bf16|f16|f32 converts every floating-point tensor
(weights rounded to nearest even), integer tensors untouched. docs/importers.md has the rules
and the table of supported ops.

Exit status: 0 on success; 1 when the model cannot be read or some nodes cannot be imported
(all of them are listed, and nothing is written); 2 on a usage error.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dscimport import cli  # noqa: E402 - the standard library only


def load(path: str):
    import onnx
    with open(path, "rb") as f:
        model = onnx.load_model_from_string(f.read())
    if not model.HasField("graph"):
        raise ValueError("it has no graph")
    if any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
        from onnx.external_data_helper import load_external_data_for_model
        load_external_data_for_model(model, os.path.dirname(os.path.abspath(path)))
    return model


def convert(model, name: str, source: str, ns):
    from dscimport.onnx_import import import_model
    return import_model(model, name, source=source, dtype=ns.dtype)


FRONTEND = cli.Frontend(
    prog="onnx2dsc", description="Import an ONNX model into a .dsc file and a .safetensors "
    "file of weights.", model_help="the .onnx file", suffix=".onnx", what="ONNX model",
    requires=("numpy", "onnx", "safetensors"),
    install="tools/scripts/install_python_deps.sh --tests", load=load, convert=convert)


def main(argv: list[str]) -> int:
    return cli.main(FRONTEND, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
