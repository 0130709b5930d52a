"""Generation that follows a trace starts from the trace's own keys, values and last logits
(no second pass over the prompt) and draws what a run that reads the prompt itself draws."""

from __future__ import annotations

import pytest
import torch

from helpers_hf import tiny_or_random_llama
from lmscope.engine.generation import generate
from lmscope.engine.sampling import SamplingParams
from lmscope.errors import InvalidInputError

IDS = [5, 17, 3, 99, 42, 42, 8, 0, 64, 23, 7, 7, 1]
CASES = {
    "gpt2": None,
    "llama": ("llama", {}),
    "mistral": ("mistral", {"sliding_window": 5}),  # the window reaches past the prompt's start
    "qwen2": ("qwen2", {}),
}


@pytest.fixture(scope="module", params=list(CASES))
def model(request, tmp_path_factory, tiny_model):
    return tiny_or_random_llama(CASES[request.param], tmp_path_factory, tiny_model)


def close(a: torch.Tensor, b: torch.Tensor, tol: float = 1e-5) -> None:
    assert a.shape == b.shape and (a.float() - b.float()).abs().max() <= tol


@pytest.mark.parametrize("names", ["every probe", "only the cache's"])
def test_the_cache_and_logits_are_those_reading_the_prompt_gives(model, names):
    ids = IDS[: model.config.n_ctx]
    trace = (
        model.trace(ids) if names == "every probe" else model.trace(ids, names=model.cache_probes)
    )
    logits, state = model.start_from(trace)
    ref_logits, ref_state = model.start(ids)
    close(logits, ref_logits)
    assert state.ids == ids and state.cache.length == len(ids)
    for ours, theirs in zip(
        state.cache.keys + state.cache.values,
        ref_state.cache.keys + ref_state.cache.values,
        strict=True,
    ):
        close(ours, theirs)
    for token in (11, 4, 9):  # the steps after it see the same cache
        close(model.step(state, token)[0], model.step(ref_state, token)[0])


@pytest.mark.slow
@pytest.mark.parametrize("params", [SamplingParams(greedy=True), SamplingParams(temperature=0.8)])
def test_a_run_started_from_a_trace_draws_the_same_tokens(model, params, monkeypatch):
    ids = IDS[:8]
    alone = [t.id for t in generate(model, ids, 6, params, seed=3, per_position=True)]
    trace = model.trace(ids)
    spent = []
    real_start = model.start
    monkeypatch.setitem(vars(model), "start", lambda *a: spent.append(a) or real_start(*a))
    run = generate(model, ids, 6, params, seed=3, per_position=True)
    run.begin = lambda ids: model.start_from(trace)
    assert [t.id for t in run] == alone
    assert spent == []  # the prompt was not read again


def test_traces_that_cannot_start_a_run_are_refused_in_one_line(model, tiny_model):
    without = model.trace(IDS[:5], names=["blocks.*.hook_resid_post"])
    with pytest.raises(InvalidInputError, match="needs its keys and values") as err:
        model.start_from(without)
    assert "\n" not in str(err.value)
    if model is not tiny_model:
        with pytest.raises(InvalidInputError, match="another model"):
            model.start_from(tiny_model.trace(IDS[:5]))
