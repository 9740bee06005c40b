"""What dsc.compile and dsc.check take: .dsc text, or the path of a .dsc file."""

from __future__ import annotations

import os


def read_source(source: str | os.PathLike) -> tuple[str | None, str]:
    """(text, name): the text to compile, or None when the compiler reads the file `name`.

    A path-like object is a path. A string is a path when it is one line that names an
    existing file or ends in `.dsc`; otherwise it is the source text itself ("<string>").
    """
    if isinstance(source, os.PathLike):
        return None, os.fspath(source)
    if not isinstance(source, str):
        raise TypeError(f"dsc: a source is .dsc text or a path, not {type(source).__name__}")
    if "\n" not in source and (source.endswith(".dsc") or os.path.isfile(source)):
        return None, source
    return source, "<string>"
