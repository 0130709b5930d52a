"""The pieces the lean generation steps share (models/step_plan.py): each against the plain
PyTorch computation it stands for."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lmscope.models.step_plan import (
    add_norm_row,
    joined,
    kept_while_parameters_hold,
    norm_row,
    product,
    projection,
)


def test_one_product_only_over_weights_stored_back_to_back():
    buffer = torch.arange(40.0).view(10, 4)
    q, k, v = buffer[:3], buffer[3:7], buffer[7:]
    assert torch.equal(joined([q, k, v]), buffer) and torch.equal(joined([k, v]), buffer[3:])
    assert joined([q, v]) is None  # a gap between them
    assert joined([k, q]) is None  # the wrong order
    assert joined([q, k.clone()]) is None  # another storage
    assert joined([buffer[:2, :2], buffer[2:4, :2]]) is None  # not row-major back to back


@pytest.mark.parametrize("bias", [False, True])
def test_a_float32_product_is_bit_for_bit_f_linear(bias):
    g = torch.Generator().manual_seed(0)
    weight = torch.randn(48, 32, generator=g)
    b = torch.randn(48, generator=g) if bias else None
    for rows in (1, 3):
        x = torch.randn(rows, 32, generator=g)
        assert torch.equal(product(weight, b)(x), F.linear(x, weight, b))


def test_other_dtypes_take_linear():
    weight = torch.randn(16, 8).bfloat16()
    x = torch.randn(1, 8).bfloat16()
    from lmscope.models.common import linear

    assert torch.equal(product(weight, None)(x), linear(x, weight))


@pytest.mark.parametrize("packed", [True, False])
@pytest.mark.parametrize("bias", [False, True])
def test_a_projection_is_its_linears_side_by_side(packed, bias):
    torch.manual_seed(1)
    layers = [nn.Linear(12, n, bias=bias) for n in (8, 4, 4)]
    if packed:  # one storage, back to back, as pack_weights leaves a loaded model's weights
        buffer = torch.cat([layer.weight.detach() for layer in layers])
        starts = [0, 8, 12]
        for layer, start in zip(layers, starts, strict=True):
            layer.weight.data = buffer[start : start + layer.out_features]
    x = torch.randn(2, 12)
    project = projection(*layers)
    assert project.__name__ == ("product" if packed else "one_each")
    want = torch.cat([layer(x) for layer in layers], -1)
    assert torch.allclose(project(x), want, atol=1e-6, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_norm_row_is_rms_norm_with_a_float32_gain(dtype):
    g = torch.Generator().manual_seed(2)
    x = (torch.randn(3, 64, generator=g) * 5).to(dtype)
    gain = torch.randn(64, generator=g)
    eps = torch.tensor(1e-6)
    want = F.rms_norm(x.float(), (64,), gain, 1e-6)
    got = norm_row(x, gain, eps)
    assert got.dtype == dtype
    assert torch.allclose(
        got.float(), want, rtol=1e-5 if dtype == torch.float32 else 1e-2, atol=1e-5
    )
    residual = torch.randn(3, 64, generator=g).to(dtype)
    added = add_norm_row(residual, x, gain, eps)
    assert torch.allclose(added.float(), (residual + norm_row(x, gain, eps)).float(), atol=1e-2)
    if dtype == torch.float32:
        assert torch.allclose(added, residual + want, rtol=1e-5, atol=1e-5)


def test_a_kept_value_is_rebuilt_when_a_parameter_changes():
    net = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    built = []

    def build():
        built.append(1)
        return len(built)

    def kept():
        return kept_while_parameters_hold(net, "_plan", build)

    assert kept() == kept() == 1  # unchanged: kept
    with torch.no_grad():
        net[0].weight.mul_(2)  # edited in place
    assert kept() == kept() == 2
    net[1].bias.data = net[1].bias.detach().clone()  # moved to other memory
    assert kept() == 3
    net[1].weight = nn.Parameter(torch.zeros(2, 4))  # replaced
    assert kept() == kept() == 4
