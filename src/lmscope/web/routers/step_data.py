"""One of the 20 steps as typed data (``POST /api/step``): what ``lmscope explain --json`` prints
for it, built by the same code from the server's trace of the prompt."""

from __future__ import annotations

from fastapi import APIRouter

from lmscope.engine.sampling import SamplingParams
from lmscope.engine.steps import STEPS_BY_KEY, find_step
from lmscope.errors import InvalidInputError
from lmscope.explain.catalogue import probe_names
from lmscope.explain.family_views import family_data
from lmscope.explain.step_data import StepContext, build
from lmscope.web.errors import ERRORS
from lmscope.web.schemas.steps import StepRequest, StepResponse
from lmscope.web.served import Served, Serving
from lmscope.web.store import BASE_PROBES, PREDICTION_TOP_K, pending_bytes

router = APIRouter(tags=["steps"])


async def _trace(served: Served, ids: tuple[int, ...], layer: int):
    """A trace holding what any step reads: the full one when the prompt is short, else the
    light base trace's probes plus every probe of ``layer`` (one job on the work queue)."""
    store, model = served.store, served.model
    if store.is_full(ids):
        return await store.base_trace(ids)

    def compute():
        names = (*BASE_PROBES, f"blocks.{layer}.*")
        trace = model.trace(list(ids), names=names, top_k=PREDICTION_TOP_K)
        return trace, trace.nbytes() + pending_bytes(trace)

    units = store.trace_units(ids) + store.trace_units(ids, layer)
    return (await store.obtain(("step", ids, layer), units, compute))[0]


def _step(served: Served, req: StepRequest, trace, at) -> StepResponse:
    model, family = served.model, served.model.capabilities.family
    params = SamplingParams(**req.sampling.model_dump())
    context = StepContext(model, trace, at.layer, at.head, at.position, params, req.norm)
    return StepResponse(
        number=STEPS_BY_KEY[req.key].number,
        key=req.key,
        family=family,
        probes=probe_names(req.key, family, at.layer),
        data=build(req.key, context),
        family_data=family_data(req.key, context),
    )


@router.post("/api/step", response_model=StepResponse, responses=ERRORS)
async def step(req: StepRequest, served: Serving):
    """One step's data for a layer, head and position: the numbers the page draws and the CLI
    prints. The model depends on the architecture (learned positions or RoPE, LayerNorm or
    RMSNorm, GELU or SwiGLU), named by ``kind``."""
    try:  # a number or a key in any case, as the CLI and trace.step take it
        req = req.model_copy(update={"key": find_step(req.key).key})
    except KeyError:
        raise InvalidInputError("error.web.no-such-step", key=repr(req.key)) from None
    at = await served.view(served.select, req)
    trace = await _trace(served, at.ids, at.layer)
    return await served.view(_step, served, req, trace, at)
