"""Live table mode's stages (``zhuoji live``): the tiles in view followed from frame to frame, read through the
photo pipeline, and a vote over the last few readings.

A table does not change between two frames, and the detector is the costly step: :class:`TrackedView` runs it only
when the shell asks (the view changed, the tiles are not settled, or a refresh is due), and otherwise follows the
tiles' tracks with the camera's shift (``vision/tracking.py``). Each tile is a track whose name is the vote of its
last looks, so one photo's misread tile or missed box changes nothing; the tracked tiles are read by
:func:`pipeline.photo.read_photo`, the same steps as a photo's (facing evidence, layout, rules-checked reading).
:class:`ReadingVoter` then votes per position over the readings of the last few frames (each concealed tile, each
meld, each discard, the 翻鸡 indicator).
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.photo import read_photo
from scoring.tiles import to_mpsz
from vision.annotate import draw_detections
from vision.detect import Detector
from vision.detections import Detections
from vision.reading import Reading, ReadMeld
from vision.tracking import Motion, TileTracks, ViewChange


class TrackedView:
    """The tiles in a camera's view: the view's motion against the frame last looked at, the tiles' tracks, and
    the tiles shown on the latest frame."""

    def __init__(self, detector: Detector) -> None:
        self.detector = detector
        self.view, self.tracks = ViewChange(), TileTracks()
        self.shown: Detections | None = None

    def motion(self, frame: np.ndarray) -> Motion:
        """How the view moved since the frame last looked at."""
        return self.view.motion(frame)

    @property
    def steady(self) -> bool:
        """Every tile counted and seen by the last look: nothing for the detector to settle."""
        return self.tracks.steady

    def look(self, frame: np.ndarray, motion: Motion) -> Reading:
        """Run the detector on ``frame`` (its view moved by ``motion``), update the tracks, and read the tracked
        tiles through the photo pipeline."""
        self.tracks.update(self.detector(frame), motion.dx, motion.dy)
        self.view.set_reference(frame)
        photo = read_photo(self.detector, frame, found=self.tracks.detections())
        self.shown = photo.dets
        return photo.reading

    def follow(self, motion: Motion) -> None:
        """A frame the detector skips: the tiles shown follow the view's shift."""
        self.shown = self.tracks.detections(motion.dx, motion.dy)

    def annotated(self, frame: np.ndarray) -> np.ndarray:
        """``frame`` with the tiles shown on it boxed and named."""
        return frame.copy() if self.shown is None else draw_detections(frame, self.shown)


# ---------------------------------------------------------------------------------------------- voting


def _majority(values: list[Any]) -> tuple[Any, int]:
    """Most common value and its votes; ties go to the latest."""
    counts = Counter(values)
    best = max(counts.values())
    return next(v for v in reversed(values) if counts[v] == best), best


def _vote_sequence(seqs: list[tuple[str, ...]]) -> tuple[tuple[str, ...], float]:
    """Per-position majority over the sequences of the most common length; support = weakest position's share."""
    length, _ = _majority([len(s) for s in seqs])
    same = [s for s in seqs if len(s) == length]
    out, support = [], len(same) / len(seqs)
    for i in range(length):
        tile, votes = _majority([s[i] for s in same])
        out.append(tile)
        support = min(support, votes / len(seqs))
    return tuple(out), support


@dataclass(frozen=True)
class Voted:
    """A reading agreed on by most of the window."""

    concealed: tuple[str, ...]
    melds: tuple[tuple[str, str | None], ...]
    river: tuple[str, ...]
    indicator: str | None
    support: float  # weakest share of the window that agreed, 0..1

    def reading(self) -> Reading:
        tiles = [t for t in self.concealed if t != "?"]
        return Reading(concealed=to_mpsz(tiles), concealed_tiles=list(self.concealed),
                       melds=[ReadMeld(k, t) for k, t in self.melds], river=list(self.river),
                       indicator=self.indicator, count=len(self.concealed) + 3 * len(self.melds))

    def text(self) -> str:
        melds = " ".join(f"[{k}:{t or '?'}]" for k, t in self.melds)
        return " ".join(x for x in ("".join(self.concealed), melds) if x) or "(no tiles)"


class ReadingVoter:
    """Votes over the readings of the last ``window`` processed frames."""

    def __init__(self, window: int = 5, quorum: float = 0.6) -> None:
        self.readings: deque[Reading] = deque(maxlen=max(1, window))
        self.quorum = quorum

    def add(self, reading: Reading) -> Voted | None:
        """Add a frame's reading; the voted reading once the window is full and a quorum agrees."""
        self.readings.append(reading)
        if len(self.readings) < self.readings.maxlen:  # type: ignore[operator]
            return None
        rs = list(self.readings)
        concealed, s1 = _vote_sequence([tuple(r.concealed_tiles) for r in rs])
        melds, n_melds = _majority([tuple((m.type, m.tile) for m in r.melds) for r in rs])
        river, s2 = _vote_sequence([tuple(r.river) for r in rs])
        indicator, n_ind = _majority([r.indicator for r in rs])
        support = min(s1, s2, n_melds / len(rs), n_ind / len(rs))
        if support < self.quorum:
            return None
        return Voted(concealed, melds, river, indicator, support)


def reading_text(reading: Reading) -> str:
    """A reading as one line, to tell whether two frames read the same."""
    melds = " ".join(f"[{m.type}:{m.tile}]" for m in reading.melds)
    return f"{''.join(reading.concealed_tiles)} {melds} | {' '.join(reading.river)} | {reading.indicator}"
