"""hf2dsc's template for GPT-2 (model_type "gpt2"): GPT2LMHeadModel.

Each layer is pre-norm: LayerNorm, attention from one fused QKV projection (c_attn), LayerNorm,
then the MLP c_proj(act(c_fc(x))). GPT-2's projections are transformers' Conv1D, whose weights
are already [in, out]: they are stored as they are. The embedding adds the learned position
embedding (wpe) at the position ids; the LM head is the token embedding (tied), or
lm_head.weight when tie_word_embeddings is false. `scale_attn_by_inverse_layer_idx` and
cross-attention are refused.
"""

from __future__ import annotations

from .hf_attention import attend_fn, heads_expr
from .hf_config import Config
from .hf_decoder import LAYER_WHERE, Decoder, cache_lines, layer_params, layer_result, write
from .hf_text import flt, fn_header, norm, norm_functions
from .hf_weights import WeightTable

ARCHITECTURES = ("GPT2LMHeadModel",)


def weights_note(table: WeightTable, tied: bool) -> str:
    """The .dsc's comment on how its weights were made."""
    q = table.quant
    if q is None:
        return ("The weights are the checkpoint's tensors, each named after its key with '.' as "
                "'_'; GPT-2's Conv1D weights are [in, out] already and are stored as they are"
                + ("." if tied else ", lm_head.weight transposed."))
    return ("The weights are the checkpoint's tensors, each named after its key with '.' as "
            "'_'; GPT-2's Conv1D weights ([in, out]) are transposed and " +
            table.linear_note("transposed to [in, out]" if not tied else
                              "the token embedding, transposed") + ".")


def build(cfg: Config, table: WeightTable, arch: str, header: str) -> tuple[str, list[str]]:
    """The .dsc text and its entry names; ("", []) when the config has problems."""
    hid = cfg.int("n_embd")
    nh = cfg.int("n_head")
    layers = cfg.int("n_layer")
    vocab = cfg.int("vocab_size")
    max_pos = cfg.int("n_positions")
    inner = cfg.data.get("n_inner") or 4 * hid
    if isinstance(inner, bool) or not isinstance(inner, int) or inner < 1:
        cfg.problem(f"config.json's 'n_inner' is {inner!r}: expected an integer >= 1 or null")
        inner = 1
    eps = flt(cfg.float("layer_norm_epsilon", 1e-5))
    act = cfg.activation("activation_function", "gelu_new")
    tied = cfg.bool("tie_word_embeddings", True)
    scaled = cfg.bool("scale_attn_weights", True)
    cfg.divides(hid, "n_embd", nh, "n_head")
    cfg.refuse_if("scale_attn_by_inverse_layer_idx", False, lambda v: v is not False,
                  "a scale per layer (1 / (layer + 1)) is not implemented")
    cfg.refuse_if("add_cross_attention", False, lambda v: v is not False,
                  "cross-attention is not implemented")
    if cfg.problems:
        return "", []
    hd = hid // nh
    dt = table.dtype
    ln = norm("layer_norm", dt)

    wte = table.tensor("transformer.wte.weight", (vocab, hid))
    wpe = table.tensor("transformer.wpe.weight", (max_pos, hid))
    roles = [("ln_1_w", (hid,), "ln_1.weight"), ("ln_1_b", (hid,), "ln_1.bias"),
             ("attn_w", (hid, 3 * hid), "attn.c_attn.weight"),
             ("attn_b", (3 * hid,), "attn.c_attn.bias"),
             ("attn_proj_w", (hid, hid), "attn.c_proj.weight"),
             ("attn_proj_b", (hid,), "attn.c_proj.bias"),
             ("ln_2_w", (hid,), "ln_2.weight"), ("ln_2_b", (hid,), "ln_2.bias"),
             ("fc_w", (hid, inner), "mlp.c_fc.weight"), ("fc_b", (inner,), "mlp.c_fc.bias"),
             ("mlp_proj_w", (inner, hid), "mlp.c_proj.weight"),
             ("mlp_proj_b", (hid,), "mlp.c_proj.bias")]
    # The Conv1D weights ([in, out]): stored as they are, or quantized.
    conv = {"attn_w", "attn_proj_w", "fc_w", "mlp_proj_w"}
    layer_weights, linears = [], {}
    for i in range(layers):
        names = []
        for role, shape, suffix in roles:
            hf = f"transformer.h.{i}.{suffix}"
            if role in conv:
                linears[role] = table.conv1d(hf, *shape)
                names += linears[role].names
            else:
                names.append(table.tensor(hf, shape))
        layer_weights.append(names)
    ln_f_w = table.tensor("transformer.ln_f.weight", (hid,))
    ln_f_b = table.tensor("transformer.ln_f.bias", (hid,))
    head = (table.tied_head("transformer.wte.weight", vocab, hid) or wte) if tied \
        else table.linear("lm_head.weight", hid, vocab, head=True)

    sizes = (f"{layers} layers, hidden {hid}, {nh} heads of {hd}, MLP {inner}, vocabulary "
             f"{vocab}{', tied embeddings' if tied else ''}.")
    dec = Decoder(arch, sizes, hidden=hid, kv_heads=nh, head_dim=hd, vocab=vocab, dtype=dt,
                  max_context=max_pos, context_why="n_positions (the position embeddings)",
                  functions=[], embed=f"take({wte}, ids, axis=0) + take({wpe}, pos, axis=0)",
                  layer_weights=layer_weights, norm_params=[f"ln_f_w: {dt}[{hid}]",
                                                            f"ln_f_b: {dt}[{hid}]"],
                  norm_args=[ln_f_w, ln_f_b], norm=f"{ln}(last, ln_f_w, ln_f_b, "
                  f"eps={eps})", head=head, head_tied=isinstance(head, str),
                  weights_note=weights_note(table, tied))
    params = layer_params(dec, [])
    for r, shape, _ in roles:
        params += linears[r].params(r) if r in conv else \
            [f"{r}: {dt}[{', '.join(str(d) for d in shape)}]"]

    def mm(x: str, role: str) -> str:
        return linears[role].product(x, role)
    layer = ["# One GPT-2 block over S new tokens per sequence, at cache positions [L - S, L): "
             "attention, then\n# the MLP, each after a LayerNorm and added back. Returns the "
             "block's output and the caches\n# with the new keys and values written in.",
             fn_header("layer", params, layer_result(dec), LAYER_WHERE), "{",
             f"  let h = {ln}(x, ln_1_w, ln_1_b, eps={eps})",
             f"  let q_all, k_all, v_all = split({mm('h', 'attn_w')} + attn_b, 3, axis=-1)",
             f"  let q = {heads_expr('q_all', nh, hd)}",
             f"  let k = {heads_expr('k_all', nh, hd)}",
             f"  let v = {heads_expr('v_all', nh, hd)}",
             *cache_lines("k", "v"),
             f"  let x2 = x + {mm('a', 'attn_proj_w')} + attn_proj_b",
             f"  let h2 = {ln}(x2, ln_2_w, ln_2_b, eps={eps})",
             f"  return (x2 + {mm(f'{act}(' + mm('h2', 'fc_w') + ' + fc_b)', 'mlp_proj_w')} "
             f"+ mlp_proj_b, ck, cv)", "}"]
    dec.functions = ["\n".join(layer)]
    attend = attend_fn(nh, nh, hd, hd ** -0.5 if scaled else 1.0, "S", dt)
    return write(dec, table, header, attend, norm_functions(["layer_norm"], dt)), \
        ["prefill", "decode"]
