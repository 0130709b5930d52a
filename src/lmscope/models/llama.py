"""The Llama architecture (also Mistral, Qwen2 and SmolLM), written to be read, with a named probe
on every step.

Decoder-only Transformer like GPT-2 (``lmscope.models.gpt2``), with four changes:

- no position vectors are added to the embeddings: positions enter attention by rotating each
  query and key (RoPE), so the score between two positions depends only on their distance;
- RMSNorm instead of LayerNorm: divide by the root mean square, multiply by a gain, no centring
  and no bias;
- grouped-query attention (GQA): ``n_head`` query heads share ``n_kv_head`` key/value heads,
  ``n_head // n_kv_head`` query heads to each, so the KV cache is that many times smaller;
- a gated MLP (SwiGLU): down(SiLU(gate(x)) * up(x)), three matrices and no biases.

The unembedding is a separate ``lm_head`` unless ``tie_word_embeddings`` ties it to the token
embedding (SmolLM, small Qwen2 models).

Every intermediate tensor passes through ``hook(name, tensor)`` when a hook is given. Names
follow TransformerLens's hook points (``blocks.3.attn.hook_rot_q``). Without a hook the model
takes the fast path (PyTorch's scaled_dot_product_attention) and computes the same numbers.

RoPE uses Hugging Face's "rotate_half" layout: dimension i of a head is paired with dimension
i + d_head / 2. Weights come from Hugging Face folders in that layout; GGUF files, which
interleave the pairs, are converted by the GGUF reader before they get here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, NamedTuple, cast

import torch
import torch.nn.functional as F
from torch import nn

from lmscope.errors import CheckpointError, InvalidInputError
from lmscope.i18n import Message
from lmscope.models.common import (
    DecoderLM,
    Hook,
    KVCache,
    Linear,
    PreNormBlock,
    ProbedAttention,
    attend_rows,
    checked_logits,
)
from lmscope.models.fields import JsonConfig, check_field_types, require_mapping
from lmscope.models.step_plan import Product, kept_while_parameters_hold, norm_row, projection

HF_MODEL_TYPES = ("llama", "mistral", "qwen2")
_HF_ARCHITECTURES = {
    "llama": "LlamaForCausalLM",
    "mistral": "MistralForCausalLM",
    "qwen2": "Qwen2ForCausalLM",
}
# Context lengths transformers assumes when a config.json leaves max_position_embeddings out.
_HF_DEFAULT_CTX = {"llama": 2048, "mistral": 131072, "qwen2": 32768}
_LLAMA3_KEYS = ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")
# LongRoPE (Phi-3.5, Phi-4-mini): a factor per pair for short and for long sequences, the
# context they were trained on, and the factor cos and sin are multiplied by
_LONGROPE_KEYS = (
    "short_factor",
    "long_factor",
    "original_max_position_embeddings",
    "attention_factor",
)


@dataclass
class LlamaConfig(JsonConfig):
    family: ClassVar[str] = "llama"  # what the explainer says this architecture does
    model_types: ClassVar[tuple[str, ...]] = HF_MODEL_TYPES  # the model_type values it takes
    activations: ClassVar[tuple[str, ...]] = ("silu",)  # the MLP gate's (Gemma 3: tanh GELU)
    vocab_size: int = 32000
    n_ctx: int = 2048  # context length (Hugging Face: max_position_embeddings)
    n_embd: int = 4096  # d_model (hidden_size)
    n_layer: int = 32
    n_head: int = 32  # query heads
    n_kv_head: int | None = None  # key/value heads (num_key_value_heads); None means n_head
    head_dim: int | None = None  # size of one head; None means n_embd // n_head
    n_inner: int = 11008  # MLP width (intermediate_size)
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    rope_scaling: dict | None = None  # None, {"rope_type": "llama3", ...} or "longrope"
    partial_rotary_factor: float = 1.0  # the share of each head's dims RoPE rotates (Phi-4-mini)
    attention_bias: bool = False  # biases on q_proj, k_proj, v_proj
    attention_out_bias: bool = False  # a bias on o_proj (Llama's attention_bias; not Qwen2)
    mlp_bias: bool = False
    tie_word_embeddings: bool = False
    sliding_window: int | None = None  # Mistral: each query sees at most this many keys
    activation: str = "silu"
    dropout: float = 0.0  # on attention weights and residual branches, as GPTConfig
    model_type: str = "llama"  # which Hugging Face family to_hf writes: llama, mistral, qwen2

    def __post_init__(self):
        check_field_types(self, Message("error.config.part.named", model="Llama"))
        if self.n_kv_head is None:
            self.n_kv_head = self.n_head
        self.require_at_least(
            1, "vocab_size", "n_ctx", "n_embd", "n_layer", "n_head", "n_kv_head", "n_inner"
        )
        if self.head_dim is None:
            if self.n_embd % self.n_head:
                raise InvalidInputError(
                    "error.llama.divisible-unless-head-dim", x=str(self.n_embd), y=str(self.n_head)
                )
            self.head_dim = self.n_embd // self.n_head
        self.require_at_least(2, "head_dim")
        if self.d_head % 2:
            raise InvalidInputError("error.llama.odd-head", got=str(self.d_head))
        self.require_divisible("n_head", "n_kv_head")
        self.require_above("rms_norm_eps", 0)
        self.require_above("rope_theta", 1)
        if not 0 < self.partial_rotary_factor <= 1 or self.rotary_dims < 2 or self.rotary_dims % 2:
            raise InvalidInputError(
                "error.llama.rotary-dims",
                factor=str(self.partial_rotary_factor),
                head=str(self.d_head),
            )
        if self.rope_scaling is not None:
            _check_rope_scaling(self.rope_scaling, self.rotary_dims // 2)
            self.rope_scaling = dict(self.rope_scaling)
        if self.sliding_window is not None:
            self.require_at_least(1, "sliding_window")
        if self.activation not in self.activations:
            raise InvalidInputError("error.llama.activation", name=repr(self.activation))
        self.require_fraction("dropout")
        if self.model_type not in self.model_types:
            raise InvalidInputError(
                "error.value.one-of",
                name="model_type",
                known=", ".join(self.model_types),
                got=repr(self.model_type),
            )

    @property
    def d_head(self) -> int:
        assert self.head_dim is not None  # __post_init__ sets it
        return self.head_dim

    @property
    def d_mlp(self) -> int:
        return self.n_inner

    @property
    def rotary_dims(self) -> int:
        """How many of a head's dims RoPE rotates (the first ones; the rest pass unchanged):
        d_head unless partial_rotary_factor is below 1, as transformers rounds it."""
        return int(self.d_head * self.partial_rotary_factor)

    @property
    def longrope(self) -> bool:
        return _rope_kind(self.rope_scaling) == "longrope"

    @property
    def n_kv_groups(self) -> int:
        """Query heads per key/value head."""
        assert self.n_kv_head is not None  # __post_init__ sets it
        return self.n_head // self.n_kv_head

    @classmethod
    def from_hf(cls, hf: dict) -> LlamaConfig:
        """Build from a Hugging Face ``config.json`` dict of a llama, mistral or qwen2 model
        (SmolLM and SmolLM2 checkpoints are plain llama)."""
        hf = require_mapping(hf, "config.json")
        model_type = hf.get("model_type")
        if model_type not in HF_MODEL_TYPES:
            raise CheckpointError(
                "error.llama.hf-type", type=repr(model_type), types=", ".join(HF_MODEL_TYPES)
            )
        act = hf.get("hidden_act", "silu")
        if act not in ("silu", "swish"):
            raise CheckpointError("error.llama.hf-activation", name=repr(act))
        theta, scaling = _hf_rope(hf)
        if model_type == "qwen2":  # biases on q, k, v; none on o_proj
            qkv_bias, out_bias, mlp_bias = True, False, False
        elif model_type == "mistral":
            qkv_bias = out_bias = mlp_bias = False
        else:
            qkv_bias = out_bias = bool(hf.get("attention_bias", False))
            mlp_bias = bool(hf.get("mlp_bias", False))
        try:
            config = dict(
                vocab_size=hf["vocab_size"],
                n_ctx=hf.get("max_position_embeddings") or _HF_DEFAULT_CTX[model_type],
                n_embd=hf["hidden_size"],
                n_layer=hf["num_hidden_layers"],
                n_head=hf["num_attention_heads"],
                n_kv_head=hf.get("num_key_value_heads") or hf["num_attention_heads"],
                head_dim=hf.get("head_dim"),
                n_inner=hf["intermediate_size"],
            )
        except KeyError as missing:
            raise CheckpointError(
                "error.config.lacks-field", family=model_type, field=str(missing)
            ) from None
        try:
            return cls(
                **config,
                rms_norm_eps=hf.get("rms_norm_eps", 1e-6),
                rope_theta=theta,
                rope_scaling=scaling,
                attention_bias=qkv_bias,
                attention_out_bias=out_bias,
                mlp_bias=mlp_bias,
                tie_word_embeddings=bool(hf.get("tie_word_embeddings", False)),
                sliding_window=_hf_sliding_window(hf, model_type),
                activation="silu",
                dropout=0.0,
                model_type=model_type,
            )
        except (InvalidInputError, TypeError) as err:
            why = err if isinstance(err, InvalidInputError) else str(err)
            raise CheckpointError("error.config.in-config-json", why=why) from None

    def to_hf(self) -> dict:
        """A ``config.json`` dict that transformers loads as this model's family."""
        kind = self.model_type
        if kind == "qwen2" and not (self.attention_bias and not self.attention_out_bias):
            raise InvalidInputError("error.llama.qwen2-biases")
        if kind == "mistral" and (self.attention_bias or self.attention_out_bias or self.mlp_bias):
            raise InvalidInputError("error.llama.mistral-biases")
        if kind == "llama" and self.attention_bias != self.attention_out_bias:
            raise InvalidInputError("error.llama.llama-biases")
        if kind != "mistral" and self.sliding_window is not None:
            raise InvalidInputError("error.llama.sliding-export", kind=kind)
        if self.partial_rotary_factor != 1.0:  # transformers' Llama rotates every dim
            raise InvalidInputError("error.llama.partial-export", kind=kind)
        out = {
            "model_type": kind,
            "architectures": [_HF_ARCHITECTURES[kind]],
            "vocab_size": self.vocab_size,
            "max_position_embeddings": self.n_ctx,
            "hidden_size": self.n_embd,
            "num_hidden_layers": self.n_layer,
            "num_attention_heads": self.n_head,
            "num_key_value_heads": self.n_kv_head,
            "head_dim": self.d_head,
            "intermediate_size": self.n_inner,
            "hidden_act": self.activation,
            "rms_norm_eps": self.rms_norm_eps,
            "rope_theta": self.rope_theta,
            "rope_scaling": dict(self.rope_scaling) if self.rope_scaling else None,
            "tie_word_embeddings": self.tie_word_embeddings,
            "attention_dropout": self.dropout,
        }
        if kind == "llama":
            out.update(attention_bias=self.attention_bias, mlp_bias=self.mlp_bias)
        elif kind == "mistral":
            out["sliding_window"] = self.sliding_window
        else:
            out.update(use_sliding_window=False, sliding_window=None)
        return out


