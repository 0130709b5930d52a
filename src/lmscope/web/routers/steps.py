"""The model, its 20 steps and the trace they read: ``/api/trace`` runs a prompt once, then
``/api/layer``, ``/api/attention``, ``/api/final``... answer one layer, head or position from
the trace the store keeps. The model's work runs on the store's work queue and views on the
served views pool (``web.served``), so the event loop stays free while the model runs; the
cheap routes are plain ``def`` functions in FastAPI's threadpool, which nothing blocks."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter

from lmscope.engine.chat import apply_chat_template
from lmscope.engine.steps import STEPS
from lmscope.errors import InvalidInputError
from lmscope.explain.attention import AttentionResponse, attention_view
from lmscope.explain.block import LayerResponse, layer_view
from lmscope.explain.catalogue import (
    CatalogText,
    StepCatalogue,
    catalogue,
    step_probes,
    step_text,
    step_values,
    tokenizer_kind,
)
from lmscope.explain.embedding import EmbeddingResponse, embedding_view
from lmscope.explain.facts import model_facts
from lmscope.explain.logits import (
    TEMPERATURES,
    TOP_N,
    FinalResponse,
    final_view,
)
from lmscope.explain.summary import TraceResponse, trace_summary
from lmscope.explain.tokens import TokenizerResponse, explain_ids, tokenizer_view
from lmscope.web import schemas
from lmscope.web.cache import CacheStats
from lmscope.web.errors import ERRORS
from lmscope.web.examples import examples_for
from lmscope.web.served import INLINE_IDS, Served, Serving

router = APIRouter()


@router.get("/api/model", response_model=schemas.ModelResponse, tags=["model"])
def model_info(served: Serving, lang: Literal["en", "zh", "pseudo"] | None = None):
    """The loaded model's configuration, the 20 steps and the sampling grid. Each step names
    its title and summary by catalog id; with ``?lang=`` its ``said`` holds them rendered."""
    family, kind = served.model.capabilities.family, tokenizer_kind(served.model)
    steps = []
    for s in STEPS:
        text = step_text(s.key, family, kind)
        shown = {"title": text.title, "summary": text.summary}
        steps.append(
            schemas.StepInfo(
                number=s.number,
                key=s.key,
                texts={field: CatalogText(id=t.id) for field, t in shown.items()},
                said={field: t.say(lang) for field, t in shown.items()} if lang else None,
                probes=list(step_probes(s.key, family)),
            )
        )
    facts = model_facts(served.model).model_dump()
    return schemas.ModelResponse(
        **facts,
        steps=steps,
        temperatures=TEMPERATURES,
        top_n=TOP_N,
        examples=examples_for(served.model),
    )


@router.get("/api/steps", response_model=StepCatalogue, tags=["model"])
def steps(served: Serving, lang: Literal["en", "zh", "pseudo"] | None = None):
    """The 20 steps in order for the served model's architecture (a character tokenizer's
    model gets its own step 5): key, number, the probes each reads, whether it shows one
    layer or head, and what it says. The page builds its navigation from this.

    Each step's ``texts`` names its three texts by catalog id (``GET`` the catalog to render
    them, in any language) with the values that fill them in, the served model's facts:
    ``{"title": {"id": "step.qkv.title", "values": {}}, "summary": {...}, "text": {"id":
    "step.qkv.text.llama", "values": {"n_head": 9, "n_kv_head": 3, "d_head": "64"}}}``.
    With ``?lang=`` (en, zh, pseudo) each step's ``said`` holds the three rendered in that
    language: ``{"title": "...", "summary": "...", "text": "..."}`` (else null)."""
    model = served.model
    return catalogue(
        model.capabilities.family, tokenizer_kind(model), values=step_values(model), lang=lang
    )


@router.post("/api/trace", response_model=TraceResponse, responses=ERRORS, tags=["trace"])
async def trace(req: schemas.TraceRequest, served: Serving):
    """Tokenize and run the prompt once: tokens, per-position predictions, the last
    position's logits (top tokens and tail log-sum-exps), residual norms by layer. With
    ``chat`` the text is first wrapped in the model's chat template."""
    model, store = served.model, served.store
    if req.text is None and not req.chat and len(req.ids) <= INLINE_IDS:
        ids = served.ids(req.ids)  # see Served.checked
    else:
        ids = await served.view(_prompt_ids, served, req)
    # The summary is a pure function of the ids: keep it next to the trace it came from.
    body, cached = await store.obtain(
        ("summary", ids),
        store.prediction_units(ids),
        lambda: (trace_summary(model, store.base(ids)[0]), 64 * 1024),
        traces=ids,
    )
    return body.model_copy(update={"cached": cached})


def _prompt_ids(served: Served, req: schemas.TraceRequest) -> tuple[int, ...]:
    """The request's ids; with ``chat``, of its text wrapped in the model's chat template."""
    if not req.chat:
        return served.prompt_ids(req)
    if req.text is None:
        raise InvalidInputError("error.web.chat-needs-text")
    return tuple(served.model.encode(apply_chat_template(served.model, req.text)))


def _tokenizer_view(served: Served, trace, at) -> TokenizerResponse:
    model = served.model
    explained, _ = served.store.keep(
        ("explain", at.ids), lambda: (explain_ids(model, at.ids), 2048 * len(at.ids))
    )
    return tokenizer_view(model, trace, at.position, explained)


@router.post("/api/tokenizer", response_model=TokenizerResponse, responses=ERRORS, tags=["steps"])
async def tokenizer(req: schemas.PositionRequest, served: Serving):
    """The BPE merges that built the token at a position."""
    at = await served.checked(req)
    trace = await served.store.base_trace(at.ids)
    return await served.view(_tokenizer_view, served, trace, at)


@router.post("/api/embedding", response_model=EmbeddingResponse, responses=ERRORS, tags=["steps"])
async def embedding(req: schemas.PositionRequest, served: Serving):
    """Token embedding, position embedding and their sum at a position."""
    at = await served.checked(req)
    trace = await served.store.base_trace(at.ids)
    return await served.view(embedding_view, served.model, trace, at.position)


@router.post("/api/layer", response_model=LayerResponse, responses=ERRORS, tags=["steps"])
async def layer(req: schemas.LayerRequest, served: Serving):
    """One block at one position: LayerNorms, Q/K/V and head outputs, the projection,
    residual additions, the MLP with its activation histogram, and a dropout example."""
    at = await served.checked(req)
    trace = await served.store.layer_trace(at.ids, at.layer)
    return await served.view(layer_view, served.model, trace, at.layer, at.position)


@router.post("/api/attention", response_model=AttentionResponse, responses=ERRORS, tags=["steps"])
async def attention(req: schemas.AttentionRequest, served: Serving):
    """One head's scores QK^T -> scaled -> masked -> softmax in a window of at most 64
    positions, the query position's full rows, and every head's pattern (bytes)."""
    at = await served.checked(req)
    trace = await served.store.layer_trace(at.ids, at.layer)
    return await served.view(attention_view, trace, at.layer, at.head, at.position, req.start)


@router.post("/api/final", response_model=FinalResponse, responses=ERRORS, tags=["steps"])
async def final(req: schemas.PositionRequest, served: Serving):
    """Final LayerNorm and the logits after a position (tied unembedding)."""
    at = await served.checked(req)
    trace, logits = await served.logits_at(at.ids, at.position)
    return await served.view(final_view, served.model, trace, at.position, logits)


@router.get("/api/cache", response_model=CacheStats, tags=["model"])
def cache(served: Serving):
    """How full the server's trace cache is."""
    return served.store.stats()
