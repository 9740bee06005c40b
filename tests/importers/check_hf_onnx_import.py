#!/usr/bin/env python3
"""Checks importers/onnx2dsc.py on Hugging Face transformers models exported to ONNX and called
the way their users call them (issue 34): the families of check_hf_import.py (the same small
random configs, weights and inputs), each exported by `torch.onnx.export` with `input_ids` and
a padded `attention_mask` (and `token_type_ids` where the model has them) with dynamic batch B
and sequence S, imported, built once with `dscc build`, and run with `dscc run` at batch 1, odd
lengths (7, 61) and padded rows (rows whose mask is 0 at the end, and at the start). Every
output is compared with transformers eager on the same inputs, except on padded tokens where
the exported model itself differs from transformers (ONNX Runtime says so): there with ONNX
Runtime (OnnxHFChecker.compare_case says why).

The exporter is torch 2.15's default, the dynamo one (`dynamo=True`, which needs onnxscript),
given the same `Dim`s as torch.export. It fails on T5's encoder in torch's own decomposition (a
view of a transposed tensor, `attn_output.reshape(*input_shape, -1)`, as torch's
`run_decompositions()` fails on GPT-2), which the test notes and skips; the TorchScript exporter
(`dynamo=False`) writes a T5 whose relative position bias holds the traced length, wrong at
every other length (ONNX Runtime's output too). BERT, GPT-2 and Whisper are imported by the
command line, the others in-process (`onnx_import.import_model`).

    check_hf_onnx_import.py --dscc build/tools/dscc/dscc [--filter REGEX] [--all] [--keep] [-v]

`--all` adds the families built from the same parts (RoBERTa, ALBERT, ..., at three shapes).
Prints one line per check (PASS or FAIL, then details), then `N passed, M failed`; exits 1 when
a check failed, 77 (a skip for ctest) when transformers, torch, onnx, onnxruntime,
onnxscript, numpy or safetensors is missing. The tolerance is harness.py's: |dsc -
transformers| <= 1e-4 * (rms + |ref|).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
IMPORTER = os.path.join(SOURCE_DIR, "importers", "onnx2dsc.py")
sys.path.insert(0, HERE)
from requirements import skip_unless_installed  # noqa: E402

skip_unless_installed("numpy", "torch", "onnx", "onnxruntime", "onnxscript", "safetensors",
                      "transformers")
import torch  # noqa: E402
from torch.export import Dim  # noqa: E402

import check_hf_import as hf  # noqa: E402 - the families, their inputs and the comparison
from harness import (TOL, check_dscc_arg, compare_outputs, exit_problem,  # noqa: E402
                     remove_work, run, tally)

sys.path.insert(0, os.path.join(SOURCE_DIR, "importers"))
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from dscimport import onnx_import, output  # noqa: E402
from dscimport.common import ImportFailure, ModelError  # noqa: E402

# The families whose text models transformers' users export; the others with --all.
MAIN = ("bert", "bert_no_token_types", "distilbert", "gpt2", "gpt2_ids_only", "llama", "qwen2",
        "mistral", "t5_encoder", "whisper_encoder", "vit")
VIA_CLI = ("bert", "gpt2", "whisper_encoder")
# Families whose export torch itself fails, with what its error says: noted, not failed
# (the import is checked again once torch exports them).
EXPORT_REFUSED = {"t5_encoder": "Failed to decompose the FX graph"}

warnings.filterwarnings("ignore")


def export_onnx(fam: hf.Family, model, example: dict, path: str) -> None:
    """Writes the family's ONNX model to path, exported by torch.onnx.export's dynamo exporter
    with the same Dims as check_hf_import.py gives torch.export."""
    spec = {k: {i: Dim(d, min=1, max=64 if d == "B" else 120) for i, d in enumerate(fam.dims)}
            for k in example}
    for k in fam.call:
        spec[k] = None
    torch.onnx.export(model, (), path, kwargs={**example, **fam.call}, dynamic_shapes=spec,
                      dynamo=True, verbose=False, report=False)


def exporter_differs(ort_out: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Where ONNX Runtime's output of the exported model is out of harness.py's tolerance of
    transformers' (elementwise)."""
    r = ref.astype(np.float64)
    scale = float(np.sqrt(np.mean(r * r))) or 1.0
    return np.abs(ort_out.astype(np.float64) - r) > TOL * (scale + np.abs(r))


