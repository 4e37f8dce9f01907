"""In headless Chromium, offline: /docs and /redoc render from the service's own files under their security
policy, and the page loads under its Content-Security-Policy without a violation."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from api.service.app import create_app
from tests.api.web_support import (
    PHONE,
    WEB_MARKS,
    Problems,
    ServerThread,
    screenshot,
    sync_api,
)

pytestmark = WEB_MARKS



@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    database = tmp_path_factory.mktemp("db") / "tables.db"
    app = create_app(model_path="/nonexistent/model.onnx", database=f"sqlite:///{database}")
    with ServerThread(app) as running:
        yield running.url
    assert app.state.internal_errors == 0


def _offline(page, url: str) -> list[str]:
    """Abort every request that leaves the service; the list of what was tried."""
    tried: list[str] = []

    def route(r) -> None:
        if r.request.url.startswith(url):
            r.continue_()
        else:
            tried.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return tried


@pytest.mark.parametrize(("path", "rendered"), [("/docs", ".swagger-ui .info .title"), ("/redoc", "h1")])
def test_the_api_documentation_renders_offline(browser, server, tmp_path, path, rendered):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems = Problems(page)
    tried = _offline(page, server)
    page.goto(server + path)
    sync_api.expect(page.locator(rendered).first).to_contain_text("zhuoji", timeout=20_000)
    sync_api.expect(page.get_by_text("/v1/hand").first).to_be_visible(timeout=20_000)
    screenshot(page, tmp_path, f"docs-offline{path.replace('/', '-')}.png")
    assert tried == [], tried  # nothing from a CDN or any other origin
    # ReDoc's bundle shows its logo from cdn.redoc.ly: the policy blocks it (no request leaves), nothing else.
    blocked = [line for line in problems.lines if "Content Security Policy" in line]
    assert all("Loading the image 'https://cdn.redoc.ly/" in line for line in blocked), blocked


def test_the_page_loads_under_its_security_policy(browser, server, tmp_path):
    page = browser.new_page(**PHONE)
    problems = Problems(page, allow_status=(404,))
    tried = _offline(page, server)
    page.goto(server)
    page.wait_for_load_state("networkidle")
    page.evaluate("document.fonts.ready")
    screenshot(page, tmp_path, "page-under-csp.png")
    assert tried == []
    assert problems.lines == [], problems.lines
