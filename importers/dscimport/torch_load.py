"""Reading a .pt2 file (torch.export.save) for torch2dsc: `load_pt2` is torch.export.load,
saying why a file does not load (torch only logs it), and loading a program whose output is a
type another package registered with torch's pytree (transformers' `ModelOutput`s) without
that package.
"""

from __future__ import annotations

import logging
import re

import torch


class _LoadErrors(logging.Handler):
    """Keeps the exceptions torch.export.load logs (it logs why a file does not deserialize,
    then raises an error that only says to look at the log)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.errors: list[BaseException] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            self.errors.append(record.exc_info[1])


_UNREGISTERED = re.compile(r"Deserializing (\S+) in pytree failed because the serialized type "
                           r"is not registered")
_STAND_INS: dict[str, type] = {}


def _register_stand_in(type_name: str) -> None:
    """A pytree node registered under another package's serialized type name (transformers'
    `ModelOutput` classes, a dataclass of the user's): the program's outputs are read as the
    node's fields in order, which is all the importer needs, so the package is not imported."""
    from torch.utils import _pytree as pytree

    cls = type(type_name.rsplit(".", 1)[-1], (dict,), {"__module__": __name__})

    def flatten(d):
        return list(d.values()), list(d.keys())

    def unflatten(values, keys):
        return cls(zip(keys, values))

    pytree.register_pytree_node(cls, flatten, unflatten, serialized_type_name=type_name)
    _STAND_INS[type_name] = cls


def load_pt2(path: str):
    """torch.export.load, saying why a file does not load. A program that returns a type
    registered with torch's pytree by another package (transformers' `ModelOutput`, such as
    `BaseModelOutputWithPooling`) loads without that package: the type is registered here as
    a stand-in whose fields are the program's outputs in order."""
    handler = _LoadErrors()
    logger = logging.getLogger("torch.export")
    for _ in range(64):
        handler.errors.clear()
        # Only this handler hears torch's log while loading (torch prints it on stderr).
        saved = logger.handlers[:], logger.propagate
        logger.handlers[:] = [handler]
        logger.propagate = False
        try:
            return torch.export.load(path)
        except Exception as e:  # noqa: BLE001 - the cause is what torch logged, if anything
            cause = handler.errors[-1] if handler.errors else e
        finally:
            logger.handlers[:], logger.propagate = saved
        text = " ".join(str(cause).split())
        m = _UNREGISTERED.search(text)
        if m is None or m.group(1) in _STAND_INS:
            raise RuntimeError(text or type(cause).__name__) from cause
        _register_stand_in(m.group(1))
    raise RuntimeError("the program's outputs use too many types unknown to torch's pytree")
