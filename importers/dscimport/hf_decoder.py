"""What hf2dsc's decoder templates (GPT-2, LLaMA, Qwen2, Mistral) share: the two entries,
`prefill` and `decode`, around a family's `layer` function, and the KV cache they write.

    fn prefill(ids: i64[B, S], mask: i64[B, S], cache_k_0: f32[B, KV, C, D], cache_v_0: ...,
               ..., <weights>) -> tensor
      where B >= 1, 1 <= S <= C, C <= <max context>
    fn decode(ids: i64[B, 1], mask: i64[B, L], <the same caches>, <weights>) -> tensor
      where B >= 1, 2 <= L <= C, C <= <max context>

Each returns (the logits of the last position f32[B, vocab], cache_k_0', cache_v_0', ...), the
caches in parameter order. The caches, the activations and the weights are in the import's dtype
(f32 above; bf16 or f16 likewise); the logits are f32 at every dtype (the LM head's product
cast), which `dscc generate` samples from. `mask` is the attention mask as transformers'
generate keeps it (1 at a token, 0 at left padding); decode's is the whole mask so far, L tokens
with the new one last, and its token goes to cache position L - 1. The caches are allocated by
the caller for a context of C tokens and written with `update_slice`, which the compiler does in
place when the cache is an entry parameter that nothing else reads and its update is returned.

Masks and positions are made inside, as generate makes them from a left-padded mask: position
ids count the real tokens before each one (cumsum(mask) - 1; 0 at padding, as transformers
5.x's `_prepare_position_ids_for_generation`); prefill's queries see the earlier tokens that
are not padding (causal and padding mask), decode's new token every token that is not.

A family fills in a `Decoder`: its layer function (and helpers), the statements that turn the
positions into what its layers take (RoPE's cos and sin), the embedding and the final norm.
The layer function's signature is fixed:

    fn layer(x: f32[B, S, hidden], keep: bool[B, 1, S, L], <inputs>, cache_k: f32[B, KV, C, D],
             cache_v: f32[B, KV, C, D], <the layer's weights>)
      -> (f32[B, S, hidden], f32[B, KV, C, D], f32[B, KV, C, D])
      where 1 <= S <= L, L <= C

over S new tokens that go to cache positions [L - S, L); prefill calls it with L = S.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .hf_text import call, comment, fn_header
from .hf_weights import Linear, WeightTable

POSITIONS_PRIM = """\
# Position ids as transformers' generate makes them from the attention mask: the number of real
# tokens before each one (cumsum(mask) - 1), and 0 at padding.
prim positions(mask: i64[b, s]) -> (pos: i64[b, s]) {
  parallel for i in 0..b {
    var count: i64 = 0
    for j in 0..s {
      count = count + mask[i, j]
      pos[i, j] = select(mask[i, j] == 0, 0, count - 1)
    }
  }
}"""


# The layer function's where clause: its S new tokens end at L, within the cache.
LAYER_WHERE = ["1 <= S <= L", "L <= C"]


@dataclass
class Decoder:
    arch: str
    sizes: str                  # one line: layers, hidden, heads, vocabulary
    hidden: int
    kv_heads: int
    head_dim: int
    vocab: int
    max_context: int            # C's bound
    context_why: str            # what bounds it (max_position_embeddings, a sliding window)
    functions: list[str]        # the family's functions: helpers, then `layer`
    embed: str                  # f32[B, S, hidden] from `ids` (and `pos`)
    layer_weights: list[list[str]]   # each layer's weights, the layer function's last args
    norm_params: list[str]      # last_logits's parameters for the final norm
    norm_args: list[str]        # the weights passed for them
    norm: str                   # the final norm of `last`
    head: Linear | str          # the LM head (hidden -> vocab), or the embedding's name
    head_tied: bool             # whether `head` is the embedding [vocab, hidden]
    weights_note: str = ""      # how the weights were made from the checkpoint's tensors
    position_lines: list[str] = field(default_factory=list)  # statements after `pos`
    layer_inputs: list[str] = field(default_factory=list)    # args after x and keep
    dtype: str = "f32"          # the activations', caches' and weights' dtype


def cache_lines(k: str, v: str) -> list[str]:
    """A layer's cache update and the attention's keys and values: the new keys k and values v
    ([B, KV, S, D]) written at positions [L - S, L), then positions [0, L) read back."""
    return ["  let ck = update_slice(cache_k, " + k + ", axis=2, start=L - S)",
            "  let cv = update_slice(cache_v, " + v + ", axis=2, start=L - S)",
            "  let a = attend(q, slice(ck, axis=2, start=0, end=L), "
            "slice(cv, axis=2, start=0, end=L), keep)"]


def layer_params(dec: Decoder, inputs: list[str]) -> list[str]:
    """The layer function's parameters before its weights."""
    cache = f"{dec.dtype}[B, {dec.kv_heads}, C, {dec.head_dim}]"
    return [f"x: {dec.dtype}[B, S, {dec.hidden}]", "keep: bool[B, 1, S, L]", *inputs,
            f"cache_k: {cache}", f"cache_v: {cache}"]


