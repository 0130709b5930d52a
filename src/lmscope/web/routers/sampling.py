"""Sampling: the candidate pool for some settings, and generation streamed token by token
through the one generation loop."""

from __future__ import annotations

import json

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from lmscope.engine.sampling import SamplingParams
from lmscope.explain.logits import PoolResponse, pool_view
from lmscope.web import generation, schemas
from lmscope.web.error_codes import request_language
from lmscope.web.errors import ERRORS
from lmscope.web.limits import Busy
from lmscope.web.served import INLINE_IDS, Serving
from lmscope.web.work import Steps

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
async def pool(req: schemas.PoolRequest, served: Serving):
    """The server's candidate pool for some sampling settings (what Generate draws from)."""
    at = await served.checked(req)
    params = SamplingParams(**req.sampling.model_dump())
    _, logits = await served.logits_at(at.ids, at.position)
    return await served.view(pool_view, served.model, logits, at.position, params)


@router.post("/api/generate", response_class=StreamingResponse, responses=STREAM)
async def generate(req: schemas.GenerateRequest, served: Serving, request: Request):
    """Append up to n sampled tokens, streamed as they come. Token i is drawn with a
    generator seeded from (seed, its position)."""
    params = SamplingParams(**req.sampling.model_dump())
    seed = req.seed if req.seed is not None else generation.fresh_seed()
    lang = request_language(request.scope)  # of an error that ends the stream

    def start():
        ids = list(served.ids(req.ids))
        # the page traced this prompt already: start from the keys and values it kept
        trace = served.store.kept_trace(tuple(ids))
        stop = req.stop_at_eot
        run = generation.events(served.model, None, ids, req.n, params, seed, stop, trace, lang)
        return ids, trace is not None, *run

    short = len(req.ids) <= INLINE_IDS  # see Served.checked
    ids, traced, events, run = start() if short else await served.view(start)
    # Each token is one job on the work queue, so other requests interleave with a long run;
    # the first (the whole prompt, unless a kept trace gave it) is asked for before answering:
    # a full queue is a 503. The queued tokens of several runs go as one batch
    # (generation.steps_together).
    steps = Steps(served.store.work, events, together=served.store.steps_group, payload=run)
    costs = served.store.costs
    prompt = 0.0 if traced else costs.forward(len(ids))
    first = await steps.next(prompt + costs.logits(1), kind="forward")

    async def lines():
        event, n = first, len(ids)
        while event is not None:
            yield json.dumps(event.model_dump(exclude_none=True)) + "\n"
            n += 1
            try:
                event = await steps.next(costs.step(n))
            except Busy as err:
                event = generation.error_event(err, lang)
                yield json.dumps(event.model_dump(exclude_none=True)) + "\n"
                return

    return StreamingResponse(lines(), media_type="application/x-ndjson")
