"""Live mode that holds still: the view's shift, tile tracks that vote, and one announced reading on a panned video."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from api.live.loop import live
from tests.api.support import WIN_ROW, row_detections
from vision.tracking import TileTracks, ViewChange

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("zhuoji_make_inputs", ROOT / "benchmarks" / "make_inputs.py")
assert spec and spec.loader
make_inputs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_inputs)


def textured(seed: int = 0, size: tuple[int, int] = (1280, 720)) -> np.ndarray:
    rng = np.random.default_rng(seed)
    noise = rng.integers(0, 255, (size[1] // 8, size[0] // 8, 3), dtype=np.uint8)
    return cv2.resize(noise, size, interpolation=cv2.INTER_CUBIC)


def test_a_moved_view_is_a_shift_and_a_new_one_a_change():
    view = ViewChange()
    frame = textured()
    view.set_reference(frame)
    moved = cv2.warpAffine(frame, np.float32([[1, 0, 24], [0, 1, -8]]), (1280, 720), borderMode=cv2.BORDER_REPLICATE)
    m = view.motion(moved)
    assert not m.changed and m.dx == pytest.approx(24, abs=2) and m.dy == pytest.approx(-8, abs=2)
    assert not view.motion(frame).changed
    covered = frame.copy()
    covered[200:400, 500:700] = 255  # something laid on the table
    assert view.motion(covered).changed
    assert view.motion(textured(seed=1)).changed


def test_tracks_keep_a_tile_through_a_misread_and_a_missed_box():
    tracks = TileTracks(history=8, min_hits=2, max_misses=2)
    for _ in range(3):
        tracks.update(row_detections(WIN_ROW))
    glitch = row_detections(["9m", *WIN_ROW[1:]])
    tracks.update(glitch)  # one look reads the first tile as 9m
    assert tracks.detections().names == WIN_ROW
    tracks.update(row_detections(WIN_ROW)[np.arange(1, 14)])  # one look misses the first tile
    assert tracks.detections().names == WIN_ROW and not tracks.steady
    for _ in range(3):
        tracks.update(row_detections(WIN_ROW[:13]))  # the last tile taken away: dropped after max_misses
    assert tracks.detections().names == WIN_ROW[:13]


def test_tracks_follow_the_view_and_ignore_a_stray_box():
    tracks = TileTracks(min_hits=2)
    dets = row_detections(WIN_ROW)
    tracks.update(dets)
    moved = row_detections(WIN_ROW)
    moved.xyxy += np.array([30, 5, 30, 5], np.float32)  # the camera moved: same tiles, shifted boxes
    tracks.update(moved, dx=30, dy=5)
    assert len(tracks.tracks) == 14 and tracks.steady
    assert np.allclose(tracks.detections(10, 0).xyxy, moved.xyxy + np.array([10, 0, 10, 0]))
    stray = row_detections([*WIN_ROW, "5s"])  # one frame's extra box: a track, not yet a tile
    stray.xyxy += np.array([30, 5, 30, 5], np.float32)
    tracks.update(stray)
    assert tracks.detections().names == WIN_ROW and not tracks.steady


@pytest.mark.slow
def test_a_gently_panned_hand_is_announced_once_and_kept(tmp_path: Path, detector):
    hand = ROOT / "tests" / "data" / "real_hands" / "hand_01.jpg"
    expected = json.loads(hand.with_suffix(".json").read_text())["concealed"]
    video = make_inputs.write_video(tmp_path / "hand.mp4",
                                    make_inputs.panned_frames(cv2.imread(str(hand)), seconds=4.0, seed=3))
    lines: list[str] = []
    stats = live(str(video), detector, emit=lines.append, as_json=True)
    assert stats.frames_processed == 120
    assert stats.changes == 1, lines  # announced once, never changed after
    assert json.loads(lines[0])["reading"] == "".join(expected)
    assert stats.detector_runs < stats.frames_processed / 2  # the other frames are tracked
