#!/usr/bin/env python3
"""Hugging Face transformers models at their real sizes, called as their users call them
(input_ids + a padded attention_mask), timed: dsc against PyTorch eager and ONNX Runtime, at
each thread count, in one run.

Each family is built from its config at random weights (a fixed seed, nothing downloaded):

    bert    BertModel, BERT-base (12 layers, hidden 768, 12 heads, FFN 3072)
    gpt2    GPT2Model, GPT-2 small (12 layers, 768, 12 heads), use_cache=False
    llama   LlamaModel of TinyLlama's layer size (hidden 2048, 32 heads, 4 KV heads, FFN 5632,
            vocabulary 32000) with --llama-layers layers (2 by default), use_cache=False

then exported twice: by torch.export with dynamic batch B and sequence S, which
importers/torch2dsc.py imports and `dscc build` compiles once; and by torch.onnx.export (the
TorchScript exporter, dynamic axes B and S), which one onnxruntime.InferenceSession runs
(CPUExecutionProvider, intra_op_num_threads=N, inter_op 1, all graph optimizations). At each
shape and thread count N:

    dsc     dscc run MODEL.so --weights ... --input ... --threads=N --bench=R (median of R)
    eager   the model under torch.inference_mode(), torch.set_num_threads(N)
    ort     the .onnx session

eager and ort are timed by bench/cpu/bert_torch.py's time_calls (median of R calls after W).
Before timing, dsc's outputs (the ModelOutput's tensors: BERT's pooler output too) are
compared with eager's at the first thread count (tests/importers/harness.py's tolerance); a
mismatch makes the exit status 1. Positions past each row's mask are padding: their outputs
are compared too, as transformers computes them. ORT runs the same outputs.

The table per family: shape | N | dsc ms | eager ms | ort ms | eager/dsc | ort/dsc | GFLOP |
floor ms | floor/dsc, where PEER/dsc > 1 means dsc is faster. The floor is the roofline of
one call: the larger of GFLOP (the model's matrix products: projections, FFN and attention's
two products per layer) over the fp32 GEMM rate measured at N threads
(bench/cpu/sgemm_rate.py: the best square sgemm of MKL via torch and of OpenBLAS), and the
bytes of its weights (every parameter but the embedding tables, read once per call) over the
memory bandwidth measured by a 256 MB copy. floor/dsc is the fraction of that roofline dsc
reaches (1.0: at the limit); which bound it is shows as `c` (compute) or `m` (memory).

    python3 bench/models/hf_models.py --dscc build/tools/dscc/dscc --threads 1,2 \\
        --out /tmp/transformers

See bench/models/README.md ("transformers").
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "cpu"))
sys.path.insert(0, os.path.join(ROOT, "importers"))
sys.path.insert(0, os.path.join(ROOT, "tests", "importers"))

try:
    import numpy as np
    import onnxruntime as ort
    import torch
    import transformers
    from torch.export import Dim, export
except ImportError as e:
    print(f"SKIP: {e.name or e} is not installed: run tools/scripts/install_python_deps.sh --tests")
    sys.exit(77)

import sgemm_rate  # noqa: E402
from bert_torch import time_calls  # noqa: E402
from dscimport import torch_import  # noqa: E402
from harness import compare_outputs, run, save_inputs  # noqa: E402

_spec = importlib.util.spec_from_file_location("cpu_run", os.path.join(ROOT, "bench", "cpu", "run.py"))
cpu_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cpu_run)

SEED = 20261128
warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()


def families(llama_layers: int) -> dict:
    """name -> (make model, vocabulary, {hidden, ffn, layers, kv_dim, gated}) for the FLOP count."""
    def llama():
        return transformers.LlamaModel(transformers.LlamaConfig(
            vocab_size=32000, hidden_size=2048, intermediate_size=5632,
            num_hidden_layers=llama_layers, num_attention_heads=32, num_key_value_heads=4,
            max_position_embeddings=2048))
    return {
        "bert": (lambda: transformers.BertModel(transformers.BertConfig()), 30522,
                 dict(hidden=768, ffn=3072, layers=12, kv_dim=768, gated=False)),
        "gpt2": (lambda: transformers.GPT2Model(transformers.GPT2Config()), 50257,
                 dict(hidden=768, ffn=3072, layers=12, kv_dim=768, gated=False)),
        "llama": (llama, 32000,
                  dict(hidden=2048, ffn=5632, layers=llama_layers, kv_dim=256, gated=True)),
    }


CALL = {"bert": {}, "gpt2": {"use_cache": False}, "llama": {"use_cache": False}}
DEFAULT_SHAPES = [(1, 32), (1, 128), (4, 64), (8, 128)]


def flops(size: dict, b: int, s: int) -> int:
    """The matrix products of one call at (b, s): per layer the q and output projections
    (hidden x hidden), k and v (hidden x kv_dim), the FFN (two or, gated, three hidden x ffn),
    and attention's scores and weighted sum (2 * s * s * hidden each)."""
    h, t = size["hidden"], b * s
    proj = 2 * t * (2 * h * h + 2 * h * size["kv_dim"])
    ffn = 2 * t * h * size["ffn"] * (3 if size["gated"] else 2)
    attn = 2 * 2 * b * s * s * h
    return size["layers"] * (proj + ffn + attn)


