#!/usr/bin/env python3
"""Checks the torch.compile backend and the export helper of tools/python/dsc/torch_backend.py.

    PYTHONPATH=build/python tests/python/check_torch_backend.py

The backend calls dsc through one function, `_compile_source` (dsc.compile, in process); here
it is wrapped to count the compiles. The cases:

- the zoo's BERT layer (with its padding mask) and GPT-2 block (against a KV cache), small,
  under `torch.compile(model, backend=..., dynamic=True)` at five shapes each, every size at
  least 2 (dynamo specializes 0 and 1, so a size of 1 would be a second graph by dynamo's
  choice) and primes among them: the backend must be called once and dsc must compile once
  for the five, no op may fall back to eager, and every output must match eager within
  harness.py's 1e-4 * (rms + |ref|);
- the BERT layer with only its batch marked dynamic (`torch._dynamo.mark_dynamic`) at three
  batches: one compile;
- a model with an op the importer lacks (`torch.sort`) between two parts it reads, with sizes
  computed before the cut and used after it: one warning on the "dsc" logger must name
  aten.sort.default, two dsc functions must be compiled, and the outputs must match eager at
  three shapes with one backend call;
- a float argument, which the backend compiles at its first value: another value runs
  eagerly with one warning, and matches eager; with autograd on, the graph runs eagerly,
  with a warning;
- a model whose weights are changed in place between calls (they are declared constant, so
  packed once; the version counter makes them packed again): outputs match eager, one compile;
- `export` of the BERT layer with named Dims: the source must name the symbols B and S with
  their ranges, and running it with the weights it returns must match eager at two shapes;
- `register()` makes "dsc" one of torch.compile's backends.

Exit status: 0 when every case passes, 1 otherwise, 77 (skipped) without torch or numpy.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

try:
    import numpy  # noqa: F401 - the harness needs it
    import torch
except ImportError:
    print("skipped: needs torch and numpy")
    sys.exit(77)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# dsc itself comes from PYTHONPATH (build/python, as ctest sets it); the zoo's models and the
# comparison harness from the checkout.
sys.path[:0] = [os.path.join(ROOT, "importers"), os.path.join(ROOT, "tests", "importers")]

import harness  # noqa: E402
from dsc import torch_backend  # noqa: E402
from zoo import models  # noqa: E402


# ---------------------------------------------------------------------------------------------
# dsc, counted
# ---------------------------------------------------------------------------------------------

class CountingCompiler:
    """The backend's `_compile_source` (dsc.compile in process), counting the compiles."""

    def __init__(self, compile_source):
        self.compile_source = compile_source
        self.compiles = 0

    def __call__(self, source: str, entry: str, target: str):
        self.compiles += 1
        return self.compile_source(source, entry, target)


# ---------------------------------------------------------------------------------------------
# What the cases share
# ---------------------------------------------------------------------------------------------

class Warnings(logging.Handler):
    """The "dsc" logger's warnings."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


class CountingBackend:
    """The backend, counting its calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, gm, example_inputs):
        self.calls += 1
        return torch_backend.backend(gm, example_inputs)


def flat(out) -> list[torch.Tensor]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def compare_all(got, ref) -> str | None:
    """The first output that differs from eager, or None; the worst error in `detail`."""
    got, ref = flat(got), flat(ref)
    if len(got) != len(ref):
        return f"{len(got)} outputs, expected {len(ref)}"
    for i, (g, r) in enumerate(zip(got, ref)):
        ok, detail = harness.compare(g.detach().numpy(), r.detach().numpy())
        if not ok:
            return f"output {i}: {detail}"
    return None


def worst(got, ref) -> str:
    return "; ".join(harness.compare(g.detach().numpy(), r.detach().numpy())[1]
                     for g, r in zip(flat(got), flat(ref)))


def sweep(tally: harness.Tally, label: str, model, compiled, cases: list[dict]) -> None:
    """Runs the compiled model on each case's inputs and compares with eager."""
    for i, inputs in enumerate(cases):
        shape = ", ".join(f"{k}={tuple(v.shape)}" for k, v in inputs.items())
        with torch.no_grad():
            ref = model(**inputs)
            try:
                got = compiled(**inputs)
            except Exception as e:  # noqa: BLE001 - reported as the case's failure
                tally.report(f"{label} #{i} ({shape})", f"{type(e).__name__}: {e}")
                continue
        problem = compare_all(got, ref)
        tally.report(f"{label} #{i} ({shape}): {worst(got, ref)}", problem)


