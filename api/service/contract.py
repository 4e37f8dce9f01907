"""The OpenAPI description made to match what the service answers.

The routes document what they decide themselves; what the layers around them answer is added here, in one pass
over the generated description (FastAPI's documented way to extend it), so that every status code an operation
can answer is listed with the project's error shape:

- 429 on the writes a quota counts (``api.service.quotas``).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from api.service.errors import ERROR_SCHEMA
from api.service.quotas import quota_for


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
