"""Live mode for a camera fixed over the table (``zhuoji live --table``): it proposes the round when it sees the hands
laid down at the end of it.

Frames are watched cheaply: :class:`vision.tracking.ViewChange` compares each frame, on a small grey copy, with the
one that began the current still spell (a few ms a frame). The whole table is read (the detector, then
:func:`pipeline.table_photo.read_table_photo`, the reading behind ``zhuoji read-table``) only on a view that has
been still for ``settle`` frames, and once a still spell has told what it can, not again until the view changes:

* a reading that shows no hands laid down (:func:`laid_down`) ends the spell's looks, and arms the watch: the next
  table laid down is a round to propose; but one that shows all but one of the hands needed, or follows a look of
  a laid-down table in the same spell, is a hand missed: the spell looks again;
* on a laid-down table the spell's looks are voted tile by tile (:class:`vision.tracking.TileTracks`: each box's
  name is the mean of its looks, a box missed once is kept), so that one look's misread tile is outvoted; the
  round is proposed once two looks in a row read the same hands, melds and flipped tile (:func:`round_key`), at
  most ``looks`` looks a spell;
* after a proposal the watch is disarmed until a settled view shows no laid-down hands (the tiles pushed in, the
  next deal): the same table seen again after a hand passed over it is not proposed again, and a table read as
  nearly the same (:func:`same_table`) as the last one proposed never is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pipeline.table_photo import TableReading, TableSeat, detect_table, read_table_photo, table_reading
from vision.classes import SUITED_TILES
from vision.detect import Detector
from vision.detections import Detections
from vision.tracking import TileTracks, ViewChange

SETTLE_FRAMES = 5  # frames the view must stay unchanged before the table is read
LOOKS_PER_SPELL = 6  # readings of one still spell at most, while two in a row do not agree
HAND_TILES = (12, 15)  # a laid hand: its face-up concealed tiles + 3 per meld (13, or 14 for the winner; one tile
# missed, or one box too many)
MIN_CONCEALED = 4  # and at least this many face-up concealed tiles (a hand with three melds keeps four)
MIN_SEATS = 3  # seats showing a laid hand for the table to be laid down
SAME_TABLE = 0.8  # share of tiles in common from which two readings are the same table state


def face_up(tiles: list[str]) -> int:
    return sum(t in SUITED_TILES for t in tiles)


def shows_hand(seat: TableSeat) -> bool:
    """The seat's hand lies face up: its face-up concealed tiles and melds (3 each) count a hand, give or take a
    tile. During play the hands stand (their backs or tops face the camera) and the reading finds no such row: the
    row it takes for a hand is then the river's nearest row, six tiles at most (with two or three melds that counts
    a hand too: hence three seats of four)."""
    concealed = face_up(seat.concealed)
    return concealed >= MIN_CONCEALED and HAND_TILES[0] <= concealed + 3 * len(seat.melds) <= HAND_TILES[1]


def hands_shown(reading: TableReading) -> int:
    """The seats that show a hand laid face up."""
    return sum(shows_hand(s) for s in reading.seats)


def laid_down(reading: TableReading) -> bool:
    """The table at the end of a round: at least ``MIN_SEATS`` seats show a hand laid face up."""
    return hands_shown(reading) >= MIN_SEATS


def round_key(reading: TableReading) -> tuple:
    """What two looks must agree on: what settles the round, every seat's hand and melds and the flipped tile (the
    issue's "round exact"). The rivers are voted with the rest but not asked to agree: with their 40–60 small
    tiles, one of them read two ways on alternate looks would hold back a round whose hands are read right."""
    return tuple((tuple(s.concealed), tuple((m.type, m.tile) for m in s.melds)) for s in reading.seats), reading.flipped


def _seat_tiles(seat: TableSeat) -> Counter[str]:
    return Counter([*seat.concealed, *seat.river, *(m.tile or "back" for m in seat.melds)])


def same_table(a: TableReading, b: TableReading) -> float:
    """Share of the tiles the two readings have in common, seat by seat (hands, melds, rivers): 1.0 the same reading,
    near 0 a new round."""
    common = total = 0
    for sa, sb in zip(a.seats, b.seats, strict=True):
        ta, tb = _seat_tiles(sa), _seat_tiles(sb)
        common += sum((ta & tb).values())
        total += max(sum(ta.values()), sum(tb.values()))
    return common / total if total else 1.0


@dataclass(frozen=True)
class Proposal:
    """A round proposed: the frame it was read on (the second of the two that agreed) and the reading."""

    frame: int
    reading: TableReading


@dataclass
class WatchStats:
    """What a watch has done so far."""

    frames: int = 0  # frames watched
    looks: int = 0  # whole-table readings run
    proposals: int = 0


def read_found(detector: Detector, frame: np.ndarray, found: Detections) -> TableReading:
    """The table read from boxes already found on ``frame`` (one look's, or the looks' voted tracks)."""
    return table_reading(read_table_photo(detector, frame, found=found))


ReadTable = Callable[[Detector, np.ndarray, Detections], TableReading]


def spell_tracks() -> TileTracks:
    """A still spell's tiles over its looks: each box named by the mean of its looks, counted from its first look
    (a table laid down is read on the first look), kept through one look that misses it."""
    return TileTracks(min_hits=1, max_misses=1)


class RoundWatch:
    """Feed it a fixed camera's frames in order (:meth:`add`); it answers a :class:`Proposal` when the hands have
    been laid down and two looks in a row of a still view agree (:func:`round_key`), once per round."""

    def __init__(self, detector: Detector, settle: int = SETTLE_FRAMES, looks: int = LOOKS_PER_SPELL,
                 read: ReadTable = read_found) -> None:
        if settle < 1 or looks < 2:
            raise ValueError("settle takes a whole number ≥ 1 (frames), looks ≥ 2")
        self.detector, self.settle, self.max_looks, self.read = detector, settle, looks, read
        self.view = ViewChange()
        self.tracks = spell_tracks()
        self.shift = (0.0, 0.0)  # the view's shift at the spell's last look (a fixed camera's drift)
        self.still = 0  # frames since the view last changed
        self.spell_looks = 0  # readings of this still spell
        self.spell_done = False  # this still spell has told what it can: no more looks until the view changes
        self.previous: TableReading | None = None  # this spell's last reading of a laid-down table
        self.spell_laid = False  # a look of this spell found the hands laid down
        self.spell_misses = 0  # looks in a row of this spell that did not
        self.armed = True  # the next laid-down table is a round to propose
        self.proposed: TableReading | None = None
        self.stats = WatchStats()

    @property
    def state(self) -> str:
        """A word for what the watch is doing, for a banner."""
        if self.still < self.settle:
            return "watching"
        if not self.armed:
            return "proposed"
        return "laid down, reading" if self.previous is not None else "settled"

    def add(self, number: int, frame: np.ndarray) -> Proposal | None:
        """One frame (``number``: its place in the source); the proposal when this frame makes one."""
        self.stats.frames += 1
        motion = self.view.motion(frame)
        if motion.changed:
            self.view.set_reference(frame)
            self.still, self.spell_looks, self.spell_done, self.previous = 0, 0, False, None
            self.spell_laid, self.spell_misses = False, 0
            self.tracks, self.shift = spell_tracks(), (0.0, 0.0)
            return None
        self.still += 1
        if self.still < self.settle or self.spell_done:
            return None
        reading = self.look(frame, motion.dx, motion.dy)
        self.spell_done = self.spell_looks >= self.max_looks
        if not laid_down(reading):
            self.previous = None
            # A still view without laid hands (two looks in a row, or one far from it: during play most still
            # views show no seat or one): the next laid-down table is a new round. Else a look that missed a hand
            # of a table laid down, or nearly: look again.
            self.spell_misses += 1
            if not self.spell_laid and (self.spell_misses >= 2 or hands_shown(reading) < MIN_SEATS - 1):
                self.armed, self.spell_done = True, True
            return None
        self.spell_misses = 0
        self.spell_laid = True
        if not self.armed:  # this table was proposed already; it is pushed in before the next one
            self.spell_done = True
            return None
        if self.previous is None or round_key(self.previous) != round_key(reading):
            self.previous = reading
            return None
        self.spell_done, self.previous = True, None
        if self.proposed is not None and same_table(self.proposed, reading) >= SAME_TABLE:
            self.armed = False  # the table proposed last, seen again after a look that missed its hands
            return None
        self.proposed, self.armed = reading, False
        self.stats.proposals += 1
        return Proposal(number, reading)

    def look(self, frame: np.ndarray, dx: float, dy: float) -> TableReading:
        """Run the detector on ``frame`` (the view shifted by dx, dy since the spell began), add its boxes to the
        spell's tracks, and read the table from the tracks' voted boxes."""
        dets = detect_table(self.detector, frame)
        self.tracks.update(dets, dx - self.shift[0], dy - self.shift[1])
        self.shift = (dx, dy)
        self.stats.looks += 1
        self.spell_looks += 1
        return self.read(self.detector, frame, self.tracks.detections())