# ---------------------------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------------------------

def check_zoo(tally, cli: CountingCompiler, warnings: Warnings, name: str,
              shapes: list[dict]) -> None:
    torch._dynamo.reset()
    model, z = models.build(name, "small")
    counting = CountingBackend()
    compiles, n_warnings = cli.compiles, len(warnings.lines)
    compiled = torch.compile(model, backend=counting, dynamic=True)
    sweep(tally, f"{name} dynamic=True", model, compiled,
          [z.make_inputs(s, seed) for seed, s in enumerate(shapes)])
    tally.report(f"{name}: one backend call and one dsc compile for {len(shapes)} shapes",
                 None if (counting.calls, cli.compiles - compiles) == (1, 1) else
                 f"{counting.calls} backend calls, {cli.compiles - compiles} compiles")
    tally.report(f"{name}: nothing falls back to eager", "; ".join(
        warnings.lines[n_warnings:]) or None)


def check_mark_dynamic(tally, cli: CountingCompiler) -> None:
    torch._dynamo.reset()
    model, z = models.build("bert", "small")
    counting = CountingBackend()
    compiles = cli.compiles
    compiled = torch.compile(model, backend=counting)
    cases = [z.make_inputs({"B": b, "S": 7}, b) for b in (3, 2, 5)]
    for inputs in cases:
        for t in inputs.values():
            torch._dynamo.mark_dynamic(t, 0)
    sweep(tally, "bert mark_dynamic(batch)", model, compiled, cases)
    tally.report("bert mark_dynamic: one backend call and one compile for 3 batches",
                 None if (counting.calls, cli.compiles - compiles) == (1, 1) else
                 f"{counting.calls} backend calls, {cli.compiles - compiles} compiles")


class SortedMlp(torch.nn.Module):
    """Two linear layers around a sort, which the importer lacks; the sizes read before the
    sort reshape the tensors after it."""

    def __init__(self, d: int = 32):
        super().__init__()
        self.fc1 = torch.nn.Linear(d, d)
        self.fc2 = torch.nn.Linear(d, d)

    def forward(self, x):
        b, s, _ = x.shape
        h = torch.relu(self.fc1(x))
        h = torch.sort(h, dim=-1).values
        return torch.softmax(self.fc2(h.reshape(b * s, -1)).view(b, s, -1), dim=-1)


def check_fallback(tally, cli: CountingCompiler, warnings: Warnings) -> None:
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = SortedMlp().eval()
    counting = CountingBackend()
    compiles, n_warnings = cli.compiles, len(warnings.lines)
    compiled = torch.compile(model, backend=counting, dynamic=True)
    g = torch.Generator().manual_seed(1)
    cases = [{"x": torch.randn(b, s, 32, generator=g)} for b, s in ((2, 7), (3, 13), (5, 2))]
    sweep(tally, "sort fallback", model, compiled, cases)
    said = warnings.lines[n_warnings:]
    tally.report("sort fallback: one warning naming aten.sort.default",
                 None if len(said) == 1 and "aten.sort.default" in said[0] else
                 f"the warnings were {said}")
    tally.report("sort fallback: one backend call, two dsc functions compiled",
                 None if (counting.calls, cli.compiles - compiles) == (1, 2) else
                 f"{counting.calls} backend calls, {cli.compiles - compiles} compiles")


class ScaledMlp(torch.nn.Module):
    """A linear layer scaled by a float argument, which the backend compiles at its value."""

    def __init__(self, d: int = 16):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x, alpha: float):
        return torch.relu(self.fc(x)) * alpha


