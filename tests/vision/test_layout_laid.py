"""Layout of what people lay down: sideways meld tiles, melds above or below the row, hands running up or down the
photo, face-down tiles of unfamiliar back colours, and two boxes on one tile (close-ups). Hand-made boxes for each
case, then rates over seeded synthetic scenes of each (``vision/training/layout_synth.py``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.classes import BACK, CLASS_NAMES
from vision.detections import Detections
from vision.layout import Layout, layout
from vision.layout.frame import row_frame
from vision.layout.grouping import trade_backs
from vision.reading import read
from vision.training.layout_synth import generate, layout_mismatches, reading_mismatches

W, D = 40.0, 54.0  # a tile's width and depth in pixels, seen from above
LAID = ("jitter", "perspective", "bend", "gaps")


def _dets(tiles: list[tuple[str, float, float, bool]], angle: float = 0.0,
          top3: dict[int, tuple[list[str], list[float]]] | None = None) -> Detections:
    """Boxes of tiles (name, x, y of the centre in tile-plane pixels, turned) seen from above, the photo turned by
    ``angle`` degrees; ``top3`` gives some boxes their own top-3 names and probabilities."""
    a = math.radians(angle)
    c, s = math.cos(a), math.sin(a)
    boxes, cls, t3, p3 = [], [], [], []
    for i, (name, x, y, turned) in enumerate(tiles):
        w, d = (D, W) if turned else (W, D)
        corners = np.array([[x - w / 2, y - d / 2], [x + w / 2, y - d / 2], [x + w / 2, y + d / 2], [x - w / 2, y + d / 2]])
        rot = corners @ np.array([[c, s], [-s, c]]) + 600
        boxes.append([*rot.min(0), *rot.max(0)])
        names, probs = top3.get(i, ([name], [0.95])) if top3 else ([name], [0.95])
        ids = [CLASS_NAMES.index(n) for n in names] + [-1] * (3 - len(names))
        cls.append(ids[0])
        t3.append(ids)
        p3.append(list(probs) + [0.0] * (3 - len(probs)))
    return Detections(np.array(boxes), np.array([p[0] for p in p3]), np.array(cls), np.array(t3), np.array(p3),
                      (1200, 1200))


def _row(names: list[str], x0: float, y: float, turned_at: int | None = None, gap: float = 2.0
         ) -> list[tuple[str, float, float, bool]]:
    """Tiles side by side from x0; the one at ``turned_at`` lies sideways, its long side on the row's near edge."""
    out, x = [], x0
    for k, name in enumerate(names):
        turned = k == turned_at
        w = D if turned else W
        out.append((name, x + w / 2, y + ((D - W) / 2 if turned else 0.0), turned))
        x += w + gap
    return out


HAND = ["1m", "2m", "3m", "4p", "5p", "6p", "7s", "8s", "9s", "2p", "2p"]  # 11 tiles + a pong = 14


def _meld_boxes(lay: Layout) -> list[list[int]]:
    return sorted(sorted(m.boxes) for m in lay.melds)


@pytest.mark.parametrize("angle", [0.0, 90.0, -90.0, 180.0, 84.0])
def test_a_turned_tile_stays_in_its_meld_whichever_way_the_hand_runs(angle: float) -> None:
    tiles = _row(HAND, 0, 0) + _row(["5s", "5s", "5s"], 11 * (W + 2) + 30, 0, turned_at=1)
    lay = layout(_dets(tiles, angle))
    assert _meld_boxes(lay) == [[11, 12, 13]]
    assert [t.turned for t in lay.melds[0].tiles] == [False, True, False]
    assert lay.melds[0].type == "pong" and lay.melds[0].tile == "5s"
    assert sorted(t.box for t in lay.concealed) == list(range(11))
    reading = read(_dets(tiles, angle), lay)
    assert reading.concealed == "123m22456p789s"
    assert [(m.type, m.tile) for m in reading.melds] == [("pong", "5s")]


@pytest.mark.parametrize("place", ["above", "below"])
def test_melds_in_a_row_above_or_below_the_hand(place: str) -> None:
    y = -1.5 * D if place == "above" else 1.5 * D
    tiles = (_row(HAND[:8], 0, 0) + _row(["3s", "3s", "3s"], 40, y, turned_at=0)
             + _row(["9m", "9m", "9m", "9m"], 40 + 3 * W + D + 40, y, turned_at=3))
    lay = layout(_dets(tiles, 90.0))
    assert _meld_boxes(lay) == [[8, 9, 10], [11, 12, 13, 14]]
    assert sorted((m.type, m.tile) for m in lay.melds) == [("kong", "9m"), ("pong", "3s")]
    assert len(lay.concealed) == 8 and lay.indicator is None and not lay.unassigned


