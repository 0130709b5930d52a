"""Summaries of recorded vectors: the numbers themselves, their norm, mean and spread, and a
histogram. Every field describes a tensor read from a probe or a weight."""

from __future__ import annotations

import torch
from pydantic import BaseModel

from lmscope.explain.numbers import number, rounded

BINS = 24  # histogram bars, in the CLI and on the page


class Vector(BaseModel):
    values: list[float]
    norm: float
    mean: float
    std: float


class Summary(BaseModel):
    mean: float
    std: float
    min: float
    max: float
    fraction_positive: float


class Histogram(BaseModel):
    edges: list[float]
    counts: list[int]


class ActivationStats(Summary):
    histogram: Histogram


def vector(t: torch.Tensor) -> Vector:
    t = t.detach().float()
    return Vector(
        values=rounded(t),
        norm=number(t.norm()),  # type: ignore[arg-type]  # None if not finite: see numbers.number
        mean=number(t.mean()),  # type: ignore[arg-type]  # None if not finite: see numbers.number
        std=number(t.std(unbiased=False)),  # type: ignore[arg-type]  # None if not finite: see numbers.number
    )


def stats(t: torch.Tensor, bins: int = BINS) -> ActivationStats:
    t = t.detach().float().flatten()
    lo, hi = float(t.min()), float(t.max())
    counts = torch.histc(t, bins=bins, min=lo, max=hi if hi > lo else lo + 1e-6)
    return ActivationStats(
        mean=round(float(t.mean()), 4),
        std=round(float(t.std(unbiased=False)), 4),
        min=round(lo, 4),
        max=round(hi, 4),
        fraction_positive=round(float((t > 0).float().mean()), 4),
        histogram=Histogram(
            edges=[round(lo + (hi - lo) * i / bins, 4) for i in range(bins + 1)],
            counts=[int(c) for c in counts],
        ),
    )
