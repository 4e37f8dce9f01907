"""Every command turns every bad input into one line on stderr and exit code 2: never a traceback, never a hang.

Special files run in a subprocess with a timeout: a FIFO that were opened would block until a writer came.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from api.cli import main
from tests.api.support import SAMPLES, model_path

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "tests" / "data" / "tables" / "e1.json"


def one_line_error(capsys, command: str) -> str:
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(f"zhuoji {command}"), err
    return err


def thin_png(tmp_path: Path, width: int, height: int) -> Path:
    path = tmp_path / f"{width}x{height}.png"
    assert cv2.imwrite(str(path), np.full((height, width, 3), 90, np.uint8))
    return path


def needs_model() -> None:
    if model_path() is None:
        pytest.skip("no tile model")


# ------------------------------------------------------------------------------------------------- settle


@pytest.mark.parametrize(("content", "words"), [
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"a": ' * 50_000 + b"1" + b"}" * 50_000, "nested too deeply"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b" " * (1024 * 1024 + 1), "too large"),
])
def test_settle_refuses_bad_files(tmp_path, capsys, content, words):
    path = tmp_path / "table.json"
    path.write_bytes(content)
    assert main(["settle", str(path)]) == 2
    assert words in one_line_error(capsys, "settle")


def test_settle_names_a_missing_file_and_a_folder(tmp_path, capsys):
    assert main(["settle", "/nonexistent.json"]) == 2
    assert one_line_error(capsys, "settle").endswith("error: no such file: /nonexistent.json")
    assert main(["settle", str(tmp_path)]) == 2
    assert "is a folder" in one_line_error(capsys, "settle")


@pytest.mark.slow
@pytest.mark.parametrize("verb", ["settle", "detect", "read", "score"])
def test_special_files_are_refused_without_opening_them(tmp_path, verb):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for special in (fifo, Path("/dev/zero")):
        if not special.exists():
            continue
        proc = subprocess.run([sys.executable, "-m", "api.cli", verb, str(special)], cwd=ROOT, capture_output=True,
                              text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
        err = proc.stderr.strip()
        assert proc.returncode == 2 and len(err.splitlines()) == 1, err
        assert "not a regular file" in err and "Traceback" not in err


# ------------------------------------------------------------------------------------- photos: thin shapes


@pytest.mark.parametrize(("size", "words"), [((1601, 1), "too small"), ((3400, 10), "too small"),
                                             ((2000, 60), "too thin")])
@pytest.mark.parametrize("verb", ["detect", "read", "score"])
def test_shapes_no_photo_of_tiles_has_are_refused(tmp_path, capsys, size, words, verb):
    needs_model()
    path = thin_png(tmp_path, *size)
    assert main([verb, str(path)]) == 2
    assert words in one_line_error(capsys, verb)


def test_detect_reads_the_good_photos_and_exits_1_when_some_fail(tmp_path, capsys):
    needs_model()
    assert main(["detect", str(SAMPLES[0]), str(thin_png(tmp_path, 1601, 1))]) == 1
    captured = capsys.readouterr()
    assert SAMPLES[0].name in captured.out and "too small" in captured.err


# ---------------------------------------------------------------------------------- annotate: checked first


@pytest.mark.parametrize(("verb", "name", "words"), [
    ("detect", "out.unknownext", "must end in"),
    ("read", "out.png", "must end in .jpg"),
    ("score", "out", "must end in .jpg"),
    ("detect", "a_file/out.jpg", "is a file, not a folder"),
    ("read", "a_file/out.jpg", "is a file, not a folder"),
])
def test_annotate_paths_that_cannot_be_written_fail_before_any_work(tmp_path, capsys, monkeypatch, verb, name, words):
    (tmp_path / "a_file").write_text("not a folder")
    monkeypatch.setattr("pipeline.settings.open_detector", lambda *a, **k: pytest.fail("the model was loaded"))
    assert main([verb, str(SAMPLES[0]), "--annotate", str(tmp_path / name)]) == 2
    assert words in one_line_error(capsys, verb)


def test_several_photos_need_an_annotate_folder(tmp_path, capsys):
    out = tmp_path / "out.jpg"
    out.write_bytes(b"")
    assert main(["detect", str(SAMPLES[0]), str(SAMPLES[1]), "--annotate", str(out)]) == 2
    assert "need a folder" in one_line_error(capsys, "detect")


@pytest.mark.parametrize("verb", ["detect", "read"])
def test_annotate_into_an_existing_folder_writes_the_photo_there(tmp_path, capsys, verb):
    needs_model()
    assert main([verb, str(SAMPLES[0]), "--annotate", str(tmp_path)]) == 0
    written = tmp_path / f"{SAMPLES[0].stem}.jpg"
    assert cv2.imread(str(written)) is not None


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_annotate_into_a_read_only_folder(tmp_path, capsys):
    tmp_path.chmod(0o500)
    try:
        assert main(["detect", str(SAMPLES[0]), "--annotate", str(tmp_path / "out.jpg")]) == 2
        assert "no permission" in one_line_error(capsys, "detect")
    finally:
        tmp_path.chmod(0o700)


# ------------------------------------------------------------------------------------------ other commands


@pytest.mark.parametrize(("argv", "words"), [
    (["hand", "123x"], "unknown suit"),
    (["waits", "11111m"], "more than 4 copies"),
    (["settle", str(TABLE), "--rules", "tokyo"], "unknown rules preset"),
    (["serve", "--limit", "photo_deadline_s=soon"], "not a number"),
    (["serve", "--limit", "unknown=1"], "NAME one of"),
    (["serve", "--limit", "max_connections=0"], "greater than 0"),
    (["live", "--source", "/nonexistent.mp4", "--max-frames", "1"], "no such video file"),
])
def test_other_commands_say_what_is_wrong_in_one_line(capsys, argv, words):
    assert main(argv) == 2
    assert words in one_line_error(capsys, argv[0])
