"""Probabilities from logits agree with float64 whichever view computes them."""

from __future__ import annotations

import torch

from lmscope.engine.probs import log_probs


def test_log_probs_agree_with_float64_over_a_large_vocabulary():
    """torch's float32 log_softmax was off by ~1e-5 relative here (SmolLM2's " Paris": 0.772547
    in the trace and the lens, 0.772532 in explain, the pool and generation)."""
    torch.manual_seed(0)
    logits = torch.randn(3, 49152) * 5
    exact = torch.softmax(logits.double(), -1)
    got = log_probs(logits)
    shown = exact > 1e-4  # the probabilities a view prints to six digits
    assert got.dtype == torch.float32
    assert ((got.double().exp() - exact).abs() / exact)[shown].max() < 1e-6  # torch's: 7e-6


def test_masked_logits_stay_impossible():
    logits = torch.tensor([[0.0, float("-inf"), 1.0]])
    got = log_probs(logits)
    assert got[0, 1] == float("-inf") and torch.isclose(got.exp().sum(), torch.tensor(1.0))


def test_the_traces_predictions_equal_the_sampling_pools(tiny_model):
    from lmscope.engine.sampling import SamplingParams, candidate_pool

    trace = tiny_model.trace("Data visualization empowers users to")
    pool = candidate_pool(trace.last_logits, SamplingParams())
    top = int(trace.predictions.top_ids[-1, 0])
    shown = float(trace.predictions.top_probs[-1, 0])
    exact = float(torch.softmax(trace.last_logits.double(), -1)[top])
    assert abs(shown - exact) / exact < 1e-6 and int(pool.token_ids[0]) == top
