"""hf2dsc's template for the LLaMA family: LlamaForCausalLM, Qwen2ForCausalLM and
MistralForCausalLM (model_type "llama", "qwen2", "mistral"), which differ only in their
projections' biases and Mistral's and Qwen2's sliding window.

Each layer is pre-norm: RMSNorm, attention with rotary position embeddings (rotate_half form)
and grouped-query attention (num_key_value_heads <= num_attention_heads), RMSNorm, then the
gated MLP down(act(gate(x)) * up(x)). The rotary frequencies are a derived weight,
`rotary_inv_freq`, computed by hf2dsc exactly as transformers does (torch, float32:
1 / theta ** (arange(0, D, 2) / D)), and stays f32 at every dtype: the angles, cos and sin are
computed in f32 and cast to the model's dtype, as transformers does. Only the default RoPE is
implemented: any other
rope_type (linear, dynamic, yarn, longrope, llama3) or a partial rotary factor is refused.

A sliding window (Mistral's `sliding_window`, Qwen2's sliding layers) is not implemented as a
mask; instead the context is bounded by it (C <= sliding_window), where the window never
excludes a key: transformers keeps key j for query i when i - j < sliding_window, and in a
context of C <= sliding_window tokens i - j < C always holds.
"""

from __future__ import annotations

import importlib.util

from .hf_attention import attend_fn, heads_expr
from .hf_config import MAX_SIZE, Config
from .hf_decoder import LAYER_WHERE, Decoder, cache_lines, layer_params, layer_result, write
from .hf_text import call, comment, flt, fn_header, fn_open, norm, norm_functions
from .hf_weights import WeightTable

# model_type -> which projections have biases, beyond the config's attention_bias/mlp_bias.
QKV_BIAS = {"qwen2": True}


def rope_theta(cfg: Config) -> float:
    """RoPE's base, from rope_parameters (transformers 5) or the older rope_theta and
    rope_scaling; another RoPE than the default is a problem."""
    params = cfg.data.get("rope_parameters")
    if isinstance(params, dict):
        kind = params.get("rope_type", params.get("type", "default"))
        if kind != "default":
            cfg.problem(f"config.json's rope_parameters has rope_type {kind!r}: hf2dsc "
                        f"implements the default RoPE only")
        factor = params.get("partial_rotary_factor", 1.0)
        if factor != 1.0:
            cfg.problem(f"config.json's rope_parameters has partial_rotary_factor {factor!r}: "
                        f"hf2dsc rotates every dim of a head")
        theta = params.get("rope_theta")
        if isinstance(theta, (int, float)) and not isinstance(theta, bool) and theta > 0:
            return float(theta)
        cfg.problem(f"config.json's rope_parameters has rope_theta {theta!r}: expected a "
                    f"positive number")
        return 10000.0
    scaling = cfg.data.get("rope_scaling")
    if scaling is not None:
        kind = scaling.get("rope_type", scaling.get("type")) if isinstance(scaling, dict) \
            else scaling
        if kind != "default":
            cfg.problem(f"config.json's rope_scaling is {scaling!r}: hf2dsc implements the "
                        f"default RoPE only")
    cfg.refuse_if("partial_rotary_factor", 1.0, lambda v: v != 1.0,
                  "hf2dsc rotates every dim of a head")
    return cfg.float("rope_theta", 10000.0)


def inv_freq(theta: float, head_dim: int):
    """RoPE's frequencies as transformers' compute_default_rope_parameters makes them (with
    torch, so that every bit is the same)."""
    import torch
    with torch.no_grad():
        f = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float) / head_dim))
    return f.to(torch.float32).numpy()


def context_bound(cfg: Config, model_type: str, max_pos: int) -> tuple[int, str]:
    """C's bound and why: max_position_embeddings, or a smaller sliding window."""
    window = None
    if model_type == "mistral":
        window = cfg.data.get("sliding_window")
    elif model_type == "qwen2":
        types = cfg.data.get("layer_types")
        if isinstance(types, list):
            other = sorted({t for t in types if t not in ("full_attention",
                                                          "sliding_attention")}, key=str)
            if other:
                cfg.problem(f"config.json's layer_types has {other}: hf2dsc implements "
                            f"full_attention and sliding_attention layers")
            if "sliding_attention" in types:
                window = cfg.data.get("sliding_window")
        elif cfg.data.get("use_sliding_window"):
            window = cfg.data.get("sliding_window")
    if window is None:
        return max_pos, "max_position_embeddings"
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        cfg.problem(f"config.json's sliding_window is {window!r}: expected an integer >= 1 "
                    f"or null")
        return max_pos, "max_position_embeddings"
    if window >= max_pos:
        return max_pos, (f"max_position_embeddings (the sliding window of {window} never "
                         f"excludes a key there)")
    return window, (f"the sliding window (a context of at most sliding_window = {window} "
                    f"tokens, where the window excludes no key; max_position_embeddings is "
                    f"{max_pos})")


