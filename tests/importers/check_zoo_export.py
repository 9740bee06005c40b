#!/usr/bin/env python3
"""Checks importers/zoo/build_zoo.py's export_torch, whose fallback only an older torch takes:
torch 2.11's max-pool shape rule guards `((H - 1) // 2) % 2 != 0`, and torch.export then
refuses ResNet-18's named Dims ("Constraints violated"). The GPU machine has that torch.

  fallback  torch.export.export wrapped to refuse the first call as torch 2.11 does: the
            second call gets a Dim.DYNAMIC hint per axis at the ZooModel's bounds, the
            program is saved and loads, and stderr names the guards;
  other     any other error of the first call propagates, with no second call;
  direct    the real export, unwrapped, of the small ResNet-18 (fallback or not) loads back
            with H and W dynamic.

    check_zoo_export.py

Prints one line per case (PASS or FAIL, then details), then `N passed, M failed`; exits 1 when
a case failed, 77 (a skip for ctest) when torch or the zoo's other dependencies are missing.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "importers", "zoo"))
sys.path.insert(0, os.path.join(ROOT, "importers"))

try:
    import build_zoo
    import torch
    from harness import Tally
    from zoo import models
except ImportError as e:
    print(f"SKIP: {e.name or e} is not installed: run tools/scripts/install_python_deps.sh --tests")
    sys.exit(77)

REFUSAL = ("Constraints violated (H, W)! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
           "  - Not all values of H = L['x'].size()[2] in the specified range 33 <= H <= 224 "
           "satisfy the generated guard ((((-1) + L['x'].size()[2]) // 2) % 2) != 0.")


class Wrapped:
    """torch.export.export that raises `first` on its first call and records every call's
    dynamic_shapes."""

    def __init__(self, first: Exception):
        self.real = torch.export.export
        self.first = first
        self.calls = []

    def __call__(self, model, args, dynamic_shapes=None, **kw):
        self.calls.append(dynamic_shapes)
        if len(self.calls) == 1:
            raise self.first
        return self.real(model, args, dynamic_shapes=dynamic_shapes, **kw)


@contextlib.contextmanager
def export_wrapped(first: Exception):
    w = Wrapped(first)
    torch.export.export = w
    try:
        yield w
    finally:
        torch.export.export = w.real


def hint_bounds(spec: dict) -> dict:
    """{(input, axis): (kind, min, max)} of a dynamic_shapes spec of hints."""
    out = {}
    for inp, axes in spec.items():
        for axis, h in axes.items():
            out[(inp, axis)] = (getattr(h, "type", None), getattr(h, "min", None),
                                getattr(h, "max", None))
    return out


def case_fallback(work: str) -> str | None:
    model, z = models.build("resnet18", "small")
    pt2 = os.path.join(work, "fallback.pt2")
    err = io.StringIO()
    with export_wrapped(RuntimeError(REFUSAL)) as w, contextlib.redirect_stderr(err):
        build_zoo.export_torch(model, z, pt2)
    if len(w.calls) != 2:
        return f"{len(w.calls)} export calls, expected 2"
    got = hint_bounds(w.calls[1])
    for inp in z.inputs:
        for axis, sym in enumerate(inp.dims):
            if not isinstance(sym, str):
                continue
            kind, lo, hi = got.get((inp.name, axis), (None, None, None))
            if str(kind) != "_DimHintType.DYNAMIC" or (lo, hi) != z.ranges[sym]:
                return f"{inp.name}.{axis} ({sym}) got {kind} [{lo}, {hi}], expected " \
                       f"Dim.DYNAMIC {list(z.ranges[sym])}"
    if "refused the ranges of resnet18" not in err.getvalue() or "% 2) != 0" not in err.getvalue():
        return f"stderr does not name the refusal and its guard: {err.getvalue()!r}"
    torch.export.load(pt2)
    return None


def case_other(work: str) -> str | None:
    model, z = models.build("resnet18", "small")
    with export_wrapped(ValueError("an unsupported op")) as w:
        try:
            build_zoo.export_torch(model, z, os.path.join(work, "other.pt2"))
        except ValueError:
            return None if len(w.calls) == 1 else f"{len(w.calls)} export calls, expected 1"
    return "the error did not propagate"


def case_direct(work: str) -> str | None:
    model, z = models.build("resnet18", "small")
    pt2 = os.path.join(work, "direct.pt2")
    with contextlib.redirect_stderr(io.StringIO()):
        build_zoo.export_torch(model, z, pt2)
    ep = torch.export.load(pt2)
    shape = ep.graph_module.graph.find_nodes(op="placeholder")[-1].meta["val"].shape
    if any(isinstance(d, int) for d in shape[2:]):
        return f"the image's dims were specialized: {shape}"
    return None


def main() -> int:
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="dsc-zoo-export-") as work:
        for name, case in [("fallback", case_fallback), ("other", case_other),
                           ("direct", case_direct)]:
            try:
                problem = case(work)
            except Exception as e:  # noqa: BLE001 - a case's failure, reported
                problem = f"{type(e).__name__}: {str(e).strip()[:400]}"
            tally.report(name, problem)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
