#!/usr/bin/env python3
"""Identity lint: no op, intrinsic or library routine is named by a string literal outside its
table and the code that parses or prints names.

    lint_identity.py [--root DIR]

dsc refers to an op by ir::OpId, an intrinsic by ir::IntrinsicId and a routine by
ir::RoutineId or its table's columns; the names are their spelling in .dsc text only. A C++
string literal that is exactly such a name (`"tanh"`, `"dsc.sgemm"`) in the compiler, the
runtime or the tools is an identity by text, which a rename breaks silently. This script reads
the names from the tables (ir/Ops.def, ir/Intrinsics.def, ir/LibraryRoutines.def) and lists
every such literal outside ALLOWED, one `file:line: "name" (what)` per line; it exits 1 when
there is one. tests/ are not linted (they write .dsc text), nor lang/ (the front end turns text
into ids), nor symbolic/ and support/ (below ir/: their min and max are the dim grammar's).
A literal that is such a name but means something else (a keyword of the language, a label)
carries `identity-lint: REASON` in a comment on its line, or in a comment line of its own just
before the statement, which it then covers up to the statement's `;`.
"""
import argparse
import os
import re
import sys

TABLES = {
    "op": ("ir/Ops.def", re.compile(r"^DSC_OP\((\w+),", re.M)),
    "intrinsic": ("ir/Intrinsics.def", re.compile(r"^DSC_INTRINSIC\((\w+),", re.M)),
    "routine": ("ir/LibraryRoutines.def",
                re.compile(r"^DSC_LIBRARY_ROUTINE\(\w+,\s*\"([\w.]+)\"", re.M)),
}

# The folders linted, and the files that own names: the tables, the registries that expand
# them, and the printers that turn ids back into text.
LINTED = ("backends", "ir", "passes", "runtime", "tools")
ALLOWED_DIRS = (
    "ir/ops/",  # the op registry's rows: each op's parameters and shape rule, by its name
)
ALLOWED = {
    # the tables' registries
    "ir/OpRegistry.cpp", "ir/Intrinsics.cpp", "ir/LibraryRoutine.cpp",
    # the printers: binary_op_name spells min and max as the parser reads them
    "ir/Printer.cpp", "ir/IR.cpp",
    # the runtime links no compiler table; its CUDA entry points name the routine they
    # implement in their errors
    "runtime/cuda/CudaABI.cpp",
}
WAIVER = "identity-lint:"
SOURCE = re.compile(r"\.(cpp|h|cc|hpp|re|y)$")
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def table_names(root):
    names = {}
    for what, (path, pattern) in TABLES.items():
        with open(os.path.join(root, path), encoding="utf-8") as f:
            found = pattern.findall(f.read())
        if not found:
            sys.exit(f"lint_identity: no rows found in {path}: has its format changed?")
        for n in found:
            names[n] = f"{names[n]} and {what}" if n in names else what
    return names


def strip_comments(line, in_block):
    """The line without // and /* */ comments (string contents kept), and whether a block
    comment is still open at its end."""
    out, i = [], 0
    while i < len(line):
        if in_block:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i, in_block = end + 2, False
            continue
        c = line[i]
        if c == '"':
            m = STRING.match(line, i)
            if m:
                out.append(m.group(0))
                i = m.end()
                continue
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            in_block, i = True, i + 2
            continue
        out.append(c)
        i += 1
    return "".join(out), in_block


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    names = table_names(root)
    findings = []
    for top in LINTED:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if (not SOURCE.search(name) or rel in ALLOWED
                        or rel.startswith(ALLOWED_DIRS)):
                    continue
                in_block = False
                waived = False  # inside a statement a waiver comment line covers
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        code, in_block = strip_comments(line, in_block)
                        if WAIVER in line and not code.strip():
                            waived = True
                            continue
                        if waived:
                            waived = not code.rstrip().endswith(";")
                            continue
                        if WAIVER in line:
                            continue
                        for m in STRING.finditer(code):
                            if m.group(1) in names:
                                findings.append(f'{rel}:{number}: "{m.group(1)}" '
                                                f"({names[m.group(1)]} name as a string)")
    for f in findings:
        print(f)
    print(f"lint_identity: {len(findings)} finding(s) in {', '.join(f + '/' for f in LINTED)}; "
          f"{len(names)} names from the op, intrinsic and routine tables")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
