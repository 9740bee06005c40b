#!/usr/bin/env python3
"""ResNet-18's convolutions one at a time: dsc's `dsc.conv2d` against PyTorch eager
(F.conv2d) and ONNX Runtime (a one-node Conv model, its weights an initializer), in one run at
the same thread count.

  python3 bench/cpu/conv_layers.py --threads 1 --runs 30 [--batch 1] [--image 224]
  python3 bench/cpu/conv_layers.py --layers l3,l4 --threads 2

Each layer is a function of its own in one .dsc module (its input's batch and image size
symbolic, its weights a parameter of constant dims), built once with `dscc build` and timed
with `dscc run --entry=LAYER --random-weights --bench=R`, which declares the weights constant
(the GEMM packs them once, as ORT prepacks an initializer). Before timing, each layer's output
at the benchmark shape is checked against F.conv2d on the same inputs. Times are medians of
--runs calls after 5 warm-up calls on every side, output allocation included on every side, and at least
--min-seconds of calls per layer for every peer (a layer of 1 ms timed 30 times is a 30 ms
process, and for about the first tenth of a second a process on these VMs often runs its
second thread late; a test program whose two threads share no data showed it too);
GFLOP/s counts 2 * multiply-adds. The table's ratios are PEER/dsc: above 1 means dsc is
faster.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile

import numpy as np

import run  # bench/cpu/run.py: dscc helpers
import bert_torch

# name: (input channels, input size at a 224 image, output channels, window, stride, padding)
LAYERS = {
    "stem": (3, 224, 64, 7, 2, 3),
    "l1": (64, 56, 64, 3, 1, 1),
    "l2a": (64, 56, 128, 3, 2, 1),
    "l2": (128, 28, 128, 3, 1, 1),
    "l2d": (64, 56, 128, 1, 2, 0),
    "l3a": (128, 28, 256, 3, 2, 1),
    "l3": (256, 14, 256, 3, 1, 1),
    "l3d": (128, 28, 256, 1, 2, 0),
    "l4a": (256, 14, 512, 3, 2, 1),
    "l4": (512, 7, 512, 3, 1, 1),
    "l4d": (256, 14, 512, 1, 2, 0),
}


def source() -> str:
    """One dsc function per layer."""
    fns = []
    for name, (c, _, o, k, s, p) in LAYERS.items():
        fns.append(f"fn {name}(x: f32[N, {c}, H, W], w: f32[{o}, {c}, {k}, {k}])\n"
                   f"  where N >= 1, H >= {k}, W >= {k}\n"
                   f"{{\n  return conv2d(x, w, stride={s}, padding={p})\n}}\n")
    return "\n".join(fns)


def size_at(name: str, image: int) -> int:
    """The layer's input size when the network's input is image x image (224: LAYERS')."""
    c, at224, *_ = LAYERS[name]
    return max(1, at224 * image // 224) if name != "stem" else image


def output_size(n: int, k: int, s: int, p: int) -> int:
    return (n + 2 * p - k) // s + 1


def gflop(name: str, batch: int, image: int) -> float:
    c, _, o, k, s, p = LAYERS[name]
    h = size_at(name, image)
    oh = output_size(h, k, s, p)
    return 2.0 * batch * o * oh * oh * c * k * k / 1e9


def check(dscc: str, so: str, name: str, batch: int, image: int, threads: int, tmp: str,
          timeout: float) -> str | None:
    """dsc's output against F.conv2d on the same random input and weights; an error or None."""
    import torch
    import torch.nn.functional as F
    c, _, o, k, s, p = LAYERS[name]
    h = size_at(name, image)
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (batch, c, h, h)).astype(np.float32)
    w = rng.uniform(-0.1, 0.1, (o, c, k, k)).astype(np.float32)
    xp, wp, outdir = (os.path.join(tmp, f"{name}_{v}") for v in ("x.npy", "w.npy", "out"))
    np.save(xp, x)
    np.save(wp, w)
    rc, out, err = run.run_dscc([dscc, "run", so, f"--entry={name}", f"--input=x={xp}",
                                 f"--input=w={wp}", f"--output={outdir}", "-q"], threads, run.ROOT,
                                timeout)
    if rc != 0:
        return f"dscc run: {run.first_error(out, err)}"
    got = np.load(os.path.join(outdir, "output0.npy"))
    want = F.conv2d(torch.from_numpy(x), torch.from_numpy(w), stride=s, padding=p).numpy()
    if got.shape != want.shape:
        return f"shape {got.shape}, PyTorch's {want.shape}"
    worst = float(np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want))))
    return None if worst < 1e-4 else f"differs from PyTorch by {worst:.2e}"


def dsc_time(dscc: str, so: str, name: str, batch: int, image: int, threads: int, runs: int,
             timeout: float) -> float:
    h = size_at(name, image)
    rc, out, err = run.run_dscc([dscc, "run", so, f"--entry={name}",
                                 f"--shape=N={batch},H={h},W={h}", "--random-weights",
                                 f"--bench={runs}", "--warmup=5"], threads, run.ROOT, timeout)
    m = run.DSC_MEDIAN_RE.search(out)
    if rc != 0 or not m:
        raise RuntimeError(f"dscc run {name}: {run.first_error(out, err)}")
    return float(m.group(1))


