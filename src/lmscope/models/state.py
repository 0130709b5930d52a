"""Putting weights into a model: the one check that a state dict fits before it is loaded."""

from __future__ import annotations

import torch
from torch import nn

from lmscope.errors import CheckpointError


def load_checked(
    model: nn.Module,
    state: dict[str, torch.Tensor],
    source: str,
    *,
    allow_nonfinite: bool = False,
) -> nn.Module:
    """Load ``state`` into ``model`` (as float32) after checking that every name is there, no
    name is extra, every shape matches and (unless ``allow_nonfinite``, for people studying
    broken models) every value is finite; a failure is one line naming the first culprit."""
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing or unexpected:
        detail = f"missing {missing[:3]}" if missing else f"unexpected {unexpected[:3]}"
        raise CheckpointError(f"the weights in {source} do not fit the model: {detail}")
    for key, tensor in state.items():
        if tensor.shape != expected[key].shape:
            raise CheckpointError(
                f"the weights in {source} do not fit the model: {key} has shape "
                f"{tuple(tensor.shape)}, the config implies {tuple(expected[key].shape)}"
            )
    if not allow_nonfinite:
        check_finite(state, source)
    model.load_state_dict({k: v.float() for k, v in state.items()})
    return model.eval()


def check_finite(state: dict[str, torch.Tensor], source: str) -> None:
    """One vectorised pass per tensor; the first NaN or infinity is named with its tensor."""
    for key, tensor in state.items():
        if tensor.is_floating_point() and not torch.isfinite(tensor).all():
            bad = (~torch.isfinite(tensor)).sum().item()
            kind = "NaN" if torch.isnan(tensor).any() else "infinite"
            raise CheckpointError(
                f"the weights in {source} are not finite: {key} holds {bad:,} {kind} value"
                f"{'s' if bad != 1 else ''}. Pass allow_nonfinite=True (--allow-nonfinite) to "
                "study a broken model anyway"
            )
