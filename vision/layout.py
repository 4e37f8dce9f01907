"""Layout: one photo's detections → what lies on the table (手牌 concealed hand, 副露 melds, 牌河 river, 翻鸡 tile).

The stage works on box geometry only; it reads a box's class just to tell melds (three or four of one tile, or
face-down backs) from the concealed hand. No pixel constant appears: every length is measured in the local
tile size, estimated from the boxes themselves.

Stages, each a small function over plain arrays:

1. ``_screen``: drop broken boxes and near-duplicates (two boxes on one tile).
2. ``_row_frame``: the row direction from nearest-neighbour vectors (doubled-angle histogram, mod 180°), or
   the direction across it if more tiles chain up that way; ``_geometry`` puts the box centres in the row
   frame (u along the row, v across it) with the local tile width and depth (perspective makes far tiles
   smaller) and spots sideways (turned) tiles. ``_tile_pieces`` then drops the weaker of two boxes that are
   pieces of one tile (a face split by a gap, boxed in two parts) and the frame is measured again.
3. ``_chains``: tiles of a group touch: link each box to its nearest neighbour on either side along the row
   when the gap is under half a tile; mutual links make chains, so bent rows need no line fit.
   ``_split_meld_ends`` cuts melds off a chain they share with the hand (backs, sideways tiles, a gap that
   stands out); ``_join_meld_pieces`` mends a meld broken by a missed box.
4. ``_rows`` / ``_blocks``: groups on one line form a row (up to a few tile widths apart); rows close across
   form a block (hand row + meld row; the river's rows).
5. ``_assign``: the hand block, its concealed groups and its melds (the count rule concealed + 3 per meld
   = 13 or 14 settles doubtful cases), the river block, the indicator, the rest unassigned with a reason.
6. ``_orient``: the river lies beyond the hand (farther from the player); without a river, the faces of the
   hand point away from the player when the detections carry that evidence (``Detections.facing``, from
   ``vision.upright``, for rows running up or down the photo); then perspective (far tiles are smaller)
   decides; else the photo is taken to be upright.
7. ``_build``: the :class:`Layout`, in reading order, with a confidence per part.

``layout(dets)`` returns a :class:`Layout`; ``layout(dets, mode="table")`` a list of four, one per seat.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal, overload

import numpy as np

from vision.classes import BACK, CLASS_NAMES, OTHER
from vision.detections import Detections, box_intersection, box_iou

# All lengths below are in local tile units: along a row in tile widths, across it in tile depths.
GAP_SPLIT = 0.5  # a gap wider than half a tile ends a group (tiles of a group touch)
ROW_TOLERANCE = 0.45  # neighbours in one row are offset across it by under half a tile depth
ROW_REACH = 2.4  # groups on one line up to 2.4 tiles apart form a row (hand, drawn tile, melds)
BLOCK_REACH = 1.9  # rows under 1.9 depths apart (centre to centre) form a block: hand + meld row, river rows
HOLE_GAP = 0.85  # an edge gap of about one tile (or more) inside the concealed row: a missed tile
HAND_REACH = 1.9  # concealed pieces of one row further apart (in tiles) are not one hand (one missed tile at most)
DUPLICATE_IOU = 0.45  # tiles on a table overlap less than this even rotated by 45°; more is two boxes on one
CONTAINED = 0.8  # a box this much inside another is a second box on one tile (its face alone, or face + body)
BACK_AS_OTHER = 0.15  # a box named `other` with `back` at least this probable in its top 3 is a face-down tile
PIECE_SPAN = 1.15  # two short boxes stacked across the row that together span at most this many depths are one tile
TILE_GAP = 0.04  # typical gap between touching tiles, in tile widths (used when few row neighbours are seen)
TILE_ASPECT = 1.35  # a tile's length / its width (about 35 × 26 mm)
MELD_DOUBT = 3.5  # a group whose tiles are one tile at under e^-3.5 the odds of their top-1 is no meld
LONE_MIN_CONFIDENCE = 0.5  # a lone box weaker than this is more likely a false detection than a tile
LONE_SIZE_TOLERANCE = 0.35  # log size difference to the tiles around (≈ ±40%) a lone tile may show
FACING_SURE = 2.0  # the hand's faces decide its orientation when their summed log-odds reach this
LEGAL_COUNTS = (13, 14)  # concealed + 3 per meld: waiting, or holding the winning tile


# ------------------------------------------------------------------------------------------- data types


@dataclass(frozen=True)
class PlacedTile:
    """One box in a group: its index into the :class:`Detections`, the detector's top-1 class name, and
    whether it lies sideways (turned 90°, e.g. the claimed tile of a 碰 pong)."""

    box: int
    tile: str
    turned: bool = False

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"box": self.box, "tile": self.tile}
        if self.turned:
            d["turned"] = True
        return d


@dataclass
class MeldGroup:
    """A meld as laid: ``type`` pong (碰) / kong (杠, exposed or added) / concealed_kong (闷豆).

    ``tile`` is the tile the group shows (``None`` when every tile lies face down: an unidentified 闷豆);
    ``missing`` counts tiles of the meld without a box (a pong seen as two tiles has ``missing=1``).
    """

    type: str
    tile: str | None
    tiles: list[PlacedTile]
    missing: int = 0
    confidence: float = 1.0

    @property
    def boxes(self) -> list[int]:
        return [t.box for t in self.tiles]

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "tile": self.tile, "tiles": [t.to_json() for t in self.tiles],
                "missing": self.missing, "confidence": round(self.confidence, 3)}


@dataclass(frozen=True)
class Unassigned:
    """A box that belongs to no group, and why."""

    box: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"box": self.box, "reason": self.reason}


@dataclass
class Layout:
    """What lies on the table in front of one player.

    concealed: the 手牌 concealed hand, left to right as the player sees it (the drawn tile, if set apart, last).
    melds: 碰/杠/闷豆 groups. river: 牌河 discards in reading order (row nearest the hand first, each row left
    to right). indicator: the flipped 翻鸡 tile lying apart. unassigned: boxes in no group, with a reason.
    tile_size: (width along the row, depth across it) in pixels, median over boxes. angle: direction of the
    rows in degrees, image axes (x right, y down; clockwise positive), pointing left to right for the player.
    holes: tile-sized gaps inside the concealed row (a tile the detector probably missed).
    confidence: per part, 0..1 ("concealed": its gaps clear and its count legal; "river": well apart from the
    hand; "indicator": the only lone tile; "orientation": 1 from the river, 0.9 from the faces, 0.8 from
    perspective, 0.5 assumed upright; "hand": 0.5 when two blocks of rows could each be the hand); each meld has its own.
    notes: human-readable doubts found while grouping.
    """

    concealed: list[PlacedTile] = field(default_factory=list)
    melds: list[MeldGroup] = field(default_factory=list)
    river: list[PlacedTile] = field(default_factory=list)
    indicator: PlacedTile | None = None
    unassigned: list[Unassigned] = field(default_factory=list)
    tile_size: tuple[float, float] = (0.0, 0.0)
    angle: float = 0.0
    holes: int = 0
    confidence: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seat: int | None = None

    @property
    def count(self) -> int:
        """Concealed tiles (with holes) + 3 per meld: 13 while waiting, 14 with the winning tile."""
        return len(self.concealed) + self.holes + 3 * len(self.melds)

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "concealed": [t.to_json() for t in self.concealed],
            "melds": [m.to_json() for m in self.melds],
            "river": [t.to_json() for t in self.river],
            "indicator": self.indicator.to_json() if self.indicator else None,
            "unassigned": [u.to_json() for u in self.unassigned],
            "tile_size": [round(self.tile_size[0], 1), round(self.tile_size[1], 1)],
            "angle": round(self.angle, 1),
            "holes": self.holes,
            "confidence": {k: round(v, 3) for k, v in self.confidence.items()},
            "notes": list(self.notes),
        }


# ------------------------------------------------------------------------------------------ entry points


@overload
def layout(dets: Detections, mode: Literal["hand"] = "hand") -> Layout: ...
@overload
def layout(dets: Detections, mode: Literal["table"]) -> list[Layout]: ...


def layout(dets: Detections, mode: str = "hand") -> Layout | list[Layout]:
    """Group one photo's detections. ``mode="hand"``: one player's tiles → :class:`Layout`.
    ``mode="table"``: four players around a table → four layouts, seat 0 nearest the bottom of the photo, then
    counter-clockwise (1 right, 2 top, 3 left) as play goes in 捉鸡."""
    if mode == "hand":
        return layout_hand(dets)
    if mode == "table":
        return layout_table(dets)
    raise ValueError(f"layout mode must be 'hand' or 'table', not {mode!r}")


def layout_hand(dets: Detections, subset: np.ndarray | None = None, *, angle: float | None = None) -> Layout:
    """One player's layout from ``dets`` (or the boxes ``subset`` of it).

    ``angle`` (radians) fixes the row direction and its orientation (left to right for the player) instead of
    estimating them, as table mode does per seat.
    """
    subset = np.arange(len(dets)) if subset is None else np.asarray(subset, dtype=int)
    kept, unassigned = _screen(dets, subset)
    out = Layout(unassigned=unassigned)
    if len(kept) == 0:
        out.notes.append("no boxes")
        return out
    fixed = angle is not None
    xyxy = dets.xyxy[kept].astype(np.float64)
    geo, chains = _frame(xyxy, angle)
    pieces = _tile_pieces(geo, xyxy, dets.confidence[kept])
    if pieces:
        out.unassigned += [Unassigned(int(kept[w]), f"a piece of the tile of box {int(kept[k])} (one tile boxed "
                                                    "in two parts)") for w, k in pieces]
        kept = np.delete(kept, [w for w, _ in pieces])
        geo, chains = _frame(dets.xyxy[kept].astype(np.float64), angle)
    shown = _shown_classes(dets, kept)
    groups = _split_meld_ends(geo, chains, shown, dets.top3_class[kept], dets.top3_prob[kept])
    rows = _rows(geo, groups)
    groups, rows = _join_meld_pieces(geo, groups, rows, shown, dets.top3_class[kept],
                                     dets.top3_prob[kept])
    blocks = _blocks(geo, groups, rows)
    parts = _assign(geo, dets, kept, groups, rows, blocks)
    if not fixed:
        _orient(geo, groups, rows, parts, None if dets.facing is None else dets.facing[kept])
    return _build(dets, kept, geo, groups, rows, parts, out)


def layout_table(dets: Detections) -> list[Layout]:
    """Four seats around the table centre. Each seat's rows run along its table edge, its river towards the
    centre; boxes go to the seat whose side of the table they lie on, whole rows kept together. Broken boxes
    are reported as unassigned in seat 0's layout."""
    if len(dets) == 0:
        return [Layout(seat=s, notes=["no boxes"]) for s in range(4)]
    xyxy_all = dets.xyxy.astype(np.float64)
    valid = np.flatnonzero(np.isfinite(xyxy_all).all(1) & (xyxy_all[:, 2] - xyxy_all[:, 0] >= 1)
                           & (xyxy_all[:, 3] - xyxy_all[:, 1] >= 1))
    seat = np.zeros(len(dets), dtype=int)
    phi = 0.0
    if len(valid):
        phi = _table_angle(xyxy_all[valid])  # the table's axes, mod 90°, chosen near the image axes
        seat[valid] = _seats(xyxy_all[valid], phi)
    out = []
    for s in range(4):
        members = np.flatnonzero(seat == s)
        own = np.intersect1d(members, valid)
        lay = (layout_hand(dets, members, angle=_seat_angle(xyxy_all[own], phi - s * math.pi / 2))
               if len(members) else Layout(notes=["no boxes"]))
        lay.seat = s
        out.append(lay)
    return out


