"""Bounded work for every request: shapes refused at the edge, a deadline for each photo, admission before
reading, timeouts for slow clients, liveness apart from readiness.

The end-to-end tests start ``zhuoji serve`` in a subprocess on a loopback port with small timeouts
(``--limit``), and measure the server process itself (its RSS from /proc).
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import cv2
import httpx
import numpy as np
import pytest
from fastapi.testclient import TestClient
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.service import health
from api.service.admission import AdmissionMiddleware
from api.service.app import create_app
from api.service.errors import ApiError
from api.service.runner import InferenceRunner
from pipeline.limits import Limits
from tests.api.support import SAMPLES, WIN_ROW, ScriptedDetector, blank_photo, encode, model_path
from vision.deadline import Deadline, WorkCancelled
from vision.images import PhotoShapeError, check_photo_size

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
THIN = [(1601, 1), (3400, 10), (40000, 1)]  # each took 21 s to half an hour in /v1/detect before the refusal
SERVER_LIMITS = {"header_timeout_s": 2, "body_idle_s": 5, "keep_alive_s": 1, "max_connections": 200}


def png(width: int, height: int, value: int = 90) -> bytes:
    return encode(np.full((height, width, 3), value, np.uint8), ".png")


def rss_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


@contextmanager
def running_server(limits: dict[str, float], options: list[str] | None = None) -> Iterator[tuple[str, int, int]]:
    """``zhuoji serve`` on a free loopback port, one worker, the shipped model, ``limits`` changed, more command-line
    ``options``: its URL, process id and port."""
    if model_path() is None:
        pytest.skip("no tile model")
    with socket.socket() as s:
        s.bind((HOST, 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "api.cli", "serve", "--host", HOST, "--port", str(port), "--log-level", "warning"]
    for name, value in limits.items():
        cmd += ["--limit", f"{name}={value}"]
    cmd += options or []
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    url = f"http://{HOST}:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, "the server exited"
            assert time.monotonic() < deadline, "the server did not start"
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        yield url, proc.pid, port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int, int]]:
    """A server with timeouts of a few seconds, for the slow-client tests."""
    with running_server(SERVER_LIMITS) as running:
        yield running


# ------------------------------------------------------------------------------------- shapes at the edge


@pytest.mark.parametrize(("size", "words"), [((1601, 1), "too small"), ((31, 500), "too small"),
                                             ((3000, 149), "too thin"), ((60_000, 1000), "too large")])
def test_shapes_no_photo_of_tiles_has_are_refused(size, words):
    with pytest.raises(PhotoShapeError, match=words):
        check_photo_size(*size)
    check_photo_size(3000, 150)  # 1:20 exactly is allowed
    check_photo_size(32, 32)


@pytest.mark.slow
def test_thin_shapes_are_refused_at_once_while_a_photo_is_served(server):
    url, _, _ = server
    photo = SAMPLES[0].read_bytes()

    async def scenario() -> list[tuple[str, int, float, str]]:
        async with httpx.AsyncClient(timeout=30) as http:
            async def post(path: str, name: str, data: bytes, kind: str) -> tuple[str, int, float, str]:
                t0 = time.perf_counter()
                r = await http.post(f"{url}{path}", files={"image": (name, data, kind)})
                code = r.json()["error"]["code"] if r.status_code != 200 else ""
                return name, r.status_code, time.perf_counter() - t0, code

            jobs = [post(path, f"{w}x{h}.png", png(w, h), "image/png")
                    for w, h in THIN for path in ("/v1/detect", "/v1/score")]
            jobs.append(post("/v1/score", "hand.jpg", photo, "image/jpeg"))
            return list(await asyncio.gather(*jobs))

    answers = asyncio.run(scenario())
    for name, status, seconds, code in answers:
        assert seconds < 5, (name, seconds)
        if name == "hand.jpg":
            assert status == 200
        else:
            assert (status, code) == (422, "image_shape"), name


def test_a_thin_shape_is_refused_from_the_header_without_decoding():
    """Only a PNG header and garbage: answered ``image_shape`` (the header's size), not ``invalid_image`` (which a
    decoder would have said)."""
    ihdr = struct.pack(">IIBBBBB", 40000, 1, 8, 2, 0, 0, 0)
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    app = create_app(model_path="/nonexistent/model.onnx")
    with TestClient(app) as c:
        app.state.detector = ScriptedDetector(WIN_ROW)
        for path in ("/v1/detect", "/v1/read", "/v1/score"):
            r = c.post(path, files={"image": ("thin.png", header + b"\0" * 64, "image/png")})
            assert r.status_code == 422 and r.json()["error"]["code"] == "image_shape", r.json()
        r = c.post("/v1/chajiao/photos", files={"photo1": ("thin.png", header + b"\0" * 64, "image/png")},
                   data={"hand0": "123m456p789s1155p"})
        assert r.status_code == 422 and "photo1: image too small" in r.json()["error"]["message"]


# ------------------------------------------------------------------------------------- deadline, cancelling


class SlowDetector(ScriptedDetector):
    """Works in 50 ms steps for up to ``seconds``, checking the deadline between steps as the real detector does
    between model runs (``honour=False``: a stuck run that never checks)."""

    def __init__(self, seconds: float, honour: bool = True) -> None:
        super().__init__(WIN_ROW)
        self.seconds, self.honour, self.calls = seconds, honour, 0

    def __call__(self, image, deadline: Deadline | None = None, **kwargs):
        self.calls += 1
        end = time.monotonic() + self.seconds
        while time.monotonic() < end:
            if self.honour and deadline is not None:
                deadline.check()
            time.sleep(0.05)
        return super().__call__(image, **kwargs)


def test_a_photo_past_its_deadline_gets_503_and_frees_the_worker():
    app = create_app(model_path="/nonexistent/model.onnx", limits=Limits(photo_deadline_s=0.5, retry_after_s=3))
    with TestClient(app) as c:
        app.state.detector = SlowDetector(30)
        t0 = time.monotonic()
        r = c.post("/v1/detect", files={"image": ("a.jpg", blank_photo(), "image/jpeg")})
        assert r.status_code == 503 and r.json()["error"]["code"] == "deadline_exceeded"
        assert r.headers["Retry-After"] == "3" and time.monotonic() - t0 < 3
        app.state.detector = ScriptedDetector(WIN_ROW)  # the worker is free: the next photo is served at once
        assert c.post("/v1/score", files={"image": ("a.jpg", blank_photo(), "image/jpeg")}).status_code == 200
        assert c.get("/readyz").status_code == 200
    assert app.state.internal_errors == 0


def test_a_stuck_worker_makes_the_service_not_ready(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(health, "STUCK_GRACE_S", 0.2)
    app = create_app(model_path="/nonexistent/model.onnx", limits=Limits(photo_deadline_s=0.2))
    with TestClient(app) as c:
        app.state.detector = SlowDetector(2.0, honour=False)
        worker = threading.Thread(target=c.post, args=("/v1/detect",),
                                  kwargs={"files": {"image": ("a.jpg", blank_photo(), "image/jpeg")}})
        worker.start()
        time.sleep(1.0)
        r = c.get("/readyz")
        assert c.get("/healthz").status_code == 200  # alive all the same
        worker.join()
        assert r.status_code == 503 and r.json()["checks"]["photo_queue"]["ok"] is False, r.json()
        assert c.get("/readyz").status_code == 200  # the queue moves again


def test_a_client_gone_cancels_its_job_and_frees_the_worker():
    calls = 0

    def slow(deadline: Deadline) -> str:
        nonlocal calls
        calls += 1
        while True:  # ends only through the token
            deadline.check()
            time.sleep(0.02)

    async def scenario() -> list[object]:
        runner = InferenceRunner(concurrency=1, max_waiting=4, deadline_s=60, poll_s=0.05)
        start = time.monotonic()

        def gone_after(seconds: float):
            async def is_disconnected() -> bool:
                return time.monotonic() - start > seconds
            return is_disconnected

        async def first() -> object:
            try:
                return await runner.run(slow, is_disconnected=gone_after(0.3))
            except ApiError as exc:
                return exc.code, time.monotonic() - start

        async def queued_and_gone() -> object:  # waits behind the first; its client leaves meanwhile
            await anyio.sleep(0.05)
            try:
                return await runner.run(slow, is_disconnected=gone_after(0.1))
            except ApiError as exc:
                return exc.code

        async def next_one() -> object:
            await anyio.sleep(0.1)
            result = await runner.run(lambda deadline: "served")
            return result, time.monotonic() - start

        return list(await asyncio.gather(first(), queued_and_gone(), next_one()))

    (code, seconds), queued, (served, next_seconds) = asyncio.run(scenario())
    assert code == "cancelled" and seconds < 1.5
    assert queued == "cancelled" and calls == 1  # the queued job never started its work
    assert served == "served" and next_seconds < 2


def test_a_photo_that_waits_too_long_for_a_worker_is_answered_busy():
    async def scenario() -> list[object]:
        runner = InferenceRunner(concurrency=1, max_waiting=8, queue_wait_s=0.3, retry_after_s=2)
        start = time.monotonic()

        async def first() -> object:
            return await runner.run(lambda deadline: time.sleep(1.0) or "done")

        async def second() -> object:
            await anyio.sleep(0.05)
            try:
                return await runner.run(lambda deadline: "late")
            except ApiError as exc:
                return exc.status, exc.code, exc.headers["Retry-After"], round(time.monotonic() - start, 1)

        return list(await asyncio.gather(first(), second()))

    done, (status, code, retry, seconds) = asyncio.run(scenario())
    assert done == "done" and (status, code, retry) == (503, "busy", "2") and seconds < 0.9


def test_the_detector_checks_the_deadline_between_model_runs():
    path = model_path()
    if path is None:
        pytest.skip("no tile model")
    from vision.detect import Detector

    detector = Detector(path, classifier=None, back_check=None)
    runs = 0
    deadline = Deadline(None)
    raw = detector.raw

    def counting_raw(canvas):
        nonlocal runs
        runs += 1
        if runs == 2:
            deadline.cancel("enough")
        return raw(canvas)

    detector.raw = counting_raw
    image = np.random.default_rng(0).integers(0, 255, (2000, 2000, 3), np.uint8)
    with pytest.raises(WorkCancelled, match="enough"):
        detector(image, tiled=True, deadline=deadline)
    assert runs == 2  # 5 runs for this photo (the whole, 4 crops): it stopped after the second
    with pytest.raises(WorkCancelled) as info:
        detector(image, deadline=Deadline(0))
    assert info.value.reason == "deadline" and runs == 2  # past the deadline: not a single run


# ------------------------------------------------------------------------------------- admission, uploads


def test_admission_refuses_before_reading_the_body():
    """A photo request beyond the runner's capacity, or beyond the upload bytes in flight, is refused from its
    headers: it never reaches the app (its body is read and dropped, then answered)."""
    runner = InferenceRunner(concurrency=1, max_waiting=1)
    release = anyio.Event()
    received: list[str] = []

    async def app(scope, receive, send):  # stands in for FastAPI: reads the body, then waits
        while (await receive()).get("more_body"):
            pass
        received.append(scope["path"])
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    class State:
        pass

    owner = type("App", (), {"state": State()})()
    owner.state.runner = runner
    limits = Limits(upload_bytes_in_flight=30 * 2**20)
    middleware = AdmissionMiddleware(app, limits, is_photo=lambda p: p.startswith("/v1/detect"),
                                     body_limit=lambda p: 20 * 2**20)

    async def request(path: str, length: int | None, gate: anyio.Event | None = None) -> tuple[int, bool]:
        headers = [(b"content-length", str(length).encode())] if length is not None else []
        scope = {"type": "http", "path": path, "headers": headers, "app": owner, "method": "POST"}
        read = False
        status = 0

        async def receive():
            nonlocal read
            read = True
            if gate is not None:
                await gate.wait()
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await middleware(scope, receive, send)
        return status, read

    async def scenario() -> list[tuple[int, bool]]:
        body_gate = anyio.Event()  # the first upload is still arriving
        results: list[tuple[int, bool]] = [(0, False)] * 4
        async with anyio.create_task_group() as tg:
            async def run(k: int, *args) -> None:
                results[k] = await request(*args)

            tg.start_soon(run, 0, "/v1/detect", 18 * 2**20, body_gate)
            await anyio.sleep(0.05)
            tg.start_soon(run, 1, "/v1/detect", 18 * 2**20)  # 36 MB in flight > 30: refused
            await anyio.sleep(0.05)
            body_gate.set()  # the first body has arrived: its bytes are no longer in flight
            await anyio.sleep(0.05)
            tg.start_soon(run, 2, "/v1/detect", None)  # admitted: 2 photo requests = the runner's capacity
            await anyio.sleep(0.05)
            tg.start_soon(run, 3, "/v1/detect", 1000)  # a third: busy
            await anyio.sleep(0.05)
            release.set()
        return results

    first, too_many_bytes, second, busy = anyio.run(scenario)
    assert first == (200, True) and second == (200, True)
    assert too_many_bytes == (503, True) and busy == (503, True)
    assert received == ["/v1/detect", "/v1/detect"]  # the two admitted ones only
    assert middleware.photo_requests == 0 and middleware.bytes_in_flight == 0


@pytest.mark.slow
def test_40_parallel_18_mb_uploads_keep_memory_bounded():
    """The default timeouts; the cap on upload bytes in flight lifted, so that every upload is received at once
    and waits for its turn on disk (with the default cap most would be refused busy from their headers)."""
    with running_server({"upload_bytes_in_flight": 2_000_000_000}) as (url, pid, _):
        _uploads_keep_memory_bounded(url, pid)


def _uploads_keep_memory_bounded(url: str, pid: int) -> None:
    rng = np.random.default_rng(1)
    noise = rng.integers(0, 65535, (1800, 1700, 3), np.uint16)  # 16-bit noise: a PNG as large as it gets
    ok, data = cv2.imencode(".png", noise, [cv2.IMWRITE_PNG_COMPRESSION, 1])
    assert ok and len(data) > 18_000_000
    data = data.tobytes()
    files = {"image": ("big.png", data, "image/png")}
    assert httpx.post(f"{url}/v1/detect", files=files, timeout=60).status_code == 200  # warm: arenas in place
    before = rss_kb(pid, "VmRSS")

    async def scenario() -> list[object]:
        async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=40)) as http:
            async def post() -> object:
                try:
                    return (await http.post(f"{url}/v1/detect", files=files)).status_code
                except httpx.HTTPError as exc:
                    return type(exc).__name__
            return list(await asyncio.gather(*(post() for _ in range(40))))

    statuses = asyncio.run(scenario())
    growth_mb = (rss_kb(pid, "VmHWM") - before) / 1024
    print(f"40 × {len(data) / 1e6:.1f} MB uploads: {statuses.count(200)} served, peak RSS growth {growth_mb:.0f} MB")
    assert all(s in (200, 503) for s in statuses), statuses
    assert growth_mb < 800


# ------------------------------------------------------------------------------------- slow clients


def _closed_after(sock: socket.socket, trickle: bytes, every: float, limit: float) -> tuple[float, bytes]:
    """Send ``trickle`` a byte every ``every`` seconds until the server closes; seconds until then, and what it
    sent back."""
    start = time.monotonic()
    sock.settimeout(every)
    answer = b""
    for byte in trickle:
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            break
        try:
            chunk = sock.recv(65536)
            answer += chunk
            if not chunk:
                break
        except TimeoutError:
            pass
        except OSError:
            break
        assert time.monotonic() - start < limit, "still open"
    return time.monotonic() - start, answer


@pytest.mark.slow
def test_a_slow_header_connection_is_closed(server):
    url, _, port = server
    with socket.create_connection((HOST, port)) as sock:
        seconds, answer = _closed_after(sock, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Slow: " + b"a" * 200,
                                        every=0.2, limit=60)
    assert answer == b"" and 1.5 < seconds < 10  # header_timeout_s=2 here; 10 s by default
    assert httpx.get(f"{url}/healthz").status_code == 200


@pytest.mark.slow
def test_a_stalled_body_gets_408_and_is_closed(server):
    _, _, port = server
    head = (b"POST /v1/hand HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n")
    with socket.create_connection((HOST, port)) as sock:
        sock.sendall(head + b'{"concealed": ')
        sock.settimeout(30)
        start = time.monotonic()
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        seconds = time.monotonic() - start
    assert answer.startswith(b"HTTP/1.1 408") and b"too slowly" in answer, answer[:200]
    assert 4 < seconds < 15  # body_idle_s=5 here


def test_a_body_sent_too_slowly_in_all_gets_408():
    """A body whose pieces come often enough, but which never ends: refused at ``body_timeout_s`` in all."""
    async def app(scope, receive, send):
        with pytest.raises(StarletteHTTPException) as info:
            while (await receive()).get("more_body"):
                pass
        assert info.value.status_code == 408
        await send({"type": "http.response.start", "status": 408, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def trickle():
        await anyio.sleep(0.05)
        return {"type": "http.request", "body": b"x", "more_body": True}

    async def send(_message):
        pass

    middleware = AdmissionMiddleware(app, Limits(body_timeout_s=0.5, body_idle_s=0.2), is_photo=lambda p: False,
                                     body_limit=lambda p: 2**20)
    start = time.monotonic()
    anyio.run(middleware, {"type": "http", "path": "/v1/hand", "headers": []}, trickle, send)
    assert 0.4 < time.monotonic() - start < 2


@pytest.mark.slow
def test_idle_keep_alive_and_too_many_connections_are_closed(server):
    url, _, port = server
    with socket.create_connection((HOST, port)) as sock:  # keep_alive_s=1 here
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        sock.settimeout(10)
        start = time.monotonic()
        while sock.recv(65536):
            pass
        assert time.monotonic() - start < 5
    extra = []
    try:
        extra = [socket.create_connection((HOST, port)) for _ in range(SERVER_LIMITS["max_connections"] + 20)]
        time.sleep(0.5)
        closed = 0
        for s in extra:
            s.settimeout(0.01)
            try:
                closed += s.recv(1) == b""
            except TimeoutError:
                pass
            except OSError:
                closed += 1
        assert closed >= 20  # the ones beyond max_connections, closed at once (the others wait for their headers)
    finally:
        for s in extra:
            s.close()
    time.sleep(2.5)  # the others' header timeout
    assert httpx.get(f"{url}/healthz").status_code == 200


# ------------------------------------------------------------------------------------- liveness, readiness


def test_healthz_and_readyz_name_models_never_paths():
    app = create_app(model_path=model_path() or "/nonexistent/model.onnx")
    with TestClient(app) as c:
        live, ready = c.get("/healthz"), c.get("/readyz")
        assert live.status_code == 200
        for body in (live.text, ready.text):
            assert str(ROOT) not in body and "/nonexistent" not in body
        if app.state.detector is None:
            assert ready.status_code == 503 and ready.json()["checks"]["model"]["ok"] is False
        else:
            assert ready.status_code == 200 and ready.json()["status"] == "ready"
            assert live.json()["model"] == app.state.detector.model_path.name


def test_readiness_checks_are_a_list_others_can_extend():
    app = create_app(model_path="/nonexistent/model.onnx")
    with TestClient(app) as c:
        app.state.detector = ScriptedDetector(WIN_ROW)

        async def database_answers(_app) -> tuple[bool, str]:
            return False, "no answer from the database"

        def broken(_app) -> tuple[bool, str]:
            raise RuntimeError("boom")

        assert c.get("/readyz").status_code == 200
        app.state.readiness_checks["database"] = database_answers
        app.state.readiness_checks["broken"] = broken
        r = c.get("/readyz")
        checks = r.json()["checks"]
        assert r.status_code == 503 and checks["photo_queue"]["ok"] and checks["model"]["ok"]
        assert checks["database"] == {"ok": False, "detail": "no answer from the database"}
        assert checks["broken"]["ok"] is False and "boom" in checks["broken"]["detail"]
    assert app.state.internal_errors == 0
