"""The model zoo's models, in plain PyTorch (no torchvision, no transformers), at two sizes.

Each model is built at random weights from a fixed seed (`build(name, size)`), and described
by a `ZooModel`: its inputs (names, dims, how to draw random values at given symbol values),
its dynamic dims (one `torch.export.Dim` per symbol, and the same names as ONNX `dynamic_axes`),
and the shapes the zoo runs it at. build_zoo.py exports, imports, compiles and compares them;
bench/models/run.py times them.

  bert     a BERT-base encoder layer: fused QKV, additive padding mask from an int mask
           (optional: `bert_nomask` has none), post-norm LayerNorm, erf GELU;
  gpt2     a GPT-2 block against a KV cache: past length P is a symbol, T new tokens (1 in
           decode), the causal mask sliced from a bool buffer at [P, P + T), tanh GELU,
           pre-norm, returns the output and the grown caches;
  resnet18 ResNet-18 written out (BasicBlock, BatchNorm in inference, max pool, global
           average pool), dynamic batch and image size;
  llama    a LLaMA-style block against a KV cache: RMSNorm, rotary embedding from precomputed
           cos/sin buffers sliced at [P, P + T), grouped-query attention (HF's repeat_kv),
           causal mask from position comparisons + masked_fill, SwiGLU; returns the output
           and the grown caches (before the head repeat);
  llama_prefill  the same block over a whole prompt with no cache: the tables sliced to
           [0, S), the causal mask from triu(ones(S, S), 1) (an ONNX Trilu).

No sin or cos is computed in a forward: the rotary tables are buffers computed at
construction (in float64), as HF's rotary embedding caches them.

Sizes: "full" is the real width (BERT-base 768/12/3072, GPT-2 small 768/12, ResNet-18 64..512,
a TinyLlama-sized block 2048/32 heads/4 KV heads/5632); "small" keeps every structural feature
at a width that runs in seconds (hidden 64), for the ctest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 20270112


def randomize_norms(m: nn.Module) -> nn.Module:
    """LayerNorm weights and biases as if trained (not 1 and 0): the exporters merge equal
    initializers, and a swapped norm weight would go unnoticed."""
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.LayerNorm):
                mod.weight.copy_(1.0 + 0.1 * torch.randn_like(mod.weight))
                mod.bias.copy_(0.1 * torch.randn_like(mod.bias))
    return m


# ---------------------------------------------------------------------------------------------
# BERT
# ---------------------------------------------------------------------------------------------

class BertLayer(nn.Module):
    """One BERT encoder layer (HF's BertLayer in eval): fused QKV projection, scaled dot-product
    attention with an additive padding mask `(1 - mask) * -10000`, post-norm, erf GELU.
    hf_ops: the attention's tail as HF writes it, a dropout on the probabilities (identity in
    eval) and `.contiguous().view` to merge the heads, which torch.export keeps as
    aten.dropout and aten.contiguous nodes (tests/importers/check_torch_import.py)."""

    def __init__(self, d=768, heads=12, ff=3072, use_mask=True, hf_ops=False):
        super().__init__()
        self.d, self.heads, self.use_mask, self.hf_ops = d, heads, use_mask, hf_ops
        self.qkv = nn.Linear(d, 3 * d)
        self.attn_out = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d, eps=1e-12)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)
        self.drop = nn.Dropout(0.1) if hf_ops else nn.Identity()
        randomize_norms(self)

    def forward(self, x, mask=None):
        B, S, _ = x.shape
        hd = self.d // self.heads
        q, k, v = self.qkv(x).split(self.d, dim=-1)
        q = q.view(B, S, self.heads, hd).transpose(1, 2)
        k = k.view(B, S, self.heads, hd).transpose(1, 2)
        v = v.view(B, S, self.heads, hd).transpose(1, 2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(hd)
        if mask is not None:
            scores = scores + (1.0 - mask[:, None, None, :].to(x.dtype)) * -10000.0
        ctx = (self.drop(torch.softmax(scores, dim=-1)) @ v).transpose(1, 2)
        ctx = ctx.contiguous().view(B, S, self.d) if self.hf_ops else ctx.reshape(B, S, self.d)
        h = self.ln1(x + self.attn_out(ctx))
        return self.ln2(h + self.ff2(F.gelu(self.ff1(h))))


# ---------------------------------------------------------------------------------------------
# GPT-2
# ---------------------------------------------------------------------------------------------

class GPT2Block(nn.Module):
    """A GPT-2 block (HF's GPT2Block in eval) over T new tokens against a cache of P earlier ones.
    The causal mask is HF's `bias` buffer (a lower-triangular bool matrix of max_pos rows) sliced
    at rows [P, P + T) and columns [0, P + T); masked scores are set to the dtype's minimum, as HF
    does. Returns the block's output and the grown key and value caches. sdpa: attention by
    F.scaled_dot_product_attention with the bool mask instead (tests/importers)."""

    def __init__(self, d=768, heads=12, max_pos=1024, sdpa=False):
        super().__init__()
        self.d, self.heads, self.sdpa = d, heads, sdpa
        self.ln_1 = nn.LayerNorm(d, eps=1e-5)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d, eps=1e-5)
        self.c_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)
        tril = torch.tril(torch.ones(max_pos, max_pos, dtype=torch.bool))
        self.register_buffer("bias", tril.view(1, 1, max_pos, max_pos), persistent=False)
        randomize_norms(self)

    def forward(self, x, past_k, past_v):
        B, T, _ = x.shape
        P = past_k.shape[2]
        hd = self.d // self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(self.d, dim=2)
        q = q.view(B, T, self.heads, hd).permute(0, 2, 1, 3)
        k = k.view(B, T, self.heads, hd).permute(0, 2, 1, 3)
        v = v.view(B, T, self.heads, hd).permute(0, 2, 1, 3)
        keys = torch.cat([past_k, k], dim=-2)
        values = torch.cat([past_v, v], dim=-2)
        if self.sdpa:
            causal = self.bias[:, :, P:P + T, :P + T]
            a = F.scaled_dot_product_attention(q, keys, values, attn_mask=causal)
        else:
            scores = q @ keys.transpose(-1, -2) / math.sqrt(hd)
            causal = self.bias[:, :, P:P + T, :P + T]
            scores = torch.where(causal, scores, torch.finfo(scores.dtype).min)
            a = torch.softmax(scores, dim=-1) @ values
        a = a.permute(0, 2, 1, 3).reshape(B, T, self.d)
        x = x + self.c_proj(a)
        y = x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))
        return y, keys, values


# ---------------------------------------------------------------------------------------------
# ResNet-18
# ---------------------------------------------------------------------------------------------

class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return torch.relu(h + (x if self.downsample is None else self.downsample(x)))


class ResNet18(nn.Module):
    """torchvision's resnet18 layout, written out: 7x7/2 stem, BatchNorm, ReLU, 3x3/2 max pool,
    four stages of two BasicBlocks (widths w, 2w, 4w, 8w; stride 2 from the second stage), global
    average pool, a classifier. BatchNorm statistics are random (as if trained)."""

    def __init__(self, width=64, classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        stages, cin = [], width
        for i, cout in enumerate((width, 2 * width, 4 * width, 8 * width)):
            stride = 1 if i == 0 else 2
            stages.append(nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
            cin = cout
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.normal_(0.0, 0.1)
                    m.running_mean.normal_(0.0, 0.1)
                    m.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        x = self.maxpool(torch.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


# ---------------------------------------------------------------------------------------------
# LLaMA
# ---------------------------------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(d))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def repeat_kv(x, n_rep: int):
    """HF's repeat_kv: [B, KVH, L, hd] to [B, KVH * n_rep, L, hd]."""
    if n_rep == 1:
        return x
    B, kvh, L, hd = x.shape
    return x[:, :, None, :, :].expand(B, kvh, n_rep, L, hd).reshape(B, kvh * n_rep, L, hd)


class LlamaBlock(nn.Module):
    """A LLaMA decoder layer (HF's LlamaDecoderLayer in eval) over T new tokens against a cache of
    P earlier ones: RMSNorm, q/k/v projections without bias, rotary embedding with the cos/sin
    tables precomputed as buffers of max_pos rows and sliced at [P, P + T), grouped-query
    attention, a causal mask from comparing positions (key j is visible to query P + i when
    j <= P + i) applied with masked_fill(-inf), softmax in f32, SwiGLU feed-forward. Returns the
    output and the grown key and value caches (KVH heads, keys after the rotation).
    norm_eps is the RMSNorms' epsilon (TinyLlama's 1e-5; LLaMA-2's 1e-6)."""

    def __init__(self, d=2048, heads=32, kv_heads=4, ff=5632, max_pos=2048, theta=10000.0,
                 norm_eps=1e-5):
        super().__init__()
        self.d, self.heads, self.kv_heads = d, heads, kv_heads
        hd = d // heads
        self.input_layernorm = RMSNorm(d, norm_eps)
        self.post_attention_layernorm = RMSNorm(d, norm_eps)
        self.q_proj = nn.Linear(d, heads * hd, bias=False)
        self.k_proj = nn.Linear(d, kv_heads * hd, bias=False)
        self.v_proj = nn.Linear(d, kv_heads * hd, bias=False)
        self.o_proj = nn.Linear(heads * hd, d, bias=False)
        self.gate_proj = nn.Linear(d, ff, bias=False)
        self.up_proj = nn.Linear(d, ff, bias=False)
        self.down_proj = nn.Linear(ff, d, bias=False)
        inv_freq = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
        freqs = torch.outer(torch.arange(max_pos, dtype=torch.float64), inv_freq)
        emb = torch.cat([freqs, freqs], dim=-1)
        self.register_buffer("cos_cached", emb.cos().float(), persistent=False)
        self.register_buffer("sin_cached", emb.sin().float(), persistent=False)

    def forward(self, x, past_k=None, past_v=None):
        if past_k is None:
            return self.prefill(x)
        B, T, _ = x.shape
        P = past_k.shape[2]
        hd = self.d // self.heads
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(B, T, self.heads, hd).transpose(1, 2)
        k = self.k_proj(h).view(B, T, self.kv_heads, hd).transpose(1, 2)
        v = self.v_proj(h).view(B, T, self.kv_heads, hd).transpose(1, 2)
        cos = self.cos_cached[P:P + T][None, None]
        sin = self.sin_cached[P:P + T][None, None]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        keys = torch.cat([past_k, k], dim=2)
        values = torch.cat([past_v, v], dim=2)
        n_rep = self.heads // self.kv_heads
        scores = q @ repeat_kv(keys, n_rep).transpose(2, 3) / math.sqrt(hd)
        pos_q = torch.arange(P, P + T, device=x.device)
        pos_k = torch.arange(P + T, device=x.device)
        future = pos_k[None, :] > pos_q[:, None]
        scores = scores.masked_fill(future, float("-inf"))
        probs = F.softmax(scores.float(), dim=-1).type_as(q)
        attn = (probs @ repeat_kv(values, n_rep)).transpose(1, 2).reshape(B, T, self.d)
        x = x + self.o_proj(attn)
        g = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(g)) * self.up_proj(g)), keys, values

    def prefill(self, x):
        """The block over a whole prompt, with no cache, as HF writes it: the tables sliced to
        [0, S), the causal mask from `triu` of ones (an ONNX Trilu), masked_fill(-inf)."""
        B, S, _ = x.shape
        hd = self.d // self.heads
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(B, S, self.heads, hd).transpose(1, 2)
        k = self.k_proj(h).view(B, S, self.kv_heads, hd).transpose(1, 2)
        v = self.v_proj(h).view(B, S, self.kv_heads, hd).transpose(1, 2)
        cos = self.cos_cached[:S][None, None]
        sin = self.sin_cached[:S][None, None]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        n_rep = self.heads // self.kv_heads
        scores = q @ repeat_kv(k, n_rep).transpose(2, 3) / math.sqrt(hd)
        mask = torch.triu(torch.ones(S, S, dtype=torch.bool, device=x.device), diagonal=1)
        scores = scores.masked_fill(mask, float("-inf"))
        probs = F.softmax(scores.float(), dim=-1).type_as(q)
        attn = (probs @ repeat_kv(v, n_rep)).transpose(1, 2).reshape(B, S, self.d)
        x = x + self.o_proj(attn)
        g = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(g)) * self.up_proj(g))


