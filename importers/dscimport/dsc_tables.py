"""The compiler's own tables of names, read from the source tree, so that the importers keep no
copy that could fall out of step with them:

- "ops", ir/Ops.def: the graph ops, one `DSC_OP(name, ...)` row each;
- "intrinsics", ir/Intrinsics.def: the scalar intrinsics of prim bodies,
  `DSC_INTRINSIC(name, ...)`;
- "keywords", lang/Lexer.h: the `X(KwName, "spelling")` rows of DSC_TOKEN_KINDS;
- "dtypes", ir/DTypes.def: the element types, `DSC_DTYPE(Enum, "name", ...)`.

Each is read once, on first use (program.py uses them when it is imported). The importers run
from a checkout, importers/ beside ir/ and lang/, or from the Python package (build/python/, or
installed by `pip install .`), which carries copies of the four files in dscimport/tables/
(tools/python/CMakeLists.txt); a table that is missing, unreadable or has no rows is a
SourceTreeError naming the file. Only the standard library is imported here.
"""

from __future__ import annotations

import functools
import os
import re

# The checkout, importers/dscimport/ -> the root; else the package's copies.
_HERE = os.path.dirname(os.path.abspath(__file__))
_CHECKOUT = os.path.dirname(os.path.dirname(_HERE))
SOURCE_DIR = (_CHECKOUT if os.path.isfile(os.path.join(_CHECKOUT, "ir", "Ops.def"))
              else os.path.join(_HERE, "tables"))


class SourceTreeError(Exception):
    """A table of the compiler that the importers read is missing or has no rows."""


# Each table: its file in the source tree, and the pattern of a row's name.
TABLES = {
    "ops": ("ir/Ops.def", r"^DSC_OP\(\s*([A-Za-z_]\w*)\s*,"),
    "intrinsics": ("ir/Intrinsics.def", r"^DSC_INTRINSIC\(\s*([A-Za-z_]\w*)\s*,"),
    "keywords": ("lang/Lexer.h", r"\bX\(Kw\w+,\s*\"([A-Za-z_]\w*)\"\)"),
    "dtypes": ("ir/DTypes.def", r"^DSC_DTYPE\(\s*\w+\s*,\s*\"([A-Za-z_]\w*)\""),
}


@functools.cache
def names(table: str) -> tuple[str, ...]:
    """The names of a table's rows, in its order: names("ops") is ("add", "sub", ...)."""
    relpath, pattern = TABLES[table]
    path = os.path.join(SOURCE_DIR, relpath)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise SourceTreeError(f"the importers read {relpath} of the dsc source tree, but "
                              f"cannot read {path}: {e.strerror or e} (they run from a "
                              f"checkout, importers/ beside ir/ and lang/)") from None
    found = tuple(re.findall(pattern, text, flags=re.MULTILINE))
    if not found:
        raise SourceTreeError(f"{path} has no rows of the form the importers read "
                              f"({pattern!r}); has the table's format changed?")
    return found
