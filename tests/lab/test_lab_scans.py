"""Prefix scans: correct on random inputs, and their depth and work counted exactly."""

from __future__ import annotations

import math
import operator
from itertools import accumulate

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lmscope.errors import InvalidInputError
from lmscope.lab.linear_scan import (
    associative_scan,
    block_length,
    chunked_scan,
    closed_form_unblocked,
    first_breakdown,
    recurrence_loop,
    relative_error,
)
from lmscope.lab.scans import (
    AFFINE_IDENTITY,
    affine_op,
    blelloch_cost,
    blelloch_scan,
    close,
    hillis_steele_cost,
    hillis_steele_scan,
    log2_ceil,
    recurrence_states,
    serial_scan,
    tree_reduce,
)

ints = st.lists(st.integers(-(10**6), 10**6), min_size=1, max_size=300)
floats = st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=300)


@settings(max_examples=60, deadline=None)
@given(ints)
def test_parallel_scans_equal_serial_scan_exactly_on_integers(xs):
    want = list(accumulate(xs))
    assert serial_scan(xs)[0] == want
    assert hillis_steele_scan(xs)[0] == want
    assert blelloch_scan(xs)[0] == want


@settings(max_examples=60, deadline=None)
@given(floats)
def test_parallel_scans_match_serial_scan_on_floats(xs):
    want = serial_scan(xs)[0]
    # Reassociation changes rounding only: compare against the largest partial magnitude.
    scale = max(abs(v) for v in xs) * len(xs) or 1.0
    for got in (hillis_steele_scan(xs)[0], blelloch_scan(xs)[0]):
        assert max(abs(g - w) for g, w in zip(got, want, strict=True)) <= 1e-9 * scale


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=200),
    st.sampled_from([0.9, 0.5, -0.7, 1.0, 0.0]),
)
def test_affine_scans_give_the_recurrence_states(xs, a):
    """Non-commutative operator: a wrong operand order would fail here."""
    states = recurrence_states(xs, a)
    pairs = [(a, x) for x in xs]
    hs = [b for _, b in hillis_steele_scan(pairs, affine_op)[0]]
    bl = [b for _, b in blelloch_scan(pairs, affine_op, AFFINE_IDENTITY)[0]]
    assert close(hs, states, rel=1e-9)
    assert close(bl, states, rel=1e-9)


def test_exact_depth_and_work_at_n_8():
    xs = list(range(1, 9))
    assert hillis_steele_scan(xs)[1].to_dict() == {"rounds": 3, "work": 17}  # 8*3 - 7
    assert blelloch_scan(xs)[1].to_dict() == {"rounds": 6, "work": 14}  # 2*log2 N, 2(N-1)
    assert serial_scan(xs)[1].to_dict() == {"rounds": 7, "work": 7}
    assert tree_reduce(xs)[1].to_dict() == {"rounds": 3, "work": 7}


@pytest.mark.parametrize("n", [2, 16, 1024])
def test_hillis_steele_work_is_n_log_n_minus_n_minus_1_for_powers_of_two(n):
    _, cost = hillis_steele_scan([1] * n)
    k = int(math.log2(n))
    assert cost.rounds == k
    assert cost.work == n * k - (n - 1)
    _, cost = blelloch_scan([1] * n)
    assert (cost.rounds, cost.work) == (2 * k, 2 * (n - 1))


def test_cost_formulas_match_counted_runs_for_every_n():
    for n in range(1, 70):
        xs = [1] * n
        assert hillis_steele_cost(n) == hillis_steele_scan(xs)[1], n
        assert blelloch_cost(n) == blelloch_scan(xs)[1], n
        _, tree = tree_reduce(xs)
        assert tree.rounds == math.ceil(math.log2(n)) if n > 1 else tree.rounds == 0
        assert tree.work == n - 1


