"""Overload is answered, never reset: a real ``zhuoji serve`` on loopback, clients that behave like many phone
stacks (Python's ``http.client`` sends the whole body before it reads a byte of the answer), and clients that hold
many idle connections."""

from __future__ import annotations

import http.client
import os
import socket
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.api.test_bounded import HOST, running_server

MB = 1024 * 1024


def _multipart(data: bytes, kind: str = "image/png") -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"big.png\"\r\n"
            f"Content-Type: {kind}\r\n\r\n").encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def _post_whole_body_then_read(port: int, path: str, body: bytes, content_type: str,
                               seconds_per_mb: float = 0) -> tuple[int | str, str]:
    """(status, Retry-After) or the name of the error the connection ended with. ``seconds_per_mb``: an uplink of
    that speed (a phone's), else as fast as loopback goes."""
    conn = http.client.HTTPConnection(HOST, port, timeout=120)

    def slowly() -> Iterator[bytes]:
        for start in range(0, len(body), MB):
            time.sleep(seconds_per_mb)
            yield body[start:start + MB]

    try:
        conn.request("POST", path, body=slowly() if seconds_per_mb else body,
                     headers={"Content-Type": content_type, "Content-Length": str(len(body))})
        answer = conn.getresponse()
        answer.read()
        return answer.status, answer.getheader("Retry-After") or ""
    except OSError as exc:
        return type(exc).__name__, ""
    finally:
        conn.close()


@pytest.mark.slow
def test_40_parallel_19_mb_uploads_from_a_send_then_read_client_are_all_answered():
    """Room for two 19 MB bodies in flight: most of the 40 are refused busy from their headers. Each gets its 503
    with Retry-After, none a reset connection (before: 23 of 40 were reset). The bodies are no image (random
    bytes), so the admitted ones are answered 415 without the model's time."""
    body, content_type = _multipart(os.urandom(19 * MB))
    with running_server({}) as (_, _, port), ThreadPoolExecutor(40) as pool:
        answers = list(pool.map(lambda _: _post_whole_body_then_read(port, "/v1/detect", body, content_type),
                                range(40)))
    statuses = [status for status, _ in answers]
    print(f"40 × 19 MB from http.client: {statuses.count(503)} answered 503 busy, {statuses.count(415)} admitted "
          f"(415: no image), {sum(isinstance(s, str) for s in statuses)} connection errors")
    assert all(status in (415, 503) for status in statuses), statuses
    assert statuses.count(503) >= 10
    assert all(retry == "1" for status, retry in answers if status == 503)


@pytest.mark.slow
def test_a_refused_upload_on_a_slow_uplink_gets_its_answer_after_sending_it_all():
    """A phone sends 12 MB at 1.5 MB/s (8 s), longer than the header and keep-alive timeouts (2 s and 1 s here):
    refused from its headers, it still reads its 503 (before: the server answered at once, started the next
    request's header timeout and closed while the phone was still sending: the phone saw a reset)."""
    body, content_type = _multipart(os.urandom(12 * MB))
    limits = {"upload_bytes_in_flight": 1 * MB, "keep_alive_s": 1, "header_timeout_s": 2}
    with running_server(limits) as (_, _, port), ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: _post_whole_body_then_read(port, "/v1/detect", body, content_type,
                                                                     seconds_per_mb=0.66), range(4)))
    statuses = [status for status, _ in answers]
    assert statuses.count(503) >= 3 and all(status in (415, 503) for status in statuses), statuses


@pytest.mark.slow
def test_one_client_holding_idle_connections_leaves_room_for_everyone_else():
    """One address opens more idle connections than the whole cap: it keeps its share, the rest are closed at
    once, and another address is answered at once (before: /healthz locked out until the header timeout)."""
    limits = {"max_connections": 100, "connections_per_client": 20, "header_timeout_s": 30}
    with running_server(limits, ["--forwarded-allow-ips", "10.0.0.1"]) as (_, _, port):
        hog = []
        try:
            for _ in range(150):
                s = socket.socket()
                s.bind(("127.0.0.2", 0))
                s.connect((HOST, port))
                hog.append(s)
            time.sleep(0.5)
            open_ones = 0
            for s in hog:
                s.settimeout(0.01)
                try:
                    open_ones += s.recv(1) != b""
                except TimeoutError:
                    open_ones += 1
                except OSError:
                    pass
            assert open_ones == 20
            start = time.monotonic()
            with socket.socket() as other:
                other.bind(("127.0.0.3", 0))
                other.settimeout(5)
                other.connect((HOST, port))
                other.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
                answer = b""
                while chunk := other.recv(65536):
                    answer += chunk
            assert answer.startswith(b"HTTP/1.1 200"), answer[:100]
            assert time.monotonic() - start < 2
        finally:
            for s in hog:
                s.close()


@pytest.mark.slow
@pytest.mark.parametrize("trusted", [True, False])
def test_quotas_count_the_forwarded_client_only_behind_a_trusted_proxy(tmp_path, trusted):
    """With the peer (127.0.0.1) a trusted proxy, ``X-Forwarded-For`` names the client: each forwarded address has
    its own quota. Otherwise the header is ignored and every request counts for the peer."""
    proxies = "127.0.0.1" if trusted else "10.9.8.7"
    options = ["--forwarded-allow-ips", proxies, "--db", f"sqlite:///{tmp_path / 'tables.db'}"]
    with running_server({"tables_per_hour": 1}, options) as (url, _, _):
        def create(client: str) -> int:
            return httpx.post(f"{url}/v1/tables", json={"name": "T", "players": ["A", "B", "C", "D"]},
                              headers={"X-Forwarded-For": client}, timeout=10).status_code

        answers = [create("203.0.113.1"), create("203.0.113.1"), create("203.0.113.2")]
    assert answers == ([201, 429, 201] if trusted else [201, 429, 429])