def build(cfg: Config, table: WeightTable, arch: str, header: str) -> tuple[str, list[str]]:
    """The .dsc text and its entry names; ("", []) when the config has problems."""
    model_type = cfg.data["model_type"]
    hid = cfg.int("hidden_size")
    nh = cfg.int("num_attention_heads")
    kv = cfg.int("num_key_value_heads", nh)
    hd = cfg.data.get("head_dim") or (hid // nh if hid % nh == 0 else 0)
    if isinstance(hd, bool) or not isinstance(hd, int) or hd < 2 or hd % 2 or hd > MAX_SIZE:
        cfg.problem(f"the head dim is {hd!r} (head_dim, else hidden_size / "
                    f"num_attention_heads): expected an even integer from 2 to {MAX_SIZE}")
        hd = 2
    inter = cfg.int("intermediate_size")
    layers = cfg.int("num_hidden_layers")
    vocab = cfg.int("vocab_size")
    max_pos = cfg.int("max_position_embeddings")
    eps = flt(cfg.float("rms_norm_eps", 1e-6))
    act = cfg.activation("hidden_act", "silu")
    tied = cfg.bool("tie_word_embeddings", False)
    theta = rope_theta(cfg)
    dt = table.dtype
    rms = norm("rms_norm", dt)
    cfg.divides(nh, "num_attention_heads", kv, "num_key_value_heads")
    attn_bias = model_type == "llama" and cfg.bool("attention_bias", False)
    mlp_bias = model_type == "llama" and cfg.bool("mlp_bias", False)
    qkv_bias = attn_bias or QKV_BIAS.get(model_type, False)
    limit, why = context_bound(cfg, model_type, max_pos)
    if importlib.util.find_spec("torch") is None:
        cfg.problem("RoPE's frequencies are computed with torch, as transformers computes "
                    "them, and torch is not installed (tools/scripts/install_python_deps.sh)")
    if cfg.problems:
        return "", []

    embed = table.tensor("model.embed_tokens.weight", (vocab, hid))
    freq = table.derived("rotary_inv_freq", inv_freq(theta, hd),
                         f"1 / {theta} ** (arange(0, {hd}, 2) / {hd})")
    # (role in the layer function, its type, the checkpoint tensor, how it is stored)
    roles = [("input_norm", (hid,), "input_layernorm.weight", "tensor")]
    for proj, dout, bias in (("q_proj", nh * hd, qkv_bias), ("k_proj", kv * hd, qkv_bias),
                             ("v_proj", kv * hd, qkv_bias), ("o_proj", hid, attn_bias)):
        din = hid if proj != "o_proj" else nh * hd
        roles.append((f"{proj}_w", (din, dout), f"self_attn.{proj}.weight", "linear"))
        if bias:
            roles.append((f"{proj}_b", (dout,), f"self_attn.{proj}.bias", "tensor"))
    roles.append(("post_norm", (hid,), "post_attention_layernorm.weight", "tensor"))
    for proj, din, dout in (("gate_proj", hid, inter), ("up_proj", hid, inter),
                            ("down_proj", inter, hid)):
        roles.append((f"{proj}_w", (din, dout), f"mlp.{proj}.weight", "linear"))
        if mlp_bias:
            roles.append((f"{proj}_b", (dout,), f"mlp.{proj}.bias", "tensor"))
    layer_weights = []
    linears = {}   # role -> its Linear (the same types in every layer)
    for i in range(layers):
        names = []
        for role, shape, suffix, how in roles:
            hf = f"model.layers.{i}.{suffix}"
            if how == "linear":
                linears[role] = table.linear(hf, shape[0], shape[1])
                names += linears[role].names
            else:
                names.append(table.tensor(hf, shape))
        layer_weights.append(names)
    final_norm = table.tensor("model.norm.weight", (hid,))
    # A tied checkpoint may also hold lm_head.weight (an older save): the embedding is used
    # (or, with --quantize-head, a quantized copy of it).
    head = (table.tied_head("model.embed_tokens.weight", vocab, hid) or embed) if tied \
        else table.linear("lm_head.weight", hid, vocab, head=True)

    have = {r[0] for r in roles}

    def proj(x: str, p: str) -> str:
        return linears[f"{p}_w"].product(x, f"{p}_w") + (f" + {p}_b" if f"{p}_b" in have
                                                         else "")

    def factor(e: str) -> str:
        """e as an operand of `*`: parenthesized when it is a sum (a projection's bias)."""
        return f"({e})" if " + " in e else e

    group = f", {nh // kv} query heads per key/value head" if kv < nh else ""
    dec_kwargs = dict(hidden=hid, kv_heads=kv, head_dim=hd, vocab=vocab, dtype=dt)
    sizes = (f"{layers} layers, hidden {hid}, {nh} attention heads and {kv} key/value heads of "
             f"{hd}, MLP {inter}, vocabulary {vocab}{', tied embeddings' if tied else ''}.")
    half = hd // 2
    tables = "(cos(angles), sin(angles))" if dt == "f32" else \
        f"(cast(cos(angles), dtype=\"{dt}\"), cast(sin(angles), dtype=\"{dt}\"))"
    rotary = (comment(f"cos and sin of each position's rotary angles, [B, S, {hd}]: the "
                      f"position times the {half} frequencies, which repeat (transformers' "
                      f"cat((freqs, freqs)))" + ("" if dt == "f32" else
                                                  f"; computed in f32, then cast to {dt}")
                      + ".") + "\n" +
              fn_open("rotary", ["pos: i64[B, S]", f"inv_freq: f32[{half}]"],
                      f"({dt}[B, S, {hd}], {dt}[B, S, {hd}])") + "\n"
              f"  let freqs = reshape(cast(pos, dtype=\"f32\"), [B, S, 1]) * inv_freq\n"
              f"  let angles = concat([freqs, freqs], axis=-1)\n"
              f"  return {tables}\n}}")
    rotate = (f"# Heads [B, N, S, {hd}] rotated by their positions' angles: x * cos + "
              f"rotate_half(x) * sin, where\n# rotate_half(x) is (-x2, x1) of x's halves "
              f"(x1, x2).\n"
              + fn_open("rotate", [f"x: {dt}[B, N, S, {hd}]", f"cos_t: {dt}[B, S, {hd}]",
                                   f"sin_t: {dt}[B, S, {hd}]"], f"{dt}[B, N, S, {hd}]") + "\n"
              f"  let x1, x2 = split(x, 2, axis=-1)\n"
              f"  let rotated = concat([-x2, x1], axis=-1)\n"
              f"  return x * reshape(cos_t, [B, 1, S, {hd}]) + rotated * "
              f"reshape(sin_t, [B, 1, S, {hd}])\n}}")
    dec = Decoder(arch, sizes, max_context=limit, context_why=why, functions=[],
                  embed=f"take({embed}, ids, axis=0)", layer_weights=layer_weights,
                  norm_params=[f"norm: {dt}[{hid}]"], norm_args=[final_norm],
                  norm=f"{rms}(last, norm, eps={eps})", head=head,
                  head_tied=isinstance(head, str),
                  position_lines=[f"let cos_t, sin_t = rotary(pos, {freq})"],
                  layer_inputs=["cos_t", "sin_t"], **dec_kwargs,
                  weights_note=f"The weights are the checkpoint's tensors, each named after its "
                  f"key with '.' as '_', {table.linear_note()}; "
                  f"rotary_inv_freq is computed by hf2dsc as transformers computes it: "
                  f"1 / {theta} ** (arange(0, {hd}, 2) / {hd}) in f32.")
    params = layer_params(dec, [f"cos_t: {dt}[B, S, {hd}]", f"sin_t: {dt}[B, S, {hd}]"])
    for r, shape, _, how in roles:
        params += linears[r].params(r) if how == "linear" else \
            [f"{r}: {dt}[{', '.join(str(d) for d in shape)}]"]
    layer = [comment(f"One decoder layer over S new tokens per sequence, at cache positions "
                     f"[L - S, L): attention with RoPE{group}, then the gated MLP, each after "
                     f"an RMSNorm and added back. Returns the layer's output and the caches "
                     f"with the new keys and values written in."),
             fn_header("layer", params, layer_result(dec), LAYER_WHERE), "{",
             f"  let h = {rms}(x, input_norm, eps={eps})",
             call("rotate", [heads_expr(proj('h', 'q_proj'), nh, hd), "cos_t", "sin_t"], "  ",
                  "let q = "),
             call("rotate", [heads_expr(proj('h', 'k_proj'), kv, hd), "cos_t", "sin_t"], "  ",
                  "let k = "),
             f"  let v = {heads_expr(proj('h', 'v_proj'), kv, hd)}",
             *cache_lines("k", "v"),
             f"  let x2 = x + {proj('a', 'o_proj')}",
             f"  let h2 = {rms}(x2, post_norm, eps={eps})",
             f"  let gated = {act}({proj('h2', 'gate_proj')}) * {factor(proj('h2', 'up_proj'))}",
             f"  return (x2 + {proj('gated', 'down_proj')}, ck, cv)", "}"]
    dec.functions = [rotary, rotate, "\n".join(layer)]
    attend = attend_fn(nh, kv, hd, hd ** -0.5, "S", dt)
    return write(dec, table, header, attend, norm_functions(["rms_norm"], dt)), \
        ["prefill", "decode"]
