"""Small pieces of .dsc text that hf2dsc's templates share: a float literal, a tensor type, a
function header with its parameters wrapped to the page width, and the norms of a model in
bf16 or f16.

A template writes its floats in the import's dtype `dt` (the weights', the activations' and
the caches'). At bf16 and f16, LayerNorm and RMSNorm are computed in f32 and their results
rounded to `dt` (`norm`, `norm_functions`), as transformers computes them: torch's layer_norm
accumulates a bf16 or f16 tensor in f32, and LLaMA's RMSNorm upcasts to f32 itself; so is
the attention's softmax (hf_attention.py). At f32 they are nn.dsc's own, and the text is what
it was before low precision."""

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


def fn_open(name: str, params: list[str], ret: str) -> str:
    """`fn NAME(P, ...) -> RET {` on one line when it fits the page, else fn_header's lines
    and `{` on its own."""
    line = f"fn {name}({', '.join(params)}) -> {ret} {{"
    return line if len(line) <= WIDTH else fn_header(name, params, ret) + "\n{"


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


def norm(kind: str, dt: str) -> str:
    """The function a template calls for a norm ("layer_norm" or "rms_norm") at dtype dt:
    nn.dsc's at f32, else norm_functions' `layer_norm_f32`."""
    return f"nn.{kind}" if dt == "f32" else f"{kind}_f32"


def norm_functions(kinds: list[str], dt: str) -> list[str]:
    """At bf16 and f16, the functions `norm` names: each norm in f32, the result in dt."""
    if dt == "f32":
        return []
    out = []
    for kind in kinds:
        args = ["x", "w", "b"] if kind == "layer_norm" else ["x", "w"]
        params = ", ".join(f"{a}: tensor" for a in args)
        up = ", ".join(f'cast({a}, dtype="f32")' for a in args)
        what = "LayerNorm" if kind == "layer_norm" else "RMSNorm"
        out.append(f"# {what} computed in f32 (as transformers computes it for {dt} tensors), "
                   f"the result in {dt}.\n"
                   f"fn {kind}_f32({params}, eps: float) -> tensor {{\n"
                   f"  let y = nn.{kind}({up}, eps=eps)\n"
                   f"  return cast(y, dtype=\"{dt}\")\n}}")
    return out


def comment(text: str, indent: str = "") -> str:
    """text as `# ` comment lines within the page width; a blank line in text starts a new
    paragraph."""
    out = []
    for para in text.split("\n\n"):
        out += textwrap.wrap(" ".join(para.split()), WIDTH - len(indent) - 2,
                             break_on_hyphens=False) or [""]
    return "\n".join(f"{indent}# {line}".rstrip() for line in out)
