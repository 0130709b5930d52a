"""The sampling pool is computed with no work beyond the pool asked for (greedy sorts nothing,
top-k and min-p sort only their candidates), and it is bitwise the pool of the full pipeline:
the whole vocabulary sorted, then every filter in turn (the reference below)."""

from __future__ import annotations

import math

import pytest
import torch

from lmscope.engine.sampling import GREEDY_TEMPERATURE, SamplingParams, candidate_pool


def reference_pool(logits: torch.Tensor, params: SamplingParams):
    """The pipeline as first written: every step on the whole sorted vocabulary."""
    x = logits.to(torch.float64)

    def log_softmax(t: float):
        scaled = (x - x.max()) / t
        return scaled - torch.logsumexp(scaled, dim=0)

    original = log_softmax(1.0)
    if params.temperature < GREEDY_TEMPERATURE:
        tempered = torch.full_like(x, -math.inf)
        tempered[int(torch.argmax(x))] = 0.0
    else:
        tempered = log_softmax(params.temperature)
    if params.is_greedy:
        ids = torch.argmax(x).reshape(1)
        counts = {"nonzero": int((torch.exp(tempered) > 0).sum()), "top_k": 1}
        counts.update(top_p=1, min_p=1)
    else:
        order = torch.sort(tempered, descending=True, stable=True).indices
        s = tempered[order]
        n = int((torch.exp(s) > 0).sum())
        counts = {"nonzero": n}
        n = min(n, params.top_k) if params.top_k else n
        counts["top_k"] = n
        if params.top_p is not None and params.top_p < 1.0:
            head = s[:n]
            cumulative = torch.cumsum(torch.exp(head - torch.logsumexp(head, dim=0)), dim=0)
            target = torch.tensor([params.top_p], dtype=torch.float64)
            n = min(int(torch.searchsorted(cumulative, target)[0]) + 1, n)
        counts["top_p"] = n
        if params.min_p is not None and params.min_p > 0:
            n = int((s[:n] >= float(s[0]) + math.log(params.min_p)).sum())
        counts["min_p"] = n
        ids = order[:n]
    kept = tempered[ids]
    probs = torch.exp(kept - torch.logsumexp(kept, dim=0))
    return ids, probs.float(), torch.exp(original[ids]).float(), torch.exp(kept).float(), counts


def vocabulary(seed: int) -> torch.Tensor:
    """Logits of a 5,000-token vocabulary with many exact ties and a few masked tokens."""
    g = torch.Generator().manual_seed(seed)
    logits = (torch.randn(5000, generator=g) * 4).round(decimals=1)  # ties everywhere
    logits[torch.randint(0, 5000, (50,), generator=g)] = -math.inf
    return logits


SETTINGS = [
    dict(greedy=True),
    dict(temperature=0.0),
    dict(greedy=True, temperature=0.7),
    dict(top_k=1),
    dict(top_k=40),
    dict(top_k=40, temperature=0.6),
    dict(top_k=300, top_p=0.9),
    dict(top_k=50, min_p=0.1),
    dict(top_k=20, top_p=0.5, min_p=0.2, temperature=1.3),
    dict(min_p=0.05),
    dict(min_p=0.3, temperature=0.4),
    dict(min_p=1e-300),
    dict(top_p=0.8),
    dict(top_k=4999),
    dict(),
    dict(temperature=1e-4, top_k=10),
]


@pytest.mark.parametrize("settings", SETTINGS, ids=str)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pool_is_bitwise_the_full_pipelines(settings, seed):
    params = SamplingParams(**settings)
    logits = vocabulary(seed)
    pool = candidate_pool(logits, params)
    ids, probs, original, tempered, counts = reference_pool(logits, params)
    assert torch.equal(pool.token_ids, ids)
    assert torch.equal(pool.probs, probs)
    assert torch.equal(pool.original_probs, original)
    assert torch.equal(pool.tempered_probs, tempered)
    assert pool.stages == {"vocab": 5000, **counts}


def test_greedy_and_top_k_sort_nothing_beyond_their_pool(monkeypatch):
    sorted_sizes = []
    real_sort = torch.sort

    def counting_sort(t, *args, **kwargs):
        sorted_sizes.append(t.numel())
        return real_sort(t, *args, **kwargs)

    monkeypatch.setattr(torch, "sort", counting_sort)
    logits = torch.randn(50257, generator=torch.Generator().manual_seed(0))
    candidate_pool(logits, SamplingParams(greedy=True))
    assert sorted_sizes == []
    candidate_pool(logits, SamplingParams(top_k=40, temperature=0.8))
    candidate_pool(logits, SamplingParams(min_p=0.5))
    assert sorted_sizes and max(sorted_sizes) < 1000
