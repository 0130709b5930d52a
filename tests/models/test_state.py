"""Building a network to load weights into: checked before anything is allocated, and never
filled with random numbers that the loaded weights replace at once."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from lmscope.errors import CheckpointError
from lmscope.models.gpt2 import GPT, GPTConfig
from lmscope.models.state import build_checked


def _state(config: GPTConfig) -> dict[str, torch.Tensor]:
    torch.manual_seed(1)
    return {k: torch.randn_like(v) for k, v in GPT(config).state_dict().items()}


def test_weights_about_to_be_loaded_are_not_drawn_at_random_first(monkeypatch):
    """Building SmolLM2 drew every weight from nn.init (5 s), and the shape-only pass on the
    meta device pulled in torch's compiler for it (3 s more), before the loaded weights
    replaced them all."""
    config = GPTConfig(vocab_size=50, n_ctx=16, n_embd=16, n_layer=2, n_head=2)
    state = _state(config)
    drawn = []

    def spy(name, real):
        def drawing(*args, **kwargs):
            drawn.append(name)
            return real(*args, **kwargs)

        return drawing

    for name in ("normal_", "uniform_", "zeros_", "ones_", "kaiming_uniform_"):
        monkeypatch.setattr(nn.init, name, spy(name, getattr(nn.init, name)))
    model = build_checked(lambda: GPT(config), config.n_layer, state, "test")
    assert drawn == []
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key]), key
    assert nn.init.normal_(torch.zeros(3)).abs().sum() > 0  # init works again afterwards


def test_a_state_that_does_not_fit_is_refused_in_one_line():
    config = GPTConfig(vocab_size=50, n_ctx=16, n_embd=16, n_layer=2, n_head=2)
    state = _state(config)
    state["wte.weight"] = torch.zeros(51, 16)
    with pytest.raises(CheckpointError, match="has shape"):
        build_checked(lambda: GPT(config), config.n_layer, state, "test")


def test_finite_weights_whose_sum_overflows_are_still_finite():
    """The finiteness check sums each tensor first (a NaN or infinity anywhere makes the sum
    non-finite); a sum that overflows on large finite weights must not be taken for one."""
    from lmscope.models.state import check_finite

    check_finite({"big": torch.full((4, 4), 3e38), "half": torch.full((8,), 6e4).half()}, "t")
    for bad, kind in ((float("nan"), "NaN"), (float("inf"), "infinite"), (-float("inf"), "inf")):
        weights = torch.full((3, 5), 3e38)
        weights[2, 4] = bad
        with pytest.raises(CheckpointError, match=f"big holds 1 {kind}"):
            check_finite({"fine": torch.ones(3), "big": weights}, "t")


def test_checking_finiteness_reads_each_tensor_once_without_a_mask(monkeypatch):
    """isfinite(t).all() builds a boolean copy of every weight (135 MB for SmolLM2) and took
    0.4 s of each load; finite weights are now passed on one sum each."""
    from lmscope.models import state as state_module

    calls = []
    real = torch.isfinite
    monkeypatch.setattr(torch, "isfinite", lambda t: calls.append(t.numel()) or real(t))
    state_module.check_finite({"a": torch.randn(100, 10), "b": torch.randn(7)}, "t")
    assert calls == [1, 1]
