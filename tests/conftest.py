"""Fixtures shared across the suite: one app client (with the real model when there is one), one app without a
model for the text endpoints, one app whose detector always sees a known hand, and one detector."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.service import app as app_module
from api.service.app import create_app
from pipeline.settings import Settings, open_detector
from tests.api.support import WIN_ROW, ScriptedDetector, model_path
from vision.detect import Detector

NO_MODEL = "/nonexistent/model.onnx"


@pytest.fixture(scope="session", autouse=True)
def _test_client_host() -> Iterator[None]:
    """TestClient sends ``Host: testserver``, a name no real server has: every app the tests build answers to it
    too, however its settings were made. (The allow-list itself is tested with real names and
    ``base_url="http://localhost"``: tests/api/test_hardening.py.)"""
    own_names = app_module.own_names
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(app_module, "own_names", lambda settings: [*own_names(settings), "testserver"])
        yield


def _serve(app) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c
    assert app.state.internal_errors == 0  # hostile input never reached the catch-all handler


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    """The app with its real model when there is one (shipped or ZHUOJI_MODEL), else without a model."""
    yield from _serve(create_app(model_path=model_path() or NO_MODEL))


@pytest.fixture(scope="module")
def text_client() -> Iterator[TestClient]:
    """The app without a model: the text endpoints only."""
    yield from _serve(create_app(model_path=NO_MODEL))


@pytest.fixture(scope="module")
def scripted() -> Iterator[TestClient]:
    """The app with a detector that always 'sees' WIN_ROW: the full photo pipeline on a known hand."""
    app = create_app(model_path=NO_MODEL)
    with TestClient(app) as c:
        app.state.detector = ScriptedDetector(WIN_ROW)
        yield c
    assert app.state.internal_errors == 0


@pytest.fixture(scope="session")
def detector() -> Detector:
    """The detector the settings of this environment ask for (the shipped models by default), loaded once."""
    settings = Settings.from_env()
    if not settings.model.is_file():
        pytest.skip(f"no tile model at {settings.model}")
    return open_detector(settings)
