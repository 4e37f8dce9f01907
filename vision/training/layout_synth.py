"""Synthetic table layouts as :class:`Detections` with their ground truth (for the layout and reading tests).

A scene is built on the table plane in tile units (a tile is 1 wide along its row and ``TILE_ASPECT`` deep;
x to the right as the player sees it, y towards the player): the concealed hand (手牌) in one row, the melds
(碰 pong, 杠 kong, 闷豆 concealed kong with face-down tiles) beside it or in a second row, optionally the river
(牌河, discards in rows of six) beyond the hand and the flipped 翻鸡 indicator tile lying apart. Each tile's
four corners then go through the chosen noise (bending, perspective, rotation) and the detector sees the
axis-aligned box around them, as a real detector would.

Noise kinds, usable alone or together (``NOISE_KINDS``):

* ``jitter``: box edges move by a few % of a tile and tiles lie a little askew;
* ``rotation``: the photo is rotated by any angle;
* ``perspective``: the phone looks at the table 30–60° off vertical (far tiles are smaller and flatter);
* ``bend``: rows curve (tiles pushed by hand never lie on one line);
* ``gaps``: uneven gaps inside groups and narrow gaps between groups;
* ``drop``: one box is missing (missed detection);
* ``extra``: one spurious box (a duplicate of a tile or a false positive somewhere on the table);
* ``class``: one to three tiles get a look-alike as top-1 class, the true class stays in the top 3.

Kinds for what people lay down (``CASE_NOISE``, not part of the ``all`` mix so that its figures stay comparable):

* ``colour``: face-down tiles have a back of a colour the detector knows less well (green, blue, orange): each
  is named ``back`` with less confidence, or ``other`` with ``back`` second;
* ``duplicates``: a close-up: one to three tiles get a second, weaker box: their face alone, part of the face, or
  face and body together.

``generate`` makes one player's scene. ``facing_evidence`` draws where the faces of chosen boxes point, as the upright
probe (``vision/upright.py``) scores them on rendered photos. ``layout_mismatches`` and ``reading_mismatches``
compare a result with the truth. The generator is a pure function of its ``numpy.random.Generator``: the same seed gives the same scene.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scoring.tiles import TILES
from vision.classes import BACK, CLASS_NAMES, NUM_CLASSES, OTHER
from vision.detections import Detections, box_iou

NOISE_KINDS: tuple[str, ...] = ("jitter", "rotation", "perspective", "bend", "gaps", "drop", "extra", "class")
CASE_NOISE: tuple[str, ...] = ("colour", "duplicates")
TILE_ASPECT = 1.35  # depth / width of a tile lying face up (about 26 × 35 mm)
MELD_PLACES: tuple[str, ...] = ("right", "left", "below", "above")
FACE_DOWN_STYLES: tuple[str, ...] = ("backs4", "backs2", "backs3")  # 闷豆 shown with 4, 2 (outer) or 3 backs
# Also on request: "backs2side", two backs side by side and two faces (back-back-face-face, or the mirror).
# The upright probe's score of a tile (log-odds that its glyph's top points where it does, against the opposite way),
# measured on 605 tiles of 60 held-out-style turned photos (``python datasets/upright.py``): mean 1.405, standard
# deviation 1.577 (0.835 of the tiles scored the right way round).
FACING_MEAN, FACING_SPREAD = 1.4, 1.6


@dataclass
class TruthMeld:
    """A meld as laid: ``type`` (pong / kong / concealed_kong), its tile, its box indices left to right.

    ``shown`` is the tile a reader can see: ``None`` for a 闷豆 (concealed kong) with all four tiles face down.
    """

    type: str
    tile: str
    boxes: list[int]
    shown: str | None


@dataclass
class Truth:
    """What is on the table. Box indices refer to the scene's :class:`Detections`; -1 never appears."""

    concealed: list[int]  # concealed hand, left to right as the player sees it
    melds: list[TruthMeld]
    river: list[int]  # discards in reading order (row nearest the hand first, each row left to right)
    indicator: int | None  # the flipped 翻鸡 tile lying apart
    spurious: list[int]  # false-positive boxes (belong to nothing)
    tiles: list[str]  # true tile name per box ("back" for a face-down tile, "other" for a spurious box)
    face_down_tiles: dict[int, str]  # box → the tile hidden under a back
    win: bool  # 14-tile hand (concealed + 3 per meld) in a complete shape
    angle: float  # degrees the photo was rotated by (0 without rotation noise)
    turned: list[int] = field(default_factory=list)  # boxes of tiles lying sideways in their meld

    @property
    def concealed_tiles(self) -> list[str]:
        return [self.tiles[i] for i in self.concealed]

    @property
    def river_tiles(self) -> list[str]:
        return [self.tiles[i] for i in self.river]


