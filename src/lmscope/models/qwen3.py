"""Qwen3: the Llama recipe (``lmscope.models.llama``) with one change, QK-norm.

Between the projections and RoPE, each head's query and key pass through an RMSNorm of their own
(one gain of ``d_head`` numbers for every query head, one for every key head):

    q = RoPE(RMSNorm_q(x W_Q)),    k = RoPE(RMSNorm_k(x W_K)),    v = x W_V

so a query and a key enter QK^T with a root mean square fixed by their gains, whatever the
residual stream's scale. A score can then not grow without bound as the two grow, the cause of
the loss spikes the norm was added against. Nothing else differs from Llama: RMSNorm before
attention and MLP, grouped-query attention, SwiGLU, tied or separate unembedding.

Probes are Llama's, plus the two norms' own under TransformerLens's names:
``blocks.L.attn.q_norm.hook_scale`` / ``hook_normalized`` / ``hook_out`` (and ``k_norm``), between
``hook_q`` (the projection) and ``hook_rot_q`` (the rotated, normalized query).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from lmscope.errors import CheckpointError, InvalidInputError
from lmscope.models.common import DecoderLM, Hook
from lmscope.models.fields import require_mapping
from lmscope.models.llama import (
    Block,
    CausalSelfAttention,
    Llama,
    LlamaConfig,
    RMSNorm,
    llama_state_from_hf,
)
from lmscope.models.state import build_checked

HF_MODEL_TYPES = ("qwen3",)
_HF_DEFAULT_CTX = 32768  # transformers' Qwen3Config default


@dataclass
class Qwen3Config(LlamaConfig):
    arch: ClassVar[str] = "qwen3"  # the "arch" of a saved model's lmscope.json
    family: ClassVar[str] = "qwen3"  # the explainer's texts; it falls back to Llama's
    model_types: ClassVar[tuple[str, ...]] = HF_MODEL_TYPES
    model_type: str = "qwen3"

    @classmethod
    def from_hf(cls, hf: dict) -> Qwen3Config:
        """From a Hugging Face ``config.json`` dict of a ``qwen3`` model."""
        hf = require_mapping(hf, "config.json")
        if hf.get("model_type") not in cls.model_types:
            raise CheckpointError(
                "error.family.hf-type",
                type=repr(hf.get("model_type")),
                family="Qwen3",
                types=", ".join(HF_MODEL_TYPES),
            )
        return cls.from_llama_fields(hf, "qwen3")

    @classmethod
    def from_llama_fields(cls, hf: dict, model_type: str, **more):
        """Read the fields a family shares with Llama as Llama reads them (biases on q, k, v
        and o when ``attention_bias``), then add ``more``. Qwen3 models use no sliding window."""
        if hf.get("use_sliding_window"):
            raise CheckpointError("error.qwen3.sliding-window", type=model_type)
        llama = {
            **hf,
            "model_type": "llama",
            "max_position_embeddings": hf.get("max_position_embeddings") or _HF_DEFAULT_CTX,
        }
        fields = LlamaConfig.from_hf(llama).to_dict()
        try:
            return cls(**{**fields, "model_type": model_type, **more})
        except (InvalidInputError, TypeError) as err:
            why = err if isinstance(err, InvalidInputError) else str(err)
            raise CheckpointError("error.config.in-config-json", why=why) from None


class Qwen3Attention(CausalSelfAttention):
    """Llama's attention with an RMSNorm on each head's q and k before RoPE."""

    def __init__(self, config: LlamaConfig):
        super().__init__(config)
        self.q_norm = RMSNorm(config.d_head, config.rms_norm_eps)
        self.k_norm = RMSNorm(config.d_head, config.rms_norm_eps)

    def before_rope(self, q: torch.Tensor, k: torch.Tensor, hook: Hook | None, name: str):
        if hook is None:
            return self.q_norm(q, None, ""), self.k_norm(k, None, "")
        return self.q_norm(q, hook, f"{name}.q_norm"), self.k_norm(k, hook, f"{name}.k_norm")


class Qwen3Block(Block):
    attention_class = Qwen3Attention


class Qwen3(Llama):
    config: Qwen3Config
    block_class = Qwen3Block
    # a generation step takes the general path (Llama's one-row shortcut has no QK-norm)
    decode_step = DecoderLM.decode_step
    decode_rows = DecoderLM.decode_rows


def build_qwen3(
    hf_config: dict, hf_state: dict[str, torch.Tensor], source: str, *, allow_nonfinite=False
) -> Qwen3:
    """A float32 Qwen3 in eval mode from a Hugging Face config.json dict and state dict (the
    norms' ``self_attn.q_norm``/``k_norm`` become ``attn.q_norm``/``k_norm``)."""
    config = Qwen3Config.from_hf(hf_config)
    state = llama_state_from_hf(hf_state, config)
    return build_checked(
        lambda: Qwen3(config), config.n_layer, state, source, allow_nonfinite=allow_nonfinite
    )
