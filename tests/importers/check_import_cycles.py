#!/usr/bin/env python3
"""Checks that the modules of importers/dscimport import each other in no cycle.

    check_import_cycles.py [--package DIR]

Every .py file of the package is parsed (with `ast`, nothing is imported or run), and every
import of a module of the package is an edge: relative (`from . import x`, `from .x import y`)
and absolute (`import dscimport.x`, `from dscimport import x`), at the top of a file or inside
a function. The front ends are layered so that there is none: a driver (onnx_import.py,
torch_import.py) imports its op modules, and the op modules import only the common modules
(docs/importers.md, "Importers").

Prints each cycle with the import statements that make it and exits 1; prints the modules and
edges counted and exits 0 when there is none; exits 2 when the package cannot be read. Needs
only the standard library.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "..", "..", "importers", "dscimport")


def modules(package: str) -> dict[str, str]:
    """Module name (`dscimport.common`, `dscimport` for __init__.py) -> its file."""
    pkg = os.path.basename(os.path.normpath(package))
    out = {}
    for f in sorted(os.listdir(package)):
        if f.endswith(".py"):
            stem = f[:-3]
            out[pkg if stem == "__init__" else f"{pkg}.{stem}"] = os.path.join(package, f)
    return out


def imported(tree: ast.AST, module: str, is_package: bool, known: set[str]) -> list:
    """(the module of the package imported, the statement's line) for each import in tree."""
    # The package a relative import starts from: the module's own package.
    base = module.split(".") if is_package else module.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level - 1 > len(base):
                    continue
                stem = base[:len(base) - (node.level - 1)]
                target = ".".join(stem + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from X import y` reads module X, and module X.y when y is one.
            names = [target] + [f"{target}.{a.name}" for a in node.names]
        for name in names:
            # `import dscimport.a.b` imports dscimport.a too; only the package's modules count.
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                out.append((name, node.lineno))
    return out


def cycles(graph: dict[str, dict[str, int]]) -> list[tuple[list[str], set[str]]]:
    """The strongly connected components with more than one module, or with a module that
    imports itself (Tarjan's algorithm): each as one cycle through it (a list of modules in
    the cycle's order) and all its modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    comps: list[tuple[list[str], set[str]]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                comps.append((cycle_in(graph, set(comp)), set(comp)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def cycle_in(graph: dict[str, dict[str, int]], comp: set[str]) -> list[str]:
    """One cycle through the first module of a strongly connected component (breadth first, so
    the shortest)."""
    start = min(comp)
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w not in comp:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return list(reversed(path))
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return [start]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", default=PACKAGE, help="the package's directory (default: "
                    "importers/dscimport)")
    ns = ap.parse_args(argv)
    try:
        files = modules(ns.package)
    except OSError as e:
        print(f"check_import_cycles.py: cannot read {ns.package}: {e.strerror or e}",
              file=sys.stderr)
        return 2
    if not files:
        print(f"check_import_cycles.py: {ns.package} has no .py files", file=sys.stderr)
        return 2
    known = set(files)
    graph: dict[str, dict[str, int]] = {m: {} for m in files}
    for mod, path in files.items():
        try:
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), filename=path)
        except (OSError, SyntaxError, ValueError) as e:
            print(f"check_import_cycles.py: cannot parse {path}: {e}", file=sys.stderr)
            return 2
        for target, line in imported(tree, mod, path.endswith("__init__.py"), known):
            graph[mod][target] = min(line, graph[mod].get(target, line))
    found = cycles(graph)
    n_edges = sum(len(e) for e in graph.values())
    if not found:
        print(f"no import cycles: {len(graph)} modules, {n_edges} imports between them")
        return 0
    for cyc, comp in found:
        print("import cycle: " + " -> ".join(cyc + cyc[:1]))
        for a, b in zip(cyc, cyc[1:] + cyc[:1]):
            print(f"  {os.path.basename(files[a])}:{graph[a][b]} imports {b}")
        others = sorted(comp - set(cyc))
        if others:
            print(f"  (and in other cycles with these: {', '.join(others)})")
    print(f"{len(found)} import cycle{'s' if len(found) != 1 else ''} among {len(graph)} "
          f"modules")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