def check_numbers(tally, cli: CountingCompiler, warnings: Warnings) -> None:
    """A float argument is compiled at its first value; another value runs eagerly, said
    once; and with autograd on the graph runs eagerly, said too."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = ScaledMlp().eval()
    counting = CountingBackend()
    compiles, n_warnings = cli.compiles, len(warnings.lines)
    compiled = torch.compile(model, backend=counting, dynamic=True)
    g = torch.Generator().manual_seed(2)
    for i, (b, alpha) in enumerate(((3, 0.5), (5, 2.0), (2, 2.0))):
        x = torch.randn(b, 16, generator=g)
        with torch.no_grad():
            got, ref = compiled(x, alpha), model(x, alpha)
        tally.report(f"float argument #{i} (batch {b}, alpha {alpha}): {worst(got, ref)}",
                     compare_all(got, ref))
    said = warnings.lines[n_warnings:]
    tally.report("float argument: one compile, one warning for alpha 2.0",
                 None if (counting.calls, cli.compiles - compiles) == (1, 1) and len(said) == 1
                 and "compiled as 0.5" in said[0] else
                 f"{counting.calls} backend calls, {cli.compiles - compiles} compiles, "
                 f"warnings {said}")

    torch._dynamo.reset()
    compiles, n_warnings = cli.compiles, len(warnings.lines)
    compiled = torch.compile(model, backend=counting, dynamic=True)
    x = torch.randn(3, 16, generator=g)
    got, ref = compiled(x, 1.5), model(x, 1.5)
    said = warnings.lines[n_warnings:]
    tally.report("autograd on: eager, and said",
                 compare_all(got, ref) or (None if cli.compiles == compiles and len(said) == 1
                                           and "autograd" in said[0] else
                                           f"{cli.compiles - compiles} compiles, warnings {said}"))


def check_weights_changed(tally, cli: CountingCompiler) -> None:
    """The parameters are declared constant (packed once); a weight changed in place is
    packed again: the compiled model follows it, with no second compile."""
    torch._dynamo.reset()
    torch.manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(48, 96), torch.nn.GELU(),
                                torch.nn.Linear(96, 40)).eval()
    compiles = cli.compiles
    compiled = torch.compile(model, backend="dsc", dynamic=True)
    g = torch.Generator().manual_seed(4)
    for i, b in enumerate((3, 7, 7, 13)):
        if i == 2:
            with torch.no_grad():
                model[0].weight.mul_(-2.0)  # in place: the same memory, a new version
                model[2].weight.copy_(torch.randn(40, 96, generator=g))
        x = torch.randn(b, 48, generator=g)
        with torch.no_grad():
            got, ref = compiled(x), model(x)
        tally.report(f"weights {'changed in place ' if i >= 2 else ''}#{i} (batch {b}): "
                     f"{worst(got, ref)}", compare_all(got, ref))
    tally.report("weights changed in place: one compile",
                 None if cli.compiles - compiles == 1 else f"{cli.compiles - compiles} compiles")


def check_export(tally, cli: CountingCompiler) -> None:
    model, z = models.build("bert", "small")
    B, S = torch.export.Dim("B", min=1, max=64), torch.export.Dim("S", min=1, max=512)
    example = z.make_inputs({"B": 2, "S": 8}, 0)
    art = torch_backend.export(model, (example["x"], example["mask"]),
                               dynamic_shapes={"x": {0: B, 1: S}, "mask": {0: B, 1: S}},
                               name="bert")
    tally.report("export: the symbols B and S with their ranges",
                 None if "1 <= B <= 64" in art.source and "1 <= S <= 512" in art.source
                 and art.inputs == ["x", "mask"] else f"{art.inputs}:\n{art.source}")
    fn = cli(art.source, art.entry, "cpu")
    for i, shape in enumerate(({"B": 3, "S": 13}, {"B": 1, "S": 5})):
        inputs = z.make_inputs(shape, 10 + i)
        with torch.no_grad():
            ref = model(**inputs)
        got = fn(inputs["x"], inputs["mask"], *art.weights.values())
        tally.report(f"export #{i} (B={shape['B']}, S={shape['S']}): {worst(got, ref)}",
                     compare_all(got, ref))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.parse_args(argv)
    torch.set_num_threads(2)
    warnings = Warnings()
    logging.getLogger("dsc").addHandler(warnings)
    cli = CountingCompiler(torch_backend._compile_source)
    torch_backend._compile_source = cli
    tally = harness.Tally()
    check_zoo(tally, cli, warnings, "bert", [
        {"B": 2, "S": 7}, {"B": 3, "S": 13}, {"B": 2, "S": 2}, {"B": 5, "S": 3},
        {"B": 2, "S": 31}])
    check_zoo(tally, cli, warnings, "gpt2", [
        {"B": 2, "T": 3, "P": 7}, {"B": 3, "T": 5, "P": 13}, {"B": 2, "T": 2, "P": 2},
        {"B": 2, "T": 7, "P": 11}, {"B": 3, "T": 13, "P": 5}])
    check_mark_dynamic(tally, cli)
    check_fallback(tally, cli, warnings)
    check_numbers(tally, cli, warnings)
    torch_backend.register()
    check_weights_changed(tally, cli)
    check_export(tally, cli)
    tally.report("register: torch.compile knows the backend \"dsc\"",
                 None if "dsc" in torch._dynamo.list_backends(exclude_tags=()) else
                 "not among torch._dynamo.list_backends()")
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