@dataclass
class Scene:
    dets: Detections
    truth: Truth
    noise: tuple[str, ...]


@dataclass
class _Tile:
    """One tile on the table plane (tile units) before projection."""

    x: float
    y: float
    cls: int  # class shown to the detector (BACK for face down)
    true: str  # the tile itself
    turned: bool = False  # lying sideways (long side along the row)
    sideways: bool = False  # turned in its player's own frame (``turned`` is in the table's frame)
    role: str = "concealed"
    group: int = -1
    key: tuple[float, float] = (0.0, 0.0)  # (x, y) in the player's own frame, for reading order


@dataclass
class _World:
    tiles: list[_Tile] = field(default_factory=list)
    melds: list[tuple[str, str, list[int], str | None]] = field(default_factory=list)  # type, tile, tile idx, shown
    win: bool = False


# ------------------------------------------------------------------------------------------------ tiles


def _draw(rng: np.random.Generator, wall: np.ndarray, need: int = 1) -> int:
    """A tile index with at least ``need`` copies left in the wall (removed from it)."""
    choices = np.flatnonzero(wall >= need)
    t = int(rng.choice(choices))
    wall[t] -= need
    return t


def _complete_hand(rng: np.random.Generator, wall: np.ndarray, sets: int) -> list[int]:
    """``sets`` sets (runs or triplets) and one pair, or 七对 seven pairs when ``sets == 4`` sometimes."""
    if sets == 4 and rng.random() < 0.12:
        return [t for _ in range(7) for t in [_draw(rng, wall, 2)] * 2]
    out: list[int] = []
    for _ in range(sets):
        if rng.random() < 0.25:
            out += [_draw(rng, wall, 3)] * 3
            continue
        for _attempt in range(50):
            start = int(rng.integers(0, 3)) * 9 + int(rng.integers(0, 7))
            if all(wall[start + k] >= 1 for k in range(3)):
                wall[start:start + 3] -= 1
                out += [start, start + 1, start + 2]
                break
        else:
            out += [_draw(rng, wall, 3)] * 3
    out += [_draw(rng, wall, 2)] * 2
    return out


# ---------------------------------------------------------------------------------------------- placing


def _row(tiles: list[_Tile], x0: float, y: float, gaps: Sequence[float], direction: int = 1) -> float:
    """Place ``tiles`` in a row starting at edge ``x0`` (going right, or left if ``direction`` is -1).

    Each tile's width along the row is 1, or ``TILE_ASPECT`` when turned; ``gaps[k]`` is the gap before tile k+1.
    Returns the far edge of the row.
    """
    x = x0
    for k, t in enumerate(tiles):
        w = TILE_ASPECT if t.turned else 1.0
        t.x = x + direction * w / 2
        # a turned tile lies with its long side on the row's near edge
        t.y = y + ((TILE_ASPECT - 1.0) / 2 if t.turned else 0.0)
        x += direction * w
        if k < len(tiles) - 1:
            x += direction * gaps[k]
    return x


