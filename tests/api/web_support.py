"""Shared by the browser tests: the server in a thread, headless Chromium, screenshots, console errors.

Chromium is Debian's package (driven by Playwright for Python, no browser download). Screenshots go to the
test's tmp folder and, kept as artefacts, to ``ZHUOJI_SCREENSHOTS`` or else ``artefacts/screenshots/``.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed "
                                                              "(pip install playwright; no browser download needed)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
WEB_MARKS = [pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None, reason="chromium not found (apt-get install -y chromium)")]
PHONE = {"viewport": {"width": 375, "height": 812}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
ARTEFACTS = Path(__file__).resolve().parents[2] / "artefacts" / "screenshots"
DESKTOP = {"viewport": {"width": 1280, "height": 800}, "device_scale_factor": 1}


class ServerThread:
    """uvicorn serving ``app`` on a free 127.0.0.1 port, in a daemon thread."""

    def __init__(self, app) -> None:
        self.app = app
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


def launch_browser() -> Iterator[object]:
    """Headless Chromium for one test module (yield it from a module-scoped ``browser`` fixture)."""
    with sync_api.sync_playwright() as p:
        # The fake camera (a test pattern) and an automatic "allow" stand in for a phone camera in the live test.
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-dev-shm-usage", "--use-fake-ui-for-media-stream",
            "--use-fake-device-for-media-stream"])
        yield b
        b.close()


def screenshot(page, tmp_path: Path, name: str) -> Path:
    page.evaluate("document.fonts.ready")  # the CJK webfont drawn, not the fallback boxes
    path = tmp_path / name
    page.screenshot(path=str(path), full_page=True)
    # Kept after the run as test artefacts: ZHUOJI_SCREENSHOTS, else artefacts/screenshots/ (git-ignored).
    folder = Path(os.environ.get("ZHUOJI_SCREENSHOTS") or ARTEFACTS)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, folder / name)
    return path


# The page asks for endpoints that a server may not have yet (GET /v1/rules, the view ids of /v1/views/…,
# a table's payments and finish) and does without them: their 404 is an answer, not a problem.
PROBES = re.compile(r"/v1/(rules|views/[^/?]+(/rounds)?|tables/[^/?]+/(payments|finish))$")


class Problems:
    """Console errors, uncaught exceptions and HTTP answers ≥ 400 of a page (each one a line)."""

    def __init__(self, page, allow_status: tuple[int, ...] = ()) -> None:
        self.lines: list[str] = []
        # Chromium also logs each HTTP error answer on the console: those follow the status rule below.
        expected = tuple(f"status of {s} " for s in allow_status)
        page.on("console", lambda m: m.type == "error" and not any(e in m.text for e in expected)
                and not self.probed(m.location.get("url", ""), 404 if "status of 404 " in m.text else 0)
                and self.lines.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: self.lines.append(f"page error: {e}"))
        page.on("response", lambda r: r.status >= 400 and r.status not in allow_status
                and not self.probed(r.url, r.status)
                and self.lines.append(f"{r.status} {r.request.method} {r.url}"))

    @staticmethod
    def probed(url: str, status: int) -> bool:
        return status == 404 and PROBES.search(url.split("?")[0]) is not None


# The page in English (the switch's choice, kept per device), for tests that read its English messages:
# page.add_init_script(ENGLISH) before the first goto.
ENGLISH = "localStorage.setItem('zhuoji.lang', 'en')"


def table_link(url: str, table: dict) -> str:
    """The page's address of a table just made through the API: its edit link where the server gives a key."""
    key = table.get("edit_key")
    return f"{url}/#table={table['id']}" + (f"&key={key}" if key else "")


def edit_headers(page, table_id: str) -> dict[str, str]:
    """The Authorization of a write to the table, with the key the page keeps (none on a server without keys)."""
    key = page.evaluate("(id) => (JSON.parse(localStorage.getItem('zhuoji.tables') || '{}')[id] || {}).key || null",
                        table_id)
    return {"Authorization": f"Bearer {key}"} if key else {}
