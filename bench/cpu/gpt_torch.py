#!/usr/bin/env python3
"""examples/gpt_decode.dsc in PyTorch (fp32): one GPT-2 block in decode mode, one new token per
sequence against a KV cache of T earlier tokens. The baseline of bench/cpu/decode.py (CPU) and
bench/gpu/decode.py (GPU).

    h = layer_norm(x, g1, e1)                       # eps 1e-5
    q, k, v = split(h @ w_qkv + b_qkv, 3, axis=-1)
    keys, values = past_k ++ k, past_v ++ v         # along T: [B, 12, T + 1, 64]
    a = softmax(q @ keys^T * 0.125) @ values
    h = x + a @ w_o + b_o
    y = h + gelu(layer_norm(h, g2, e2) @ w1 + b1) @ w2 + b2    # erf GELU
    return (y, keys, values)

The projections are F.linear with W^T made contiguous once, untimed, as nn.Linear stores it.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

import bert_torch  # random_weight

HIDDEN, HEADS, HEAD_DIM, FFN = 768, 12, 64, 3072

# Parameter order and shapes of examples/gpt_decode.dsc's `decode`.
PARAMS = [
    ("x", lambda B, T: (B, HIDDEN)),
    ("past_k", lambda B, T: (B, HEADS, T, HEAD_DIM)),
    ("past_v", lambda B, T: (B, HEADS, T, HEAD_DIM)),
    ("g1", lambda B, T: (HIDDEN,)),
    ("e1", lambda B, T: (HIDDEN,)),
    ("w_qkv", lambda B, T: (HIDDEN, 3 * HIDDEN)),
    ("b_qkv", lambda B, T: (3 * HIDDEN,)),
    ("w_o", lambda B, T: (HIDDEN, HIDDEN)),
    ("b_o", lambda B, T: (HIDDEN,)),
    ("g2", lambda B, T: (HIDDEN,)),
    ("e2", lambda B, T: (HIDDEN,)),
    ("w1", lambda B, T: (HIDDEN, FFN)),
    ("b1", lambda B, T: (FFN,)),
    ("w2", lambda B, T: (FFN, HIDDEN)),
    ("b2", lambda B, T: (HIDDEN,)),
]
ACTIVATIONS = ("x", "past_k", "past_v")


def random_params(B: int, T: int, seed: int = 0) -> dict[str, np.ndarray]:
    """float32 arrays: x and the caches ~ N(0, 1), the weights by bert_torch.random_weight."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape_of in PARAMS:
        shape = shape_of(B, T)
        a = rng.standard_normal(shape) if name in ACTIVATIONS else bert_torch.random_weight(rng, name, shape)
        out[name] = np.ascontiguousarray(a, dtype=np.float32)
    return out


class GptDecode:
    """The block's weights on `device`, prepared once (untimed); call it with (x, past_k,
    past_v) on the same device."""

    def __init__(self, params: dict[str, np.ndarray], device: str = "cpu"):
        self.w = {k: torch.from_numpy(v).to(device) for k, v in params.items() if k not in ACTIVATIONS}
        self.wt = {k: self.w[k].t().contiguous() for k in ("w_qkv", "w_o", "w1", "w2")}

    def __call__(self, x: torch.Tensor, past_k: torch.Tensor, past_v: torch.Tensor):
        w, wt = self.w, self.wt
        B = x.shape[0]
        h = F.layer_norm(x, (HIDDEN,), w["g1"], w["e1"], 1e-5)
        q, k, v = F.linear(h, wt["w_qkv"], w["b_qkv"]).split(HIDDEN, dim=-1)
        keys = torch.cat([past_k, k.reshape(B, HEADS, 1, HEAD_DIM)], dim=2)
        values = torch.cat([past_v, v.reshape(B, HEADS, 1, HEAD_DIM)], dim=2)
        scores = torch.matmul(q.reshape(B, HEADS, 1, HEAD_DIM), keys.transpose(2, 3)) * 0.125
        a = torch.matmul(F.softmax(scores, dim=-1), values).reshape(B, HIDDEN)
        hh = x + F.linear(a, wt["w_o"], w["b_o"])
        up = F.gelu(F.linear(F.layer_norm(hh, (HIDDEN,), w["g2"], w["e2"], 1e-5), wt["w1"], w["b1"]))
        return hh + F.linear(up, wt["w2"], w["b2"]), keys, values
