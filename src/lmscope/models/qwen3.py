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

from lmscope.errors import CheckpointError
from lmscope.models.kin import QKNormAttention, from_llama_fields, require_hf_type
from lmscope.models.llama import Block, Llama, LlamaConfig


@dataclass
class Qwen3Config(LlamaConfig):
    arch: ClassVar[str] = "qwen3"  # the "arch" of a saved model's lmscope.json
    family: ClassVar[str] = "qwen3"  # the explainer's texts; it falls back to Llama's
    model_types: ClassVar[tuple[str, ...]] = ("qwen3",)
    model_type: str = "qwen3"

    @classmethod
    def from_hf(cls, hf: dict) -> Qwen3Config:
        """From a Hugging Face ``config.json`` dict of a ``qwen3`` model: Llama's fields (biases
        on q, k, v and o when ``attention_bias``); Qwen3 models use no sliding window."""
        hf = require_hf_type(hf, cls.model_types, "Qwen3")
        if hf.get("use_sliding_window"):
            raise CheckpointError("error.qwen3.sliding-window", type="qwen3")
        # a context of 32,768 when the file names none, as transformers' Qwen3Config
        return from_llama_fields(cls, hf, "llama", "qwen3", default_ctx=32768)


class Qwen3Attention(QKNormAttention):
    """Llama's attention with an RMSNorm on each head's q and k before RoPE."""


class Qwen3Block(Block):
    attention_class = Qwen3Attention


class Qwen3(Llama):
    config: Qwen3Config
    config_class = Qwen3Config
    block_class = Qwen3Block