def _rope_kind(scaling) -> str | None:
    """A RoPE scaling's type ("llama3", "longrope"), under either key config.json uses."""
    return scaling.get("rope_type", scaling.get("type")) if isinstance(scaling, dict) else None


def _check_rope_scaling(scaling: dict, pairs: int):
    kind = _rope_kind(scaling)
    if kind == "longrope":
        _check_longrope(scaling, pairs)
        return
    _llama3_only(
        kind, scaling, InvalidInputError, "error.llama.rope-unsupported", "error.llama.rope-lacks"
    )
    for key in _LLAMA3_KEYS:  # JSON may hold anything; the frequencies divide by these
        _check_positive(key, scaling[key])
    if scaling["high_freq_factor"] <= scaling["low_freq_factor"]:
        raise InvalidInputError("error.llama.rope-factors")


def _check_positive(key: str, value) -> None:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or value <= 0:
        raise InvalidInputError("error.llama.rope-key", key=key, got=f"{value!r:.60}")


def _check_longrope(scaling: dict, pairs: int) -> None:
    """LongRoPE's keys: a factor list of one number > 0 per rotated pair for short and for
    long sequences, the original context and the attention factor."""
    missing = [k for k in _LONGROPE_KEYS if k not in scaling]
    if missing:
        raise InvalidInputError("error.llama.longrope-lacks", keys=", ".join(missing))
    for key in ("short_factor", "long_factor"):
        factors = scaling[key]
        if not isinstance(factors, (list, tuple)) or len(factors) != pairs:
            raise InvalidInputError("error.llama.longrope-length", key=key, n=str(pairs))
        for value in factors:
            _check_positive(key, value)
    _check_positive("original_max_position_embeddings", scaling["original_max_position_embeddings"])
    _check_positive("attention_factor", scaling["attention_factor"])


