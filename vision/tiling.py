"""Adaptive tiling: which parts of a large photo the detector must look at again, closer.

The detector first looks at the whole photo scaled to its input (640 px). Tiles that appear large enough there are
read in that one pass: a 12 MP close-up of a hand needs nothing more, and cutting it into crops would cut its large
tiles into pieces. Only where the tiles found are too small for the network (a catalogue of 150 tiles, a whole
table) is that region cut into overlapping square windows, each scaled so that its tiles reach a readable size;
windows without small tiles are not run. A photo where the first pass finds nothing at all is a photo whose tiles
may all be too small to be found: its textured windows are looked at (a bare table is not).

``plan_windows`` is pure (boxes and sizes in, windows out) so that its decisions are tested without a model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

MIN_TILE_PX = 20  # a tile whose longer side is under this in the network's view is too small to read well
TARGET_TILE_PX = 40  # a window is scaled so that the small tiles' median longer side reaches about this
MAX_WINDOWS = 12  # at most this many windows per photo: a larger window (smaller tiles) rather than more runs
DECIDE_CONF = 0.25  # the first pass's boxes from this confidence decide (a benchmark's conf 0.001 tail does not)
TEXTURE_MIN = 6.0  # mean |Laplacian| of a grey window (on the network's view) from which it may hold tiles


@dataclass(frozen=True)
class Window:
    """A square (or, at a thin photo's edge, rectangular) part of the photo: pixels [y0:y1, x0:x1]."""

    x0: int
    y0: int
    x1: int
    y1: int

    def box(self) -> np.ndarray:
        return np.array([self.x0, self.y0, self.x1, self.y1], np.float32)


def _starts(lo: int, hi: int, side: int, overlap: int, length: int) -> list[int]:
    """Window starts along one axis covering [lo, hi) with windows of ``side`` px overlapping by at least
    ``overlap``, evenly spaced, inside [0, length). A span shorter than a window gets one window centred on it:
    a whole square of context, not a thin strip."""
    if length <= side:
        return [0]
    if hi - lo <= side:
        return [min(max(0, (lo + hi - side) // 2), length - side)]
    n = math.ceil((hi - lo - overlap) / max(1, side - overlap))
    last = min(hi, length) - side
    return sorted({round(lo + k * (last - lo) / (n - 1)) for k in range(n)}) if n > 1 else [lo]


def windows_over(image_size: tuple[int, int], side: int, overlap: int,
                 region: tuple[int, int, int, int] | None = None) -> list[Window]:
    """Overlapping windows of ``side`` px covering ``region`` (x0, y0, x1, y1; default the whole image), clipped
    to the image."""
    w, h = image_size
    x0, y0, x1, y1 = region or (0, 0, w, h)
    return [Window(x, y, min(x + side, w), min(y + side, h))
            for y in _starts(y0, y1, side, overlap, h) for x in _starts(x0, x1, side, overlap, w)]


def _holds(win: Window, boxes: np.ndarray) -> np.ndarray:
    """Which boxes have their centre inside the window."""
    cx, cy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    return (cx >= win.x0) & (cx < win.x1) & (cy >= win.y0) & (cy < win.y1)


def plan_windows(image_size: tuple[int, int], size: int, boxes: np.ndarray, texture: np.ndarray | None = None,
                 max_windows: int = MAX_WINDOWS, min_tile_px: float = MIN_TILE_PX,
                 target_tile_px: float = TARGET_TILE_PX) -> list[Window]:
    """The windows to run the detector on after its first pass over the whole photo (none: one pass is enough).

    ``image_size``: (width, height); ``size``: the network's input side; ``boxes``: (N, 4) xyxy of the tiles the
    first pass found (original pixels); ``texture``: per-pixel texture of the photo at any scale (a grey
    ``|Laplacian|``), used only when the first pass found nothing. At most ``max_windows`` windows: when more would
    be needed, the windows grow (their tiles shrink) until that many cover the small tiles. ``min_tile_px``: tiles
    under this in the network's view are small (``math.inf``: every tile); ``target_tile_px``: what they reach.
    """
    w, h = image_size
    scale = size / max(w, h)
    if scale >= 1:  # the network sees the photo at full resolution already
        return []
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    if len(boxes) == 0:
        if texture is None or max(w, h) <= 2.5 * size:
            return []
        return _textured(image_size, size, texture, max_windows)
    longer = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    small = longer * scale < min_tile_px
    if not small.any():
        return []
    tile = float(np.median(longer[small]))
    # windows no smaller than the network's input (smaller ones would be padded, not enlarged: no detail to gain)
    side = min(max(size, math.ceil(size * tile / target_tile_px)), max(w, h))
    # only the region of the small tiles (and a tile's width around them, where the first pass missed some)
    lo = np.maximum(boxes[small, :2].min(0) - tile, 0).astype(int)
    hi = np.minimum(boxes[small, 2:].max(0) + tile, [w, h]).astype(int)
    region = (int(lo[0]), int(lo[1]), int(hi[0]), int(hi[1]))
    while True:
        overlap = max(round(0.2 * side), math.ceil(1.5 * tile))  # every small tile lies whole in some window
        wins = [win for win in windows_over(image_size, side, overlap, region) if _holds(win, boxes[small]).any()]
        if len(wins) <= max_windows or side >= max(w, h):
            return wins
        side = min(max(w, h), math.ceil(side * 1.25))


def _textured(image_size: tuple[int, int], size: int, texture: np.ndarray, max_windows: int) -> list[Window]:
    """Windows of twice the network's input over the photo, those whose texture could be tiles."""
    w, h = image_size
    side = min(2 * size, max(w, h))
    sy, sx = texture.shape[0] / h, texture.shape[1] / w
    wins = []
    for win in windows_over(image_size, side, round(0.2 * side)):
        part = texture[int(win.y0 * sy):max(int(win.y1 * sy), int(win.y0 * sy) + 1),
                       int(win.x0 * sx):max(int(win.x1 * sx), int(win.x0 * sx) + 1)]
        if part.size and float(part.mean()) >= TEXTURE_MIN:
            wins.append(win)
    if len(wins) > max_windows:  # keep the most textured ones
        wins.sort(key=lambda v: -float(texture[int(v.y0 * sy):int(v.y1 * sy), int(v.x0 * sx):int(v.x1 * sx)].mean()))
        wins = wins[:max_windows]
    return wins


def texture_map(view: np.ndarray) -> np.ndarray:
    """|Laplacian| of the grey photo as the network saw it (letterboxed or not): tile faces are edge-rich."""
    grey = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY) if view.ndim == 3 else view
    return np.abs(cv2.Laplacian(grey, cv2.CV_32F, ksize=3))


def inner_cut(boxes: np.ndarray, win: Window, image_size: tuple[int, int], margin: float = 2.0) -> np.ndarray:
    """Which boxes (original pixels) touch an edge of the window inside the photo: tiles the window cuts, which
    another window (they overlap by more than a tile) or the first pass sees whole."""
    w, h = image_size
    cut = np.zeros(len(boxes), bool)
    if win.x0 > 0:
        cut |= boxes[:, 0] <= win.x0 + margin
    if win.y0 > 0:
        cut |= boxes[:, 1] <= win.y0 + margin
    if win.x1 < w:
        cut |= boxes[:, 2] >= win.x1 - margin
    if win.y1 < h:
        cut |= boxes[:, 3] >= win.y1 - margin
    return cut
