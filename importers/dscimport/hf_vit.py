"""hf2dsc's template for ViT (model_type "vit"): ViTModel, whose entry returns
last_hidden_state, and ViTForImageClassification, whose entry returns the logits.

    fn forward(pixels: f32[B, channels, image, image], <weights>) -> f32[B, patches + 1, hidden]
      where B >= 1                                                (or f32[B, labels])

(f32, or the import's dtype: bf16, f16, whose LayerNorms and softmax are computed in f32.)

The image size is the config's (transformers refuses another one unless the position
embeddings are interpolated, which is not implemented). The patch embedding is a convolution
with the patch as kernel and stride, its weight stored as it is (OIHW); then the CLS token is
put first and the position embeddings added. The layers are pre-norm: LayerNorm, attention,
added back; LayerNorm, MLP, added back; then a final LayerNorm. The classifier reads the CLS
token's state after that norm.
"""

from __future__ import annotations

from .hf_attention import attend_fn, heads_expr
from .hf_config import Config
from .hf_text import call, comment, flt, fn_header, norm, norm_functions
from .hf_weights import WeightTable

ARCHITECTURES = ("ViTModel", "ViTForImageClassification")


def square(cfg: Config, key: str) -> int:
    """An int, or a pair of equal ints (transformers allows both for image and patch size)."""
    v = cfg.get(key)
    if isinstance(v, list) and len(v) == 2 and v[0] == v[1]:
        v = v[0]
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        cfg.problem(f"config.json's '{key}' is {v!r}: expected an integer >= 1 (hf2dsc "
                    f"implements square images and patches)")
        return 1
    return v


