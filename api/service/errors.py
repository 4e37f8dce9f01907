"""One error shape for every failure: ``{"error": {"code": ..., "message": ..., "details": [...]}}``.

Routes raise :class:`ApiError` for problems a client can fix (bad image, impossible hand, wrong JSON); the
handlers below turn those, FastAPI's validation errors and Starlette's HTTP errors into that shape. The
catch-all handler is the last resort for bugs: it logs the traceback and answers a generic JSON 500, and it
counts how often it ran (``app.state.internal_errors``) so tests can prove hostile input never gets there.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pipeline.errors import Refused, field_path, problem_message

log = logging.getLogger("zhuoji.api")

# HTTP status → code for Starlette's own errors (404 unknown path, 405 wrong method, 400 unparsable form).
HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 408: "request_timeout",
              413: "payload_too_large", 415: "unsupported_media_type"}
# The OpenAPI schema of that shape (``api.service.responses.ErrorResponse``), for answers documented after the
# routes were made (quotas, the contract pass in ``api.service.contract``).
ERROR_SCHEMA = {"$ref": "#/components/schemas/ErrorResponse"}


class ApiError(Exception):
    """A problem with the request, answered with ``status`` and ``{"error": {"code", "message"}}``."""

    def __init__(self, status: int, code: str, message: str, details: list[dict[str, Any]] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.details, self.headers = status, code, message, details, headers


def error_body(code: str, message: str, details: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if details:
        body["details"] = details
    return {"error": body}


def error_response(status: int, code: str, message: str, details: list[dict[str, Any]] | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error_body(code, message, details), status_code=status, headers=headers)


def _validation_details(exc: RequestValidationError) -> list[dict[str, Any]]:
    # Only location, message and type: the raw input and the ctx objects may be bytes or exceptions.
    return [{"field": field_path(tuple(e.get("loc", ()))), "message": problem_message(e), "type": str(e.get("type", ""))}
            for e in exc.errors()[:20]]


async def _api_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.code, exc.message, exc.details, exc.headers)


async def _refused(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Refused)
    # bytes that are no image we decode: the media type is wrong; every other refusal is content we understood
    status = 415 if exc.code == "unsupported_media_type" else 422
    return error_response(status, exc.code, exc.message)


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details = _validation_details(exc)
    if any(d["type"] == "json_invalid" for d in details):
        return error_response(400, "invalid_json", "the request body is not valid JSON", details)
    first = details[0] if details else {"field": "request", "message": "invalid request"}
    more = f" (and {len(details) - 1} more)" if len(details) > 1 else ""
    return error_response(422, "invalid_request", f"{first['field']}: {first['message']}{more}", details)


async def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = HTTP_CODES.get(exc.status_code, "http_error")
    message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    if exc.status_code == 400 and "parsing the body" in message:
        message = "the request body could not be parsed (broken multipart form or JSON)"
    return error_response(exc.status_code, code, message, headers=getattr(exc, "headers", None))


async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    request.app.state.internal_errors = getattr(request.app.state, "internal_errors", 0) + 1
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal_error", "internal error: the server could not handle this request; "
                                                 "it has been logged")


def install_error_handlers(app: FastAPI) -> None:
    app.state.internal_errors = 0
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(Refused, _refused)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _internal_error)
