"""The whole table in one photo: four seats' hands, melds and rivers, the wall (牌墙) and the flipped tile (翻鸡).

Stages, each over plain arrays, box geometry first and the classes only where a role needs them:

1. ``find_wall``: the face-down wall: chains of backs side by side, longer than any 闷豆 (concealed kong, four
   tiles) can be.
2. ``find_flipped``: the flipped tile: the face-up tile nearest the wall, on it or beside it (none without a wall,
   as after 黄牌, or when the round was won on the last tile).
3. ``table_layout``: the other boxes go to the seat whose side of the table they lie along
   (``vision.layout.layout_table``: each tile's position and the direction of the rows it lies in; whole rows kept
   together), and each seat's tiles are laid out in that seat's own frame by the one-hand layout (concealed row,
   melds, river rows from the owner's left, the row nearest the owner first). Then what the seats could not
   place: a heap of discards in the middle (``find_heap``: given to no seat; a seat without a river of its own
   then has its river not separated), backs a seat took for a 闷豆 well off its hand row (the wall's remnant,
   the flipped tile on it), and without a wall the flipped tile as the most isolated stray tile.
4. ``read_table_tiles``: each seat read by ``vision.reading.read`` (at most 4 copies per seat, melds alike, a
   14-tile hand complete), then the whole-table constraint: at most 4 copies of each of the 27 kinds on the whole
   table. Where a kind is read more often, the cheapest single tiles of it to change (the detector's next class
   whose count stays legal) are changed and listed as doubtful; a kind that cannot be settled makes the photo
   impossible (``too_many_copies``, with the boxes). The heap's tiles count too.

Seats: 0 = the side nearest the bottom of the photo, then in the order of play, 1 right, 2 top, 3 left.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from vision.classes import BACK, CLASS_NAMES, SUITED_TILES
from vision.detections import Detections, box_intersection
from vision.layout import (
    LEGAL_COUNTS,
    Layout,
    MeldGroup,
    PlacedTile,
    Unassigned,
    arrange,
    build,
    layout_table,
)
from vision.layout.grouping import LAID_SORTED, sort_breaks
from vision.layout.perspective import top_view
from vision.layout.roles import BESIDE_HAND
from vision.layout.table import table_angle
from vision.reading import Doubt, Reading, Retake, read

WALL_MIN = 5  # backs side by side in one chain from this many are the wall (a 闷豆 has four at most)
WALL_SHORT = 3  # three or four backs are the wall when they lie on no row of face-up tiles (a 闷豆 does)
WALL_ROW_REACH = 3.5  # face-up tiles within this many tile widths past the backs' end continue their row
WALL_LINK = 1.3  # two backs whose centres lie under this many of their widths apart along a table axis are neighbours
FLIPPED_REACH = 2.3  # the flipped tile lies within this many tile sizes of a wall tile (on it or beside it)
WALL_OFF_ROW = 1.0  # backs in a seat's "meld" this many tile depths beyond its hand row, towards the centre: wall
ON_WALL = 1.5  # a face-up tile laid on the wall lies within this many of its tiles' depths of the wall's line
OVER_WALL = 0.15  # a face-up tile with this share of its box on the wall's boxes (in the photo) lies on the wall
IN_WALL_RUN = 0.8  # ...or lies in the wall's run, backs on both sides, this many depths off its line at most
END_OFF = 0.6  # past the wall's end, the flipped tile lies under this many depths off its line...
END_RAISED = 0.7  # ...or this many, up the photo, laid on the end stack (from a seat 0.62-0.67 in the top view)
SAME_TILE = 0.5  # a box with this share of it on a stronger box lies on the same tile
RAISED_OFF_ROW = 0.08  # laid on the wall, the flipped tile shows this many tile depths off a hand's row, towards...
RAISED_SIZE = 1.15  # ...the wall, and this many times the row's depth (from a seat: of hand tiles 1 in 100 is 0.07 off)
WEAK_BOX = 0.3  # a box under this confidence was kept only for lying in a row beside sure tiles (at the floor, 0.25)
GAP_NARROW = 0.85  # ...or a weak box this much narrower along the row than its tiles: the gap it fills is narrower
REJOIN_ACROSS = 1.0  # the rest of a hand lies under this many tile depths off the hand's line
REJOIN_TWICE = 0.6  # a box whose centre lies under this many tile widths from a hand tile's is that tile again
REJOIN_GAP = 2.5  # ...and starts under this many tile widths past its end (centre to centre)
UNLIKE_HERE = "isolated box, unlike"  # a lone box the seat's layout found unlike a tile at its place
STRAY_ALONE = 1.45  # without a wall: a river tile this many tile sizes from any other face-up tile is the flipped one
STRAY_UNPLACED = 1.0  # ...or a tile the seats could not place, this far
ALONE = 1.1  # ...alone: no face-up tile nearer than this many tile sizes along the table's axes (a row's: about 1.0)
COPIES = 4  # every kind exists four times in the 108-tile set
MAX_SETTLE_COST = 6.0  # the whole-table constraint changes no tile to a class under e^-6 of its top-1
RIVER_BEYOND = 1.5  # a seat's tiles left over this many tile depths beyond its hand, towards the centre: its river
RIVER_ROW_GAP = 0.6  # river tiles whose distances from the owner differ by more than this many depths: two rows
HEAP_LINK = 1.4  # tiles of a heap touch at any angle: centres under this many long sides apart
HEAP_CENTRE = 0.4  # a heap's centre lies within this share of the table's half-size from the table's centre
HEAP_ALIGNED = 0.6  # ...and under this share of its tiles lie in line with a neighbour along a table axis
HEAP_MIN = 3  # tiles, at least, in a heap
LINE_SHAPE = 0.2  # two boxes whose log aspect ratios differ by under this are tiles turned alike
LINE_ACROSS = 0.1  # ...and beside each other in a row when their centres are this many tile sizes off its line
RIVER_GATHERED = "tile(s) beyond the hand taken into the river"  # notes of the table's own layout steps...
WALL_BEYOND_ROW = "face-down tiles beyond the hand row taken for the wall"
WALL_ON_LINE = "face-down tiles on the wall's line taken for the wall"
ROUTINE_NOTES = (RIVER_GATHERED, WALL_BEYOND_ROW, WALL_ON_LINE)  # ...that say nothing is unclear
SECOND_BOXES = ("overlaps box", "a piece of the tile", "invalid box")  # unassigned boxes that are no tile of their own


@dataclass
class TableLayout:
    """Where every box of a table photo lies.

    seats: the four seats' layouts, over ``seat_dets`` (the boxes that are neither wall nor flipped tile);
    seat_boxes maps an index of ``seat_dets`` to the photo's detections. wall: the wall's boxes; flipped: the
    flipped tile's box or None; heap: the boxes of discards thrown into a heap in the middle, given to no seat
    (indices of the photo's detections). river_separated: per seat, False where there is a heap and the seat
    has no river of its own (its discards are in the heap, not told apart from the others').
    """

    seats: list[Layout]
    seat_dets: Detections
    seat_boxes: np.ndarray
    wall: list[int] = field(default_factory=list)
    flipped: int | None = None
    heap: list[int] = field(default_factory=list)
    river_separated: list[bool] = field(default_factory=lambda: [True] * 4)


@dataclass
class TableTiles:
    """The tiles of a table photo as read: per seat a :class:`Reading` (box indices of ``TableLayout.seat_dets``),
    the flipped tile, the whole table's changes, doubts (box indices of the photo's detections) and retakes."""

    readings: list[Reading]
    flipped: str | None
    heap: list[str] = field(default_factory=list)  # the heap's tiles as read, in the order of TableLayout.heap
    changed: dict[int, str] = field(default_factory=dict)  # photo box → tile the whole-table constraint chose
    doubtful: list[Doubt] = field(default_factory=list)
    retake: list[Retake] = field(default_factory=list)


def _short_sides(xyxy: np.ndarray) -> np.ndarray:
    return np.minimum(xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1]).astype(np.float64)


def _extents(xyxy: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """Each box's extent along a unit ``direction`` (one, or one per box): a tile's width along its row, its depth
    across it, foreshortened as the photo shows them."""
    size = (xyxy[..., 2:] - xyxy[..., :2]).astype(np.float64)
    return np.abs(direction[..., 0]) * size[..., 0] + np.abs(direction[..., 1]) * size[..., 1]


def _linked_groups(xyxy: np.ndarray, phi: float) -> list[list[int]]:
    """Boxes side by side along one of the table's axes (at ``phi`` and ``phi`` + 90°): linked when their centres
    lie under ``WALL_LINK`` of their extents apart along the axis and under half their extent across it; chains of
    links along one axis each (the wall runs along one seat's edge: a 闷豆 on a side seat's row, near the wall's
    end, joins no chain of it), each box in the longest chain it is in."""
    centres = (xyxy[:, :2] + xyxy[:, 2:]).astype(np.float64) / 2
    diff = centres[None, :, :] - centres[:, None, :]
    axes = np.array([[math.cos(phi), math.sin(phi)], [-math.sin(phi), math.cos(phi)]])
    offset = np.abs(diff @ axes.T)  # (n, n, 2): along the first axis, along the second
    ext = np.stack([_extents(xyxy, axes[0]), _extents(xyxy, axes[1])], 1)
    pair = (ext[:, None, :] + ext[None, :, :]) / 2
    chains: list[list[int]] = []
    for along, across in ((0, 1), (1, 0)):
        linked = (offset[..., along] < WALL_LINK * pair[..., along]) & (offset[..., across] < 0.5 * pair[..., across])
        chains += _components(linked)
    out: list[list[int]] = []
    taken: set[int] = set()
    for chain in sorted(chains, key=len, reverse=True):
        free = [k for k in chain if k not in taken]
        if free:
            out.append(free)
            taken.update(free)
    return out


def _components(linked: np.ndarray) -> list[list[int]]:
    """Connected components of a symmetric boolean adjacency matrix (union-find)."""
    n = len(linked)
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for i, j in zip(*np.nonzero(np.triu(linked, 1)), strict=True):
        parent[find(int(i))] = find(int(j))
    groups: dict[int, list[int]] = {}
    for k in range(n):
        groups.setdefault(find(k), []).append(k)
    return list(groups.values())


def _continued_by_faces(dets: Detections, members: np.ndarray) -> tuple[bool, bool]:
    """Whether two or more face-up tiles continue the line of ``members`` (backs) past each of its ends: at one
    end, a short run of backs is a meld on its owner's row, not the wall (the flipped tile alone may lie at the
    wall's end); at both, so is a long run (two 闷豆 side by side between the hand and a kong). Other backs on
    the line within reach are taken along first: a 闷豆 laid after another 闷豆 is continued by the hand beyond
    it."""
    centres = dets.centers[members].astype(np.float64)
    mid = centres.mean(0)
    axis = np.linalg.svd(centres - mid)[2][0]
    across = np.array([-axis[1], axis[0]])
    width = float(np.median(_extents(dets.xyxy[members], axis)))  # along the row, as the photo shows it
    depth = float(np.median(_extents(dets.xyxy[members], across)))
    along = (centres - mid) @ axis
    lo, hi = float(along.min()), float(along.max())
    rel = dets.centers.astype(np.float64) - mid
    t, on_line = rel @ axis, np.abs(rel @ across) < 0.6 * depth
    backs = np.sort(t[on_line & (dets.class_id == BACK)])
    for b in backs[backs > hi]:  # backs on from either end, each within reach of the last
        if b - hi < WALL_ROW_REACH * width:
            hi = float(b)
    for b in backs[backs < lo][::-1]:
        if lo - b < WALL_ROW_REACH * width:
            lo = float(b)
    faces = on_line & (dets.class_id != BACK)
    after, before = ((faces & (past > 0) & (past < WALL_ROW_REACH * width)).sum() >= 2 for past in (t - hi, lo - t))
    return bool(after), bool(before)


def _stacks(dets: Detections, members: np.ndarray) -> int:
    """How many tiles' places along their line ``members`` (backs side by side) cover: a back seen at a slant may
    be found twice, its top and its edge, one above the other (a 闷豆's four backs found as seven boxes)."""
    if len(members) < 2:
        return len(members)
    centres = dets.centers[members].astype(np.float64)
    axis = np.linalg.svd(centres - centres.mean(0))[2][0]
    width = float(np.median(_extents(dets.xyxy[members], axis)))
    along = np.sort(centres @ axis)
    return 1 + int((np.diff(along) > 0.5 * width).sum())


def find_wall(dets: Detections, phi: float | None = None) -> list[int]:
    """The wall's boxes: backs side by side, at least ``WALL_MIN`` tiles' places, or ``WALL_SHORT`` (as a 闷豆 shows) when
    no row of face-up tiles continues their line (a 闷豆 lies on its owner's row, beside the hand or other
    melds)."""
    backs = np.flatnonzero(dets.class_id == BACK)
    if len(backs) < WALL_SHORT:
        return []
    wall: list[int] = []
    if phi is None:
        phi = table_angle(dets.xyxy.astype(np.float64))
    for group in _linked_groups(dets.xyxy[backs], phi):
        members = backs[group]
        stacks = _stacks(dets, members)
        ends = _continued_by_faces(dets, members)
        if (stacks >= WALL_MIN and not all(ends)) or (stacks >= WALL_SHORT and not any(ends)):
            wall += [int(b) for b in members]
    return sorted(wall)


def find_flipped(dets: Detections, wall: list[int], phi: float | None = None,
                 exclude: set[int] | None = None) -> int | None:
    """The face-up tile nearest the wall, within ``FLIPPED_REACH`` tile sizes of a wall tile and lying alone (no
    face-up tile within ``ALONE`` tile sizes along the table's axes: the end of a hand or a river row is not
    it), and not in ``exclude`` (the heap's tiles); None without a wall."""
    if not wall:
        return None
    faces = np.flatnonzero(dets.class_id != BACK)
    if not len(faces):
        return None
    if phi is None:
        phi = table_angle(dets.xyxy.astype(np.float64))
    centres = dets.centers.astype(np.float64)
    to_wall = np.hypot(*(centres[faces][:, None, :] - centres[wall][None, :, :]).transpose(2, 0, 1)).min(1)
    alone = _isolation(dets[faces], phi)
    local = float(np.median(_short_sides(dets.xyxy[wall])))  # the wall's own tile size (perspective)
    # A 闷豆's (concealed kong's) shown tile lies alone among faces too, but in line with its own backs.
    others = np.setdiff1d(np.flatnonzero(dets.class_id == BACK), wall)
    in_kong = np.zeros(len(faces), dtype=bool)
    if len(others):
        both = np.concatenate([faces, others])
        in_kong = _in_line(dets.xyxy[both].astype(np.float64), phi)[:len(faces), len(faces):].any(1)
    at_end = _past_wall_end(dets, wall, faces)
    for k in np.argsort(to_wall):
        if to_wall[k] > FLIPPED_REACH * local:
            break
        if (alone[k] >= ALONE or at_end[k]) and not in_kong[k] and int(faces[k]) not in (exclude or set()):
            return int(faces[k])
    return None


def _wall_line(dets: Detections, wall: list[int]) -> tuple[float, float, np.ndarray,
                                                             Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]]:
    """The wall's tile width along its line and depth across it (as the photo shows them), its boxes' places along
    the line, and where given boxes lie: (along the line, how far off it) from the wall's middle."""
    centres = dets.centers.astype(np.float64)
    mid = centres[wall].mean(0)
    axis = np.linalg.svd(centres[wall] - mid)[2][0]
    across = np.array([-axis[1], axis[0]])
    width = float(np.median(_extents(dets.xyxy[wall], axis)))
    depth = float(np.median(_extents(dets.xyxy[wall], across)))

    def place(boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rel = centres[boxes] - mid
        return rel @ axis, np.abs(rel @ across)

    return width, depth, place(np.asarray(wall))[0], place


def _past_wall_end(dets: Detections, wall: list[int], faces: np.ndarray) -> np.ndarray:
    """Per face-up box of ``faces``: it lies on the wall's line just past one of its ends (under one tile width
    beyond it), the one face-up tile there: the flipped tile laid beside the wall, even where a seat's hand lies
    close by (from a seat, the wall between a side seat's hand and its river is within a tile of the hand)."""
    out = np.zeros(len(faces), dtype=bool)
    if len(wall) < 2:  # two backs side by side give the line (the wall's remnant at the end of a round)
        return out
    width, depth, along, place = _wall_line(dets, wall)
    t, off = place(faces)
    centres = dets.centers.astype(np.float64)
    # laid on the end stack the flipped tile shows raised: from a seat, up the photo off a wall across it
    raised = (centres[faces, 1] < centres[wall, 1].mean()) & bool(np.ptp(centres[wall, 0]) > np.ptp(centres[wall, 1]))
    reach = np.where(raised, END_RAISED, END_OFF) * depth
    for past in (t - along.max(), along.min() - t):
        there = np.flatnonzero((past > 0.5 * width) & (past < 2.0 * width) & (off < reach))
        if len(there) > 1:  # a weaker box on the same tile, or a weak one beside it (its side), is no second tile
            best = there[np.argmax(dets.confidence[faces[there]])]
            xyxy = dets.xyxy[faces].astype(np.float64)
            area = np.prod(xyxy[there, 2:] - xyxy[there, :2], axis=1)
            share = box_intersection(xyxy[there], xyxy[[best]])[:, 0] / np.maximum(area, 1e-9)
            second = (share < SAME_TILE) & (dets.confidence[faces[there]] >= WEAK_BOX)
            if not second[there != best].any():
                there = np.array([best])
        if len(there) == 1:
            out[there] = True
    return out


def table_layout(photo_dets: Detections) -> TableLayout:
    """Wall, flipped tile, then the four seats (``vision.layout.layout_table`` on the other boxes), all on the
    boxes mapped to a top view of the table (``vision.layout.perspective``: a photo taken from a seat)."""
    dets = top_view(photo_dets)
    phi = table_angle(dets.xyxy.astype(np.float64)) if len(dets) > 1 else 0.0
    wall = find_wall(dets, phi)
    heap = find_heap(dets, set(wall), phi)  # first: a heap's tile by the wall may lie alone among faces too
    flipped = find_flipped(dets, wall, phi, exclude=set(heap))
    taken = set(wall) | set(heap) | ({flipped} if flipped is not None else set())
    rest = np.array([k for k in range(len(dets)) if k not in taken], dtype=int)
    seat_dets = dets[rest] if len(rest) else Detections.empty(dets.image_size)
    seat_dets.image_size = dets.image_size
    seats = [_without_gap_box(seat_dets, lay) for lay in layout_table(seat_dets)]
    for lay in seats:
        _rejoin_hand(seat_dets, lay)
        _meld_at_hand_end(lay)
        _short_meld_over_count(lay)
        _gather_river(seat_dets, lay)
    wall = sorted(wall + [int(rest[b]) for b in _loose_backs(seat_dets, seats)])
    if len(wall) >= WALL_SHORT:
        wall = sorted(wall + [int(rest[b]) for b in _backs_on_wall_line(dets, wall, seats, rest)])
    if heap:  # a seat's few tiles left beside a heap are strays of it, not a river
        for lay in seats:
            stray = [p.box for p in lay.river] + ([lay.indicator.box] if lay.indicator is not None else [])
            if 0 < len(stray) < HEAP_MIN:
                heap = sorted(heap + [int(rest[b]) for b in stray])
                lay.river, lay.indicator = [], None
    separated = [not heap or bool(lay.river) for lay in seats]
    if flipped is None:
        pieces, face = _wall_pieces(seat_dets, seats)
        wall = sorted(wall + [int(rest[b]) for b in pieces])
        if face is None and wall:  # wall found only now: the flipped tile by it, if a seat left it loose
            near = find_flipped(dets, wall, phi, exclude=set(heap))
            face = None if near is None else _take_loose(seats, int(np.searchsorted(rest, near)))
        if face is None and len(wall) >= WALL_SHORT:
            face = _loose_on_wall(dets, wall, seats, rest)
        if face is None and len(wall) >= WALL_SHORT:
            face = _raised_in_hand(photo_dets, wall, seats, rest)
        if face is None and len(wall) >= WALL_SHORT and not heap:
            face = _over_wall(photo_dets, wall, seats, rest)
        if face is None and len(wall) >= WALL_SHORT:
            face = _in_wall_run(dets, wall, seats, rest)
        if face is None and not heap:  # beside a heap, a lone tile is more likely one thrown a little apart
            face = _stray_flipped(seat_dets, seats)
        if face is not None:
            flipped = int(rest[face])
            for lay in seats:  # a flipped tile taken out of a hand's row may have stood among a meld laid against it
                _meld_at_hand_end(lay)
    # The reading crops and checks the photo's own boxes; the layouts hold box indices only.
    seat_dets = photo_dets[rest] if len(rest) else Detections.empty(photo_dets.image_size)
    seat_dets.image_size = photo_dets.image_size
    return TableLayout(seats, seat_dets, rest, wall, flipped, heap, separated)


def _loose_backs(dets: Detections, seats: list[Layout]) -> list[int]:
    """Backs a seat left in its river, as its lone tile or unplaced: a discard lies face up, so they are the wall's
    (its stacked backs seen one or two at a time); taken from the seats. Indices of ``dets``."""
    out: list[int] = []
    for lay in seats:
        def is_back(box: int) -> bool:
            return int(dets.class_id[box]) == BACK

        out += [p.box for p in lay.river if is_back(p.box)]
        lay.river = [p for p in lay.river if not is_back(p.box)]
        if lay.indicator is not None and is_back(lay.indicator.box):
            out.append(lay.indicator.box)
            lay.indicator = None
        loose = [u.box for u in lay.unassigned if not u.reason.startswith(SECOND_BOXES) and is_back(u.box)]
        out += loose
        lay.unassigned = [u for u in lay.unassigned if u.box not in loose]
    return out


def _backs_on_wall_line(dets: Detections, wall: list[int], seats: list[Layout], rest: np.ndarray) -> list[int]:
    """A seat's "meld" of backs alone lying on the wall's line, within reach of its ends: a piece of the wall that
    missed stacks split off (from a seat the wall lies close in front of the far hand), not a 闷豆 (concealed
    kong), which lies on its owner's row. Taken from the seat; indices of the seats' boxes."""
    width, depth, along, place = _wall_line(dets, wall)
    out: list[int] = []
    for lay in seats:
        keep = []
        for g in lay.melds:
            boxes = [p.box for p in g.tiles]
            t, off = place(rest[boxes])
            past = np.maximum(t - along.max(), along.min() - t)
            if all(p.tile == "back" for p in g.tiles) and (off < 0.6 * depth).all() and (
                    past < WALL_ROW_REACH * width).all():
                out += boxes
            else:
                keep.append(g)
        if len(keep) < len(lay.melds):
            lay.melds = keep
            lay.notes.append(WALL_ON_LINE)
    return out


def _loose_on_wall(dets: Detections, wall: list[int], seats: list[Layout], rest: np.ndarray) -> int | None:
    """The one face-up tile a seat could not place lying on the wall: along the
    wall's line between its ends, under ``ON_WALL`` depths off it. Laid on the wall it hides a stack and, from a
    seat, lies close to the far seat's hand, so it is neither alone nor past the wall's end. Taken from the seat;
    an index of the seats' boxes (``rest`` maps them to ``dets``), or None."""
    width, depth, along, place = _wall_line(dets, wall)
    found = []
    for lay in seats:
        for box in [u.box for u in lay.unassigned if not u.reason.startswith(SECOND_BOXES)]:
            k = int(rest[box])
            if CLASS_NAMES[int(dets.class_id[k])] not in SUITED_TILES:  # the flipped tile is one of the 27 kinds
                continue
            t, off = place(np.array([k]))
            if along.min() - 0.5 * width < t[0] < along.max() + 0.5 * width and off[0] < ON_WALL * depth:
                found.append(box)
    if len(found) != 1:
        return None
    return _take_loose(seats, found[0])


def _raised_in_hand(photo_dets: Detections, wall: list[int], seats: list[Layout], rest: np.ndarray) -> int | None:
    """The flipped tile laid on the wall in front of a hand and taken into it: from a seat, on the far seat's side
    of the wall it hides one of that hand's tiles and lies in its row. Raised by the wall, in the photo it shows
    larger than the row's tiles and off their line towards the wall (``RAISED_SIZE``, ``RAISED_OFF_ROW``). The one
    such tile near the wall, taken out of the hand (which is then a tile short: the hidden one); an index of the
    seats' boxes (``rest`` maps them to ``photo_dets``), or None."""
    centres = photo_dets.centers.astype(np.float64)
    wall_mid = centres[wall].mean(0)
    reach = FLIPPED_REACH * float(np.median(_short_sides(photo_dets.xyxy[wall])))
    found = []
    for lay in seats:
        if len(lay.concealed) < 5:  # too few tiles for a row's line
            continue
        boxes = rest[[p.box for p in lay.concealed]]
        xyxy = photo_dets.xyxy[boxes].astype(np.float64)
        c, size = centres[boxes], xyxy[:, 2:] - xyxy[:, :2]
        a = int(np.ptp(c[:, 1]) > np.ptp(c[:, 0]))  # the row runs along x (a = 0) or y (a = 1) in the photo
        b = 1 - a
        line = np.polyfit(c[:, a], c[:, b], 1)
        depth = float(np.median(size[:, b]))
        off = (c[:, b] - np.polyval(line, c[:, a])) / depth
        towards_wall = np.sign(wall_mid[b] - np.polyval(line, wall_mid[a]))
        to_wall = np.hypot(*(c[:, None, :] - centres[wall][None, :, :]).transpose(2, 0, 1)).min(1)
        raised = (off * towards_wall >= RAISED_OFF_ROW) & (size[:, b] >= RAISED_SIZE * depth) & (to_wall <= reach)
        found += [(lay, lay.concealed[k].box) for k in np.flatnonzero(raised)]
    if len(found) != 1:
        return None
    lay, box = found[0]
    _take_out(lay, box, "the flipped tile lies on the wall in front of this hand, hiding one of its tiles")
    return box


def _over_wall(photo_dets: Detections, wall: list[int], seats: list[Layout], rest: np.ndarray) -> int | None:
    """The one face-up tile of a seat whose box lies on the wall's boxes in the photo (``OVER_WALL`` of it): the
    flipped tile laid on the wall, which a seat took into its river or hand (tiles by the wall touch its boxes,
    they do not cover them). Taken from the seat; an index of the seats' boxes, or None."""
    wall_xyxy = photo_dets.xyxy[wall].astype(np.float64)

    def on_wall(k: int) -> bool:
        face = photo_dets.xyxy[[k]].astype(np.float64)
        return bool(box_intersection(face, wall_xyxy).sum() >= OVER_WALL * float(np.prod(face[0, 2:] - face[0, :2])))

    return _take_one_face(photo_dets, seats, rest, on_wall, "a tile lying on the wall taken for the flipped tile")


def _in_wall_run(dets: Detections, wall: list[int], seats: list[Layout], rest: np.ndarray) -> int | None:
    """The one face-up tile of a seat lying in the wall's run: on its line (under ``IN_WALL_RUN`` depths off it),
    the wall's backs on both sides of it within a tile and a half: the flipped tile laid where a stack was taken,
    which a seat took into its river or hand (a river's row by the wall lies a depth or more off its line). Taken
    from the seat; an index of the seats' boxes (``rest`` maps them to ``dets``), or None."""
    width, depth, along, place = _wall_line(dets, wall)

    def in_run(k: int) -> bool:
        t, off = place(np.array([k]))
        near = along[np.abs(along - t[0]) < 1.5 * width]
        return bool(off[0] < IN_WALL_RUN * depth and (near < t[0]).any() and (near > t[0]).any())

    return _take_one_face(dets, seats, rest, in_run, "a tile lying in the wall's run taken for the flipped tile")


def _take_one_face(dets: Detections, seats: list[Layout], rest: np.ndarray, fits: Callable[[int], bool],
                   note: str) -> int | None:
    """The one face-up tile a seat holds (in its hand or river, as its lone tile, or as a "meld" of one tile) for
    which ``fits`` (of its index in ``dets``) is true, taken from the seat with ``note``; its index of the seats'
    boxes, or None when there is none or more than one."""
    found = []
    for lay in seats:
        loose = [lay.indicator.box] if lay.indicator is not None else []
        loose += [b for g in lay.melds for b in g.boxes if len(g.tiles) == 1]
        for box in [p.box for p in lay.concealed + lay.river] + loose:
            k = int(rest[box])
            if dets.class_id[k] != BACK and fits(k):
                found.append((lay, box))
    if len(found) != 1:
        return None
    lay, box = found[0]
    _take_out(lay, box, note)
    return box


def _take_out(lay: Layout, box: int, note: str) -> None:
    """Take ``box`` out of a seat's layout (hand, river, lone tile, unplaced, melds), saying why in its notes."""
    lay.concealed = [p for p in lay.concealed if p.box != box]
    lay.river = [p for p in lay.river if p.box != box]
    if lay.indicator is not None and lay.indicator.box == box:
        lay.indicator = None
    lay.unassigned = [u for u in lay.unassigned if u.box != box]
    lay.melds = [g for g in lay.melds if box not in g.boxes]
    lay.notes.append(note)


def _take_loose(seats: list[Layout], box: int) -> int | None:
    """Take ``box`` from the seat that left it loose (in its river, as its lone tile, unplaced, or a "meld" of
    one tile) and return it; None when a seat holds it in its hand or a meld of several tiles."""
    for lay in seats:
        loose = ([p.box for p in lay.river] + ([lay.indicator.box] if lay.indicator is not None else [])
                 + [u.box for u in lay.unassigned] + [g.tiles[0].box for g in lay.melds if len(g.tiles) == 1])
        if box in loose:
            _take_out(lay, box, "a tile by the wall taken for the flipped tile")
            return box
    return None


def _in_line(xyxy: np.ndarray, phi: float) -> np.ndarray:
    """(n, n): box j lies beside box i in a row along one of the table's axes: about one tile on from it
    along the axis, hardly off it across, its box of the same shape (a tile turned alike). True for nearly
    every tile of a hand or a river, even an untidy one, and for few of a heap's, which lie at any angle."""
    centres = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    axes = np.array([[math.cos(phi), math.sin(phi)], [-math.sin(phi), math.cos(phi)]])
    offset = np.abs((centres[None, :, :] - centres[:, None, :]) @ axes.T)
    ext = np.stack([_extents(xyxy, axes[0]), _extents(xyxy, axes[1])], 1)
    rel = offset / np.maximum((ext[:, None, :] + ext[None, :, :]) / 2, 1e-9)
    shape = np.log(np.maximum(xyxy[:, 2] - xyxy[:, 0], 1e-9) / np.maximum(xyxy[:, 3] - xyxy[:, 1], 1e-9))
    alike = np.abs(shape[:, None] - shape[None, :]) < LINE_SHAPE
    beside = ((rel[..., 0] > 0.85) & (rel[..., 0] < 1.25) & (rel[..., 1] < LINE_ACROSS)) | (
        (rel[..., 1] > 0.85) & (rel[..., 1] < 1.25) & (rel[..., 0] < LINE_ACROSS))
    return beside & alike


def find_heap(dets: Detections, taken: set[int], phi: float) -> list[int]:
    """Discards thrown into a heap in the middle of the table: groups of face-up tiles touching at any angle
    (centres under ``HEAP_LINK`` long sides apart) whose centre lies within ``HEAP_CENTRE`` of the table's
    half-size from its centre, fewer than ``HEAP_ALIGNED`` of them in line with a neighbour (a river's rows, even
    seen from a seat, are). Boxes in ``taken`` (the wall, the flipped tile) are left out. Indices of ``dets``."""
    faces = [k for k in range(len(dets)) if k not in taken and int(dets.class_id[k]) != BACK]
    if len(faces) < HEAP_MIN:
        return []
    everything = dets.xyxy.astype(np.float64)
    centre = (everything[:, :2].min(0) + everything[:, 2:].max(0)) / 2
    reach = float(np.mean(everything[:, 2:].max(0) - everything[:, :2].min(0))) / 2
    xyxy = everything[faces]
    centres = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    long = np.maximum(xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1])
    dist = np.hypot(*(centres[:, None, :] - centres[None, :, :]).transpose(2, 0, 1))
    beside = _in_line(xyxy, phi)
    aligned = beside.any(1)
    # Tiles in line with each other, three or more together: rows (a river touching the heap), not the heap.
    in_rows = np.zeros(len(faces), dtype=bool)
    for group in _components(beside | beside.T):
        if len(group) >= HEAP_MIN:
            in_rows[group] = True
    heap: list[int] = []
    for group in _components(dist < HEAP_LINK * (long[:, None] + long[None, :]) / 2):
        if (len(group) >= HEAP_MIN and np.hypot(*(centres[group].mean(0) - centre)) < HEAP_CENTRE * reach
                and aligned[group].mean() < HEAP_ALIGNED):
            heap += [faces[g] for g in group if not in_rows[g]]
    return sorted(heap)


def _wall_pieces(dets: Detections, seats: list[Layout]) -> tuple[list[int], int | None]:
    """Backs a seat's layout took for a 闷豆 (concealed kong) that lie well beyond its hand row, towards the
    centre: pieces of the wall (a 闷豆 lies on its owner's row, the wall's remnant between a hand and its river),
    taken from the seat; the one face-up tile among them, if any, is the flipped tile lying on the wall. So is the
    "闷豆" furthest towards the centre of a seat that holds more than 14 tiles with it and 13 or 14 without.
    Returns (the backs, the face-up tile or None), indices of ``dets``."""
    backs: list[int] = []
    faces: list[int] = []
    centres = dets.centers.astype(np.float64)
    for lay in seats:
        if not lay.concealed or lay.tile_size[1] <= 0:
            continue
        a = math.radians(lay.angle)
        towards_owner = np.array([-math.sin(a), math.cos(a)])
        hand_v = float(np.median([centres[p.box] @ towards_owner for p in lay.concealed]))
        kongs = [k for k, g in enumerate(lay.melds)
                 if any(p.tile == "back" for p in g.tiles) and sum(p.tile != "back" for p in g.tiles) <= 1]
        beyond = {k: (hand_v - float(np.mean([centres[b] @ towards_owner for b in lay.melds[k].boxes])))
                  / lay.tile_size[1] for k in kongs}
        wall_like = [k for k in kongs if beyond[k] > WALL_OFF_ROW]
        # a seat over 14 tiles with a 闷豆 more than its count allows (13 or 14 without it): the one furthest
        # towards the centre is the wall's pieces and maybe the flipped tile on them, by its row from a seat
        seen = len(lay.concealed) + 3 * len(lay.melds)
        if not wall_like and kongs and seen > max(LEGAL_COUNTS) and seen - 3 in LEGAL_COUNTS:
            wall_like = [max(kongs, key=beyond.__getitem__)]
        keep = []
        for k, g in enumerate(lay.melds):
            if k in wall_like:
                backs += [p.box for p in g.tiles if p.tile == "back"]
                faces += [p.box for p in g.tiles if p.tile != "back"]
            else:
                keep.append(g)
        if len(keep) < len(lay.melds):
            lay.melds = keep
            lay.notes.append(WALL_BEYOND_ROW)
    return backs, (faces[0] if len(faces) == 1 else None)


def _isolation(dets: Detections, phi: float) -> np.ndarray:
    """Each box's distance to its nearest other box, in tile sizes along the table's axes (the larger of the two
    offsets, each over the pair's mean extent along that axis): tiles in a row or a river's grid are about 1 apart."""
    if len(dets) < 2:
        return np.full(len(dets), np.inf)
    xyxy = dets.xyxy.astype(np.float64)
    centres = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    axes = np.array([[math.cos(phi), math.sin(phi)], [-math.sin(phi), math.cos(phi)]])
    offset = np.abs((centres[None, :, :] - centres[:, None, :]) @ axes.T)
    ext = np.stack([_extents(xyxy, axes[0]), _extents(xyxy, axes[1])], 1)
    pair = np.maximum((ext[:, None, :] + ext[None, :, :]) / 2, 1e-9)
    dist = (offset / pair).max(2)
    np.fill_diagonal(dist, np.inf)
    return dist.min(1)


def _stray_flipped(dets: Detections, seats: list[Layout]) -> int | None:
    """The flipped tile when no wall was seen (its stacked backs are hard to find): the most isolated face-up
    tile that no seat's hand or meld holds — one the seats could not place (a lone tile, a "meld" of one tile) at
    least ``STRAY_UNPLACED`` tile sizes from any other face-up tile, or a river tile at least ``STRAY_ALONE`` (a
    lone tile between a hand and its river); it leaves the seat that had it. Not a box under ``WEAK_BOX``: the
    detector kept it only for lying in a row beside sure tiles, so alone it is a ghost. None without one."""
    candidates: dict[int, tuple[Layout, float]] = {}
    for lay in seats:
        for p in lay.river:
            candidates[p.box] = (lay, STRAY_ALONE)
        unplaced = [u.box for u in lay.unassigned if not u.reason.startswith(SECOND_BOXES)]
        unplaced += [lay.indicator.box] if lay.indicator is not None else []
        unplaced += [g.tiles[0].box for g in lay.melds if len(g.tiles) == 1]  # a "meld" of one tile
        for k in unplaced:
            candidates[k] = (lay, STRAY_UNPLACED)
    faces = np.flatnonzero(dets.class_id != BACK)
    named = [k for k in candidates if CLASS_NAMES[int(dets.class_id[k])] in SUITED_TILES]
    if not named or len(faces) < 2:
        return None
    alone = np.zeros(len(dets))
    alone[faces] = _isolation(dets[faces], table_angle(dets.xyxy.astype(np.float64)))  # backs may be the wall's
    fit = [k for k in named if alone[k] >= candidates[k][1] and dets.confidence[k] >= WEAK_BOX]
    if not fit:
        return None
    best = max(fit, key=lambda k: alone[k])
    _take_out(candidates[best][0], best, "a lone tile away from the rows taken for the flipped tile")
    return best


def _without_gap_box(dets: Detections, lay: Layout) -> Layout:
    """A seat holding 14 tiles or more whose hand row holds a weak box (``WEAK_BOX``) that is face down, breaks
    the row's sorted order or is narrower than the row's tiles (``GAP_NARROW``): the detector can find a "tile"
    in a gap between the hand and a meld (the table showing through), and the box then joins them into one row.
    The seat is laid out again without it; that layout is kept when a meld splits off (the box unassigned;
    闷豆-like wall pieces are counted still: ``_wall_pieces`` takes them later)."""
    if lay.count < max(LEGAL_COUNTS) or not lay.concealed:
        return lay
    hand = [p.box for p in lay.concealed]
    members = (hand + [b for g in lay.melds for b in g.boxes] + [p.box for p in lay.river] + [u.box for u in lay.unassigned]
               + ([lay.indicator.box] if lay.indicator is not None else []))
    a = math.radians(lay.angle)
    along = _extents(dets.xyxy[hand].astype(np.float64), np.array([math.cos(a), math.sin(a)]))
    narrow = dict(zip(hand, along < GAP_NARROW * float(np.median(along)), strict=True))
    for box in sorted((b for b in hand if dets.confidence[b] < WEAK_BOX), key=lambda b: float(dets.confidence[b])):
        rest = [b for b in hand if b != box]
        if (dets.class_id[box] != BACK and not narrow[box]
                and sort_breaks(dets.class_id[hand]) <= sort_breaks(dets.class_id[rest])):
            continue
        again = build(arrange(dets, np.array([b for b in members if b != box]), math.radians(lay.angle)), dets.facing)
        if len(again.melds) > len(lay.melds) and again.count < lay.count:
            again.unassigned.append(Unassigned(box, "a weak box between the hand and a meld (no tile: the table "
                                                    "showing through the gap)"))
            return again
    return lay


def _rejoin_hand(dets: Detections, lay: Layout) -> None:
    """A seat under 13 tiles whose hand row goes on past one end in a piece the one-hand layout left beside it
    (mixed tiles, no meld: from a seat the far hand's row bends in the top view), when the piece makes the count
    13 or 14: the piece is the rest of the hand, joined at that end in the owner's order. Without such a piece, a
    lone box on the hand's line just past an end, left out as unlike a tile there (from a seat a side seat's
    near tiles show large), is its end tile when that makes the count."""
    if not lay.concealed or lay.count >= min(LEGAL_COUNTS):
        return
    beside = [u.box for u in lay.unassigned if u.reason.startswith(BESIDE_HAND)]
    lone = [u.box for u in lay.unassigned if u.reason.startswith(UNLIKE_HERE)]
    if not (beside and _join_at_ends(dets, lay, beside, whole=True)) and lone:
        _join_at_ends(dets, lay, lone, whole=False)


def _join_at_ends(dets: Detections, lay: Layout, piece: list[int], whole: bool) -> bool:
    """Join ``piece`` (boxes the seat left unassigned) to the hand's ends when the count is then 13 or 14: all of
    it (``whole``: at one end, the piece lying along the hand's line), or those of it that lie on the line just
    past either end. A box on one of the hand's tiles is that tile boxed twice. Whether it was joined."""
    a = math.radians(lay.angle)
    along, towards_owner = np.array([math.cos(a), math.sin(a)]), np.array([-math.sin(a), math.cos(a)])
    centres = dets.centers.astype(np.float64)
    width, depth = lay.tile_size
    hand = [p.box for p in lay.concealed]
    # a box of the piece on top of one of the hand's is that tile boxed twice where the two meet
    near = {b: np.hypot(*(centres[hand] - centres[b]).T) for b in piece}
    twice = {b: hand[int(d.argmin())] for b, d in near.items() if d.min() < REJOIN_TWICE * width}
    piece = [b for b in piece if b not in twice]
    if not piece:
        return False
    u_hand, u_piece = centres[hand] @ along, centres[piece] @ along
    off = np.abs(centres[piece] @ towards_owner - float(np.median(centres[hand] @ towards_owner)))
    after, before = u_piece > u_hand.max(), u_piece < u_hand.min()
    on_line = off <= REJOIN_ACROSS * depth
    if whole:  # the piece starts close past one end
        if not on_line.all() or not ((after.all() and u_piece.min() - u_hand.max() < REJOIN_GAP * width)
                                     or (before.all() and u_hand.min() - u_piece.max() < REJOIN_GAP * width)):
            return False
    else:
        after &= u_piece - u_hand.max() < REJOIN_GAP * width
        before &= u_hand.min() - u_piece < REJOIN_GAP * width
        keep = on_line & (after | before)
        piece, u_piece, after = [b for b, k in zip(piece, keep, strict=True) if k], u_piece[keep], after[keep]
    if not piece or lay.count + len(piece) not in LEGAL_COUNTS:
        return False
    order = np.argsort(u_piece)
    first = [PlacedTile(piece[k], CLASS_NAMES[int(dets.class_id[piece[k]])]) for k in order if not after[k]]
    last = [PlacedTile(piece[k], CLASS_NAMES[int(dets.class_id[piece[k]])]) for k in order if after[k]]
    lay.concealed = first + lay.concealed + last
    if whole:
        lay.unassigned = [Unassigned(u.box, f"overlaps box {twice[u.box]} (two boxes on one tile)") if u.box in twice
                          else u for u in lay.unassigned]
    joined = set(piece)
    lay.unassigned = [u for u in lay.unassigned if u.box not in joined]
    lay.notes.append(f"{len(piece)} tile(s) beside the hand's end taken into it (the count says they are the hand's)")
    return True


def _meld_at_hand_end(lay: Layout) -> None:
    """Two to four of one tile at an end of a hand row otherwise sorted, breaking its order: a meld laid against
    the hand (from a seat the gap closes up, or shows as a missed tile; two seen: a pong with one tile missed),
    when the count of the tiles seen is then legal (two alike: and was not; a pair out of order is as likely a hand
    not quite sorted). Two melds laid against it in a row are taken the same way, when the hand is sorted only
    without both. A hand is sorted by its owner; a triplet that keeps the order stays concealed. First, a box that
    names no tile of the set ("other") between two alike is a piece of a tile boxed twice, and leaves the row."""
    if len(lay.concealed) < LAID_SORTED + 2:
        return
    # A box no tile of the set names, between two of one tile: a piece of a tile of a meld boxed twice
    names = [p.tile for p in lay.concealed]
    piece = [k for k in range(1, len(names) - 1) if names[k] == "other" and names[k - 1] == names[k + 1] != "back"]
    if piece:
        lay.unassigned += [Unassigned(lay.concealed[k].box, "a piece of the tile beside it (no tile of the set "
                                                           "between two alike)") for k in piece]
        lay.concealed = [p for k, p in enumerate(lay.concealed) if k not in piece]
    seen = len(lay.concealed) + 3 * len(lay.melds)  # a gap before such a meld is no missed tile (no hole)
    names = [p.tile for p in lay.concealed]
    cls = np.array([CLASS_NAMES.index(n) if n in CLASS_NAMES else -1 for n in names])
    if not sort_breaks(cls):
        return
    found = []
    for end in (1, -1):
        row, row_cls = (names, cls) if end == 1 else (names[::-1], cls[::-1])
        runs: list[int] = []
        while len(runs) < 2:
            left = row[:len(row) - sum(runs)]
            run = next((n for n in range(4, 1, -1) if len(set(left[-n:])) == 1), 0)
            if not run or left[-1] == "back" or len(left) - run < LAID_SORTED - 2:
                break
            runs.append(run)
            if not sort_breaks(row_cls[:len(row) - sum(runs)]):
                found.append((end, runs))
                break
    if len(found) != 1:  # none, or either end could be it
        return
    end, runs = found[0]
    if seen - sum(runs) + 3 * len(runs) not in LEGAL_COUNTS:
        return
    if seen in LEGAL_COUNTS and min(runs) < 3:  # two alike: only when the count says a tile is missing
        return
    for run in runs:
        tiles = lay.concealed[-run:] if end == 1 else lay.concealed[:run]
        lay.concealed = lay.concealed[:-run] if end == 1 else lay.concealed[run:]
        tile = tiles[0].tile
        lay.melds.append(MeldGroup("kong" if run == 4 else "pong", tile, list(tiles), missing=max(0, 3 - run),
                                   confidence=0.6))
        lay.notes.append(f"{run} of {tile} at the hand's end, out of its order, taken for a meld laid against it")
    lay.holes = 0


def _short_meld_over_count(lay: Layout) -> None:
    """A seat over 14 tiles holding "melds" of two boxes (a pong or a 闷豆 seen in part) whose removal makes its
    count legal: stray boxes (the wall's, seen a stack or two at a time) are likelier than a seat holding more tiles
    than the game allows. The fewest such melds, weakest first, are left out."""
    if lay.count <= max(LEGAL_COUNTS):
        return
    short = sorted((g for g in lay.melds if len(g.tiles) <= 2), key=lambda g: g.confidence)
    for n in range(1, len(short) + 1):
        if lay.count - 3 * n in LEGAL_COUNTS:
            lay.melds = [g for g in lay.melds if not any(g is w for w in short[:n])]
            lay.unassigned += [Unassigned(b, "two boxes taken for a meld the count cannot hold")
                               for g in short[:n] for b in g.boxes]
            return


def _gather_river(dets: Detections, lay: Layout) -> None:
    """Tiles the one-hand layout left over that lie beyond the seat's hand, towards the table centre, are its
    discards (a river the one-hand layout took for tiles beside the hand): the river is laid out again with them,
    in rows by the distance from the owner (nearest first), each row from the owner's left."""
    if not lay.concealed:
        return
    a = math.radians(lay.angle)
    along, towards_owner = np.array([math.cos(a), math.sin(a)]), np.array([-math.sin(a), math.cos(a)])
    centres = dets.centers.astype(np.float64)
    depth = lay.tile_size[1]
    hand_v = float(np.median(centres[[p.box for p in lay.concealed]] @ towards_owner))
    loose = [u for u in lay.unassigned if not u.reason.startswith(SECOND_BOXES)
             and centres[u.box] @ towards_owner < hand_v - RIVER_BEYOND * depth]
    if not loose or depth <= 0:
        return
    river = lay.river + [PlacedTile(u.box, CLASS_NAMES[int(dets.class_id[u.box])]) for u in loose]
    river.sort(key=lambda p: -float(centres[p.box] @ towards_owner))
    rows: list[list[PlacedTile]] = []
    last = math.inf
    for p in river:
        v = float(centres[p.box] @ towards_owner)
        if last - v > RIVER_ROW_GAP * depth or not rows:
            rows.append([])
        rows[-1].append(p)
        last = v
    lay.river = [p for row in rows for p in sorted(row, key=lambda p: float(centres[p.box] @ along))]
    taken = {u.box for u in loose}
    lay.unassigned = [u for u in lay.unassigned if u.box not in taken]
    lay.notes.append(f"{len(loose)} {RIVER_GATHERED}")


def _single_tiles(reading: Reading, lay: Layout) -> list[tuple[int, str]]:
    """(seat box, tile read) of the tiles read one box at a time: the concealed row, the river, a lone tile."""
    out = [(p.box, t) for p, t in zip(lay.concealed, reading.concealed_tiles, strict=False)]
    out += [(p.box, t) for p, t in zip(lay.river, reading.river, strict=False)]
    if lay.indicator is not None and reading.indicator is not None:
        out.append((lay.indicator.box, reading.indicator))
    return out


def _meld_copies(reading: Reading) -> Counter[str]:
    """Copies each meld holds: a 碰 (pong) three, a 杠 (kong, open or concealed) four."""
    counts: Counter[str] = Counter()
    for m in reading.melds:
        if m.tile in SUITED_TILES:
            counts[m.tile] += 3 if m.type == "pong" else 4
    return counts


def _alternatives(dets: Detections, box: int) -> list[tuple[str, float]]:
    """The box's suited classes, most probable first, with their probabilities."""
    if dets.probs is not None:
        order = np.argsort(-dets.probs[box])
        return [(CLASS_NAMES[c], float(dets.probs[box, c])) for c in order if CLASS_NAMES[c] in SUITED_TILES][:3]
    return [(CLASS_NAMES[c], float(p)) for c, p in zip(dets.top3_class[box], dets.top3_prob[box], strict=True)
            if c >= 0 and CLASS_NAMES[c] in SUITED_TILES]


def read_table_tiles(dets: Detections, table: TableLayout, image: np.ndarray | None = None) -> TableTiles:
    """Each seat read with the rules (``vision.reading.read``), then at most 4 copies of a kind on the table."""
    sub = table.seat_dets
    readings = [read(sub, lay, image) for lay in table.seats]
    for r, lay in zip(readings, table.seats, strict=True):
        # A river gathered or wall pieces taken out are how a table is laid out, not a grouping to retake
        if lay.notes and all(n.endswith(ROUTINE_NOTES) for n in lay.notes):
            r.retake = [x for x in r.retake if x.code != "ambiguous_layout" or x.boxes]
            r.ok = not r.retake
    flipped = None
    if table.flipped is not None:
        name = CLASS_NAMES[int(dets.class_id[table.flipped])]
        flipped = name if name in SUITED_TILES else None
    out = TableTiles(readings, flipped)
    # Every tile read, as (photo box or None for a meld, tile); melds count 3 or 4 copies and are not changed here.
    singles = [(int(table.seat_boxes[b]), t) for r, lay in zip(readings, table.seats, strict=True)
               for b, t in _single_tiles(r, lay)]
    if table.flipped is not None and flipped is not None:
        singles.append((table.flipped, flipped))
    heap = [(b, CLASS_NAMES[int(dets.class_id[b])]) for b in table.heap]
    singles += [(b, t) for b, t in heap if t in SUITED_TILES]  # the heap's tiles count, given to no seat
    counts = Counter(t for _, t in singles if t in SUITED_TILES)
    for r in readings:
        counts += _meld_copies(r)
    reading_of = dict(singles)
    for kind in sorted(k for k, c in counts.items() if c > COPIES):
        # The cheapest changes first: a box whose next suited class is nearly as likely as this kind.
        options = []
        for box, tile in singles:
            if tile != kind:
                continue
            alts = _alternatives(dets, box)
            p_kind = next((p for t, p in alts if t == kind), max(float(dets.confidence[box]), 1e-6))
            for alt, p in alts:
                if alt != kind and p > 0:
                    options.append((math.log(max(p_kind, 1e-6) / p), box, alt, p))
        for cost, box, alt, p in sorted(options):
            if counts[kind] <= COPIES:
                break
            if reading_of[box] != kind or counts[alt] >= COPIES or cost > MAX_SETTLE_COST:
                continue
            reading_of[box] = alt
            counts[kind] -= 1
            counts[alt] += 1
            out.changed[box] = alt
            out.doubtful.append(Doubt((box,), alt, tuple((t, q) for t, q in _alternatives(dets, box)),
                                      f"{kind} was read {COPIES + 1}+ times on the table: this tile was the "
                                      f"likeliest other reading ({alt}, p={p:.2f})"))
        if counts[kind] > COPIES:
            boxes = tuple(b for b, _ in singles if reading_of[b] == kind)
            out.retake.append(Retake("too_many_copies", f"{counts[kind]} copies of {kind} read on the table, and "
                                                        f"a set has 4: check these tiles or retake the photo", boxes))
    if table.flipped is not None and table.flipped in out.changed:
        out.flipped = out.changed[table.flipped]
    out.heap = [out.changed.get(b, t) for b, t in heap]
    return out
