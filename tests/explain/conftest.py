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
