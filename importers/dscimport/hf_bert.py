"""hf2dsc's template for BERT (model_type "bert"): BertModel, whose entry returns
last_hidden_state, and BertForSequenceClassification, whose entry returns the logits.

    fn forward(ids: i64[B, S], mask: i64[B, S], <weights>) -> f32[B, S, hidden]   (or [B, labels])
      where B >= 1, 1 <= S <= max_position_embeddings

(f32, or the import's dtype: bf16, f16, whose LayerNorms and softmax are computed in f32.)

`mask` is the attention mask (1 for a token, 0 for padding, at either end). The token types are
all 0 (one segment), as when BERT is called without token_type_ids: the embedding adds row 0 of
token_type_embeddings. Positions are 0 .. S - 1 (absolute position embeddings).
"""

from __future__ import annotations

from .hf_attention import attend_fn, heads_expr
from .hf_config import Config
from .hf_text import call, comment, flt, fn_header, norm, norm_functions
from .hf_weights import WeightTable

ARCHITECTURES = ("BertModel", "BertForSequenceClassification")


def read_config(cfg: Config) -> dict:
    c = {
        "hidden": cfg.int("hidden_size"),
        "heads": cfg.int("num_attention_heads"),
        "layers": cfg.int("num_hidden_layers"),
        "inter": cfg.int("intermediate_size"),
        "vocab": cfg.int("vocab_size"),
        "positions": cfg.int("max_position_embeddings"),
        "types": cfg.int("type_vocab_size", 2),
        "eps": cfg.float("layer_norm_eps", 1e-12),
        "act": cfg.activation("hidden_act", "gelu"),
    }
    cfg.divides(c["hidden"], "hidden_size", c["heads"], "num_attention_heads")
    cfg.refuse_if("position_embedding_type", "absolute", lambda v: v != "absolute",
                  "hf2dsc implements absolute position embeddings only")
    cfg.refuse_if("is_decoder", False, lambda v: v is not False,
                  "a causal BERT decoder is not implemented (BERT is imported as an encoder)")
    cfg.refuse_if("add_cross_attention", False, lambda v: v is not False,
                  "cross-attention is not implemented")
    return c


