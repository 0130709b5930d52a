"""Sampling on anything: logits with NaN, +-inf and huge values in every dtype, and any
parameter values at all (valid or not), through the library and through the web views.

Either lmscope's one-line InvalidInputError, or a pool that is a real distribution. The
happy-path properties live in test_sampling.py; ``benchmarks/bench_fuzz.py`` runs these with
larger budgets."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmscope.engine.sampling import (
    SamplingParams,
    apply_temperature,
    candidate_pool,
    make_generator,
)
from lmscope.errors import InvalidInputError
from lmscope.explain import logits as views
from lmscope.web import schemas

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
DTYPES = [torch.float64, torch.float32, torch.float16, torch.bfloat16]
EDGES = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e308, -1e308, 3.4e38, -3.4e38, 65504.0]
EDGES += [-65504.0, 1e-300, 5e-324, 88.72, -745.2, 709.8, 1.0, -1.0]

ANY_NUMBER = st.one_of(
    st.floats(),  # NaN and infinities included
    st.integers(-(2**80), 2**80),
    st.sampled_from(EDGES),
)
ANY_VALUE = st.one_of(
    ANY_NUMBER,
    st.none(),
    st.booleans(),
    st.text(max_size=5),
    st.sampled_from([np.float32(0.5), np.int64(3), np.bool_(True), np.float64("nan"), [1], {}]),
)


@st.composite
def any_logits(draw):
    dtype = draw(st.sampled_from(DTYPES))
    size = draw(st.one_of(st.integers(1, 64), st.sampled_from([1, 2, 2048, 50257])))
    element = st.one_of(st.floats(-50, 50), st.sampled_from(EDGES), st.floats())
    head = draw(st.lists(element, min_size=1, max_size=min(size, 64)))
    values = np.resize(np.array(head, dtype=np.float64), size)
    with np.errstate(over="ignore"):
        return torch.from_numpy(values).to(dtype)


@st.composite
def any_params(draw):
    """Keyword arguments for SamplingParams, each valid or not."""
    good = {
        "temperature": st.one_of(st.floats(0, 1e6), st.sampled_from([0.0, 1e-300, 1e-6, 1e308])),
        "top_k": st.one_of(st.none(), st.integers(0, 10**6)),
        "top_p": st.one_of(st.none(), st.floats(1e-300, 1.0)),
        "min_p": st.one_of(st.none(), st.floats(0.0, 1.0)),
        "greedy": st.booleans(),
    }
    out = {}
    for name, valid in good.items():
        choice = draw(st.integers(0, 9))
        if choice < 7:
            out[name] = draw(valid)
        elif choice < 9:
            out[name] = draw(ANY_VALUE)
    return out


def _finite_distribution(probs: torch.Tensor) -> None:
    p = probs.double()
    assert torch.isfinite(p).all() and (p >= 0).all() and (p <= 1 + 1e-6).all()


@pytest.mark.slow
@FUZZ
@given(logits=any_logits(), kwargs=any_params(), seed=st.integers(0, 2**64 - 1))
def test_any_logits_and_params_give_a_pool_or_one_clear_error(logits, kwargs, seed):
    try:
        params = SamplingParams(**kwargs)
        pool = candidate_pool(logits, params)
    except InvalidInputError as err:
        assert str(err) and "\n" not in str(err)
        return
    x = logits.double()
    # Refused inputs are exactly these; everything else must give a pool.
    assert not torch.isnan(x).any() and not torch.isposinf(x).any()
    ids = pool.token_ids.tolist()
    assert 1 <= len(ids) == len(set(ids)) and all(0 <= i < len(x) for i in ids)
    assert all(math.isfinite(float(x[i])) for i in ids)  # a -inf mask is never drawn
    for probs in (pool.probs, pool.original_probs, pool.tempered_probs):
        _finite_distribution(probs)
    assert float(pool.probs.double().sum()) == pytest.approx(1.0, abs=1e-5)
    stages = list(pool.stages.values())
    assert stages == sorted(stages, reverse=True) and stages[-1] == len(ids)
    token = pool.sample(make_generator(seed))
    assert token in ids and float(pool.probs[ids.index(token)]) > 0


@pytest.mark.slow
@FUZZ
@given(logits=any_logits(), temperature=ANY_VALUE)
def test_tempered_log_probs_are_never_nan(logits, temperature):
    try:
        out = apply_temperature(logits, temperature)
    except InvalidInputError:
        return
    assert not torch.isnan(out).any() and not torch.isposinf(out).any()
    assert torch.isfinite(out).any()
    assert float(torch.logsumexp(out.double(), 0)) == pytest.approx(0, abs=1e-4)


def _strict(body) -> None:
    """What the server would send: JSON without NaN or Infinity."""
    json.dumps(body, allow_nan=False)


@st.composite
def finite_logits(draw):
    """What a real model (float16 ones included) can put out: finite, any magnitude."""
    size = draw(st.sampled_from([1, 7, 300, 301, 2048]))
    element = st.one_of(
        st.floats(-3.4e38, 3.4e38, allow_nan=False, allow_infinity=False),
        st.floats(-30, 30),
        st.sampled_from([0.0, 65504.0, -65504.0, 3.4e38, -3.4e38, 1e-45]),
    )
    head = draw(st.lists(element, min_size=1, max_size=64))
    return torch.from_numpy(np.resize(np.array(head), size)).float()


@pytest.mark.slow
@FUZZ
@given(logits=finite_logits(), position=st.integers(0, 10))
def test_web_logits_view_is_strict_json_for_any_finite_logits(logits, position):
    body = views.logits_view(logits, position).model_dump()
    _strict(body)
    schemas.LogitsView.model_validate(body)
    # The browser's probabilities, exp(logit - lse), add up to at most 1. Past float16's range
    # (65504) 9 significant digits are no longer within a nat, and no model gets there.
    if float(logits.abs().max()) <= 65504:
        top = np.asarray(body["logits"], dtype=np.float64)
        assert np.exp(top - body["lse"]).sum() <= 1 + 1e-6


@pytest.mark.slow
@FUZZ
@given(logits=finite_logits(), kwargs=any_params())
def test_web_pool_view_is_strict_json(logits, kwargs):
    from lmscope.tokenizers import CharTokenizer

    class Model:  # pool_view only reads the tokenizer
        tokenizer = CharTokenizer.from_text("".join(chr(65 + i % 50) for i in range(2048)))

    try:
        params = SamplingParams(**kwargs)
    except InvalidInputError:
        return
    if logits.numel() > len(Model.tokenizer):
        logits = logits[: len(Model.tokenizer)]
    body = views.pool_view(Model(), logits, 0, params).model_dump()
    _strict(body)
    schemas.PoolResponse.model_validate(body)
