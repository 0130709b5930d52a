"""Fixtures of the explanation layer's tests: a trace of the tiny random GPT-2 and the step
context the builders read (layer 1, head 2, an inner position)."""

from __future__ import annotations

import pytest
from explaintools import HEAD, LAYER, POSITION, PROMPT


@pytest.fixture(scope="session")
def trace(tiny_model):
    return tiny_model.trace(PROMPT)


@pytest.fixture(scope="session")
def context(tiny_model, trace):
    from lmscope.engine.sampling import SamplingParams
    from lmscope.explain.step_data import StepContext

    params = SamplingParams(temperature=0.7, top_k=40, top_p=0.9)
    return StepContext(tiny_model, trace, LAYER, HEAD, POSITION, params)


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory):
    """A random 2-layer Llama (4 query heads sharing 2 key/value heads) with GPT-2's vocabulary,
    so text prompts work; a context of 2,048 leaves room to move positions in the RoPE check."""
    import lmscope
    from helpers_hf import save_random_llama

    folder = tmp_path_factory.mktemp("tiny-llama")
    save_random_llama(folder, "llama", vocab_size=50257, max_position_embeddings=2048)
    return lmscope.load(folder)
