#!/usr/bin/env python3
"""docs/importers.md's tables of supported ops, made from the importers' converter registries
(`CONVERTERS` in importers/dscimport/onnx_node.py and torch_node.py: each op registered with
how it maps, `dsc` and `note`), so that the docs cannot drift from the code.

    importer_op_tables.py            rewrites the tables in docs/importers.md
    importer_op_tables.py --check    exits 1, with a diff, when they are out of date (ctest
                                     importers_op_tables)

Each table sits between `<!-- op table: onnx2dsc -->` (or torch2dsc) and `<!-- end op table -->`.
One row per converter and mapping, its ops in registration order; aten overloads are grouped
under the op's name (`add, sub (.Tensor, .Scalar)`).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DOC = os.path.join(ROOT, "docs", "importers.md")
END = "<!-- end op table -->"


def cell(text: str) -> str:
    """`text` in a table cell: its pipes escaped (those a note escapes already stay)."""
    return re.sub(r"(?<!\\)\|", r"\\|", text)


def rows(registry):
    """(ops, dsc, note) per converter and mapping, in registration order."""
    grouped: dict[tuple, list[str]] = {}
    for op, fn in registry.converters.items():
        grouped.setdefault((fn, registry.notes[op]), []).append(op)
    return [(ops, dsc, note) for (_, (dsc, note)), ops in grouped.items()]


def aten_names(ops: list[str]) -> str:
    """`aten.add.Tensor`, `aten.add.Scalar`, `aten.sub.Tensor`, ... as `add, sub (.Tensor,
    .Scalar)`; `.default` overloads go unsaid."""
    overloads: dict[str, list[str]] = {}
    for op in ops:
        base, overload = op, ""
        if op.startswith("aten."):
            base, _, overload = op.removeprefix("aten.").partition(".")
        overloads.setdefault(base, []).append(overload)

    def said(over: list[str]) -> str:
        if all(o in ("", "default") for o in over):
            return ""
        return " (" + ", ".join(f"`.{o or 'default'}`" for o in over) + ")"

    lists = list(overloads.values())
    if len(lists) > 1 and all(sorted(o) == sorted(lists[0]) for o in lists):
        return ", ".join(overloads) + said(lists[0])
    return ", ".join(base + said(over) for base, over in overloads.items())


def onnx_table(registry) -> list[str]:
    out = ["| ONNX op | dsc, and notes |", "|---|---|"]
    for ops, dsc, note in rows(registry):
        text = "; ".join(t for t in (dsc, note) if t)
        out.append(f"| {', '.join(ops)} | {cell(text)} |")
    return out


def torch_table(registry) -> list[str]:
    out = ["| aten op | dsc | notes |", "|---|---|---|"]
    for ops, dsc, note in rows(registry):
        out.append(f"| {aten_names(ops)} | {cell(dsc)} | {cell(note)} |")
    return out


def tables() -> dict[str, list[str]]:
    sys.path.insert(0, os.path.join(ROOT, "importers"))
    from dscimport import onnx_import, torch_import  # noqa: F401  (they fill the registries)
    from dscimport.onnx_node import CONVERTERS as onnx_converters
    from dscimport.torch_node import CONVERTERS as torch_converters
    return {"onnx2dsc": onnx_table(onnx_converters), "torch2dsc": torch_table(torch_converters)}


def rewrite(text: str, made: dict[str, list[str]]) -> str:
    for front_end, table in made.items():
        begin = f"<!-- op table: {front_end} (tools/scripts/importer_op_tables.py) -->"
        pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(END), re.S)
        if not pattern.search(text):
            sys.exit(f"importer_op_tables.py: {DOC} has no `{begin}` ... `{END}` section")
        text = pattern.sub(lambda _: "\n".join([begin, *table, END]), text)
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="fail when the tables are out of date")
    args = ap.parse_args()
    try:
        made = tables()
    except ImportError as e:
        print(f"SKIP: {e.name or e} is not installed: run tools/scripts/install_python_deps.sh --tests")
        return 77
    with open(DOC, encoding="utf-8") as f:
        old = f.read()
    new = rewrite(old, made)
    if not args.check:
        if new != old:
            with open(DOC, "w", encoding="utf-8") as f:
                f.write(new)
        print(f"importer_op_tables.py: {DOC} " + ("rewritten" if new != old else "up to date"))
        return 0
    if new == old:
        print("importer_op_tables.py: the op tables of docs/importers.md match the registries")
        return 0
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                               "docs/importers.md", "from the registries"))
    print("importer_op_tables.py: docs/importers.md's op tables are out of date: run "
          "tools/scripts/importer_op_tables.py")
    return 1


if __name__ == "__main__":
    sys.exit(main())
