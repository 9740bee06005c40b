"""dscimport: importers from other model formats into .dsc (see docs/importers.md).

- symdim.py: symbolic dims (polynomials over symbols) that shape computations fold into;
- program.py: one dsc function built value by value and printed readably;
- onnx_import.py: the ONNX front end (a table of op converters);
- torch_import.py: the torch.export front end (`to_dsc`), with its aten converters in
  torch_ops.py and torch_layout.py;
- output.py: writing the .dsc and .safetensors files, all or nothing.
"""
