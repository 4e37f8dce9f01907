"""Who may write: ``require_edit_key`` (a table's writes) and ``require_admin_key`` (the list of every table, house
profiles), FastAPI dependencies added to those routes.

Both read ``Authorization: Bearer <key>``: 401 ``key_required`` (with ``WWW-Authenticate: Bearer``) without one,
403 ``wrong_key`` with another. A dependency runs before the body is validated, so a request without the key
learns nothing about its body and nothing is written. Keys are compared in constant time (``tables.keys``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from api.service.errors import ApiError
from api.service.responses import ErrorResponse
from tables import StoreUnavailable, TableNotFound, WrongEditKey
from tables.keys import key_hash, key_matches

_bearer = HTTPBearer(auto_error=False, description="the table's edit key (or, where said, the admin key)")
Bearer = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]

KEY_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorResponse, "description": "no key: `Authorization: Bearer <key>` (`key_required`)"},
    403: {"model": ErrorResponse, "description": "not the key of this table, or not the admin key (`wrong_key`)"}}


def _key_required(what: str) -> ApiError:
    return ApiError(401, "key_required", f"this write needs {what}: send Authorization: Bearer <key>",
                    headers={"WWW-Authenticate": "Bearer"})


async def require_edit_key(request: Request, table_id: str, credentials: Bearer) -> None:
    """The table's edit key, or 401/403 (404 when there is no such table)."""
    if credentials is None:
        raise _key_required("the table's edit key")
    store = request.app.state.tables
    try:
        await run_in_threadpool(lambda: store.get().check_edit_key(table_id, credentials.credentials))
    except WrongEditKey as exc:
        raise ApiError(403, "wrong_key", str(exc)) from None
    except TableNotFound as exc:
        raise ApiError(404, "not_found", str(exc.args[0])) from None
    except StoreUnavailable as exc:
        raise ApiError(503, "database_unavailable", str(exc)) from None


def require_admin_key(request: Request, credentials: Bearer) -> None:
    """The service's admin key (``ZHUOJI_ADMIN_KEY`` / ``zhuoji serve --admin-key``), or 401/403; with none
    configured, every key is wrong."""
    if credentials is None:
        raise _key_required("the admin key")
    admin_key = getattr(request.app.state, "admin_key", None)
    if not key_matches(credentials.credentials, key_hash(admin_key) if admin_key else None):
        raise ApiError(403, "wrong_key", "that is not the admin key" if admin_key else
                       "no admin key is configured (ZHUOJI_ADMIN_KEY or zhuoji serve --admin-key)")


EditKey = Depends(require_edit_key)
AdminKey = Depends(require_admin_key)