@pytest.mark.parametrize("down", [[0, 1], [2, 3], [0, 3], [0, 1, 2, 3]])
def test_a_concealed_kong_with_backs_of_an_unfamiliar_colour(down: list[int]) -> None:
    """Green or blue backs read as `other` with `back` second, or as a weak `back`: still face-down tiles."""
    kong = _row(["7p"] * 4, 11 * (W + 2) + 30, 0)
    top3 = {}
    for k in down:
        kong[k] = ("back", *kong[k][1:])
        top3[11 + k] = (["other", "back", "1m"], [0.55, 0.35, 0.02]) if k % 2 else (["back", "other"], [0.45, 0.3])
    dets = _dets(_row(HAND, 0, 0) + kong, 0.0, top3)
    lay = layout(dets)
    assert _meld_boxes(lay) == [[11, 12, 13, 14]]
    meld = lay.melds[0]
    assert meld.type == "concealed_kong"
    assert meld.tile == (None if len(down) == 4 else "7p")
    assert [t.tile for t in meld.tiles] == ["back" if k in down else "7p" for k in range(4)]
    reading = read(dets, lay)
    assert [(m.type, m.tile) for m in reading.melds] == [("concealed_kong", None if len(down) == 4 else "7p")]


def test_one_back_and_three_faces_is_a_pong_beside_a_kong_not_a_kong() -> None:
    """A 闷豆 shows two, three or four backs: a pong laid against a kong's first back must not take that back."""
    tiles = _row(HAND[:7], 0, 0) + _row(["4s"] * 3 + ["back", "6m", "6m", "back"], 7 * (W + 2) + 30, 0)
    lay = layout(_dets(tiles))
    assert _meld_boxes(lay) == [[7, 8, 9], [10, 11, 12, 13]]
    assert sorted((m.type, m.tile) for m in lay.melds) == [("concealed_kong", "6m"), ("pong", "4s")]


def test_two_boxes_on_one_tile_of_a_close_up_count_once() -> None:
    """The face boxed alone inside the box of the whole tile (IoU under the duplicate threshold)."""
    tiles = _row(HAND + ["2p"], 0, 0)
    dets = _dets(tiles)
    inner = dets.xyxy[4].copy()
    inner += np.array([0.15, 0.2, -0.15, -0.25]) * (W, D, W, D)  # the face alone: IoU ≈ 0.38 with the tile
    extra = Detections(np.vstack([dets.xyxy, inner]), np.append(dets.confidence, 0.6),
                       np.append(dets.class_id, dets.class_id[4]), np.vstack([dets.top3_class, dets.top3_class[4]]),
                       np.vstack([dets.top3_prob, dets.top3_prob[4] * 0.6]), dets.image_size)
    lay = layout(extra)
    assert sorted(t.box for t in lay.concealed) == list(range(12))
    assert [u.box for u in lay.unassigned] == [12] and "one tile" in lay.unassigned[0].reason


@pytest.mark.parametrize("angle", [0.0, 180.0, 90.0])
def test_melds_pushed_close_to_a_sorted_hand_are_cut_off_by_its_order(angle: float) -> None:
    """A pong and a kong laid a quarter tile after a sorted hand, no tile turned, the hand's own gaps uneven: the
    gap does not stand out, but 3s after 7s and the p suit coming back break the order the owner sorted the hand
    in (14 tiles as one concealed row would count as legal too)."""
    names = ["2m", "5m", "4p", "5p", "9p", "2s", "7s", "3s", "3s", "3s", "8p", "8p", "8p", "8p"]
    gaps = [1.0, 6.0, 1.0, 7.0, 2.0, 6.0, 10.0, 2.0, 2.0, 10.0, 2.0, 2.0, 2.0]  # 10 px: a quarter tile
    x, tiles = 0.0, []
    for name, gap in zip(names, [*gaps, 0.0], strict=True):
        tiles.append((name, x + W / 2, 0.0, False))
        x += W + gap
    lay = layout(_dets(tiles, angle))
    assert _meld_boxes(lay) == [[7, 8, 9], [10, 11, 12, 13]]
    assert sorted((m.type, m.tile) for m in lay.melds) == [("kong", "8p"), ("pong", "3s")]
    assert sorted(t.box for t in lay.concealed) == list(range(7))


