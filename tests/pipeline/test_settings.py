"""One Settings value: read from the environment once, flags over it, handed to worker processes as their
environment, and the one detector factory."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.settings import DEFAULT, Settings, open_detector
from vision.detect import DEFAULT_MODEL


def test_defaults_without_environment() -> None:
    s = Settings.from_env({})
    assert s == Settings()
    assert (s.model, s.classifier, s.back_check, s.threads, s.workers, s.database_url) == (
        DEFAULT_MODEL, DEFAULT, DEFAULT, None, 1, None)


def test_the_variables_of_today_are_read() -> None:
    s = Settings.from_env({"ZHUOJI_MODEL": "/m.onnx", "ZHUOJI_CLASSIFIER": "none", "ZHUOJI_BACK_CHECK": "/b.onnx",
                           "ZHUOJI_THREADS": "3", "ZHUOJI_CONCURRENCY": "2", "ZHUOJI_MAX_WAITING": "5",
                           "ZHUOJI_DATABASE_URL": "sqlite:///t.db"})
    assert s.model == Path("/m.onnx") and s.classifier is None and s.back_check == "/b.onnx"
    assert (s.threads, s.concurrency, s.max_waiting, s.database_url) == (3, 2, 5, "sqlite:///t.db")


def test_flags_given_win_over_the_environment_and_flags_not_given_do_not() -> None:
    env = {"ZHUOJI_MODEL": "/env.onnx", "ZHUOJI_PORT": "9000", "ZHUOJI_CLASSIFIER": "/c.onnx"}
    s = Settings.from_env(env, model=Path("/flag.onnx"), port=None, classifier="NONE")
    assert s.model == Path("/flag.onnx") and s.port == 9000 and s.classifier is None


def test_a_worker_rebuilds_the_same_settings_from_the_environment_it_is_given() -> None:
    for s in (Settings(), Settings(model=Path("/m.onnx"), classifier=None, back_check="/b.onnx", threads=2,
                                   workers=4, port=8123, database_url="postgresql://x/y")):
        assert Settings.from_env(s.env()) == s


def test_settings_are_frozen() -> None:
    with pytest.raises(AttributeError):
        Settings().port = 1  # type: ignore[misc]


def test_the_factory_opens_what_the_settings_ask_for() -> None:
    if not DEFAULT_MODEL.is_file():
        pytest.skip("needs the shipped model")
    alone = open_detector(Settings(classifier=None, back_check=None))
    assert alone.classifier is None and alone.back_check is None and alone.model_path == DEFAULT_MODEL
    assert open_detector(Settings(classifier=None, back_check=None)) is alone  # shared: loaded once per process
    private = open_detector(Settings(classifier=None, back_check=None, threads=1))
    assert private is not alone and private.classifier is None
    with pytest.raises(FileNotFoundError):
        open_detector(Settings(model=Path("/nonexistent/model.onnx")))
