"""Fixtures of the browser tests: headless Chromium once per module, and the service without a model on a
throwaway SQLite database in a server thread (a module that needs another server defines its own ``served``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from tests.api.web_support import launch_browser  # skips the test where Playwright is not installed

    yield from launch_browser()


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[object, str]]:
    from api.service.app import create_app
    from tests.api.web_support import ServerThread

    db = tmp_path_factory.mktemp("db") / "tables.db"
    app = create_app(model_path="/nonexistent/model.onnx", database=f"sqlite:///{db}")
    with ServerThread(app) as server:
        yield app, server.url
    assert app.state.internal_errors == 0
    app.state.tables.close()