def _seats(xyxy: np.ndarray, phi: float) -> np.ndarray:
    """Seat 0..3 of every box: the side of the table centre it lies on (table axes at ``phi``)."""
    n = len(xyxy)
    centres = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    centre = (centres.min(0) + centres.max(0)) / 2
    rel = centres - centre
    x = rel[:, 0] * math.cos(phi) + rel[:, 1] * math.sin(phi)
    y = -rel[:, 0] * math.sin(phi) + rel[:, 1] * math.cos(phi)
    sector = np.where(np.abs(y) >= np.abs(x), np.where(y > 0, 0, 2), np.where(x > 0, 1, 3))
    seat = sector.copy()
    # Hands and rivers reach past the table's diagonals: a row goes whole to the side most of it lies on
    # (longest rows first; a row must run along its side: seats 0/2 horizontally, 1/3 vertically).
    rows: list[tuple[list[int], tuple[int, int]]] = []
    for axis_seats, ang in (((0, 2), phi), ((1, 3), phi - math.pi / 2)):
        rows += [(chain, axis_seats) for chain in _chains(_geometry(xyxy, ang)) if len(chain) >= 2]
    placed = np.zeros(n, dtype=bool)
    size = float(np.median(np.sqrt((xyxy[:, 2] - xyxy[:, 0]) * (xyxy[:, 3] - xyxy[:, 1]))))

    def nearest_placed(members: list[int], seats: tuple[int, ...]) -> int | None:
        """The seat (of ``seats``) with a placed tile within two tile sizes of ``members``, nearest first."""
        anchors = np.flatnonzero(placed & np.isin(seat, seats))
        if not len(anchors):
            return None
        d = np.hypot(centres[members, None, 0] - centres[None, anchors, 0],
                     centres[members, None, 1] - centres[None, anchors, 1])
        return int(seat[anchors[np.argmin(d.min(0))]]) if d.min() <= 2.0 * size else None

    for chain, axis_seats in sorted(rows, key=lambda ca: -len(ca[0])):
        free = [k for k in chain if not placed[k]]
        if not free:
            continue
        # Votes: placed tiles by their seat (a chain across a river's touching rows is not a row), others by side.
        best, count = Counter(int(seat[k] if placed[k] else sector[k]) for k in chain).most_common(1)[0]
        if not (best in axis_seats and count * 2 > len(chain)):
            # e.g. the first tiles of a river's last row, past the diagonal: they join the river they run along
            best = nearest_placed(free, axis_seats) if len(chain) < 3 else None
        if best is not None:
            seat[free] = best
            placed[free] = True
    for k in np.flatnonzero(~placed):  # a lone tile goes with the nearest placed tile, if one is close
        near = nearest_placed([int(k)], (0, 1, 2, 3))
        if near is not None:
            seat[k] = near
    return seat


# ------------------------------------------------------------------------------------------------ stages


