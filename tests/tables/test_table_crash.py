"""Crash test: ``zhuoji serve`` on a SQLite file is killed with SIGKILL in the middle of a burst of round writes
from several threads; after a restart every acknowledged (201) round is there, once, and nothing is half-written."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from scoring.scorebook import add_round, new_scorebook, replay
from tests.tables.support import bearer, draw_round, win_round

NAMES = ["Ann", "Bo", "Cy", "Di"]
ROUNDS = [win_round(1), win_round(2), draw_round(), win_round(3), win_round(0)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(db: Path, port: int, log: Path) -> subprocess.Popen:
    zhuoji = Path(sys.executable).parent / "zhuoji"
    # No tile model: the text and table endpoints start at once (photo routes would answer 503).
    env = {**os.environ, "ZHUOJI_MODEL": "/nonexistent/model.onnx"}
    proc = subprocess.Popen([str(zhuoji), "serve", "--host", "127.0.0.1", "--port", str(port), "--db", str(db),
                             "--log-level", "warning",
                             # a burst of writes from one address, far past the write quota of a real table
                             "--limit", "round_writes_per_minute=1000000"],
                            stdout=log.open("ab"), stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    pytest.fail(f"zhuoji serve did not start: {log.read_text()[-2000:]}")


@pytest.mark.slow
def test_sigkill_mid_burst_loses_no_acknowledged_round(tmp_path):
    db, log, port = tmp_path / "tables.sqlite3", tmp_path / "serve.log", _free_port()
    base = f"http://127.0.0.1:{port}"
    server = _serve(db, port, log)
    try:
        table = httpx.post(f"{base}/v1/tables", json={"name": "Crash", "players": NAMES}, timeout=10).json()
        key_header = bearer(table["edit_key"])
        acked: dict[str, dict] = {}  # idempotency key -> the 201 answer
        sent: dict[str, dict] = {}
        lock = threading.Lock()
        stop = threading.Event()

        def writer(w: int) -> None:
            with httpx.Client(base_url=base, timeout=10) as client:
                version = table["version"]
                for i in range(10_000):
                    if stop.is_set():
                        return
                    key, round_ = f"w{w}-{i}", ROUNDS[(w + i) % len(ROUNDS)]
                    for _ in range(50):  # retry this round until it is stored (409: someone else was first)
                        try:
                            r = client.post(f"/v1/tables/{table['id']}/rounds",
                                            headers={"Idempotency-Key": key, **key_header},
                                            json={"round": round_, "expected_version": version})
                        except httpx.HTTPError:
                            return  # the server is gone
                        if r.status_code == 201:
                            with lock:
                                acked[key], sent[key] = r.json(), round_
                            version = r.json()["table"]["version"]
                            break
                        assert r.status_code == 409, r.text
                        version = r.json()["table"]["version"]

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 30
        while len(acked) < 40 and time.monotonic() < deadline:
            time.sleep(0.01)
        server.kill()  # SIGKILL: no shutdown, no flush, requests in flight
        server.wait(10)
        stop.set()
        for t in threads:
            t.join(30)
        assert len(acked) >= 40, f"only {len(acked)} rounds acknowledged before the kill"

        # The file itself is sound.
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)

        server = _serve(db, port, log)
        now = httpx.get(f"{base}/v1/tables/{table['id']}", timeout=10).json()
        stored = httpx.get(f"{base}/v1/tables/{table['id']}/rounds", timeout=10).json()["rounds"]
        # Nothing half-written: the table row and its rounds agree, numbered 1..n, totals = replay of the inputs.
        assert now["rounds"] == len(stored) and now["version"] == len(stored) + 1
        assert [r["number"] for r in stored] == list(range(1, len(stored) + 1))
        book = new_scorebook(NAMES)
        for r in stored:
            book = add_round(book, r["round"])
        assert now["totals"] == list(replay(book).totals) == stored[-1]["totals_after"]
        assert sum(now["totals"]) == 0
        # Every acknowledged round is there, under the number it was given, exactly as sent.
        for key, answer in acked.items():
            row = stored[answer["number"] - 1]
            assert row["round"] == sent[key] and row["settlement"] == answer["settlement"]
        assert len({a["number"] for a in acked.values()}) == len(acked)
        print(f"{len(acked)} rounds acknowledged before SIGKILL, {len(stored)} stored")
        # A client retrying after the crash gets its first answer back and stores nothing new.
        key = next(iter(acked))
        again = httpx.post(f"{base}/v1/tables/{table['id']}/rounds", headers={"Idempotency-Key": key, **key_header},
                           json={"round": sent[key], "expected_version": acked[key]["table"]["version"] - 1}, timeout=10)
        assert again.status_code == 201 and again.json() == acked[key]
        assert httpx.get(f"{base}/v1/tables/{table['id']}", timeout=10).json()["rounds"] == len(stored)
    finally:
        server.kill()
        server.wait(10)
