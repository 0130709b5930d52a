"""Random Qwen3, Phi-3 and mixture-of-experts models for tests: built with transformers and
saved into folders (``save_random``), and the same weights written as GGUF files the way
llama.cpp's converter lays them out (``write_family_gguf``). No network: the weights are made
here."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import gguf
import numpy as np
import pytest
import torch
from gguf import GGMLQuantizationType as Q

from helpers_gguf import permute_like_llama_cpp, quantize
from helpers_hf import LLAMA_BASE

# The Llama tests' small shape (2 layers, 4 query heads sharing 2 key/value heads, head size 8)
# with a vocabulary of its own size.
BASE = {**LLAMA_BASE, "vocab_size": 61}
FAMILIES = {
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", dict(head_dim=8)),
    "phi3": ("Phi3Config", "Phi3ForCausalLM", {}),
    "qwen3_moe": (
        "Qwen3MoeConfig",
        "Qwen3MoeForCausalLM",
        dict(head_dim=8, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=24),
    ),
    "mixtral": (
        "MixtralConfig",
        "MixtralForCausalLM",
        dict(num_local_experts=4, num_experts_per_tok=2),
    ),
    # local, global, local layers; a window shorter than the tests' prompts; a score scale
    # (query_pre_attn_scalar) other than d_head
    "gemma3_text": (
        "Gemma3TextConfig",
        "Gemma3ForCausalLM",
        dict(
            head_dim=16,
            num_hidden_layers=3,
            sliding_window=5,
            layer_types=["sliding_attention", "full_attention", "sliding_attention"],
            query_pre_attn_scalar=12,
        ),
    ),
}


def save_random(directory: Path, family: str, seed: int = 0, **overrides):
    """A random transformers model of ``family`` with every weight drawn at a scale that makes
    the layers matter (norm gains around 1), saved as safetensors; the model, in eval mode."""
    import transformers

    config_name, model_name, defaults = FAMILIES[family]
    config = getattr(transformers, config_name)(**{**BASE, **defaults, **overrides})
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = getattr(transformers, model_name)(config).eval()
        with torch.no_grad():
            for name, p in hf.named_parameters():
                if "norm" in name:  # Gemma's gains are 1 + w: w around 0
                    p.uniform_(-0.5, 0.5) if family == "gemma3_text" else p.uniform_(0.5, 1.5)
                else:
                    p.normal_(0.0, 0.15)
        hf.save_pretrained(directory, safe_serialization=True)
    return hf


# GGUF names, as llama.cpp's converter writes them
_GLOBAL = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
}
_BLOCK = {
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.qkv_proj": "attn_qkv",
    "self_attn.o_proj": "attn_output",
    "self_attn.q_norm": "attn_q_norm",
    "self_attn.k_norm": "attn_k_norm",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.gate_up_proj": "ffn_up",  # Phi-3: llama.cpp keeps the fused matrix as ffn_up
    "mlp.down_proj": "ffn_down",
    "mlp.gate": "ffn_gate_inp",  # the router
    "block_sparse_moe.gate": "ffn_gate_inp",
}
_EXPERT_PARTS = {  # HF per-expert matrix -> the GGUF tensor holding all experts' at once
    "gate_proj": "ffn_gate_exps",
    "up_proj": "ffn_up_exps",
    "down_proj": "ffn_down_exps",
    "w1": "ffn_gate_exps",
    "w3": "ffn_up_exps",
    "w2": "ffn_down_exps",
}
GGUF_ARCH = {
    "qwen3": "qwen3",
    "phi3": "phi3",
    "qwen3_moe": "qwen3moe",
    "mixtral": "llama",
    "gemma3_text": "gemma3",
}
# Gemma 3's four norms (its post_attention_layernorm is the norm after attention)
_GEMMA3_NORMS = {
    "post_attention_layernorm": "post_attention_norm",
    "pre_feedforward_layernorm": "ffn_norm",
    "post_feedforward_layernorm": "post_ffw_norm",
}


def gguf_tensors(state: dict[str, np.ndarray], config) -> dict[str, np.ndarray]:
    """HF weights -> GGUF tensors: names, llama.cpp's q/k row permutation (llama-arch files
    only: Mixtral), and each block's experts stacked into one [expert, out, in] array."""
    family = config.model_type
    heads = {"q_proj": config.num_attention_heads, "k_proj": config.num_key_value_heads}
    out: dict[str, np.ndarray] = {}
    experts: dict[tuple[int, str], dict[int, np.ndarray]] = {}
    for name, value in state.items():
        if family == "gemma3_text" and name.endswith("norm.weight"):
            value = value + 1  # llama.cpp stores Gemma's norm gains as 1 + w
        if name in _GLOBAL:
            out[_GLOBAL[name]] = value
            continue
        parts = name.split(".")  # model.layers.L.<module...>.weight
        layer, module = int(parts[2]), ".".join(parts[3:-1])
        if ".experts." in name:
            e, which = int(parts[-3]), parts[-2]
            experts.setdefault((layer, _EXPERT_PARTS[which]), {})[e] = value
            continue
        if family == "mixtral" and parts[-2] in heads:
            value = permute_like_llama_cpp(value, heads[parts[-2]])
        short = _GEMMA3_NORMS.get(module) if family == "gemma3_text" else None
        short = short or _BLOCK[module]
        out[f"blk.{layer}.{short}.{parts[-1]}"] = value
    for (layer, gguf_name), by_expert in experts.items():
        out[f"blk.{layer}.{gguf_name}.weight"] = np.stack([by_expert[e] for e in sorted(by_expert)])
    return out


