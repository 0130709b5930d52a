"""Tests for lmscope.engine.sampling: validation, hand-worked examples, numerics and properties."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmscope.engine.sampling import (
    GREEDY_TEMPERATURE,
    CandidatePool,
    SamplingParams,
    apply_temperature,
    candidate_pool,
    make_generator,
    sample_token,
)
from lmscope.errors import InvalidInputError

INF = math.inf
F16_MAX = 65504.0
LOGITS = [2.0, 1.0, 0.0, -1.0]


def softmax(values: list[float], temperature: float = 1.0) -> list[float]:
    """Reference softmax written out by hand, in Python floats."""
    top = max(values)
    weights = [math.exp((v - top) / temperature) for v in values]
    total = sum(weights)
    return [w / total for w in weights]


def entropy(probs: torch.Tensor) -> float:
    p = probs.to(torch.float64)
    p = p[p > 0]
    return float(-(p * p.log()).sum())


# --- parameter validation -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"temperature": -0.5}, "temperature must be a finite number >= 0, got -0.5"),
        ({"temperature": math.nan}, "temperature"),
        ({"temperature": INF}, "temperature"),
        ({"temperature": -INF}, "temperature"),
        ({"temperature": "hot"}, "temperature"),
        ({"temperature": True}, "temperature"),
        ({"top_k": -1}, "top_k must be an integer >= 0 (0 or None = off), got -1"),
        ({"top_k": 2.5}, "top_k"),
        ({"top_k": 3.0}, "top_k"),
        ({"top_k": True}, "top_k"),
        ({"top_p": 1.5}, "top_p must be in (0, 1] (or None = off), got 1.5"),
        ({"top_p": 0.0}, "top_p"),
        ({"top_p": -0.1}, "top_p"),
        ({"top_p": math.nan}, "top_p"),
        ({"top_p": "0.5"}, "top_p"),
        ({"min_p": 1.01}, "min_p must be in [0, 1] (or None = off), got 1.01"),
        ({"min_p": -0.01}, "min_p"),
        ({"min_p": math.nan}, "min_p"),
        ({"greedy": "yes"}, "greedy must be True or False"),
        ({"greedy": 1}, "greedy"),
    ],
)
def test_bad_params_raise_readable_error(kwargs: dict, fragment: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        SamplingParams(**kwargs)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"temperature": 0},
        {"temperature": 1e-4, "top_k": 0, "top_p": 1.0, "min_p": 0.0},
        {"temperature": 100.0, "top_k": 1, "top_p": 1e-9, "min_p": 1.0, "greedy": True},
        {"temperature": np.float32(0.7), "top_k": np.int64(5), "greedy": np.bool_(False)},
    ],
)
def test_valid_params_are_normalised_to_plain_python(kwargs: dict) -> None:
    params = SamplingParams(**kwargs)
    data = params.to_dict()
    json.dumps(data)  # plain Python types only
    assert type(data["temperature"]) is float
    assert type(data["greedy"]) is bool
    assert SamplingParams.from_dict(data) == params


def test_params_are_frozen() -> None:
    params = SamplingParams()
    with pytest.raises(AttributeError):
        params.temperature = 2.0  # type: ignore[misc]


def test_from_dict_defaults_and_rejections() -> None:
    assert SamplingParams.from_dict({}) == SamplingParams()
    assert SamplingParams.from_dict({"top_k": 5}).top_k == 5
    with pytest.raises(InvalidInputError, match="unknown sampling parameter.*topk"):
        SamplingParams.from_dict({"topk": 5})
    with pytest.raises(InvalidInputError, match="mapping"):
        SamplingParams.from_dict([("top_k", 5)])  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="top_p"):
        SamplingParams.from_dict({"top_p": 2})


def test_is_greedy() -> None:
    assert SamplingParams(greedy=True).is_greedy
    assert SamplingParams(temperature=0).is_greedy
    assert SamplingParams(temperature=GREEDY_TEMPERATURE / 2).is_greedy
    assert not SamplingParams(temperature=1e-4).is_greedy


# --- logits validation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("logits", "fragment"),
    [
        ([1.0, math.nan], "NaN"),
        ([1.0, INF], "+inf"),
        ([-INF, -INF], "all logits are -inf"),
        ([], "empty"),
        ([[1.0, 2.0]], "1-D"),
        (3.0, "1-D"),
        (["a", "b"], "logits"),
        ([1.0, None], "logits"),
        ([[1.0], [1.0, 2.0]], "logits"),
        (torch.tensor([True, False]), "real numbers"),
        (torch.tensor([1 + 1j]), "real numbers"),
    ],
)
def test_bad_logits_raise(logits: object, fragment: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        candidate_pool(logits, SamplingParams())
    assert fragment in str(info.value)


def test_params_must_be_sampling_params() -> None:
    with pytest.raises(InvalidInputError, match="SamplingParams"):
        candidate_pool(LOGITS, {"top_k": 2})  # type: ignore[arg-type]


def test_accepts_tensors_arrays_and_lists_alike() -> None:
    params = SamplingParams(temperature=0.8, top_k=3)
    inputs = [
        LOGITS,
        [2, 1, 0, -1],
        np.array(LOGITS, dtype=np.float16),
        torch.tensor(LOGITS, dtype=torch.bfloat16),
        torch.tensor(LOGITS, dtype=torch.float64, requires_grad=True),
        torch.tensor([2, 1, 0, -1]),
    ]
    pools = [candidate_pool(x, params) for x in inputs]
    for pool in pools:
        assert pool.token_ids.dtype == torch.int64
        assert pool.probs.dtype == torch.float32
        assert torch.equal(pool.token_ids, pools[0].token_ids)
        assert torch.equal(pool.probs, pools[0].probs)


# --- hand-worked examples: logits [2, 1, 0, -1] ---------------------------------------------


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0])
def test_no_filters_gives_the_tempered_softmax(temperature: float) -> None:
    pool = candidate_pool(LOGITS, SamplingParams(temperature=temperature))
    expected = softmax(LOGITS, temperature)
    assert pool.token_ids.tolist() == [0, 1, 2, 3]
    assert pool.tempered_probs.tolist() == pytest.approx(expected, rel=1e-6)
    assert pool.probs.tolist() == pytest.approx(expected, rel=1e-6)
    assert pool.original_probs.tolist() == pytest.approx(softmax(LOGITS), rel=1e-6)
    assert pool.stages == {"vocab": 4, "nonzero": 4, "top_k": 4, "top_p": 4, "min_p": 4}


def test_apply_temperature_returns_float32_log_probs() -> None:
    out = apply_temperature(LOGITS, 0.5)
    assert out.dtype == torch.float32
    assert out.exp().tolist() == pytest.approx(softmax(LOGITS, 0.5), rel=1e-6)
    greedy = apply_temperature([1.0, 3.0, 3.0], 0)
    assert greedy.tolist() == [-INF, 0.0, -INF]
    with pytest.raises(InvalidInputError, match="temperature"):
        apply_temperature(LOGITS, -1)


@pytest.mark.parametrize(("k", "ids"), [(1, [0]), (2, [0, 1]), (3, [0, 1, 2]), (99, [0, 1, 2, 3])])
def test_top_k_by_hand(k: int, ids: list[int]) -> None:
    pool = candidate_pool(LOGITS, SamplingParams(top_k=k))
    assert pool.token_ids.tolist() == ids
    kept = softmax(LOGITS)[: len(ids)]
    assert pool.probs.tolist() == pytest.approx([p / sum(kept) for p in kept], rel=1e-6)


# T=1 probs: 0.6439, 0.2369, 0.0871, 0.0321 -> cumulative 0.6439, 0.8808, 0.9679, 1.
@pytest.mark.parametrize(("p", "size"), [(0.5, 1), (0.6439, 1), (0.7, 2), (0.9, 3), (0.99, 4)])
def test_top_p_by_hand(p: float, size: int) -> None:
    pool = candidate_pool(LOGITS, SamplingParams(top_p=p))
    assert pool.token_ids.tolist() == list(range(size))
    assert pool.stages["top_p"] == size


# Ratios to the max at T=1: 1, e^-1=0.368, e^-2=0.135, e^-3=0.050; at T=2: 1, 0.607, 0.368, 0.223.
@pytest.mark.parametrize(
    ("temperature", "min_p", "size"),
    [(1.0, 0.5, 1), (1.0, 0.3, 2), (1.0, 0.1, 3), (1.0, 0.0, 4), (2.0, 0.5, 2), (2.0, 0.3, 3)],
)
def test_min_p_by_hand(temperature: float, min_p: float, size: int) -> None:
    pool = candidate_pool(LOGITS, SamplingParams(temperature=temperature, min_p=min_p))
    assert pool.token_ids.tolist() == list(range(size))


def test_min_p_one_keeps_every_tie_of_the_max() -> None:
    pool = candidate_pool([1.0, 5.0, 5.0, 2.0], SamplingParams(min_p=1.0))
    assert pool.token_ids.tolist() == [1, 2]
    assert pool.probs.tolist() == [0.5, 0.5]


# top_k=2, top_p=0.7, min_p=0.5. top-p adds probabilities renormalised over the top-k survivors:
#   T=0.5: scaled [4, 2]    -> 1/(1+e^-2)   = 0.881 >= 0.7 -> [0]
#   T=1:   scaled [2, 1]    -> 1/(1+e^-1)   = 0.731 >= 0.7 -> [0]
#   T=2:   scaled [1, 0.5]  -> 1/(1+e^-0.5) = 0.622 <  0.7 -> [0, 1]; min-p ratio 0.607 >= 0.5
@pytest.mark.parametrize(("temperature", "ids"), [(0.5, [0]), (1.0, [0]), (2.0, [0, 1])])
def test_all_filters_by_hand(temperature: float, ids: list[int]) -> None:
    params = SamplingParams(temperature=temperature, top_k=2, top_p=0.7, min_p=0.5)
    pool = candidate_pool(LOGITS, params)
    assert pool.token_ids.tolist() == ids
    tempered = softmax(LOGITS, temperature)
    kept = tempered[: len(ids)]
    assert pool.probs.tolist() == pytest.approx([p / sum(kept) for p in kept], rel=1e-6)
    assert pool.tempered_probs.tolist() == pytest.approx(kept, rel=1e-6)
    assert pool.original_probs.tolist() == pytest.approx(softmax(LOGITS)[: len(ids)], rel=1e-6)
    assert pool.stages["top_k"] == 2
    assert pool.stages["min_p"] == len(ids)
    assert pool.params is params


def test_top_p_counts_mass_after_top_k() -> None:
    # Unfiltered, 0.644 < 0.7 needs two tokens; renormalised over the top two, 0.731 needs one.
    assert len(candidate_pool(LOGITS, SamplingParams(top_p=0.7))) == 2
    assert len(candidate_pool(LOGITS, SamplingParams(top_k=2, top_p=0.7))) == 1


def test_top_k_ties_go_to_the_lowest_ids() -> None:
    pool = candidate_pool([0.0, 3.0, 3.0, 3.0, 1.0], SamplingParams(top_k=2))
    assert pool.token_ids.tolist() == [1, 2]


def test_top_and_len() -> None:
    pool = candidate_pool(LOGITS, SamplingParams())
    assert len(pool) == 4
    top = pool.top(2)
    assert [i for i, _ in top] == [0, 1]
    assert all(type(i) is int and type(p) is float for i, p in top)
    assert pool.top(0) == []
    assert len(pool.top(10)) == 4
    with pytest.raises(InvalidInputError, match="n must be"):
        pool.top(-1)


# --- greedy and temperature limits ----------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [SamplingParams(greedy=True), SamplingParams(temperature=0), SamplingParams(temperature=1e-6)],
)
def test_greedy_is_the_argmax_with_lowest_id_on_ties(params: SamplingParams) -> None:
    logits = [0.5, 4.0, -2.0, 4.0, 1.0]
    pool = candidate_pool(logits, params)
    assert pool.token_ids.tolist() == [1]
    assert pool.probs.tolist() == [1.0]
    assert pool.original_probs.tolist() == pytest.approx([softmax(logits)[1]], rel=1e-6)
    assert pool.stages["top_k"] == pool.stages["top_p"] == pool.stages["min_p"] == 1
    assert all(sample_token(logits, params, make_generator(s)) == 1 for s in range(20))


def test_greedy_flag_ignores_temperature_and_filters() -> None:
    params = SamplingParams(temperature=50.0, top_k=3, top_p=0.9, min_p=0.0, greedy=True)
    pool = candidate_pool(LOGITS, params)
    assert pool.token_ids.tolist() == [0]
    assert pool.tempered_probs.tolist() == pytest.approx([softmax(LOGITS, 50.0)[0]], rel=1e-6)


@pytest.mark.parametrize(
    "values",
    [
        [0.5, 4.0, -2.0, 4.0, 1.0],  # a tie: the lowest id
        [-INF, 3.0, -INF, 2.0],  # masked tokens
        [0.0, -800.0, 1.0],  # a tail float64 rounds to probability 0 (the general path counts)
        [1e30, -1e30, 0.0],  # a range float32's exp cannot hold
        [7.0] * 5,
    ],
)
@pytest.mark.parametrize(
    "params", [SamplingParams(greedy=True), SamplingParams(temperature=0)], ids=["T=1", "T=0"]
)
def test_greedy_pool_of_float32_logits_equals_the_float64_path(
    values: list[float], params: SamplingParams
) -> None:
    # A model's float32 logits take a short path when greedy; the same numbers as float64
    # take the general one, and the two pools must agree bit for bit.
    quick = candidate_pool(torch.tensor(values, dtype=torch.float32), params)
    general = candidate_pool(torch.tensor(values, dtype=torch.float64), params)
    assert quick.token_ids.tolist() == general.token_ids.tolist()
    assert quick.stages == general.stages
    for name in ("probs", "original_probs", "tempered_probs"):
        got, want = getattr(quick, name), getattr(general, name)
        assert got.dtype == want.dtype == torch.float32
        assert torch.equal(got, want), name


@pytest.mark.parametrize(
    ("values", "match"),
    [([1.0, math.nan], "NaN"), ([1.0, INF], r"\+inf"), ([-INF, -INF], "all logits are -inf")],
)
def test_greedy_float32_logits_are_still_checked(values: list[float], match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        candidate_pool(torch.tensor(values, dtype=torch.float32), SamplingParams(greedy=True))


def test_low_temperature_converges_to_greedy() -> None:
    logits = torch.tensor([0.3, 1.2, 1.15, -0.4, 0.9])
    previous = 0.0
    for temperature in [1.0, 0.3, 0.1, 0.03, 0.01, 1e-3, 1e-4]:
        top = candidate_pool(logits, SamplingParams(temperature=temperature))
        assert top.token_ids[0] == 1
        assert float(top.probs[0]) >= previous
        previous = float(top.probs[0])
    assert previous == pytest.approx(1.0, abs=1e-12)
    low = SamplingParams(temperature=1e-4)
    assert all(sample_token(logits, low, make_generator(s)) == 1 for s in range(50))


def test_entropy_increases_with_temperature() -> None:
    logits = torch.randn(50, generator=make_generator(7)) * 3
    temperatures = np.geomspace(1e-2, 100, 40)
    entropies = [entropy(apply_temperature(logits, float(t)).double().exp()) for t in temperatures]
    assert all(b > a for a, b in zip(entropies, entropies[1:], strict=False))
    assert entropies[-1] == pytest.approx(math.log(50), rel=1e-3)  # nearly uniform


@pytest.mark.parametrize("temperature", [1e-4, 1e-3, 0.5, 1.0, 10.0, 100.0])
@pytest.mark.parametrize(
    "logits",
    [
        torch.tensor([1e30, -1e30, 0.0]),
        torch.tensor([-1e30, -1e30, 1e30, 1e30]),
        torch.tensor([F16_MAX, -F16_MAX, 0.0], dtype=torch.float16),
        torch.tensor([-INF, 2.0, -INF, -INF]),
        torch.tensor([-INF, 0.0, 1e-30, -INF]),
        torch.zeros(7, dtype=torch.bfloat16),
        torch.full((5,), -1e30),
        torch.tensor([1.7e308, -1.7e308], dtype=torch.float64),
        torch.tensor([torch.finfo(torch.float32).max, 0.0, -1.0]),
    ],
)
def test_extreme_inputs_never_break(logits: torch.Tensor, temperature: float) -> None:
    for params in [
        SamplingParams(temperature=temperature),
        SamplingParams(temperature=temperature, top_k=2, top_p=0.5, min_p=0.1),
    ]:
        pool = candidate_pool(logits, params)
        assert len(pool) >= 1
        for probs in (pool.probs, pool.original_probs, pool.tempered_probs):
            assert torch.isfinite(probs).all()
        assert float(pool.probs.double().sum()) == pytest.approx(1.0, abs=1e-6)
        assert pool.sample(make_generator(0)) in pool.token_ids.tolist()
        assert torch.isfinite(apply_temperature(logits, temperature)).any()


def test_masked_and_underflowing_tokens_are_dropped() -> None:
    pool = candidate_pool([-INF, 1.0, -INF, 0.0], SamplingParams())
    assert pool.token_ids.tolist() == [1, 3]
    assert pool.stages["vocab"] == 4 and pool.stages["nonzero"] == 2
    # At T=1e-4 a gap of 1 is a factor exp(-10000): zero in float64, so not a candidate.
    cold = candidate_pool([1.0, 0.0, 0.99995], SamplingParams(temperature=1e-4))
    assert cold.token_ids.tolist() == [0, 2]
    assert cold.stages["nonzero"] == 2


def test_all_equal_logits_give_a_uniform_pool_in_id_order() -> None:
    pool = candidate_pool(torch.full((6,), 3.5, dtype=torch.float16), SamplingParams())
    assert pool.token_ids.tolist() == list(range(6))
    assert pool.probs.tolist() == pytest.approx([1 / 6] * 6, rel=1e-6)


# --- sampling and reproducibility -----------------------------------------------------------


@pytest.mark.slow
def test_empirical_frequencies_match_pool_probs() -> None:
    logits = [math.log(p) for p in (0.5, 0.25, 0.15, 0.07, 0.03)]
    pool = candidate_pool(logits, SamplingParams(top_k=4))  # renormalised: /0.97
    generator = make_generator(1234)
    draws = 20_000
    counts = np.bincount([pool.sample(generator) for _ in range(draws)], minlength=5)
    assert counts[4] == 0  # filtered out, never drawn
    expected = pool.probs.double().numpy() * draws
    chi_square = float((((counts[:4] - expected) ** 2) / expected).sum())
    assert chi_square < 16.27  # 99.9th percentile of chi-square with 3 degrees of freedom


def test_same_seed_same_tokens_and_different_seeds_differ() -> None:
    logits = torch.randn(100, generator=make_generator(3))
    params = SamplingParams(temperature=1.3, top_p=0.95)

    def run(seed: int) -> list[int]:
        generator = make_generator(seed)
        return [sample_token(logits, params, generator) for _ in range(30)]

    assert run(42) == run(42)
    assert run(42) != run(43)


def test_same_values_in_other_dtypes_sample_identically() -> None:
    values = torch.randn(64, generator=make_generator(5)).to(torch.float16)
    params = SamplingParams(temperature=0.9, top_k=20)
    tokens = set()
    for logits in (values, values.float(), values.double().numpy(), values.tolist()):
        tokens.add(tuple(sample_token(logits, params, make_generator(s)) for s in range(10)))
    assert len(tokens) == 1


def test_each_sample_uses_exactly_one_draw() -> None:
    pool = candidate_pool(LOGITS, SamplingParams())
    greedy = candidate_pool(LOGITS, SamplingParams(greedy=True))
    a, b = make_generator(9), make_generator(9)
    pool.sample(a)
    greedy.sample(b)
    assert torch.equal(a.get_state(), b.get_state())


def test_global_rng_is_used_without_a_generator() -> None:
    params = SamplingParams(temperature=2.0)
    torch.manual_seed(0)
    first = [sample_token(LOGITS, params) for _ in range(20)]
    torch.manual_seed(0)
    assert [sample_token(LOGITS, params) for _ in range(20)] == first


def test_make_generator() -> None:
    assert torch.equal(make_generator(2**64 - 1).get_state(), make_generator(2**64 - 1).get_state())
    assert isinstance(make_generator(None), torch.Generator)
    for bad in (-1, 2**64, 1.5, True, "7"):
        with pytest.raises(InvalidInputError, match="seed must be"):
            make_generator(bad)  # type: ignore[arg-type]


def test_pool_sample_never_draws_a_zero_probability_entry() -> None:
    pool = CandidatePool(
        token_ids=torch.tensor([4, 8, 9]),
        probs=torch.tensor([1.0, 0.0, 0.0]),
        original_probs=torch.tensor([0.5, 0.0, 0.0]),
        tempered_probs=torch.tensor([0.5, 0.0, 0.0]),
    )
    assert {pool.sample(make_generator(s)) for s in range(200)} == {4}


# --- properties -----------------------------------------------------------------------------

SPECIAL = [0.0, -INF, 1e30, -1e30, F16_MAX, -F16_MAX, 1e-30, 88.7, -745.0]


@st.composite
def logits_vectors(draw: st.DrawFn) -> torch.Tensor:
    dtype = draw(st.sampled_from([torch.float64, torch.float32, torch.float16, torch.bfloat16]))
    limit = F16_MAX if dtype == torch.float16 else 1e30
    element = st.one_of(
        st.floats(-limit, limit, allow_nan=False),
        st.floats(-20, 20),
        st.sampled_from([v for v in SPECIAL if abs(v) <= limit]),
    )
    values = draw(st.lists(element, min_size=1, max_size=60))
    anchor = draw(st.integers(0, len(values) - 1))
    values[anchor] = draw(st.floats(-limit, limit, allow_nan=False))  # at least one finite
    return torch.tensor(values, dtype=torch.float64).to(dtype)


@st.composite
def sampling_params(draw: st.DrawFn) -> SamplingParams:
    return SamplingParams(
        temperature=draw(st.one_of(st.floats(1e-4, 100), st.sampled_from([0.0, 1e-4, 1.0, 100.0]))),
        top_k=draw(st.one_of(st.none(), st.integers(0, 80))),
        top_p=draw(st.one_of(st.none(), st.floats(1e-6, 1.0), st.just(1.0))),
        min_p=draw(st.one_of(st.none(), st.floats(0.0, 1.0), st.sampled_from([0.0, 1.0]))),
        greedy=draw(st.integers(0, 4)) == 0,  # mostly off, so the filters get exercised
    )


def reference_log_probs(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    x = logits.double()
    return torch.log_softmax((x - x.max()) / temperature, dim=0)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logits=logits_vectors(), params=sampling_params(), seed=st.integers(0, 2**32))
def test_pool_invariants(logits: torch.Tensor, params: SamplingParams, seed: int) -> None:
    pool = candidate_pool(logits, params)
    n = len(pool)
    ids = pool.token_ids.tolist()

    assert n >= 1
    assert len(set(ids)) == n and all(0 <= i < logits.numel() for i in ids)
    for probs in (pool.probs, pool.original_probs, pool.tempered_probs):
        assert probs.shape == (n,) and probs.dtype == torch.float32
        assert not torch.isnan(probs).any() and (probs >= 0).all()
    assert float(pool.probs.double().sum()) == pytest.approx(1.0, abs=1e-5)
    assert (pool.probs[:-1] >= pool.probs[1:]).all()
    assert (pool.tempered_probs[:-1] >= pool.tempered_probs[1:]).all()

    counts = list(pool.stages.values())
    assert list(pool.stages) == ["vocab", "nonzero", "top_k", "top_p", "min_p"]
    assert counts[0] == logits.numel()
    assert all(a >= b for a, b in zip(counts, counts[1:], strict=False))
    assert counts[-1] == n

    if params.top_k:
        assert n <= params.top_k
    assert pool.sample(make_generator(seed)) in ids

    if params.is_greedy:
        assert ids == [int(torch.argmax(logits.double()))]
        return

    # Greedy aside, the pool is a prefix of the tokens sorted by tempered probability.
    tempered = reference_log_probs(logits, params.temperature)
    assert float(tempered[ids[0]]) == float(tempered.max())
    if params.top_p is not None and n > 1:
        # Minus its last token, the pool holds less than p: of the tempered mass, and also of
        # the mass renormalised over the top-k survivors that top-p actually measured.
        head = float(tempered[ids[:-1]].exp().sum())
        assert head < params.top_p + 1e-9
        survivors = tempered.sort(descending=True, stable=True).values[: pool.stages["top_k"]]
        assert head / float(survivors.exp().sum()) < params.top_p + 1e-9
    if params.min_p:
        assert (tempered[ids] >= tempered.max() + math.log(params.min_p) - 1e-9).all()


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(logits=logits_vectors(), top_p=st.floats(1e-6, 0.999))
def test_top_p_pool_reaches_p(logits: torch.Tensor, top_p: float) -> None:
    pool = candidate_pool(logits, SamplingParams(top_p=top_p))
    covered = float(pool.tempered_probs.double().sum())
    assert covered >= top_p - 1e-6 or len(pool) == pool.stages["nonzero"]


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(logits=logits_vectors(), params=sampling_params())
def test_filters_only_ever_remove_tokens(logits: torch.Tensor, params: SamplingParams) -> None:
    pool = candidate_pool(logits, params)
    unfiltered = candidate_pool(logits, SamplingParams(temperature=params.temperature))
    if not params.is_greedy:
        assert pool.token_ids.tolist() == unfiltered.token_ids[: len(pool)].tolist()


def test_gpt2_sized_vocab() -> None:
    logits = torch.randn(50_257, generator=make_generator(11)) * 4
    pool = candidate_pool(logits, SamplingParams(temperature=1.5))
    assert len(pool) == 50_257
    assert float(pool.probs.double().sum()) == pytest.approx(1.0, abs=1e-6)
    assert float(pool.probs.sum()) == pytest.approx(1.0, abs=1e-5)  # float32 sum too
    nucleus = candidate_pool(logits.half(), SamplingParams(top_p=0.9, min_p=0.01))
    assert 1 <= len(nucleus) < 50_257
    assert nucleus.stages["top_p"] >= nucleus.stages["min_p"] == len(nucleus)
