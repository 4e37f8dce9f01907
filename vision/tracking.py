"""Tiles followed from frame to frame of a video: live mode runs the detector only when the view changes.

Between two frames of a hand on a table, the camera moves a little and nothing else does. :class:`ViewChange`
measures that motion on small grey copies of the frames (phase correlation: one global shift) and whether the
frame, once shifted back, still differs from the last frame the detector saw (a tile laid, taken or turned, a
hand passing over, a new exposure): only then must the detector look again. :class:`TileTracks` keeps one track
per tile across the detector's runs: its box follows the measured shift, and its name is the vote of its last
``history`` looks (the mean of their class probabilities), so that one misread frame does not rename a tile, and
one missed box does not drop it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.classes import NUM_CLASSES
from vision.detections import Detections, box_iou

SMALL_WIDTH = 320  # frames are compared at this width: a 720p frame at a quarter, a few ms per frame
CHANGE_LEVEL = 12.0  # mean grey difference (0–255) of a cell of the aligned frames from which the view changed
GRID = 4  # the frames are compared in GRID × GRID cells: one tile laid changes one cell, not the whole mean
MIN_RESPONSE = 0.03  # a phase-correlation peak weaker than this finds no shift (a flat or all-new view)
MAX_SHIFT = 0.25  # a shift over this share of the frame is a new view, not a moved one


@dataclass
class Motion:
    """The view's shift since the reference frame, in full-frame pixels, and whether it changed otherwise."""

    dx: float
    dy: float
    changed: bool


class ViewChange:
    """Compares frames with a reference frame (the last one the detector saw)."""

    def __init__(self, width: int = SMALL_WIDTH, level: float = CHANGE_LEVEL) -> None:
        self.width, self.level = width, level
        self.reference: np.ndarray | None = None
        self.scale = 1.0

    def small(self, frame: np.ndarray) -> np.ndarray:
        """A small grey copy. Area scaling: linear scaling aliases, and a hand-held shake of a pixel then differs by
        up to 14 grey levels where area scaling leaves 8 (the generated 720p video's 99th percentile 13 vs 8)."""
        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
        self.scale = frame.shape[1] / self.width
        height = max(1, round(frame.shape[0] / self.scale))
        return cv2.resize(grey, (self.width, height), interpolation=cv2.INTER_AREA).astype(np.float32)

    def set_reference(self, frame: np.ndarray) -> None:
        self.reference = self.small(frame)

    def motion(self, frame: np.ndarray) -> Motion:
        """The shift of ``frame`` against the reference and whether it differs from it beyond that shift."""
        cur = self.small(frame)
        ref = self.reference
        if ref is None or ref.shape != cur.shape:
            return Motion(0.0, 0.0, True)
        (dx, dy), response = cv2.phaseCorrelate(ref, cur)
        if response < MIN_RESPONSE or not np.isfinite([dx, dy]).all():
            dx = dy = 0.0
        h, w = ref.shape
        if abs(dx) > MAX_SHIFT * w or abs(dy) > MAX_SHIFT * h:
            return Motion(dx * self.scale, dy * self.scale, True)
        back = cv2.warpAffine(cur, np.float32([[1, 0, -dx], [0, 1, -dy]]), (w, h), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REPLICATE)
        mx, my = int(np.ceil(abs(dx))) + 2, int(np.ceil(abs(dy))) + 2  # leave out what came into view
        diff = np.abs(back[my:h - my, mx:w - mx] - ref[my:h - my, mx:w - mx])
        if diff.size == 0:
            return Motion(dx * self.scale, dy * self.scale, True)
        cells = cv2.resize(diff, (GRID, GRID), interpolation=cv2.INTER_AREA)  # the mean of each cell
        return Motion(dx * self.scale, dy * self.scale, bool(cells.max() > self.level))


