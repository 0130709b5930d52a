"""Circuits: induction heads, activation patching and direct logit attribution on the served
model, and the page that draws them (``/circuits``). The experiments are the library's own
(``lmscope.interpret.circuits``); each runs as one job on the model's work queue, its result
kept in the server's cache (a head's pattern asked for later is read from the kept result)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from lmscope.interpret.circuits import attribute, induction_scores, patch
from lmscope.interpret.circuits.common import transformer
from lmscope.web import circuits as c
from lmscope.web.errors import ERRORS
from lmscope.web.pages import page
from lmscope.web.schemas import circuits as s
from lmscope.web.served import Serving

router = APIRouter(tags=["circuits"])


@router.api_route("/circuits", methods=["GET", "HEAD"], include_in_schema=False)
def circuits_page(request: Request):
    return page("circuits.html", request)


@router.get("/api/circuits/examples", response_model=s.CircuitExamples)
async def circuits_examples(served: Serving):
    """The ready-made clean/corrupted prompt pairs that fit the served model (one token length,
    one-token answers), and the bounds of the circuits endpoints."""
    return await served.view(c.examples, served.model)


@router.post("/api/circuits/induction", response_model=s.InductionResponse, responses=ERRORS)
async def circuits_induction(req: s.InductionRequest, served: Serving):
    """Induction and previous-token scores of every head on ``length`` random tokens repeated
    once, the loss at every position, and one head's attention pattern (default: the top
    induction head). Same numbers as ``lmscope.interpret.circuits.induction_scores``."""
    model, store = served.model, served.store
    transformer(model)
    c.checked_head(model, req.layer, req.head)
    units = c.induction_units(model, store.costs, req.length)

    def compute():
        result = induction_scores(model, length=req.length, seed=req.seed)
        return result, c.induction_size(result)

    result, _ = await store.obtain(("circuits-induction", req.length, req.seed), units, compute)
    return await served.view(c.induction_view, result, req.layer, req.head)


@router.post("/api/circuits/patch", response_model=s.PatchResponse, responses=ERRORS)
async def circuits_patch(req: s.PatchRequest, served: Serving):
    """Activation patching: the logit difference right - wrong after the clean and the
    corrupted prompt, and the fraction of it each clean activation restores in the corrupted
    run (the residual stream per layer and position, each head's output, each MLP's output).
    Same numbers as ``lmscope.interpret.circuits.patch``."""
    model, store = served.model, served.store
    job = await served.view(c.patch_job, model, req)
    units = c.patch_units(store.costs, model.config.n_head, len(job.clean))

    def compute():
        result = patch(model, list(job.clean), list(job.corrupt), job.right, job.wrong)
        return c.patch_view(result), 64 * len(job.clean) * (model.config.n_layer + 1) * 40

    key = ("circuits-patch", job.clean, job.corrupt, job.right, job.wrong)
    return (await store.obtain(key, units, compute))[0]


@router.post("/api/circuits/attribute", response_model=s.AttributeResponse, responses=ERRORS)
async def circuits_attribute(req: s.AttributeRequest, served: Serving):
    """Direct logit attribution: the logit of ``token`` (minus that of ``versus``) after
    ``position`` split into what the embedding, every head and every MLP wrote, through the
    final norm with its scale frozen at the run's value. Same numbers as
    ``lmscope.interpret.circuits.attribute``."""
    model, store = served.model, served.store
    job = await served.view(c.attribute_job, model, req)
    n = job.position + 1  # the run stops there
    units = store.costs.forward(n) + store.costs.logits(n)

    def compute():
        result = attribute(model, list(job.ids), job.token, job.versus, position=job.position)
        return c.attribute_view(result), 64 * (len(job.ids) + 4 * len(result.contributions))

    key = ("circuits-attribute", job.ids, job.position, job.token, job.versus)
    return (await store.obtain(key, units, compute))[0]
