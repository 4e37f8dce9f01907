"""Where the tables live, and the store the service opens lazily.

The database URL comes from ``pipeline.settings.Settings.database_url`` (``--db`` or ``ZHUOJI_DATABASE_URL``);
without one, the SQLite file in the user's data directory. The service opens the database on the first table
request, not at start-up, so the scoring and photo endpoints work (and tests run) without one; a database
that cannot be reached answers 503 and is tried again on the next request. ``/readyz`` asks a database
server (PostgreSQL) whether it answers; a SQLite file is local and is only opened on first use.
"""

from __future__ import annotations

import threading

import anyio
import sqlalchemy as sa
from fastapi import FastAPI

from tables import StoreUnavailable, TableStore, default_database_url
from tables.db import normalize_url


class LazyStore:
    def __init__(self, url: str | None) -> None:
        self.url = url or default_database_url()
        self._store: TableStore | None = None
        self._lock = threading.Lock()

    def get(self) -> TableStore:
        with self._lock:
            if self._store is None:
                self._store = TableStore.open(self.url)
            return self._store

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None


async def database_answers(app: FastAPI) -> tuple[bool, str]:
    """The readiness check ``database``: (ok, detail), no paths or passwords in the detail."""
    lazy: LazyStore = app.state.tables
    try:
        local = sa.engine.make_url(normalize_url(lazy.url)).get_backend_name() == "sqlite"
    except (StoreUnavailable, sa.exc.ArgumentError):
        return False, "not a database URL"
    if local:
        return True, "SQLite file, opened on first use"

    def ping() -> None:
        with lazy.get().engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")

    try:
        await anyio.to_thread.run_sync(ping, abandon_on_cancel=True)
    except (StoreUnavailable, sa.exc.SQLAlchemyError) as exc:
        return False, f"the database does not answer: {type(exc).__name__}"
    return True, "the database answers"
