"""Small GGUF model files for tests, written the way llama.cpp's converter lays them out:
random Llama-shaped weights (`random_weights`, with the `TINY` and `BLOCKY` shapes), their
GGUF tensor names, llama.cpp's q/k permutation, and quantizers for every type the loader
reads (``gguf.quants`` where it has one, small K-quant packers here); `write_model` writes
the file. ``tests/formats/test_gguf.py`` checks the loader against them; the engine's loading
tests use them for a tiny GGUF to load."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
from gguf import GGMLQuantizationType as Q

# ---------------------------------------------------------------------------------------------
# Quantizers (gguf.quants where it has one, small K-quant packers here)


def _pack_k_scales(sc: np.ndarray, mn: np.ndarray) -> np.ndarray:
    """Inverse of test_gguf._k_scales: (n, 8) 6-bit scales and mins -> (n, 12) bytes."""
    sc, mn = sc.astype(np.uint8), mn.astype(np.uint8)
    out = np.zeros((sc.shape[0], 12), np.uint8)
    for j in range(4):
        out[:, j] = sc[:, j] | ((sc[:, j + 4] >> 4) << 6)
        out[:, j + 4] = mn[:, j] | ((mn[:, j + 4] >> 4) << 6)
        out[:, j + 8] = (sc[:, j + 4] & 0xF) | ((mn[:, j + 4] & 0xF) << 4)
    return out


def _quantize_k_affine(x: np.ndarray, bits: int) -> np.ndarray:
    """Q4_K (bits 4) or Q5_K (bits 5): 8 sub-blocks of 32, x ~ d*sc*q - dmin*m."""
    top = (1 << bits) - 1
    blocks = x.reshape(-1, 8, 32).astype(np.float32)
    n = blocks.shape[0]
    lo = np.minimum(blocks.min(axis=2), 0)
    hi = blocks.max(axis=2)
    scale = (hi - lo) / top
    d = (scale.max(axis=1) / 63).astype(np.float16).astype(np.float32)
    dmin = (-lo.min(axis=1) / 63).astype(np.float16).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.where(d[:, None] > 0, np.rint(scale / d[:, None]), 0).clip(0, 63)
        mn = np.where(dmin[:, None] > 0, np.rint(-lo / dmin[:, None]), 0).clip(0, 63)
        step = d[:, None] * sc
        q = np.where(
            step[:, :, None] > 0,
            np.rint((blocks + (dmin[:, None] * mn)[:, :, None]) / step[:, :, None]),
            0,
        )
    q = q.clip(0, top).astype(np.uint8)  # (n, 8, 32)
    header = np.concatenate(
        [
            d.astype(np.float16).view(np.uint8).reshape(n, 2),
            dmin.astype(np.float16).view(np.uint8).reshape(n, 2),
            _pack_k_scales(sc, mn),
        ],
        axis=1,
    )
    low = (q[:, 0::2] & 0xF) | ((q[:, 1::2] & 0xF) << 4)  # (n, 4, 32)
    if bits == 4:
        return np.concatenate([header, low.reshape(n, 128)], axis=1)
    qh = np.zeros((n, 32), np.uint8)
    for j in range(4):
        qh |= ((q[:, 2 * j] >> 4) & 1) << (2 * j)
        qh |= ((q[:, 2 * j + 1] >> 4) & 1) << (2 * j + 1)
    return np.concatenate([header, qh, low.reshape(n, 128)], axis=1)


def _quantize_q6_k(x: np.ndarray) -> np.ndarray:
    """Q6_K: 16 sub-blocks of 16, x ~ d*sc*(q - 32) with int8 sc."""
    blocks = x.reshape(-1, 16, 16).astype(np.float32)
    n = blocks.shape[0]
    scale = np.abs(blocks).max(axis=2) / 31
    d = (scale.max(axis=1) / 127).astype(np.float16).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.where(d[:, None] > 0, np.rint(scale / d[:, None]), 0).clip(-128, 127)
        step = (d[:, None] * sc)[:, :, None]
        q = np.where(step > 0, np.rint(blocks / step), 0)
    q = (q.clip(-32, 31) + 32).astype(np.uint8).reshape(n, 256)
    ql = np.zeros((n, 128), np.uint8)
    qh = np.zeros((n, 64), np.uint8)
    for h in range(2):
        v = q[:, 128 * h : 128 * h + 128]
        q1, q2, q3, q4 = v[:, 0:32], v[:, 32:64], v[:, 64:96], v[:, 96:128]
        ql[:, 64 * h : 64 * h + 32] = (q1 & 0xF) | ((q3 & 0xF) << 4)
        ql[:, 64 * h + 32 : 64 * h + 64] = (q2 & 0xF) | ((q4 & 0xF) << 4)
        qh[:, 32 * h : 32 * h + 32] = (
            (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6)
        )
    scales = sc.astype(np.int8).view(np.uint8)
    return np.concatenate([ql, qh, scales, d.astype(np.float16).view(np.uint8).reshape(n, 2)], 1)


def quantize(x: np.ndarray, qtype: Q) -> np.ndarray:
    """float32 [rows, cols] -> what GGUFWriter.add_tensor takes for ``qtype``."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if qtype in (Q.F32, Q.F16):
        return x.astype(np.float16 if qtype == Q.F16 else np.float32)
    if qtype in (Q.BF16, Q.Q8_0, Q.Q4_0, Q.Q4_1):
        return gguf.quants.quantize(x, qtype)
    rows = x.shape[0]
    if qtype == Q.Q4_K:
        return _quantize_k_affine(x, 4).reshape(rows, -1)
    if qtype == Q.Q5_K:
        return _quantize_k_affine(x, 5).reshape(rows, -1)
    if qtype == Q.Q6_K:
        return _quantize_q6_k(x).reshape(rows, -1)
    raise AssertionError(qtype)


