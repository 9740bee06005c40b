"""dscimport: importers from other model formats into .dsc (see docs/importers.md).

- symdim.py: symbolic dims (polynomials over symbols) that shape computations fold into;
- program.py: one dsc function built value by value and printed readably;
- onnx_import.py: the ONNX front end (a table of op converters);
- output.py: writing the .dsc and .safetensors files, all or nothing.
"""
