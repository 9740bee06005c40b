#!/usr/bin/env python3
"""LLM generation on the CPU, side by side in one run at one thread count: dsc (hf2dsc, then
`dscc generate`), transformers' generate in eager, transformers with torch.compile and a static
cache, and llama.cpp (llama-cpp-python) on the same weights written to GGUF at F32.

The model is a LlamaForCausalLM at TinyLlama's sizes (22 layers, hidden 2048, 32 heads, 4 KV
heads, FFN 5632, vocabulary 32000) with random weights at a fixed seed (nothing downloaded);
--layers makes it shallower for a quick run. It is saved with save_pretrained, imported by
importers/hf2dsc.py and built once (`dscc build --entry=prefill --entry=decode`); the same
tensors are written to GGUF with the gguf package (Q and K rows permuted into llama.cpp's
rotary layout, as its converter does).

Cases (each timed once per system, after one untimed warm-up generation):

    prefill P     batch 1, a prompt of P tokens, 1 new token: prompt tokens/s and the time to
                  the first token (the prefill call and the first sampling);
    decode BxC    batch B, prompts of C tokens, then --steps greedy steps: decode tokens/s
                  (B * steps over the decode calls' time).

dsc's numbers are `dscc generate --bench`'s. transformers' come from generate itself, timed by
a streamer (which generate hands each new token as it is made): prefill = generate(
max_new_tokens=1) up to its token, decode = the time from the first new token to the last of
generate(max_new_tokens=1+steps); the compiled one (model.forward under torch.compile, a StaticCache of one length for all calls)
runs each case once untimed first, so that no timed call compiles.
llama.cpp's from llama_cpp.Llama.eval: the prompt, then one token per step (batch 1 only:
llama-cpp-python's Llama runs one sequence). The roofline of a decode step is the weight bytes
it reads (every parameter but the embedding table, of which it reads B rows) over the memory
read bandwidth (the best of five maxima of a 1 GiB array by torch at the same thread count, at
the start and at the end); floor/x is the fraction of it reached.

--dtype f32|f16|bf16 runs every system in that dtype. --dtype q8|q4 quantizes the weights of
the 7 projections of every layer and the LM head, per group of 32 values with an f16 scale
(the same values in both systems but for rounding ties, and the same bytes): dsc imports with
`hf2dsc --quantize=int8|int4 --quantize-head` (f32 activations, matmul_q), llama.cpp reads
GGUF Q8_0|Q4_0 tensors made by the gguf package's quantizer (norms and the token embedding
F32, as dsc keeps them; llama.cpp's own llama-quantize would also quantize the embedding and
make the head Q6_K at Q4_0). The transformers peers run the f32 model (they have no such
format). The roofline's bytes are then the quantized ones: values and scales.

    python3 bench/llm/llm_bench.py --dscc build/tools/dscc/dscc --threads 2 \\
        [--layers 22] [--prefill 128,512] [--decode 1x128,8x128,1x1024,8x1024] [--steps 8] \\
        [--dtype f32|f16|bf16|q8|q4] [--peers dsc,eager,compiled,llamacpp] [--work DIR] \\
        [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
HF2DSC = os.path.join(SOURCE_DIR, "importers", "hf2dsc.py")
sys.path.insert(0, os.path.join(SOURCE_DIR, "importers"))
from dscimport import quantize  # noqa: E402  (NumPy only: the quantized bytes)

TINYLLAMA = dict(vocab_size=32000, hidden_size=2048, intermediate_size=5632,
                 num_attention_heads=32, num_key_value_heads=4, max_position_embeddings=2048,
                 rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=False)


def log(msg: str) -> None:
    print(f"[llm_bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def read_bandwidth(threads: int) -> float:
    """Bytes per second of the best of five maxima of a 1 GiB float32 array by torch on
    `threads` threads: a read of every byte with one comparison each. (A sum is not: torch's
    float sum runs below the memory's rate on this machine, 33 GB/s against 45.)"""
    import torch
    torch.set_num_threads(threads)
    a = torch.ones(256 << 20, dtype=torch.float32)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        a.amax()
        best = min(best, time.perf_counter() - t0)
    return a.numel() * 4 / best


def make_checkpoint(layers: int, path: str):
    import torch
    import transformers
    torch.manual_seed(0)
    config = transformers.LlamaConfig(num_hidden_layers=layers, **TINYLLAMA)
    model = transformers.LlamaForCausalLM(config).eval()
    model.save_pretrained(path)
    return model


def weight_bytes(model, dtype: str = "f32") -> int:
    """Every parameter but the input embedding table (a step reads only its tokens' rows); at
    q8 and q4 the matrices (the projections and the LM head) count their quantized bytes,
    values and scales."""
    table = model.get_input_embeddings().weight
    bits = QUANTIZED.get(dtype, (None, 0))[1]
    total = 0
    for p in model.parameters():
        if p is table:
            continue
        if bits and p.dim() == 2:
            n, k = p.shape
            total += quantize.stored_bytes(n, k, bits, GROUP)
        else:
            total += p.numel() * p.element_size()
    return total


# --dtype: the torch dtype of the transformers peers and the GGUF file type llama.cpp reads.
DTYPES = {"f32": ("float32", "ALL_F32"), "f16": ("float16", "MOSTLY_F16"),
          "bf16": ("bfloat16", "MOSTLY_BF16"), "q8": ("float32", "MOSTLY_Q8_0"),
          "q4": ("float32", "MOSTLY_Q4_0")}
# The quantized ones: hf2dsc's --quantize and the bits; llama.cpp's Q8_0 and Q4_0 (blocks of
# GROUP values with an f16 scale, as hf2dsc's default groups).
QUANTIZED = {"q8": ("int8", 8), "q4": ("int4", 4)}
GROUP = 32


def gguf_tensor(a, dtype: str, embedding: bool = False):
    """(array, raw_dtype) for gguf's add_tensor: matrices in `dtype` (bf16 as its bits, which
    NumPy has no type for; q8 and q4 as Q8_0 and Q4_0 blocks, but the token embedding, F32 as
    dsc keeps it), vectors (the norms) in F32 as llama.cpp's converter keeps them."""
    import gguf
    import numpy as np
    import torch
    if a.ndim < 2 or dtype == "f32" or (dtype in QUANTIZED and embedding):
        return a.astype(np.float32), None
    if dtype in QUANTIZED:
        kind = gguf.GGMLQuantizationType.Q8_0 if dtype == "q8" else \
            gguf.GGMLQuantizationType.Q4_0
        return gguf.quants.quantize(np.ascontiguousarray(a, dtype=np.float32), kind), kind
    if dtype == "f16":
        return a.astype(np.float16), None
    bits = torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(torch.bfloat16)
    return bits.view(torch.int16).numpy().view(np.uint16), gguf.GGMLQuantizationType.BF16


def write_gguf(model, path: str, dtype: str = "f32") -> None:
    """The model's tensors as GGUF (F32, F16, BF16, Q8_0 or Q4_0 matrices) for llama.cpp's
    llama architecture."""
    import gguf
    c = model.config
    w = gguf.GGUFWriter(path, "llama")
    w.add_context_length(c.max_position_embeddings)
    w.add_embedding_length(c.hidden_size)
    w.add_block_count(c.num_hidden_layers)
    w.add_feed_forward_length(c.intermediate_size)
    w.add_head_count(c.num_attention_heads)
    w.add_head_count_kv(c.num_key_value_heads)
    w.add_rope_dimension_count(c.hidden_size // c.num_attention_heads)
    w.add_rope_freq_base(c.rope_parameters["rope_theta"])
    w.add_layer_norm_rms_eps(c.rms_norm_eps)
    w.add_file_type(getattr(gguf.LlamaFileType, DTYPES[dtype][1]))
    # A vocabulary of placeholders: the benchmark feeds token ids, never text.
    w.add_tokenizer_model("llama")
    w.add_token_list([f"<t{i}>".encode() for i in range(c.vocab_size)])
    w.add_token_scores([0.0] * c.vocab_size)
    w.add_token_types([gguf.TokenType.NORMAL] * c.vocab_size)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)

    def rotary_rows(t, heads):
        # HF keeps each head's rotary pairs as (first half, second half); llama.cpp
        # interleaves them: the converter's permutation of Q and K rows.
        out_dim, in_dim = t.shape
        return t.reshape(heads, 2, out_dim // heads // 2, in_dim).swapaxes(1, 2).reshape(out_dim, in_dim)

    sd = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}

    def add(name, a):
        array, raw = gguf_tensor(a, dtype, name == "token_embd.weight")
        w.add_tensor(name, array, raw_dtype=raw)

    add("token_embd.weight", sd["model.embed_tokens.weight"])
    add("output_norm.weight", sd["model.norm.weight"])
    add("output.weight", sd["lm_head.weight"])
    for i in range(c.num_hidden_layers):
        p = f"model.layers.{i}."
        add(f"blk.{i}.attn_norm.weight", sd[p + "input_layernorm.weight"])
        add(f"blk.{i}.attn_q.weight", rotary_rows(sd[p + "self_attn.q_proj.weight"], c.num_attention_heads))
        add(f"blk.{i}.attn_k.weight", rotary_rows(sd[p + "self_attn.k_proj.weight"], c.num_key_value_heads))
        add(f"blk.{i}.attn_v.weight", sd[p + "self_attn.v_proj.weight"])
        add(f"blk.{i}.attn_output.weight", sd[p + "self_attn.o_proj.weight"])
        add(f"blk.{i}.ffn_norm.weight", sd[p + "post_attention_layernorm.weight"])
        add(f"blk.{i}.ffn_gate.weight", sd[p + "mlp.gate_proj.weight"])
        add(f"blk.{i}.ffn_up.weight", sd[p + "mlp.up_proj.weight"])
        add(f"blk.{i}.ffn_down.weight", sd[p + "mlp.down_proj.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def prompts(batch: int, length: int, vocab: int, seed: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [[int(t) for t in rng.integers(3, vocab, size=length)] for _ in range(batch)]


class Dsc:
    name = "dsc"

    def __init__(self, dscc: str, so: str, weights: str, threads: int, work: str):
        self.dscc, self.so, self.weights, self.threads, self.work = dscc, so, weights, threads, work

    def generate(self, batch: list[list[int]], new_tokens: int) -> dict:
        path = os.path.join(self.work, "prompts.txt")
        with open(path, "w") as f:
            f.write("".join(",".join(map(str, p)) + "\n" for p in batch))
        r = subprocess.run([self.dscc, "generate", self.so, "--weights", self.weights, "--prompts", path,
                            "--max-new-tokens", str(new_tokens), "--threads", str(self.threads), "--bench"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"dscc generate failed: {r.stderr.strip()}")
        out = {}
        m = re.search(r"prefill: .* in ([\d.]+) ms .*time to first token ([\d.]+) ms", r.stderr)
        out["prefill_ms"], out["ttft_ms"] = float(m.group(1)), float(m.group(2))
        m = re.search(r"decode: (\d+) steps x (\d+) rows in ([\d.]+) ms", r.stderr)
        if m:
            out["decode_steps"], out["decode_ms"] = int(m.group(1)), float(m.group(3))
        return out

    def prefill(self, batch):
        return self.generate(batch, 1)

    def decode(self, batch, steps):
        return self.generate(batch, steps + 1)


class Transformers:
    """transformers' generate: eager with its dynamic cache, or compiled with a static cache of
    `context` positions (one length for every call, so that the decode step compiles once)."""

    def __init__(self, model, compiled: bool, context: int):
        import torch
        self.torch, self.model, self.compiled, self.context = torch, model, compiled, context
        self.name = "compiled" if compiled else "eager"
        if compiled:
            model.forward = torch.compile(model.forward)

    def _generate(self, batch, new_tokens) -> list[float]:
        """The times (ms from the call) at which generate hands out each new token, as a
        streamer sees them (transformers calls put() with the prompt, then once per step)."""
        torch = self.torch
        S = max(map(len, batch))
        ids = torch.tensor([[0] * (S - len(p)) + p for p in batch])
        mask = torch.tensor([[0] * (S - len(p)) + [1] * len(p) for p in batch])
        extra = {}
        if self.compiled:
            from transformers import StaticCache
            extra["past_key_values"] = StaticCache(config=self.model.config, max_cache_len=self.context)

        class Clock:
            def __init__(self):
                self.start, self.times = time.perf_counter(), []

            def put(self, value):
                self.times.append((time.perf_counter() - self.start) * 1e3)

            def end(self):
                pass

        clock = Clock()
        with torch.inference_mode():
            self.model.generate(ids, attention_mask=mask, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                do_sample=False, eos_token_id=None, pad_token_id=0, streamer=clock, **extra)
        return clock.times[1:]  # the first put() is the prompt

    def prefill(self, batch):
        if self.compiled:
            self._generate(batch, 1)  # compiles this prompt length
        t = self._generate(batch, 1)[0]
        return {"prefill_ms": t, "ttft_ms": t}

    def decode(self, batch, steps):
        if self.compiled:
            self._generate(batch, 2)  # compiles this batch's prefill and decode step
        times = self._generate(batch, steps + 1)
        return {"decode_steps": steps, "decode_ms": times[-1] - times[0]}


class LlamaCpp:
    name = "llamacpp"

    def __init__(self, gguf_path: str, threads: int, context: int):
        import llama_cpp
        self.llm = llama_cpp.Llama(model_path=gguf_path, n_ctx=context, n_batch=512, n_threads=threads,
                                   n_threads_batch=threads, verbose=False)

    def prefill(self, batch):
        if len(batch) != 1:
            return None
        self.llm.reset()
        t0 = time.perf_counter()
        self.llm.eval(batch[0])
        int(np.argmax(self.llm.scores[self.llm.n_tokens - 1]))
        t = (time.perf_counter() - t0) * 1e3
        return {"prefill_ms": t, "ttft_ms": t}

    def decode(self, batch, steps):
        if len(batch) != 1:
            return None
        self.llm.reset()
        self.llm.eval(batch[0])
        t0 = time.perf_counter()
        for _ in range(steps):
            self.llm.eval([5])
        return {"decode_steps": steps, "decode_ms": (time.perf_counter() - t0) * 1e3}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dscc")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--layers", type=int, default=22)
    ap.add_argument("--prefill", default="128,512")
    ap.add_argument("--decode", default="1x128,8x128,1x1024,8x1024")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--dtype", default="f32", choices=sorted(DTYPES),
                    help="the weights' dtype in every system: dsc imports with hf2dsc --dtype, "
                         "transformers runs the model in it, llama.cpp reads GGUF F32/F16/BF16; "
                         "q8 and q4: the projections and the LM head quantized per group of 32 "
                         "(dsc: hf2dsc --quantize=int8|int4 --quantize-head with f32 "
                         "activations; llama.cpp: GGUF Q8_0|Q4_0, norms and the token "
                         "embedding F32), the transformers peers in f32")
    ap.add_argument("--peers", default="dsc,eager,compiled,llamacpp")
    ap.add_argument("--work", help="keep the checkpoint, imports and builds here (reused)")
    ap.add_argument("--out", help="write the results as JSON")
    ap.add_argument("--report", metavar="RESULTS.json", help="print the tables of a saved run and stop")
    ns = ap.parse_args(argv)
    if ns.report:
        with open(ns.report) as f:
            print_tables(json.load(f))
        return 0
    if not ns.dscc and "dsc" in ns.peers.split(","):
        ap.error("--dscc is needed to run dsc")
    import torch
    torch.set_num_threads(ns.threads)
    peers = ns.peers.split(",")
    work = ns.work or tempfile.mkdtemp(prefix="dsc_llm_bench_")
    os.makedirs(work, exist_ok=True)
    prefill_cases = [int(p) for p in ns.prefill.split(",") if p]
    decode_cases = [tuple(int(x) for x in d.split("x")) for d in ns.decode.split(",") if d]
    longest = max([p for p in prefill_cases] + [c for _, c in decode_cases]) + ns.steps + 1

    ckpt = os.path.join(work, "checkpoint")
    log(f"a LLaMA of TinyLlama's sizes with {ns.layers} layers -> {ckpt}")
    model = make_checkpoint(ns.layers, ckpt).to(getattr(torch, DTYPES[ns.dtype][0]))
    bandwidth = read_bandwidth(ns.threads)
    wbytes = weight_bytes(model, ns.dtype)
    log(f"read bandwidth {bandwidth / 1e9:.1f} GB/s; {wbytes / 1e9:.2f} GB of weights per decode step")

    # Made one at a time, each dropped before the next, so that at most two copies of the
    # weights are in memory (the torch model's and the system's).
    factories = []
    if "dsc" in peers:
        def make_dsc():
            out = os.path.join(work, "dsc" if ns.dtype == "f32" else f"dsc-{ns.dtype}")
            if not os.path.exists(os.path.join(out, "model.dsc")):
                args = ["--dtype", ns.dtype]
                if ns.dtype in QUANTIZED:
                    args = ["--dtype", "f32", f"--quantize={QUANTIZED[ns.dtype][0]}",
                            f"--group-size={GROUP}", "--quantize-head"]
                subprocess.run([sys.executable, HF2DSC, ckpt, "-o", out, *args], check=True)
            so = os.path.join(out, "model.so")
            t0 = time.perf_counter()
            subprocess.run([ns.dscc, "build", os.path.join(out, "model.dsc"), "--entry=prefill",
                            "--entry=decode", "-o", so], check=True)
            log(f"dscc build: {time.perf_counter() - t0:.1f} s")
            return Dsc(ns.dscc, so, os.path.join(out, "model.safetensors"), ns.threads, work)
        factories.append(make_dsc)
    if "llamacpp" in peers:
        def make_llamacpp():
            path = os.path.join(work, f"model-{ns.dtype}.gguf")
            if not os.path.exists(path):
                write_gguf(model, path, ns.dtype)
            return LlamaCpp(path, ns.threads, longest)
        factories.append(make_llamacpp)
    if "eager" in peers:
        factories.append(lambda: Transformers(model, compiled=False, context=longest))
    if "compiled" in peers:  # last: it compiles the model's forward in place
        factories.append(lambda: Transformers(model, compiled=True, context=longest))

    results = {"threads": ns.threads, "layers": ns.layers, "dtype": ns.dtype,
               "read_bytes_per_s": bandwidth,
               "weight_bytes": wbytes, "steps": ns.steps, "prefill": {}, "decode": {}}
    vocab = model.config.vocab_size
    for make in factories:
        s = make()
        log(f"{s.name}: warm-up")
        s.decode(prompts(1, 16, vocab, 1), 2)
        for P in prefill_cases:
            r = s.prefill(prompts(1, P, vocab, P))
            results["prefill"].setdefault(str(P), {})[s.name] = r
            if r:
                log(f"{s.name} prefill {P}: {P / r['prefill_ms'] * 1e3:.1f} tokens/s, first token {r['ttft_ms']:.0f} ms")
        for B, C in decode_cases:
            r = s.decode(prompts(B, C, vocab, B * 7919 + C), ns.steps)
            results["decode"].setdefault(f"{B}x{C}", {})[s.name] = r
            if r:
                log(f"{s.name} decode {B}x{C}: {B * r['decode_steps'] / r['decode_ms'] * 1e3:.2f} tokens/s")
        del s
    # Measured again at the end, the better of the two kept: the checkpoint just written may
    # still be going to disk at the start.
    results["read_bytes_per_s"] = max(bandwidth, read_bandwidth(ns.threads))
    log(f"read bandwidth, the better of the start and the end: {results['read_bytes_per_s'] / 1e9:.1f} GB/s")
    print_tables(results)
    if ns.out:
        with open(ns.out, "w") as f:
            json.dump(results, f, indent=1)
    return 0


def print_tables(results: dict) -> None:
    names = ["dsc", "eager", "compiled", "llamacpp"]

    def cell(x, spec=".1f"):
        return format(x, spec) if x is not None else "-"

    print("\nprefill (batch 1): prompt tokens/s, time to first token ms")
    print("| prompt | " + " | ".join(f"{n} tok/s | {n} TTFT" for n in names) + " | dsc/eager | dsc/compiled | dsc/llamacpp |")
    print("|---" * (2 * len(names) + 4) + "|")
    for P, row in results["prefill"].items():
        rate = {n: (int(P) / row[n]["prefill_ms"] * 1e3 if row.get(n) else None) for n in names}
        ttft = {n: (row[n]["ttft_ms"] if row.get(n) else None) for n in names}
        ratio = {n: (rate["dsc"] / rate[n] if rate["dsc"] and rate[n] else None) for n in names}
        print(f"| {P} | " + " | ".join(f"{cell(rate[n])} | {cell(ttft[n])}" for n in names) +
              f" | {cell(ratio['eager'], '.2f')} | {cell(ratio['compiled'], '.2f')} | {cell(ratio['llamacpp'], '.2f')} |")
    print("\ndecode: tokens/s (batch x steps over the decode time); floor = batch x read bandwidth / weight bytes")
    print("| batch x context | " + " | ".join(names) + " | floor | dsc/floor | dsc/eager | dsc/compiled | dsc/llamacpp |")
    print("|---" * (len(names) + 6) + "|")
    for case, row in results["decode"].items():
        B = int(case.split("x")[0])
        rate = {n: (B * row[n]["decode_steps"] / row[n]["decode_ms"] * 1e3 if row.get(n) else None) for n in names}
        floor = B * results["read_bytes_per_s"] / results["weight_bytes"]
        ratio = {n: (rate["dsc"] / rate[n] if rate["dsc"] and rate[n] else None) for n in names}
        print(f"| {case} | " + " | ".join(cell(rate[n]) for n in names) +
              f" | {floor:.2f} | {cell(rate['dsc'] / floor if rate['dsc'] else None, '.2f')} | "
              f"{cell(ratio['eager'], '.2f')} | {cell(ratio['compiled'], '.2f')} | {cell(ratio['llamacpp'], '.2f')} |")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