def torch_time(name: str, batch: int, image: int, threads: int, runs: int) -> float:
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(threads)
    c, _, o, k, s, p = LAYERS[name]
    h = size_at(name, image)
    x, w = torch.randn(batch, c, h, h), torch.randn(o, c, k, k)
    with torch.inference_mode():
        return bert_torch.time_calls(lambda: F.conv2d(x, w, stride=s, padding=p), runs, 5)["median_ms"]


def ort_time(name: str, batch: int, image: int, threads: int, runs: int) -> float | None:
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None
    c, _, o, k, s, p = LAYERS[name]
    h = size_at(name, image)
    w = np.random.default_rng(3).standard_normal((o, c, k, k)).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], strides=[s, s], pads=[p, p, p, p],
                            kernel_shape=[k, k])
    graph = helper.make_graph([node], name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", c, "H", "W"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = min(model.ir_version, 9)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), opts,
                                   providers=["CPUExecutionProvider"])
    x = np.random.default_rng(4).standard_normal((batch, c, h, h)).astype(np.float32)
    return bert_torch.time_calls(lambda: session.run(None, {"x": x}), runs, 5)["median_ms"]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="ResNet-18's convolutions: dsc against ORT and eager.")
    ap.add_argument("--dscc", default=os.environ.get("DSCC", os.path.join(run.ROOT, "build/tools/dscc/dscc")))
    ap.add_argument("--layers", default=",".join(LAYERS), help="comma-separated, of: " + ",".join(LAYERS))
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--image", type=int, default=224, help="the network's input size")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--min-seconds", type=float, default=0.5,
                    help="time at least this long per layer and peer (more runs)")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--json", help="also write the results here")
    ns = ap.parse_args(argv)
    layers = [n for n in ns.layers.split(",") if n]
    unknown = [n for n in layers if n not in LAYERS]
    if unknown:
        ap.error(f"unknown layer(s) {', '.join(unknown)}; known: {', '.join(LAYERS)}")
    if min(ns.batch, ns.threads, ns.runs) < 1 or ns.image < 32:
        ap.error("--batch, --threads and --runs must be positive, --image at least 32")
    rows = []
    with tempfile.TemporaryDirectory(prefix="dsc-bench-conv-") as tmp:
        src, so = os.path.join(tmp, "conv_layers.dsc"), os.path.join(tmp, "conv_layers.so")
        with open(src, "w") as f:
            f.write(source())
        build = run.dsc_build(ns.dscc, src, so, ns.threads, run.ROOT, ns.timeout)
        if "error" in build:
            print(f"conv_layers.py: dscc build: {build['error']}", file=sys.stderr)
            return 1
        for name in layers:
            problem = check(ns.dscc, so, name, ns.batch, ns.image, ns.threads, tmp, ns.timeout)
            if problem:
                print(f"conv_layers.py: {name}: {problem}", file=sys.stderr)
                return 1
            try:
                probe = dsc_time(ns.dscc, so, name, ns.batch, ns.image, ns.threads, 3, ns.timeout)
                runs = max(ns.runs, math.ceil(ns.min_seconds * 1e3 / max(probe, 1e-3)))
                dsc = dsc_time(ns.dscc, so, name, ns.batch, ns.image, ns.threads, runs, ns.timeout)
            except RuntimeError as e:
                print(f"conv_layers.py: {e}", file=sys.stderr)
                return 1
            ort_ms = ort_time(name, ns.batch, ns.image, ns.threads, runs)
            eager = torch_time(name, ns.batch, ns.image, ns.threads, runs)
            rows.append({"layer": name, "dsc_ms": dsc, "ort_ms": ort_ms, "eager_ms": eager,
                         "gflop": gflop(name, ns.batch, ns.image), "runs": runs})
    print(f"ResNet-18's convolutions at {ns.batch}x3x{ns.image}x{ns.image}, {ns.threads} threads, "
          f"median of at least {ns.runs} ({ns.min_seconds} s); machine: {run.cpu_model()}; load {run.loadavg()}; "
          f"revision {run.git_revision(run.ROOT)}")
    print(f"{'layer':6s} {'C->O k/s':>14s} {'in':>4s} {'dsc ms':>8s} {'GF/s':>6s} {'ort ms':>8s} "
          f"{'eager ms':>9s} {'ort/dsc':>8s} {'eager/dsc':>9s}")
    for r in rows:
        c, _, o, k, s, _ = LAYERS[r["layer"]]
        ort_ms = r["ort_ms"]
        print(f"{r['layer']:6s} {f'{c}->{o} {k}/{s}':>14s} {size_at(r['layer'], ns.image):4d} "
              f"{r['dsc_ms']:8.3f} {r['gflop'] / r['dsc_ms'] * 1e3:6.0f} "
              f"{ort_ms if ort_ms is not None else float('nan'):8.3f} {r['eager_ms']:9.3f} "
              f"{(ort_ms / r['dsc_ms']) if ort_ms else float('nan'):8.2f} "
              f"{r['eager_ms'] / r['dsc_ms']:9.2f}")
    ratios = [r["ort_ms"] / r["dsc_ms"] for r in rows if r["ort_ms"]]
    print(f"geomean: ort/dsc {run.geomean(ratios) or float('nan'):.2f}, "
          f"eager/dsc {run.geomean([r['eager_ms'] / r['dsc_ms'] for r in rows]):.2f}")
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump({"threads": ns.threads, "batch": ns.batch, "image": ns.image,
                       "runs": ns.runs, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
