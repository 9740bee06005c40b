"""The attention function of hf2dsc's templates: softmax attention of query heads over key and
value heads under a bool mask, with the heads merged back, as .dsc text.

With fewer key/value heads than query heads (grouped-query attention, LLaMA's
num_key_value_heads), each key/value head serves a group of consecutive query heads, as
transformers' `repeat_kv` arranges them; the .dsc reshapes the queries into the groups and
lets matmul broadcast each key/value head over its group instead of copying it. Masked scores
are set to the f32 minimum (transformers' masked fill), so a row that keeps no key (a padded
query) is finite: a uniform average, never NaN.
"""

from __future__ import annotations

from .hf_text import flt

F32_MIN = "-3.4028234663852886e38"


def attend_fn(heads: int, kv_heads: int, head_dim: int, scale: float,
              mask_rows: str | None) -> str:
    """`fn attend(q, k, v, keep)`: q f32[B, heads, S, head_dim], k and v f32[B, kv_heads, L,
    head_dim], keep bool[B, 1, mask_rows, L] (mask_rows "S", or "1" for a mask of keys alone,
    which broadcasts over the queries); returns f32[B, S, heads * head_dim]. With mask_rows
    None, `fn attend(q, k, v)` attends to every key."""
    d, h, kv = head_dim, heads, kv_heads
    group = h // kv
    if mask_rows is None:
        assert group == 1, "attention without a mask is written for equal head counts"
        return "\n".join([
            f"# Softmax attention of the {h} heads of q over those of k and v, scaled by "
            f"1/sqrt({d}); the heads\n# merged back.",
            f"fn attend(q: f32[B, {h}, S, {d}], k: f32[B, {h}, L, {d}], v: f32[B, {h}, L, {d}]) "
            f"-> f32[B, S, {h * d}] {{",
            f"  let p = nn.softmax(matmul(q, permute(k, [0, 1, 3, 2])) * {flt(scale)}, axis=-1)",
            f"  return reshape(permute(matmul(p, v), [0, 2, 1, 3]), [B, S, {h * d}])", "}"])
    sig = (f"fn attend(q: f32[B, {h}, S, {d}], k: f32[B, {kv}, L, {d}], "
           f"v: f32[B, {kv}, L, {d}],\n"
           f"          keep: bool[B, 1, {mask_rows}, L]) -> f32[B, S, {h * d}] {{")
    if group == 1:
        doc = (f"# Softmax attention of the {h} heads of q over those of k and v, where keep "
               f"holds, scaled by\n# 1/sqrt({d}); the heads merged back.")
        body = [f"  let scores = matmul(q, permute(k, [0, 1, 3, 2])) * {flt(scale)}",
                f"  let p = nn.softmax(where(keep, scores, {F32_MIN}), axis=-1)",
                f"  return reshape(permute(matmul(p, v), [0, 2, 1, 3]), [B, S, {h * d}])"]
    else:
        doc = (f"# Softmax attention of the {h} heads of q over the {kv} heads of k and v, "
               f"where keep holds,\n# scaled by 1/sqrt({d}): query heads "
               f"{group}*j .. {group}*j + {group - 1} share key/value head j (grouped-query\n"
               f"# attention; matmul broadcasts each key/value head over its group). The "
               f"heads merged back.")
        body = [f"  let qg = reshape(q, [B, {kv}, {group}, S, {d}])",
                f"  let kg = reshape(k, [B, {kv}, 1, L, {d}])",
                f"  let vg = reshape(v, [B, {kv}, 1, L, {d}])",
                f"  let scores = matmul(qg, permute(kg, [0, 1, 2, 4, 3])) * {flt(scale)}",
                f"  let masked = where(reshape(keep, [B, 1, 1, {mask_rows}, L]), scores, "
                f"{F32_MIN})",
                f"  let out = reshape(matmul(nn.softmax(masked, axis=-1), vg), [B, {h}, S, {d}])",
                f"  return reshape(permute(out, [0, 2, 1, 3]), [B, S, {h * d}])"]
    return "\n".join([doc, sig, *body, "}"])


def heads_expr(x: str, heads: int, head_dim: int, rows: str = "S") -> str:
    """`x` f32[B, rows, heads * head_dim] as f32[B, heads, rows, head_dim]."""
    return f"permute(reshape({x}, [B, {rows}, {heads}, {head_dim}]), [0, 2, 1, 3])"
