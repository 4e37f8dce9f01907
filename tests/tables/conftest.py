"""Fixtures of the table tests: a SQLite file and a real PostgreSQL server per test session.

PostgreSQL: a throwaway cluster (``tests.tables.throwaway``: initdb into a temp dir, Unix socket only) started once
per session and a fresh database per test. Without the server binaries the PostgreSQL cases skip with the
reason; with ``ZHUOJI_REQUIRE_POSTGRES=1`` (CI) they fail instead.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from api.service.app import create_app
from pipeline.settings import Settings
from tests.tables.support import ADMIN_KEY, remember_keys
from tests.tables.throwaway import PostgresUnavailable, throwaway_postgres


def _no_server(reason: str) -> None:
    if os.environ.get("ZHUOJI_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required here (ZHUOJI_REQUIRE_POSTGRES=1) but {reason}")
    pytest.skip(f"no local PostgreSQL server could be started: {reason} (install Debian's postgresql)")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A running throwaway cluster for the session; the URL of its ``postgres`` database."""
    with ExitStack() as stack:
        try:
            url = stack.enter_context(throwaway_postgres())
        except PostgresUnavailable as exc:
            _no_server(str(exc))
        yield url


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A new empty database on the session's server."""
    name = "t_" + secrets.token_hex(6)
    admin = sa.create_engine(pg_server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    try:
        yield pg_server.replace("/postgres?", f"/{name}?")
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.dispose()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'tables.sqlite3'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same test on a SQLite file and on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'tables.sqlite3'}"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def client(db_url: str) -> Iterator[TestClient]:
    """The service without a model on ``db_url`` (tables and text only) with the admin key ``ADMIN_KEY``; the
    client keeps the edit keys of the tables it creates and writes with them, as the page does
    (``remember_keys``). Afterwards, no input may have reached the catch-all 500 handler."""
    app = create_app(model_path="/nonexistent/model.onnx", database=db_url, settings=Settings(admin_key=ADMIN_KEY))
    with TestClient(app) as c:
        remember_keys(c)
        yield c
    assert app.state.internal_errors == 0
    app.state.tables.close()


@pytest.fixture
def anonymous(client: TestClient) -> TestClient:
    """Another client of the same service that holds no key."""
    return TestClient(client.app)