def build(cfg: Config, table: WeightTable, arch: str, header: str) -> tuple[str, list[str]]:
    """The .dsc text and its entry names; ("", []) when the config has problems."""
    hid = cfg.int("hidden_size")
    nh = cfg.int("num_attention_heads")
    layers = cfg.int("num_hidden_layers")
    inter = cfg.int("intermediate_size")
    chans = cfg.int("num_channels", 3)
    image = square(cfg, "image_size")
    patch = square(cfg, "patch_size")
    eps = flt(cfg.float("layer_norm_eps", 1e-12))
    act = cfg.activation("hidden_act", "gelu")
    qkv_bias = cfg.bool("qkv_bias", True)
    cfg.divides(hid, "hidden_size", nh, "num_attention_heads")
    cfg.divides(image, "image_size", patch, "patch_size")
    if cfg.problems:
        return "", []
    d = hid // nh
    dt = table.dtype
    ln = norm("layer_norm", dt)
    grid = image // patch
    n = grid * grid + 1  # the patches and the CLS token
    classifier = arch == "ViTForImageClassification"
    pre = "vit." if any(k.startswith("vit.") for k in table.ckpt.tensors) else ""

    conv_w = table.tensor(f"{pre}embeddings.patch_embeddings.projection.weight",
                          (hid, chans, patch, patch))
    conv_b = table.tensor(f"{pre}embeddings.patch_embeddings.projection.bias", (hid,))
    cls = table.tensor(f"{pre}embeddings.cls_token", (1, 1, hid))
    pos = table.tensor(f"{pre}embeddings.position_embeddings", (1, n, hid))
    roles = [("norm1_w", (hid,), "layernorm_before.weight", False),
             ("norm1_b", (hid,), "layernorm_before.bias", False)]
    for part, role in (("query", "q"), ("key", "k"), ("value", "v")):
        roles.append((f"{role}_w", (hid, hid), f"attention.attention.{part}.weight", True))
        if qkv_bias:
            roles.append((f"{role}_b", (hid,), f"attention.attention.{part}.bias", False))
    roles += [("o_w", (hid, hid), "attention.output.dense.weight", True),
              ("o_b", (hid,), "attention.output.dense.bias", False),
              ("norm2_w", (hid,), "layernorm_after.weight", False),
              ("norm2_b", (hid,), "layernorm_after.bias", False),
              ("up_w", (hid, inter), "intermediate.dense.weight", True),
              ("up_b", (inter,), "intermediate.dense.bias", False),
              ("down_w", (inter, hid), "output.dense.weight", True),
              ("down_b", (hid,), "output.dense.bias", False)]
    layer_weights, linears = [], {}
    for i in range(layers):
        names = []
        for role, shape, suffix, lin in roles:
            hf = f"{pre}encoder.layer.{i}.{suffix}"
            if lin:
                linears[role] = table.linear(hf, *shape)
                names += linears[role].names
            else:
                names.append(table.tensor(hf, shape))
        layer_weights.append(names)
    norm_w = table.tensor(f"{pre}layernorm.weight", (hid,))
    norm_b = table.tensor(f"{pre}layernorm.bias", (hid,))
    if classifier:
        labels = len(cfg.data["id2label"]) if isinstance(cfg.data.get("id2label"), dict) \
            else cfg.int("num_labels", 2)
        cls_w = table.linear("classifier.weight", hid, labels, head=True)
        cls_b = table.tensor("classifier.bias", (labels,))

    bias = {r for r, *_ in roles if r.endswith("_b")}

    def mm(x: str, role: str) -> str:
        return linears[role].product(x, role)

    def qkv(role: str) -> str:
        return heads_expr(mm("h", f"{role}_w") + (f" + {role}_b" if f"{role}_b" in bias
                                                  else ""), nh, d, str(n))

    ret = f"{dt}[B, {labels}]" if classifier else f"{dt}[B, {n}, {hid}]"
    head = "classifier is" if classifier else None
    out = [header.rstrip(),
           comment(f"{layers} layers, hidden {hid}, {nh} heads of {d}, MLP {inter}; "
                   f"{image}x{image} images of {chans} channels in {grid}x{grid} patches of "
                   f"{patch}.\n\nforward(pixels) returns "
                   f"{'the logits' if classifier else 'last_hidden_state'}, {ret}: the CLS "
                   f"token first, then the patches row by row.\n\nThe weights are the "
                   f"checkpoint's tensors, each named after its key with '.' as '_', "
                   f"{table.linear_note(head_name=head)}, the convolution's as it is "
                   f"(OIHW)."),
           "import nn", "", attend_fn(nh, nh, d, d ** -0.5, None, dt), ""]
    out += [f + "\n" for f in norm_functions(["layer_norm"], dt)]
    params = [f"x: {dt}[B, {n}, {hid}]"]
    for r, shape, _, lin in roles:
        params += linears[r].params(r) if lin else \
            [f"{r}: {dt}[{', '.join(str(s) for s in shape)}]"]
    out += [comment("One encoder layer (pre-norm): attention, then the MLP, each after a "
                    "LayerNorm and added back."),
            fn_header("layer", params, f"{dt}[B, {n}, {hid}]"), "{",
            f"  let h = {ln}(x, norm1_w, norm1_b, eps={eps})",
            f"  let q = {qkv('q')}", f"  let k = {qkv('k')}", f"  let v = {qkv('v')}",
            "  let a = attend(q, k, v)",
            f"  let x2 = x + {mm('a', 'o_w')} + o_b",
            f"  let h2 = {ln}(x2, norm2_w, norm2_b, eps={eps})",
            f"  return x2 + {mm(f'{act}(' + mm('h2', 'up_w') + ' + up_b)', 'down_w')} + down_b",
            "}", ""]
    out += [fn_header("forward", [f"pixels: {dt}[B, {chans}, {image}, {image}]",
                                  *table.params()], ret, ["B >= 1"]), "{",
            f"  # The patches, [B, {hid}, {grid}, {grid}], as tokens [B, {grid * grid}, {hid}].",
            call("conv2d", ["pixels", conv_w, f"stride={patch}"], "  ", "let patches = "),
            f"  let tokens = permute(reshape(patches, [B, {hid}, {grid * grid}]), [0, 2, 1])",
            f"                 + {conv_b}",
            f"  let first = broadcast_to({cls}, [B, 1, {hid}])",
            f"  let x0 = concat([first, tokens], axis=1) + {pos}"]
    for i, ws in enumerate(layer_weights):
        out.append(call("layer", [f"x{i}", *ws], "  ", f"let x{i + 1} = "))
    out.append(call(ln, [f"x{layers}", norm_w, norm_b, f"eps={eps}"], "  ",
                    "let y = "))
    if classifier:
        out += [f"  let cls_state = reshape(slice(y, axis=1, start=0, end=1), [B, {hid}])",
                f"  return {cls_w.product('cls_state')} + {cls_b}"]
    else:
        out.append("  return y")
    out.append("}")
    return "\n".join(out) + "\n", ["forward"]
