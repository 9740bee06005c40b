"""TempDirOwner: the base of the benchmark peers that may own a temporary directory
(bert_compile.CompiledLayer's Inductor cache, bert_onnx.OrtPeer's exported model). Free of
torch, so that importing a peer's module never needs it."""

from __future__ import annotations

import shutil
import tempfile


class TempDirOwner:
    """A context manager; close() removes the directory make_temp_dir made, if any."""

    _tmp: str | None = None

    def make_temp_dir(self, prefix: str) -> str:
        self._tmp = tempfile.mkdtemp(prefix=prefix)
        return self._tmp

    def close(self) -> None:
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
