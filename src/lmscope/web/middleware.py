"""ASGI middleware of every response: a request-body limit, and the security and timing
headers. (The bounded queue in front of the model is ``web.limits.Admission``.)"""

from __future__ import annotations

import time

from lmscope.web.errors import BodyTooLarge, error_response

# Everything the page loads comes from this server: the browser enforces it, so a stray CDN
# link would fail loudly in development instead of silently needing the network.
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` (413), declared or streamed."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            response = error_response(413, self._error().error, scope)
            return await response(scope, receive, send)
        seen = 0

        async def limited():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise self._error()
            return message

        return await self.app(scope, limited, send)

    def _error(self) -> BodyTooLarge:
        return BodyTooLarge(self.max_bytes // 1024)


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
