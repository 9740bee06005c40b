"""dscimport: importers from other model formats into .dsc (see docs/importers.md, "The code").

- common.py: what both front ends share: errors, the result, the converter table (Registry),
  dtype maps, shape helpers;
- symdim.py: symbolic dims (polynomials over symbols) that shape computations fold into;
- program.py: one dsc function built value by value and printed readably;
- dsc_tables.py: the compiler's tables of names (ir/Ops.def, lang/Lexer.h, ...), read from the
  source tree;
- onnx_import.py: the ONNX front end (`import_model`); onnx_node.py: its per-node context and
  converter table; onnx_ops.py, onnx_layout.py, onnx_conv.py: its converters;
- torch_import.py: the torch.export front end (`to_dsc`); torch_node.py: its per-node context
  and converter table; torch_ops.py, torch_nn.py, torch_layout.py, torch_index.py: its
  converters;
- output.py: writing the .dsc and .safetensors files, all or nothing;
- cli.py: what the command lines (onnx2dsc.py, torch2dsc.py) share.

A front end's driver imports its op modules, which import only the shared modules, so no
modules import each other in a cycle (tests/importers/check_import_cycles.py checks it).
"""
