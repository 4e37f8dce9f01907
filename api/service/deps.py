"""What the route modules share: the loaded detector and the table store of ``app.state``, and the store's
exceptions as HTTP answers (one module, so route files never import each other's helpers)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import Request
from fastapi.responses import JSONResponse

from api.service.errors import ApiError, error_body
from api.service.table_store import unavailable
from pipeline.photo import Detector
from pipeline.table_models import TableOut
from tables import (
    DuplicatePlayers,
    IdempotencyKeyReused,
    InvalidProfile,
    ProfileNotFound,
    RoundNotFound,
    StaleVersion,
    StoreUnavailable,
    TableFinished,
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
        raise unavailable(exc) from None  # 503 without paths or URLs


@contextmanager
def store_errors(invalid: str = "invalid_round") -> Iterator[None]:
    """The store's exceptions → HTTP answers; every path leaves the stored table unchanged. ``invalid``: the
    code of any other refusal, named after what was refused."""
    try:
        yield
    except (TableNotFound, RoundNotFound, ProfileNotFound) as exc:
        raise ApiError(404, "not_found", str(exc.args[0])) from None
    except IdempotencyKeyReused as exc:
        raise ApiError(422, "idempotency_key_reused", str(exc)) from None
    except TableFinished as exc:
        raise ApiError(409, "table_finished", str(exc)) from None
    except StoreUnavailable as exc:
        raise unavailable(exc) from None
    except DuplicatePlayers as exc:
        raise ApiError(422, "duplicate_players", str(exc)) from None
    except InvalidProfile as exc:
        raise ApiError(422, "invalid_profile", str(exc)) from None
    except ValueError as exc:
        raise ApiError(422, invalid, str(exc)) from None


def stale_answer(exc: StaleVersion) -> JSONResponse:
    """409 for a write based on an old version, with the table as it is now next to the error."""
    current = TableOut.of(exc.current).model_dump(mode="json")
    return JSONResponse({**error_body("stale_version", str(exc)), "table": current}, status_code=409)
