"""Fixtures of the table tests: a SQLite file and a real PostgreSQL server per test session.

PostgreSQL: a throwaway cluster (``initdb`` into a temp dir, run as the ``postgres`` user when the tests run
as root, listening on a Unix socket only) and a fresh database per test. Without the server binaries the
PostgreSQL cases skip with the reason; with ``ZHUOJI_REQUIRE_POSTGRES=1`` (CI) they fail instead.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

# ------------------------------------------------------------------------------ PostgreSQL


def _pg_bindir() -> Path | None:
    if os.environ.get("ZHUOJI_PG_BIN"):
        return Path(os.environ["ZHUOJI_PG_BIN"])
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _no_server(reason: str) -> None:
    if os.environ.get("ZHUOJI_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required here (ZHUOJI_REQUIRE_POSTGRES=1) but {reason}")
    pytest.skip(f"no local PostgreSQL server could be started: {reason} (install Debian's postgresql)")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A running throwaway cluster; yields the URL of its ``postgres`` database (Unix socket, no TCP)."""
    bindir = _pg_bindir()
    if bindir is None or not (bindir / "initdb").exists():
        _no_server("initdb not found (looked in /usr/lib/postgresql/*/bin, PATH, ZHUOJI_PG_BIN)")
    base = Path(tempfile.mkdtemp(prefix="zhuoji-pg-"))
    port = 20000 + secrets.randbelow(20000)  # names the socket file only: no TCP port is opened
    as_root = os.geteuid() == 0
    if as_root:
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            _no_server("running as root and there is no postgres user to run the server as")
        os.chown(base, pw.pw_uid, pw.pw_gid)

    def run(*argv: str) -> subprocess.CompletedProcess:
        cmd = " ".join(f"'{a}'" for a in argv)
        full = ["su", "postgres", "-c", cmd] if as_root else list(argv)
        return subprocess.run(full, capture_output=True, text=True, timeout=120)

    data, log = base / "data", base / "log"
    init = run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8")
    if init.returncode:
        shutil.rmtree(base, ignore_errors=True)
        _no_server(f"initdb failed: {init.stderr.strip()[-300:]}")
    start = run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-o",
                f"-p {port} -k {base} -c listen_addresses= -c fsync=off -c max_connections=200", "start")
    if start.returncode:
        text = log.read_text() if log.exists() else start.stderr
        shutil.rmtree(base, ignore_errors=True)
        _no_server(f"the server did not start: {text.strip()[-300:]}")
    try:
        yield f"postgresql+psycopg://postgres@/postgres?host={base}&port={port}"
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(data), "stop", "-m", "immediate")
        shutil.rmtree(base, ignore_errors=True)


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