def _llama3_only(
    kind,
    scaling: dict,
    error: type[InvalidInputError] | type[CheckpointError],
    unsupported: str,
    lacks: str,
):
    """The one check that a RoPE scaling is llama3's with all its keys, for a config
    (InvalidInputError) and a config.json (CheckpointError): the message ids say which."""
    if kind != "llama3":
        raise error(unsupported, kind=repr(kind))
    missing = [k for k in _LLAMA3_KEYS if k not in scaling]
    if missing:
        raise error(lacks, keys=", ".join(missing))


def _hf_rope(hf: dict) -> tuple[float, dict | None]:
    """(rope_theta, rope_scaling) from either config.json style: transformers 5's
    ``rope_parameters`` or the older ``rope_theta`` + ``rope_scaling``."""
    params = hf.get("rope_parameters") or {}
    scaling = hf.get("rope_scaling") or params
    theta = params.get("rope_theta", hf.get("rope_theta", 10000.0))
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    partial = params.get("partial_rotary_factor", hf.get("partial_rotary_factor", 1.0))
    if scaling.get("partial_rotary_factor", partial) != 1.0:  # Phi-4-mini's is top-level
        raise CheckpointError("error.llama.partial-rotary")
    if kind in ("default", None):
        return theta, None
    _llama3_only(
        kind,
        scaling,
        CheckpointError,
        "error.llama.hf-rope-unsupported",
        "error.llama.hf-rope-lacks",
    )
    return theta, {"rope_type": "llama3", **{k: scaling[k] for k in _LLAMA3_KEYS}}


