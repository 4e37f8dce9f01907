"""Where the tables live, and the store the service opens lazily.

The database URL comes from ``pipeline.settings.Settings.database_url`` (``--db`` or ``ZHUOJI_DATABASE_URL``);
without one, the SQLite file in the user's data directory. The service opens the database on the first table
request, not at start-up, so the scoring and photo endpoints work (and tests run) without one; a database
that cannot be reached answers 503 and is tried again on the next request.
"""

from __future__ import annotations

import threading

from tables import TableStore, default_database_url


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