def _probs(dets: Detections) -> np.ndarray:
    """Every class's probability for each box (from the top 3 where that is all a detector gave)."""
    if dets.probs is not None:
        return dets.probs
    probs = np.zeros((len(dets), NUM_CLASSES), np.float32)
    for k in range(3):
        ok = dets.top3_class[:, k] >= 0
        probs[np.flatnonzero(ok), dets.top3_class[ok, k]] = dets.top3_prob[ok, k]
    return probs


@dataclass
class Track:
    """One tile over the detector's runs: its box (in the reference frame's pixels) and its last looks."""

    box: np.ndarray
    looks: deque = field(default_factory=deque)  # (confidence, probabilities) of its last looks
    hits: int = 0
    misses: int = 0  # the detector's runs since it last saw the tile


class TileTracks:
    """Tracks of the tiles the detector finds, matched run to run by overlap after the view's shift.

    ``history``: looks voted over per tile; ``min_hits``: looks before a tile counts (a stray box the detector
    gives for a run or two, e.g. a second box on one of a pair of tiles, is not a tile);
    ``max_misses``: runs a tile may go unseen before it is dropped (it was taken away, or was never there)."""

    def __init__(self, history: int = 8, min_hits: int = 3, max_misses: int = 2, iou: float = 0.3) -> None:
        self.history, self.min_hits, self.max_misses, self.iou = history, min_hits, max_misses, iou
        self.tracks: list[Track] = []
        self.image_size = (0, 0)

    def update(self, dets: Detections, dx: float = 0.0, dy: float = 0.0) -> None:
        """A detector run on a frame whose view moved by (dx, dy) since the last run: match, vote, age."""
        self.image_size = dets.image_size
        shift = np.array([dx, dy, dx, dy], np.float32)
        for t in self.tracks:
            t.box = t.box + shift
        old = np.array([t.box for t in self.tracks], np.float32).reshape(-1, 4)
        overlap = box_iou(dets.xyxy, old) if len(old) and len(dets) else np.zeros((len(dets), len(old)))
        probs = _probs(dets)
        matched_new, matched_old = set(), set()
        for flat in np.argsort(-overlap, axis=None):  # best overlaps first, one to one
            i, j = divmod(int(flat), max(1, len(old)))
            if overlap[i, j] < self.iou:
                break
            if i in matched_new or j in matched_old:
                continue
            matched_new.add(i)
            matched_old.add(j)
            self._look(self.tracks[j], dets, probs, i)
        for j, t in enumerate(self.tracks):
            if j not in matched_old:
                t.misses += 1
        self.tracks = [t for t in self.tracks if t.misses <= self.max_misses]
        for i in range(len(dets)):
            if i not in matched_new:
                t = Track(dets.xyxy[i].copy(), deque(maxlen=self.history))
                self._look(t, dets, probs, i)
                self.tracks.append(t)

    @staticmethod
    def _look(t: Track, dets: Detections, probs: np.ndarray, i: int) -> None:
        t.box, t.misses, t.hits = dets.xyxy[i].copy(), 0, t.hits + 1
        t.looks.append((float(dets.confidence[i]), probs[i]))

    @property
    def steady(self) -> bool:
        """Every track counted and seen by the last run: nothing for the detector to settle."""
        return all(t.hits >= self.min_hits and t.misses == 0 for t in self.tracks)

    def detections(self, dx: float = 0.0, dy: float = 0.0) -> Detections:
        """The counted tiles, moved by (dx, dy), each named by the vote of its last looks."""
        counted = [t for t in self.tracks if t.hits >= self.min_hits]
        if not counted:
            return Detections.empty(self.image_size)
        xyxy = np.array([t.box for t in counted], np.float32) + np.array([dx, dy, dx, dy], np.float32)
        conf = np.array([np.mean([c for c, _ in t.looks]) for t in counted], np.float32)
        probs = np.array([np.mean([p for _, p in t.looks], axis=0) for t in counted], np.float32)
        probs /= np.maximum(probs.sum(1, keepdims=True), 1e-9)
        top3 = np.argsort(-probs, 1)[:, :3]
        return Detections(xyxy, conf, top3[:, 0], top3, np.take_along_axis(probs, top3, 1), self.image_size, probs)
