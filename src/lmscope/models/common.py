"""What every Transformer in models/ shares: the hook type, the KV cache, the context check and
the model's last steps (final norm, unembedding, logits probe, loss)."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from lmscope.errors import InvalidInputError

# A hook sees (probe name, tensor) and returns the tensor the model continues with.
Hook = Callable[[str, torch.Tensor], torch.Tensor]


class KVCache:
    """Keys and values of the positions seen so far, one (k, v) pair per layer.

    Tensors are [batch, head, position, d_head]. The model appends to it in place, so a
    generation loop feeds only the new token each step.
    """

    def __init__(self, n_layer: int):
        self.keys: list[torch.Tensor | None] = [None] * n_layer
        self.values: list[torch.Tensor | None] = [None] * n_layer

    @property
    def length(self) -> int:
        return 0 if self.keys[0] is None else self.keys[0].shape[2]

    def extend(self, layer: int, k: torch.Tensor, v: torch.Tensor):
        if self.keys[layer] is not None:
            k = torch.cat([self.keys[layer], k], dim=2)
            v = torch.cat([self.values[layer], v], dim=2)
        self.keys[layer], self.values[layer] = k, v
        return k, v


def wants(hook: Hook, name: str) -> bool:
    """Costly optional probes (hook_result) run only for hooks whose ``wants(name)`` says yes."""
    wants = getattr(hook, "wants", None)
    return False if wants is None else wants(name)


def check_fits(past: int, new: int, n_ctx: int) -> None:
    if past + new > n_ctx:
        raise InvalidInputError(
            f"sequence of {past + new} tokens exceeds the model's context of {n_ctx}"
        )


def checked_logits(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """x @ weight^T, refusing float16 overflow: float16 tops out at 65504; say so, rather than
    hand inf and NaN to softmax."""
    logits = F.linear(x, weight)
    if logits.dtype == torch.float16 and not torch.isfinite(logits).all():
        raise InvalidInputError(
            "this float16 model's activations overflowed (float16 holds at most 65504) on "
            "this input; load it in bfloat16 or float32 instead"
        )
    return logits


def head_of_model(model, x, hook: Hook | None, targets, last_only: bool):
    """Final norm, (the last position only, for generation), unembedding and the loss: the
    end of every forward pass. Returns (logits, loss)."""
    x = model.ln_f(x, hook, "ln_final")
    if last_only:
        x = x[:, -1:, :]
    logits = model.unembed(x)
    if hook is not None:
        logits = hook("logits", logits)
    loss = None
    if targets is not None:
        loss = F.cross_entropy(
            logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1), ignore_index=-1
        )
    return logits, loss
