"""Where the tables live: the one place that reads ``ZHUOJI_DATABASE_URL``, and the lazily opened store.

The service opens the database on the first table request, not at start-up, so the scoring and photo
endpoints work (and tests run) without one; a database that cannot be reached answers 503 and is tried
again on the next request.
"""

from __future__ import annotations

import os
import threading

from tables import StoreUnavailable, TableStore, default_database_url

ENV = "ZHUOJI_DATABASE_URL"


def database_url(explicit: str | None = None) -> str:
    """``--db`` / a ``create_app`` argument, else ``ZHUOJI_DATABASE_URL``, else the SQLite file in the
    user's data directory."""
    return explicit or os.environ.get(ENV) or default_database_url()


class LazyStore:
    def __init__(self, url: str) -> None:
        self.url = url
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


__all__ = ["ENV", "LazyStore", "StoreUnavailable", "database_url"]
