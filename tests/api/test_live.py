"""Live table mode: frames from a video written here with cv2.VideoWriter, voting, change reports, annotated output."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from api.cli import main
from api.live.loop import live
from pipeline.live import ReadingVoter
from tests.api.support import SAMPLES, WIN_ROW, model_path, row_detections
from vision.reading import Reading

WAITING_ROW = WIN_ROW[:13]
GLITCH_ROW = ["9m", *WIN_ROW[1:]]  # one frame misreads the first tile


def write_video(path: Path, frames: list[np.ndarray], fps: float = 5.0) -> Path:
    h, w = frames[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (w, h))
    assert writer.isOpened()
    for f in frames:
        writer.write(f)
    writer.release()
    return path


class BrightnessDetector:
    """Scripted detector: dark frames show the winning hand, bright ones the waiting hand, mid-grey a misread."""

    model_path = Path("scripted.onnx")

    def __call__(self, image: np.ndarray, **_: object):
        level = float(image.mean())
        tiles = WIN_ROW if level < 100 else GLITCH_ROW if level < 170 else WAITING_ROW
        return row_detections(tiles, (image.shape[1], image.shape[0]))


def grey(level: int) -> np.ndarray:
    return np.full((240, 640, 3), level, np.uint8)


def test_voting_reports_each_steady_reading_once_and_ignores_a_glitch(tmp_path):
    levels = [40, 40, 40, 40, 140, 40, 40, 220, 220, 220, 220, 220]
    video = write_video(tmp_path / "table.avi", [grey(v) for v in levels])
    lines: list[str] = []
    out = tmp_path / "annotated.avi"
    stats = live(str(video), BrightnessDetector(), window=3, out=out, emit=lines.append)
    assert stats.frames_processed == len(levels) and stats.changes == 2
    assert "平胡" in lines[0] and "W 1" in lines[0]  # the 14-tile hand: a plain win on a discard
    assert "叫牌" in lines[1] and "1p×" in lines[1]  # then 13 tiles: waiting on 1p / 5p
    assert not any("9m" in line for line in lines)
    cap = cv2.VideoCapture(str(out))
    assert int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) == len(levels)
    cap.release()


def test_every_n_processes_fewer_frames(tmp_path):
    video = write_video(tmp_path / "table.avi", [grey(40)] * 9)
    stats = live(str(video), BrightnessDetector(), every=3, window=2, emit=lambda _: None)
    assert (stats.frames_processed, stats.frames_read) == (3, 9)


def test_voter_needs_a_full_window_and_a_quorum():
    a = Reading(concealed_tiles=list(WIN_ROW))
    b = Reading(concealed_tiles=list(GLITCH_ROW))
    voter = ReadingVoter(window=3)
    assert voter.add(a) is None and voter.add(b) is None  # window not full yet
    voted = voter.add(a)
    assert voted is not None and list(voted.concealed) == WIN_ROW and voted.support == pytest.approx(2 / 3)
    voter = ReadingVoter(window=2)
    voter.add(a)
    assert voter.add(b) is None  # 1 of 2 agree on the first tile: under the quorum


@pytest.mark.slow
def test_cli_on_a_video_of_sample_photos(tmp_path, capsys):
    model = model_path()
    if model is None:
        pytest.skip("no tile model: models/zhuoji-tiles-int8.onnx missing and ZHUOJI_MODEL not set")
    photos = [cv2.resize(cv2.imread(str(p)), (640, 480)) for p in SAMPLES[:2]]
    video = write_video(tmp_path / "hands.avi", [photos[0]] * 4 + [photos[-1]] * 4)
    out = tmp_path / "out.mp4"
    assert main(["live", "--source", str(video), "--out", str(out), "--window", "2", "--model", str(model)]) == 0
    err = capsys.readouterr().err
    assert "processed 8 of 8 frames" in err and "fps" in err
    cap = cv2.VideoCapture(str(out))
    assert int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) == 8
    cap.release()


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["live", "--source", str(tmp_path / "missing.mp4"), "--model", str(tmp_path / "m.onnx")]) == 2
    assert main(["live", "--source", "x.mp4", "--every", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert all(line.startswith("zhuoji live: error:") for line in err)
