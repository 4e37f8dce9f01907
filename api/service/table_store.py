"""Where the tables live, and the store the service opens lazily.

The database URL comes from ``pipeline.settings.Settings.database_url`` (``--db`` or ``ZHUOJI_DATABASE_URL``);
without one, the SQLite file in the user's data directory. The service opens the database on the first table
request, not at start-up, so the scoring and photo endpoints work (and tests run) without one; a database
that cannot be reached answers 503 ``database_unavailable`` and is tried again on the next request; the answer
never shows the database's URL, file or socket path (the server's log has the detail). ``/readyz`` asks a
database server (PostgreSQL) whether it answers, and checks that a SQLite file could be opened (its folder is a
folder, writable) without creating it.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import anyio
import sqlalchemy as sa
from fastapi import FastAPI

from api.service.errors import ApiError
from tables import StoreUnavailable, TableStore, default_database_url
from tables.db import normalize_url

log = logging.getLogger("zhuoji.api")


class LazyStore:
    def __init__(self, url: str | None) -> None:
        self.url = url or default_database_url()
        self._store: TableStore | None = None
        self._lock = threading.Lock()

    def get(self) -> TableStore:
        with self._lock:
            if self._store is None:
                try:
                    self._store = TableStore.open(self.url)
                except (OSError, sa.exc.DBAPIError) as exc:  # a file where its folder should be, not a database
                    raise StoreUnavailable(f"cannot open the database: {exc}") from None
            return self._store

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None


def unavailable(exc: StoreUnavailable) -> ApiError:
    """The answer for a database that cannot be used: 503, the detail (paths, URLs) only in the server's log."""
    log.warning("database unavailable: %s", exc)
    return ApiError(503, "database_unavailable", "the database cannot be reached: retry in a moment; the server's "
                                                 "log has the reason", headers={"Retry-After": "5"})


def sqlite_usable(path: Path) -> bool:
    """Whether SQLite could open or create ``path``: an existing file readable and writable, or else the nearest
    existing folder above it a writable folder (the folders between are made on first use)."""
    if path.exists():
        return path.is_file() and os.access(path, os.R_OK | os.W_OK) and os.access(path.parent, os.W_OK)
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


async def database_answers(app: FastAPI) -> tuple[bool, str]:
    """The readiness check ``database``: (ok, detail), no paths or passwords in the detail."""
    lazy: LazyStore = app.state.tables
    try:
        local = sa.engine.make_url(normalize_url(lazy.url)).get_backend_name() == "sqlite"
    except (StoreUnavailable, sa.exc.ArgumentError):
        return False, "not a database URL"
    if local:
        database = sa.engine.make_url(normalize_url(lazy.url)).database or ""
        if not sqlite_usable(Path(database)):
            return False, "the SQLite file cannot be opened or created (see the server's log on a table request)"
        return True, "SQLite file, opened on first use"

    def ping() -> None:
        with lazy.get().engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")

    try:
        await anyio.to_thread.run_sync(ping, abandon_on_cancel=True)
    except (StoreUnavailable, sa.exc.SQLAlchemyError) as exc:
        return False, f"the database does not answer: {type(exc).__name__}"
    return True, "the database answers"
