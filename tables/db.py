"""Database URLs, engines and migrations.

SQLite (the default, one file) runs in WAL mode with ``synchronous=FULL``, so a committed round survives a
crash of the process or the machine, and readers never wait for a writer; writes open with ``BEGIN
IMMEDIATE`` so two writers queue instead of failing on a lock upgrade. PostgreSQL (``postgresql+psycopg://``)
is for several service replicas sharing one database.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from platformdirs import user_data_dir

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_MIGRATING = threading.Lock()


class StoreUnavailable(RuntimeError):
    """The database cannot be opened or reached (bad URL, missing driver, server down)."""


def one_line(error: object) -> str:
    """A driver's message on one line (psycopg's span several)."""
    return " ".join(str(error).split())


def default_database_url() -> str:
    """The SQLite file in the user's data directory, e.g. ``~/.local/share/zhuoji/tables.sqlite3``."""
    return f"sqlite:///{Path(user_data_dir('zhuoji')) / 'tables.sqlite3'}"


def normalize_url(url: str) -> str:
    """A URL, or a plain file path meaning SQLite; ``postgresql://`` means the psycopg 3 driver."""
    url = url.strip()
    if not url:
        raise StoreUnavailable("the database URL is empty")
    if "://" not in url:
        return f"sqlite:///{Path(url).expanduser().resolve()}"
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def describe(url: str) -> str:
    """The URL without its password, or the file path for SQLite: what to print."""
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return parsed.database or ":memory:"
    return parsed.render_as_string(hide_password=True)


def create_engine(url: str) -> sa.Engine:
    try:
        parsed = sa.engine.make_url(normalize_url(url))
    except sa.exc.ArgumentError as exc:
        raise StoreUnavailable(f"not a database URL: {url!r} ({exc})") from None
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreUnavailable(f"unsupported database {parsed.get_backend_name()!r}: use a SQLite file or "
                               "postgresql+psycopg://")
    if parsed.get_backend_name() == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise StoreUnavailable("an in-memory SQLite database would lose the tables; give a file")
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(parsed, connect_args={"timeout": 30, "check_same_thread": False})
        sa.event.listen(engine, "connect", _sqlite_connect)
        sa.event.listen(engine, "begin", _sqlite_begin)
        return engine
    try:
        return sa.create_engine(parsed, pool_pre_ping=True)
    except ImportError as exc:
        raise StoreUnavailable(f"no driver for {describe(str(parsed))}: {exc}") from None


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # SQLAlchemy emits BEGIN itself (below); pysqlite's own implicit transactions would get in the way.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    for pragma in ("busy_timeout=30000", "journal_mode=WAL", "synchronous=FULL", "foreign_keys=ON"):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def _sqlite_begin(connection: sa.Connection) -> None:
    write = connection.get_execution_options().get("write", False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def migrate(engine: sa.Engine) -> None:
    """Bring the schema to the newest migration (idempotent; several replicas may call it at once)."""
    _alembic(engine, command.upgrade, "head")


def downgrade(engine: sa.Engine, revision: str) -> None:
    """Take the schema back to ``revision`` (a database as an older release left it: for tests of a migration)."""
    _alembic(engine, command.downgrade, revision)


def _alembic(engine: sa.Engine, action: Any, revision: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    sqlite = engine.dialect.name == "sqlite"
    try:
        # Alembic keeps its context in module globals: one migration per process at a time. Between processes
        # (replicas) the database serializes them (BEGIN IMMEDIATE; PostgreSQL's advisory lock in env.py).
        with _MIGRATING, engine.connect().execution_options(write=True) as connection:
            if sqlite:
                # A SQLite batch migration recreates a table (copy, drop, rename): with foreign keys on, dropping
                # score_tables would delete every round with it. The pragma is ignored inside a transaction, so
                # it is set on the driver's connection before one begins, and set back on after.
                connection.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")
            try:
                config.attributes["connection"] = connection
                action(config, revision)
                connection.commit()
            finally:
                if sqlite:
                    connection.rollback()
                    connection.connection.driver_connection.execute("PRAGMA foreign_keys=ON")
    except sa.exc.OperationalError as exc:
        raise StoreUnavailable(f"cannot open the database {describe(str(engine.url))}: {one_line(exc.orig)}") from None
