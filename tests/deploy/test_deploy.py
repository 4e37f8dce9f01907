"""The deployment of deploy/ on loopback: Debian's nginx (deploy/nginx/zhuoji-proxy.conf, the file a server
includes) in front of two ``zhuoji serve`` replicas sharing one throwaway PostgreSQL database. A table is played
through the proxy: a round written on one replica makes the same stale write on the other a 409, a photo is read
through the proxy, and a slow client is held by the proxy, never by a replica.

Needs ``nginx`` (``make nginx``), PostgreSQL's server binaries (``make postgresql``) and the shipped model; skips
without them (``ZHUOJI_REQUIRE_DEPLOY=1``: fails instead).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.support import SAMPLES, model_path
from tests.tables.support import draw_round, win_round
from tests.tables.throwaway import PostgresUnavailable, throwaway_postgres

ROOT = Path(__file__).resolve().parents[2]
PROXY_CONF = ROOT / "deploy" / "nginx" / "zhuoji-proxy.conf"
HOST = "127.0.0.1"
REPLICA_BODY_IDLE_S = 2  # a replica answers 408 to a body that pauses longer; the proxy waits 30 s
NAMES = ["Ann", "Bo", "Cy", "Di"]

pytestmark = pytest.mark.slow


def _missing(reason: str) -> None:
    if os.environ.get("ZHUOJI_REQUIRE_DEPLOY") == "1":
        pytest.fail(f"the deployment test is required here (ZHUOJI_REQUIRE_DEPLOY=1) but {reason}")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _wait(url: str, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, f"{what} exited"
        assert time.monotonic() < deadline, f"{what} did not start"
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)


@contextmanager
def _process(cmd: list[str], ready_url: str, what: str, **kwargs: Any) -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen(cmd, **kwargs)
    try:
        _wait(ready_url, proc, what)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def replica(database_url: str) -> tuple[list[str], int]:
    port = _free_port()
    return [sys.executable, "-m", "api.cli", "serve", "--host", HOST, "--port", str(port), "--db", database_url,
            "--threads", "1", "--log-level", "warning", "--limit", f"body_idle_s={REPLICA_BODY_IDLE_S}"], port


def nginx_conf(folder: Path, port: int, replicas: list[int]) -> Path:
    """A whole nginx.conf for the test: its files in ``folder``, the upstream on the replicas' ports, and the
    proxy settings of the deployment itself (``include``); each answer names the replica that gave it."""
    servers = "".join(f"        server {HOST}:{p};\n" for p in replicas)
    temp = "".join(f"    {kind}_temp_path {folder / kind};\n" for kind in ("client_body", "proxy", "fastcgi",
                                                                             "uwsgi", "scgi"))
    conf = folder / "nginx.conf"
    conf.write_text(f"""{"user root;" if os.geteuid() == 0 else ""}