# ---------------------------------------------------------------------------------------------
# The zoo's description of each model
# ---------------------------------------------------------------------------------------------

Gen = Callable[[torch.Generator, dict], torch.Tensor]


@dataclass
class Input:
    name: str
    dims: list  # ints and symbol names
    gen: str = "normal"  # "normal" or "mask" (an int64 padding mask of [B, S])


@dataclass
class ZooModel:
    name: str
    make: Callable[[], nn.Module]
    inputs: list[Input]
    ranges: dict[str, tuple[int, int]]  # symbol -> (min, max) for torch.export
    example: dict[str, int]  # the symbol values of the export's example inputs
    shapes: list[dict[str, int]]  # where the zoo runs and compares it
    bench_shapes: list[dict[str, int]] = field(default_factory=list)
    outputs: list[str] = field(default_factory=lambda: ["y"])
    onnx_min: dict[str, int] = field(default_factory=dict)  # symbols ONNX cannot take at 0

    def symbols(self) -> list[str]:
        out = []
        for inp in self.inputs:
            for d in inp.dims:
                if isinstance(d, str) and d not in out:
                    out.append(d)
        return out

    def fits(self, sym: dict[str, int]) -> bool:
        """Whether the symbol values are within the export's ranges (the caches' P + T stays
        within the position tables, whose half each range is)."""
        return all(lo <= sym[s] <= hi for s, (lo, hi) in self.ranges.items())

    def dynamic_shapes(self, hints: bool = False) -> dict:
        """torch.export's spec: one Dim object per symbol, shared by every input axis it names.
        With `hints`, a `Dim.DYNAMIC` hint per axis at the same bounds instead, under which
        torch keeps a guard that narrows the range as a run-time check rather than refusing
        the export (and raises a minimum of 1 to 2, its 0/1 specialization)."""
        if hints:
            dims = {s: torch.export.Dim.DYNAMIC(min=lo, max=hi)
                    for s, (lo, hi) in self.ranges.items()}
        else:
            dims = {s: torch.export.Dim(s, min=lo, max=hi) for s, (lo, hi) in self.ranges.items()}
        return {inp.name: {i: dims[d] for i, d in enumerate(inp.dims) if isinstance(d, str)}
                for inp in self.inputs}

    def dynamic_axes(self) -> dict:
        """torch.onnx.export's dynamic_axes: the same names, which become ONNX dim_params."""
        axes = {inp.name: {i: d for i, d in enumerate(inp.dims) if isinstance(d, str)}
                for inp in self.inputs}
        return axes

    def torch_dim_names(self) -> dict[str, str]:
        """torch2dsc's --dim arguments: `x.0=B` for the first axis of each symbol."""
        out = {}
        for inp in self.inputs:
            for i, d in enumerate(inp.dims):
                if isinstance(d, str) and d not in out.values():
                    out[f"{inp.name}.{i}"] = d
        return out

    def make_inputs(self, sym: dict[str, int], seed: int) -> dict[str, torch.Tensor]:
        g = torch.Generator().manual_seed(seed)
        out = {}
        for inp in self.inputs:
            shape = [sym[d] if isinstance(d, str) else d for d in inp.dims]
            if inp.gen == "mask":
                b, s = shape
                keep = torch.randint(1, s + 1, (b,), generator=g)
                out[inp.name] = (torch.arange(s)[None, :] < keep[:, None]).to(torch.int64)
            else:
                out[inp.name] = torch.randn(*shape, generator=g)
        return out


