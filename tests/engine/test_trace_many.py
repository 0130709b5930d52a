"""Several prompts traced in one forward pass: each prompt's trace is the one it gets alone
(every probe, its last logits and predictions), whatever the lengths beside it."""

from __future__ import annotations

import pytest
import torch

from helpers_hf import tiny_or_random_llama
from lmscope.errors import InvalidInputError

PROMPTS = [[5, 17, 3, 99, 42, 42, 8, 0, 64, 23], [7], [11, 4, 9, 30], [2, 2, 2, 2, 2, 2]]
CASES = {
    "gpt2": None,
    "llama": ("llama", {}),
    "mistral": ("mistral", {"sliding_window": 3}),  # the window is shorter than the prompts
    "qwen2": ("qwen2", {}),
}


@pytest.fixture(scope="module", params=list(CASES))
def model(request, tmp_path_factory, tiny_model):
    return tiny_or_random_llama(CASES[request.param], tmp_path_factory, tiny_model)


def close(ours: torch.Tensor, alone: torch.Tensor) -> None:
    """Equal up to the rounding of a matrix product with more rows."""
    assert ours.shape == alone.shape
    torch.testing.assert_close(ours.float(), alone.float(), rtol=1e-4, atol=1e-5)


def test_each_prompt_gets_the_trace_it_gets_alone(model):
    traces = model.trace_many(PROMPTS, top_k=3)
    assert [t.ids for t in traces] == PROMPTS
    for ids, ours in zip(PROMPTS, traces, strict=True):
        alone = model.trace(ids, top_k=3)
        assert sorted(ours.names()) == sorted(alone.names())
        for name in alone.names():  # derived probes (scores, pattern, head results) included
            close(ours[name], alone[name])
        close(ours.last_logits, alone.last_logits)
        assert torch.equal(ours.predictions.top_ids, alone.predictions.top_ids)
        close(ours.predictions.top_probs, alone.predictions.top_probs)
        close(ours.predictions.entropy, alone.predictions.entropy)
        close(
            ours.predictions.next_token_prob.nan_to_num(),
            alone.predictions.next_token_prob.nan_to_num(),
        )
        # its own memory: a trace kept in a cache does not hold the others' numbers
        resid = ours["blocks.0.hook_resid_post"]
        assert resid.untyped_storage().nbytes() == resid.numel() * resid.element_size()


def test_a_probe_filter_and_the_edges(model):
    traces = model.trace_many(PROMPTS[:2], names=["blocks.*.hook_resid_post"])
    assert all(
        set(t.names()) == {f"blocks.{i}.hook_resid_post" for i in range(model.config.n_layer)}
        for t in traces
    )
    assert model.trace_many([]) == []
    with pytest.raises(InvalidInputError, match="top_k"):
        model.trace_many(PROMPTS, top_k=0)
    with pytest.raises(InvalidInputError):
        model.trace_many([[]])  # an empty prompt, as trace refuses it