def _hf_sliding_window(hf: dict, model_type: str) -> int | None:
    if model_type == "llama":
        return None
    if model_type == "mistral":
        return hf.get("sliding_window")
    # qwen2: the window applies only with use_sliding_window, and only to some layers
    if not hf.get("use_sliding_window"):
        return None
    layer_types = hf.get("layer_types") or [
        "sliding_attention" if i >= hf.get("max_window_layers", 28) else "full_attention"
        for i in range(hf.get("num_hidden_layers", 0))
    ]
    if set(layer_types) == {"full_attention"}:
        return None
    if set(layer_types) == {"sliding_attention"}:
        return hf.get("sliding_window")
    raise CheckpointError("error.llama.qwen2-mixed-window")


# ----------------------------------------------------------------------------------------------
# Rotary position embeddings


def rope_inv_freq(config: LlamaConfig, long: bool = False) -> torch.Tensor:
    """The rotation speed (radians per position) of each of the rotary_dims / 2 dimension
    pairs, float32, after Llama-3's or LongRoPE's rescaling when the config asks for it.

    Pair i turns by theta^(-2i / d) per position (d = rotary_dims, d_head unless only part of
    each head rotates): pair 0 a full radian, the last pair barely at all. Llama 3 slows the
    slow pairs further (by ``factor``) so that a context longer than the one it was trained on
    does not show them angles they never saw, leaves the fast pairs alone, and blends smoothly
    in between. LongRoPE divides each pair's speed by a factor of its own, found by a search
    when the model was trained: ``short_factor`` for sequences within the original context,
    ``long_factor`` (``long``) for longer ones.
    """
    d = config.rotary_dims
    # on the CPU even while a model is shaped on the meta device: a few numbers, and arange
    # there pulls in torch's compiler (3 s)
    pairs = torch.arange(0, d, 2, dtype=torch.float32, device="cpu")
    s = config.rope_scaling
    if config.longrope:
        assert s is not None  # longrope says so
        factors = torch.tensor(s["long_factor" if long else "short_factor"], dtype=torch.float32)
        return 1.0 / (factors * config.rope_theta ** (pairs / d))  # as transformers rounds it
    inv_freq = 1.0 / config.rope_theta ** (pairs / d)
    if s is None:
        return inv_freq
    old_ctx = s["original_max_position_embeddings"]
    wavelength = 2 * math.pi / inv_freq  # positions per full turn
    long_wave = old_ctx / s["low_freq_factor"]  # slower than this: divide by factor
    short_wave = old_ctx / s["high_freq_factor"]  # faster than this: keep
    blend = (old_ctx / wavelength - s["low_freq_factor"]) / (
        s["high_freq_factor"] - s["low_freq_factor"]
    )
    blended = (1 - blend) * inv_freq / s["factor"] + blend * inv_freq
    out = torch.where(wavelength > long_wave, inv_freq / s["factor"], blended)
    return torch.where(wavelength < short_wave, inv_freq, out)


def rope_cos_sin(positions: torch.Tensor, inv_freq: torch.Tensor, scale: float = 1.0):
    """cos and sin of every (position, dimension) angle, float32, shaped [pos, 1, rotary_dims]
    to broadcast over heads. Both halves of the rotated dims share the angles of their pair.
    LongRoPE multiplies both by ``scale`` (its attention factor): q and k grow by it, so every
    score grows by its square, which keeps attention as sharp over a longer context."""
    angles = positions.float()[:, None] * inv_freq.to(positions.device)[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    cos, sin = angles.cos()[:, None, :], angles.sin()[:, None, :]
    return (cos, sin) if scale == 1.0 else (cos * scale, sin * scale)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x1, x2) -> (-x2, x1) over the two halves of the last dimension."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate each pair (x_i, x_{i + d/2}) of a [..., pos, head, d_head] tensor by its angle,
    d = cos's last size. When that is less than d_head (a partial rotary factor: Phi-4-mini
    rotates 96 of 128 dims), the first d dims rotate and the rest pass through unchanged: those
    carry no position, so their part of q·k is the same at every distance."""
    d = cos.shape[-1]
    if d == x.shape[-1]:
        return x * cos.to(x.dtype) + rotate_half(x) * sin.to(x.dtype)
    rotated, kept = x[..., :d], x[..., d:]
    rotated = rotated * cos.to(x.dtype) + rotate_half(rotated) * sin.to(x.dtype)
    return torch.cat([rotated, kept], dim=-1)


# ----------------------------------------------------------------------------------------------
# The layers


class RMSNorm(nn.Module):
    """RMSNorm that can show its work: scale (the root mean square), normalized, then the gain."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    @property
    def gain(self) -> torch.Tensor:
        """What the normalized vector is multiplied by, per dimension (Gemma's: 1 + weight)."""
        return self.weight

    def forward(self, x: torch.Tensor, hook: Hook | None, name: str) -> torch.Tensor:
        # Statistics in float32 for half-precision models: in float16 the square of an
        # activation past 256 overflows to inf.
        x32 = x.float()
        scale = (x32.pow(2).mean(-1, keepdim=True) + self.eps).sqrt()
        if hook is None:
            return (x32 / scale).to(x.dtype) * self.weight
        scale = hook(f"{name}.hook_scale", scale)
        normalized = hook(f"{name}.hook_normalized", x32 / scale)
        return hook(f"{name}.hook_out", normalized.to(x.dtype) * self.weight)


