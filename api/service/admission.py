"""Admission before reading: photo requests are let in, or refused with 503 busy, from their headers alone, and
every body must arrive in bounded time.

A pure ASGI middleware, outside FastAPI's body parsing, so that a refused upload is never read:

- a photo request is refused (503 ``busy``, ``Retry-After``; its body read and dropped first, so that a client
  still sending reads the answer instead of a reset) when as many photo requests as the runner holds
  (running + queued) are already in, or when the bytes of the photo bodies being received would pass
  ``Limits.upload_bytes_in_flight`` (a body's declared ``Content-Length``, or the 20 MB limit when it declares
  none, reserved until it has arrived);
- a body (any route) must arrive within ``Limits.body_timeout_s`` with no pause longer than
  ``Limits.body_idle_s``, else 408 and the connection is closed (a client sending a byte a second holds nothing).

The headers' own timeout, keep-alive and the connection cap live in the server (``api.service.server``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.service.errors import HTTP_CODES, error_response
from pipeline.limits import Limits


class BodyTimeout(StarletteHTTPException):
    """Raised from ``receive`` when a body arrives too slowly; an HTTPException, so FastAPI's body parsing lets it
    through unchanged."""

    def __init__(self, message: str) -> None:
        super().__init__(408, message, headers={"Connection": "close"})


class AdmissionMiddleware:
    """Photo admission from the headers, and body-read timeouts. ``is_photo``: the paths that take a photo;
    ``body_limit``: a path's body-size limit (reserved for a photo body that declares no length)."""

    def __init__(self, app: ASGIApp, limits: Limits, is_photo: Callable[[str], bool],
                 body_limit: Callable[[str], int]) -> None:
        self.app = app
        self.limits = limits
        self.is_photo = is_photo
        self.body_limit = body_limit
        self.photo_requests = 0  # admitted photo requests not yet answered
        self.bytes_in_flight = 0  # photo body bytes reserved and not yet received

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        reserved = 0
        if self.is_photo(scope["path"]):
            runner = getattr(scope["app"].state, "runner", None)
            declared = dict(scope["headers"]).get(b"content-length", b"")
            reserved = int(declared) if declared.isdigit() else self.body_limit(scope["path"])
            refusal = self._refusal(runner, reserved)
            if refusal is not None:
                await self._refuse(scope, receive, send, refusal)
                return
            self.photo_requests += 1
            self.bytes_in_flight += reserved

        def release() -> None:
            nonlocal reserved
            self.bytes_in_flight -= reserved
            reserved = 0

        try:
            await self.app(scope, self._timed_receive(receive, release), send)
        finally:
            release()
            if self.is_photo(scope["path"]):
                self.photo_requests -= 1

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, refusal: str) -> None:
        """503 busy, answered once the body has arrived, read and dropped as it comes (nothing is kept): a client
        that sends its whole body before reading (Python's http.client, many phone stacks) gets to read the answer;
        answered earlier, the connection's next timeout would close it under the client still sending, and the
        client would see a reset. The body's own bounds hold while draining (size, pauses, total time)."""
        drain = self._timed_receive(receive, lambda: None)
        try:
            while True:
                message = await drain()
                if message["type"] == "http.disconnect":
                    return
                if not message.get("more_body", False):
                    break
        except StarletteHTTPException as exc:  # too slow (408) or past the size limit (413)
            await error_response(exc.status_code, HTTP_CODES[exc.status_code], exc.detail, headers={"Connection": "close"})(
                scope, receive, send)
            return
        headers = {"Retry-After": str(self.limits.retry_after_s)}
        await error_response(503, "busy", refusal, headers=headers)(scope, receive, send)

    def _refusal(self, runner: Any, size: int) -> str | None:
        if runner is not None and (self.photo_requests >= runner.capacity or runner.full()):
            return "the server is busy with other photos: retry in a moment"
        if self.bytes_in_flight and self.bytes_in_flight + size > self.limits.upload_bytes_in_flight:
            return "the server is receiving too many photos at once: retry in a moment"
        return None

    def _timed_receive(self, receive: Receive, on_body_done: Callable[[], None]) -> Receive:
        limits = self.limits
        start = time.monotonic()
        body_done = False

        async def timed_receive() -> Message:
            nonlocal body_done
            if body_done:  # after the body: only a disconnect can come, waited for by whoever asks
                return await receive()
            left = limits.body_timeout_s - (time.monotonic() - start)
            with anyio.move_on_after(min(limits.body_idle_s, max(left, 0))) as scope:
                message = await receive()
            if scope.cancelled_caught:
                raise BodyTimeout(f"the request body arrived too slowly (at most {limits.body_timeout_s:g} s in all, "
                                  f"pauses of at most {limits.body_idle_s:g} s)")
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
                on_body_done()
            return message

        return timed_receive
