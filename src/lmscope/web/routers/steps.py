"""The model, its 20 steps and the trace they read: ``/api/trace`` runs a prompt once, then
``/api/layer``, ``/api/attention``, ``/api/final``... answer one layer, head or position from
the trace the store keeps. Handlers are plain ``def`` functions, so FastAPI runs them in its
threadpool and the event loop stays free while the model runs."""

from __future__ import annotations

from fastapi import APIRouter

from lmscope.engine.chat import apply_chat_template
from lmscope.engine.steps import STEPS
from lmscope.errors import InvalidInputError
from lmscope.explain.attention import AttentionResponse, attention_view
from lmscope.explain.block import LayerResponse, layer_view
from lmscope.explain.catalogue import StepCatalogue, catalogue, step_probes, step_text
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
from lmscope.web.served import Serving

router = APIRouter()


@router.get("/api/model", response_model=schemas.ModelResponse, tags=["model"])
def model_info(served: Serving):
    """The loaded model's configuration, the 20 steps and the sampling grid."""
    family = served.model.capabilities.family
    steps = [
        schemas.StepInfo(
            number=s.number,
            key=s.key,
            title=step_text(s.key, family).title["en"],
            summary=step_text(s.key, family).summary,
            probes=list(step_probes(s.key, family)),
        )
        for s in STEPS
    ]
    facts = model_facts(served.model).model_dump()
    return schemas.ModelResponse(**facts, steps=steps, temperatures=TEMPERATURES, top_n=TOP_N)


@router.get("/api/steps", response_model=StepCatalogue, tags=["model"])
def steps(served: Serving):
    """The 20 steps in order: key, titles and explanations (English and Chinese) for the
    served model's architecture, the probes each reads, and whether it shows one layer or
    head. The page builds its navigation from this."""
    return catalogue(served.model.capabilities.family)


@router.post("/api/trace", response_model=TraceResponse, responses=ERRORS, tags=["trace"])
def trace(req: schemas.TraceRequest, served: Serving):
    """Tokenize and run the prompt once: tokens, per-position predictions, the last
    position's logits (top tokens and tail log-sum-exps), residual norms by layer. With
    ``chat`` the text is first wrapped in the model's chat template."""
    model, store = served.model, served.store
    if req.chat and req.text is None:
        raise InvalidInputError("chat mode wraps a text prompt; send 'text', not 'ids'")
    text = apply_chat_template(model, req.text) if req.chat else req.text
    ids = tuple(model.encode(text)) if text is not None else served.ids(req.ids)
    # The summary is a pure function of the ids: keep it next to the trace it came from.
    body, cached = store.remember(
        ("summary", ids), lambda: (trace_summary(model, store.base(ids)[0]), 64 * 1024)
    )
    return body.model_copy(update={"cached": cached})


@router.post("/api/tokenizer", response_model=TokenizerResponse, responses=ERRORS, tags=["steps"])
def tokenizer(req: schemas.PositionRequest, served: Serving):
    """The BPE merges that built the token at a position."""
    model, store, at = served.model, served.store, served.select(req)
    trace, _ = store.base(at.ids)
    explained, _ = store.remember(
        ("explain", at.ids), lambda: (explain_ids(model, at.ids), 2048 * len(at.ids))
    )
    return tokenizer_view(model, trace, at.position, explained)


@router.post("/api/embedding", response_model=EmbeddingResponse, responses=ERRORS, tags=["steps"])
def embedding(req: schemas.PositionRequest, served: Serving):
    """Token embedding, position embedding and their sum at a position."""
    at = served.select(req)
    return embedding_view(served.model, served.store.base(at.ids)[0], at.position)


@router.post("/api/layer", response_model=LayerResponse, responses=ERRORS, tags=["steps"])
def layer(req: schemas.LayerRequest, served: Serving):
    """One block at one position: LayerNorms, Q/K/V and head outputs, the projection,
    residual additions, the MLP with its activation histogram, and a dropout example."""
    at = served.select(req)
    return layer_view(served.model, served.store.layer(at.ids, at.layer), at.layer, at.position)


@router.post("/api/attention", response_model=AttentionResponse, responses=ERRORS, tags=["steps"])
def attention(req: schemas.AttentionRequest, served: Serving):
    """One head's scores QK^T -> scaled -> masked -> softmax in a window of at most 64
    positions, the query position's full rows, and every head's pattern (bytes)."""
    at = served.select(req)
    trace = served.store.layer(at.ids, at.layer)
    return attention_view(trace, at.layer, at.head, at.position, req.start)


@router.post("/api/final", response_model=FinalResponse, responses=ERRORS, tags=["steps"])
def final(req: schemas.PositionRequest, served: Serving):
    """Final LayerNorm and the logits after a position (tied unembedding)."""
    at = served.select(req)
    trace, logits = served.logits_at(at.ids, at.position)
    return final_view(served.model, trace, at.position, logits)


@router.get("/api/cache", response_model=CacheStats, tags=["model"])
def cache(served: Serving):
    """How full the server's trace cache is."""
    return served.store.stats()