def layer_result(dec: Decoder) -> str:
    cache = f"{dec.dtype}[B, {dec.kv_heads}, C, {dec.head_dim}]"
    return f"({dec.dtype}[B, S, {dec.hidden}], {cache}, {cache})"


def write(dec: Decoder, table: WeightTable, header: str, attend: str,
          helpers: list[str] = ()) -> str:
    """The module's text: helpers (the norms at bf16 and f16) come after the attention."""
    n = len(dec.layer_weights)
    dt = dec.dtype
    cache = f"{dt}[B, {dec.kv_heads}, C, {dec.head_dim}]"
    caches = [f"cache_{kv}_{i}: {cache}" for i in range(n) for kv in "kv"]
    out = [header.rstrip(), comment(
        f"{dec.sizes}\n\nprefill(ids, mask, caches...) runs a prompt of S tokens per sequence "
        f"(left-padded: mask is 0 at padding); decode(ids, mask, caches...) one new token per "
        f"sequence, with mask the whole attention mask so far (L tokens, the new one last). "
        f"Layer I's keys and values are cache_k_I and cache_v_I, {cache}, for a context of C "
        f"tokens the caller allocates; prefill writes positions [0, S), decode position L - 1, "
        f"in place. Both return the logits of the last position, f32[B, {dec.vocab}], then the "
        f"caches in parameter order. C <= {dec.max_context}: {dec.context_why}.\n\n"
        f"{dec.weights_note}"),
           "import nn", "", POSITIONS_PRIM, "", attend, ""]
    for f in [*helpers, *dec.functions]:
        out += [f.rstrip(), ""]
    if dec.head_tied:
        head_params = [f"head: {dt}[{dec.vocab}, {dec.hidden}]"]
        logits = f"matmul({dec.norm}, permute(head, [1, 0]))"
        what = " (tied: the\n# token embedding, transposed)"
    else:
        head_params = dec.head.params("head")
        logits = dec.head.product(dec.norm, "head")
        what = "" if not dec.head.bits else f" (quantized, {dec.head.bits}-bit)"
    if dt != "f32":
        logits = f'cast({logits}, dtype="f32")'
    out += ["# The logits of each sequence's last position: the final norm, then the LM head"
            + what
            + ("." if dt == "f32" else f", cast to f32\n# from {dt} (dscc generate samples "
               f"from f32 logits)."),
            fn_header("last_logits", [f"x: {dt}[B, S, {dec.hidden}]", *dec.norm_params,
                                      *head_params], f"f32[B, {dec.vocab}]",
                      ["S >= 1"]),
            "{",
            f"  let last = reshape(slice(x, axis=1, start=S - 1, end=S), [B, {dec.hidden}])",
            f"  return {logits}", "}", ""]
    weights = table.params()
    results = [f"{kv}{i}" for i in range(n) for kv in "kv"]
    for entry in ("prefill", "decode"):
        if entry == "prefill":
            params = ["ids: i64[B, S]", "mask: i64[B, S]", *caches, *weights]
            where = ["B >= 1", "1 <= S <= C", f"C <= {dec.max_context}"]
            pos = ["  let pos = positions(mask)"]
            keep = ["  let causal = reshape(arange(0, S), [S, 1]) >= reshape(arange(0, S), "
                    "[1, S])",
                    "  let keep = reshape(causal, [1, 1, S, S]) && reshape(mask != 0, "
                    "[B, 1, 1, S])"]
        else:
            params = ["ids: i64[B, 1]", "mask: i64[B, L]", *caches, *weights]
            where = ["B >= 1", "2 <= L <= C", f"C <= {dec.max_context}"]
            pos = ["  # The new token's position: the number of real tokens before it.",
                   "  let pos = reshape(sum(mask, axis=1) - 1, [B, 1])"]
            keep = ["  let keep = reshape(mask != 0, [B, 1, 1, L])"]
        doc = ("The prompt: S tokens per sequence, written to cache positions [0, S)."
               if entry == "prefill" else "One new token per sequence, written to cache "
               "position L - 1; mask covers the L tokens so far.")
        out += [comment(doc), fn_header(entry, params, "tensor", where), "{", *pos,
                *[f"  {s}" for s in dec.position_lines], *keep, f"  let x0 = {dec.embed}"]
        for i, ws in enumerate(dec.layer_weights):
            out.append(call("layer", [f"x{i}", "keep", *dec.layer_inputs, f"cache_k_{i}",
                                      f"cache_v_{i}", *ws], "  ",
                            f"let x{i + 1}, k{i}, v{i} = "))
        head_args = [dec.head] if dec.head_tied else dec.head.names
        logits = f"last_logits(x{n}, {', '.join([*dec.norm_args, *head_args])})"
        out += [call("", [logits, *results], "  ", "return "), "}", ""]
    return "\n".join(out)