class CausalSelfAttention(ProbedAttention):
    """Grouped-query attention with rotary positions (and, for Mistral, a sliding window).

    With ``sliding_window`` set, query i sees keys i - window + 1 .. i, as Mistral does; the
    cache still keeps every position (simple, not memory-optimal), the mask does the windowing.
    """

    def __init__(self, config: LlamaConfig):
        super().__init__()
        assert config.n_kv_head is not None  # LlamaConfig.__post_init__ sets it
        self.n_head, self.n_kv_head, self.d_head = config.n_head, config.n_kv_head, config.d_head
        self.n_kv_groups = config.n_kv_groups
        self.window = config.sliding_window
        d_q, d_kv = config.n_head * config.d_head, config.n_kv_head * config.d_head
        self.q_proj = Linear(config.n_embd, d_q, bias=config.attention_bias)
        self.k_proj = Linear(config.n_embd, d_kv, bias=config.attention_bias)
        self.v_proj = Linear(config.n_embd, d_kv, bias=config.attention_bias)
        self.o_proj = Linear(d_q, config.n_embd, bias=config.attention_out_bias)  # W_O
        self.attn_dropout = nn.Dropout(config.dropout)
        self.dropout = config.dropout

    def kv_head_of(self, query_head: int) -> int:
        """The key/value head a query head reads: query heads come in consecutive groups."""
        return query_head // self.n_kv_groups

    def forward(self, x, hook: Hook | None, name: str, layer: int, cache: KVCache | None, rope):
        B, T, _ = x.shape
        cos, sin = rope
        # [batch, position, head, d_head]: TransformerLens's layout for hook_q/k/v and hook_z
        q, k, v = self.project(x)
        if hook is not None:
            q = hook(f"{name}.hook_q", q)
            k = hook(f"{name}.hook_k", k)
            v = hook(f"{name}.hook_v", v)
        q, k = self.before_rope(q, k, hook, name)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if hook is not None:
            q = hook(f"{name}.hook_rot_q", q)
            k = hook(f"{name}.hook_rot_k", k)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [batch, head, position, d_head]
        if cache is not None:
            k, v = cache.extend(layer, k, v)  # the cache holds the n_kv_head rotated keys
        z = self.attend(q, k, v, k.shape[2] - T, hook, name)  # past: positions from the cache
        return self.o_proj(z.reshape(B, T, self.n_head * self.d_head))

    def project(self, x: torch.Tensor):
        """q, k and v of every head, [batch, position, head, d_head] (Phi-3 overrides this:
        one matrix makes all three)."""
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.n_head, self.d_head)
        k = self.k_proj(x).view(B, T, self.n_kv_head, self.d_head)
        return q, k, self.v_proj(x).view(B, T, self.n_kv_head, self.d_head)

    def before_rope(self, q, k, hook: Hook | None, name: str):
        """What a family does to q and k between the projections and RoPE: nothing in Llama
        (Qwen3 normalizes each head's q and k here)."""
        return q, k

    # the recorded probes QK^T is computed from (see raw_scores): q and k after RoPE
    score_inputs = ("hook_rot_q", "hook_rot_k")

    def raw_scores(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """QK^T from recorded rotated q ([position, n_head, d_head]) and k ([position,
        n_kv_head, d_head]) -> [head, query, key], each query head with its shared key head."""
        k = k.transpose(0, 1).repeat_interleave(self.n_kv_groups, dim=0)
        return q.transpose(0, 1).float() @ k.float().transpose(-2, -1)

    def out_weight(self) -> torch.Tensor:
        return self.o_proj.weight


def _row_rope(at: torch.Tensor, inv_freq: torch.Tensor, d: int, dtype: torch.dtype):
    """cos and the signed sin for one position per row, [rows or 1, 1, 1, d]: rotate_half(t) *
    sin is roll(t, d/2) * sin with the first half's sign flipped (``_rotate_row``)."""
    cos, sin = rope_cos_sin(at, inv_freq)
    sin = torch.cat((-sin[..., : d // 2], sin[..., d // 2 :]), -1)
    return cos.view(-1, 1, 1, d).to(dtype), sin.view(-1, 1, 1, d).to(dtype)


def _rotate_row(t: torch.Tensor, cos: torch.Tensor, signed_sin: torch.Tensor) -> torch.Tensor:
    """apply_rope for one position: t * cos + rotate_half(t) * sin in three operations."""
    return torch.addcmul(t * cos, t.roll(t.shape[-1] // 2, -1), signed_sin)


class MLP(nn.Module):
    """SwiGLU: the gate's SiLU decides how much of each up-projected feature passes."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.gate_proj = Linear(config.n_embd, config.d_mlp, bias=config.mlp_bias)
        self.up_proj = Linear(config.n_embd, config.d_mlp, bias=config.mlp_bias)
        self.down_proj = Linear(config.d_mlp, config.n_embd, bias=config.mlp_bias)

    activation = staticmethod(F.silu)  # the gate's; a family with another gate sets its own

    def forward(self, x, hook: Hook | None, name: str):
        gate, up = self.gate_proj(x), self.up_proj(x)
        return gated(gate, up, self.activation, self.down_proj, hook, name)


def gated(gate, up, activation, down_proj, hook: Hook | None, name: str) -> torch.Tensor:
    """down(activation(gate) * up), with the probes every gated MLP has: ``hook_pre`` (the
    gate), ``hook_pre_linear`` (up) and ``hook_post`` (their product)."""
    if hook is not None:
        gate = hook(f"{name}.hook_pre", gate)
        up = hook(f"{name}.hook_pre_linear", up)
    post = activation(gate) * up
    if hook is not None:
        post = hook(f"{name}.hook_post", post)
    return down_proj(post)


class Block(PreNormBlock):
    # a family whose block differs only in its attention or MLP names its own classes
    attention_class: ClassVar[type[nn.Module]] = CausalSelfAttention
    mlp_class: ClassVar[type[nn.Module]] = MLP

    def __init__(self, config: LlamaConfig, layer: int):
        super().__init__(
            layer,
            RMSNorm(config.n_embd, config.rms_norm_eps),
            self.attention_class(config),
            RMSNorm(config.n_embd, config.rms_norm_eps),
            self.mlp_class(config),
            config.dropout,
        )


class Llama(DecoderLM):
    config: LlamaConfig
    config_class: ClassVar[type[LlamaConfig]] = LlamaConfig  # each family sets its own
    ln_f: RMSNorm
    block_class: ClassVar[type[nn.Module]] = Block  # a family with other blocks sets its own

    @classmethod
    def state_from_hf(cls, state: dict[str, torch.Tensor], config: LlamaConfig) -> dict:
        """A Hugging Face state dict in this module's names (a family that names its tensors
        otherwise renames them first, then calls this)."""
        return llama_state_from_hf(state, config)

    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.h = nn.ModuleList(self.block_class(config, i) for i in range(config.n_layer))
        self.ln_f = RMSNorm(config.n_embd, config.rms_norm_eps)
        self.lm_head = (
            None
            if config.tie_word_embeddings
            else nn.Linear(config.n_embd, config.vocab_size, bias=False)
        )
        # A plain float32 tensor, not a buffer: .to(float16) must not round the frequencies,
        # and it is derived from the config, so it has no place in a state dict.
        self.inv_freq = rope_inv_freq(config)
        # LongRoPE's speeds past the original context, and the factor on cos and sin
        scaling = config.rope_scaling if config.longrope else None
        self.inv_freq_long = None if scaling is None else rope_inv_freq(config, long=True)
        self.rope_scale = 1.0 if scaling is None else float(scaling["attention_factor"])
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def num_params(self) -> int:
        """Parameters, a tied embedding/unembedding counted once."""
        return sum(p.numel() for p in self.parameters())

    def kv_head_of(self, query_head: int) -> int:
        """The key/value head that query head ``query_head`` shares with its group."""
        if not 0 <= query_head < self.config.n_head:
            raise InvalidInputError(
                "error.llama.query-head", head=str(query_head), last=str(self.config.n_head - 1)
            )
        return query_head // self.config.n_kv_groups

    def rotate(
        self, x: torch.Tensor, positions, layer: int | None = None, length: int | None = None
    ) -> torch.Tensor:
        """RoPE applied to a [..., pos, head, d_head] tensor of queries or keys at ``positions``
        (a sequence of ints, one per pos), exactly as the forward pass rotates them (in
        ``layer``, for a family whose layers rotate at different speeds) in a sequence of
        ``length`` positions (LongRoPE's speeds depend on it; by default the last position's)."""
        positions = torch.as_tensor(positions, device=x.device)
        length = int(positions.max()) + 1 if length is None else length
        inv_freq = self.inv_freq_for(layer, length)
        return apply_rope(x, *rope_cos_sin(positions, inv_freq, self.rope_scale))

    def inv_freq_of(self, layer: int) -> torch.Tensor:
        """RoPE's speeds in ``layer``: the same in every layer of a Llama (not in Gemma 3)."""
        return self.inv_freq

    def inv_freq_for(self, layer: int | None, length: int) -> torch.Tensor:
        """RoPE's speeds in ``layer`` for a sequence of ``length`` positions. With LongRoPE the
        long factors' once the sequence is longer than the original context, as transformers
        decides it (the sequence's length, not the context the model may reach); otherwise
        ``inv_freq_of(layer)``."""
        if self.long_rope_at(length):
            assert self.inv_freq_long is not None  # long_rope_at says so
            return self.inv_freq_long
        return self.inv_freq if layer is None else self.inv_freq_of(layer)

    def long_rope_at(self, length: int) -> bool:
        """Whether a sequence of ``length`` positions rotates with LongRoPE's long factors."""
        scaling = self.config.rope_scaling
        if self.inv_freq_long is None or scaling is None:
            return False
        return length > scaling["original_max_position_embeddings"]

    def cache_stale(self, past: int, new: int) -> bool:
        """Whether ``new`` positions after a KV cache of ``past`` must not continue it: with
        LongRoPE, the step that takes the sequence past the original context switches every
        position to the long factors, and the cached keys and values were made with the short
        ones (transformers' Phi-3 generation then runs the whole sequence again; so does
        lmscope's)."""
        return past > 0 and not self.long_rope_at(past) and self.long_rope_at(past + new)

    def rope_theta_of(self, layer: int) -> float:
        """RoPE's base in ``layer``."""
        return self.config.rope_theta

    def embed(self, idx: torch.Tensor, past: int, hook: Hook | None):
        """Token embeddings, and RoPE's cos/sin for the positions, which every block needs."""
        T = idx.shape[1]
        positions = torch.arange(past, past + T, device=idx.device)
        rope = rope_cos_sin(positions, self.inv_freq_for(None, past + T), self.rope_scale)
        rope = tuple(t.to(self.wte.weight.dtype) for t in rope)  # once, not in every layer
        x = self.wte(idx)
        if hook is not None:
            x = hook("hook_embed", x)
        return x, (rope,)

    def unembed(self, x: torch.Tensor) -> torch.Tensor:
        """Logits from final-RMSNorm outputs: lm_head, or the token embedding when tied."""
        weight = self.wte.weight if self.lm_head is None else self.lm_head.weight
        return checked_logits(x, weight)

    def decode_step(self, idx: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """One generation step ([batch, 1] new ids after the cache) with the forward pass's
        numbers in fewer operations: with a single position, each step's rotation, norm and
        residual is one or two tensor operations, where the general path (built for many
        positions and probes) spends five to ten. At 135M parameters a step's matrix products
        take about 40 ms on one core, and the general path's small operations added about 8."""

        if not self._one_row_shortcut_fits:
            return DecoderLM.decode_step(self, idx, cache)

        def attend(step: _StepBlock, q, k, v):
            k, v = cache.extend(step.layer, k, v)
            return step.attn.attend_cached(q, k, v)

        return self._decode(idx, [cache.length], attend)

    def decode_rows(self, idx: torch.Tensor, caches: list[KVCache]) -> torch.Tensor:
        """One step for each of several sequences ([rows, 1] ids, one single-row cache each,
        of any lengths): every weight is read once for all of them, which is what a step costs;
        only attention runs row by row, over each row's own cache."""

        if not self._one_row_shortcut_fits:
            return DecoderLM.decode_rows(self, idx, caches)

        def attend(step: _StepBlock, q, k, v):
            return attend_rows(caches, step.layer, q, k, v, step.attn.attend_cached)

        return self._decode(idx, [cache.length for cache in caches], attend)

    @property
    def _one_row_shortcut_fits(self) -> bool:
        """What the one-row shortcut (_decode) assumes: Llama's own blocks (a family built on
        Llama that changes the attention or the MLP, as Qwen3's QK-norm or a mixture of
        experts, takes the general path), and every dim rotating at speeds that do not depend
        on the sequence's length."""
        return (
            type(self).block_class is Block
            and self.inv_freq_long is None
            and self.config.rotary_dims == self.config.d_head
        )

    def step_plan(self) -> list[_StepBlock]:
        """What a generation step reads from each block, gathered once and kept while the
        parameters stay as they are (``models.step_plan``)."""
        return kept_while_parameters_hold(self, "_step_plan", self._gather_step_plan)

    def _gather_step_plan(self) -> list[_StepBlock]:
        return [
            _StepBlock(
                layer=layer,
                attn=block.attn,
                ln_1=block.ln_1.weight,
                qkv=projection(block.attn.q_proj, block.attn.k_proj, block.attn.v_proj),
                o=projection(block.attn.o_proj),
                ln_2=block.ln_2.weight,
                gate_up=projection(block.mlp.gate_proj, block.mlp.up_proj),
                down=projection(block.mlp.down_proj),
            )
            for layer, block in enumerate(cast("Iterable[Block]", self.h))
        ]

    def _decode(self, idx: torch.Tensor, positions: list[int], attend) -> torch.Tensor:
        """The step itself: the weights come from ``step_plan``, norms are plain tensor
        operations, q and k of every head are rotated together, and projections whose weights
        lie one after another in memory (q, k, v; gate, up: ``pack_weights`` puts them so)
        are one product."""
        B, c = idx.shape[0], self.config
        nq, d, mlp_width = c.n_head, c.d_head, c.d_mlp
        nkv = cast("Block", self.h[0]).attn.n_kv_head
        eps = torch.tensor(c.rms_norm_eps, dtype=torch.float32, device=idx.device)
        x = self.wte(idx).view(B, c.n_embd)
        cos, sin = _row_rope(torch.tensor(positions), self.inv_freq, d, x.dtype)
        for step in self.step_plan():
            qkv = step.qkv(norm_row(x, step.ln_1, eps))
            qk = _rotate_row(qkv[:, : (nq + nkv) * d].view(B, nq + nkv, 1, d), cos, sin)
            v = qkv[:, (nq + nkv) * d :].view(B, nkv, 1, d)
            z = attend(step, qk[:, :nq], qk[:, nq:], v)
            x = x + step.o(z.reshape(B, nq * d))
            gate_up = step.gate_up(norm_row(x, step.ln_2, eps))
            x = x + step.down(F.silu(gate_up[:, :mlp_width]).mul_(gate_up[:, mlp_width:]))
        return self.unembed(norm_row(x, self.ln_f.weight, eps)).view(B, 1, -1)


class _StepBlock(NamedTuple):
    """One block as a generation step reads it (``Llama.step_plan``)."""

    layer: int
    attn: CausalSelfAttention  # its attention (the window, the scale, the fused kernel)
    ln_1: torch.Tensor  # the norms' gains
    qkv: Product  # x -> q, k, v side by side
    o: Product
    ln_2: torch.Tensor
    gate_up: Product  # x -> gate, up side by side
    down: Product


# ----------------------------------------------------------------------------------------------
# Hugging Face weights

# HF module names inside a layer -> ours (the projections keep their HF names).
_HF_LAYER_PARTS = {
    "input_layernorm.": "ln_1.",
    "post_attention_layernorm.": "ln_2.",
    "self_attn.": "attn.",
    "mlp.": "mlp.",
}


def llama_state_from_hf(state: dict[str, torch.Tensor], config: LlamaConfig) -> dict:
    """Rename a Hugging Face Llama/Mistral/Qwen2 state dict to this module's names.

    Rotary ``inv_freq`` buffers are dropped (the config determines them). With tied embeddings
    ``lm_head.weight`` may be absent or equal to the embedding, never different. Names this code
    does not know pass through unchanged, so ``load_checked`` names them.
    """
    out = {}
    for key, tensor in state.items():
        if key.endswith("rotary_emb.inv_freq"):
            continue
        name = key.removeprefix("model.")
        if name == "embed_tokens.weight":
            name = "wte.weight"
        elif name.startswith("norm."):
            name = "ln_f." + name.removeprefix("norm.")
        elif name.startswith("layers."):
            _, layer, rest = name.split(".", 2)
            for hf_part, ours in _HF_LAYER_PARTS.items():
                if rest.startswith(hf_part):
                    rest = ours + rest.removeprefix(hf_part)
                    break
            name = f"h.{layer}.{rest}"
        elif name == "lm_head.weight" and config.tie_word_embeddings:
            continue  # tied to wte; checked below
        out[name] = tensor.contiguous()
    lm_head = state.get("lm_head.weight")
    embedding = out.get("wte.weight")
    if (
        config.tie_word_embeddings
        and lm_head is not None
        and embedding is not None
        and (lm_head.shape != embedding.shape or not torch.equal(lm_head, embedding))
    ):
        raise CheckpointError("error.llama.untied-head")
    return out


def llama_state_to_hf(model: Llama) -> dict[str, torch.Tensor]:
    """Our weights under Hugging Face *ForCausalLM names (for export and comparisons). A tied
    model has no ``lm_head.weight`` entry, as transformers writes it to disk."""
    reverse = {ours: hf for hf, ours in _HF_LAYER_PARTS.items()}
    out = {}
    for key, tensor in model.state_dict().items():
        if key == "wte.weight":
            name = "model.embed_tokens.weight"
        elif key.startswith("ln_f."):
            name = "model.norm." + key.removeprefix("ln_f.")
        elif key.startswith("h."):
            _, layer, part, rest = key.split(".", 3)
            name = f"model.layers.{layer}.{reverse[part + '.']}{rest}"
        else:
            name = key  # lm_head.weight
        out[name] = tensor.detach().contiguous()
    return out
