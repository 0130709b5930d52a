"""Sampling: the candidate pool for some settings, and generation streamed token by token
through the one generation loop."""

from __future__ import annotations

import json

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from lmscope.engine.sampling import SamplingParams
from lmscope.explain.logits import PoolResponse, pool_view
from lmscope.web import generation, schemas
from lmscope.web.errors import ERRORS
from lmscope.web.served import Serving

router = APIRouter(tags=["sampling"])

STREAM = {
    200: {
        "description": "one GeneratedEvent per line (application/x-ndjson)",
        "content": {
            "application/x-ndjson": {"schema": {"$ref": "#/components/schemas/GeneratedEvent"}}
        },
    },
    **ERRORS,
}


@router.post("/api/pool", response_model=PoolResponse, responses=ERRORS)
def pool(req: schemas.PoolRequest, served: Serving):
    """The server's candidate pool for some sampling settings (what Generate draws from)."""
    at = served.select(req)
    params = SamplingParams(**req.sampling.model_dump())
    _, logits = served.logits_at(at.ids, at.position)
    return pool_view(served.model, logits, at.position, params)


@router.post("/api/generate", response_class=StreamingResponse, responses=STREAM)
def generate(req: schemas.GenerateRequest, served: Serving):
    """Append up to n sampled tokens, streamed as they come. Token i is drawn with a
    generator seeded from (seed, its position)."""
    ids = list(served.ids(req.ids))
    params = SamplingParams(**req.sampling.model_dump())
    seed = req.seed if req.seed is not None else generation.fresh_seed()
    events = generation.events(
        served.model, served.store.gate, ids, req.n, params, seed, req.stop_at_eot
    )
    lines = (json.dumps(e.model_dump(exclude_none=True)) + "\n" for e in events)
    return StreamingResponse(lines, media_type="application/x-ndjson")
