"""The table-window builder: a scene's whole view and windows, boxes clipped or dropped as the reader cuts them."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import cv2
import numpy as np
import pytest

from tests.datasets.support import load_dataset_script
from vision.labels import parse_yolo
from vision.tiling import Window


@pytest.fixture(scope="module")
def tw() -> ModuleType:
    return load_dataset_script("table_windows")


def test_a_window_keeps_tiles_mostly_inside_clipped_and_drops_the_rest(tw: ModuleType) -> None:
    win = Window(100, 100, 300, 300)
    boxes = np.array([[150, 150, 190, 200],   # inside: kept as is, shifted to the window's pixels
                      [280, 150, 320, 200],   # half outside on the right: dropped (0.5 < 0.6)
                      [90, 150, 130, 200],    # three quarters inside on the left: kept, clipped at x = 0
                      [400, 400, 440, 450]])  # elsewhere: dropped
    kept, classes = tw.window_labels(boxes, np.array([1, 2, 3, 4]), win)
    assert classes.tolist() == [1, 3]
    np.testing.assert_allclose(kept, [[50, 50, 90, 100], [0, 50, 30, 100]])


def test_random_windows_scale_the_median_tile_to_35_to_50_px(tw: ModuleType) -> None:
    rng = np.random.default_rng(0)
    boxes = np.array([[x, y, x + 45, y + 60] for x in range(100, 1500, 100) for y in (200, 800, 1400)], float)
    for _ in range(50):
        win = tw.random_window(rng, (1600, 1600), boxes, 640)
        side = win.x1 - win.x0
        assert side == win.y1 - win.y0  # square, inside the photo
        assert win.x0 >= 0 and win.x1 <= 1600 and win.y0 >= 0 and win.y1 <= 1600
        assert 35 - 1e-6 <= 60 * 640 / side <= 50 + 1e-6  # the tiles' longer side once scaled to 640


def test_a_scene_is_written_whole_and_as_windows_with_matching_labels(tw: ModuleType, tmp_path: Path) -> None:
    scenes = tmp_path / "scenes"
    (scenes / "images" / "train").mkdir(parents=True)
    (scenes / "labels" / "train").mkdir(parents=True)
    img = np.full((1600, 1600, 3), 90, np.uint8)
    rows = []
    for k, x in enumerate(range(200, 1400, 60)):  # a row of small tiles, ~19 px once the scene is at 640
        cv2.rectangle(img, (x, 700), (x + 44, 748), (230, 230, 230), -1)
        rows.append(f"{k % 27} {(x + 22) / 1600:.6f} {724 / 1600:.6f} {44 / 1600:.6f} {48 / 1600:.6f}\n")
    cv2.imwrite(str(scenes / "images" / "train" / "table_000000.jpg"), img)
    (scenes / "labels" / "train" / "table_000000.txt").write_text("".join(rows))

    out = tmp_path / "out"
    assert tw.build(scenes, out, n_windows=2, size=640, seed=1) == 3
    names = sorted(p.stem for p in (out / "images" / "train").glob("*.jpg"))
    assert names == ["table_000000_w00", "table_000000_w01", "table_000000_whole"]
    whole_classes, _ = parse_yolo((out / "labels" / "train" / "table_000000_whole.txt").read_text())
    assert len(whole_classes) == len(rows)
    for name in names:
        image = cv2.imread(str(out / "images" / "train" / f"{name}.jpg"))
        assert max(image.shape[:2]) == 640
        classes, cxcywh = parse_yolo((out / "labels" / "train" / f"{name}.txt").read_text())
        assert len(classes) > 0 and np.all((cxcywh >= 0) & (cxcywh <= 1))
        # every labelled box lies on a drawn tile: bright pixels at its centre
        h, w = image.shape[:2]
        for cx, cy in cxcywh[:, :2]:
            assert image[int(cy * h), int(cx * w)].mean() > 180
    # the first window is the reader's own (the tiles are under tiling's 20 px at 640): tiles scaled to ~40 px
    _, cxcywh = parse_yolo((out / "labels" / "train" / "table_000000_w00.txt").read_text())
    assert 38 <= np.median(cxcywh[:, 3]) * 640 <= 42
