"""What the page's pictures draw, read from a trace: attention as connections between tokens
(every head's weights in a window of the sequence) and the flow view (the tokens' vectors
entering the model, the residual stream of one position through every block, its logits).

Every number is a probe's value (rounded for JSON); nothing here computes model math beyond
reading probes and the logits ``explain.logits`` reads out of the final norm.
"""

from __future__ import annotations

import torch
from pydantic import BaseModel, Field

from lmscope.engine.trace import Trace
from lmscope.explain.attention import window
from lmscope.explain.embedding import POSITION_PROBE
from lmscope.explain.modern import design
from lmscope.explain.numbers import number, rounded
from lmscope.explain.probes import read
from lmscope.explain.tokens import Token, token_text, tokens

LINES_WINDOW = 48  # tokens in the two columns of the attention lines
FLOW_WINDOW = 12  # tokens whose vectors are drawn entering the model
FLOW_TOP = 10  # next-token candidates at the end of the flow
# significant digits of the flow's vectors: colour strips and a hover readout, an overview (the
# steps show every vector in full); SmolLM2's 37 vectors of 576 are 34 KB gzipped, not 46 KB
FLOW_DIGITS = 2


class AttentionLines(BaseModel):
    """Every head's attention weights in a window: patterns[h][q][k] is how much query
    position start+q reads key position start+k in head h (0 where the mask hides it)."""

    layer: int
    position: int
    start: int
    size: int
    n_head: int
    n_kv_head: int = Field(..., description="key/value heads; each serves n_head / n_kv_head")
    tokens: list[Token]
    patterns: list[list[list[float]]]
    outside: list[float] = Field(
        ..., description="per head: the selected query's weight on keys before the window"
    )


def attention_lines(
    model, trace: Trace, layer: int, position: int, start: int | None = None
) -> AttentionLines:
    pattern = read(trace, f"blocks.{layer}.attn.hook_pattern").float()  # [head, query, key]
    w0, size = window(len(trace), position, start, LINES_WINDOW, lead=0.75)
    w = slice(w0, w0 + size)
    n_head = pattern.shape[0]
    n_kv = trace[f"blocks.{layer}.attn.hook_k"].shape[1]
    outside = pattern[:, position, :w0].sum(dim=-1) if w0 > 0 else torch.zeros(n_head)
    return AttentionLines(
        layer=layer,
        position=position,
        start=w0,
        size=size,
        n_head=n_head,
        n_kv_head=n_kv,
        tokens=tokens(trace)[w],
        patterns=rounded(pattern[:, w, w], 4),
        outside=rounded(outside, 4),
    )


class Candidate(BaseModel):
    id: int
    text: str
    logit: float
    prob: float


class FlowResponse(BaseModel):
    """One position's way through the model, as the flow view draws it."""

    family: str
    norm: str = Field(..., description="LayerNorm or RMSNorm")
    positions: str = Field(..., description="learned (added to the embedding) or rotary")
    mlp: str = Field(..., description="GELU or SwiGLU")
    n_head: int
    n_kv_head: int
    position: int
    start: int = Field(..., description="first position of the tokens drawn entering")
    tokens: list[Token]
    embeddings: list[list[float]] = Field(
        ..., description="[token][d_model]: each drawn token's vector entering block 0"
    )
    token_embedding: list[float] = Field(..., description="W_E row of the selected token")
    position_embedding: list[float] | None = Field(..., description="null: rotary positions")
    stream: list[list[float]] = Field(
        ..., description="[1 + n_layer][d_model]: the residual after the embedding and each block"
    )
    norms: list[float]
    final: list[float] = Field(..., description="the final norm's output (gain applied): x · W_Eᵀ")
    top: list[Candidate]


def flow_view(model, trace: Trace, position: int, logits: torch.Tensor) -> FlowResponse:
    """``logits``: the full logits after ``position`` (``explain.logits.position_logits``)."""
    d, c = design(model), trace.config
    w0, size = window(len(trace), position, None, FLOW_WINDOW, lead=0.75)
    w = slice(w0, w0 + size)
    stream = [trace["blocks.0.hook_resid_pre"][position]]
    stream += [trace[f"blocks.{i}.hook_resid_post"][position] for i in range(c.n_layer)]
    stacked = torch.stack(stream).float()
    logits = logits.float()
    probs = torch.softmax(logits, dim=-1)
    top = torch.topk(logits, min(FLOW_TOP, logits.shape[-1]))
    learned = POSITION_PROBE in trace
    return FlowResponse(
        family=model.capabilities.family,
        norm=d.norm,
        positions=d.positions,
        mlp=d.mlp,
        n_head=c.n_head,
        n_kv_head=getattr(c, "n_kv_head", None) or c.n_head,
        position=position,
        start=w0,
        tokens=tokens(trace)[w],
        embeddings=rounded(trace["blocks.0.hook_resid_pre"][w], FLOW_DIGITS),
        token_embedding=rounded(trace["hook_embed"][position], FLOW_DIGITS),
        position_embedding=rounded(trace[POSITION_PROBE][position], FLOW_DIGITS)
        if learned
        else None,
        stream=rounded(stacked, FLOW_DIGITS),
        norms=rounded(stacked.norm(dim=-1), 5),
        final=rounded(trace["ln_final.hook_out"][position], FLOW_DIGITS),
        top=[
            Candidate(
                id=int(i),
                text=token_text(model, int(i)),
                logit=number(logits[i], 6),  # type: ignore[arg-type]  # None if not finite: see numbers.number
                prob=number(probs[i], 6),  # type: ignore[arg-type]  # None if not finite: see numbers.number
            )
            for i in top.indices.tolist()
        ],
    )
