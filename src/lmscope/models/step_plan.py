"""What a generation step reads, gathered once, and the plain operations it runs.

At one row per sequence a step is bound by reading the weights, and what it adds on top is
the count of small tensor operations between the products: each costs several microseconds
after a product has streamed megabytes through the caches. So the lean steps of Llama and
Gemma 3 gather what they read from each block (gains, projections over weights stored back to
back, attention options) into a plan kept while the parameters hold, call float32's matrix
product directly, and normalize with as few operations as the arithmetic allows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

import torch
from torch import nn

from lmscope.models.common import linear

T = TypeVar("T")
Product = Callable[[torch.Tensor], torch.Tensor]


def kept_while_parameters_hold(module: nn.Module, key: str, build: Callable[[], T]) -> T:
    """``build()``, kept on ``module`` until one of its parameters is replaced, edited in place
    (its version counter moves) or moved to other memory (``pack_weights``, a dtype cast). A
    generation step's gathered weights and gains are such values: rebuilding them walks the
    module tree, which costs more than a step's norms; checking them is a pass over a list."""
    kept = module.__dict__.get(key)
    if kept is not None and all(
        owner.get(name) is p and p._version == version and p.data_ptr() == at
        for owner, name, p, version, at in kept[0]
    ):
        return cast("T", kept[1])
    stamps = [
        (m._parameters, name, p, p._version, p.data_ptr())
        for m in module.modules()
        for name, p in m._parameters.items()
        if p is not None
    ]
    value = build()
    module.__dict__[key] = (stamps, value)
    return value


def projection(*linears: nn.Linear) -> Product:
    """x -> the outputs of ``linears`` side by side: one product where their weights lie one
    after another in one storage (their biases, if any, joined beside), else one each."""
    weights = [layer.weight for layer in linears]
    whole = joined(weights)
    biases = [layer.bias for layer in linears]
    if whole is not None and all(b is None for b in biases):
        return product(whole, None)
    if whole is not None and all(b is not None for b in biases):
        return product(whole, torch.cat(cast("list[torch.Tensor]", biases)))

    def one_each(x: torch.Tensor) -> torch.Tensor:
        return torch.cat([layer(x) for layer in linears], -1)

    return one_each


def product(weight: torch.Tensor, bias: torch.Tensor | None) -> Product:
    """x ([rows, in]) -> x @ weight^T + bias. In float32 it is the very mm (addmm with a
    bias) F.linear runs, called directly on the transposed weight made here once: F.linear
    reaches it through linear, matmul and t, three more dispatches for each of a step's
    products. Other dtypes go through ``linear`` (bfloat16's one-row GEMV)."""
    transposed = weight.t()

    def product(x: torch.Tensor) -> torch.Tensor:
        if x.dtype != torch.float32 or weight.dtype != torch.float32:
            return linear(x, weight, bias)
        return torch.mm(x, transposed) if bias is None else torch.addmm(bias, x, transposed)

    return product


def joined(weights: list[torch.Tensor]) -> torch.Tensor | None:
    """One [rows, columns] view of row-major weights stored back to back, or None."""
    first = weights[0]
    end, storage = first.data_ptr(), first.untyped_storage().data_ptr()
    for w in weights:
        if (
            w.data_ptr() != end
            or w.dim() != 2
            or w.shape[1] != first.shape[1]
            or w.dtype != first.dtype
            or not w.is_contiguous()
            or w.untyped_storage().data_ptr() != storage
        ):
            return None
        end += w.numel() * w.element_size()
    rows = sum(w.shape[0] for w in weights)
    return first.as_strided((rows, first.shape[1]), (first.shape[1], 1), first.storage_offset())


def norm_row(x: torch.Tensor, gain: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    """RMSNorm's forward without a hook (statistics and gain in float32), as plain tensor
    operations: F.rms_norm is on a CPU the same operations and more (``pow``, ``mean``)
    behind more dispatch. ``eps`` is a 0-d float32 tensor, so the mean square and eps are one
    operation (``rms_row``)."""
    x32 = x if x.dtype == torch.float32 else x.float()
    out = x32 * rms_row(x32, eps) * gain
    return out if x is x32 else out.to(x.dtype)


def add_norm_row(x: torch.Tensor, a: torch.Tensor, gain: torch.Tensor, eps: torch.Tensor):
    """x + norm_row(a, gain, eps), a post-norm into the residual stream: in float32 the gain
    and the add are one operation."""
    if not x.dtype == a.dtype == torch.float32:
        return x + norm_row(a, gain, eps)
    return torch.addcmul(x, a * rms_row(a, eps), gain)


def rms_row(x32: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    """1 / sqrt(mean(x^2) + eps) over the last dimension, kept: eps + sum / n in one add."""
    return torch.add(eps, (x32 * x32).sum(-1, keepdim=True), alpha=1 / x32.shape[-1]).rsqrt_()
