"""One attention head: its scores QK^T -> scaled -> masked -> softmax in a square window
around a query position, that query's full rows, and every head's pattern as bytes."""

from __future__ import annotations

import base64
import math

import torch
from pydantic import BaseModel, Field

from lmscope.engine.trace import Trace
from lmscope.explain.numbers import Number, rounded
from lmscope.explain.probes import read

ATTENTION_WINDOW = 64  # rows and columns of the detailed attention matrices
STAGES = {  # the four stages of a score, and the probe that records each
    "raw": "hook_attn_scores_raw",
    "scaled": "hook_attn_scores_scaled",
    "masked": "hook_attn_scores",
    "pattern": "hook_pattern",
}


class AttentionResponse(BaseModel):
    layer: int
    head: int
    position: int
    d_head: int
    scale: float = Field(..., description="1 / sqrt(d_head)")
    start: int = Field(..., description="first position of the square window")
    size: int
    raw: list[list[Number]] = Field(..., description="QK^T in the window")
    scaled: list[list[Number]]
    masked: list[list[Number]] = Field(..., description="scaled, future keys -inf (null)")
    pattern: list[list[Number]] = Field(..., description="softmax of masked, row by row")
    row: dict[str, list[Number]] = Field(
        ..., description="the query position's full row for raw/scaled/masked/pattern"
    )
    q: list[list[float]] = Field(..., description="[window][d_head] for this head")
    k: list[list[float]]
    v: list[list[float]]
    heads: list[str] = Field(
        ..., description="per head: the window's pattern as bytes 0..255, base64"
    )


def window(
    n_tokens: int, position: int, start: int | None, size: int, lead: float = 0.5
) -> tuple[int, int]:
    """A window of at most ``size`` positions inside the sequence: from ``start``, or placed
    so ``position`` sits ``lead`` of the way in (a half centres it)."""
    size = min(size, n_tokens)
    if start is None:
        start = position - int(size * lead)
    return max(0, min(start, n_tokens - size)), size


def pattern_bytes(patterns: torch.Tensor) -> list[str]:
    """Attention patterns [head, query, key] as bytes 0..255, one base64 string per head."""
    thumbs = (patterns.clamp(0, 1) * 255).round().to(torch.uint8).numpy()
    return [base64.b64encode(t.tobytes()).decode("ascii") for t in thumbs]


def score_rows(trace: Trace, layer: int, head: int, position: int) -> dict[str, torch.Tensor]:
    """The query ``position``'s row of scores at each stage, over every key."""
    a = f"blocks.{layer}.attn"
    return {name: read(trace, f"{a}.{probe}")[head, position] for name, probe in STAGES.items()}


def kv_head(trace: Trace, layer: int, head: int) -> int:
    """The key/value head a query head reads (grouped-query attention shares each among
    n_head / n_kv_head query heads; in GPT-2 every head has its own)."""
    a = f"blocks.{layer}.attn"
    n_head, n_kv = trace[f"{a}.hook_q"].shape[1], trace[f"{a}.hook_k"].shape[1]
    return head * n_kv // n_head


def attention_view(
    trace: Trace, layer: int, head: int, position: int, start: int | None = None
) -> AttentionResponse:
    a = f"blocks.{layer}.attn"
    d_head = trace.config.d_head
    w0, size = window(len(trace), position, start, ATTENTION_WINDOW)
    w = slice(w0, w0 + size)
    stages = {name: read(trace, f"{a}.{probe}")[head] for name, probe in STAGES.items()}
    return AttentionResponse(
        layer=layer,
        head=head,
        position=position,
        d_head=d_head,
        scale=1 / math.sqrt(d_head),
        start=w0,
        size=size,
        **{name: rounded(t[w, w], 5) for name, t in stages.items()},
        row={name: rounded(t[position, : position + 1], 6) for name, t in stages.items()},
        q=rounded(trace[f"{a}.hook_q"][w, head], 5),
        k=rounded(trace[f"{a}.hook_k"][w, kv_head(trace, layer, head)], 5),
        v=rounded(trace[f"{a}.hook_v"][w, kv_head(trace, layer, head)], 5),
        heads=pattern_bytes(read(trace, f"{a}.hook_pattern")[:, w, w]),
    )