def test_edge_cases():
    assert hillis_steele_scan([5])[0] == [5]
    assert blelloch_scan([5])[0] == [5]
    assert blelloch_scan([]) == ([], blelloch_scan([])[1])
    assert log2_ceil(1) == 0 and log2_ceil(5) == 3
    with pytest.raises(InvalidInputError):
        log2_ceil(0)
    with pytest.raises(InvalidInputError):
        tree_reduce([])
    assert blelloch_scan(["a", "b", "c"], operator.add, "")[0] == ["a", "ab", "abc"]


# --- PyTorch linear-recurrence scans -------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 3000),
    st.sampled_from([0.9, 0.99, 0.5, -0.7, 1.0, 0.0, 0.05]),
    st.integers(0, 2**31 - 1),
)
def test_torch_scans_match_the_recurrence_in_float64(n, a, seed):
    x = torch.randn(n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    want = torch.tensor(recurrence_states(x.tolist(), a), dtype=torch.float64)
    assert relative_error(chunked_scan(x, a), want) < 1e-12
    assert relative_error(associative_scan(x, a), want) < 1e-12


@pytest.mark.parametrize("a", [0.9, 0.999, -0.9, 0.3])
def test_chunked_scan_stays_stable_over_long_n_in_float32(a):
    """At N = 65,536 with a = 0.9 the unblocked closed form is long since inf/nan."""
    n = 65_536
    x = torch.randn(n, generator=torch.Generator().manual_seed(1))
    want = torch.tensor(recurrence_states(x.double().tolist(), a), dtype=torch.float64)
    got = chunked_scan(x, a)
    assert torch.isfinite(got).all()
    # float32 rounding summed over the recurrence's memory, about 1/(1-|a|) steps
    tolerance = 2e-7 * min(n, 1 / (1 - abs(a)))
    assert relative_error(got.double(), want) < tolerance
    assert relative_error(associative_scan(x, a).double(), want) < tolerance
    if abs(a) < 0.95:
        assert not torch.isfinite(closed_form_unblocked(x, a)).all()


def test_torch_loop_matches_python_recurrence_and_scans():
    x = torch.randn(500, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    loop = recurrence_loop(x, 0.9)
    assert torch.allclose(loop, torch.tensor(recurrence_states(x.tolist(), 0.9), dtype=x.dtype))
    assert torch.allclose(chunked_scan(x, 0.9), loop)
    assert torch.allclose(associative_scan(x, 0.9), loop)


def test_associative_scan_takes_a_different_a_at_every_step():
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(777, generator=gen, dtype=torch.float64)
    a = torch.rand(777, generator=gen, dtype=torch.float64)
    h, want = 0.0, []
    for at, xt in zip(a.tolist(), x.tolist(), strict=True):
        h = at * h + xt
        want.append(h)
    assert relative_error(associative_scan(x, a), torch.tensor(want, dtype=x.dtype)) < 1e-12


def test_block_length_keeps_powers_in_range():
    assert block_length(0.9, torch.float32) == 128
    assert block_length(1.0, torch.float32) == 128
    assert block_length(0.0, torch.float32) == 1
    short = block_length(0.01, torch.float32)
    assert 1 <= short < 10
    assert math.isfinite(0.01 ** -(short - 1)) and 0.01 ** -(short - 1) < 3e38
    assert block_length(0.9, torch.float16) < block_length(0.9, torch.float32)
    with pytest.raises(InvalidInputError):
        block_length(0.9, torch.float32, block=0)


@pytest.mark.slow
def test_first_breakdown_finds_where_the_closed_form_overflows():
    n = first_breakdown(0.9, torch.float32)
    assert 500 < n < 1000  # 0.9^-t passes float32's 3.4e38 near t = 840
    assert first_breakdown(0.9, torch.float64) > 5 * n
    assert first_breakdown(1.0, torch.float32, limit=4096) == 0


def test_scans_reject_bad_tensors():
    with pytest.raises(InvalidInputError):
        chunked_scan(torch.zeros(0), 0.9)
    with pytest.raises(InvalidInputError):
        associative_scan(torch.zeros(2, 2), 0.9)
    with pytest.raises(InvalidInputError):
        chunked_scan(torch.arange(5), 0.9)
