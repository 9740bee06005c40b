#!/usr/bin/env python3
"""bert_torch.py's BERT layer exported to ONNX and run by ONNX Runtime (CPU; fp32, or bf16 or f16
with --dtype): a peer of bench/cpu/run.py.

The layer (bert_torch.BertLayer, the --variant formulation) is exported once, with its weights
as initializers and B and S dynamic, then one InferenceSession runs it at every shape, as dsc's
one compiled layer does:

  - export: torch.onnx.export of a module whose forward is the layer, traced at the check
    shape (default B=2, S=7: both above 1, so neither is taken for a constant), inputs `x`
    [B, S, 768] and `mask` [B, S], output `y` [B, S, 768].
      --exporter torchscript (default): the TorchScript tracer (dynamo=False), opset 17,
        dynamic_axes {x: {0: B, 1: S}, mask: {0: B, 1: S}, y: {0: B, 1: S}}. torch 2.9 and later
        call it deprecated but it needs nothing beyond torch.
      --exporter dynamo: torch.export, opset 18, dynamic_shapes with torch.export.Dim("B"),
        Dim("S", max=512). Needs the onnxscript package. (With torch 2.15 at opset 17 it wrote a
        Split with `num_outputs`, an opset-18 attribute, which onnxruntime rejects.)
    The model goes to a temporary directory, removed afterwards, unless --onnx PATH keeps it.
  - session: onnxruntime.InferenceSession(model, SessionOptions(intra_op_num_threads=N,
    inter_op_num_threads=1, execution_mode=ORT_SEQUENTIAL, graph_optimization_level=
    ORT_ENABLE_ALL), providers=["CPUExecutionProvider"]); its creation (graph optimization
    included) is timed;
  - timing: at each shape x and mask are float32 numpy arrays made before the clock starts;
    the first session.run is timed apart (ORT plans memory per shape), then bert_torch.
    time_calls: W warm-up calls, the median of R calls of session.run timed one by one. The
    output is allocated by each call, as torch's is.
  - dtypes (--dtype): the layer is exported in the dtype (weights, x, mask and y in it). f16
    inputs are float16 arrays. bf16 ones, which NumPy has no type for, are OrtValues of their
    bits (onnx type BFLOAT16), and a bf16 output is read back through its buffer; but ONNX
    Runtime's CPU execution provider has no bf16 MatMul (with onnxruntime 1.32 the session
    fails: NOT_IMPLEMENTED, "Could not find an implementation for MatMul(13)"), and run.py
    then skips the peer with that message (unsupported() recognizes it).

Standalone (checks ORT against eager at the check shape, then times it):
    python3 bench/cpu/bert_onnx.py --threads 2 --runs 20
    python3 bench/cpu/bert_onnx.py --shapes 1x32,2x17 --runs 3 --threads 1 --onnx /tmp/bert.onnx
    python3 bench/cpu/bert_onnx.py --dtype f16 --threads 2 --runs 20
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
import warnings

from temp_dir import TempDirOwner

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

DEFAULT_SHAPES = "1x32,1x128,4x64,8x128,1x384"
EXPORTERS = ("torchscript", "dynamo")
DEFAULT_OPSET = {"torchscript": 17, "dynamo": 18}
ONNX_BFLOAT16 = 16  # onnx.TensorProto.BFLOAT16


def unsupported(error: BaseException | str) -> bool:
    """Whether an error says ONNX Runtime has no kernel for a node (a dtype its execution
    provider does not implement), as opposed to a failure of the export or of the session."""
    text = str(error)
    return "NOT_IMPLEMENTED" in text or "Could not find an implementation" in text


def version(module: str) -> str | None:
    try:
        return __import__(module).__version__
    except Exception:
        return None


def available(exporter: str = "torchscript") -> str | None:
    """None when the layer can be exported and run here, else why not (a note for the table)."""
    for module, why in (("onnxruntime", "pip install onnxruntime"),
                        ("onnx", "torch.onnx.export needs it: pip install onnx"),
                        ("torch", "the export needs torch")):
        try:
            __import__(module)
        except Exception as e:
            return f"{module} does not import ({type(e).__name__}: {e}; {why})"
    if exporter == "dynamo":
        try:
            __import__("onnxscript")
        except Exception as e:
            return (f"--exporter dynamo needs onnxscript ({type(e).__name__}: {e}); "
                    f"--exporter torchscript does not")
    return None


def export(params, path: str, variant: str = "eager", exporter: str = "torchscript",
           opset: int | None = None, dtype: str = "f32") -> dict:
    """Export BertLayer(params, variant, dtype) to PATH (one .onnx file, weights inside), traced
    at params' (B, S) with B and S dynamic. Returns what was done, with the export's wall
    time."""
    import torch
    import bert_torch
    if exporter not in EXPORTERS:
        raise ValueError(f"exporter must be one of {EXPORTERS}")
    opset = opset or DEFAULT_OPSET[exporter]
    layer = bert_torch.BertLayer(params, variant, dtype)

    class Layer(torch.nn.Module):
        def forward(self, x, mask):
            return layer(x, mask)

    module = Layer().eval()
    args = layer.inputs(params)
    kwargs = {"input_names": ["x", "mask"], "output_names": ["y"], "opset_version": opset}
    if exporter == "torchscript":
        axes = {0: "B", 1: "S"}
        kwargs.update(dynamo=False, do_constant_folding=True,
                      dynamic_axes={"x": axes, "mask": axes, "y": axes})
    else:
        from torch.export import Dim
        B, S = Dim("B", min=1), Dim("S", min=1, max=512)
        kwargs.update(dynamo=True, external_data=False, verbose=False,
                      dynamic_shapes={"x": {0: B, 1: S}, "mask": {0: B, 1: S}})
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        torch.onnx.export(module, args, path, **kwargs)
        seconds = time.perf_counter() - t0
    r = {"path": os.path.abspath(path), "exporter": exporter, "opset": opset, "variant": variant,
         "dtype": dtype,
         "traced_at": list(params["x"].shape[:2]), "seconds": seconds,
         "bytes": os.path.getsize(path), "torch": torch.__version__,
         "warnings": sorted({str(w.message).splitlines()[0][:200] for w in caught})}
    try:
        import onnx
        model = onnx.load(path, load_external_data=False)
        r["ops"] = dict(collections.Counter(n.op_type for n in model.graph.node).most_common())
        r["onnx"] = onnx.__version__
    except Exception:  # the op list is informative only
        pass
    return r


class OrtLayer:
    """One onnxruntime.InferenceSession of the exported layer; its creation is timed."""

    def __init__(self, path: str, threads: int, dtype: str = "f32"):
        import onnxruntime as ort
        self.ort = ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.options = {"intra_op_num_threads": threads, "inter_op_num_threads": 1,
                        "execution_mode": "ORT_SEQUENTIAL",
                        "graph_optimization_level": "ORT_ENABLE_ALL",
                        "providers": ["CPUExecutionProvider"]}
        t0 = time.perf_counter()
        self.session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        self.session_s = time.perf_counter() - t0
        self.threads = threads
        self.dtype = dtype
        self.output = self.session.get_outputs()[0].name

    def feed(self, a):
        """A float32 array as the session's input in the layer's dtype (made before timing)."""
        import numpy as np
        if self.dtype == "f16":
            return a.astype(np.float16)
        if self.dtype == "bf16":
            import torch
            bits = torch.from_numpy(a).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
            return self.ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
                np.ascontiguousarray(bits), onnx_element_type=ONNX_BFLOAT16)
        return a

    def __call__(self, x, mask):
        if self.dtype == "bf16":  # OrtValues in and out: NumPy has no bfloat16
            return self.session.run_with_ort_values([self.output], {"x": x, "mask": mask})[0]
        return self.session.run([self.output], {"x": x, "mask": mask})[0]

    def forward_numpy(self, params):
        """The output on params["x"], params["mask"], as float32."""
        import numpy as np
        y = self(self.feed(params["x"]), self.feed(params["mask"]))
        if self.dtype == "bf16":
            import ctypes
            shape = y.shape()
            raw = ctypes.string_at(y.data_ptr(), int(np.prod(shape)) * 2)
            bits = np.frombuffer(raw, dtype=np.uint16).reshape(shape)
            return (bits.astype(np.uint32) << 16).view(np.float32)
        return y.astype(np.float32)

    def bench(self, B: int, S: int, runs: int, warmup: int, seed: int = 0,
              max_seconds: float | None = None) -> dict:
        import bert_torch
        p = bert_torch.random_params(B, S, seed)
        x, mask = self.feed(p["x"]), self.feed(p["mask"])
        t0 = time.perf_counter()
        self(x, mask)
        first = time.perf_counter() - t0
        r = bert_torch.time_calls(lambda: self(x, mask), runs, warmup, max_seconds)
        r.update({"B": B, "S": S, "threads": self.threads, "first_call_s": first,
                  "dtype": self.dtype})
        return r

    def summary(self) -> dict:
        s = self.session
        return {
            "onnxruntime": self.ort.__version__,
            "session_s": self.session_s,
            "session_options": self.options,
            "providers": s.get_providers(),
            "inputs": {i.name: i.shape for i in s.get_inputs()},
            "outputs": {o.name: o.shape for o in s.get_outputs()},
        }


class OrtPeer(TempDirOwner):
    """export() into --onnx PATH or a temporary directory, then an OrtLayer on it."""

    def __init__(self, params, threads: int, variant: str = "eager",
                 exporter: str = "torchscript", opset: int | None = None,
                 path: str | None = None, dtype: str = "f32"):
        if path is None:
            path = os.path.join(self.make_temp_dir("dsc-bench-onnx-"), "bert_layer.onnx")
        try:
            self.export = export(params, path, variant, exporter, opset, dtype)
            self.export["kept"] = self._tmp is None
            self.layer = OrtLayer(path, threads, dtype)
        except BaseException:
            self.close()
            raise

    def forward_numpy(self, params):
        return self.layer.forward_numpy(params)

    def bench(self, B: int, S: int, runs: int, warmup: int, seed: int = 0,
              max_seconds: float | None = None) -> dict:
        return self.layer.bench(B, S, runs, warmup, seed, max_seconds)

    def summary(self) -> dict:
        return {"export": self.export, **self.layer.summary()}



def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description="BERT-base layer exported to ONNX, run by ONNX Runtime, CPU (fp32, or "
                    "--dtype bf16|f16).")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES,
                    help="comma-separated BxS (default: the benchmark's five)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="ORT intra_op_num_threads (and torch's, for the export and the check; "
                         "default: os.cpu_count())")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per shape (median)")
    ap.add_argument("--warmup", type=int, default=3,
                    help="warm-up calls per shape after its first call (default 3)")
    ap.add_argument("--variant", choices=("eager", "literal", "sdpa"), default="eager",
                    help="the bert_torch.py formulation that is exported (default eager)")
    ap.add_argument("--dtype", choices=("f32", "bf16", "f16"), default="f32",
                    help="the dtype the layer is exported in (default f32)")
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="per shape, stop timing once the timed calls took this long (at least "
                         "3 runs; default: no limit)")
    ap.add_argument("--exporter", choices=EXPORTERS, default="torchscript",
                    help="torch.onnx.export's TorchScript tracer (dynamo=False, the default) or "
                         "torch.export (dynamo=True, needs onnxscript)")
    ap.add_argument("--opset", type=int, default=None,
                    help="ONNX opset (default 17 for torchscript, 18 for dynamo)")
    ap.add_argument("--onnx", metavar="PATH",
                    help="write the model to PATH and keep it (default: a temporary directory)")
    ap.add_argument("--check-shape", default="2x7",
                    help="BxS of the export's trace and of the check against eager (default 2x7)")
    ap.add_argument("--no-check", action="store_true", help="skip the check against eager")
    ap.add_argument("--seed", type=int, default=0)
    ns = ap.parse_args(argv)

    why = available(ns.exporter)
    if why:
        print(f"bert_onnx.py: cannot run: {why}", file=sys.stderr)
        return 2
    import torch
    import bert_torch
    torch.set_num_threads(ns.threads)
    cB, cS = bert_torch.parse_shapes(ns.check_shape)[0]
    params = bert_torch.random_params(cB, cS, seed=1)
    status = 0
    try:
        peer = OrtPeer(params, ns.threads, ns.variant, ns.exporter, ns.opset, ns.onnx, ns.dtype)
    except Exception as e:
        if unsupported(e):
            print(f"bert_onnx.py: ONNX Runtime's CPU execution provider cannot run the layer in "
                  f"{ns.dtype}: {' '.join(str(e).split())}", file=sys.stderr)
            return 2
        raise
    with peer:
        e, s = peer.export, peer.layer.summary()
        print(f"export ({e['exporter']}, opset {e['opset']}, {ns.variant} layer, traced at "
              f"B={cB} S={cS}): {e['seconds']:.2f} s, {e['bytes'] / 1e6:.1f} MB"
              f"{', kept at ' + e['path'] if e['kept'] else ''}")
        print(f"onnxruntime {s['onnxruntime']}: session {s['session_s']:.2f} s, "
              f"{ns.threads} intra-op threads, inter-op 1, ORT_ENABLE_ALL, {s['providers']}; "
              f"median of {ns.runs} runs after {ns.warmup} warm-up", flush=True)
        if not ns.no_check:
            ok, detail = bert_torch.compare(
                peer.forward_numpy(params), bert_torch.forward_numpy(params, ns.variant, ns.dtype),
                bert_torch.TOLERANCES[ns.dtype])
            print(f"check B={cB} S={cS} vs eager: {'agree' if ok else 'DISAGREE'}: {detail}")
            status = 0 if ok else 1
        for B, S in bert_torch.parse_shapes(ns.shapes):
            r = peer.bench(B, S, ns.runs, ns.warmup, ns.seed, ns.max_seconds)
            print(f"B={B:<3d} S={S:<4d} {r['median_ms']:9.3f} ms  (min {r['min_ms']:.3f}); "
                  f"first call {r['first_call_s'] * 1e3:.1f} ms", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
