"""The FastAPI app behind ``lmscope serve``: a JSON API over the loaded models, and the pages.

``create_app`` puts together what every request is served with (``web.served.Served``: the
model, the trace store with its cache and model gate, the models a request may choose among,
the lab's results; one per model to explain, sharing the cache, gate and work queue), the
middleware (body limit, the bounded queue of ``web.limits``, headers),
the error handlers and one router per area (``web.routers``).

Every error is JSON ``{"error": "...", "code": "...", "params": {...}}`` with a 4xx status (see
``web.error_codes``): user mistakes are expected input.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.middleware.gzip import DEFAULT_EXCLUDED_CONTENT_TYPES, GZipMiddleware

from lmscope import __version__
from lmscope.web.errors import ERRORS, add_error_handlers
from lmscope.web.lab import LabResults
from lmscope.web.limits import Admission
from lmscope.web.middleware import BodyLimit, ResponseHeaders
from lmscope.web.on_disk import OnDisk
from lmscope.web.pages import STATIC
from lmscope.web.routers import ROUTERS
from lmscope.web.schemas import MAX_IDS, MAX_TEXT_CHARS, GeneratedEvent
from lmscope.web.served import Served, compare_all, named
from lmscope.web.store import TraceStore

# The largest body the request schemas allow, compactly written, is never refused for its size:
# MAX_TEXT_CHARS characters escaped as JSON surrogate pairs (12 bytes each), or MAX_IDS ids of
# up to 10 digits and a comma, with room for the other fields.
MAX_BODY = 12 * max(MAX_TEXT_CHARS, MAX_IDS) + 64 * 1024
MAX_ACTIVE = 256  # API requests in progress at once (a class of 30, several views each)
WAIT_S = 60.0  # longest wait for the model before a request gives up with 503
GZIP_SKIP = (*DEFAULT_EXCLUDED_CONTENT_TYPES, "application/x-ndjson")

DESCRIPTION = """
See inside a language model by running it. Every number is the model's own, read from a
probe of a real forward pass (names follow TransformerLens: `blocks.0.attn.hook_pattern`).

Start with `POST /api/trace` (text or token ids), then ask for one layer, head or position:
the server keeps recent traces, keyed by token ids. Masked attention scores (-inf) are `null`.
`GET /api/steps` lists the 20 steps with their explanations.
Research views on the same model: `POST /api/lens` (logit lens), `POST /api/ablate` (switch
heads or sublayers off), `POST /api/compare` (per-token loss beside another model the server
was started with: another served model, or one of `lmscope serve --compare MODEL`).

A server may explain several models (`lmscope serve --model A --model B`): every route of the
explainer takes `?model=NAME` (a name `GET /api/models` lists; absent: the first), and answers
from that model. `GET /api/models` also lists the other models on this machine, with the
command that serves each.

Errors are `{"error": "...", "code": "error.…", "params": {...}}` with a 4xx status (503 when
busy, with `Retry-After`): `code` is the catalog id of the message and `params` its values, so a
client can say it in its own words; `error` is the line in English, or in the language the
request asks for with `?lang=zh` (or `pseudo`) or its `Accept-Language` header.
"""

__all__ = ["MAX_ACTIVE", "STATIC", "WAIT_S", "create_app"]


def create_app(
    model,
    *,
    cache_bytes: int = 1 << 30,
    max_body: int = MAX_BODY,
    compare=(),
    rnn=(),
    max_active: int = MAX_ACTIVE,
    wait_s: float = WAIT_S,
    more=(),
    specs=(),
    on_disk: OnDisk | None = None,
) -> FastAPI:
    """The app for ``model``. ``more``: further loaded models to explain, which a request
    picks by name (``?model=``; ``lmscope serve --model A --model B``), all sharing one cache
    of ``cache_bytes``, one model gate and one work queue. ``specs``: what opened each of
    ``model`` and ``more`` (the --model values), for the command that serves one more.
    ``compare``: loaded models the page may set beside any of them (the allowlist of
    ``lmscope serve --compare``; the served models are offered too); a request can only pick
    one of these by name. ``rnn``: char RNN/LSTM/GRU models for the /rnn page, picked by name
    the same way. ``on_disk``: the listing of this machine's models (default: found when first
    asked). ``max_active`` and ``wait_s`` bound the queue (see ``lmscope.web.limits``)."""
    app = FastAPI(
        title="lmscope",
        version=__version__,
        description=DESCRIPTION,
        docs_url=None,  # FastAPI's docs load from a CDN; /docs is our own offline page
        redoc_url=None,
    )
    names = list(named([model, *more]))
    entries = 64 * len(names)  # the cache's room in entries grows with the models it serves
    store = TraceStore(
        model, max_bytes=cache_bytes, max_entries=entries, wait_s=wait_s, name=names[0]
    )
    store.calibrate()  # the work queue's first estimates come from this machine's speed
    # ./lmscope-results is fixed now, whatever the process's folder later becomes
    served = Served(model, store, {}, named(rnn), LabResults(), name=names[0])
    served.spec = specs[0] if specs else None
    served.on_disk = on_disk or OnDisk()
    for i, (name, other) in enumerate(zip(names[1:], more, strict=True), start=1):
        beside = TraceStore(other, name=name, beside=store)
        served.beside(other, beside, name, specs[i] if i < len(specs) else None)
    compare_all(served, named(compare))
    app.state.served = served
    app.state.model, app.state.store = model, store
    app.state.compare, app.state.rnn = served.compare, served.rnn
    app.add_middleware(BodyLimit, max_bytes=max_body)
    app.add_middleware(Admission, limit=max_active)
    app.add_middleware(ResponseHeaders)
    # the page's scripts and the JSON compress 4-10x; a token stream is sent as it comes
    app.add_middleware(
        GZipMiddleware, minimum_size=512, compresslevel=6, exclude_content_types=GZIP_SKIP
    )
    add_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router, responses=ERRORS)  # every status an operation can answer
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    # GeneratedEvent only appears in a hand-written response schema; register it.
    _register_schema(app, GeneratedEvent)
    return app


def _register_schema(app: FastAPI, model) -> None:
    original = app.openapi

    def openapi():
        if app.openapi_schema:
            return app.openapi_schema
        schema = original()
        schema.setdefault("components", {}).setdefault("schemas", {})[model.__name__] = (
            model.model_json_schema(ref_template="#/components/schemas/{model}")
        )
        return schema

    app.openapi = openapi