def _screen(dets: Detections, subset: np.ndarray) -> tuple[np.ndarray, list[Unassigned]]:
    """Boxes fit for grouping; broken boxes and the weaker of two boxes on one tile are unassigned."""
    xyxy = dets.xyxy[subset].astype(np.float64)
    ok = np.isfinite(xyxy).all(1) & (xyxy[:, 2] - xyxy[:, 0] >= 1) & (xyxy[:, 3] - xyxy[:, 1] >= 1)
    unassigned = [Unassigned(int(b), "invalid box (under a pixel, or not finite)") for b in subset[~ok]]
    idx = subset[ok]
    xyxy = xyxy[ok]
    if len(idx) < 2:
        return idx, unassigned
    iou = box_iou(xyxy, xyxy)
    np.fill_diagonal(iou, 0)
    # Close-ups: the detector may box one tile's face and the whole tile (face and body) apart; the smaller lies
    # inside the larger, whatever their IoU.
    area = np.prod(xyxy[:, 2:] - xyxy[:, :2], 1)
    inside = box_intersection(xyxy, xyxy) / np.maximum(np.minimum(area[:, None], area[None, :]), 1e-9)
    np.fill_diagonal(inside, 0)
    order = np.argsort(-dets.confidence[idx], kind="stable")
    keep = np.ones(len(idx), dtype=bool)
    for k in order:  # greedy, strongest first, like non-maximum suppression
        if not keep[k]:
            continue
        dup = ((iou[k] > DUPLICATE_IOU) | (inside[k] > CONTAINED)) & keep
        dup[k] = False
        for j in np.flatnonzero(dup):
            keep[j] = False
            unassigned.append(Unassigned(int(idx[j]), f"overlaps box {int(idx[k])} (two boxes on one tile)"))
    return idx[keep], unassigned


def _shown_classes(dets: Detections, kept: np.ndarray) -> np.ndarray:
    """Each kept box's top-1 class, a doubtful `other` read as `back` when `back` is in its top 3: backs come in
    many colours (green, blue, yellow, orange, white), and one the detector knows less well can look to it like
    no tile of the set; a face-down tile is what such a box is among the tiles of a hand."""
    cls = dets.class_id[kept].copy()
    top3, prob = dets.top3_class[kept], dets.top3_prob[kept]
    back_p = np.where(top3 == BACK, prob, 0.0).sum(1)
    cls[(cls == OTHER) & (back_p >= BACK_AS_OTHER)] = BACK
    return cls


def _neighbour_links(xyxy: np.ndarray) -> np.ndarray:
    """Vectors between close box centres: pairs nearer than 1.6 × the nearer of the two nearest-neighbour
    distances (row neighbours and, in a block, the tiles of the next row; not the tile after next)."""
    c = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    d = np.hypot(c[:, None, 0] - c[None, :, 0], c[:, None, 1] - c[None, :, 1])
    np.fill_diagonal(d, np.inf)
    nn = d.min(1)
    i, j = np.triu_indices(len(c), 1)
    close = d[i, j] <= 1.6 * np.minimum(nn[i], nn[j])
    return c[j[close]] - c[i[close]]


def _dominant_angle(vectors: np.ndarray, fold: int) -> float | None:
    """Dominant direction of ``vectors`` modulo 360°/fold (fold 2: lines; fold 4: a grid's axes), in radians.

    Histogram of the folded angles smoothed over ±15° (a bent row spreads its links over that much, a tight
    grid of river tiles does not: the wide window lets the longer rows win), its peak refined by the circular
    mean of the angles within 15° of it.
    """
    if len(vectors) == 0:
        return None
    a = fold * np.arctan2(vectors[:, 1], vectors[:, 0])
    bins = 36 * fold  # 5° bins before folding
    hist = np.bincount(((a + np.pi) / (2 * np.pi) * bins).astype(int) % bins, minlength=bins).astype(float)
    hist = np.convolve(np.concatenate([hist[-3:], hist, hist[:3]]), [1, 2, 3, 4, 3, 2, 1], mode="valid")
    peak = (np.argmax(hist) + 0.5) / bins * 2 * np.pi - np.pi
    off = (a - peak + np.pi) % (2 * np.pi) - np.pi  # signed difference to the peak
    near = np.abs(off) < fold * np.deg2rad(15)
    mean = peak + math.atan2(float(np.sin(off[near]).sum()), float(np.cos(off[near]).sum())) if near.any() else peak
    return float(mean / fold)


def _row_angle(xyxy: np.ndarray) -> float:
    """Row direction in radians, in (-90°, 90°]: the most common direction between neighbouring tiles.

    Rows are longer than a block is deep (13 tiles in a hand, six in a river row), so row neighbours
    outnumber neighbours across rows even where perspective brings rows closer than tiles."""
    angle = _dominant_angle(_neighbour_links(xyxy), 2) if len(xyxy) > 1 else None
    if angle is None:
        return 0.0
    return angle + math.pi if angle <= -math.pi / 2 else angle


def _frame(xyxy: np.ndarray, angle: float | None) -> tuple[_Geometry, list[list[int]]]:
    """Row frame and groups, along ``angle`` when it is given, else along the row direction the boxes show."""
    if angle is None:
        return _row_frame(xyxy)
    geo = _geometry(xyxy, angle)
    return geo, _chains(geo)


def _tile_pieces(geo: _Geometry, xyxy: np.ndarray, confidence: np.ndarray) -> list[tuple[int, int]]:
    """(weaker, stronger) pairs of boxes that are two pieces of one tile. The detector sometimes boxes the parts
    of a face split by a gap apart (the two dots and the four dots of a 6p): two boxes at one place along the row,
    stacked across it, each shorter than a tile is deep and together about one tile deep. Kept as two tiles, the
    weak piece would break the row (a small box reads as a tile lying sideways). The tile depth is the one of the
    boxes around, not the pieces' own (their small size would pass for distance); two whole tiles stacked (river
    rows) or two sideways tiles stacked (an added kong) span well over one such depth."""
    cos, sin = abs(math.cos(geo.theta)), abs(math.sin(geo.theta))
    across = (xyxy[:, 2] - xyxy[:, 0]) * sin + (xyxy[:, 3] - xyxy[:, 1]) * cos
    lo, hi = geo.v - across / 2, geo.v + across / 2
    du = np.abs(geo.u[:, None] - geo.u[None, :])
    dv = np.abs(geo.v[:, None] - geo.v[None, :])
    stacked = (du < 0.35 * geo.width[:, None]) & (dv < geo.depth0)
    np.fill_diagonal(stacked, False)
    pieces: list[tuple[int, int]] = []
    taken: set[int] = set()
    for k in np.flatnonzero(stacked.any(1))[np.argsort(-confidence[stacked.any(1)], kind="stable")]:
        for w in np.flatnonzero(stacked[k]):
            if k in taken or w in taken or confidence[w] > confidence[k]:
                continue
            around = (du[k] < 3 * geo.width0) & (dv[k] < geo.depth0)
            around[[k, w]] = False
            depth = float(np.median(geo.depth[around])) if around.any() else geo.depth0
            span = max(hi[k], hi[w]) - min(lo[k], lo[w])
            if max(across[k], across[w]) < 0.85 * depth and span <= PIECE_SPAN * depth:
                pieces.append((int(w), int(k)))
                taken |= {int(w), int(k)}
    return pieces


def _row_frame(xyxy: np.ndarray) -> tuple[_Geometry, list[list[int]]]:
    """Row frame and groups: of the dominant neighbour direction and the one across it, the direction along
    which more tiles chain up (rows are longer than a block is deep; a bent or sheared river grid can put more
    neighbour links across its rows than along them)."""
    theta = _row_angle(xyxy)
    best: tuple[int, _Geometry, list[list[int]]] | None = None
    for candidate in (theta, theta - math.pi / 2 if theta > 0 else theta + math.pi / 2):
        geo = _geometry(xyxy, candidate)
        chains = _chains(geo)
        links = len(xyxy) - len(chains)
        if best is None or links > best[0]:
            best = (links, geo, chains)
    assert best is not None
    return best[1], best[2]


def _seat_angle(xyxy: np.ndarray, nominal: float) -> float:
    """A seat's row direction: its own rows' direction (perspective slants the sides of a table) if within
    30° of the table axis ``nominal``, pointing the same way as ``nominal``; else ``nominal``."""
    angle = _dominant_angle(_neighbour_links(xyxy), 2) if len(xyxy) > 2 else None
    if angle is None:
        return nominal
    for candidate in (angle, angle + math.pi / 2, angle + math.pi, angle - math.pi / 2):
        diff = math.atan2(math.sin(candidate - nominal), math.cos(candidate - nominal))
        if abs(diff) <= math.radians(30):
            return nominal + diff
    return nominal


