"""The start of the residual stream: a token's embedding, its position's embedding, and
their sum, which enters the first block."""

from __future__ import annotations

import torch
from pydantic import BaseModel, Field

from lmscope.engine.trace import Trace
from lmscope.explain.numbers import rounded
from lmscope.explain.tokens import Token, tokens
from lmscope.explain.values import Vector, vector

POSITION_PROBE = "hook_pos_embed"  # absent where positions are rotations inside attention


class EmbeddingResponse(BaseModel):
    position: int
    token: Token
    token_embedding: Vector
    position_embedding: Vector | None = Field(..., description="null: no learned positions")
    sum: Vector
    embedding_matrix: list[int]
    position_matrix: list[int] | None
    position_cosine_previous: list[float]


def position_cosines(trace: Trace) -> list[float]:
    """cos(position p's embedding, position p - 1's), for p = 1, 2, ... (none without
    learned position embeddings)."""
    if POSITION_PROBE not in trace:
        return []
    pos = trace[POSITION_PROBE]
    return rounded(torch.nn.functional.cosine_similarity(pos[1:], pos[:-1], dim=-1))


def position_vector(trace: Trace, position: int) -> Vector | None:
    return vector(trace[POSITION_PROBE][position]) if POSITION_PROBE in trace else None


def embedding_view(model, trace: Trace, position: int) -> EmbeddingResponse:
    learned = POSITION_PROBE in trace
    return EmbeddingResponse(
        position=position,
        token=tokens(trace)[position],
        token_embedding=vector(trace["hook_embed"][position]),
        position_embedding=position_vector(trace, position),
        sum=vector(trace["blocks.0.hook_resid_pre"][position]),
        embedding_matrix=list(model.net.wte.weight.shape),
        position_matrix=list(model.net.wpe.weight.shape) if learned else None,
        position_cosine_previous=position_cosines(trace),
    )
