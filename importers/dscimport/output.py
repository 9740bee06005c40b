"""Writes an import's files, NAME.dsc and NAME.safetensors, all or nothing: each goes to a
temporary file in the output directory first, and they are renamed into place only when every
one was written."""

from __future__ import annotations

import json
import os
import struct
import tempfile

import numpy as np

from .common import ImportResult


def write_files(files: dict[str, bytes]) -> None:
    """files: final path -> contents. Either every file is in place afterwards or, on an
    error, none is: the temporary files are removed, and a file already renamed into place
    when a later rename fails is removed again."""
    temps: dict[str, str] = {}
    renamed: list[str] = []
    # mkstemp makes files only their owner may read; the outputs get the usual permissions.
    umask = os.umask(0)
    os.umask(umask)
    try:
        for path, data in files.items():
            d = os.path.dirname(os.path.abspath(path))
            fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".",
                                       suffix=".tmp")
            temps[path] = tmp
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, 0o666 & ~umask)
        for path, tmp in temps.items():
            os.replace(tmp, path)
            renamed.append(path)
    except BaseException:
        for tmp in temps.values():
            if os.path.exists(tmp):
                os.unlink(tmp)
        for path in renamed:
            if os.path.exists(path):
                os.unlink(path)
        raise


# NumPy types -> the dtype names of a .safetensors header. uint16 is bf16's bits: dsc has no
# 16-bit integer dtype, and NumPy no bfloat16 (dtypes.py).
SAFETENSORS_DTYPES = {np.dtype(np.float64): "F64", np.dtype(np.float32): "F32",
                      np.dtype(np.float16): "F16", np.dtype(np.uint16): "BF16",
                      np.dtype(np.int64): "I64", np.dtype(np.int32): "I32",
                      np.dtype(np.int8): "I8", np.dtype(np.bool_): "BOOL"}


def safetensors_bytes(weights: dict[str, np.ndarray],
                      metadata: dict[str, str] | None = None) -> bytes:
    """The weights as a .safetensors file: 8 bytes of little-endian header length, the JSON
    header (name -> dtype, shape, data_offsets; padded with spaces to a multiple of 8 bytes),
    then each tensor's little-endian bytes in the order given, with no gaps. A uint16 array is
    bf16 bits, stored as "BF16" (the safetensors package's NumPy writer would say "U16").
    metadata (string -> string) becomes the header's "__metadata__" entry."""
    header: dict[str, object] = {}
    if metadata:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise ValueError("safetensors metadata maps strings to strings")
        header["__metadata__"] = dict(metadata)
    chunks: list[bytes] = []
    offset = 0
    for name, a in weights.items():
        dtype = SAFETENSORS_DTYPES.get(np.dtype(a.dtype))
        if dtype is None:
            raise ValueError(f"weight '{name}' has numpy dtype {a.dtype}, which has no "
                             f"safetensors dtype here")
        data = np.require(a, dtype=a.dtype.newbyteorder("<"), requirements="C").tobytes()
        header[name] = {"dtype": dtype, "shape": [int(d) for d in a.shape],
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def write_result(result: ImportResult, out_dir: str, stem: str) -> None:
    """Writes OUT_DIR/STEM.dsc and OUT_DIR/STEM.safetensors (OUT_DIR is created if missing),
    both or neither, and records their paths in the result."""
    weights = safetensors_bytes(result.weights)
    os.makedirs(out_dir, exist_ok=True)
    dsc_path = os.path.join(out_dir, stem + ".dsc")
    st_path = os.path.join(out_dir, stem + ".safetensors")
    write_files({dsc_path: result.text.encode(), st_path: weights})
    result.dsc_path, result.weights_path = dsc_path, st_path