def _table_angle(xyxy: np.ndarray) -> float:
    """The table's axes (seat rows run along them) mod 90°, in (-45°, 45°]."""
    angle = _dominant_angle(_neighbour_links(xyxy), 4) if len(xyxy) > 1 else None
    return 0.0 if angle is None else angle


@dataclass
class _Geometry:
    """Boxes in the row frame. Index k refers to the k-th kept box."""

    theta: float  # row direction, radians
    u: np.ndarray  # along the row
    v: np.ndarray  # across it (towards the player when the photo is upright)
    width: np.ndarray  # local tile width along the row (px): perspective makes far tiles smaller
    depth: np.ndarray  # local tile depth across the row (px)
    extent: np.ndarray  # each box's extent along the row: tile width, or its depth when turned
    turned: np.ndarray  # bool: lying sideways
    rel: np.ndarray  # box size relative to the median box
    width0: float  # typical tile width (px), the median box's
    depth0: float  # typical tile depth (px)
    cache: dict[str, Any] = field(default_factory=dict)  # pairwise matrices, valid until the frame turns

    def flip(self) -> None:
        """Turn the frame by 180°: the other end of the rows is the player's left."""
        self.theta += math.pi
        self.u = -self.u
        self.v = -self.v
        self.cache.clear()


def _geometry(xyxy: np.ndarray, theta: float) -> _Geometry:
    """Centres in the row frame, local tile size and sideways tiles, from the boxes and the row angle."""
    cos, sin = math.cos(theta), math.sin(theta)
    centres = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    u = centres[:, 0] * cos + centres[:, 1] * sin
    v = -centres[:, 0] * sin + centres[:, 1] * cos
    bw = xyxy[:, 2] - xyxy[:, 0]
    bh = xyxy[:, 3] - xyxy[:, 1]
    area = bw * bh
    rel = np.sqrt(area / np.median(area))  # a turned tile has the same area; a far one is smaller
    c, s = abs(cos), abs(sin)
    # Width: centre distance between row neighbours. Tiles of a group touch, so the short distances are the
    # tile width itself (the median would add the typical gap); perspective is taken out by the box size.
    du = u[None, :] - u[:, None]
    dv = v[None, :] - v[:, None]
    dist = np.hypot(du, dv)
    np.fill_diagonal(dist, np.inf)
    nn = dist.min(1)
    along = (np.abs(dv) < 0.36 * np.abs(du)) & (dist <= 1.6 * np.minimum(nn[:, None], nn[None, :]))
    i, j = np.nonzero(np.triu(along, 1))
    if len(i) >= 4:
        steps = np.sort(dist[i, j] / ((rel[i] + rel[j]) / 2))
        pitch0 = float(steps[len(steps) // 2])
        width0 = min(max(float(steps[int(0.15 * len(steps))]), 0.75 * pitch0), pitch0)
    elif len(i):
        width0 = float(np.median(dist[i, j] / ((rel[i] + rel[j]) / 2))) / (1 + TILE_GAP)
    else:  # no row neighbours: width from the box, assuming the usual tile shape
        width0 = float(np.median(bw / (c + TILE_ASPECT * s) / rel))
    # Boxes stacked on one spot (no real layout) must not make the tile size vanish.
    width0 = max(width0, 0.25 * float(np.sqrt(np.median(area))))
    width = width0 * rel
    # Depth of a tile lying straight: the box is (w c + d s) × (w s + d c); solve with the known width.
    depth_one = (bh - width * s) / c if c >= s else (bw - width * c) / s
    depth0 = float(np.clip(np.median(depth_one / rel), 0.4 * width0, 2.5 * width0))
    depth = depth0 * rel
    # Sideways tiles: their shape along / across the row stands out from the others'. A box of extents (a along
    # the row, b across) shows as (a c + b s) × (a s + b c); solved for (a, b), a tile turned 90° has a / b
    # larger by TILE_ASPECT² than a straight one, seen from above (width and depth swap) as on a table seen at
    # a slant (the depth across the row is foreshortened, a turned tile's long side along it is not), so it is
    # measured against the nearest boxes' median rather than a tile model (perspective and a bent row skew the
    # boxes, smoothly over the photo). Near 45° straight and turned look alike.
    det = c * c - s * s
    along = (bw * c - bh * s) / det if abs(c - s) > 0.3 else bw
    across = (bh * c - bw * s) / det if abs(c - s) > 0.3 else bh
    shape = np.log(np.maximum(along, 1e-6) / np.maximum(across, 1e-6))
    if len(shape) > 2:
        k = min(6, len(shape) - 1)  # the six nearest; the box itself is at infinite distance: left out
        nearest = np.argpartition(dist, k - 1, axis=1)[:, :k]
        local = np.median(shape[nearest], axis=1)
    else:
        local = np.full(len(shape), float(np.median(shape)))
    turned = (shape - local > math.log(TILE_ASPECT)) & (along > 0) & (across > 0) & (abs(c - s) > 0.3)
    extent = np.where(turned, TILE_ASPECT * width, width)
    return _Geometry(theta, u, v, width, depth, extent, turned, rel, width0, depth0)


def _pairs(geo: _Geometry) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pairwise (i → j) along offset, across offset, edge gap, mean width, mean depth (computed once)."""
    if "pairs" not in geo.cache:
        geo.cache["pairs"] = _pair_matrices(geo)
    return geo.cache["pairs"]


def _pair_matrices(geo: _Geometry) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    du = geo.u[None, :] - geo.u[:, None]
    dv = geo.v[None, :] - geo.v[:, None]
    pm = (geo.width[:, None] + geo.width[None, :]) / 2
    hm = (geo.depth[:, None] + geo.depth[None, :]) / 2
    gap = du - (geo.extent[:, None] + geo.extent[None, :]) / 2
    return du, dv, gap, pm, hm


def _mutual_chains(cost: np.ndarray) -> list[list[int]]:
    """Chains from a cost matrix (i → j: j follows i): keep i → j when j is i's best successor and i is j's best
    predecessor; follow the kept links from each chain's head."""
    n = len(cost)
    nxt = np.full(n, -1)
    has_prev = np.zeros(n, dtype=bool)
    if n > 1:
        best_next = np.argmin(cost, axis=1)
        best_prev = np.argmin(cost, axis=0)
        for i in range(n):
            j = best_next[i]
            if np.isfinite(cost[i, j]) and best_prev[j] == i:
                nxt[i] = j
                has_prev[j] = True
    chains = []
    for head in np.flatnonzero(~has_prev):
        chain = [int(head)]
        while nxt[chain[-1]] >= 0:
            chain.append(int(nxt[chain[-1]]))
        chains.append(chain)
    return chains


def _chains(geo: _Geometry) -> list[list[int]]:
    """Groups: runs of touching tiles along the row (gap under half a tile, offset across under half a depth)."""
    du, dv, gap, pm, hm = _pairs(geo)
    ok = (du > 0) & (gap <= GAP_SPLIT * pm) & (gap > -0.5 * pm) & (np.abs(dv) <= ROW_TOLERANCE * hm)
    cost = np.where(ok, gap / pm + 2 * np.abs(dv) / hm, np.inf)
    return _mutual_chains(cost)


def _split_meld_ends(geo: _Geometry, groups: list[list[int]], cls: np.ndarray, top3: np.ndarray,
                     prob: np.ndarray) -> list[list[int]]:
    """Split melds off a chain that runs them together with the hand or with each other.

    Concealed tiles are never face down nor sideways, and a hand sorted by its owner is mixed. So a chain
    that is nothing but runs of three or four of one tile is that many melds; and an end run of 3–4 of one
    tile is split off when it holds a back, or a sideways tile behind a small gap, or lies behind a gap that
    clearly stands out from the chain's others (a meld pushed close to the hand)."""
    def strong(run: list[int]) -> bool:
        return _meld_like(cls[run], top3[run], prob[run]).strength >= 1.0

    out: list[list[int]] = []
    todo = list(groups)
    while todo:
        chain = todo.pop()
        if len(chain) < 5:
            out.append(chain)
            continue
        faces = {int(c) for c in cls[chain] if c != BACK}
        if len(faces) <= len(chain) // 3:
            runs = _meld_partition(chain, strong)
            if runs:
                out += runs
                continue
        gaps = np.array([_edge_gap(geo, [a], [b]) for a, b in zip(chain, chain[1:], strict=False)])
        index = np.arange(len(gaps), dtype=float)
        cut = None
        for size in (3, 4):
            # cut before index ``at``: the run at the left end, then the one at the right end (in a chain of
            # twice ``size`` both cut at one index, and each run must be looked at)
            for at, run in ((size, chain[:size]), (len(chain) - size, chain[len(chain) - size:])):
                # Perspective stretches the gaps steadily along a row: judge the gap against the line through
                # the others, not against their raw values.
                rest = np.arange(len(gaps)) != at - 1
                slope, base = _line(index[rest], gaps[rest])
                excess = gaps[at - 1] - (base + slope * (at - 1))
                spread = float(np.abs(gaps[rest] - (base + slope * index[rest])).max())
                wide = excess >= 0.5 * GAP_SPLIT and excess >= 1.5 * spread
                backs = bool((cls[run] == BACK).any())
                sideways = bool(geo.turned[run].any()) and gaps[at - 1] >= 0.2
                if (backs or sideways or wide) and strong(run):
                    cut = at
        if cut is None:
            out.append(chain)
        else:
            todo += [chain[:cut], chain[cut:]]
    return out


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares line y = slope · x + base."""
    dx = x - x.mean()
    slope = float(dx @ (y - y.mean())) / max(float(dx @ dx), 1e-12)
    return slope, float(y.mean()) - slope * float(x.mean())


def _meld_partition(chain: list[int], strong: Any) -> list[list[int]] | None:
    """Split ``chain`` into consecutive runs of 3–4 that each pass ``strong``, or None if it cannot be."""
    best: dict[int, list[list[int]] | None] = {len(chain): []}
    for i in range(len(chain) - 1, -1, -1):
        best[i] = None
        for size in (3, 4):
            rest = best.get(i + size)
            if rest is not None and strong(chain[i:i + size]):
                best[i] = [chain[i:i + size], *rest]
                break
    return best[0] if best[0] and len(best[0]) >= 2 else None


def _join_meld_pieces(geo: _Geometry, groups: list[list[int]], rows: list[list[int]], cls: np.ndarray,
                      top3: np.ndarray, prob: np.ndarray) -> tuple[list[list[int]], list[list[int]]]:
    """Join two short pieces of one row, under two tiles apart, when together they are one meld: a missed box
    inside a meld leaves a hole, a bent row or a sideways tile a wider gap. Every tile exists four times, so
    identical neighbours of at most four are one meld. Returns the new groups and rows (group indices)."""
    merged: dict[int, int] = {}  # group → the group it joined
    for row in rows:
        for a, b in zip(row, row[1:], strict=False):
            a = merged.get(a, a)
            union = groups[a] + groups[b]
            gap = _edge_gap(geo, groups[a], groups[b])
            info = _meld_like(cls[union], top3[union], prob[union])
            if len(union) + (gap >= HOLE_GAP) <= 4 and gap <= 1.9 and info.kind and info.doubt == 0:
                groups[a] = union
                merged[b] = a
    if not merged:
        return groups, rows
    keep = [g for g in range(len(groups)) if g not in merged]
    new_index = {g: k for k, g in enumerate(keep)}
    return [groups[g] for g in keep], [[new_index[g] for g in row if g in new_index] for row in rows]


def _inner_holes(geo: _Geometry, members: list[int]) -> int:
    """Tile-sized gaps inside a group (only joined meld pieces have them)."""
    return sum(int(round(gap)) for a, b in zip(members, members[1:], strict=False)
               if (gap := _edge_gap(geo, [a], [b])) >= HOLE_GAP)


def _end_slope(geo: _Geometry, chain: list[int]) -> float:
    """Local slope (dv/du) of a long group, to follow a bent row past a gap; 0 for short groups."""
    if len(chain) < 4:
        return 0.0
    slope, _ = _line(geo.u[chain], geo.v[chain])
    return min(max(slope, -0.35), 0.35)


def _rows(geo: _Geometry, groups: list[list[int]]) -> list[list[int]]:
    """Rows of groups: group ends on one line (bends followed), up to ``ROW_REACH`` tiles apart."""
    m = len(groups)
    if m == 1:
        return [[0]]
    first = np.array([g[0] for g in groups])
    last = np.array([g[-1] for g in groups])
    # A bent row turns most at its ends: follow each long group's slope over its last (first) four tiles; a short
    # group has no slope of its own and takes its partner's.
    right = np.array([_end_slope(geo, g[-4:]) if len(g) >= 4 else np.nan for g in groups])
    left = np.array([_end_slope(geo, g[:4]) if len(g) >= 4 else np.nan for g in groups])
    r, lf = np.broadcast_arrays(right[:, None], left[None, :])
    slope = np.where(np.isnan(r), np.nan_to_num(lf), np.where(np.isnan(lf), r, (r + lf) / 2))
    du = geo.u[first][None, :] - geo.u[last][:, None]
    dv = geo.v[first][None, :] - geo.v[last][:, None]
    pm = (geo.width[last][:, None] + geo.width[first][None, :]) / 2
    hm = (geo.depth[last][:, None] + geo.depth[first][None, :]) / 2
    gap = du - (geo.extent[last][:, None] + geo.extent[first][None, :]) / 2
    residual = np.abs(dv - slope * du)
    ok = (gap > -0.3 * pm) & (gap <= ROW_REACH * pm) & (residual <= 0.5 * hm)
    np.fill_diagonal(ok, False)
    cost = np.where(ok, gap / pm + 3 * residual / hm, np.inf)
    return _mutual_chains(cost)


def _blocks(geo: _Geometry, groups: list[list[int]], rows: list[list[int]]) -> list[list[int]]:
    """Blocks of rows: rows whose tiles face each other across under ``BLOCK_REACH`` depths.

    A row of one tile joins the block of its nearest facing row but never bridges two blocks: a lone box
    (a spurious detection) between the hand and the river must not merge them."""
    n = len(geo.u)
    row_of = np.empty(n, dtype=int)
    size = np.zeros(len(rows), dtype=int)
    for r, row in enumerate(rows):
        for g in row:
            row_of[groups[g]] = r
            size[r] += len(groups[g])
    du, dv, _, wm, hm = _pairs(geo)
    across = np.abs(dv) / hm
    near = (np.abs(du) <= 1.5 * wm) & (across <= BLOCK_REACH)
    parent = list(range(len(rows)))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for i, j in zip(*np.nonzero(near), strict=True):
        a, b = find(row_of[i]), find(row_of[j])
        if a != b and size[row_of[i]] > 1 and size[row_of[j]] > 1:
            parent[a] = b
    for r in np.flatnonzero(size == 1):
        k = groups[rows[r][0]][0]
        partners = np.flatnonzero(near[k] & (size[row_of] > 1))
        if len(partners):
            parent[find(r)] = find(row_of[partners[np.argmin(across[k, partners])]])
    blocks: dict[int, list[int]] = {}
    for r in range(len(rows)):
        blocks.setdefault(find(r), []).append(r)
    return list(blocks.values())


# ------------------------------------------------------------------------------------------------ roles


@dataclass
class _MeldLike:
    """How much a group looks like a meld: ``strength`` 1 for three or four of one tile (or backs with one
    kind of open tile), 0.6 with one odd tile whose top 3 holds the group's tile, 0.4 for a pair (a meld only
    if the count needs it), 0 for a mixed group."""

    kind: str | None = None
    tile: int | None = None  # class index of the meld's tile; None when all face down
    strength: float = 0.0
    missing: int = 0
    doubt: float = 0.0  # log-probability cost of reading every open tile as ``tile`` (0: all agree)


def _meld_like(cls: np.ndarray, top3: np.ndarray, prob: np.ndarray) -> _MeldLike:
    """Meld evidence of a group of boxes from the detector's top-3 classes.

    The meld's tile is the one in every open tile's top 3 that costs least in log-probability against each
    box's top-1 (0 when all agree). A cost over ``MELD_DOUBT`` means mixed tiles (a run like 4m 5m 6m has 5m in
    its neighbours' top 3, but far less likely)."""
    n = len(cls)
    if not 2 <= n <= 4:
        return _MeldLike()
    faces = [k for k in range(n) if cls[k] != BACK]
    backs = n - len(faces)
    tile = None
    cost = 0.0
    if faces:
        common = set(int(c) for c in top3[faces[0]] if 0 <= c < 27)
        for k in faces[1:]:
            common &= set(int(c) for c in top3[k])
        if not common:
            return _MeldLike()
        logp = np.log(np.maximum(prob[faces], 1e-6))

        def cost_of(t: int) -> float:
            return float(sum(logp[i, 0] - logp[i][list(top3[k]).index(t)] for i, k in enumerate(faces)))

        tile = min(common, key=cost_of)
        cost = cost_of(tile)
        if cost > MELD_DOUBT:
            return _MeldLike()
    if backs:
        kind, missing = "concealed_kong", 4 - n
    else:
        kind, missing = ("kong", 0) if n == 4 else ("pong", 3 - n)
    strength = 0.4 if n == 2 else 1.0
    if n == 4 and backs == 1:  # a 闷豆 shows two, three or four backs: one back and three faces is a pong + a back
        strength = min(strength, 0.6)
    if cost > 0:  # some open tile's top-1 is another tile
        strength = min(strength, 0.6)
    return _MeldLike(kind, tile, strength, missing, cost)


@dataclass
class _Parts:
    """Roles by group index (into the chain list)."""

    concealed: list[int] = field(default_factory=list)  # group indices, in row order
    holes: int = 0
    melds: list[int] = field(default_factory=list)
    meld_info: dict[int, _MeldLike] = field(default_factory=dict)
    river: list[int] = field(default_factory=list)  # row indices
    indicator: int | None = None  # local box index
    unassigned: list[tuple[list[int], str]] = field(default_factory=list)
    confidence: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class _HandPlan:
    """One reading of a block as a hand (group indices), scored by :func:`_settle`."""

    concealed: list[int]
    holes: int
    melds: list[int]
    leftovers: list[int]  # groups of the block in neither (unassigned, or lone tiles: indicator candidates)
    far_singles: list[int]  # lone tiles further along the hand row
    score: float


def _edge_gap(geo: _Geometry, a: list[int], b: list[int]) -> float:
    """Gap in tile widths from the end of group ``a`` to the start of group ``b`` (b to the right of a)."""
    i, j = a[-1], b[0]
    pm = (geo.width[i] + geo.width[j]) / 2
    return float((geo.u[j] - geo.u[i] - (geo.extent[i] + geo.extent[j]) / 2) / pm)


def _plan_hand(geo: _Geometry, groups: list[list[int]], rows: list[list[int]], block: list[int],
               meld: dict[int, _MeldLike]) -> _HandPlan | None:
    """Best reading of a block as a hand: its main concealed group, the concealed pieces along its row, its
    melds. Doubtful pieces (a meld whose tiles disagree, a triplet past a tile-sized gap, a pair in a meld
    row) are settled by the count rule: concealed + 3 per meld = 13 or 14."""
    block_groups = [g for r in block for g in rows[r]]
    loose = [g for g in block_groups if meld[g].strength < 0.5 and meld[g].kind != "concealed_kong"]
    if not loose:
        return None
    main = max(loose, key=lambda g: (len(groups[g]), sum(len(groups[h]) for h in _row_containing(rows, g))))
    row = _row_containing(rows, main)
    pos = row.index(main)
    # Walk out from the main group along its row; remember the gap on each piece's inner side.
    sure = [main]
    optional: list[int] = []
    gap_at: dict[int, float] = {}
    for step in (-1, 1):
        k = pos
        while 0 <= k + step < len(row):
            g = row[k + step]
            a, b = (groups[g], groups[row[k]]) if step < 0 else (groups[row[k]], groups[g])
            gap = _edge_gap(geo, a, b)
            strength = meld[g].strength
            if gap > HAND_REACH or (strength >= 1.0 and gap < HOLE_GAP) or meld[g].kind == "concealed_kong":
                break  # too far, a clear meld laid beside the hand, or face-down tiles (never concealed)
            gap_at[g] = gap
            if strength >= 0.5:
                optional.append(g)  # a doubtful meld, or a triplet past a missed tile
                break
            sure.append(g)
            k += step
    fixed_melds = [g for g in block_groups if g not in sure and g not in optional and meld[g].strength >= 0.5]
    pairs = [g for g in block_groups if g not in sure and g not in optional and g not in fixed_melds
             and meld[g].strength > 0][:3]
    best: _HandPlan | None = None
    doubtful = optional + pairs
    for mask in range(1 << len(doubtful)):
        as_meld = {g for b, g in enumerate(doubtful) if mask >> b & 1}
        concealed = [g for g in row if g in sure or (g in optional and g not in as_meld)]
        melds = fixed_melds + [g for g in doubtful if g in as_meld]
        # Without the count to decide: a clear meld stays a meld, a pair stays out.
        prefer = sum(max(meld[g].strength - 0.5, 0.1) for g in optional if g in as_meld)
        prefer -= 0.3 * len(as_meld & set(pairs))
        plan = _settle(groups, row, concealed, gap_at, melds, block_groups, prefer)
        if best is None or plan.score > best.score:
            best = plan
    return best


def _settle(groups: list[list[int]], row: list[int], concealed: list[int], gap_at: dict[int, float],
            melds: list[int], block_groups: list[int], prefer: float) -> _HandPlan:
    """Count one choice of concealed pieces and melds; trim what the count rule says is too much; score it."""
    def holes_of(g: int) -> int:
        gap = gap_at.get(g, 0.0)
        return int(round(gap)) if gap >= HOLE_GAP else 0

    hole_at = {g: holes_of(g) for g in concealed}

    def total() -> int:
        return sum(len(groups[g]) + hole_at[g] for g in concealed) + 3 * len(melds)

    # Too many tiles: a gap of under 1.3 tiles at an end is more likely the drawn tile set apart than a missed
    # tile; a lone tile past a hole at either end is more likely the 翻鸡 tile than part of the hand.
    for g in (concealed[0], concealed[-1]):
        if total() > LEGAL_COUNTS[1] and hole_at[g] and gap_at[g] < 1.3:
            hole_at[g] = 0
    far_singles: list[int] = []
    while total() > LEGAL_COUNTS[1] and len(concealed) > 1:
        ends = [g for g in (concealed[0], concealed[-1]) if len(groups[g]) == 1 and hole_at[g]]
        if not ends:
            break
        far_singles.append(ends[-1])
        concealed = [g for g in concealed if g != ends[-1]]
    if total() > LEGAL_COUNTS[1]:  # still too many: the gaps were not missed tiles
        hole_at = dict.fromkeys(hole_at, 0)
    leftovers = [g for g in block_groups if g not in concealed and g not in melds and g not in far_singles]
    for g in list(leftovers):  # lone tiles further along the hand row: the 翻鸡 tile or strays
        if g in row and len(groups[g]) == 1:
            far_singles.append(g)
            leftovers.remove(g)
    n_concealed = sum(len(groups[g]) for g in concealed)
    count = total()
    score = 10.0 if count in LEGAL_COUNTS else 4.0 if abs(count - 13.5) <= 1.5 else 0.0
    score += len(melds) + 0.3 * n_concealed + (2.0 if max(len(groups[g]) for g in row) > 6 else 0.0)
    score += prefer - 0.5 * len(leftovers)
    return _HandPlan(concealed, sum(hole_at[g] for g in concealed), melds, leftovers, far_singles, score)


def _row_containing(rows: list[list[int]], g: int) -> list[int]:
    return next(row for row in rows if g in row)


def _assign(geo: _Geometry, dets: Detections, kept: np.ndarray, groups: list[list[int]], rows: list[list[int]],
            blocks: list[list[int]]) -> _Parts:
    """Roles: hand block (concealed + melds), river block, indicator, the rest unassigned."""
    meld = _meld_evidence(geo, dets, kept, groups)
    parts = _Parts(meld_info=meld)
    plans = [(b, _plan_hand(geo, groups, rows, block, meld)) for b, block in enumerate(blocks)]
    candidates = sorted(((b, p) for b, p in plans if p is not None), key=lambda bp: -bp[1].score)
    if not candidates:  # only melds in view: count them as melds
        all_groups = [g for block in blocks for r in block for g in rows[r]]
        parts.melds = [g for g in all_groups if meld[g].strength >= 0.5]
        parts.unassigned += [(groups[g], "not a meld and no concealed hand found") for g in all_groups
                             if g not in parts.melds]
        parts.notes.append("no concealed hand found")
        parts.confidence["concealed"] = 0.0
        return parts
    hand_block, plan = candidates[0]
    if len(candidates) > 1 and candidates[1][1].score >= plan.score - 1.0:
        parts.notes.append("two groups of rows could each be the hand")
        parts.confidence["hand"] = 0.5
    parts.concealed, parts.holes, parts.melds = plan.concealed, plan.holes, plan.melds
    lone = [g for g in plan.leftovers if len(groups[g]) == 1]  # a tile near the hand but in no row of it
    for g in plan.leftovers:
        if g not in lone:
            reason = "mixed tiles beside the hand, not a meld" if len(groups[g]) >= 3 else "stray tiles beside the hand"
            parts.unassigned.append((groups[g], reason))
    others = _far_melds(geo, groups, rows, blocks, hand_block, parts)
    _river(geo, dets, kept, groups, rows, blocks, others, parts)
    size = {b: sum(len(groups[g]) for r in blocks[b] for g in rows[r]) for b in others}
    singles = {groups[rows[blocks[b][0]][0]][0]: blocks[b][0] for b in others if size[b] == 1}
    singles.update({groups[g][0]: None for g in plan.far_singles + lone})
    _lone_tiles(geo, dets, kept, groups, rows, singles, parts)
    return parts


def _meld_evidence(geo: _Geometry, dets: Detections, kept: np.ndarray, groups: list[list[int]]) -> dict[int, _MeldLike]:
    """:class:`_MeldLike` per group; a group joined across a hole counts its missed tiles."""
    cls, top3, prob = _shown_classes(dets, kept), dets.top3_class[kept], dets.top3_prob[kept]
    meld = {g: _meld_like(cls[members], top3[members], prob[members]) for g, members in enumerate(groups)}
    for g, info in meld.items():
        holes = _inner_holes(geo, groups[g]) if info.kind else 0
        if holes:  # joined pieces of one meld: the gap held the missed box(es)
            info.missing = holes if info.kind != "concealed_kong" else 4 - len(groups[g])
            info.strength = 1.0
            if info.kind == "pong" and len(groups[g]) + holes == 4:
                info.kind = "kong"
    return meld


def _far_melds(geo: _Geometry, groups: list[list[int]], rows: list[list[int]], blocks: list[list[int]],
               hand_block: int, parts: _Parts) -> list[int]:
    """Add to the melds the blocks that are only melds: laid further off (beyond a missed box, or up a bent
    row) they still belong to the hand. Discards are mixed tiles, three or four of one tile alone are a meld;
    doubtful ones only at the hand's level. Returns the other blocks."""
    meld = parts.meld_info
    hand_v = float(np.mean(geo.v[[k for g in parts.concealed for k in groups[g]]]))
    others = []
    for b, block in enumerate(blocks):
        if b == hand_block:
            continue
        block_groups = [g for r in block for g in rows[r]]
        level = abs(float(np.mean(geo.v[[k for g in block_groups for k in groups[g]]])) - hand_v) <= 2.5 * geo.depth0
        if all(meld[g].strength >= 1.0 or (level and meld[g].strength >= 0.5) for g in block_groups):
            parts.melds += block_groups
        else:
            others.append(b)
    return others


def _river(geo: _Geometry, dets: Detections, kept: np.ndarray, groups: list[list[int]], rows: list[list[int]],
           blocks: list[list[int]], others: list[int], parts: _Parts) -> None:
    """The river: the biggest other block of two or more tiles (a lone box beside it must look like a tile). A
    row of mostly face-down tiles is no part of it: discards lie face up, and a row of backs apart from the hand
    is the wall."""
    shown = _shown_classes(dets, kept)
    members = {r: [k for g in rows[r] for k in groups[g]] for b in others for r in blocks[b]}
    walls = {r for r, m in members.items() if len(m) >= 2 and 2 * int((shown[m] == BACK).sum()) > len(m)}
    for r in sorted(walls):
        parts.unassigned.append(([k for k in members[r] if shown[k] == BACK],
                                 "face-down tiles apart from the hand: the wall, not discards"))
        if up := [k for k in members[r] if shown[k] != BACK]:
            parts.unassigned.append((up, "tiles in a row of the wall, not discards"))
    size = {b: sum(len(members[r]) for r in blocks[b] if r not in walls) for b in others}
    multi = sorted((b for b in others if size[b] >= 2), key=lambda b: -size[b])
    river = multi[0] if multi else None
    for r in blocks[river] if river is not None else []:
        if r in walls:
            continue
        single = groups[rows[r][0]][0] if len(rows[r]) == 1 and len(groups[rows[r][0]]) == 1 else None
        if single is not None and not _plausible_tile(geo, single, float(dets.confidence[kept[single]])):
            parts.unassigned.append(([single], "box beside the river, unlike a tile here (size or confidence)"))
        else:
            parts.river.append(r)
    for b in others:  # a block of one box is a lone tile (_lone_tiles)
        rest = [k for r in blocks[b] if r not in walls for k in members[r]]
        if b != river and rest and sum(len(members[r]) for r in blocks[b]) >= 2:
            parts.unassigned.append((rest, "tiles away from both the hand and the river"))


def _lone_tiles(geo: _Geometry, dets: Detections, kept: np.ndarray, groups: list[list[int]],
                rows: list[list[int]], singles: dict[int, int | None], parts: _Parts) -> None:
    """Lone tiles (box → its own row, or None when it sits in a hand row): a discard in front of the hand
    when there is no river yet (within the hand's width), else the 翻鸡 tile (preferably off to a side);
    boxes unlike a tile here and further lone tiles are unassigned."""
    hand_u = geo.u[[k for g in parts.concealed + parts.melds for k in groups[g]]]
    inside = {k for k in singles if hand_u.min() - geo.width0 <= geo.u[k] <= hand_u.max() + geo.width0}
    for k in [k for k in singles if not _plausible_tile(geo, k, float(dets.confidence[kept[k]]))]:
        parts.unassigned.append(([k], "isolated box, unlike a tile here (size or confidence)"))
        del singles[k]
    if not parts.river:
        parts.river = [r for k, r in singles.items() if k in inside and r is not None]
        for r in parts.river:
            del singles[groups[rows[r][0]][0]]
    if singles:
        conf = dets.confidence[kept]
        best = max(singles, key=lambda k: (k not in inside, conf[k]))
        parts.indicator = best
        for k in singles:
            if k != best:
                parts.unassigned.append(([k], "isolated box (a second tile lying apart)"))
        parts.confidence["indicator"] = 1.0 if len(singles) == 1 else 0.5


def _plausible_tile(geo: _Geometry, k: int, confidence: float) -> bool:
    """A lone box is taken for a tile only with fair confidence and the size a tile has at its place (box size
    varies smoothly over the photo under perspective: a plane fit of log size over the other boxes)."""
    if confidence < LONE_MIN_CONFIDENCE:
        return False
    others = np.arange(len(geo.u)) != k
    if others.sum() < 4:
        return True
    # Ridge fit in depth units: a slope the other boxes barely span (one row) shrinks towards flat.
    scale = geo.depth0
    x = np.column_stack([geo.u[others], geo.v[others]]) / scale
    mean = x.mean(0)
    x -= mean
    y = np.log(geo.rel[others])
    slope = np.linalg.solve(x.T @ x + 0.25 * len(x) * np.eye(2), x.T @ (y - y.mean()))
    expected = y.mean() + float((np.array([geo.u[k], geo.v[k]]) / scale - mean) @ slope)
    return abs(float(np.log(geo.rel[k])) - expected) <= LONE_SIZE_TOLERANCE


def _boxes_of(groups: list[list[int]], rows: list[list[int]], parts: _Parts) -> tuple[list[int], list[int]]:
    """Local box indices of the hand (concealed + melds) and of the river."""
    hand = [k for g in parts.concealed + parts.melds for k in groups[g]]
    river = [k for r in parts.river for g in rows[r] for k in groups[g]]
    return hand, river


def _orient(geo: _Geometry, groups: list[list[int]], rows: list[list[int]], parts: _Parts,
            facing: np.ndarray | None = None) -> None:
    """Turn the frame so the player sits at +v: the river lies beyond the hand; without a river, the hand's
    faces point away from the player (``facing``, per kept box, when looked at); else far tiles look smaller
    under perspective; failing all, keep the photo upright (rows read left to right)."""
    hand, river = _boxes_of(groups, rows, parts)
    depth = geo.depth0
    if hand and river:
        dv = float(np.mean(geo.v[river]) - np.mean(geo.v[hand]))
        if dv > 0:
            geo.flip()
        parts.confidence["orientation"] = 1.0 if abs(dv) > 1.5 * depth else 0.7
        return
    if facing is not None and hand:
        away = np.array([math.sin(geo.theta), -math.cos(geo.theta)])  # -v: from the player across the row
        vote = float((facing[hand] @ away).sum())
        if abs(vote) >= FACING_SURE:
            if vote < 0:
                geo.flip()
            parts.confidence["orientation"] = 0.9
            return
    if len(hand) >= 6:
        v = geo.v[hand] / depth
        if np.ptp(v) >= 1.0:
            change = np.polyfit(v, np.log(geo.rel[hand]), 1)[0] * np.ptp(v)  # > 0: nearer tiles look bigger
            if change < -0.06:
                geo.flip()
            if abs(change) >= 0.06:
                parts.confidence["orientation"] = 0.8
                return
    parts.confidence["orientation"] = 0.5


def _gap_confidence(geo: _Geometry, groups: list[list[int]], rows: list[list[int]], g: int) -> float:
    """How clearly group ``g`` stands apart: margins of its inner gaps and of the gaps to its row neighbours
    against the split threshold (half a tile). 1 = clear, 0.5 = on the threshold."""
    members = sorted(groups[g], key=lambda k: geo.u[k])
    inner = [_edge_gap(geo, [a], [b]) for a, b in zip(members, members[1:], strict=False)]
    row = sorted(_row_containing(rows, g), key=lambda h: geo.u[groups[h][0]])
    pos = row.index(g)
    outer = []
    for h in row[max(pos - 1, 0):pos] + row[pos + 1:pos + 2]:
        other = sorted(groups[h], key=lambda k: geo.u[k])
        outer.append(_edge_gap(geo, members, other) if geo.u[other[0]] > geo.u[members[0]]
                     else _edge_gap(geo, other, members))
    margin = min([GAP_SPLIT - x for x in inner] + [x - GAP_SPLIT for x in outer] + [1.0])
    return float(np.clip(0.5 + 1.5 * margin, 0.0, 1.0))


def _build(dets: Detections, kept: np.ndarray, geo: _Geometry, groups: list[list[int]], rows: list[list[int]],
           parts: _Parts, out: Layout) -> Layout:
    """The :class:`Layout` value from the roles: boxes back to detection indices, everything in reading order."""
    shown = _shown_classes(dets, kept)

    def placed(k: int) -> PlacedTile:
        return PlacedTile(int(kept[k]), CLASS_NAMES[int(shown[k])], bool(geo.turned[k]))

    def by_u(members: list[int]) -> list[int]:
        return sorted(members, key=lambda k: geo.u[k])

    out.concealed = [placed(k) for k in by_u([k for g in parts.concealed for k in groups[g]])]
    out.holes = parts.holes
    meld_order = sorted(parts.melds, key=lambda g: (round(float(np.mean(geo.v[groups[g]]) / geo.depth0)),
                                                     float(np.mean(geo.u[groups[g]]))))
    for g in meld_order:
        info = parts.meld_info[g]
        conf = _gap_confidence(geo, groups, rows, g) * min(1.0, info.strength + 0.2 * (info.strength < 1))
        out.melds.append(MeldGroup(info.kind or "pong", None if info.tile is None else CLASS_NAMES[info.tile],
                                   [placed(k) for k in by_u(groups[g])], info.missing, conf))
    river_rows = sorted(parts.river, key=lambda r: -float(np.mean(geo.v[[k for g in rows[r] for k in groups[g]]])))
    out.river = [placed(k) for r in river_rows for k in by_u([k for g in rows[r] for k in groups[g]])]
    if parts.indicator is not None:
        out.indicator = placed(parts.indicator)
    out.unassigned += [Unassigned(int(kept[k]), reason) for members, reason in parts.unassigned for k in members]
    out.tile_size = (geo.width0, geo.depth0)
    out.angle = math.degrees(math.atan2(math.sin(geo.theta), math.cos(geo.theta)))
    conf = dict(parts.confidence)
    if parts.concealed:
        gap_conf = min(_gap_confidence(geo, groups, rows, g) for g in parts.concealed)
        conf["concealed"] = gap_conf * (1.0 if out.count in LEGAL_COUNTS else 0.6)
    if parts.river:
        hand, river = _boxes_of(groups, rows, parts)
        sep = float(np.min(np.abs(geo.v[river][:, None] - geo.v[hand][None, :]))) / geo.depth0 \
            if hand else 3.0
        conf["river"] = 1.0 if sep >= 2.0 else 0.6
    out.confidence = conf
    out.notes += parts.notes
    return out
