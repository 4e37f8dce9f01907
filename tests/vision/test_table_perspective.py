"""A table photographed from seat 0 at an angle (``vision.layout.perspective``): the hand-built clean table
(``tests/vision/table_support.py``) projected by a pinhole camera tilted 25–45° from straight down, towards the
far seat, is read as exactly as from above — the far seat's tiles small, the side seats' rows converging (laid
out on the photo's own boxes, this table is misread at 35° and 45°)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.vision.table_support import SIZE, WON, H, TablePlan, W, build
from tests.vision.test_table import answer, with_boxes
from vision.detections import Detections
from vision.layout.perspective import top_view_boxes

DISTANCE = 900.0  # the camera's distance from the table's centre, in the plan's pixels (the table is ~1200 wide: a phone held at a seat)


def project(xyxy: np.ndarray, tilt_degrees: float) -> np.ndarray:
    """Boxes on the table (seen from straight above) as a camera over seat 0's side sees them, tilted by
    ``tilt_degrees`` from straight down and aimed at the table's centre: the bounding boxes of the projected
    corners, at the scale of the top view at the centre."""
    t = math.radians(tilt_degrees)
    corners = np.stack([xyxy[:, [0, 1]], xyxy[:, [2, 1]], xyxy[:, [2, 3]], xyxy[:, [0, 3]]], 1) - SIZE / 2
    x, y = corners[..., 0], corners[..., 1]  # y grows towards seat 0, the camera's side
    depth = DISTANCE - y * math.sin(t)  # a point nearer seat 0 is nearer the camera
    image = np.stack([DISTANCE * x / depth, DISTANCE * y * math.cos(t) / depth], -1) + SIZE / 2
    return np.concatenate([image.min(1), image.max(1)], 1)


def seen_from_seat(tilt_degrees: float) -> Detections:
    d = build(WON).dets
    return Detections(project(d.xyxy.astype(np.float64), tilt_degrees), d.confidence, d.class_id, d.top3_class,
                      d.top3_prob, d.image_size)


@pytest.mark.parametrize("tilt", [25, 35, 45])
def test_a_table_seen_from_a_seat_is_read_exactly(tilt: float) -> None:
    dets = seen_from_seat(tilt)
    sizes = np.sqrt(np.prod(dets.xyxy[:, 2:] - dets.xyxy[:, :2], 1))
    assert sizes.max() / sizes.min() > 1.5  # the near seat's tiles are much larger than the far seat's
    read = answer(dets)
    for plan, seat in zip(WON.seats, read.seats, strict=True):
        assert seat.concealed == plan.concealed
        assert [(m.type, m.tile) for m in seat.melds] == plan.melds
        assert seat.river == plan.river
    assert read.flipped == "4m" and read.winner == 0


def test_the_top_view_makes_the_tiles_one_size_again() -> None:
    top = build(WON).dets.xyxy.astype(np.float64)
    photo = project(top, 40)
    flat = top_view_boxes(photo)
    assert flat is not None

    def area_spread(boxes: np.ndarray) -> float:
        area = np.prod(boxes[:, 2:] - boxes[:, :2], 1)
        return float(area.max() / area.min())

    def shape_error(boxes: np.ndarray) -> float:  # the worst log error of a box's width over its height
        shape = (boxes[:, 2] - boxes[:, 0]) / (boxes[:, 3] - boxes[:, 1])
        return float(np.abs(np.log(shape / ((top[:, 2] - top[:, 0]) / (top[:, 3] - top[:, 1])))).max())

    # Every tile is one size on the table; in the photo the near seat's are over 10 times the far seat's area.
    # What is left in the top view is the boxes around tiles seen off-centre (a slanted tile's box is wider).
    assert area_spread(photo) > 10 and area_spread(flat) < 2
    assert shape_error(photo) > 0.7 and shape_error(flat) < 0.5  # most of the squeeze along the view undone


def test_a_photo_from_above_is_left_as_it_is() -> None:
    assert top_view_boxes(build(WON).dets.xyxy) is None


def test_the_flipped_tile_past_the_walls_end_beside_a_hand_is_taken() -> None:
    """From a seat the wall between a side seat's hand and its river lies within a tile of the hand, so the
    flipped tile beside the wall's end is not alone among the faces (nor as a stray); on the wall's line just
    past its end, it is still the flipped tile (and the hand keeps its tiles)."""
    x = 12.5 * W - H + 1  # seat 1's hand runs down the right at 12.5 W; the wall against it, turned alike
    wall = [(x, -4.0 * W + k * (W + 1), "back") for k in range(5)]
    flipped = (x, -4.0 * W + 5 * (W + 1) + 0.4 * W, "4m")
    dets, added = with_boxes(build(TablePlan(WON.seats, wall=0, flipped=None)).dets, [*wall, flipped],
                             [(H, W)] * 6)
    read = answer(dets)
    assert read.flipped == "4m"
    assert [(read.detections[b].seat, read.detections[b].role) for b in added] == [(None, "wall")] * 5 + [
        (None, "flipped")]
    assert read.seats[1].concealed == WON.seats[1].concealed and read.seats[1].river == WON.seats[1].river
