"""Speed work: adaptive tiling decisions, batched second looks equal to one crop at a time, the cap on windows,
a command line that loads no web code for ``detect``."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.api.support import SAMPLES, model_path
from vision.tiling import MAX_WINDOWS, MIN_TILE_PX, Window, inner_cut, plan_windows, windows_over

ROOT = Path(__file__).resolve().parents[2]


def grid_boxes(cols: int, rows: int, tile: tuple[int, int], origin: tuple[int, int], gap: int) -> np.ndarray:
    tw, th = tile
    return np.array([[origin[0] + c * (tw + gap), origin[1] + r * (th + gap),
                      origin[0] + c * (tw + gap) + tw, origin[1] + r * (th + gap) + th]
                     for r in range(rows) for c in range(cols)], np.float32)


def covered_whole(boxes: np.ndarray, wins: list[Window]) -> np.ndarray:
    """Which boxes lie entirely inside at least one window."""
    return np.array([any(b[0] >= w.x0 and b[1] >= w.y0 and b[2] <= w.x1 and b[3] <= w.y1 for w in wins)
                     for b in boxes])


def test_the_detector_classes_list_the_tiles_in_the_rules_engine_order():
    from scoring.tiles import TILES
    from vision.classes import CLASS_NAMES

    assert CLASS_NAMES[:27] == TILES and CLASS_NAMES[27:] == ("back", "other")


def test_a_close_up_of_large_tiles_is_one_pass():
    # 12 MP, 14 tiles of 200×260 px: 42 px tall in the network's 640 px view
    boxes = grid_boxes(14, 1, (200, 260), (300, 1300), 10)
    assert plan_windows((4000, 3000), 640, boxes) == []


def test_a_photo_no_larger_than_the_input_is_one_pass():
    assert plan_windows((640, 480), 640, grid_boxes(20, 10, (8, 10), (0, 0), 2)) == []


def test_a_catalogue_of_small_tiles_is_tiled_over_its_tiles_only():
    # 8 MP, 150 tiles of 64×85 px (17 px tall in the 640 px view), in the middle of the photo
    boxes = grid_boxes(15, 10, (64, 85), (600, 400), 40)
    assert MIN_TILE_PX > (85 * 640 / 3264)
    wins = plan_windows((3264, 2448), 640, boxes)
    assert 1 <= len(wins) <= MAX_WINDOWS
    assert covered_whole(boxes, wins).all()  # every tile seen whole by some window
    for w in wins:
        assert w.x1 - w.x0 >= 640 and w.y1 - w.y0 >= 640  # never a window smaller than the network's input
    # the empty table around the grid is not looked at again
    x0 = min(w.x0 for w in wins)
    x1 = max(w.x1 for w in wins)
    assert x1 - x0 < 3264


def test_only_the_region_of_small_tiles_is_tiled():
    large = grid_boxes(6, 1, (220, 300), (200, 200), 10)  # a hand in the top left, read in one pass
    small = grid_boxes(10, 4, (40, 55), (2600, 2000), 20)  # small tiles bottom right
    wins = plan_windows((4000, 3000), 640, np.concatenate([large, small]))
    assert wins and covered_whole(small, wins).all()
    assert all(w.x1 > 2000 and w.y1 > 1500 for w in wins)


def test_a_table_photo_is_looked_at_again_over_every_tile_it_found():
    """A whole table from a seat: tiles 21-30 px long in the 640 px view, large enough to be found, too small and
    squashed to read well. With every tile counted small (``min_tile_px`` inf) and a target of 80 px the whole
    region of the tiles is windowed at the network's own scale; the one-hand rule would look once only."""
    w, h = 2000, 1500
    near = grid_boxes(13, 1, (95, 80), (300, 1250), 5)  # the near seat's hand, large
    far = grid_boxes(13, 1, (66, 44), (500, 200), 4)  # the far seat's, small and squashed
    boxes = np.concatenate([near, far])
    assert (np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]) * 640 / w >= MIN_TILE_PX).all()
    assert plan_windows((w, h), 640, boxes) == []
    wins = plan_windows((w, h), 640, boxes, min_tile_px=math.inf, target_tile_px=80)
    assert wins and covered_whole(boxes, wins).all()
    # the median tile (80 px) at 80 px: windows of about the network's own side, tiles at about full size
    assert all(640 <= win.x1 - win.x0 <= 660 and 640 <= win.y1 - win.y0 <= 660 for win in wins)


