"""After the last block: the logits after a position, what the browser needs to compute exact
sampling probabilities itself, and the candidate pool the server samples from.

Logits for an earlier position are the unembedding applied to that position's recorded
final-LayerNorm output, exactly as the model computes the last position's.
"""

from __future__ import annotations

import numpy as np
import torch
from pydantic import BaseModel, Field

from lmscope.engine.sampling import SamplingParams, candidate_pool
from lmscope.engine.trace import Trace
from lmscope.explain.block import LayerNormView, norm_view
from lmscope.explain.modern import RMSNormView
from lmscope.explain.numbers import Number, number, rounded
from lmscope.explain.tokens import TokenProb, token_probs, token_text, vocab_texts
from lmscope.explain.values import ActivationStats, stats

TOP_N = 300  # top logits sent per position; the rest travel as log-sum-exps
TEMPERATURES = [round(0.05 * i, 2) for i in range(1, 41)]  # the page's slider: 0.05 .. 2.0
POOL_TOP = 20


class LogitsView(BaseModel):
    """Enough to compute exact sampling probabilities in the browser: the top logits, and for
    each temperature T the log-sum-exp of logit/T over every other token (the tail)."""

    position: int
    ids: list[int] = Field(..., description="top tokens, most likely first (ties: lowest id)")
    logits: list[float]
    tail_count: int
    tail_lse: list[Number] = Field(..., description="logsumexp(tail / T), one per temperature")
    temperatures: list[float]
    lse: float = Field(..., description="logsumexp of all logits at T = 1")


class FinalResponse(BaseModel):
    position: int
    ln_final: LayerNormView | RMSNormView = Field(..., discriminator="kind")
    logits: LogitsView
    logit_stats: ActivationStats
    vocab: dict[str, str]


class PoolToken(BaseModel):
    id: int
    text: str
    prob: float = Field(..., description="renormalised over the pool")
    tempered_prob: float
    model_prob: float


class PoolResponse(BaseModel):
    position: int
    stages: dict[str, int]
    size: int
    top: list[PoolToken]


class TokenLogit(BaseModel):
    id: int
    token: str
    logit: float


def position_logits(model, trace: Trace, position: int) -> torch.Tensor:
    """Full-vocabulary logits after ``position`` (the last one is kept by every trace); the
    rows of a padded embedding past the tokenizer's vocabulary are not tokens, and are dropped."""
    if position == len(trace) - 1:
        return trace.last_logits
    if "logits" in trace:
        logits = trace["logits"][position]
    else:
        logits = model.net.unembed(trace["ln_final.hook_out"][position])
    return logits[..., : model.vocab_size].float()


def _tail_lse(tail: np.ndarray) -> list[Number]:
    if not tail.size:
        return [None] * len(TEMPERATURES)
    # numpy, single-threaded: steadier than torch's thread pool on a busy CPU
    top = tail.max()
    temps = np.asarray(TEMPERATURES)[:, None]
    sums = np.exp((tail[None, :] - top) / temps).sum(axis=1)
    return rounded(top / temps[:, 0] + np.log(sums), 12)


def logits_view(logits: torch.Tensor, position: int) -> LogitsView:
    """Top logits plus, per temperature, the log-sum-exp of the others: with these the browser
    computes exactly the probabilities lmscope.engine.sampling would for the top tokens."""
    x = logits.detach().float().cpu()
    n = min(TOP_N, x.numel())
    values, ids = torch.topk(x, n)
    order = np.lexsort((ids.numpy(), -values.numpy()))  # by logit, ties to the lowest id
    values, ids = values[order], ids[order]
    rest = torch.ones(x.numel(), dtype=torch.bool)
    rest[ids] = False
    tail = x[rest].numpy().astype(np.float64)
    return LogitsView(
        position=position,
        ids=ids.tolist(),
        logits=rounded(values, 9),  # float32 needs 9 digits to round-trip exactly
        tail_count=int(tail.size),
        tail_lse=_tail_lse(tail),
        temperatures=TEMPERATURES,
        lse=number(torch.logsumexp(x.double(), 0), 12),  # type: ignore[arg-type]  # None if not finite: see numbers.number
    )


def final_view(model, trace: Trace, position: int, logits: torch.Tensor) -> FinalResponse:
    view = logits_view(logits, position)
    return FinalResponse(
        position=position,
        ln_final=norm_view(model, trace, position, "final"),
        logits=view,
        logit_stats=stats(logits),
        vocab=vocab_texts(model, view.ids),
    )


def pool_view(model, logits: torch.Tensor, position: int, params: SamplingParams) -> PoolResponse:
    pool = candidate_pool(logits, params)
    n = min(POOL_TOP, len(pool))
    ids = pool.token_ids[:n].tolist()
    probs, tempered, original = (
        rounded(t[:n], 8) for t in (pool.probs, pool.tempered_probs, pool.original_probs)
    )
    top = [
        PoolToken(
            id=token_id,
            text=token_text(model, token_id),
            prob=probs[j],
            tempered_prob=tempered[j],
            model_prob=original[j],
        )
        for j, token_id in enumerate(ids)
    ]
    return PoolResponse(position=position, stages=pool.stages, size=len(pool), top=top)


def top_probs(model, logits: torch.Tensor, temperature: float, n: int) -> list[TokenProb]:
    """The ``n`` most likely tokens after softmax(logits / temperature)."""
    probs = torch.softmax(logits.double() / temperature, -1)
    top = probs.topk(min(n, probs.numel()))
    return token_probs(model, top.values, top.indices, n)


def top_logits(model, logits: torch.Tensor, n: int) -> list[TokenLogit]:
    """The ``n`` highest logits, as exact as a LogitsView carries them."""
    top = logits.topk(min(n, logits.numel()))
    return [
        TokenLogit(id=int(j), token=token_text(model, int(j)), logit=v)
        for v, j in zip(rounded(top.values, 9), top.indices.tolist(), strict=True)
    ]
