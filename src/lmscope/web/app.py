"""The FastAPI app behind ``lmscope serve``: a JSON API over one loaded model, and the page.

The browser asks for what it shows: ``/api/trace`` returns the prompt's tokens and predictions,
then ``/api/layer``, ``/api/attention``, ``/api/final``... return one layer, head or position
from the trace cached server-side. Handlers are plain ``def`` functions, so FastAPI runs them in
its threadpool and the event loop stays free while the model runs.

Every error is JSON ``{"error": "..."}`` with a 4xx status: user mistakes are expected input.
"""

from __future__ import annotations

import json
import time
from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from lmscope import __version__
from lmscope.engine.sampling import SamplingParams
from lmscope.errors import InvalidInputError, LmscopeError
from lmscope.web import generation, interpret, schemas, views
from lmscope.web.limits import Admission, Busy, busy_response
from lmscope.web.store import TraceStore

STATIC = Path(str(files("lmscope.web") / "static"))
MAX_BODY = 256 * 1024

DESCRIPTION = """
See inside a language model by running it. Every number is the model's own, read from a
probe of a real forward pass (names follow TransformerLens: `blocks.0.attn.hook_pattern`).

Start with `POST /api/trace` (text or token ids), then ask for one layer, head or position:
the server keeps recent traces, keyed by token ids. Masked attention scores (-inf) are `null`.
Research views on the same model: `POST /api/lens` (logit lens), `POST /api/ablate` (switch
heads or sublayers off), `POST /api/compare` (per-token loss beside a model the server was
started with: `lmscope serve --compare MODEL`).
Errors are `{"error": "..."}` with a 4xx status.
"""


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` (413), declared or streamed."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            response = _error(413, self._message())
            return await response(scope, receive, send)
        seen = 0

        async def limited():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise HTTPException(413, self._message())
            return message

        return await self.app(scope, limited, send)

    def _message(self) -> str:
        return f"request body too large: the limit is {self.max_bytes // 1024} KiB"


# Everything the page loads comes from this server: the browser enforces it, so a stray CDN
# link would fail loudly in development instead of silently needing the network.
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)


class ResponseHeaders:
    """The CSP above, and Server-Timing: how long the server took until the response started
    (the browser shows it next to network time; the benchmark reads it)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start = time.perf_counter()

        async def with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                took = (time.perf_counter() - start) * 1000
                headers.append((b"server-timing", f"app;dur={took:.2f}".encode()))
                headers.append((b"content-security-policy", CSP.encode()))
                headers.append((b"x-content-type-options", b"nosniff"))
                message = {**message, "headers": headers}
            await send(message)

        return await self.app(scope, receive, with_headers)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        if err.get("type") == "json_invalid":
            return "the request body is not valid JSON"
        loc = ".".join(_printable(x) for x in err.get("loc", ()) if x != "body")
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return _printable("; ".join(parts) or "invalid request", 500)


def _printable(part, limit: int = 60) -> str:
    """A field name from the request, shown on one line: control characters escaped (an
    unknown field may be called "\\n"), long names cut."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(part))
    return text if len(text) <= limit else text[: limit - 3] + "..."


ERRORS = {
    400: {"model": schemas.ErrorResponse, "description": "input the model cannot use"},
    413: {"model": schemas.ErrorResponse, "description": "request body too large"},
    422: {"model": schemas.ErrorResponse, "description": "request does not match the schema"},
    503: {"model": schemas.ErrorResponse, "description": "server busy; retry shortly"},
}
MAX_ACTIVE = 256  # API requests in progress at once (a class of 30, several views each)
WAIT_S = 60.0  # longest wait for the model before a request gives up with 503


def create_app(
    model,
    *,
    cache_bytes: int = 1 << 30,
    max_body: int = MAX_BODY,
    compare=(),
    rnn=(),
    max_active: int = MAX_ACTIVE,
    wait_s: float = WAIT_S,
) -> FastAPI:
    """The app for ``model``. ``compare``: loaded models the page may set beside it (the
    allowlist of ``lmscope serve --compare``); a request can only pick one of these by name.
    ``rnn``: char RNN/LSTM/GRU models for the /rnn page, picked by name the same way.
    ``max_active`` and ``wait_s`` bound the queue (see ``lmscope.web.limits``)."""
    app = FastAPI(
        title="lmscope",
        version=__version__,
        description=DESCRIPTION,
        docs_url=None,  # FastAPI's docs load from a CDN; /docs is our own offline page
        redoc_url=None,
    )
    store = TraceStore(model, max_bytes=cache_bytes, wait_s=wait_s)
    app.state.model, app.state.store = model, store
    app.state.compare = interpret.compare_names(compare)
    app.add_middleware(BodyLimit, max_bytes=max_body)
    app.add_middleware(Admission, limit=max_active)
    app.add_middleware(ResponseHeaders)
    _add_error_handlers(app)
    c = model.config

    # --- checks shared by the handlers ----------------------------------------------------
    def checked(ids: list[int]) -> tuple[int, ...]:
        return tuple(model.check_ids(ids))

    def position_of(ids: tuple[int, ...], position: int) -> int:
        if position >= len(ids):
            raise InvalidInputError(
                f"position {position} does not exist; the sequence has positions 0..{len(ids) - 1}"
            )
        return position

    def layer_of(layer: int) -> int:
        if layer >= c.n_layer:
            raise InvalidInputError(
                f"layer {layer} does not exist; this model has layers 0..{c.n_layer - 1}"
            )
        return layer

    def head_of(head: int) -> int:
        if head >= c.n_head:
            raise InvalidInputError(
                f"head {head} does not exist; this model has heads 0..{c.n_head - 1}"
            )
        return head

    def logits_at(ids: tuple[int, ...], position: int):
        trace, _ = store.base(ids)
        with store.gate:
            return trace, views.position_logits(model, trace, position)

    # --- pages ------------------------------------------------------------------------------
    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def index():
        return FileResponse(STATIC / "index.html")

    @app.api_route("/docs", methods=["GET", "HEAD"], include_in_schema=False)
    def docs():
        return FileResponse(STATIC / "api.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # --- API --------------------------------------------------------------------------------
    @app.get("/api/model", response_model=schemas.ModelResponse, tags=["model"])
    def model_info():
        """The loaded model's configuration, the 20 steps and the sampling grid."""
        return views.model_facts(model)

    @app.post("/api/trace", response_model=schemas.TraceResponse, responses=ERRORS, tags=["trace"])
    def trace(req: schemas.TraceRequest):
        """Tokenize and run the prompt once: tokens, per-position predictions, the last
        position's logits (top tokens and tail log-sum-exps), residual norms by layer."""
        ids = tuple(model.encode(req.text) if req.text is not None else model.check_ids(req.ids))
        # The summary is a pure function of the ids: keep it next to the trace it came from.
        body, cached = store.cached(
            store._key("summary", ids),
            lambda: (views.trace_response(model, store.base(ids)[0], False), 64 * 1024),
        )
        return {**body, "cached": cached}

    @app.post(
        "/api/tokenizer",
        response_model=schemas.TokenizerResponse,
        responses=ERRORS,
        tags=["steps"],
    )
    def tokenizer(req: schemas.PositionRequest):
        """The BPE merges that built the token at a position."""
        ids = checked(req.ids)
        position = position_of(ids, req.position)
        trace, _ = store.base(ids)

        def explain():
            tok = model.tokenizer
            if tok is None:
                return None, 0
            explained = tok.explain(tok.decode(list(ids)))
            ok = [e.id for e in explained] == list(ids)
            return (explained if ok else False), 2048 * len(ids)

        explained, _ = store.cached(store._key("explain", ids), explain)
        return views.tokenizer_view(model, trace, position, explained or None)

    @app.post(
        "/api/embedding",
        response_model=schemas.EmbeddingResponse,
        responses=ERRORS,
        tags=["steps"],
    )
    def embedding(req: schemas.PositionRequest):
        """Token embedding, position embedding and their sum at a position."""
        ids = checked(req.ids)
        position = position_of(ids, req.position)
        return views.embedding_view(model, store.base(ids)[0], position)

    @app.post("/api/layer", response_model=schemas.LayerResponse, responses=ERRORS, tags=["steps"])
    def layer(req: schemas.LayerRequest):
        """One block at one position: LayerNorms, Q/K/V and head outputs, the projection,
        residual additions, the MLP with its activation histogram, and a dropout example."""
        ids = checked(req.ids)
        position, index = position_of(ids, req.position), layer_of(req.layer)
        return views.layer_view(model, store.layer(ids, index), index, position)

    @app.post(
        "/api/attention",
        response_model=schemas.AttentionResponse,
        responses=ERRORS,
        tags=["steps"],
    )
    def attention(req: schemas.AttentionRequest):
        """One head's scores QK^T -> scaled -> masked -> softmax in a window of at most 64
        positions, the query position's full rows, and every head's pattern (bytes)."""
        ids = checked(req.ids)
        position, index, head = (
            position_of(ids, req.position),
            layer_of(req.layer),
            head_of(req.head),
        )
        return views.attention_view(store.layer(ids, index), index, head, position, req.start)

    @app.post("/api/final", response_model=schemas.FinalResponse, responses=ERRORS, tags=["steps"])
    def final(req: schemas.PositionRequest):
        """Final LayerNorm and the logits after a position (tied unembedding)."""
        ids = checked(req.ids)
        position = position_of(ids, req.position)
        trace, logits = logits_at(ids, position)
        return views.final_view(model, trace, position, logits)

    @app.post("/api/pool", response_model=schemas.PoolResponse, responses=ERRORS, tags=["sampling"])
    def pool(req: schemas.PoolRequest):
        """The server's candidate pool for some sampling settings (what Generate draws from)."""
        ids = checked(req.ids)
        position = position_of(ids, req.position)
        params = SamplingParams(**req.sampling.model_dump())
        _, logits = logits_at(ids, position)
        return views.pool_view(model, logits, position, params)

    @app.post(
        "/api/generate",
        response_class=StreamingResponse,
        responses={
            200: {
                "description": "one GeneratedEvent per line (application/x-ndjson)",
                "content": {
                    "application/x-ndjson": {
                        "schema": {"$ref": "#/components/schemas/GeneratedEvent"}
                    }
                },
            },
            **ERRORS,
        },
        tags=["sampling"],
    )
    def generate(req: schemas.GenerateRequest):
        """Append up to n sampled tokens, streamed as they come. Token i is drawn with a
        generator seeded from (seed, its position)."""
        ids = list(checked(req.ids))
        if len(ids) >= c.n_ctx:
            raise InvalidInputError(
                f"the sequence already fills the model's context of {c.n_ctx} tokens"
            )
        params = SamplingParams(**req.sampling.model_dump())
        seed = req.seed if req.seed is not None else generation.fresh_seed()
        events = generation.stream(model, store.gate, ids, req.n, params, seed, req.stop_at_eot)

        def lines():
            try:
                for event in events:
                    yield json.dumps(event) + "\n"
            except LmscopeError as err:
                yield json.dumps({"type": "error", "error": str(err)}) + "\n"

        return StreamingResponse(lines(), media_type="application/x-ndjson")

    @app.get("/api/cache", tags=["model"])
    def cache() -> dict:
        """How full the server's trace cache is."""
        return store.stats()

    interpret.register(app, model, store, app.state.compare, ERRORS)
    # the "Why Transformers" page over the lab's saved results
    from lmscope.web import lab_routes

    lab_routes.register(app, STATIC)
    # the char-RNN page: ``rnn`` are the char models it offers (lmscope serve --rnn)
    from lmscope.web import rnn as rnn_page

    rnn_page.register(app, rnn, ERRORS)

    # GeneratedEvent only appears in a hand-written response schema; register it.
    _register_schema(app, schemas.GeneratedEvent)
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


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(LmscopeError)
    async def lmscope_error(request: Request, exc: LmscopeError):
        return _error(400, str(exc))

    @app.exception_handler(Busy)
    async def busy(request: Request, exc: Busy):
        return busy_response(str(exc))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError):
        return _error(422, _validation_message(exc))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException):
        message = exc.detail if isinstance(exc.detail, str) else "request failed"
        if exc.status_code == 404:
            message = f"not found: {request.url.path}"
        elif exc.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path}"
        return _error(exc.status_code, message)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception):
        return _error(500, f"internal error ({type(exc).__name__}); please report it")