# ---------------------------------------------------------------------------------------------
# Writing small model files


def permute_like_llama_cpp(w: np.ndarray, n_head: int) -> np.ndarray:
    """convert_hf_to_gguf.py's LlamaModel.permute: rows per head from halves to pairs."""
    return (
        w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


TINY = dict(vocab=32, hidden=64, layers=2, heads=4, kv_heads=2, inter=128, ctx=128)
BLOCKY = dict(vocab=32, hidden=256, layers=1, heads=4, kv_heads=2, inter=512, ctx=256)
_BLOCK = {
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}


def gguf_name(hf: str) -> str:
    glob = {
        "model.embed_tokens.weight": "token_embd.weight",
        "model.norm.weight": "output_norm.weight",
        "lm_head.weight": "output.weight",
    }
    if hf in glob:
        return glob[hf]
    parts = hf.split(".")
    return f"blk.{parts[2]}.{_BLOCK['.'.join(parts[3:-1])]}.{parts[-1]}"


def random_weights(dims: dict, *, seed=0, tied=True, qkv_bias=False) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    h, inter, v = dims["hidden"], dims["inter"], dims["vocab"]
    hd = h // dims["heads"]
    q_rows, kv_rows = dims["heads"] * hd, dims["kv_heads"] * hd
    shapes = {"model.embed_tokens.weight": (v, h), "model.norm.weight": (h,)}
    if not tied:
        shapes["lm_head.weight"] = (v, h)
    for i in range(dims["layers"]):
        b = f"model.layers.{i}."
        shapes.update(
            {
                b + "input_layernorm.weight": (h,),
                b + "post_attention_layernorm.weight": (h,),
                b + "self_attn.q_proj.weight": (q_rows, h),
                b + "self_attn.k_proj.weight": (kv_rows, h),
                b + "self_attn.v_proj.weight": (kv_rows, h),
                b + "self_attn.o_proj.weight": (h, q_rows),
                b + "mlp.gate_proj.weight": (inter, h),
                b + "mlp.up_proj.weight": (inter, h),
                b + "mlp.down_proj.weight": (h, inter),
            }
        )
        if qkv_bias:
            shapes.update(
                {
                    b + "self_attn.q_proj.bias": (q_rows,),
                    b + "self_attn.k_proj.bias": (kv_rows,),
                    b + "self_attn.v_proj.bias": (kv_rows,),
                }
            )
    return {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}


def write_model(
    path: Path,
    weights: dict[str, np.ndarray],
    dims: dict,
    *,
    arch: str = "llama",
    qtype: Q = Q.F32,
    name: str | None = "Tiny Test Model",
    permute: bool | None = None,
    extra=None,
    raw: dict[str, tuple[np.ndarray, Q]] | None = None,
    sentencepiece: dict | None = None,
) -> dict[str, tuple[np.ndarray, Q]]:
    """Write a GGUF the way llama.cpp's converter lays it out; returns what it stored per GGUF
    tensor name (the array handed to the writer and its type). Matrices are stored as
    ``qtype``, vectors as F32. ``extra(writer)`` adds more metadata; ``raw`` adds or replaces
    tensors as they are; ``sentencepiece`` (``helpers_spm.gguf_fields``) replaces the
    byte-level vocabulary with a "llama" one."""
    permute = arch in ("llama", "mistral") if permute is None else permute
    w = gguf.GGUFWriter(str(path), arch)
    if name is not None:
        w.add_name(name)
    w.add_block_count(dims["layers"])
    w.add_context_length(dims["ctx"])
    w.add_embedding_length(dims["hidden"])
    w.add_feed_forward_length(dims["inter"])
    w.add_head_count(dims["heads"])
    w.add_head_count_kv(dims["kv_heads"])
    w.add_rope_freq_base(dims.get("theta", 10000.0))
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(dims["hidden"] // dims["heads"])
    w.add_file_type(0 if qtype == Q.F32 else 7)
    if sentencepiece is None:
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("smollm")
        w.add_token_list([f"t{i}" for i in range(dims["vocab"])])
        w.add_token_merges(["t 1", "t 2"])
        w.add_token_types([3] + [1] * (dims["vocab"] - 1))
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_pad_token_id(2)
        w.add_add_bos_token(False)
    else:
        from helpers_spm import add_gguf_fields

        add_gguf_fields(w, sentencepiece)
    w.add_chat_template("{{ messages }}")
    if extra is not None:
        extra(w)
    stored: dict[str, tuple[np.ndarray, Q]] = {}
    for hf, value in weights.items():
        if permute and hf.endswith(("q_proj.weight", "q_proj.bias")):
            value = permute_like_llama_cpp(value, dims["heads"])
        if permute and hf.endswith(("k_proj.weight", "k_proj.bias")):
            value = permute_like_llama_cpp(value, dims["kv_heads"])
        t = qtype if value.ndim == 2 else Q.F32
        stored[gguf_name(hf)] = (quantize(value, t), t)
    stored.update(raw or {})
    for gname, (data, t) in stored.items():
        w.add_tensor(gname, data, raw_dtype=t if data.dtype == np.uint8 else None)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return stored
