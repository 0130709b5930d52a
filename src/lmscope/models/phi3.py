"""Phi-3: the Llama recipe (``lmscope.models.llama``) with its projections fused.

Two changes of storage, none of arithmetic:

- one ``qkv_proj`` matrix makes the queries, keys and values together: its output is the
  n_head query heads, then the n_kv_head key heads, then the n_kv_head value heads, side by side;
  Llama's q_proj, k_proj and v_proj are its three row blocks;
- one ``gate_up_proj`` matrix makes the SwiGLU gate and the up projection together: the first
  d_mlp outputs are the gate, the last d_mlp the up projection.

One matrix product in place of three (or two) reads the input once: the same numbers, fewer and
larger products. Phi-3-mini's 4k model also slides a window over its keys, as Mistral does.

Two changes to RoPE (the rotation itself is ``lmscope.models.llama``'s):

- LongRoPE (Phi-3.5-mini, Phi-4-mini, the 128k Phi-3 models): each pair's rotation speed is
  divided by a factor of its own, one list for sequences up to the context the model was first
  trained on (``original_max_position_embeddings``, 4,096) and another for longer ones, and cos
  and sin are multiplied by an attention factor;
- a partial rotary factor (Phi-4-mini: 0.75): only the first 96 of each head's 128 dims rotate.

Probes are Llama's: ``hook_q``/``hook_k``/``hook_v`` are the three parts of qkv_proj's output,
``mlp.hook_pre`` (the gate) and ``mlp.hook_pre_linear`` (up) the two halves of gate_up_proj's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from lmscope.errors import CheckpointError
from lmscope.models.common import Hook, Linear
from lmscope.models.kin import from_llama_fields, require_hf_type
from lmscope.models.llama import (
    Block,
    CausalSelfAttention,
    Llama,
    LlamaConfig,
    gated,
)


@dataclass
class Phi3Config(LlamaConfig):
    arch: ClassVar[str] = "phi3"  # the "arch" of a saved model's lmscope.json
    family: ClassVar[str] = "phi3"  # the explainer's texts; it falls back to Llama's
    model_types: ClassVar[tuple[str, ...]] = ("phi3",)
    model_type: str = "phi3"

    @classmethod
    def from_hf(cls, hf: dict) -> Phi3Config:
        """From a Hugging Face ``config.json`` dict of a ``phi3`` model: Mistral's fields (no
        biases, an optional sliding window), read as Mistral reads them, and RoPE as
        transformers' Phi3Config reads it (LongRoPE, a partial rotary factor)."""
        hf = require_hf_type(hf, cls.model_types, "Phi-3")
        params = hf.get("rope_parameters") or {}
        rope = {**params, **(hf.get("rope_scaling") or {})}
        theta = rope.get("rope_theta", hf.get("rope_theta", 10000.0))
        partial = rope.get("partial_rotary_factor", hf.get("partial_rotary_factor", 1.0))
        ctx = hf.get("max_position_embeddings") or 4096  # transformers' Phi3Config default
        plain = {**hf, "rope_parameters": {"rope_theta": theta}, "rope_scaling": None}
        plain.pop("partial_rotary_factor", None)
        return from_llama_fields(
            cls,
            plain,
            "mistral",
            "phi3",
            default_ctx=4096,
            rope_scaling=_longrope_from_hf(rope, hf, ctx),
            partial_rotary_factor=partial,
        )


def _longrope_from_hf(rope: dict, hf: dict, ctx: int) -> dict | None:
    """LongRoPE's settings from a Phi-3 config.json's rope fields, with the attention factor
    worked out as transformers does when the file leaves it out: sqrt(1 + ln s / ln L) for a
    context L extended s times (s = ``factor``, else max / original positions), 1 if s <= 1."""
    kind = rope.get("rope_type", rope.get("type", "default"))
    if kind in ("default", None):
        return None
    if kind not in ("longrope", "su", "yarn"):  # transformers' Phi-3 reads su and yarn as longrope
        raise CheckpointError("error.phi3.rope-unsupported", kind=repr(kind))
    # transformers' Phi3Config takes the top-level field (4,096 when absent) over the rope dict's
    original = hf.get("original_max_position_embeddings", 4096)
    missing = [k for k in ("short_factor", "long_factor") if k not in rope]
    if missing:
        raise CheckpointError("error.phi3.longrope-lacks", keys=", ".join(missing))
    attention = rope.get("attention_factor")
    if attention is None:
        try:
            factor = rope.get("factor") or ctx / original
            attention = math.sqrt(1 + math.log(factor) / math.log(original)) if factor > 1 else 1.0
        except (TypeError, ValueError, ZeroDivisionError):  # the config check names the field
            attention = 1.0
    return {
        "rope_type": "longrope",
        "short_factor": list(rope["short_factor"]),
        "long_factor": list(rope["long_factor"]),
        "original_max_position_embeddings": original,
        "attention_factor": attention,
    }


class Phi3Attention(CausalSelfAttention):
    """Llama's attention, its q, k and v made by one matrix."""

    def __init__(self, config: LlamaConfig):
        super().__init__(config)
        del self.q_proj, self.k_proj, self.v_proj  # one matrix holds all three
        d_q, d_kv = self.n_head * self.d_head, self.n_kv_head * self.d_head
        self.split = (d_q, d_kv, d_kv)
        self.qkv_proj = Linear(config.n_embd, sum(self.split), bias=False)

    def project(self, x: torch.Tensor):
        B, T, _ = x.shape
        q, k, v = self.qkv_proj(x).split(self.split, dim=-1)
        return (
            q.view(B, T, self.n_head, self.d_head),
            k.view(B, T, self.n_kv_head, self.d_head),
            v.view(B, T, self.n_kv_head, self.d_head),
        )


class Phi3MLP(nn.Module):
    """SwiGLU with the gate and up projections in one matrix: down(SiLU(gate) * up)."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.d_mlp = config.d_mlp
        self.gate_up_proj = Linear(config.n_embd, 2 * config.d_mlp, bias=False)
        self.down_proj = Linear(config.d_mlp, config.n_embd, bias=False)

    def forward(self, x, hook: Hook | None, name: str):
        gate, up = self.gate_up_proj(x).split(self.d_mlp, dim=-1)
        return gated(gate, up, F.silu, self.down_proj, hook, name)


class Phi3Block(Block):
    attention_class = Phi3Attention
    mlp_class = Phi3MLP


class Phi3(Llama):
    config: Phi3Config
    config_class = Phi3Config
    block_class = Phi3Block
