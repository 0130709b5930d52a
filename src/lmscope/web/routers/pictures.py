"""The page's pictures: attention as connections between tokens, the flow view of one
position through the model, and a token's nearest neighbours in the embedding matrix. Each
reads the trace the store keeps (or the model's weights) and computes no model math itself."""

from __future__ import annotations

from fastapi import APIRouter

from lmscope.explain.neighbours import NeighboursResponse, neighbours_view
from lmscope.explain.pictures import AttentionLines, FlowResponse, attention_lines, flow_view
from lmscope.web.errors import ERRORS
from lmscope.web.schemas import pictures as s
from lmscope.web.served import Serving

router = APIRouter(tags=["pictures"])


@router.post("/api/attention/lines", response_model=AttentionLines, responses=ERRORS)
async def lines(req: s.LinesRequest, served: Serving):
    """Every head's attention weights in a window of at most 48 positions around the query
    (``position``), for drawing lines from a query to each key it reads."""
    at = await served.view(served.select, req)
    trace = await served.store.layer_trace(at.ids, at.layer)
    return await served.view(attention_lines, served.model, trace, at.layer, at.position, req.start)


@router.post("/api/flow", response_model=FlowResponse, responses=ERRORS)
async def flow(req: s.FlowRequest, served: Serving):
    """One position's way through the model for the flow view: the vectors of the tokens
    entering, the residual stream after the embedding and after every block, the final norm's
    output and the top next tokens with their logits and probabilities."""
    at = await served.view(served.select, req)
    trace, logits = await served.logits_at(at.ids, at.position)
    return await served.view(flow_view, served.model, trace, at.position, logits)


@router.post("/api/neighbours", response_model=NeighboursResponse, responses=ERRORS)
async def neighbours(req: s.NeighboursRequest, served: Serving):
    """The tokens whose embedding rows are nearest the token's at ``position`` by cosine
    similarity, over the whole embedding matrix (its row norms computed once per model)."""
    at = await served.view(served.select, req)
    token = at.ids[at.position]
    return await served.view(neighbours_view, served.model, token, at.position, req.k)
