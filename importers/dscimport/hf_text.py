"""Small pieces of .dsc text that hf2dsc's templates share: a float literal, a tensor type, and
a function header with its parameters wrapped to the page width."""

from __future__ import annotations

import math
import textwrap

WIDTH = 100


def flt(x: float) -> str:
    """A dsc float literal that reads back as x (`1e-06`, `0.25`, `10000.0`)."""
    if not math.isfinite(x):
        raise ValueError(f"{x} has no dsc literal")
    text = repr(float(x))
    return text if any(c in text for c in ".e") else text + ".0"


def ty(dtype: str, *dims) -> str:
    """`f32[B, S, 64]`."""
    return f"{dtype}[{', '.join(str(d) for d in dims)}]"


def fn_header(name: str, params: list[str], ret: str, where: list[str] | None = None) -> str:
    """`fn NAME(P, P, ...) -> RET` with the parameters wrapped under the first, then the
    `where` clauses on their own line."""
    lead = f"fn {name}("
    lines, cur = [], lead
    for i, p in enumerate(params):
        piece = p + (", " if i + 1 < len(params) else "")
        if len(cur) + len(piece.rstrip()) > WIDTH and cur.strip() != lead.strip():
            lines.append(cur.rstrip())
            cur = " " * len(lead)
        cur += piece
    tail = f") -> {ret}"
    if len(cur) + len(tail) > WIDTH:
        lines += [cur.rstrip() + ")", f"    -> {ret}"]
    else:
        lines.append(cur + tail)
    if where:
        lines.append(f"  where {', '.join(where)}")
    return "\n".join(lines)


def call(name: str, args: list[str], indent: str, lead: str = "") -> str:
    """`LEAD NAME(A, B, ...)` wrapped under the first argument."""
    head = f"{indent}{lead}{name}("
    lines, cur = [], head
    for i, a in enumerate(args):
        piece = a + (", " if i + 1 < len(args) else ")")
        if len(cur) + len(piece.rstrip()) > WIDTH and cur != head:
            lines.append(cur.rstrip())
            cur = " " * len(head)
        cur += piece
    if not args:
        cur += ")"
    lines.append(cur)
    return "\n".join(lines)


def comment(text: str, indent: str = "") -> str:
    """text as `# ` comment lines within the page width; a blank line in text starts a new
    paragraph."""
    out = []
    for para in text.split("\n\n"):
        out += textwrap.wrap(" ".join(para.split()), WIDTH - len(indent) - 2,
                             break_on_hyphens=False) or [""]
    return "\n".join(f"{indent}# {line}".rstrip() for line in out)
