"""Embedding neighbours: the tokens whose embedding vectors point the most the same way as a
token's own, by cosine similarity over the model's whole embedding matrix W_E.

"Similar meanings get nearby vectors" is a claim about W_E; this puts it to the test on the
served model. The rows' lengths (their norms) are computed once per model and kept with it, so
one query costs one product of W_E with a vector.
"""

from __future__ import annotations

import threading
import weakref

import torch
from pydantic import BaseModel, Field

from lmscope.explain.tokens import token_text

NEIGHBOURS = 12


class Neighbour(BaseModel):
    id: int
    text: str
    cosine: float


class NeighboursResponse(BaseModel):
    position: int
    id: int
    text: str
    vocab: int = Field(..., description="rows of W_E compared (the real vocabulary)")
    neighbours: list[Neighbour] = Field(..., description="most similar first; the token excluded")


class EmbeddingIndex:
    """W_E of one model with its row norms: cosine(W_E[i], v) for every token i at once."""

    def __init__(self, model):
        self.model = model
        self.weight = model.net.wte.weight.detach()[: model.vocab_size]
        with torch.no_grad():
            self.norms = self.weight.float().norm(dim=-1).clamp_min(1e-12)

    @torch.no_grad()
    def cosines(self, vector: torch.Tensor) -> torch.Tensor:
        v = vector.to(self.weight.dtype)
        dots = (self.weight @ v).float()
        return dots / (self.norms * vector.float().norm().clamp_min(1e-12))

    def nearest(self, token_id: int, k: int = NEIGHBOURS) -> list[Neighbour]:
        sims = self.cosines(self.weight[token_id])
        sims[token_id] = -2.0  # the token itself, cosine 1, is not its own neighbour
        top = torch.topk(sims, min(k, sims.shape[0] - 1))
        return [
            Neighbour(id=int(i), text=token_text(self.model, int(i)), cosine=round(float(c), 5))
            for c, i in zip(top.values.tolist(), top.indices.tolist(), strict=True)
        ]


_INDEXES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def embedding_index(model) -> EmbeddingIndex:
    """The model's index, built the first time it is asked for."""
    with _LOCK:
        index = _INDEXES.get(model)
        if index is None:
            index = _INDEXES[model] = EmbeddingIndex(model)
        return index


def neighbours_view(model, token_id: int, position: int, k: int = NEIGHBOURS):
    index = embedding_index(model)
    return NeighboursResponse(
        position=position,
        id=token_id,
        text=token_text(model, token_id),
        vocab=index.weight.shape[0],
        neighbours=index.nearest(token_id, k),
    )