def weight_bytes(model) -> int:
    """The bytes of every parameter but the embedding tables (of which a call reads only the
    rows of its tokens)."""
    tables = {id(p) for m in model.modules() if isinstance(m, torch.nn.Embedding)
              for p in m.parameters()}
    return sum(p.numel() * p.element_size() for p in model.parameters() if id(p) not in tables)


def copy_bandwidth() -> float:
    """Bytes per second of the best of five copies of 256 MB (read plus written)."""
    a = np.ones(64 << 20, dtype=np.float32)
    b = np.empty_like(a)
    best = min(time_calls(lambda: np.copyto(b, a), 1, 1)["min_ms"] for _ in range(5))
    return 2 * a.nbytes / (best / 1e3)


def inputs(vocab: int, b: int, s: int, seed: int) -> dict:
    """ids, and a mask as a tokenizer pads a batch: row 0 full, the others a random length
    padded at the end."""
    g = torch.Generator().manual_seed(seed)
    mask = torch.ones(b, s, dtype=torch.long)
    for r in range(1, b):
        mask[r, int(torch.randint(1, s + 1, (1,), generator=g)):] = 0
    return {"input_ids": torch.randint(0, vocab, (b, s), generator=g), "attention_mask": mask}


def prepare(name: str, make, vocab: int, ns, work: str, log) -> dict:
    torch.manual_seed(SEED)
    model = make().eval()
    example = inputs(vocab, 2, 16, SEED)
    spec = {k: {0: Dim("B", min=1, max=64), 1: Dim("S", min=1, max=512)} for k in example}
    for k in CALL[name]:
        spec[k] = None
    out = os.path.join(work, name)
    log(f"{name}: torch.export, torch2dsc, dscc build")
    ep = export(model, (), {**example, **CALL[name]}, dynamic_shapes=spec)
    torch_import.to_dsc(ep, out, name, dynamic_shapes=spec)
    so = os.path.join(out, f"{name}.so")
    r = run([ns.dscc, "build", os.path.join(out, f"{name}.dsc"), "-o", so, "-q"], ns.timeout)
    if r.rc != 0:
        raise SystemExit(f"{name}: dscc build failed: {cpu_run.first_error(r.stdout, r.stderr)}")
    prepared = {"model": model, "so": so, "weights": os.path.join(out, f"{name}.safetensors"),
                "onnx": None, "onnx_error": None, "weight_bytes": weight_bytes(model)}
    log(f"{name}: torch.onnx.export (TorchScript exporter)")
    onnx_path = os.path.join(work, f"{name}.onnx")

    class Call(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              **CALL[name]).to_tuple()
    try:
        axes = {0: "B", 1: "S"}
        with torch.no_grad():
            torch.onnx.export(Call().eval(), (example["input_ids"], example["attention_mask"]),
                              onnx_path, input_names=["input_ids", "attention_mask"],
                              opset_version=17, dynamo=False,
                              dynamic_axes={"input_ids": axes, "attention_mask": axes})
        prepared["onnx"] = onnx_path
    except Exception as e:  # noqa: BLE001 - a peer that cannot run is a note, not a failure
        prepared["onnx_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return prepared


def bench_shape(name: str, p: dict, vocab: int, size: dict, b: int, s: int, threads: int, ns,
                work: str, rate: float | None) -> dict:
    x = inputs(vocab, b, s, SEED + 1000 * b + s)
    case = os.path.join(work, f"{name}_{b}x{s}")
    args = save_inputs(x, case)
    torch.set_num_threads(threads)
    row = {"B": b, "S": s, "threads": threads, "gflop": flops(size, b, s) / 1e9}
    if threads == ns.threads[0]:
        r = run([ns.dscc, "run", p["so"], "--weights", p["weights"], *args,
                 f"--output={case}/out", f"--threads={threads}"], ns.timeout)
        if r.rc != 0:
            row["check"] = f"dscc run exit {r.rc}: {cpu_run.first_error(r.stdout, r.stderr)}"
        else:
            with torch.inference_mode():
                ref = p["model"](**x, **CALL[name]).to_tuple()
            named = [(f"output {i}", t.numpy()) for i, t in enumerate(ref)
                     if isinstance(t, torch.Tensor)]
            ok, detail = compare_outputs(os.path.join(case, "out"), named, "transformers")
            row["check"] = "ok" if ok else "FAIL"
            row["check_detail"] = detail
    r = run([ns.dscc, "run", p["so"], "--weights", p["weights"], *args, f"--threads={threads}",
             f"--bench={ns.runs}", f"--warmup={ns.warmup}"], ns.timeout)
    m = cpu_run.DSC_MEDIAN_RE.search(r.stdout) or cpu_run.DSC_MEDIAN_RE.search(r.stderr)
    row["dsc_ms"] = float(m.group(1)) if r.rc == 0 and m else None
    with torch.inference_mode():
        row["eager_ms"] = time_calls(lambda: p["model"](**x, **CALL[name]), ns.runs,
                                     ns.warmup)["median_ms"]
    row["ort_ms"] = None
    if p["onnx"]:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
        sess = ort.InferenceSession(p["onnx"], opts, providers=["CPUExecutionProvider"])
        feed = {k: t.numpy() for k, t in x.items()}
        row["ort_ms"] = time_calls(lambda: sess.run(None, feed), ns.runs, ns.warmup)["median_ms"]
    if rate and ns.bandwidth:
        compute_ms = row["gflop"] / rate * 1e3
        memory_ms = p["weight_bytes"] / ns.bandwidth * 1e3
        row["floor_ms"], row["bound"] = max((compute_ms, "c"), (memory_ms, "m"))
        if row["dsc_ms"]:
            row["floor_over_dsc"] = row["floor_ms"] / row["dsc_ms"]
    return row


def ratio(a, b):
    return a / b if a and b else None


def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def table(name: str, rows: list[dict]) -> list[str]:
    out = [f"| {name} B x S | threads | dsc ms | eager ms | ort ms | eager/dsc | ort/dsc | GFLOP "
           "| floor ms | floor/dsc | check |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['B']} x {r['S']} | {r['threads']} | {fmt(r['dsc_ms'], '.2f')} | "
                   f"{fmt(r['eager_ms'], '.2f')} | {fmt(r['ort_ms'], '.2f')} | "
                   f"{fmt(ratio(r['eager_ms'], r['dsc_ms']), '.2f')} | "
                   f"{fmt(ratio(r['ort_ms'], r['dsc_ms']), '.2f')} | {r['gflop']:.2f} | "
                   f"{fmt(r.get('floor_ms'), '.2f')} {r.get('bound', '')} | "
                   f"{fmt(r.get('floor_over_dsc'), '.2f')} | {r.get('check', '')} |")
    for t in sorted({r["threads"] for r in rows}):
        at = [r for r in rows if r["threads"] == t]
        ge = cpu_run.geomean([ratio(r["eager_ms"], r["dsc_ms"]) for r in at])
        go = cpu_run.geomean([ratio(r["ort_ms"], r["dsc_ms"]) for r in at])
        out.append(f"\n{name}, {t} thread{'s' if t > 1 else ''}: geomean eager/dsc {fmt(ge, '.2f')}, "
                   f"ort/dsc {fmt(go, '.2f')}")
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dscc", required=True)
    ap.add_argument("--models", default="bert,gpt2,llama")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    ap.add_argument("--shapes", default=",".join(f"{b}x{s}" for b, s in DEFAULT_SHAPES),
                    help="B x S, comma-separated (default %(default)s)")
    ap.add_argument("--llama-layers", type=int, default=2)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--work", help="keep the exports, imports and builds here")
    ap.add_argument("--out", help="write PATH.json and PATH.md")
    ns = ap.parse_args(argv)
    ns.threads = [int(t) for t in ns.threads.split(",")]
    shapes = [tuple(int(v) for v in x.split("x")) for x in ns.shapes.split(",")]
    work = ns.work or tempfile.mkdtemp(prefix="dsc_transformers_")
    os.makedirs(work, exist_ok=True)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    rates = {}
    for t in ns.threads:
        rates[t] = sgemm_rate.measure_rates(t, square=[2048])["rate_used"]
        log(f"fp32 GEMM rate at {t} thread{'s' if t > 1 else ''}: {fmt(rates[t], '.1f')} GFLOP/s")
    ns.bandwidth = copy_bandwidth()
    log(f"copy bandwidth: {ns.bandwidth / 1e9:.1f} GB/s")
    fams = families(ns.llama_layers)
    result = {"cpu": cpu_run.cpu_model(), "revision": cpu_run.git_revision(ROOT),
              "torch": torch.__version__, "transformers": transformers.__version__,
              "onnxruntime": ort.__version__, "gemm_gflops": rates,
              "copy_bytes_per_s": ns.bandwidth, "models": {}}
    lines, failed = [], False
    for name in ns.models.split(","):
        make, vocab, size = fams[name]
        p = prepare(name, make, vocab, ns, work, log)
        rows = []
        for t in ns.threads:
            for b, s in shapes:
                log(f"{name} B={b} S={s} threads={t}")
                rows.append(bench_shape(name, p, vocab, size, b, s, t, ns, work, rates[t]))
                failed |= rows[-1].get("check", "ok") != "ok"
        result["models"][name] = {"rows": rows, "onnx_error": p["onnx_error"]}
        lines += table(name, rows)
        if p["onnx_error"]:
            lines.append(f"{name}: no ort column: torch.onnx.export failed: {p['onnx_error']}")
        lines.append("")
    head = (f"CPU: {result['cpu']}; torch {result['torch']}, transformers "
            f"{result['transformers']}, onnxruntime {result['onnxruntime']}; revision "
            f"{result['revision']}; fp32; median of {ns.runs} calls after {ns.warmup}")
    print(head + "\n\n" + "\n".join(lines))
    if ns.out:
        with open(ns.out + ".json", "w") as f:
            json.dump(result, f, indent=1, default=str)
        with open(ns.out + ".md", "w") as f:
            f.write(head + "\n\n" + "\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
