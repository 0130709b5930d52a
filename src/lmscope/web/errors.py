"""Every error is JSON ``{"error": "...", "code": "...", "params": {...}}`` with a 4xx (or 503)
status and one readable line: ``code`` is the catalog id of the message and ``params`` its
values, so the page says it in its own language (``web.error_codes``); the line itself is
English unless the request asks for another (``?lang=``, ``Accept-Language``). User mistakes
are expected input, never a traceback."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from lmscope.engine import advice
from lmscope.errors import LmscopeError
from lmscope.i18n import Message
from lmscope.web.error_codes import (
    SCHEMA_OTHER,
    SCHEMA_PROBLEMS,
    error_body,
    request_language,
)
from lmscope.web.limits import Busy, ClientGone, busy_response
from lmscope.web.schemas import ErrorResponse

# Every API route may answer these (app.py declares them on every operation): 400 for input
# only the model can judge (ids beyond its vocabulary, a layer it lacks), 413 and 503 from
# the middleware, 422 for a body or query that breaks the schema.
ERRORS = {
    400: {"model": ErrorResponse, "description": "input the model cannot use"},
    413: {"model": ErrorResponse, "description": "request body too large"},
    422: {"model": ErrorResponse, "description": "request does not match the schema"},
    503: {
        "model": ErrorResponse,
        "description": "server busy; retry after the seconds in Retry-After",
        "headers": {"Retry-After": {"schema": {"type": "integer", "minimum": 1}}},
    },
}
NOT_FOUND = {404: {"model": ErrorResponse, "description": "no such result or file"}}


class NotFound(LmscopeError):
    """What a request names does not exist (HTTP 404)."""


class BodyTooLarge(HTTPException):
    """A request body over the server's limit (HTTP 413), found while it streams in: an
    HTTPException, which FastAPI lets through its body reading (another error there becomes
    a 400), holding the catalog's error."""

    def __init__(self, kib: int):
        super().__init__(413)
        self.error = LmscopeError("error.web.body-too-large", kib=kib)


def error_response(status: int, error: LmscopeError, scope=None, headers=None) -> JSONResponse:
    """The answer to a refused request: ``error`` said in the language ``scope`` (the request)
    asks for."""
    lang = request_language(scope) if scope is not None else "en"
    return JSONResponse(error_body(error, lang), status_code=status, headers=headers)


def in_api_words(error: LmscopeError) -> LmscopeError:
    """The engine's advice with Python arguments the JSON API does not have (truncate=,
    layers=, names=, unknown=) as what an API client can do (``engine.advice``); the Python
    API keeps its own wording."""
    return advice.in_front_words(error, "api")


def validation_error(exc: RequestValidationError) -> LmscopeError:
    """A request that breaks the schema as one error: its first problem, with its field, and
    how many more there are."""
    errors = list(exc.errors())
    if any(err.get("type") == "json_invalid" for err in errors):
        return LmscopeError("error.web.bad-json")
    if not errors:
        return LmscopeError("error.web.invalid-body", problem=Message(SCHEMA_OTHER, message="?"))
    first = errors[0]
    field = ".".join(printable(x) for x in first.get("loc", ()) if x != "body")
    problem, more = schema_problem(first), len(errors) - 1
    if field and more:
        return LmscopeError("error.web.invalid-field.more", field=field, problem=problem, more=more)
    if field:
        return LmscopeError("error.web.invalid-field", field=field, problem=problem)
    if more:
        return LmscopeError("error.web.invalid-body.more", problem=problem, more=more)
    return LmscopeError("error.web.invalid-body", problem=problem)


def schema_problem(err: dict) -> Message | LmscopeError:
    """One of pydantic's problems as a catalog message: a validator's own error (lmscope's
    ValueError) as itself, a known type with its numbers, else pydantic's English line."""
    context = err.get("ctx") or {}
    raised = context.get("error")
    if isinstance(raised, LmscopeError) and raised.code is not None:
        return raised
    message_id = SCHEMA_PROBLEMS.get(str(err.get("type")))
    if message_id is None:
        message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        return Message(SCHEMA_OTHER, message=printable(message, 200))
    values = {k: v if isinstance(v, int | float) else printable(v) for k, v in context.items()}
    return Message(message_id, **{k: values.get(k, "?") for k in _NAMES.get(message_id, ())})


# the context values each schema message fills in (pydantic's ctx keys)
_NAMES = {
    "error.web.schema.string-too-short": ("min_length",),
    "error.web.schema.string-too-long": ("max_length",),
    "error.web.schema.too-short": ("min_length", "actual_length"),
    "error.web.schema.too-long": ("max_length", "actual_length"),
    "error.web.schema.greater-than-equal": ("ge",),
    "error.web.schema.greater-than": ("gt",),
    "error.web.schema.less-than-equal": ("le",),
    "error.web.schema.less-than": ("lt",),
    "error.web.schema.expected": ("expected",),
}


def printable(part, limit: int = 60) -> str:
    """A field name from the request, shown on one line: control characters escaped (an
    unknown field may be called "\\n"), long names cut."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(part))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(LmscopeError)
    async def lmscope_error(request: Request, exc: LmscopeError):
        return error_response(400, in_api_words(exc), request.scope)

    @app.exception_handler(NotFound)
    async def not_found(request: Request, exc: NotFound):
        return error_response(404, exc, request.scope)

    @app.exception_handler(BodyTooLarge)
    async def too_large(request: Request, exc: BodyTooLarge):
        return error_response(413, exc.error, request.scope)

    @app.exception_handler(Busy)
    async def busy(request: Request, exc: Busy):
        return busy_response(exc, request.scope)

    @app.exception_handler(ClientGone)
    async def gone(request: Request, exc: ClientGone):
        return Response(status_code=499)  # nginx's "client closed request": nobody reads it

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        return error_response(422, validation_error(exc), request.scope)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException):
        path = printable(request.url.path, 200)
        if exc.status_code == 404:
            error = LmscopeError("error.web.not-found", path=path)
        elif exc.status_code == 405:
            error = LmscopeError("error.web.method-not-allowed", method=request.method, path=path)
        else:
            error = LmscopeError("error.web.http", status=exc.status_code)
        return error_response(exc.status_code, error, request.scope, exc.headers)  # 405: Allow

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception):
        error = LmscopeError("error.web.internal", name=type(exc).__name__)
        return error_response(500, error, request.scope)
