"""What the route modules share: the loaded detector and the table store of ``app.state``, and the store's
exceptions as HTTP answers (one module, so route files never import each other's helpers)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import Request
from fastapi.responses import JSONResponse

from api.service.errors import ApiError, error_body
from pipeline.photo import Detector
from tables import (
    IdempotencyKeyReused,
    ProfileNotFound,
    RoundNotFound,
    StaleVersion,
    StoreUnavailable,
    TableNotFound,
    TableStore,
)


def loaded_detector(request: Request) -> Detector:
    """The process's detector; 503 when the service started without a model."""
    detector = getattr(request.app.state, "detector", None)
    if detector is None:
        reason = getattr(request.app.state, "model_error", None) or "no model"
        raise ApiError(503, "model_unavailable", f"the tile model is not loaded ({reason}); text endpoints still work")
    return detector


def table_store(request: Request) -> TableStore:
    """The tables' store, opened on first use; 503 when the database cannot be reached."""
    try:
        return request.app.state.tables.get()
    except StoreUnavailable as exc:
        raise ApiError(503, "database_unavailable", str(exc)) from None


@contextmanager
def store_errors() -> Iterator[None]:
    """The store's exceptions → HTTP answers; every path leaves the stored table unchanged."""
    try:
        yield
    except (TableNotFound, RoundNotFound, ProfileNotFound) as exc:
        raise ApiError(404, "not_found", str(exc.args[0])) from None
    except IdempotencyKeyReused as exc:
        raise ApiError(422, "idempotency_key_reused", str(exc)) from None
    except StoreUnavailable as exc:
        raise ApiError(503, "database_unavailable", str(exc)) from None
    except ValueError as exc:
        raise ApiError(422, "invalid_round", str(exc)) from None


def stale_answer(exc: StaleVersion) -> JSONResponse:
    """409 for a write based on an old version, with the table as it is now next to the error."""
    return JSONResponse({**error_body("stale_version", str(exc)), "table": exc.current.to_dict()}, status_code=409)
