"""Writes an import's files all or nothing: each goes to a temporary file in the output
directory first, and they are renamed into place only when every one was written."""

from __future__ import annotations

import os
import tempfile

import numpy as np


def write_files(files: dict[str, bytes]) -> None:
    """files: final path -> contents. Either every file is in place afterwards or, on an
    error, none is: the temporary files are removed, and a file already renamed into place
    when a later rename fails is removed again."""
    temps: dict[str, str] = {}
    renamed: list[str] = []
    try:
        for path, data in files.items():
            d = os.path.dirname(os.path.abspath(path))
            fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".",
                                       suffix=".tmp")
            temps[path] = tmp
            with os.fdopen(fd, "wb") as f:
                f.write(data)
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


def safetensors_bytes(weights: dict[str, np.ndarray]) -> bytes:
    """The weights as a .safetensors file (the `safetensors` package's numpy writer)."""
    from safetensors.numpy import save
    return save({k: np.require(v, requirements="C") for k, v in weights.items()})