SIZES = ("small", "full")

CONFIGS = {
    "bert": {"small": dict(d=64, heads=4, ff=128), "full": dict(d=768, heads=12, ff=3072)},
    "gpt2": {"small": dict(d=64, heads=4, max_pos=128), "full": dict(d=768, heads=12,
                                                                       max_pos=1024)},
    "resnet18": {"small": dict(width=8, classes=10), "full": dict(width=64, classes=1000)},
    "llama": {"small": dict(d=64, heads=8, kv_heads=2, ff=172, max_pos=128),
              "full": dict(d=2048, heads=32, kv_heads=4, ff=5632, max_pos=2048)},
}

NAMES = ("bert", "bert_nomask", "gpt2", "resnet18", "llama", "llama_prefill")


def _cached_block(name: str, make: Callable[[], nn.Module], cfg: dict, kv_heads: int,
                  bench_batch: int) -> ZooModel:
    """A block over T new tokens against a cache of P earlier ones (GPT-2, LLaMA): inputs x
    [B, T, d] and past_k, past_v [B, kv_heads, P, hd]; outputs y and the grown caches. T and P
    range to half the position tables each, so P + T stays within them."""
    d, mx = cfg["d"], cfg["max_pos"]
    hd = d // cfg["heads"]
    return ZooModel(
        name, make,
        [Input("x", ["B", "T", d]), Input("past_k", ["B", kv_heads, "P", hd]),
         Input("past_v", ["B", kv_heads, "P", hd])],
        ranges={"B": (1, 64), "T": (1, mx // 2), "P": (0, mx // 2)},
        example={"B": 2, "T": 3, "P": 5},
        shapes=[{"B": 1, "T": 1, "P": 1}, {"B": 2, "T": 1, "P": 7},
                {"B": 3, "T": 5, "P": 13}, {"B": 1, "T": 13, "P": 2},
                {"B": 2, "T": 1, "P": 31}, {"B": 1, "T": 7, "P": 0}],
        bench_shapes=[{"B": 1, "T": 1, "P": 128}, {"B": 1, "T": 1, "P": 511},
                      {"B": bench_batch, "T": 1, "P": 128}, {"B": 1, "T": 32, "P": 96}],
        outputs=["y", "keys", "values"], onnx_min={"P": 1})


def describe(name: str, size: str) -> ZooModel:
    """The ZooModel of `name` at `size` ("small" or "full")."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, got {size!r}")
    full = size == "full"
    base = name.replace("_nomask", "").replace("_prefill", "")
    cfg = CONFIGS[base][size]
    if base == "bert":
        d = cfg["d"]
        use_mask = name == "bert"
        inputs = [Input("x", ["B", "S", d])] + ([Input("mask", ["B", "S"], "mask")]
                                                if use_mask else [])
        return ZooModel(
            name, lambda: BertLayer(**cfg, use_mask=use_mask), inputs,
            ranges={"B": (1, 64), "S": (1, 512)}, example={"B": 2, "S": 8},
            shapes=[{"B": 1, "S": 1}, {"B": 2, "S": 7}, {"B": 3, "S": 13}, {"B": 1, "S": 31},
                    {"B": 2, "S": 64 if full else 2}],
            bench_shapes=[{"B": 1, "S": 32}, {"B": 1, "S": 128}, {"B": 4, "S": 64},
                          {"B": 8, "S": 128}, {"B": 1, "S": 384}])
    if base == "gpt2":
        return _cached_block(name, lambda: GPT2Block(**cfg), cfg, cfg["heads"], bench_batch=8)
    if base == "resnet18":
        # torch.export guards that no stage's output is 1 pixel wide (the residual adds would
        # broadcast), so an image is at least 33 pixels: 32 after the five halvings is 1.
        return ZooModel(
            name, lambda: ResNet18(**cfg),
            [Input("x", ["N", 3, "H", "W"])],
            ranges={"N": (1, 64), "H": (33, 224), "W": (33, 224)},
            example={"N": 2, "H": 64, "W": 48},
            shapes=[{"N": 1, "H": 33, "W": 37}, {"N": 2, "H": 41, "W": 64},
                    {"N": 1, "H": 61, "W": 53}, {"N": 3, "H": 47, "W": 33},
                    {"N": 1, "H": 97, "W": 71}],
            bench_shapes=[{"N": 1, "H": 224, "W": 224}, {"N": 1, "H": 97, "W": 131},
                          {"N": 4, "H": 64, "W": 64}])
    if name == "llama_prefill":
        d, mx = cfg["d"], cfg["max_pos"]
        return ZooModel(
            name, lambda: LlamaBlock(**cfg), [Input("x", ["B", "S", d])],
            ranges={"B": (1, 64), "S": (1, mx)}, example={"B": 2, "S": 8},
            shapes=[{"B": 1, "S": 1}, {"B": 2, "S": 7}, {"B": 3, "S": 13}, {"B": 1, "S": 31},
                    {"B": 2, "S": 2}],
            bench_shapes=[{"B": 1, "S": 32}, {"B": 1, "S": 128}, {"B": 4, "S": 64}])
    if base == "llama":
        return _cached_block(name, lambda: LlamaBlock(**cfg), cfg, cfg["kv_heads"],
                             bench_batch=4)
    raise KeyError(f"no model {name!r} in the zoo (it has {', '.join(NAMES)})")


def build(name: str, size: str) -> tuple[nn.Module, ZooModel]:
    """The model at the zoo's fixed seed, in eval mode, and its description."""
    z = describe(name, size)
    torch.manual_seed(SEED)
    return z.make().eval(), z