def _scene_world(rng: np.random.Generator, noisy_gaps: bool, *, melds: int | None, meld_types: Sequence[str] | None,
                 meld_place: str | None, face_down: str | None, turned: bool | None, win: bool | None,
                 river: int | bool | None, indicator: bool | None, river_gap: tuple[float, float] = (1.3, 2.5)) -> _World:
    """Lay out one player's tiles on the table plane (hand row at y = 0, river at negative y)."""
    wall = np.full(27, 4)
    world = _World()
    if meld_types is not None:
        kinds = list(meld_types)
    else:
        k = int(rng.choice(5, p=[0.3, 0.3, 0.2, 0.12, 0.08])) if melds is None else melds
        kinds = [str(x) for x in rng.choice(["pong", "kong", "concealed_kong"], size=k, p=[0.6, 0.15, 0.25])]
    win = bool(rng.random() < 0.6) if win is None else win
    world.win = win

    def intra(n: int) -> np.ndarray:
        return rng.uniform(0.0, 0.3 if noisy_gaps else 0.08, size=max(n - 1, 0))

    def inter() -> float:
        return float(rng.uniform(0.55, 1.2) if noisy_gaps else rng.uniform(0.75, 1.5))

    # melds
    meld_tiles: list[list[_Tile]] = []
    for kind in kinds:
        size = 3 if kind == "pong" else 4
        t = _draw(rng, wall, size)
        group = [_Tile(0, 0, t, TILES[t], role="meld", group=len(meld_tiles)) for _ in range(size)]
        shown: str | None = TILES[t]
        if kind == "concealed_kong":
            style = face_down or str(rng.choice(FACE_DOWN_STYLES, p=[0.4, 0.4, 0.2]))
            if style == "backs2side":
                down = [0, 1] if rng.random() < 0.5 else [2, 3]
            else:
                down = {"backs4": [0, 1, 2, 3], "backs2": [0, 3], "backs3": [0, 1, 2, 3]}[style]
            if style == "backs3":
                down.remove(int(rng.integers(0, 4)))
            for i in down:
                group[i].cls = BACK
            if style == "backs4":
                shown = None
        elif turned if turned is not None else rng.random() < 0.5:
            tile = group[int(rng.integers(0, size))]
            tile.turned = tile.sideways = True
        meld_tiles.append(group)
        world.melds.append((kind, TILES[t], [], shown))

    # concealed hand
    n_concealed = 13 - 3 * len(kinds) + (1 if win else 0)
    if win:
        hand = _complete_hand(rng, wall, 4 - len(kinds))
    else:
        hand = [_draw(rng, wall) for _ in range(n_concealed)]
    order = sorted(hand)
    apart = win and rng.random() < 0.35
    if apart:  # the winning tile set a little apart at the right end
        order.remove(hand[-1])
        order.append(hand[-1])
    concealed = [_Tile(0, 0, t, TILES[t]) for t in order]
    gaps = intra(len(concealed))
    if apart and len(gaps):
        gaps[-1] = rng.uniform(0.3, 0.9)
    right = _row(concealed, 0.0, 0.0, gaps)

    place = meld_place or str(rng.choice(MELD_PLACES, p=[0.4, 0.2, 0.2, 0.2]))
    if meld_tiles:
        if place in ("right", "left"):
            edge, direction = (right, 1) if place == "right" else (0.0, -1)
            y = 0.0
        else:
            depth = TILE_ASPECT * (1 + rng.uniform(0.15, 0.6))
            y = depth if place == "below" else -depth
            edge, direction = (0.0, 1) if rng.random() < 0.5 else (right, -1)
            edge -= direction * inter()  # the first meld starts anywhere near the hand's end
        for group in meld_tiles if direction == 1 else meld_tiles[::-1]:
            edge += direction * inter()
            edge = _row(group if direction == 1 else group[::-1], edge, y, intra(len(group)), direction)

    tiles = concealed + [t for g in meld_tiles for t in g]
    hand_top = min(t.y for t in tiles) - TILE_ASPECT / 2
    hand_x = (min(t.x for t in tiles) + max(t.x for t in tiles)) / 2

    # river: rows of six beyond the hand, row 0 nearest the hand
    n_river = int(rng.integers(1, 21)) if (river is None and rng.random() < 0.6) or river is True else int(river or 0)
    river_tiles: list[_Tile] = []
    if n_river:
        y0 = hand_top - TILE_ASPECT * rng.uniform(*river_gap) - TILE_ASPECT / 2
        x0 = hand_x - 3.2 + rng.uniform(-2.0, 2.0)
        for r in range(0, n_river, 6):
            row = [_Tile(0, 0, t, TILES[t], role="river") for t in (_draw(rng, wall) for _ in range(min(6, n_river - r)))]
            _row(row, x0, y0 - (r // 6) * TILE_ASPECT * (1 + rng.uniform(0.02, 0.1)), intra(len(row)))
            river_tiles += row
    tiles += river_tiles

    if indicator if indicator is not None else rng.random() < 0.3:
        t = _draw(rng, wall)
        xs = [tt.x for tt in tiles]
        ys = [tt.y for tt in tiles]
        side = 1 if rng.random() < 0.5 else -1
        x = (max(xs) if side == 1 else min(xs)) + side * rng.uniform(3.5, 5.0)  # 2.5 tiles apart or more
        tiles.append(_Tile(x, float(rng.uniform(min(ys), max(ys))), t, TILES[t], role="indicator"))

    world.tiles = tiles
    for t in tiles:
        t.key = (t.x, t.y)
    position = {id(t): k for k, t in enumerate(tiles)}
    for g, group in enumerate(meld_tiles):
        kind, tile, _, shown = world.melds[g]
        world.melds[g] = (kind, tile, [position[id(t)] for t in group], shown)
    return world


# ------------------------------------------------------------------------------------------- projecting


def _corners(tiles: list[_Tile], rng: np.random.Generator, askew: float) -> np.ndarray:
    """(M, 4, 2) tile corners on the table plane; each tile turned by up to ``askew`` degrees."""
    out = np.empty((len(tiles), 4, 2))
    for k, t in enumerate(tiles):
        w, d = (TILE_ASPECT, 1.0) if t.turned else (1.0, TILE_ASPECT)
        a = np.deg2rad(rng.uniform(-askew, askew)) if askew else 0.0
        c, s = np.cos(a), np.sin(a)
        local = np.array([[-w, -d], [w, -d], [w, d], [-w, d]]) / 2
        out[k] = local @ np.array([[c, s], [-s, c]]) + (t.x, t.y)
    return out


def _bend(pts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Curve rows: y += k (x - xc)², the ends of the layout move by 0.3–0.9 of a tile depth either way, plus a
    slight slant that differs from row to row (rows pushed by hand are neither straight nor parallel)."""
    xc = (pts[..., 0].min() + pts[..., 0].max()) / 2
    half = max((pts[..., 0].max() - pts[..., 0].min()) / 2, 1.0)
    k = rng.uniform(0.3, 0.9) * TILE_ASPECT / half**2 * rng.choice([-1, 1])
    row = np.round(pts[..., 1].mean(axis=-1, keepdims=True) / TILE_ASPECT)  # per tile, from its centre
    slant = rng.uniform(-0.06, 0.06) + rng.uniform(-0.03, 0.03) * row
    out = pts.copy()
    out[..., 1] += k * (pts[..., 0] - xc) ** 2 + slant * (pts[..., 0] - xc)
    return out


def _perspective(pts: np.ndarray, rng: np.random.Generator, tilt: float | None = None) -> np.ndarray:
    """A pinhole camera looking at the layout centre, tilted 30–60° off vertical from the player's side."""
    centre = (pts.reshape(-1, 2).min(0) + pts.reshape(-1, 2).max(0)) / 2
    p = pts - centre
    yaw = np.deg2rad(rng.uniform(-15, 15))
    c, s = np.cos(yaw), np.sin(yaw)
    p = p @ np.array([[c, s], [-s, c]])
    t = np.deg2rad(tilt if tilt is not None else rng.uniform(30, 60))
    extent = np.abs(p).max()
    dist = extent * rng.uniform(1.6, 2.6)
    depth = dist - p[..., 1] * np.sin(t)
    return np.stack([dist * p[..., 0] / depth, dist * p[..., 1] * np.cos(t) / depth], axis=-1)


def _rotate(pts: np.ndarray, degrees: float) -> np.ndarray:
    a = np.deg2rad(degrees)
    c, s = np.cos(a), np.sin(a)
    return pts @ np.array([[c, s], [-s, c]])  # image y points down: positive degrees turn clockwise on screen


# ------------------------------------------------------------------------------------------------- scores


def look_alikes(cls: int) -> list[int]:
    """Tiles a detector plausibly confuses with tile ``cls``: neighbouring ranks of its suit, same rank elsewhere."""
    if cls >= 27:
        return [OTHER if cls == BACK else BACK]
    suit, rank = divmod(cls, 9)
    near = [suit * 9 + r for r in (rank - 1, rank + 1) if 0 <= r < 9]
    far = [suit * 9 + r for r in (rank - 2, rank + 2) if 0 <= r < 9] + [s * 9 + rank for s in range(3) if s != suit]
    return near + near + far  # the near ranks twice: twice as likely


def _scores(rng: np.random.Generator, true_cls: np.ndarray, noisy: set[int]) -> tuple[np.ndarray, np.ndarray]:
    """Top-3 classes and probabilities per box; boxes in ``noisy`` get a look-alike as top-1."""
    n = len(true_cls)
    top_c = np.zeros((n, 3), dtype=np.int64)
    top_p = np.zeros((n, 3))
    for i, c in enumerate(true_cls):
        alts = [a for a in dict.fromkeys(look_alikes(int(c)) + [int(x) for x in rng.permutation(NUM_CLASSES)])
                if a != c]
        if i in noisy:
            wrong = int(rng.choice([a for a in look_alikes(int(c)) if a != c]))
            others = [a for a in alts if a != wrong]
            p1 = rng.uniform(0.4, 0.72)
            if rng.random() < 0.8:
                p2 = rng.uniform(0.18, min(p1 - 0.05, 0.98 - p1))
                classes, probs = [wrong, c, others[0]], [p1, p2, (1 - p1 - p2) * rng.uniform(0.2, 0.9)]
            else:
                p2 = rng.uniform(0.12, min(p1 - 0.05, (1 - p1) * 0.6))
                p3 = rng.uniform(0.06, min(p2 - 0.01, 1 - p1 - p2))
                classes, probs = [wrong, others[0], c], [p1, p2, p3]
        else:
            p1 = rng.uniform(0.85, 0.995)
            p2 = (1 - p1) * rng.uniform(0.4, 0.9)
            classes, probs = [c, alts[0], alts[1]], [p1, p2, (1 - p1 - p2) * rng.uniform(0.3, 0.9)]
        top_c[i], top_p[i] = classes, probs
    return top_c, top_p


# ------------------------------------------------------------------------------------------------ scenes


def _to_image(corners: np.ndarray, rng: np.random.Generator, noise: set[str],
              angle: float) -> tuple[np.ndarray, tuple[int, int], float]:
    """Project tile corners to pixels; returns (boxes xyxy, image size, tile width in px)."""
    pts = corners
    if "bend" in noise:
        pts = _bend(pts, rng)
    if "perspective" in noise:
        pts = _perspective(pts, rng)
    pts = _rotate(pts, angle)
    scale = rng.uniform(30, 80)
    pts = pts * scale
    boxes = np.concatenate([pts.min(axis=1), pts.max(axis=1)], axis=1)
    if "jitter" in noise:
        size = np.sqrt((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]))[:, None]
        boxes = boxes + rng.normal(0, 0.035, size=boxes.shape) * size
    margin = scale * rng.uniform(0.8, 2.5, size=2)
    boxes[:, 0::2] += margin[0] - boxes[:, 0::2].min()
    boxes[:, 1::2] += margin[1] - boxes[:, 1::2].min()
    size = (int(np.ceil(boxes[:, 2].max() + margin[0])), int(np.ceil(boxes[:, 3].max() + margin[1])))
    return boxes, size, scale


def _extra_box(rng: np.random.Generator, boxes: np.ndarray, image_size: tuple[int, int]) -> np.ndarray:
    """A spurious box: a shifted duplicate of a tile (IoU ≥ 0.55), or a tile-sized box on empty table."""
    w = np.median(boxes[:, 2] - boxes[:, 0])
    h = np.median(boxes[:, 3] - boxes[:, 1])
    if rng.random() < 0.5:
        b = boxes[int(rng.integers(len(boxes)))].copy()
        bw, bh = b[2] - b[0], b[3] - b[1]
        shift = rng.uniform(-0.12, 0.12, size=2) * (bw, bh)
        return b + np.array([shift[0], shift[1], shift[0], shift[1]])
    for _ in range(200):
        s = rng.uniform(0.7, 1.3)
        x = rng.uniform(0, image_size[0] - w * s)
        y = rng.uniform(0, image_size[1] - h * s)
        b = np.array([x, y, x + w * s, y + h * s])
        if box_iou(b[None], boxes).max() < 0.05:
            return b
    return b


def _finish(rng: np.random.Generator, tiles: list[_Tile], boxes: np.ndarray, image_size: tuple[int, int],
            noise: set[str]) -> tuple[Detections, list[int], list[str], list[int]]:
    """Drop / add a box, score classes, shuffle. Returns (dets, new index per tile or -1, true names, spurious)."""
    n = len(tiles)
    keep = np.ones(n, dtype=bool)
    if "drop" in noise and n > 1:
        keep[int(rng.integers(n))] = False
    kept = np.flatnonzero(keep)
    xyxy = boxes[kept]
    true_cls = np.array([tiles[k].cls for k in kept])
    names = [CLASS_NAMES[tiles[k].cls] for k in kept]
    spurious_pos: list[int] = []
    if "extra" in noise and len(xyxy):
        xyxy = np.vstack([xyxy, _extra_box(rng, xyxy, image_size)])
        true_cls = np.append(true_cls, OTHER)
        names.append("other")
        spurious_pos.append(len(xyxy) - 1)
    faces = [i for i in range(len(true_cls)) if true_cls[i] < 27]
    noisy: set[int] = set()
    if "class" in noise and faces:
        k = min(len(faces), int(rng.integers(1, 4)))
        noisy = {int(i) for i in rng.choice(faces, size=k, replace=False)}
    top_c, top_p = _scores(rng, true_cls, noisy)
    if "colour" in noise:
        _colour_backs(rng, true_cls, top_c, top_p)
    conf = top_p[:, 0].copy()
    for i in spurious_pos:  # a false positive: a random class with middling confidence
        top_c[i] = rng.choice(NUM_CLASSES, size=3, replace=False)
        top_p[i] = np.sort(rng.dirichlet([2, 1, 1]))[::-1] * 0.9
        conf[i] = rng.uniform(0.25, 0.55)
    if "duplicates" in noise and faces:
        picked = rng.choice(faces, size=min(len(faces), int(rng.integers(1, 4))), replace=False)
        first = len(xyxy)
        xyxy = np.vstack([xyxy, _duplicate_boxes(rng, xyxy[picked])])
        top_c, top_p = np.vstack([top_c, top_c[picked]]), np.vstack([top_p, top_p[picked]])
        conf = np.append(conf, conf[picked] * rng.uniform(0.5, 1.0, size=len(picked)))  # named like the tile
        names += ["other"] * len(picked)
        spurious_pos += list(range(first, len(xyxy)))
    perm = rng.permutation(len(xyxy))  # detectors return boxes in no particular order
    inv = np.empty_like(perm)
    inv[perm] = np.arange(len(perm))
    dets = Detections(xyxy[perm], conf[perm], top_c[perm, 0], top_c[perm], top_p[perm], image_size)
    new_index = np.full(n, -1)
    new_index[kept] = inv[np.arange(len(kept))]
    return dets, [int(v) for v in new_index], [names[j] for j in perm], [int(inv[i]) for i in spurious_pos]


def _colour_backs(rng: np.random.Generator, true_cls: np.ndarray, top_c: np.ndarray, top_p: np.ndarray) -> None:
    """Face-down tiles with a back of an unfamiliar colour: ``back`` at 0.35–0.7, or ``other`` first and ``back``
    second (in place)."""
    for i in np.flatnonzero(true_cls == BACK):
        p1 = rng.uniform(0.35, 0.7)
        p2 = rng.uniform(0.2, min(p1, 1 - p1) - 0.02)
        first, second = (OTHER, BACK) if rng.random() < 0.5 else (BACK, OTHER)
        top_c[i] = [first, second, int(rng.integers(27))]
        top_p[i] = [p1, p2, (1 - p1 - p2) * rng.uniform(0.2, 0.9)]


def _duplicate_boxes(rng: np.random.Generator, boxes: np.ndarray) -> np.ndarray:
    """Second boxes on tiles of a close-up, each inside its tile's box or around it: the face alone (the box shrunk
    by 12–25% a side: IoU 0.25–0.58), the upper or lower part of the face (55–70% of its height), or the tile with
    its body (the box grown by 50–100% downwards)."""
    out = boxes.copy()
    for row in out:
        w, h = row[2] - row[0], row[3] - row[1]
        kind = rng.integers(3)
        if kind == 0:
            row += np.array([w, h, -w, -h]) * rng.uniform(0.12, 0.25, size=4)
        elif kind == 1:
            part = h * rng.uniform(0.55, 0.7)
            if rng.random() < 0.5:
                row[3] = row[1] + part
            else:
                row[1] = row[3] - part
        else:
            row[3] += h * rng.uniform(0.5, 1.0)
    return out


def _truth(world: _World, tiles: list[_Tile], offset: int, new_index: list[int], names: list[str],
           spurious: list[int], angle: float) -> Truth:
    """Ground truth of one player's tiles (``tiles[offset:]`` of the scene belong to ``world``)."""
    def idx(tile_list: list[int]) -> list[int]:
        return [new_index[offset + k] for k in tile_list if new_index[offset + k] >= 0]

    local = world.tiles
    concealed = sorted((k for k, t in enumerate(local) if t.role == "concealed"), key=lambda k: local[k].key[0])
    river = sorted((k for k, t in enumerate(local) if t.role == "river"),
                   key=lambda k: (-local[k].key[1], local[k].key[0]))
    ind = [k for k, t in enumerate(local) if t.role == "indicator"]
    melds = [TruthMeld(kind, tile, idx(sorted(ks, key=lambda k: local[k].key[0])), shown)
             for kind, tile, ks, shown in world.melds]
    indicator = idx(ind)
    face_down = {new_index[offset + k]: t.true for k, t in enumerate(local)
                 if t.cls == BACK and new_index[offset + k] >= 0}
    turned = idx([k for k, t in enumerate(local) if t.sideways])
    return Truth(idx(concealed), melds, idx(river), indicator[0] if indicator else None, spurious, names,
                 face_down, world.win, angle, turned)


def generate(rng: np.random.Generator, noise: Sequence[str] = (), *, melds: int | None = None,
             meld_types: Sequence[str] | None = None, meld_place: str | None = None, face_down: str | None = None,
             turned: bool | None = None, win: bool | None = None, river: int | bool | None = None,
             indicator: bool | None = None, angle: float | None = None) -> Scene:
    """One player's tiles as detections plus the truth.

    ``noise``: any of :data:`NOISE_KINDS`. Keyword arguments pin a feature instead of drawing it: ``melds``
    (how many), ``meld_types`` (e.g. ``["pong", "concealed_kong"]``), ``meld_place`` (right / left / below /
    above), ``face_down`` (how a 闷豆 shows: backs4 / backs2 / backs3), ``turned`` (a sideways tile in open
    melds), ``win`` (14 tiles in a complete shape), ``river`` (number of discards, or True / False),
    ``indicator`` (a 翻鸡 tile apart), ``angle`` (rotate the photo by this many degrees).
    """
    unknown = set(noise) - set(NOISE_KINDS) - set(CASE_NOISE)
    if unknown:
        raise ValueError(f"unknown noise kinds {sorted(unknown)}; use any of {', '.join(NOISE_KINDS + CASE_NOISE)}")
    noise_set = set(noise)
    world = _scene_world(rng, "gaps" in noise_set, melds=melds, meld_types=meld_types, meld_place=meld_place,
                         face_down=face_down, turned=turned, win=win, river=river, indicator=indicator)
    if angle is None:
        angle = float(rng.uniform(0, 360)) if "rotation" in noise_set else float(rng.uniform(-3, 3))
    corners = _corners(world.tiles, rng, 4.0 if "jitter" in noise_set else 1.0)
    boxes, size, _ = _to_image(corners, rng, noise_set, angle)
    dets, new_index, names, spurious = _finish(rng, world.tiles, boxes, size, noise_set)
    return Scene(dets, _truth(world, world.tiles, 0, new_index, names, spurious, angle), tuple(noise))


def facing_evidence(rng: np.random.Generator, truth: Truth, boxes: Sequence[int]) -> np.ndarray:
    """(len(boxes), 2) where each box's face points (image axes), drawn as the upright probe scores real crops:
    along the glyph's top ``N(FACING_MEAN, FACING_SPREAD)``, across it ``N(0, FACING_SPREAD)``. The top points
    away from the player (the photo's up turned by ``truth.angle``), a quarter turn off for a sideways tile; a
    spurious box has no top (both parts centred on 0)."""
    a = np.deg2rad(truth.angle)
    up = np.array([np.sin(a), -np.cos(a)])
    right = np.array([np.cos(a), np.sin(a)])
    out = np.zeros((len(boxes), 2))
    for i, b in enumerate(boxes):
        top, side = (right, up) if b in truth.turned else (up, right)
        mean = 0.0 if b in truth.spurious else FACING_MEAN
        out[i] = rng.normal(mean, FACING_SPREAD) * top + rng.normal(0.0, FACING_SPREAD) * side
    return out


# ----------------------------------------------------------------------------------------------- scoring


def layout_mismatches(truth: Truth, lay: Any) -> list[str]:
    """Where a :class:`vision.layout.Layout` differs from the truth, as short tags (empty: grouping exact).

    Grouping compares box sets per role (concealed, each meld, river, indicator); ``order`` (concealed and river
    order) is reported as its own tag, since a photo without a river or perspective cannot tell which side the
    player sits on.
    """
    tags = []
    if {t.box for t in lay.concealed} != set(truth.concealed):
        tags.append("concealed")
    if sorted(sorted(m.boxes) for m in lay.melds) != sorted(sorted(m.boxes) for m in truth.melds):
        tags.append("melds")
    if {t.box for t in lay.river} != set(truth.river):
        tags.append("river")
    if (lay.indicator.box if lay.indicator else None) != truth.indicator:
        tags.append("indicator")
    if ([t.box for t in lay.concealed] != truth.concealed or [t.box for t in lay.river] != truth.river) and not tags:
        tags.append("order")
    return tags


def reading_mismatches(truth: Truth, reading: Any) -> list[str]:
    """Where a :class:`vision.reading.Reading` differs from the truth (empty: the hand is read exactly).

    The hand is the concealed tiles (as MPSZ) and the melds (type and tile; ``None`` for a 闷豆 shown with
    four backs, which no photo can identify)."""
    from scoring.tiles import to_mpsz

    tags = []
    if reading.concealed != to_mpsz(truth.concealed_tiles):
        tags.append("concealed")
    want = sorted((m.type, m.shown or "") for m in truth.melds)
    got = sorted((m.type, m.tile or "") for m in reading.melds)
    if want != got:
        tags.append("melds")
    return tags
