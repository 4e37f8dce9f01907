"""``zhuoji detect --annotate`` on a full hand: every label readable (none overlaps another) and next to its tile."""

from __future__ import annotations

import numpy as np
import pytest

from vision.annotate import draw_detections, label_rects
from vision.classes import CLASS_NAMES
from vision.detections import Detections

WIN_ROW = ["1m", "2m", "3m", "4p", "5p", "6p", "7s", "8s", "9s", "1p", "1p", "5p", "5p", "5p"]


def row(n: int, width: int, gap: int, top: int = 300) -> np.ndarray:
    return np.array([[20 + (width + gap) * i, top, 20 + (width + gap) * i + width, top + int(1.35 * width)]
                     for i in range(n)], float)


def overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.parametrize(("width", "gap", "label_w"), [(40, 2, 60), (40, 0, 44), (60, 3, 70), (25, 1, 40)])
def test_labels_of_a_full_hand_never_overlap_and_touch_their_tile(width, gap, label_w):
    boxes = row(14, width, gap)
    rects = label_rects(boxes, [(label_w, 18)] * 14, (1000, 800))
    for i, a in enumerate(rects):
        assert a[2] - a[0] == label_w and a[3] - a[1] == 18
        assert all(not overlap(a, b) for b in rects[i + 1:]), (i, rects)
        x1, y1, _x2, y2 = boxes[i]
        assert a[0] == x1  # left-aligned with its tile
        assert a[3] <= y1 or a[1] >= y2  # above or below the tile, never over it
        assert min(abs(a[3] - y1), abs(a[1] - y2)) <= 18  # at most one label further out
        assert a[1] >= 0 and a[3] <= 800


def test_a_hand_at_the_top_edge_puts_its_labels_below():
    boxes = row(14, 40, 2, top=2)
    rects = label_rects(boxes, [(50, 16)] * 14, (1000, 800))
    assert all(r[1] >= b[3] for r, b in zip(rects, boxes, strict=True))


def test_the_drawn_photo_has_one_filled_label_per_tile():
    image = np.full((400, 700, 3), 90, np.uint8)
    boxes = row(14, 44, 2, top=150)
    dets = Detections(boxes, np.full(14, 0.93), [CLASS_NAMES.index(t) for t in WIN_ROW], image_size=(700, 400))
    out = draw_detections(image, dets)
    assert out.shape == image.shape and not np.array_equal(out, image)
    # label backgrounds both above and below the row: alternating, as the labels are wider than a tile
    above = (out[:150] != 90).any(axis=2).sum()
    below = (out[150 + 60:] != 90).any(axis=2).sum()
    assert above > 500 and below > 500
