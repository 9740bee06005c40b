"""Writes an import's files, NAME.dsc and NAME.safetensors, all or nothing: each goes to a
temporary file in the output directory first, and they are renamed into place only when every
one was written."""

from __future__ import annotations

import os
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


def safetensors_bytes(weights: dict[str, np.ndarray]) -> bytes:
    """The weights as a .safetensors file (the `safetensors` package's numpy writer)."""
    from safetensors.numpy import save
    return save({k: np.require(v, requirements="C") for k, v in weights.items()})


def write_result(result: ImportResult, out_dir: str, stem: str) -> None:
    """Writes OUT_DIR/STEM.dsc and OUT_DIR/STEM.safetensors (OUT_DIR is created if missing),
    both or neither, and records their paths in the result."""
    weights = safetensors_bytes(result.weights)
    os.makedirs(out_dir, exist_ok=True)
    dsc_path = os.path.join(out_dir, stem + ".dsc")
    st_path = os.path.join(out_dir, stem + ".safetensors")
    write_files({dsc_path: result.text.encode(), st_path: weights})
    result.dsc_path, result.weights_path = dsc_path, st_path