@pytest.mark.parametrize("angle", [0.0, 180.0, 90.0])
def test_a_pong_with_its_sideways_tile_touching_a_sorted_hand_is_a_meld(angle: float) -> None:
    """From a seat's camera the gap between a side seat's hand and its pong can close up: a pong whose claimed tile
    lies sideways, touching a hand sorted throughout, is a meld (5m after 7s breaks the order); the same three 5m
    upright in the hand's own order stay concealed."""
    hand = ["1m", "3m", "2p", "7p", "9p", "3s", "3s", "4s", "6s", "7s"]
    lay = layout(_dets(_row([*hand, "5m", "5m", "5m"], 0, 0, turned_at=10, gap=0.5), angle))
    assert [(m.type, m.tile) for m in lay.melds] == [("pong", "5m")]
    assert sorted(t.box for t in lay.concealed) == list(range(10))
    sorted_hand = ["1m", "3m", "5m", "5m", "5m", "2p", "7p", "9p", "3s", "3s", "4s", "6s", "7s"]
    lay = layout(_dets(_row(sorted_hand, 0, 0, gap=0.5), angle))
    assert not lay.melds and len(lay.concealed) == 13


@pytest.mark.parametrize("angle", [0.0, 90.0])
def test_a_weak_box_across_two_tiles_is_left_out(angle: float) -> None:
    """The detector sometimes boxes half of one tile and half of the next as a third, weaker tile: it is no tile
    of its own, and the hand stays one row of 13 in order."""
    hand = ["2m", "3m", "4m", "6p", "7p", "8p", "2s", "2s", "3s", "3s", "6s", "7s", "8s"]
    tiles = _row(hand, 0, 0) + [("2s", 7.5 * (W + 2) + W / 2, 0.0, False)]  # across the two 2s
    dets = _dets(tiles, angle, {13: (["2s"], [0.36])})
    lay = layout(dets)
    assert sorted(t.box for t in lay.concealed) == list(range(13)) and not lay.melds
    assert [u.box for u in lay.unassigned] == [13] and "across two tiles" in lay.unassigned[0].reason


@pytest.mark.parametrize("angle", [0.0, 90.0])
def test_a_thin_slice_of_a_tile_boxed_apart_is_no_tile(angle: float) -> None:
    """The detector can box a thin slice of a tile (a column of an 8s) on its own and name it as the tile: a weak
    box, most of it on the tile's stronger box, under half its size. It is a piece of that tile, and the hand stays
    one row of 13 in order."""
    hand = ["2m", "3m", "4m", "6p", "7p", "8p", "2s", "3s", "4s", "8s", "8s", "8s", "9s"]
    base = _dets(_row(hand, 0, 0), angle)
    x0, y0, x1, y1 = base.xyxy[10]
    w, h = x1 - x0, y1 - y0
    piece = [x1 - 0.3 * w, y0, x1 + 0.1 * w, y1] if angle == 0.0 else [x0, y1 - 0.3 * h, x1, y1 + 0.1 * h]
    dets = Detections(np.vstack([base.xyxy, piece]), np.append(base.confidence, 0.32),
                      np.append(base.class_id, CLASS_NAMES.index("8s")), image_size=base.image_size)
    lay = layout(dets)
    assert sorted(t.box for t in lay.concealed) == list(range(13))
    assert [u.box for u in lay.unassigned] == [13] and "a piece of the tile" in lay.unassigned[0].reason


@pytest.mark.parametrize("angle", [0.0, 90.0])
def test_a_sure_box_around_two_whole_tiles_of_a_meld_is_left_out(angle: float) -> None:
    """The network may box two tiles of a pong as one, more surely than either: it holds two boxes of a tile's
    size that fill it, so it is no tile and the pong keeps its three. Two pieces of one tile, boxed apart inside
    it, are no two tiles: the tile stays."""
    hand = ["1m", "2m", "3m", "4p", "5p", "6p", "7s", "8s", "9s", "2p"]
    tiles = _row([*hand, "5s", "5s", "5s"], 0, 0, gap=2.0)
    tiles[10:] = [(n, x + 0.5 * W, y, t) for n, x, y, t in tiles[10:]]  # the pong apart from the hand
    base = _dets(tiles, angle, {11: (["5s"], [0.5]), 12: (["5s"], [0.5])})
    x0, y0 = base.xyxy[11, :2]
    x1, y1 = base.xyxy[12, 2:]
    around = Detections(np.vstack([base.xyxy, [x0, y0, x1, y1]]), np.append(base.confidence, 0.6),
                        np.append(base.class_id, CLASS_NAMES.index("5s")), image_size=base.image_size)
    lay = layout(around)
    assert [(m.type, m.tile, sorted(m.boxes)) for m in lay.melds] == [("pong", "5s", [10, 11, 12])]
    assert [u.box for u in lay.unassigned] == [13] and "around two tiles" in lay.unassigned[0].reason

    x0, y0, x1, y1 = base.xyxy[3]
    halves = [[x0, y0, x1, (y0 + y1) / 2], [x0, (y0 + y1) / 2, x1, y1]] if angle == 0.0 else [
        [x0, y0, (x0 + x1) / 2, y1], [(x0 + x1) / 2, y0, x1, y1]]
    pieces = Detections(np.vstack([base.xyxy, halves]), np.append(base.confidence, [0.3, 0.3]),
                        np.append(base.class_id, [CLASS_NAMES.index("4p")] * 2), image_size=base.image_size)
    lay = layout(pieces)
    assert sorted(t.box for t in lay.concealed) == list(range(10)) and sorted(u.box for u in lay.unassigned) == [13, 14]


