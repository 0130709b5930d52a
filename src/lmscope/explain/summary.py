"""A whole prompt at a glance, from one trace: its tokens, what the model predicted after
each one, the last position's logits, and the residual stream's size through the blocks."""

from __future__ import annotations

import torch
from pydantic import BaseModel, Field

from lmscope.engine.trace import Trace
from lmscope.explain.chars import CharSpan, trace_char_spans
from lmscope.explain.logits import POOL_TOP, LogitsView, logits_view
from lmscope.explain.numbers import rounded
from lmscope.explain.tokens import Token, tokens, vocab_texts


class PositionPrediction(BaseModel):
    top_ids: list[int]
    top_probs: list[float]
    next_prob: float | None = Field(..., description="prob of the token that actually follows")
    entropy: float = Field(..., description="nats")


class TraceResponse(BaseModel):
    model: str
    n_ctx: int
    tokens: list[Token]
    predictions: list[PositionPrediction]
    next: LogitsView = Field(..., description="the last position's logits")
    resid_norms: list[list[float]] = Field(
        ..., description="[layer + 1][position]: |embedding|, then |resid_post| of each block"
    )
    vocab: dict[str, str] = Field(..., description="id -> text for every id mentioned")
    text: str | None = Field(None, description="the ids decoded; null without a tokenizer")
    chars: list[CharSpan] = Field(
        default_factory=list, description="runs of tokens whose bytes only form text together"
    )
    cached: bool


def predictions(trace: Trace) -> list[PositionPrediction]:
    p = trace.predictions
    top_ids, top_probs = p.top_ids.tolist(), rounded(p.top_probs)
    next_prob, entropy = rounded(p.next_token_prob), rounded(p.entropy)
    return [
        PositionPrediction(
            top_ids=top_ids[i], top_probs=top_probs[i], next_prob=next_prob[i], entropy=entropy[i]
        )
        for i in range(len(trace))
    ]


def resid_norms(trace: Trace) -> list[list[float]]:
    """|embedding sum| and then |resid_post| of each block, for every position."""
    rows = [trace["blocks.0.hook_resid_pre"].norm(dim=-1)]
    rows += [trace[f"blocks.{i}.hook_resid_post"].norm(dim=-1) for i in range(trace.config.n_layer)]
    return rounded(torch.stack(rows))


def trace_summary(model, trace: Trace, cached: bool = False) -> TraceResponse:
    preds = predictions(trace)
    nxt = logits_view(trace.last_logits, len(trace) - 1)
    mentioned = list(trace.ids) + nxt.ids[:POOL_TOP]
    for p in preds:
        mentioned += p.top_ids
    return TraceResponse(
        model=model.name,
        n_ctx=model.config.n_ctx,
        tokens=tokens(trace),
        predictions=preds,
        next=nxt,
        resid_norms=resid_norms(trace),
        vocab=vocab_texts(model, mentioned),
        text=model.decode(list(trace.ids)) if model.tokenizer is not None else None,
        chars=trace_char_spans(model, trace.ids),
        cached=cached,
    )
