#!/usr/bin/env python3
"""Checks importers/onnx2dsc.py on the models of tests/importers/models (make_models.py):

  numeric  each model is imported into a temporary directory, then at five shapes or more
           (1 and primes: batch/seq in {1, 2, 7, 13, 31}) random inputs are written as .npy,
               dscc run DIR/NAME.dsc --weights DIR/NAME.safetensors --input x=x.npy ... --output=OUT
           runs it, and every output is compared with ONNX Runtime's (CPU) on the same inputs;
  golden   the .dsc imported from mlp.onnx must equal tests/importers/golden/mlp.dsc exactly
           (--update-golden rewrites it), and must pass `dscc check`;
  errors   two models with unsupported ops or attributes (all four of each must be listed, by
           op type and node name: TopK and the like; a 3-D Conv, ceil_mode and the like), an
           ArgMax with select_last_index=1, a
           truncated .onnx (one clean line, no traceback), a graph with a cycle, an opset out of
           range and a missing file: each must exit 1 and leave the output directory empty.

    check_onnx_import.py --dscc build/tools/dscc/dscc [--only numeric,golden,errors]

Prints one line per case (PASS or FAIL, then details), then `N passed, M failed`; exits 1 when
a case failed, 77 (a skip for ctest) when onnx, onnxruntime, safetensors or numpy is missing.

Tolerance, as tests/e2e/check_examples.py: every element must satisfy
    |dsc - ort| <= TOL * (rms(ort) + |ort|),  TOL = 1e-4,
an error of 1e-4 of the output's typical magnitude plus 1e-4 relative. Both sides compute in
f32 (ORT's kernels and dsc's differ in summation order and in their exp/erf), which lands near
1e-6 on these small models; a wrong op (a dropped bias, the wrong softmax axis, tanh GELU
for erf GELU, a mask not applied) is far outside it.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable

try:
    import numpy as np
    import onnx  # noqa: F401 - the importer needs it
    import onnxruntime as ort
    import safetensors  # noqa: F401 - the importer needs it
except ImportError as e:
    print(f"SKIP: {e.name or e} is not installed: run tools/scripts/install_python_deps.sh --tests")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import (Checker as BaseChecker, check_dscc_arg, compare_outputs,  # noqa: E402
                     exit_problem, first_line, run, run_checks)

SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
IMPORTER = os.path.join(SOURCE_DIR, "importers", "onnx2dsc.py")
MODELS_DIR = os.path.join(HERE, "models")
GOLDEN_DIR = os.path.join(HERE, "golden")
SEED = 20270112

Gen = Callable[[np.random.Generator, dict], np.ndarray]


def normal(*dims) -> Gen:
    return lambda rng, s: rng.standard_normal([s[d] if isinstance(d, str) else d for d in dims]) \
        .astype(np.float32)


def keep_prefix_mask(rng: np.random.Generator, s: dict) -> np.ndarray:
    """1 for a kept token, 0 for padding; each row keeps a prefix of length >= 1."""
    keep = rng.integers(1, s["seq"] + 1, size=s["batch"])
    return (np.arange(s["seq"])[None, :] < keep[:, None]).astype(np.int64)


def token_ids(vocab: int) -> Gen:
    return lambda rng, s: rng.integers(0, vocab, size=(s["batch"], s["seq"])).astype(np.int64)


BS = [{"batch": 1, "seq": 1}, {"batch": 2, "seq": 7}, {"batch": 7, "seq": 13},
      {"batch": 13, "seq": 2}, {"batch": 1, "seq": 31}, {"batch": 3, "seq": 31}]


@dataclass
class Spec:
    name: str
    inputs: dict[str, Gen]
    shapes: list[dict]


ATTENTION_INPUTS = {"x": normal("batch", "seq", 16), "mask": keep_prefix_mask}
SPECS = [
    Spec("mlp", {"x": normal("batch", 32)},
         [{"batch": b} for b in (1, 2, 7, 13, 31)]),
    Spec("attention_op13", ATTENTION_INPUTS, BS),
    Spec("attention_op17", ATTENTION_INPUTS, BS),
    Spec("attention_op21", ATTENTION_INPUTS, BS),
    Spec("embedding", {"input_ids": token_ids(40)}, BS),
    Spec("ops", {"x": normal("batch", "seq", 8), "z": normal("batch", "n")},
         [dict(s, n=n) for s, n in zip(BS, (1, 5, 2, 31, 7, 13))]),
    Spec("ops_extra", {"x": normal("batch", 6), "ids": lambda rng, s: rng.integers(
        0, 10, size=(s["batch"], 6)).astype(np.int64)},
         [{"batch": b} for b in (1, 2, 7, 13, 31)]),
    Spec("arg_trig", {"x": normal("batch", "seq", 5), "ids": lambda rng, s: rng.integers(
        0, 3, size=(s["batch"], s["seq"])).astype(np.int64)}, BS),
    # Image sizes 1 (every window mostly padding), primes, odd and even: the stride-2 convs
    # and pools round differently on each.
    Spec("resnet", {"input": normal("batch", 3, "height", "width")},
         [{"batch": b, "height": h, "width": w}
          for b, h, w in ((1, 1, 1), (2, 7, 13), (1, 31, 17), (3, 32, 29), (1, 57, 64))]),
    # Negative indices among the computed ones; y < 0 makes Sqrt's NaNs for IsNaN.
    Spec("index_ops", {"x": normal("batch", "seq", 5), "y": normal("batch", "seq"),
                       "ids": lambda rng, s: rng.integers(-s["seq"], s["seq"], size=(
                           s["batch"], s["seq"])).astype(np.int64),
                       "pos": lambda rng, s: np.stack([
                           rng.integers(-s["batch"], s["batch"], size=(s["batch"], s["seq"])),
                           rng.integers(-s["seq"], s["seq"], size=(s["batch"], s["seq"]))],
                           axis=-1).astype(np.int64)}, BS),
    Spec("conv1d", {"a": normal("batch", 4, "length")},
         [{"batch": b, "length": n} for b, n in ((1, 1), (2, 2), (1, 7), (3, 13), (2, 31))]),
    Spec("conv_ops", {"x": normal("batch", 4, "height", "width"), "v": normal(4)},
         [{"batch": b, "height": h, "width": w}
          for b, h, w in ((1, 1, 1), (2, 7, 13), (1, 2, 31), (3, 17, 8), (1, 30, 5))]),
]

class Checker(BaseChecker):
    def __init__(self, dscc: str | None, work: str, timeout: float, verbose: bool):
        super().__init__(IMPORTER, dscc, work, timeout, verbose)
        self.imported: dict[str, str | None] = {}

    def import_model(self, name: str) -> str | None:
        """Imports models/NAME.onnx once; the output directory, or None (reported)."""
        if name not in self.imported:
            out = os.path.join(self.work, "import", name)
            r = self.cli([os.path.join(MODELS_DIR, f"{name}.onnx"), "-o", out])
            files = [os.path.join(out, f"{name}.{ext}") for ext in ("dsc", "safetensors")]
            problem = exit_problem(r)
            if problem is None and not all(os.path.isfile(f) for f in files):
                problem = "exit 0 but the .dsc or .safetensors is missing"
            if problem is None and sorted(os.listdir(out)) != sorted(map(os.path.basename, files)):
                problem = f"files other than the two outputs left in {out}: {os.listdir(out)}"
            if problem is None and not re.search(r"ops: \d+ ONNX nodes .* symbols: .* "
                                                 r"parameters: \d+", r.stdout):
                problem = f"no summary line: {first_line(r.stdout)}"
            self.report(f"import {name}", problem is None,
                        problem or r.stdout.strip().splitlines()[-1])
            self.imported[name] = out if problem is None else None
        return self.imported[name]

    # -- numeric --------------------------------------------------------------------------

    def numeric(self, spec: Spec) -> None:
        out_dir = self.import_model(spec.name)
        if out_dir is None:
            return
        model_path = os.path.join(MODELS_DIR, f"{spec.name}.onnx")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        for k, sym in enumerate(spec.shapes):
            label = f"{spec.name} " + ",".join(f"{a}={b}" for a, b in sym.items())
            rng = np.random.default_rng(SEED + 101 * k + len(spec.name))
            feeds = {name: gen(rng, sym) for name, gen in spec.inputs.items()}
            case = os.path.join(self.work, re.sub(r"[^A-Za-z0-9_=-]+", "_", label))
            os.makedirs(case)
            args = []
            for name, a in feeds.items():
                path = os.path.join(case, f"{name}.npy")
                np.save(path, a, allow_pickle=False)
                args += ["--input", f"{name}={path}"]
            r = run([self.dscc, "run", os.path.join(out_dir, f"{spec.name}.dsc"),
                     "--weights", os.path.join(out_dir, f"{spec.name}.safetensors"), *args,
                     f"--output={case}/out"], self.timeout)
            problem = exit_problem(r, "dscc run exit")
            if problem:
                self.report(label, False, problem + (f"\n{r.stderr}" if self.verbose else ""))
                continue
            refs = sess.run(None, feeds)
            self.report(label, *compare_outputs(os.path.join(case, "out"),
                                                list(zip(names, refs)), "ONNX Runtime"))

    # -- golden ---------------------------------------------------------------------------

    def golden(self, update: bool) -> None:
        out_dir = self.import_model("mlp")
        if out_dir is None:
            return
        with open(os.path.join(out_dir, "mlp.dsc")) as f:
            got = f.read()
        self.check_golden(got, os.path.join(GOLDEN_DIR, "mlp.dsc"), update, "imported mlp.dsc")

    # -- errors ---------------------------------------------------------------------------

    def errors(self) -> None:
        self.expect_failure(
            "unsupported ops are all listed", [os.path.join(MODELS_DIR, "unsupported.onnx")],
            ["4 nodes cannot be imported", "TopK (node '/bad/TopK'",
             "Round (node '/bad/Round'", "Cast (node '/bad/Cast'", "UINT8",
             "LayerNormalization (node '/bad/LayerNormalization'", "Mean or InvStdDev",
             "nothing was written"])
        self.expect_failure(
            "unsupported convolutions and pools are all listed",
            [os.path.join(MODELS_DIR, "unsupported_conv.onnx")],
            ["4 nodes cannot be imported", "Conv (node '/bad/Conv'", "only 1-D and 2-D Conv",
             "MaxPool (node '/bad/MaxPool'", "ceil_mode=1",
             "AveragePool (node '/bad/AveragePool'", "differ between the two sides",
             "BatchNormalization (node '/bad/BatchNormalization'", "training_mode=1"])
        with open(os.path.join(MODELS_DIR, "attention_op17.onnx"), "rb") as f:
            data = f.read()
        for frac in (0.5, 0.97):
            trunc = os.path.join(self.work, f"truncated_{int(frac * 100)}.onnx")
            with open(trunc, "wb") as f:
                f.write(data[:int(len(data) * frac)])
            self.expect_failure(f"truncated .onnx ({int(frac * 100)}%)", [trunc],
                                ["is not a readable ONNX model"], one_line=True)
        garbage = os.path.join(self.work, "garbage.onnx")
        with open(garbage, "wb") as f:
            f.write(b"\x00\x01not an onnx file at all\xff" * 7)
        self.expect_failure("garbage .onnx", [garbage], ["is not a readable ONNX model"],
                            one_line=True)
        self.expect_failure("a graph with a cycle", [os.path.join(MODELS_DIR, "cycle.onnx")],
                            ["the graph has a cycle", "/cycle/Add"], one_line=True)
        model = onnx.load(os.path.join(MODELS_DIR, "mlp.onnx"))
        model.opset_import[0].version = 11
        old = os.path.join(self.work, "opset11.onnx")
        onnx.save(model, old)
        self.expect_failure("opset 11", [old], ["opset 11 is not supported", "13 to 21"],
                            one_line=True)
        model = onnx.load(os.path.join(MODELS_DIR, "arg_trig.onnx"))
        for node in model.graph.node:
            for a in node.attribute:
                if a.name == "select_last_index":
                    a.i = 1
        last = os.path.join(self.work, "select_last_index.onnx")
        onnx.save(model, last)
        self.expect_failure("ArgMax with select_last_index=1", [last],
                            ["ArgMax (node '/argtrig/ArgMax_1'", "select_last_index=1"])
        # A size that depends on the data: refused with torch2dsc's reason for x[mask] and
        # nonzero, and the workaround.
        nz = onnx.helper.make_model(onnx.helper.make_graph(
            [onnx.helper.make_node("NonZero", ["x"], ["y"], name="/mask/NonZero")], "nz",
            [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 3])],
            [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.INT64, [2, None])]),
            opset_imports=[onnx.helper.make_opsetid("", 17)])
        nz_path = os.path.join(self.work, "nonzero.onnx")
        onnx.save(nz, nz_path)
        self.expect_failure("NonZero (a size that depends on the data)", [nz_path],
                            ["NonZero (node '/mask/NonZero'", "depends on the data",
                             "where(mask, x, fill) keeps the shape"])
        self.expect_failure("a missing file", [os.path.join(self.work, "no_such.onnx")],
                            ["cannot read"], one_line=True)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dscc", help="the dscc binary (needed by numeric and golden)")
    ap.add_argument("--only", default="numeric,golden,errors",
                    help="comma-separated: numeric, golden, errors (default: all)")
    ap.add_argument("--filter", help="numeric: only the models whose name matches this regex")
    ap.add_argument("--update-golden", action="store_true", help="rewrite golden/mlp.dsc")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per command")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("-v", "--verbose", action="store_true")
    ns = ap.parse_args(argv)
    parts = {p.strip() for p in ns.only.split(",") if p.strip()}
    unknown = parts - {"numeric", "golden", "errors"}
    if unknown:
        print(f"check_onnx_import.py: unknown --only part(s): {', '.join(sorted(unknown))}",
              file=sys.stderr)
        return 2
    if not check_dscc_arg("check_onnx_import.py", parts, ns.dscc):
        return 2

    work = tempfile.mkdtemp(prefix="dsc-onnx-")
    checker = Checker(ns.dscc, work, ns.timeout, ns.verbose)
    return run_checks(checker, parts, ns, SPECS, checker.numeric)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
