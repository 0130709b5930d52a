"""Log-probabilities from logits, accurate in float32.

torch's float32 ``log_softmax`` and ``softmax`` on the CPU use a fast vectorised exp that is off
by up to about 1e-5 relative over a large vocabulary: SmolLM2's " Paris" after "The capital of
France is" came out 0.772547, against 0.772532 in float64, so the views that used it disagreed
in the sixth digit with those that sum in float64 (the sampling pool, generation). ``logits -
logsumexp(logits)`` in float32 agrees with float64 to about 1e-7.
"""

from __future__ import annotations

import torch


def log_probs(logits: torch.Tensor) -> torch.Tensor:
    """log softmax over the last dimension, float32 (rows of -inf logits stay -inf)."""
    x = logits.float()
    return x - torch.logsumexp(x, dim=-1, keepdim=True)
