"""Keeping one server responsive for a whole class: a bounded queue and a bounded wait.

The model runs one forward pass at a time (``Gate``); every other request waits its turn in a
worker thread. Two limits stop that queue from growing without end when more people ask than
the machine can answer:

- ``Admission``: at most ``limit`` API requests are in progress at once; the next one is
  answered 503 straight away, so a flood costs nothing but the refusal.
- ``Gate``: a request that has waited ``wait_s`` seconds for the model gives up with 503
  instead of holding its connection open indefinitely.

Both answers are JSON ``{"error": "..."}`` with ``Retry-After``, like every other error.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from contextvars import ContextVar

import anyio
from fastapi.responses import JSONResponse

from lmscope.engine.libc import libc
from lmscope.errors import LmscopeError
from lmscope.web.error_codes import error_body, request_language

RETRY_AFTER_S = 1


class Busy(LmscopeError):
    """The server is saturated; the request may be sent again in ``retry_after`` seconds
    (HTTP 503 with ``Retry-After``). Raised with a catalog id and its values
    (``error.web.busy.…``)."""

    def __init__(self, message: object, retry_after: int = RETRY_AFTER_S, **values: object):
        super().__init__(message, **values)
        self.retry_after = max(1, int(retry_after))


def busy_response(error: Busy, scope=None) -> JSONResponse:
    """The 503 answer: the refusal in the language the request asks for, and Retry-After."""
    lang = request_language(scope) if scope is not None else "en"
    return JSONResponse(
        error_body(error, lang),
        status_code=503,
        headers={"retry-after": str(error.retry_after)},
    )


class Gate:
    """One holder at a time, first come first served, re-entrant (views nest), and a wait
    that gives up after ``wait_s`` seconds with ``Busy``.

    First come first served matters under load: a plain lock lets whichever thread wakes
    first win, so with thirty waiters an unlucky request can lose again and again (seconds
    of tail latency) while others pass it.
    """

    def __init__(self, wait_s: float | None = None):
        self.wait_s = wait_s
        self._cond = threading.Condition(threading.Lock())
        self._queue: deque[object] = deque()  # tickets of waiting threads, oldest first
        self._owner: int | None = None
        self._depth = 0

    def __enter__(self):
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return self
            ticket = object()
            self._queue.append(ticket)
            deadline = None if self.wait_s is None else time.monotonic() + self.wait_s
            try:
                while self._owner is not None or self._queue[0] is not ticket:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        raise Busy("error.web.busy.gate", seconds=f"{self.wait_s:g}")
                    self._cond.wait(left)
            except BaseException:
                self._queue.remove(ticket)
                self._cond.notify_all()  # the next in line may be free to go now
                raise
            self._queue.popleft()
            self._owner, self._depth = me, 1
        return self

    def __exit__(self, *exc) -> None:
        with self._cond:
            self._depth -= 1
            if self._depth == 0:
                self._owner = None
                self._cond.notify_all()

    @property
    def waiting(self) -> int:
        return len(self._queue)


# When the API request being answered arrived (time.monotonic()), set by Admission: the model
# work queue counts a request's wait from here, not from when its job was queued (reading and
# checking a thousand bodies of a burst takes seconds before the first job is queued).
_ARRIVED: ContextVar[float | None] = ContextVar("lmscope_request_arrived", default=None)


def arrival() -> float | None:
    """When the API request this code answers arrived (monotonic), or None outside one."""
    return _ARRIVED.get()


# The ASGI receive of the API request being answered, set by Admission: whether its client
# has gone (a page that moved on to another prompt) is read from it.
_RECEIVE: ContextVar = ContextVar("lmscope_request_receive", default=None)


class ClientGone(Exception):
    """The client of the request being answered has disconnected: nobody reads the answer."""


async def client_gone() -> bool:
    """Whether the client of the request being answered has disconnected (False outside a
    request). Only after its body was read: it peeks at the next message without waiting."""
    receive = _RECEIVE.get()
    if receive is None:
        return False
    message = None
    with anyio.CancelScope() as scope:
        scope.cancel()  # do not wait: a client still there sends nothing more
        message = await receive()
    return message is not None and message.get("type") == "http.disconnect"


class Admission:
    """ASGI middleware: refuse API requests beyond ``limit`` in progress with a 503.

    Only ``/api/`` paths count (the page and its static files are cheap and must always load).
    A streamed answer counts until its last byte is sent. The counter lives on the event loop's
    thread, so a plain integer is enough.
    """

    def __init__(self, app, limit: int):
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.app, self.limit = app, limit
        self.active = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope.get("path", "").startswith("/api/"):
            return await self.app(scope, receive, send)
        if self.active >= self.limit:
            response = busy_response(Busy("error.web.busy.requests", n=self.active), scope)
            return await response(scope, receive, send)
        self.active += 1
        token, receiving = _ARRIVED.set(time.monotonic()), _RECEIVE.set(receive)
        try:
            await self.app(scope, receive, send)
        finally:
            _ARRIVED.reset(token)
            _RECEIVE.reset(receiving)
            self.active -= 1


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8  # glibc's malloc.h
KEEP_BELOW = 1 << 30  # blocks smaller than this come from malloc's heaps, so they can be reused


def _mallopt(*settings: tuple[int, int]) -> bool:
    """Apply glibc ``mallopt`` (parameter, value) settings; True when every one took effect
    (False elsewhere than glibc)."""
    c = libc()
    if c is None or not hasattr(c, "mallopt"):
        return False
    return all([c.mallopt(param, value) == 1 for param, value in settings])


def keep_freed_memory() -> bool:
    """Keep the memory a trace frees for the next one instead of giving it back to the
    system; True when it took effect (glibc only).

    A trace keeps every probe, so each one needs fresh memory, and by default glibc hands
    freed blocks of that size straight back to the kernel, which must zero every page again
    for the next trace: on a 1,024-token SmolLM2 trace that is ~350,000 page faults and ~15%
    of its time. A server traces all day, so it keeps the memory while it works, and hands it
    back once its queue goes idle (``engine.weight_memory.give_back_freed_memory``): a burst
    of a thousand requests would otherwise leave it holding its peak (GBs) all day."""
    if os.environ.get("MALLOC_TRIM_THRESHOLD_") or os.environ.get("MALLOC_MMAP_THRESHOLD_"):
        return False  # the user's own malloc settings win
    return _mallopt((_M_TRIM_THRESHOLD, 2**31 - 1), (_M_MMAP_THRESHOLD, KEEP_BELOW))


def limit_malloc_arenas(arenas: int = 2) -> bool:
    """Cap glibc's malloc arenas for a long-running server; True when it took effect.

    glibc gives each thread that allocates its own arena (up to 8 per core), and the memory
    that traces free stays spread over all of them: with the worker threads a server runs,
    resident memory crept up by ~100 MiB a minute under load and never came back. Two arenas
    keep it flat (``benchmarks/bench_load.py`` measures it). A MALLOC_ARENA_MAX the user set
    wins; elsewhere than glibc this does nothing.
    """
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    return _mallopt((_M_ARENA_MAX, arenas))