def test_the_number_of_windows_is_capped():
    # a huge photo covered with tiny tiles everywhere: windows grow instead of multiplying
    boxes = grid_boxes(60, 45, (30, 40), (50, 50), 80)
    wins = plan_windows((7000, 6000), 640, boxes, max_windows=6)
    assert 1 <= len(wins) <= 6
    assert len(plan_windows((7000, 6000), 640, boxes)) <= MAX_WINDOWS


def test_nothing_found_looks_only_at_textured_windows():
    texture = np.zeros((480, 640), np.float32)
    assert plan_windows((4000, 3000), 640, np.zeros((0, 4)), texture) == []  # a bare table
    texture[:100, :120] = 40.0  # something edge-rich in the top-left corner
    wins = plan_windows((4000, 3000), 640, np.zeros((0, 4)), texture)
    assert wins and all(w.x0 < 750 and w.y0 < 625 for w in wins)


def test_windows_cover_the_region_and_cut_boxes_are_known():
    wins = windows_over((3000, 1000), 1280, 256)
    assert wins[0].x0 == 0 and max(w.x1 for w in wins) == 3000 and all(w.y1 == 1000 for w in wins)
    win = Window(1000, 0, 2280, 1000)
    boxes = np.array([[999, 10, 1100, 100], [1200, 10, 1300, 100], [2200, 10, 2280, 100]], np.float32)
    assert inner_cut(boxes, win, (3000, 1000)).tolist() == [True, False, True]


# ------------------------------------------------------------------------------------------ with the models

needs_model = pytest.mark.skipif(model_path() is None, reason="no shipped model")


def _session(path: Path):
    from vision.sessions import open_session

    return open_session(path, 1, "model")


@needs_model
@pytest.mark.parametrize("name, exact", [("zhuoji-crops.onnx", False), ("zhuoji-crops-int8.onnx", True),
                                         ("zhuoji-backs.onnx", False)])
def test_a_batch_of_crops_gives_what_one_crop_at_a_time_gives(name: str, exact: bool):
    from vision.classify import crop_tiles, to_input

    path = ROOT / "models" / name
    if not path.is_file():
        pytest.skip(f"{name} not shipped")
    session = _session(path)
    img = cv2.imread(str(SAMPLES[0]))
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 560, (24, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(30, 80, (24, 2))], 1)
    batch = to_input(crop_tiles(img, boxes))
    together = session.run(None, {"crops": batch})[0]
    alone = np.concatenate([session.run(None, {"crops": batch[i:i + 1]})[0] for i in range(len(batch))])
    if exact:  # int8: the same names
        assert (together.argmax(1) == alone.argmax(1)).all()
        assert np.abs(together - alone).max() < 0.02
    else:
        assert np.abs(together - alone).max() < 1e-5


@needs_model
def test_a_12_mp_close_up_is_read_in_one_pass_with_one_box_per_tile():
    from vision.detect import Detector

    detector = Detector(model_path())
    runs = []
    raw = detector.raw
    detector.raw = lambda canvas: runs.append(canvas.shape) or raw(canvas)  # type: ignore[method-assign]
    photo = cv2.imread(str(SAMPLES[1]))
    small = detector(photo)
    big = cv2.resize(photo, (3000, 3000), interpolation=cv2.INTER_CUBIC)
    big = cv2.copyMakeBorder(big, 0, 0, 500, 500, cv2.BORDER_CONSTANT, value=(60, 110, 50))  # 4000×3000
    runs.clear()
    large = detector(big)
    assert len(runs) == 1  # one pass, no windows
    assert abs(len(large) - len(small)) <= 1


