"""The OpenAPI description made to match what the service answers.

The routes document what they decide themselves; what the layers around them answer is added here, in one pass
over the generated description (FastAPI's documented way to extend it), so that every status code an operation
can answer is listed with the project's error shape:

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


def _answers(path: str, method: str) -> dict[str, dict[str, Any]]:
    """The answers the layers around the route give for ``method`` on ``path`` (a path template)."""
    out: dict[str, dict[str, Any]] = {}
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
                    for status, answer in _answers(path, method).items():
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
