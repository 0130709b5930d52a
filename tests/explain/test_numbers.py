"""Single numbers in a view (norms, means, scales) are rounded exactly as arrays are: `number`
is a plain-Python path (numpy's fixed cost per call was most of /api/layer's time), so it is
checked against `rounded` on the same values, signs of zero and non-finite values included."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lmscope.explain.numbers import number, rounded


def as_rounded(value, digits):
    return rounded(np.asarray([value], dtype=np.float64), digits)[0]


@pytest.mark.slow
@pytest.mark.parametrize("digits", [2, 3, 4, 6])
def test_number_equals_rounded_over_the_magnitudes_a_model_shows(digits):
    rng = np.random.default_rng(0)
    # 1e-12 .. 1e15: the powers of ten used stay below 1e22, exact as floats, so both paths agree
    # bit for bit (past that numpy's vectorised power and C's pow may differ in the last bit)
    values = rng.standard_normal(20_000) * 10.0 ** rng.integers(-12, 16, 20_000)
    specials = [0.0, 0.5, 2.5, -2.5, 1.0, -1.0, 10.0, 999_999.5, 123_456.5, 0.1, 1e-6, 1e6]
    for v in [*values.tolist(), *specials]:
        assert number(v, digits) == as_rounded(v, digits), (v, digits)


def test_a_negative_zero_keeps_its_sign():
    got, expected = number(-0.0, 2), as_rounded(-0.0, 2)
    assert got == expected == 0.0 and math.copysign(1, got) == math.copysign(1, expected) == -1


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_values_are_none(value):
    assert number(value) is None and as_rounded(value, 6) is None


def test_tensors_and_numpy_scalars_are_read_as_their_value():
    assert number(torch.tensor(1.2345678)) == as_rounded(1.2345678, 6) == 1.23457
    assert number(np.float32(3.3333333)) == as_rounded(float(np.float32(3.3333333)), 6)
    assert number(7) == 7.0