# A byte-level vocabulary for short English prompts: "Ġ" is the space, "hi" the one merge.
TOKENS = ["Ġ", "hi", *"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?"]


def write_family_gguf(path: Path, hf, folder: Path, *, qtype: Q = Q.F32) -> Path:
    """The weights of a saved random model (``save_random``) as a GGUF file of its family's
    llama.cpp architecture (``hf`` the model, ``folder`` where it was saved), with a tiny
    byte-level vocabulary. Matrices are stored as
    ``qtype`` (3-D expert tensors too: F16, BF16, Q8_0, Q4_0, Q4_1 only), vectors as F32."""
    from safetensors.numpy import load_file

    config = hf.config
    state = load_file(str(folder / "model.safetensors"))
    arch = GGUF_ARCH[config.model_type]
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(f"Tiny random {config.model_type}")
    w.add_block_count(config.num_hidden_layers)
    w.add_context_length(config.max_position_embeddings)
    w.add_embedding_length(config.hidden_size)
    w.add_feed_forward_length(config.intermediate_size)
    w.add_head_count(config.num_attention_heads)
    w.add_head_count_kv(config.num_key_value_heads)
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    rope = config.rope_parameters
    # the rotated dims; Phi-4-mini's partial rotary factor rotates fewer than head_dim
    rope_dims = int(head_dim * rope.get("partial_rotary_factor", 1.0))
    w.add_rope_dimension_count(rope_dims)
    w.add_rope_freq_base(rope.get("full_attention", rope)["rope_theta"])
    w.add_layer_norm_rms_eps(config.rms_norm_eps)
    if arch == "phi3":  # llama.cpp writes 0 when the model has no window (Phi-4-mini)
        w.add_sliding_window(getattr(config, "sliding_window", None) or 0)
    longrope = arch == "phi3" and rope.get("rope_type") == "longrope"
    if longrope:  # llama.cpp's converter: the original context and attention factor as keys
        original = rope["original_max_position_embeddings"]
        scale = config.max_position_embeddings / original
        w.add_rope_scaling_orig_ctx_len(original)
        w.add_rope_scaling_attn_factors(math.sqrt(1 + math.log(scale) / math.log(original)))
    if config.model_type == "gemma3_text":  # local layers all but every pattern-th
        w.add_sliding_window(config.sliding_window)
        w.add_rope_freq_base_swa(rope["sliding_attention"]["rope_theta"])
        pattern = config.layer_types.index("full_attention") + 1
        w.add_sliding_window_pattern(pattern)
    if config.model_type in ("qwen3_moe", "mixtral"):
        w.add_expert_count(getattr(config, "num_local_experts", None) or config.num_experts)
        w.add_expert_used_count(config.num_experts_per_tok)
    if config.model_type == "qwen3_moe":
        w.add_expert_feed_forward_length(config.moe_intermediate_size)
        w.add_expert_weights_norm(bool(config.norm_topk_prob))
    w.add_file_type(0 if qtype == Q.F32 else 7)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(TOKENS[: config.vocab_size])
    w.add_token_merges(["h i"])
    w.add_token_types([1] * config.vocab_size)
    w.add_add_bos_token(False)
    tensors = gguf_tensors(state, config)
    if longrope:  # ... and the two factor lists as tensors (a test may leave one out)
        for which in ("long", "short"):
            if f"{which}_factor" in rope:
                factors = np.array(rope[f"{which}_factor"], dtype=np.float32)
                tensors[f"rope_factors_{which}.weight"] = factors
    for name, value in tensors.items():
        t = qtype if value.ndim >= 2 else Q.F32
        data = quantize(value, t)
        w.add_tensor(name, data, raw_dtype=t if data.dtype == np.uint8 else None)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


