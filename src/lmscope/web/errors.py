"""Every error is JSON ``{"error": "...", "code": "...", "params": {...}}`` with a 4xx (or 503)
status and one readable line (``code`` lets the page say it in its own words, see
``web.error_codes``): user mistakes are expected input, never a traceback."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from lmscope.engine import advice
from lmscope.errors import LmscopeError
from lmscope.web.error_codes import error_body
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


def error_response(status: int, message: str, headers=None) -> JSONResponse:
    return JSONResponse(error_body(message, status), status_code=status, headers=headers)


def in_api_words(message: str) -> str:
    """The engine's advice with Python arguments the JSON API does not have (truncate=,
    layers=, names=, unknown=) as what an API client can do; the Python API keeps its own
    wording."""
    message = advice.TRUNCATE_PATTERN.sub(". Shorten it", message)
    for python_words in (advice.UNKNOWN_CHARS, advice.UNKNOWN_CHARS_TOKENIZER):
        message = message.replace(python_words, "; remove them from the text")
    return message.replace(
        advice.TRACE_LIMIT,
        "Shorten the prompt, or (on the server) raise the limit with LMSCOPE_MAX_TRACE_TOKENS",
    )


def validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        if err.get("type") == "json_invalid":
            return "the request body is not valid JSON"
        loc = ".".join(printable(x) for x in err.get("loc", ()) if x != "body")
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return printable("; ".join(parts) or "invalid request", 500)


def printable(part, limit: int = 60) -> str:
    """A field name from the request, shown on one line: control characters escaped (an
    unknown field may be called "\\n"), long names cut."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(part))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(LmscopeError)
    async def lmscope_error(request: Request, exc: LmscopeError):
        if exc.code is None:  # an English line: error_codes finds its code
            return error_response(400, in_api_words(str(exc)))
        # a catalog message: its id and values are the code and params
        body = {
            "error": exc.render("en"),
            "code": exc.code,
            "params": {k: str(v) for k, v in exc.values.items()},
        }
        return JSONResponse(body, status_code=400)

    @app.exception_handler(NotFound)
    async def not_found(request: Request, exc: NotFound):
        return error_response(404, str(exc))

    @app.exception_handler(Busy)
    async def busy(request: Request, exc: Busy):
        return busy_response(str(exc), exc.retry_after)

    @app.exception_handler(ClientGone)
    async def gone(request: Request, exc: ClientGone):
        return Response(status_code=499)  # nginx's "client closed request": nobody reads it

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError):
        return error_response(422, validation_message(exc))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException):
        message = exc.detail if isinstance(exc.detail, str) else "request failed"
        if exc.status_code == 404:
            message = f"not found: {request.url.path}"
        elif exc.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path}"
        return error_response(exc.status_code, message, exc.headers)  # 405: Allow

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception):
        return error_response(500, f"internal error ({type(exc).__name__}); please report it")
