"""Security headers on every answer: what the browser may load, frame and leak.

- ``Content-Security-Policy``: the page loads scripts, styles, fonts and data from the service only (it has no
  inline script; ``table.js`` sets ``style`` attributes for colour swatches, hence ``style-src-attr``), photos
  shown from ``blob:`` URLs, and no page may frame it. ``/docs`` and ``/redoc`` (served from the service too:
  ``fastapi-offline``) start with one inline script each, so they get a policy with ``'unsafe-inline'`` scripts
  and nothing else from outside.
- ``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY`` (older browsers), ``Referrer-Policy: no-referrer``
  (a table's address, with its key in the fragment, never travels in a ``Referer``).
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_POLICY = ("default-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; style-src 'self'; "
               "style-src-attr 'unsafe-inline'; object-src 'none'; base-uri 'none'; form-action 'self'; "
               "frame-ancestors 'none'")
DOCS_POLICY = ("default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
               "img-src 'self' data:; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; "
               "frame-ancestors 'none'")
DOCS_PATHS = ("/docs", "/redoc")
COMMON = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"}


class SecurityHeadersMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = DOCS_POLICY if scope["path"].startswith(DOCS_PATHS) else PAGE_POLICY

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in {**COMMON, "Content-Security-Policy": policy}.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)