daemon off;
worker_processes 1;
pid {folder / "nginx.pid"};
error_log {folder / "error.log"} warn;
events {{ worker_connections 512; }}
http {{
    access_log off;
{temp}
    upstream zhuoji {{
{servers}        keepalive 4;
    }}
    limit_conn_zone $binary_remote_addr zone=zhuoji_per_client:1m;
    server {{
        listen {HOST}:{port};
        add_header X-Test-Replica $upstream_addr always;
        include {PROXY_CONF};
    }}
}}
""")
    return conf


@pytest.fixture(scope="module")
def deployment() -> Iterator[dict[str, Any]]:
    """The proxy's URL and the replicas' URLs, all started."""
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None:
        _missing("nginx not found (make nginx: apt-get install -y nginx-light)")
    if model_path() is None:
        _missing("no tile model")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with ExitStack() as stack:
        try:
            database_url = stack.enter_context(throwaway_postgres())
        except PostgresUnavailable as exc:
            _missing(f"no PostgreSQL server: {exc}")
        ports = []
        for k in range(2):
            cmd, port = replica(database_url)
            stack.enter_context(_process(cmd, f"http://{HOST}:{port}/readyz", f"replica {k}", cwd=ROOT, env=env))
            ports.append(port)
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="zhuoji-nginx-")))
        proxy_port = _free_port()
        conf = nginx_conf(folder, proxy_port, ports)
        stack.enter_context(_process([nginx, "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(conf)],
                                     f"http://{HOST}:{proxy_port}/healthz", "nginx"))
        yield {"proxy": f"http://{HOST}:{proxy_port}", "proxy_port": proxy_port,
               "replicas": [f"http://{HOST}:{p}" for p in ports], "replica_ports": ports}


def write_headers(table: dict[str, Any]) -> dict[str, str]:
    """What a write to ``table`` carries: its edit key as a Bearer token."""
    return {"Authorization": f"Bearer {table['edit_key']}"}


def test_a_table_played_through_the_proxy(deployment):
    with httpx.Client(base_url=deployment["proxy"], timeout=60) as http:
        r = http.post("/v1/tables", json={"name": "Friday", "players": NAMES})
        assert r.status_code == 201, r.text
        table = r.json()
        auth = write_headers(table)
        rounds = f"/v1/tables/{table['id']}/rounds"
        # Through the proxy, as on each replica: no key, no write; a wrong key, 403; the view id only reads.
        assert http.post(rounds, json={"round": win_round(1), "expected_version": 1}).status_code == 401
        assert http.post(rounds, json={"round": win_round(1), "expected_version": 1},
                         headers={"Authorization": f"Bearer {table['view_id']}"}).status_code == 403
        assert http.get(f"/v1/views/{table['view_id']}").json()["rounds"] == 0
        assert http.get("/v1/tables").status_code == 401  # no public list
        r = http.post(rounds, json={"round": win_round(1), "expected_version": 1}, headers=auth)
        assert r.status_code == 201, r.text
        # Two writes based on the same version, one after the other: nginx sends them to different replicas
        # (round robin); the database, not a replica's memory, decides that the second is stale.
        first = http.post(rounds, json={"round": draw_round(), "expected_version": 2}, headers=auth)
        second = http.post(rounds, json={"round": draw_round(), "expected_version": 2}, headers=auth)
        assert first.headers["X-Test-Replica"] != second.headers["X-Test-Replica"]
        assert first.status_code == 201, first.text
        assert second.status_code == 409 and second.json()["error"]["code"] == "stale_version"
        assert second.json()["table"]["version"] == 3
        # Every replica sees the same table.
        for url in deployment["replicas"]:
            assert httpx.get(f"{url}/v1/tables/{table['id']}").json()["rounds"] == 2
        assert http.get(f"/v1/tables/{table['id']}").headers["X-Content-Type-Options"] == "nosniff"


def test_a_photo_through_the_proxy(deployment):
    photo = SAMPLES[0].read_bytes()
    r = httpx.post(f"{deployment['proxy']}/v1/detect", files={"image": ("hand.jpg", photo, "image/jpeg")},
                   timeout=60)
    assert r.status_code == 200, r.text
    assert len(r.json()["tiles"]) >= 10


def _slow_post(port: int, pause_s: float) -> bytes:
    """POST /v1/hand with half its body, a pause, then the rest; the whole answer."""
    body = b'{"concealed": "123m456p789s1155p", "win_tile": "5p", "self_drawn": true}'
    head = (f"POST /v1/hand HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    with socket.create_connection((HOST, port)) as sock:
        sock.sendall(head + body[:20])
        time.sleep(pause_s)
        with suppress(OSError):  # the replica may have answered and closed already
            sock.sendall(body[20:])
        sock.settimeout(30)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_a_slow_client_is_held_by_the_proxy_not_by_a_replica(deployment):
    pause = REPLICA_BODY_IDLE_S + 2
    direct = _slow_post(deployment["replica_ports"][0], pause)
    assert direct.startswith(b"HTTP/1.1 408"), direct[:100]  # a replica alone gives up on it
    proxied = _slow_post(deployment["proxy_port"], pause)
    assert proxied.startswith(b"HTTP/1.1 200"), proxied[:300]  # the proxy waited, then sent the whole body at once
    assert b"\"hand_type\"" in proxied or b"fan" in proxied