@needs_model
def test_detect_on_the_command_line_loads_no_web_code(tmp_path: Path):
    """Nor the rules engine, the tables, the other answers' models or the later photo stages: only what a detection
    uses (each was start-up a ``zhuoji detect`` paid for nothing: docs/experiments/speed-catalogue.md)."""
    code = ("import sys; from api.cli import main; code = main(['detect', '--json', sys.argv[1]]); "
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('fastapi', 'starlette', 'uvicorn', 'anyio', 'scoring', 'tables', 'sqlalchemy') "
            "or m.startswith(('api.service', 'vision.layout', 'vision.reading', 'vision.calibrate')) "
            "or m in ('pipeline.models', 'pipeline.table_models', 'pipeline.photo', 'pipeline.hand')); "
            "print(repr(heavy)); sys.exit(code)")
    out = subprocess.run([sys.executable, "-c", code, str(SAMPLES[0])], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    line, loaded = out.stdout.strip().splitlines()
    assert json.loads(line)["tiles"]  # the typed answer (pydantic) of POST /v1/detect, without the service
    assert loaded == "[]"


def test_a_large_jpeg_is_decoded_reduced_and_its_size_kept(tmp_path: Path):
    from vision.images import load_image_reduced

    big = cv2.resize(cv2.imread(str(SAMPLES[0])), (4000, 3000))
    ok, data = cv2.imencode(".jpg", big)
    img, full = load_image_reduced(data.tobytes(), 1600)
    assert img.shape[:2] == (1500, 2000) and full == (4000, 3000)
    img, full = load_image_reduced(data.tobytes(), 2100)  # 1/2 would fall under 2100 px: full size
    assert img.shape[:2] == (3000, 4000) and full == (4000, 3000)
    ok, png = cv2.imencode(".png", big[:1000, :2000])  # only JPEG decodes reduced
    img, full = load_image_reduced(png.tobytes(), 500)
    assert img.shape[:2] == (1000, 2000) and full == (2000, 1000)


@needs_model
def test_boxes_of_a_reduced_decode_are_in_the_photos_pixels(tmp_path: Path):
    from vision.detect import Detector

    detector = Detector(model_path())
    big = cv2.resize(cv2.imread(str(SAMPLES[1])), (4000, 3000), interpolation=cv2.INTER_CUBIC)
    path = tmp_path / "big.jpg"
    cv2.imwrite(str(path), big, [cv2.IMWRITE_JPEG_QUALITY, 92])
    reduced = detector(path)  # decoded at 2000×1500
    full = detector(cv2.imread(str(path)))  # the array as given
    assert reduced.image_size == full.image_size == (4000, 3000)
    assert len(reduced) == len(full) and len(full) > 5
    order_r, order_f = np.argsort(reduced.xyxy[:, 0]), np.argsort(full.xyxy[:, 0])
    assert np.abs(reduced.xyxy[order_r] - full.xyxy[order_f]).max() < 40  # 1% of the photo's width
    assert (reduced.class_id[order_r] == full.class_id[order_f]).mean() >= 0.9


@pytest.mark.slow
@needs_model
def test_the_turned_look_runs_only_for_doubtful_tiles():
    from vision.detect import Detector, doubtful

    detector = Detector(model_path())
    seen = {True: 0, False: 0}
    for path in SAMPLES[:6]:
        img = cv2.imread(str(path))
        first, both, auto = detector(img), detector(img, turned=True), detector(img, turned="auto")
        expected = both if doubtful(first).any() else first
        seen[bool(doubtful(first).any())] += 1
        assert np.array_equal(auto.xyxy, expected.xyxy) and np.array_equal(auto.class_id, expected.class_id)
    assert seen[False] > 0  # most photos need no second look
