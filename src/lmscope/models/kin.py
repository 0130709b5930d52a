"""What the families built on Llama's code share: their config.json is checked and read through
Llama's reader, and the QK-norm attention of Qwen3 and Gemma 3 is one class. Every family is
built from a Hugging Face state dict the same way (``models.state.build_from_hf``).

A new family (``qwen3.py``, ``phi3.py``, ``gemma3.py``, ``moe.py``) says only what differs: which
``model_type`` values it accepts, the fields it adds, its blocks, and (``state_from_hf``) how its
tensor names map to ours. Its network names its config with ``config_class``; with blocks of its
own, generation takes the general path (Llama's one-row shortcut reads Llama's blocks only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import torch

from lmscope.errors import CheckpointError, InvalidInputError
from lmscope.models.common import Hook
from lmscope.models.fields import require_mapping
from lmscope.models.llama import CausalSelfAttention, LlamaConfig, RMSNorm

C = TypeVar("C")


def require_hf_type(hf: Any, types: tuple[str, ...], family: str) -> dict:
    """``hf`` as a mapping whose ``model_type`` is one of ``types``; else one line naming the
    family and what it accepts."""
    hf = require_mapping(hf, "config.json")
    if hf.get("model_type") not in types:
        raise CheckpointError(
            "error.family.hf-type",
            type=repr(hf.get("model_type")),
            family=family,
            types=", ".join(types),
        )
    return hf


def config_in_json(make: Callable[[], C]) -> C:
    """``make()``, with a bad value of the config (a wrong type, an impossible size) said as a
    fault of the config.json it came from."""
    try:
        return make()
    except (InvalidInputError, TypeError) as err:
        why = err if isinstance(err, InvalidInputError) else str(err)
        raise CheckpointError("error.config.in-config-json", why=why) from None


def from_llama_fields(
    config_class: Callable[..., C],
    hf: dict,
    read_as: str,
    model_type: str,
    default_ctx: int,
    **more,
) -> C:
    """A ``config_class`` from the fields a family shares with Llama, read as Llama reads a
    ``read_as`` model (``"llama"`` or ``"mistral"``), with its own ``model_type`` and ``more``."""
    base = {
        **hf,
        "model_type": read_as,
        "max_position_embeddings": hf.get("max_position_embeddings") or default_ctx,
    }
    fields = LlamaConfig.from_hf(base).to_dict()
    return config_in_json(lambda: config_class(**{**fields, "model_type": model_type, **more}))


class QKNormAttention(CausalSelfAttention):
    """Llama's attention with an RMSNorm on each head's q and k before RoPE (QK-norm: Qwen3,
    Qwen3-MoE and, with its (1 + w) norm, Gemma 3)."""

    norm_class: type[RMSNorm] = RMSNorm  # Gemma 3 sets its own

    def __init__(self, config: LlamaConfig):
        super().__init__(config)
        self.q_norm = self.norm_class(config.d_head, config.rms_norm_eps)
        self.k_norm = self.norm_class(config.d_head, config.rms_norm_eps)

    def before_rope(self, q: torch.Tensor, k: torch.Tensor, hook: Hook | None, name: str):
        if hook is None:
            return self.q_norm(q, None, ""), self.k_norm(k, None, "")
        return self.q_norm(q, hook, f"{name}.q_norm"), self.k_norm(k, hook, f"{name}.k_norm")