class OnnxHFChecker(hf.HFChecker):
    session = None  # ONNX Runtime's session of the family being checked

    def compare_case(self, model, fam: hf.Family, inputs: dict, out_dir: str):
        """As check_hf_import.py, against transformers; except that where the exported model
        itself differs from transformers (ONNX Runtime's output), on a padded token (mask 0)
        alone, the reference there is ONNX Runtime's: the dynamo exporter writes
        scaled_dot_product_attention's bool mask as an additive one of the dtype's minimum,
        so a query that attends to no key (the padding of a left-padded row of a causal
        model) averages the values where torch gives 0. A difference on a real token fails."""
        with torch.no_grad():
            ref = model(**inputs, **fam.call)
        refs = [v.numpy() for v in ref.to_tuple() if isinstance(v, torch.Tensor)]
        feed = {i.name: inputs[i.name].numpy() for i in self.session.get_inputs()}
        ort_outs = self.session.run(None, feed)
        mask = inputs.get("attention_mask")
        named, notes = [], []
        for i, (r, o) in enumerate(zip(refs, ort_outs)):
            bad = exporter_differs(o, r) if o.shape == r.shape else np.ones(r.shape, bool)
            if bad.any():
                b, s = (mask.shape if mask is not None else (0, 0))
                tokens = bad.reshape(b, s, -1).any(-1) if r.shape[:2] == (b, s) else None
                if tokens is None or (tokens & (mask.numpy() != 0)).any():
                    where = np.argwhere(bad)[0].tolist()
                    return False, (f"output {i}: the exported model itself (ONNX Runtime) "
                                   f"differs from transformers at {where}, not a padded token")
                notes.append(f"output {i}: {int(tokens.sum())} padded tokens where the "
                             f"exported model differs from transformers, compared with ONNX "
                             f"Runtime there")
                r = np.where(bad, o, r)
            named.append((f"output {i}", r))
        ok, detail = compare_outputs(out_dir, named, "transformers")
        return ok, "; ".join([detail] + notes)

    def onnx_family(self, fam: hf.Family) -> None:
        torch.manual_seed(hf.SEED)
        model = fam.make().eval()
        hf.randomize(model, hf.SEED + 7)
        g = torch.Generator().manual_seed(hf.SEED)
        example = fam.inputs(g, 2, 8)
        name = fam.name
        path = os.path.join(self.work, f"{name}.onnx")
        try:
            with open(os.devnull, "w") as null:
                old_out, sys.stdout = sys.stdout, null  # the exporter's progress lines
                try:
                    export_onnx(fam, model, example, path)
                finally:
                    sys.stdout = old_out
        except Exception as e:  # noqa: BLE001 - the exporter refused transformers' code
            text = re.sub(r"\x1b\[[0-9;]*m", "", str(e))
            m = re.search(r"<class '([\w.]+)'>: (.*)", text)  # the exporter's summary line
            first = f"{m.group(1)}: {m.group(2)}" if m else \
                (text.strip().splitlines()[0] if text.strip() else type(e).__name__)
            if EXPORT_REFUSED.get(name, "\0") in str(e):
                print(f"NOTE {name}: torch.onnx.export (dynamo) fails: {first}; not checked")
                return
            self.report(f"{name} export", False, f"{type(e).__name__}: {first}")
            return
        how = "dynamo"
        out = os.path.join(self.work, name)
        if name in VIA_CLI:
            r = self.cli([path, "-o", out])
            problem = exit_problem(r, "onnx2dsc exit")
            self.report(f"{name} import ({how}, command line)", problem is None,
                        (problem + "\n" + r.stderr.strip()) if problem else r.stdout.strip())
            if problem:
                return
        else:
            try:
                res = onnx_import.import_model(onnx.load(path), name, source=f"{name}.onnx")
                output.write_result(res, out, name)
            except ImportFailure as e:
                self.report(f"{name} import ({how})", False, e.message(f"{name}.onnx"))
                return
            except ModelError as e:
                self.report(f"{name} import ({how})", False, f"ModelError: {e}")
                return
            self.report(f"{name} import ({how})", True, res.summary(name))
        self.session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        dsc = os.path.join(out, f"{name}.dsc")
        weights = os.path.join(out, f"{name}.safetensors")
        if self.verbose:
            with open(dsc) as f:
                print(f.read())
        so = os.path.join(out, f"{name}.so")
        r = run([self.dscc, "build", dsc, "-o", so, "-q"], self.timeout)
        problem = exit_problem(r, "dscc build exit")
        if problem:
            self.report(f"{name} dscc build", False, problem)
            return
        for k, (b, s) in enumerate(fam.shapes):
            self.run_shape(fam, name, model, so, weights, k, b, s)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dscc", required=True, help="the dscc binary")
    ap.add_argument("--filter", help="only the families whose name matches this regex")
    ap.add_argument("--all", action="store_true",
                    help="also the families built from the same parts")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per command")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("-v", "--verbose", action="store_true")
    ns = ap.parse_args(argv)
    if not check_dscc_arg("check_hf_onnx_import.py", {"numeric"}, ns.dscc):
        return 2
    import onnxscript
    print(f"transformers {hf.transformers.__version__}, torch {torch.__version__}, "
          f"onnx {onnx.__version__}, onnxscript {onnxscript.__version__}")
    work = tempfile.mkdtemp(prefix="dsc-hf-onnx-")
    checker = OnnxHFChecker(IMPORTER, ns.dscc, work, ns.timeout, ns.verbose)
    try:
        for fam in hf.FAMILIES:
            if not ns.all and fam.name not in MAIN:
                continue
            if ns.filter and not re.search(ns.filter, fam.name):
                continue
            try:
                checker.onnx_family(fam)
            except Exception as e:  # noqa: BLE001 - a failed family, not a crash of the script
                checker.report(fam.name, False, f"{type(e).__name__}: {e}")
    finally:
        remove_work(work, ns.keep)
    return tally(checker)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