@pytest.mark.parametrize("angle", [0.0, 90.0])
def test_a_sure_box_across_two_tiles_of_one_name_is_left_out(angle: float) -> None:
    """Between two tiles of one name (a pair: the pattern repeats) the network may box the middle more surely than
    either tile: still no tile of its own. Across two tiles named apart it counts only when it is the weakest of
    the three (the surer box between them is more likely a tile whose neighbours' boxes are too wide)."""
    hand = ["2m", "3m", "4m", "6p", "7p", "8p", "2s", "2s", "3s", "3s", "6s", "7s", "8s"]
    tiles = _row(hand, 0, 0) + [("2s", 6.5 * (W + 2) + W / 2, 0.0, False)]  # across the two 2s
    lay = layout(_dets(tiles, angle, {6: (["2s"], [0.5]), 7: (["2s"], [0.5]), 13: (["2s"], [0.6])}))
    assert sorted(t.box for t in lay.concealed) == list(range(13)) and not lay.melds
    assert [u.box for u in lay.unassigned] == [13] and "across two tiles" in lay.unassigned[0].reason
    piece = _dets(_row(hand, 0, 0), angle)  # a piece of a 2s boxed apart, mostly on the first 2s
    x0, y0, x1, y1 = piece.xyxy[6]
    w, h = x1 - x0, y1 - y0  # 0.7 of it on the first 2s, 0.2 on the second
    half = [x0 + w / 2, y0, x1 + w / 5, y1] if angle == 0.0 else [x0, y0 + h / 2, x1, y1 + h / 5]
    piece = Detections(np.vstack([piece.xyxy, half]), np.append(piece.confidence, 0.25),
                       np.append(piece.class_id, CLASS_NAMES.index("2s")), image_size=piece.image_size)
    lay = layout(piece)
    assert sorted(t.box for t in lay.concealed) == list(range(13)) and [u.box for u in lay.unassigned] == [13]
    weak = _dets(_row(hand, 0, 0), angle)  # a weak box, 2/3 of it on the 7s, 0.27 on the 8s (named apart)
    x0, y0, x1, y1 = weak.xyxy[11]
    w, h = x1 - x0, y1 - y0
    over = [x1 - w / 2, y0, x1 + w / 4, y1] if angle == 0.0 else [x0, y1 - h / 2, x1, y1 + h / 4]
    weak = Detections(np.vstack([weak.xyxy, over]), np.append(weak.confidence, 0.25),
                      np.append(weak.class_id, CLASS_NAMES.index("7s")), image_size=weak.image_size)
    lay = layout(weak)
    assert sorted(t.box for t in lay.concealed) == list(range(13)) and [u.box for u in lay.unassigned] == [13]
    tiles = _row(hand, 0, 0) + [("3s", 7.5 * (W + 2) + W / 2, 0.0, False)]  # across the 2s and the 3s after it
    lay = layout(_dets(tiles, angle, {7: (["2s"], [0.5]), 8: (["3s"], [0.7]), 13: (["3s"], [0.6])}))
    assert 13 not in [u.box for u in lay.unassigned]


def test_an_other_without_back_in_its_top3_is_not_taken_for_a_back() -> None:
    kong = _row(["7p"] * 4, 11 * (W + 2) + 30, 0)
    kong[0] = ("other", *kong[0][1:])
    dets = _dets(_row(HAND, 0, 0) + kong, 0.0, {11: (["other", "9p", "1m"], [0.6, 0.2, 0.05])})
    assert CLASS_NAMES[int(dets.class_id[11])] == "other" and BACK not in dets.top3_class[11]
    lay = layout(dets)
    assert all(t.tile != "back" for m in lay.melds for t in m.tiles)
    assert not any(m.type == "concealed_kong" for m in lay.melds)