class Recorder:
    """Keeps every probe; ``wants`` says yes, so attention runs fused and its scores beside."""

    def __init__(self):
        self.tensors: dict[str, torch.Tensor] = {}

    def wants(self, name: str) -> bool:
        return True

    def __call__(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        self.tensors[name] = tensor
        return tensor


def random_ids(vocab: int, length: int, batch: int = 2, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, vocab, (batch, length), generator=torch.Generator().manual_seed(seed))


def assert_matches_transformers(hf, net, ids: torch.Tensor, tol: float = 1e-4) -> Recorder:
    """Logits (fast path and with every probe recorded) and the residual stream after each
    block equal transformers' within ``tol``; returns the recorded probes."""
    with torch.no_grad():
        out = hf(ids, output_hidden_states=True)
        fast = net(ids)[0]
        rec = Recorder()
        probed = net(ids, hook=rec)[0]
    assert out.logits.abs().max() > 1.0, "weights too small for the comparison to mean much"
    assert (fast - out.logits).abs().max() < tol
    assert (probed - out.logits).abs().max() < tol
    for layer in range(net.config.n_layer - 1):
        resid = rec.tensors[f"blocks.{layer}.hook_resid_post"]
        assert (resid - out.hidden_states[layer + 1]).abs().max() < tol, layer
    return rec


def assert_cache_continues(net, ids: torch.Tensor, tol: float = 1e-4) -> None:
    """Generation's path: the prompt, then one token at a time through the KV cache, gives the
    logits of one pass over the whole sequence."""
    with torch.no_grad():
        whole = net(ids)[0]
        cache = net.new_cache()
        first = net(ids[:, :-3], cache=cache)[0]
        steps = [
            net(ids[:, i : i + 1], cache=cache)[0] for i in range(ids.shape[1] - 3, ids.shape[1])
        ]
    assert (first - whole[:, :-3]).abs().max() < tol
    assert (torch.cat(steps, dim=1) - whole[:, -3:]).abs().max() < tol
    assert_generation_steps_continue(net, ids, whole, tol)


def assert_generation_steps_continue(net, ids: torch.Tensor, whole, tol: float) -> None:
    """The steps generation takes (``decode_step``, and ``decode_rows`` for rows of different
    lengths) give the whole pass's logits too: a family whose blocks differ from Llama's must
    not be run by Llama's one-row shortcut."""
    T = ids.shape[1]
    with torch.no_grad():
        cache = net.new_cache()
        net(ids[:, :-3], cache=cache)
        steps = [net.decode_step(ids[:, i : i + 1], cache) for i in range(T - 3, T)]
        assert (torch.cat(steps, dim=1) - whole[:, -3:]).abs().max() < tol
        caches = [net.new_cache() for _ in range(ids.shape[0])]
        for row, cache in enumerate(caches):  # row r has a prompt r tokens shorter
            net(ids[row : row + 1, : T - 1 - row], cache=cache)
        rows = torch.cat([ids[row : row + 1, T - 1 - row] for row in range(len(caches))])
        got = net.decode_rows(rows.view(-1, 1), caches)
    for row in range(len(caches)):
        assert (got[row, 0] - whole[row, T - 1 - row]).abs().max() < tol


def assert_saved_folder_reloads(net, ids: torch.Tensor, folder: Path) -> None:
    """lmscope's own saved folder loads back as the same family, config and logits."""
    from lmscope.engine.loading import load, save_model

    again = load(save_model(net, folder))
    assert type(again.net) is type(net) and again.net.config == net.config
    with torch.no_grad():
        assert torch.equal(again.net(ids)[0], net(ids)[0])


def load_gguf_privately(path: Path):
    """``lmscope.load`` of a GGUF file with its weight cache in the file's own folder (never
    the user's), for module-scoped fixtures, which cannot use the monkeypatch fixture."""
    import lmscope

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMSCOPE_CACHE", str(path.parent / "cache"))
        return lmscope.load(path)


def tiny_gemma3(folder: Path, text: str, window: int = 6) -> Path:
    """A tiny lmscope Gemma 3 saved in ``folder``: a character vocabulary over ``text`` (and
    a-z), layers local/global/local with a window of ``window`` keys, random weights at a scale
    where the layers matter (gains 1 + w, w around 0). For the page's sliding-window step, whose
    picture shows a window's edge only when the window is shorter than the prompt."""
    from lmscope.engine.loading import save_model
    from lmscope.models.gemma3 import GLOBAL, LOCAL, Gemma3, Gemma3Config
    from lmscope.tokenizers import CharTokenizer

    tokenizer = CharTokenizer.from_text(text + "abcdefghijklmnopqrstuvwxyz\n")
    config = Gemma3Config(
        vocab_size=len(tokenizer),
        n_ctx=64,
        n_embd=32,
        n_layer=3,
        n_head=2,
        n_kv_head=1,
        head_dim=16,
        n_inner=48,
        sliding_window=window,
        layer_types=[LOCAL, GLOBAL, LOCAL],
        rope_theta=1_000_000.0,
    )
    torch.manual_seed(0)
    net = Gemma3(config)
    with torch.no_grad():
        for name, p in net.named_parameters():
            p.uniform_(-0.5, 0.5) if "norm" in name or "ln" in name else p.normal_(0.0, 0.15)
    save_model(net, folder, tokenizer=tokenizer, meta={"name": "tiny-gemma3"})
    return folder