def build(cfg: Config, table: WeightTable, arch: str, header: str) -> tuple[str, list[str]]:
    """The .dsc text and its entry names; ("", []) when the config has problems."""
    c = read_config(cfg)
    if cfg.problems:
        return "", []
    hid, nh = c["hidden"], c["heads"]
    d = hid // nh
    dt = table.dtype
    ln = norm("layer_norm", dt)
    # BertModel's own save_pretrained names its tensors from `embeddings.`; a model with a head
    # keeps BertModel under `bert.`.
    pre = "bert." if any(n.startswith("bert.") for n in table.ckpt.tensors) else ""
    emb = f"{pre}embeddings."
    word = table.tensor(f"{emb}word_embeddings.weight", (c["vocab"], hid))
    pos = table.tensor(f"{emb}position_embeddings.weight", (c["positions"], hid))
    types = table.tensor(f"{emb}token_type_embeddings.weight", (c["types"], hid))
    eg = table.tensor(f"{emb}LayerNorm.weight", (hid,))
    eb = table.tensor(f"{emb}LayerNorm.bias", (hid,))
    layer_weights = []
    linears = {}   # role -> its Linear (the same types in every layer)
    for i in range(c["layers"]):
        p = f"{pre}encoder.layer.{i}."
        ws = []
        for role, part, din, dout in (("q_w", "attention.self.query", hid, hid),
                                      ("k_w", "attention.self.key", hid, hid),
                                      ("v_w", "attention.self.value", hid, hid),
                                      ("o_w", "attention.output.dense", hid, hid)):
            linears[role] = table.linear(f"{p}{part}.weight", din, dout)
            ws += [*linears[role].names, table.tensor(f"{p}{part}.bias", (dout,))]
        ws += [table.tensor(f"{p}attention.output.LayerNorm.weight", (hid,)),
               table.tensor(f"{p}attention.output.LayerNorm.bias", (hid,))]
        linears["up_w"] = table.linear(f"{p}intermediate.dense.weight", hid, c["inter"])
        ws += [*linears["up_w"].names,
               table.tensor(f"{p}intermediate.dense.bias", (c["inter"],))]
        linears["down_w"] = table.linear(f"{p}output.dense.weight", c["inter"], hid)
        ws += [*linears["down_w"].names,
               table.tensor(f"{p}output.dense.bias", (hid,)),
               table.tensor(f"{p}output.LayerNorm.weight", (hid,)),
               table.tensor(f"{p}output.LayerNorm.bias", (hid,))]
        layer_weights.append(ws)
    classifier = arch == "BertForSequenceClassification"
    if classifier:
        labels = len(cfg.data["id2label"]) if isinstance(cfg.data.get("id2label"), dict) \
            else cfg.int("num_labels", 2)
        pool_w = table.linear(f"{pre}pooler.dense.weight", hid, hid, head=True)
        pool_b = table.tensor(f"{pre}pooler.dense.bias", (hid,))
        cls_w = table.linear("classifier.weight", hid, labels, head=True)
        cls_b = table.tensor("classifier.bias", (labels,))

    def mm(x: str, role: str) -> str:
        return linears[role].product(x, role)

    eps = flt(c["eps"])
    act = c["act"]
    heads = "pooler and classifier are" if classifier else None
    result = f"the logits, {dt}[B, {labels}]" if classifier else "last_hidden_state"
    out = [header.rstrip(),
           comment(f"{c['layers']} layers, hidden {hid}, {nh} heads of {d}, intermediate "
                   f"{c['inter']}, vocabulary {c['vocab']}, at most {c['positions']} positions."
                   f"\n\nforward(ids, mask) returns {result}; "
                   f"the token types are all 0 (one segment), the positions 0 .. S - 1. mask is 1 "
                   f"at tokens and 0 at padding (at either end).\n\nThe weights are the "
                   f"checkpoint's tensors, each named after its key with '.' as '_', "
                   f"{table.linear_note(head_name=heads)}."),
           "import nn", "",
           attend_fn(nh, nh, d, d ** -0.5, "1", dt), ""]
    out += [f + "\n" for f in norm_functions(["layer_norm"], dt)]
    lp = [f"x: {dt}[B, S, {hid}]", "keep: bool[B, 1, 1, S]",
          *linears["q_w"].params("q_w"), f"q_b: {dt}[{hid}]", *linears["k_w"].params("k_w"),
          f"k_b: {dt}[{hid}]", *linears["v_w"].params("v_w"), f"v_b: {dt}[{hid}]",
          *linears["o_w"].params("o_w"), f"o_b: {dt}[{hid}]", f"attn_norm_w: {dt}[{hid}]",
          f"attn_norm_b: {dt}[{hid}]", *linears["up_w"].params("up_w"),
          f"up_b: {dt}[{c['inter']}]", *linears["down_w"].params("down_w"),
          f"down_b: {dt}[{hid}]", f"out_norm_w: {dt}[{hid}]", f"out_norm_b: {dt}[{hid}]"]
    out += ["# One encoder layer: self-attention over the tokens that keep marks, then the "
            "feed-forward block,\n# each added back and layer-normalized (post-norm).",
            fn_header("layer", lp, f"{dt}[B, S, {hid}]"), "{",
            f"  let q = {heads_expr(mm('x', 'q_w') + ' + q_b', nh, d)}",
            f"  let k = {heads_expr(mm('x', 'k_w') + ' + k_b', nh, d)}",
            f"  let v = {heads_expr(mm('x', 'v_w') + ' + v_b', nh, d)}",
            "  let a = attend(q, k, v, keep)",
            f"  let h = {ln}(x + {mm('a', 'o_w')} + o_b, attn_norm_w, attn_norm_b, "
            f"eps={eps})",
            f"  let up = {act}({mm('h', 'up_w')} + up_b)",
            f"  return {ln}(h + {mm('up', 'down_w')} + down_b, out_norm_w, out_norm_b, "
            f"eps={eps})", "}", ""]
    ret = f"{dt}[B, {labels}]" if classifier else f"{dt}[B, S, {hid}]"
    out += [fn_header("forward", ["ids: i64[B, S]", "mask: i64[B, S]", *table.params()], ret,
                      ["B >= 1", f"1 <= S <= {c['positions']}"]), "{",
            f"  let words = take({word}, ids, axis=0)",
            f"  let positions = take({pos}, arange(0, S), axis=0)",
            f"  let token_type = slice({types}, axis=0, start=0, end=1)",
            call(ln, ["words + positions + token_type", eg, eb, f"eps={eps}"],
                 "  ", "let x0 = "),
            "  let keep = reshape(mask != 0, [B, 1, 1, S])"]
    for i, ws in enumerate(layer_weights):
        out.append(call("layer", [f"x{i}", "keep", *ws], "  ", f"let x{i + 1} = "))
    last = f"x{len(layer_weights)}"
    if classifier:
        out += [f"  let first = reshape(slice({last}, axis=1, start=0, end=1), [B, {hid}])",
                f"  let pooled = tanh({pool_w.product('first')} + {pool_b})",
                f"  return {cls_w.product('pooled')} + {cls_b}"]
    else:
        out.append(f"  return {last}")
    out.append("}")
    return "\n".join(out) + "\n", ["forward"]
