"""A throwaway PostgreSQL cluster for the tests and the benchmark: ``initdb`` into a temp dir, started on a
Unix socket only (no TCP port), removed at exit. Run as the ``postgres`` user when the caller is root (initdb
refuses root). Needs Debian's ``postgresql`` (``/usr/lib/postgresql/*/bin``), ``initdb`` on PATH or
``ZHUOJI_PG_BIN``.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class PostgresUnavailable(RuntimeError):
    """No server can be started here; the message says why."""


def _bindir() -> Path | None:
    if os.environ.get("ZHUOJI_PG_BIN"):
        return Path(os.environ["ZHUOJI_PG_BIN"])
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@contextmanager
def throwaway_postgres(durable: bool = False) -> Iterator[str]:
    """Yields the URL of the new cluster's ``postgres`` database. ``durable=False`` turns fsync off (tests)."""
    bindir = _bindir()
    if bindir is None or not (bindir / "initdb").exists():
        raise PostgresUnavailable("initdb not found (looked in /usr/lib/postgresql/*/bin, PATH, ZHUOJI_PG_BIN)")
    base = Path(tempfile.mkdtemp(prefix="zhuoji-pg-"))
    port = 20000 + secrets.randbelow(20000)  # names the socket file only
    as_root = os.geteuid() == 0
    if as_root:
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(base, ignore_errors=True)
            raise PostgresUnavailable("running as root and there is no postgres user to run the server") from None
        os.chown(base, pw.pw_uid, pw.pw_gid)

    def run(*argv: str) -> subprocess.CompletedProcess:
        cmd = ["su", "postgres", "-c", shlex.join(argv)] if as_root else list(argv)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    data, log = base / "data", base / "log"
    init = run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8")
    if init.returncode:
        shutil.rmtree(base, ignore_errors=True)
        raise PostgresUnavailable(f"initdb failed: {init.stderr.strip()[-300:]}")
    options = f"-p {port} -k {base} -c listen_addresses= -c max_connections=200" + ("" if durable else " -c fsync=off")
    start = run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-o", options, "start")
    if start.returncode:
        text = log.read_text() if log.exists() else start.stderr
        shutil.rmtree(base, ignore_errors=True)
        raise PostgresUnavailable(f"the server did not start: {text.strip()[-300:]}")
    try:
        yield f"postgresql+psycopg://postgres@/postgres?host={base}&port={port}"
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(data), "stop", "-m", "immediate")
        shutil.rmtree(base, ignore_errors=True)
