"""A photo of the whole table at the end of a round → the round: four seats' hands, melds and rivers, the flipped
tile (翻鸡), a winner guess, and every box with its seat and role.

Stages: decode (``pipeline.images``) → detect (the detector looks closer where the tiles are small,
``vision.tiling``) → table layout (``vision.table``: wall, flipped tile, each tile's seat, each seat laid out in
its own frame) → reading (each seat with the rules, then at most 4 copies of a kind on the whole table) → winner
guess (the seat whose tiles make a complete hand, by the pipeline's hand analysis). ``POST /v1/read-table`` and
``zhuoji read-table --json`` both answer :func:`read_table_bytes`'s :class:`TableReading`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import BinaryIO, Literal

import numpy as np
from pydantic import Field, ValidationError

from pipeline.errors import Refused
from pipeline.hand import analyze
from pipeline.images import decode_photo
from pipeline.model_base import OutModel
from pipeline.models import DoubtOut, HandRequest, MeldIn, RetakeReason
from scoring.tiles import to_mpsz
from vision.annotate import draw_detections
from vision.classes import CLASS_NAMES, SUITED_TILES
from vision.deadline import Deadline, check
from vision.detect import Detector
from vision.detections import Detections
from vision.reading import Doubt
from vision.table import SECOND_BOXES, TableLayout, TableTiles, read_table_tiles, table_layout

PHOTO_WIDE = ("blurry", "glare")  # retakes about the photo, not a seat's tiles
Role = Literal["hand", "meld", "river", "heap", "wall", "flipped", "unassigned"]


# ------------------------------------------------------------------------------------------ the answer


class TableMeld(OutModel):
    """A meld as laid: 碰 pong, 杠 kong (open), 闷豆 concealed kong; ``tile`` null when every tile lies face down."""

    type: Literal["pong", "kong", "concealed_kong"]
    tile: str | None


class TableSeat(OutModel):
    """One seat's tiles: the concealed hand in laid order (the owner's left to right; "?" = unreadable), the melds,
    the river (discards in order: rows of six from the owner's left, the row nearest the owner first)."""

    seat: int = Field(ge=0, le=3, description="0 = nearest the bottom of the photo, then in the order of play: "
                                              "1 right, 2 top, 3 left")
    concealed: list[str]
    melds: list[TableMeld]
    river: list[str]
    river_separated: bool = Field(description="false: this seat's discards lie in a heap in the middle with "
                                               "others', not told apart (its river is then empty; see ``heap``)")
    doubtful: list[DoubtOut] = Field(description="tiles of this seat still uncertain (boxes: indices of "
                                                 "``detections``), with their alternatives")


class TableDetection(OutModel):
    tile: str = Field(description="the tile as read (after the rules), back (face down) or other")
    box: list[float] = Field(description="x1, y1, x2, y2 in the photo's pixels")
    confidence: float
    seat: int | None = Field(description="the seat whose tile it is; null for the wall, the flipped tile and the "
                                         "heap")
    role: Role


class TableReading(OutModel):
    """``POST /v1/read-table`` and ``zhuoji read-table --json``: the round a photo of the table shows."""

    seats: list[TableSeat] = Field(description="the four seats, 0..3")
    flipped: str | None = Field(description="翻鸡: the face-up tile on or beside the wall; null when none is seen")
    heap: list[str] = Field(description="discards thrown into a heap in the middle, as read: given to no seat, "
                                        "counted for the at-most-4-copies rule")
    winner: int | None = Field(description="the seat whose tiles make a complete hand (14 counting melds as 3), "
                                           "for the players to confirm; null: none, or more than one")
    retake: list[RetakeReason] = Field(description="why a new photo would help (e.g. too_many_copies: the photo is "
                                                   "impossible as read)")
    detections: list[TableDetection]


# ------------------------------------------------------------------------------------------ the stages


@dataclass
class TablePhoto:
    """One table photo through the vision stages (``image``'s pixels; ``full_size``: the photo's own size)."""

    image: np.ndarray
    dets: Detections
    table: TableLayout
    tiles: TableTiles
    seconds: float
    full_size: tuple[int, int] | None = None


# A table photo holds tiles at every quarter turn (each seat's tiles upright for its owner) and, from a seat, far
# tiles a third the size of near ones, squashed by the slant: the detector looks at it also turned a quarter each
# way (the side seats' tiles then stand upright or upside down, as most training tiles do) and again at every tile
# found, in windows where they reach TABLE_TILE_PX (not only where they are too small to be found at all). On 96
# held-out-style scenes (docs/experiments/table-photo.md, seed 0, with the table layout's fixes of that change):
# round exact 0.583 -> 0.823, seat exact 0.807 -> 0.953, river exact 0.797 -> 0.935; windows of 45 px tiles read
# fewer rounds from a seat. Every crop is also looked at turned (not only doubtful ones): round exact 0.792 -> 0.802
# (seed 1: 0.729 -> 0.760). 4-6 detector runs, a 12 MP photo p50 1.07 s through the service (goal 1.5 s).
TABLE_TURNS = (1, 3)
TABLE_TILE_PX = 80


def detect_table(detector: Detector, image: np.ndarray, deadline: Deadline | None = None,
                 sharper: np.ndarray | None = None) -> Detections:
    """The detector's boxes on a decoded table photo, looked at as a table needs (``TABLE_TURNS``, windows);
    ``sharper``: the photo at full size when ``image`` was decoded reduced (small tiles' crops are cut from it)."""
    return detector(image, deadline=deadline, turned=TABLE_TURNS, tile_px=TABLE_TILE_PX, turn_all=True,
                    sharper=sharper)


def read_table_photo(detector: Detector, image: np.ndarray, deadline: Deadline | None = None,
                     start: float | None = None, full_size: tuple[int, int] | None = None,
                     found: Detections | None = None, sharper: np.ndarray | None = None) -> TablePhoto:
    """Detect, lay out and read one decoded table photo; ``found``: its detections when the caller has them (live
    mode's tracked tiles): the detector does not run again; ``sharper``: as :func:`detect_table` takes it."""
    start = time.perf_counter() if start is None else start
    dets = detect_table(detector, image, deadline, sharper) if found is None else found
    check(deadline)
    table = table_layout(dets)
    tiles = read_table_tiles(dets, table, image)
    return TablePhoto(image, dets, table, tiles, time.perf_counter() - start, full_size)


def _roles(photo: TablePhoto) -> dict[int, tuple[int | None, Role, str]]:
    """Photo box → (seat, role, tile as read) for every box the layout placed."""
    table, tiles = photo.table, photo.tiles
    out: dict[int, tuple[int | None, Role, str]] = {b: (None, "wall", "back") for b in table.wall}
    if table.flipped is not None:
        out[table.flipped] = (None, "flipped", tiles.flipped or CLASS_NAMES[int(photo.dets.class_id[table.flipped])])
    for b, t in zip(table.heap, tiles.heap, strict=True):
        out[b] = (None, "heap", t)
    for seat, (lay, reading) in enumerate(zip(table.seats, tiles.readings, strict=True)):
        box = table.seat_boxes
        for p, t in zip(lay.concealed, reading.concealed_tiles, strict=False):
            out[int(box[p.box])] = (seat, "hand", t)
        for group, meld in zip(lay.melds, reading.melds, strict=False):
            for p in group.tiles:
                name = CLASS_NAMES[int(table.seat_dets.class_id[p.box])]
                out[int(box[p.box])] = (seat, "meld", "back" if name == "back" or meld.tile is None else meld.tile)
        for p, t in zip(lay.river, reading.river, strict=False):
            out[int(box[p.box])] = (seat, "river", t)
        if lay.indicator is not None and reading.indicator is not None:  # a lone tile by the river: a discard
            out[int(box[lay.indicator.box])] = (seat, "river", reading.indicator)
    for box, tile in tiles.changed.items():
        seat, role, _ = out[box]
        out[box] = (seat, role, tile)
    return out


def _seat_doubts(photo: TablePhoto, seat: int) -> list[DoubtOut]:
    """The seat's doubts (its own reading's and the whole table's), boxes as indices of the photo's detections."""
    box, lay = photo.table.seat_boxes, photo.table.seats[seat]
    doubts = [Doubt(tuple(int(box[b]) for b in d.boxes), d.tile, d.alternatives, d.reason)
              for d in photo.tiles.readings[seat].doubtful]
    placed = [*lay.concealed, *lay.river, *(p for g in lay.melds for p in g.tiles),
              *([lay.indicator] if lay.indicator is not None else [])]
    mine = {int(box[p.box]) for p in placed}
    doubts += [d for d in photo.tiles.doubtful if set(d.boxes) & mine]
    return [DoubtOut.of(d) for d in doubts]


def _seat(photo: TablePhoto, seat: int) -> TableSeat:
    lay, reading, box = photo.table.seats[seat], photo.tiles.readings[seat], photo.table.seat_boxes
    changed = photo.tiles.changed

    def read_as(placed_box: int, tile: str) -> str:
        return changed.get(int(box[placed_box]), tile)

    river = [read_as(p.box, t) for p, t in zip(lay.river, reading.river, strict=False)]
    if lay.indicator is not None and reading.indicator is not None:
        river.append(read_as(lay.indicator.box, reading.indicator))
    melds = [TableMeld(type="concealed_kong" if m.type == "concealed_kong" else "pong" if m.type == "pong" else "kong",
                       tile=m.tile) for m in reading.melds]
    return TableSeat(seat=seat, concealed=[read_as(p.box, t) for p, t in
                                           zip(lay.concealed, reading.concealed_tiles, strict=False)],
                     melds=melds, river=river, river_separated=photo.table.river_separated[seat],
                     doubtful=_seat_doubts(photo, seat))


def complete_hand(seat: TableSeat) -> bool:
    """The seat's tiles make a complete hand (成牌): 14 counting each meld as 3, a win by the hand analysis with the
    last tile laid (the drawn tile, set at the right end) as the winning tile."""
    if len(seat.concealed) + 3 * len(seat.melds) != 14 or not seat.concealed:
        return False
    if any(t not in SUITED_TILES for t in seat.concealed) or any(m.tile is None for m in seat.melds):
        return False
    win = seat.concealed[-1]
    try:
        req = HandRequest(concealed=to_mpsz(seat.concealed[:-1]), win_tile=win, self_drawn=True,
                          melds=[MeldIn(type=m.type, tile=m.tile) for m in seat.melds])
        return analyze(req).status == "win"
    except (Refused, ValidationError):  # e.g. five copies of a tile in one hand
        return False


def winner_guess(seats: list[TableSeat]) -> int | None:
    """The one seat whose tiles make a complete hand; None when no seat's do, or more than one seat's."""
    complete = [s.seat for s in seats if complete_hand(s)]
    return complete[0] if len(complete) == 1 else None


def table_reading(photo: TablePhoto) -> TableReading:
    """The answer: the seats, the flipped tile, the winner guess, the retakes, every box with its seat and role."""
    seats = [_seat(photo, s) for s in range(4)]
    retake = [RetakeReason(code=r.code, message=r.message, boxes=list(r.boxes)) for r in photo.tiles.retake]
    box = photo.table.seat_boxes
    whole: dict[str, RetakeReason] = {}
    for seat, reading in enumerate(photo.tiles.readings):
        # A seat's own retakes; "no tiles" for an empty seat is said once below, as is a photo blurred or glared
        # (said once for the photo, with the boxes of every seat where it was seen).
        for r in reading.retake:
            boxes = [int(box[b]) for b in r.boxes]
            if r.code in PHOTO_WIDE:
                said = whole.setdefault(r.code, RetakeReason(code=r.code, message=r.message, boxes=[]))
                said.boxes += boxes
            elif r.code != "no_tiles":
                retake.append(RetakeReason(code=r.code, message=f"seat {seat}: {r.message}", boxes=boxes))
        lay = photo.table.seats[seat]
        loose = [int(box[u.box]) for u in lay.unassigned if not u.reason.startswith(SECOND_BOXES)]
        if loose:  # tiles on this seat's side that are in no row: a heap, or a river too untidy to follow
            retake.append(RetakeReason(code="unplaced_tiles", boxes=loose, message=(
                f"seat {seat}: {len(loose)} tile(s) on this side could not be placed in the hand, a meld or the "
                "river (a heap, or a river too untidy): check this seat's river, or lay it in rows and retake")))
    retake += whole.values()
    mixed = [s.seat for s in seats if not s.river_separated]
    if mixed:
        retake.append(RetakeReason(code="river_not_separated", boxes=list(photo.table.heap), message=(
            f"the river of seat(s) {', '.join(map(str, mixed))} could not be separated: their discards lie in a heap "
            f"in the middle ({len(photo.table.heap)} tile(s) read there, given to no seat); type their rivers if "
            "they matter")))
    empty = [s.seat for s in seats if not s.concealed and not s.melds]
    if empty:
        retake.append(RetakeReason(code="seat_not_found", message="no hand found for seat(s) "
                                   f"{', '.join(map(str, empty))}: photograph the whole table, every hand laid face up"))
    roles = _roles(photo)
    dets = photo.dets.rescaled(photo.full_size) if photo.full_size else photo.dets
    detections = []
    for i, d in enumerate(dets.to_json()):
        seat, role, tile = roles.get(i, (None, "unassigned", d["tile"]))
        detections.append(TableDetection(tile=tile, box=d["box"], confidence=d["confidence"], seat=seat, role=role))
    return TableReading(seats=seats, flipped=photo.tiles.flipped, heap=photo.tiles.heap, winner=winner_guess(seats),
                        retake=retake, detections=detections)


def read_table(detector: Detector, image: np.ndarray, deadline: Deadline | None = None) -> TableReading:
    """One decoded photo of the table → :class:`TableReading`."""
    return table_reading(read_table_photo(detector, image, deadline))


def read_table_bytes(detector: Detector, data: bytes | BinaryIO, field: str = "image",
                     deadline: Deadline | None = None) -> TablePhoto:
    """:func:`read_table_photo` on a photo's bytes (decoded here, a large JPEG at the reduced size the detector
    needs, and twice that for the crops of its small tiles): what ``POST /v1/read-table`` and ``zhuoji
    read-table`` run."""
    start = time.perf_counter()
    if not isinstance(data, bytes | bytearray):
        data = data.read()
    min_side = getattr(detector, "min_side", None)  # None: a stand-in detector
    image, full_size = decode_photo(data, field, min_side)
    # A 12 MP photo is decoded at half size for the detector, where the far seats' tiles are 20-30 px: their
    # crops are cut from the full size instead (docs/experiments/table-photo.md, "A phone's photo"); a larger
    # photo from one reduction step less (twice the detector's side), not at its full 50 MP.
    reduced = (image.shape[1], image.shape[0]) != full_size
    sharper = decode_photo(data, field, 2 * min_side)[0] if reduced and min_side else None
    return read_table_photo(detector, image, deadline, start, full_size, sharper=sharper)


def annotated_table(photo: TablePhoto) -> np.ndarray:
    """The photo with each box labelled by the tile as read."""
    read_ids = photo.dets.class_id.copy()
    for box, (_seat, _role, tile) in _roles(photo).items():
        if tile in CLASS_NAMES:
            read_ids[box] = CLASS_NAMES.index(tile)
    shown = Detections(photo.dets.xyxy, photo.dets.confidence, read_ids, image_size=photo.dets.image_size)
    return draw_detections(photo.image, shown)
