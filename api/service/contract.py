"""The OpenAPI description made to match what the service answers.

The routes document what they decide themselves; what the layers around them answer is added here, in one pass
over the generated description (FastAPI's documented way to extend it), so that every status code an operation
can answer is listed with the project's error shape:

- 400 on every operation: a ``Host`` that is not the server's (``invalid_host``), and for a body JSON that does not
  parse (``invalid_json``), a broken multipart form, an invalid ``Content-Length``;
- 408 and 413 on every operation with a body (too slow, too large: ``api.service.admission``, ``uploads``);
- 415 and 503 ``busy`` on every photo upload (not an image; admission), 404 on ``/v1/read`` and ``/v1/score``
  (the ``table`` field names no table);
- 429 on the writes a quota counts (``api.service.quotas``).

And a 405 names in ``Allow`` every method the path has (Starlette names only those of the first route that
matched the path, e.g. ``POST`` alone for ``GET``/``POST /v1/tables``).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.service.errors import ERROR_SCHEMA, error_response
from api.service.quotas import quota_for

METHODS = ("get", "put", "post", "delete", "patch")


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ERROR_SCHEMA}}}


def _answers(path: str, method: str, operation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The answers the layers around the route give for ``method`` on ``path`` (a path template)."""
    out: dict[str, dict[str, Any]] = {
        "400": _error("a Host that is not this server's (invalid_host); a body that does not parse (invalid_json, "
                      "a broken form, an invalid Content-Length)")}
    body = operation.get("requestBody", {}).get("content", {})
    if body:
        out["408"] = _error("the body arrived too slowly (request_timeout)")
        out["413"] = _error("the body is larger than this operation takes (payload_too_large)")
    if "multipart/form-data" in body:
        out["415"] = _error("a photo that is not a JPEG, PNG, WebP, BMP or TIFF image (unsupported_media_type)")
        out["503"] = _error("busy: too many photos at once, retry after the Retry-After header's seconds")
    if path in ("/v1/read", "/v1/score"):
        out["404"] = _error("the table named by the table field does not exist (not_found)")
    if quota_for(method.upper(), path) is not None:
        out["429"] = _error("too many writes of this kind from the client's address: retry after the "
                            "Retry-After header's seconds")
    return out


def document_contract(app: FastAPI) -> None:
    """Replace ``app.openapi`` with the generated description plus the answers of the layers around the routes."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = generate()
            for path, operations in schema.get("paths", {}).items():
                for method, operation in operations.items():
                    responses = operation.setdefault("responses", {})
                    for status, answer in _answers(path, method, operation).items():
                        responses.setdefault(status, answer)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    @cache
    def templates() -> list[tuple[re.Pattern[str], str]]:
        out = []
        for path, operations in openapi().get("paths", {}).items():
            pattern = re.compile(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)))
            out.append((pattern, ", ".join(sorted(m.upper() for m in operations if m in METHODS))))
        return out

    async def method_not_allowed(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        allow = next((methods for pattern, methods in templates() if pattern.fullmatch(_request.url.path)),
                     (exc.headers or {}).get("Allow", ""))
        return error_response(405, "method_not_allowed", f"this path takes {allow or 'no method'}",
                              headers={"Allow": allow})

    app.add_exception_handler(405, method_not_allowed)
