"""``zhuoji read`` and ``zhuoji score``: the photo pipeline from the command line, with the shipped model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import pytest

from api.cli import main
from vision.detect import DEFAULT_MODEL

ROOT = Path(__file__).resolve().parents[2]
PHOTO = ROOT / "datasets" / "samples" / "sample_02.jpg"

pytestmark = pytest.mark.skipif(not (DEFAULT_MODEL.exists() or os.environ.get("ZHUOJI_MODEL")),
                                reason="no shipped model (models/zhuoji-tiles-int8.onnx) and ZHUOJI_MODEL not set")


def test_read_json_gives_the_hand_and_every_box(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["read", str(PHOTO), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    roles = {t["role"] for t in out["tiles"]}
    assert "concealed" in roles
    # count also includes tile-sized holes in the row (a tile the detector probably missed)
    assert out["hand"]["count"] >= len(out["hand"]["concealed_tiles"]) + 3 * len(out["hand"]["melds"]) > 0
    assert {r["code"] for r in out["retake"]} <= {"no_tiles", "count_mismatch", "too_many_copies", "low_confidence",
                                                  "blurry", "glare", "tiles_cut_off", "ambiguous_layout"}


def test_score_json_and_annotation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_img = tmp_path / "scored.jpg"
    code = main(["score", str(PHOTO), "--self-drawn", "--json", "--annotate", str(out_img)])
    result = json.loads(capsys.readouterr().out)
    # Either the hand is scored, or the answer says why not (and the exit code says so too).
    assert (result["analysis"] is not None) == (result["score_error"] is None) == (code == 0)
    if result["analysis"] is not None:
        assert result["analysis"]["explanation"]
    image = cv2.imread(str(out_img))
    assert image is not None and image.shape[:2] == (640, 640)


def test_photo_commands_refuse_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = tmp_path / "hand.jpg"
    text.write_text("123m456p")
    assert main(["read", str(text)]) == 2
    assert "not a readable image" in capsys.readouterr().err
    assert main(["score", str(tmp_path / "missing.jpg")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["score", str(PHOTO), "--win", "7z"]) == 2
    err = capsys.readouterr().err
    assert "7z" in err and "Traceback" not in err


@pytest.mark.slow
def test_human_readable_read_and_score_show_melds_and_the_rules_corrections(
        capsys: pytest.CaptureFixture[str]) -> None:
    photos = sorted((ROOT / "tests" / "data" / "real_hands").glob("hand_*.jpg"))[:10]
    photos += sorted((ROOT / "datasets" / "samples").glob("*.jpg"))
    corrected = 0
    for photo in photos:
        for command in ("read", "score"):
            code = main([command, str(photo)])
            out, err = capsys.readouterr()
            assert code in (0, 1) and out.startswith("hand: ") and "Traceback" not in err, (photo, command, err)
        assert main(["read", str(photo), "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
        for c in result["changes"]:  # every change the reading made is printed, from → to
            assert f"corrected by the rules: {c['from']} → {c['to']}" in out
        for m in result["hand"]["melds"]:
            assert f"[{m['type']}:{m['tile'] or '?'}]" in out.splitlines()[0]
        corrected += bool(result["changes"])
    assert corrected > 0  # the photos exercise the printing of corrections


def test_human_readable_read_prints_the_melds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # No photo of the set shows a meld (a wall of face-down tiles in one sample used to read as three): the
    # detector is replaced by one that returns a generated hand with two pongs, so the printing is what is tested.
    import numpy as np

    import pipeline.settings
    from vision.training.layout_synth import generate

    scene = generate(np.random.default_rng(1), (), meld_types=["pong", "pong"], meld_place="right", river=False,
                     indicator=False)
    photo = tmp_path / "hand.jpg"
    cv2.imwrite(str(photo), np.full((scene.dets.image_size[1], scene.dets.image_size[0], 3), 90, np.uint8))

    class Generated:
        model_path = Path("generated.onnx")

        def __call__(self, image, **kwargs):
            return scene.dets

    monkeypatch.setattr(pipeline.settings, "open_detector", lambda settings: Generated())
    assert main(["read", str(photo), "--json"]) == 0
    melds = json.loads(capsys.readouterr().out)["hand"]["melds"]
    assert [m["type"] for m in melds] == ["pong", "pong"]
    main(["read", str(photo)])
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("hand: ") and all(f"[pong:{m['tile']}]" in first for m in melds), first


def test_a_reader_that_stops_early_gets_no_traceback() -> None:
    """`zhuoji detect --json *.jpg | head -1`: the pipe closes after the first line; the CLI stops quietly."""
    photos = sorted(str(p) for p in (ROOT / "datasets" / "samples").glob("*.jpg"))
    proc = subprocess.Popen([sys.executable, "-m", "api.cli", "detect", "--json", *photos], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b'{"image": ')
    proc.stdout.close()  # 19 more photos to print: the next write meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "Broken pipe" not in err
