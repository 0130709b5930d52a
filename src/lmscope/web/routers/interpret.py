"""Look inside: logit lens, every head's pattern, ablation and side-by-side models. The second
model of a comparison is one the server was started with (``lmscope serve --compare``): a
request can only pick one of those by name, never make the server load anything."""

from __future__ import annotations

from fastapi import APIRouter

from lmscope.explain.attention import window
from lmscope.web.errors import ERRORS
from lmscope.web.interpret import (
    LENS_LEAD,
    ablation_view,
    canonical,
    compare_view,
    heads_view,
    lens_view,
)
from lmscope.web.schemas import interpret as s
from lmscope.web.served import Serving, pick
from lmscope.web.work import Costs

router = APIRouter(tags=["interpret"])


@router.post("/api/lens", response_model=s.LensResponse, responses=ERRORS)
async def lens(req: s.LensRequest, served: Serving):
    """Logit lens: the residual stream after the embedding and after each block, read out
    through the final LayerNorm and unembedding, for a window of at most 32 positions.
    The last row is the model's real output."""
    model, store = served.model, served.store
    at = await served.checked(req)
    start, size = window(len(at.ids), at.position, req.start, req.size, LENS_LEAD)

    def compute():  # the trace only when this answer is not cached already
        view = lens_view(model, store.base(at.ids)[0], start, size, req.k)
        return view, 96 * req.k * size * (model.config.n_layer + 1)

    units = store.trace_units(at.ids) + store.costs.logits(size * (model.config.n_layer + 1))
    return (await store.obtain(("lens", at.ids, start, size, req.k), units, compute))[0]


@router.post("/api/heads", response_model=s.HeadsResponse, responses=ERRORS)
async def heads(req: s.HeadsRequest, served: Serving):
    """Every head of every layer: its attention pattern over the positions up to
    ``position`` (at most 32), as bytes, for the ablation grid."""
    store, c = served.store, served.model.config
    at = await served.checked(req)

    def compute():  # one forward pass recording every layer's attention, not one per layer
        layers = [store.patterns(at.ids)] * c.n_layer
        return heads_view(layers, at.position, req.size), c.n_layer * c.n_head * req.size**2

    units = store.trace_units(at.ids, patterns=True)
    return (await store.obtain(("heads", at.ids, at.position, req.size), units, compute))[0]


@router.post("/api/ablate", response_model=s.AblateResponse, responses=ERRORS)
async def ablate(req: s.AblateRequest, served: Serving):
    """The next-token distribution at ``position`` with and without the ablations (heads,
    whole attention or MLP outputs set to zero or to their mean over the positions), and
    KL(before || after). Same numbers as ``lmscope.interpret.ablation_effect``."""
    model, store = served.model, served.store
    at = await served.checked(req)
    specs = canonical(req.ablate, model.config)  # unknown heads or layers: 400 before any work
    rows = len(at.ids) if req.mode == "mean" else 1
    units = 2 * (store.costs.forward(at.position + 1) + store.costs.logits(rows))
    body, _ = await store.obtain(
        ("ablate", at.ids, tuple(specs), req.mode, at.position, req.k),
        units,
        lambda: (ablation_view(model, at.ids, specs, req.mode, at.position, req.k), 8192),
    )
    return body


@router.get("/api/compare/models", response_model=s.CompareModels)
def compare_models(served: Serving):
    """The models this server was started with for comparison (``--compare``)."""
    return s.CompareModels(model=served.model.name, models=list(served.compare))


@router.post("/api/compare", response_model=s.CompareResponse, responses=ERRORS)
async def compare_text(req: s.CompareRequest, served: Serving):
    """Per-token loss of the served model (A) and of ``model`` (B) on the text, and B - A;
    per character when their tokenizers split the text differently."""
    model = served.model
    name, other = pick(
        served.compare,
        req.model,
        none="error.web.no-compare-model",
        unknown="error.web.compare-model-not-offered",
    )
    # an empty text is refused by compare() itself, with a readable message
    if req.text is not None:
        text = req.text
    else:
        text = await served.view(lambda: model.decode(served.ids(req.ids)))
    units = sum(Costs.whole(m, len(text)) for m in (model, other))  # a token has >= 1 char
    body, _ = await served.store.obtain(
        ("compare", name, text),
        units,
        lambda: (compare_view(model, other, text), 200 * len(text) + 1024),
    )
    return body
