"""The attention function of hf2dsc's templates: softmax attention of query heads over key and
value heads under a bool mask, with the heads merged back, as .dsc text.

With fewer key/value heads than query heads (grouped-query attention, LLaMA's
num_key_value_heads), each key/value head serves a group of consecutive query heads, as
transformers' `repeat_kv` arranges them; the .dsc reshapes the queries into the groups and
lets matmul broadcast each key/value head over its group instead of copying it. Masked scores
are set to the f32 minimum (transformers' masked fill), so a row that keeps no key (a padded
query) is finite: a uniform average, never NaN.

At bf16 and f16 (`dt`), q, k, v and the result are in `dt`; the scores are cast to f32, scaled,
masked with the same f32 minimum and normalized in f32, and the probabilities cast back to `dt`
for their product with v, as transformers' eager attention does (softmax in f32). A padded
query's row then averages exactly as at f32 (an f16 score cannot hold the f32 minimum).
"""

from __future__ import annotations

from .hf_text import comment, flt

F32_MIN = "-3.4028234663852886e38"


def attend_fn(heads: int, kv_heads: int, head_dim: int, scale: float,
              mask_rows: str | None, dt: str = "f32") -> str:
    """`fn attend(q, k, v, keep)`: q dt[B, heads, S, head_dim], k and v dt[B, kv_heads, L,
    head_dim], keep bool[B, 1, mask_rows, L] (mask_rows "S", or "1" for a mask of keys alone,
    which broadcasts over the queries); returns dt[B, S, heads * head_dim]. With mask_rows
    None, `fn attend(q, k, v)` attends to every key."""
    d, h, kv = head_dim, heads, kv_heads
    group = h // kv

    def scores(product: str) -> str:
        """The scaled scores of a matmul of q and k: in f32 at bf16 and f16."""
        return (f"{product} * {flt(scale)}" if dt == "f32" else
                f"cast({product}, dtype=\"f32\") * {flt(scale)}")

    def probs(softmax: str) -> str:
        """A softmax's result, cast back to dt."""
        return softmax if dt == "f32" else f"cast({softmax}, dtype=\"{dt}\")"

    softmax_note = "" if dt == "f32" else " (the softmax in f32)"
    if mask_rows is None:
        assert group == 1, "attention without a mask is written for equal head counts"
        return "\n".join([
            comment(f"Softmax attention of the {h} heads of q over those of k and v, scaled "
                    f"by 1/sqrt({d}){softmax_note}; the heads merged back."),
            f"fn attend(q: {dt}[B, {h}, S, {d}], k: {dt}[B, {h}, L, {d}], "
            f"v: {dt}[B, {h}, L, {d}])\n    -> {dt}[B, S, {h * d}] {{",
            f"  let scores = {scores('matmul(q, permute(k, [0, 1, 3, 2]))')}",
            f"  let p = {probs('nn.softmax(scores, axis=-1)')}",
            f"  return reshape(permute(matmul(p, v), [0, 2, 1, 3]), [B, S, {h * d}])", "}"])
    sig = (f"fn attend(q: {dt}[B, {h}, S, {d}], k: {dt}[B, {kv}, L, {d}], "
           f"v: {dt}[B, {kv}, L, {d}],\n"
           f"          keep: bool[B, 1, {mask_rows}, L]) -> {dt}[B, S, {h * d}] {{")
    if group == 1:
        doc = comment(f"Softmax attention of the {h} heads of q over those of k and v, where "
                      f"keep holds, scaled by 1/sqrt({d}){softmax_note}; the heads merged back.")
        body = [f"  let scores = {scores('matmul(q, permute(k, [0, 1, 3, 2]))')}",
                f"  let p = {probs(f'nn.softmax(where(keep, scores, {F32_MIN}), axis=-1)')}",
                f"  return reshape(permute(matmul(p, v), [0, 2, 1, 3]), [B, S, {h * d}])"]
    else:
        doc = comment(f"Softmax attention of the {h} heads of q over the {kv} heads of k and "
                      f"v, where keep holds, scaled by 1/sqrt({d}){softmax_note}: query heads "
                      f"{group}*j .. {group}*j + {group - 1} share key/value head j "
                      f"(grouped-query attention; matmul broadcasts each key/value head over "
                      f"its group). The heads merged back.")
        body = [f"  let qg = reshape(q, [B, {kv}, {group}, S, {d}])",
                f"  let kg = reshape(k, [B, {kv}, 1, L, {d}])",
                f"  let vg = reshape(v, [B, {kv}, 1, L, {d}])",
                f"  let scores = {scores('matmul(qg, permute(kg, [0, 1, 2, 4, 3]))')}",
                f"  let masked = where(reshape(keep, [B, 1, 1, {mask_rows}, L]), scores, "
                f"{F32_MIN})",
                f"  let p = {probs('nn.softmax(masked, axis=-1)')}",
                f"  let out = reshape(matmul(p, vg), [B, {h}, S, {d}])",
                f"  return reshape(permute(out, [0, 2, 1, 3]), [B, S, {h * d}])"]
    return "\n".join([doc, sig, *body, "}"])


def heads_expr(x: str, heads: int, head_dim: int, rows: str = "S") -> str:
    """`x` [B, rows, heads * head_dim] as [B, heads, rows, head_dim]."""
    return f"permute(reshape({x}, [B, {rows}, {heads}, {head_dim}]), [0, 2, 1, 3])"