# --------------------------------------------------------------------------- rates on synthetic scenes


def _rates(n: int, seed: int, noise: tuple[str, ...], pins) -> tuple[float, float]:
    group = hand = 0
    for s in range(seed, seed + n):
        scene = generate(np.random.default_rng(s), noise, **pins(np.random.default_rng([s, 1])))
        lay = layout(scene.dets)
        group += not [t for t in layout_mismatches(scene.truth, lay) if t != "order"]
        hand += not reading_mismatches(scene.truth, read(scene.dets, lay))
    return group / n, hand / n


# Measured with benchmarks/bench_layout.py --n 300 (seeds 0–299): exact hand turned 0.973, above 0.973, below 0.983,
# vertical 0.963, backs 0.983, closeup 1.000 (before this layout: 0.940, 0.967, 0.963, 0.947, 0.167, 0.993).
# The bounds leave room for sampling noise on other seeds.
@pytest.mark.parametrize(("name", "noise", "pins", "bound"), [
    ("turned", LAID, lambda r: {"turned": True, "melds": int(r.integers(1, 4))}, 0.9),
    ("below", LAID, lambda r: {"turned": True, "melds": int(r.integers(1, 4)), "meld_place": "below"}, 0.9),
    ("vertical", LAID, lambda r: {"angle": float(r.choice([90, -90]) + r.uniform(-12, 12))}, 0.9),
    ("backs", (*LAID, "colour"), lambda r: {"meld_types": ["concealed_kong", "pong"],
                                            "face_down": str(r.choice(["backs4", "backs2", "backs2side"]))}, 0.92),
    ("closeup", ("jitter", "duplicates"), lambda r: {}, 0.97),
])
@pytest.mark.slow
def test_exact_hand_rate_per_laid_case(name: str, noise: tuple[str, ...], pins, bound: float) -> None:
    _, hand = _rates(150, 50_000, noise, pins)
    assert hand >= bound, f"{name}: exact hand {hand:.3f}"


def test_turned_tiles_are_told_from_straight_ones_on_slanted_photos() -> None:
    """Perspective foreshortens the depth across the row, not a sideways tile's long side along it."""
    hit = missed = false = 0
    for s in range(60_000, 60_100):
        r = np.random.default_rng(s)
        scene = generate(r, LAID, turned=True, melds=int(r.integers(1, 4)))
        lay = layout(scene.dets)
        got = {t.box for t in lay.concealed + [t for m in lay.melds for t in m.tiles] + lay.river if t.turned}
        want = set(scene.truth.turned)
        hit, missed, false = hit + len(got & want), missed + len(want - got), false + len(got - want)
    assert hit >= 0.75 * (hit + missed), (hit, missed)
    assert false <= 0.05 * 100 * 18, false  # under 5% of the ~18 straight tiles a photo


@pytest.mark.parametrize("shift", [0.5, 0.0])
def test_a_back_grouped_with_a_pong_goes_to_the_three_backs_it_lies_nearer(shift: float) -> None:
    """Seen from a seat, a 闷豆's four backs beside a pong: the gaps cut them as three backs and a back with the
    three 1m (no meld: one back and three faces). The fourth back lies nearer the backs than the 1m (shifted
    across the row by the slant): it goes to them, a 闷豆 of four backs and a pong of 1m. Unshifted and a tile
    apart from the backs, it stays (it is then as near the 1m). The same when the 闷豆 shows one face."""
    tiles = [("back", k * (W + 2), shift * D, False) for k in range(3)]
    tiles += [("back", 3 * (W + 2) + (0.1 if shift else 0.6) * W, 0.5 * shift * D, False)]
    tiles += [("1m", 4 * (W + 2) + 0.6 * W + k * (W + 2), 0.0, False) for k in range(3)]
    dets = _dets(tiles)
    geo, _ = row_frame(dets.xyxy.astype(np.float64), 0.0)
    groups = trade_backs(geo, [[0, 1, 2], [3, 4, 5, 6]], dets.class_id)
    assert groups == ([[0, 1, 2, 3], [4, 5, 6]] if shift else [[0, 1, 2], [3, 4, 5, 6]])

    shown = _dets([("5m", x, y, t) if k == 1 else (n, x, y, t) for k, (n, x, y, t) in enumerate(tiles)])
    groups = trade_backs(geo, [[0, 1, 2], [3, 4, 5, 6]], shown.class_id)  # the 闷豆 shows one face, a 5m
    assert groups == ([[0, 1, 2, 3], [4, 5, 6]] if shift else [[0, 1, 2], [3, 4, 5, 6]])
