"""Labels: what the camera sees of each tile (its class, or no label), which labels no one could read
(difficult), and the YOLO dataset files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from datasets.synth.camera import TilePose
from vision.classes import BACK, CLASS_NAMES, OTHER
from vision.labels import read_yolo_labels

MIN_VISIBLE = 0.4  # drop a box when less than this fraction of it lies inside the image
MIN_TOP_SHARE = 0.25  # ... or when its face (or back) covers less than this share of its silhouette: edge-on


@dataclass
class Labels:
    """What :func:`compose` labels: per tile in view, its box (xyxy pixels, clipped to the image) around the whole
    tile as the camera sees it, face and body, and around its face (or back) alone; its class; and, for
    :func:`difficulty`, how much of the face lies inside the image, how much of that is not hidden behind other
    tiles, and the face's narrow width in pixels (:func:`narrow_width`)."""

    boxes: np.ndarray  # N x 4
    face_boxes: np.ndarray  # N x 4
    classes: np.ndarray  # N
    views: np.ndarray  # N x 3


BOX_KINDS = ("tile", "face")  # what a label's box surrounds: the whole tile as seen, or its face (or back) alone


def share_inside(quad: np.ndarray, size: int) -> float:
    """The share of a projected face (convex) that lies inside the ``size`` x ``size`` image."""
    quad = np.asarray(quad, np.float32)
    area = abs(cv2.contourArea(quad))
    if area < 1e-6:
        return 0.0
    frame = np.array([[0, 0], [size, 0], [size, size], [0, size]], np.float32)
    inside, _ = cv2.intersectConvexConvex(quad, frame)
    return float(inside) / area


def narrow_width(quad: np.ndarray) -> float:
    """The width of a projected face across its narrow way, in pixels: its area over its longest side (a face
    seen edge-on is a thin strip however long it is)."""
    x, y = quad[:, 0], quad[:, 1]
    area = 0.5 * abs(float(x @ np.roll(y, -1) - y @ np.roll(x, -1)))
    return area / max(float(np.linalg.norm(quad - np.roll(quad, -1, 0), axis=1).max()), 1e-6)


def shown_label(tile: TilePose, shown: str | None, top_px: int, top_vis: int, area: int) -> int | None:
    """The class a person could tell from the image: the tile's own class when its face is in view, `back` when
    its back is (a face-down tile, or a standing one seen from behind), None (no label) when only its sides are,
    or when the face or back is a sliver (seen edge-on) or mostly hidden behind other tiles."""
    if shown is None or top_px < MIN_TOP_SHARE * area or top_vis < MIN_VISIBLE * top_px:
        return None
    return tile.label if shown == "face" else BACK


TRUNCATED, HIDDEN, BLURRED = 1, 2, 4  # why a label is difficult (bits)
DIFFICULT_NAMES = {TRUNCATED: "truncated", HIDDEN: "hidden", BLURRED: "blurred"}


# Where a person stops reading the tiles of the validation scenes (looked at, binned by each measure; the model
# card says how): below 60% inside the image a tile's number is often cut off;
# below 14 times the blur's spread across its narrow way the strokes of 万 numbers run together and dots and
# bamboos can no longer be counted. Every photo is a little soft (lens, demosaicing, JPEG), so the spread counts as
# at least 0.8 px: an unblurred face narrower than 11 px is too small to read.
EASY_INSIDE = 0.6  # a tile less inside the image than this is truncated
EASY_UNHIDDEN = 0.75  # a face (or back) less in view than this is hidden
EASY_SHARPNESS = 14.0  # a face narrower than this many times the blur's spread is blurred
MIN_SPREAD = 0.8  # px


def difficulty(classes: np.ndarray, views: np.ndarray, spread: float) -> np.ndarray:
    """Why each label is difficult, as bits (0: not): the tile is cut by the image border (truncated), its face
    is partly hidden behind other tiles (hidden), or the face is narrow for the blur (blurred). Only faces are
    read: a `back` is a face-down tile however blurred or cut, so it is never difficult. A difficult tile is
    labelled as any other; the benchmark can leave it out, as PASCAL VOC leaves out its ``difficult`` objects.
    Decided from how the scene was made, not from any model."""
    inside, unhidden, width = views.T
    flags = ((inside < EASY_INSIDE) * TRUNCATED | (unhidden < EASY_UNHIDDEN) * HIDDEN
             | (width < EASY_SHARPNESS * max(spread, MIN_SPREAD)) * BLURRED)
    return np.where(classes == BACK, 0, flags).astype(np.uint8)


def difficult_words(flags: np.ndarray) -> list[str]:
    """One word per label for DIR/difficult/SPLIT/NAME.txt: ``-`` (not difficult) or its reasons joined by ``+``
    (``truncated+blurred``); read back by ``vision.training.evaluate.read_difficult``."""
    return ["+".join(w for bit, w in DIFFICULT_NAMES.items() if f & bit) or "-" for f in flags]


def yolo_lines(boxes: np.ndarray, classes: np.ndarray, size: int) -> list[str]:
    """YOLO txt rows: class cx cy w h, normalised to the image size."""
    lines = []
    for (x0, y0, x1, y1), c in zip(boxes, classes, strict=True):
        cx, cy, w, h = (x0 + x1) / 2 / size, (y0 + y1) / 2 / size, (x1 - x0) / size, (y1 - y0) / size
        lines.append(f"{int(c)} {cx:.6f} {cy:.6f} {w:.6f} {h:.6f}")
    return lines


def read_yolo(path: Path, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of :func:`yolo_lines`: (boxes xyxy in pixels, classes), read by the one YOLO label reader."""
    boxes, classes = read_yolo_labels(path, size, size, dtype=np.float64)
    return boxes.astype(np.float32), classes


def write_data_yaml(path: Path, root: Path, train: str | list[str], val: str | list[str]) -> Path:
    """An ultralytics data.yaml with an absolute ``path`` and our 29 class names in order."""

    def fmt(x: str | list[str]) -> str:
        return x if isinstance(x, str) else "[" + ", ".join(f"'{p}'" for p in x) + "]"

    names = ", ".join(f"'{n}'" for n in CLASS_NAMES)
    path.write_text(f"path: {root.resolve()}\ntrain: {fmt(train)}\nval: {fmt(val)}\nnc: {len(CLASS_NAMES)}\n"
                    f"names: [{names}]\n")
    return path


def draw_boxes(img: np.ndarray, boxes: np.ndarray, classes: np.ndarray,
               difficult: np.ndarray | None = None) -> np.ndarray:
    """A copy of the image with labelled boxes (for previews); difficult labels in grey, with their reasons."""
    out = img.copy()
    flags = np.zeros(len(classes), np.uint8) if difficult is None else difficult
    words = difficult_words(flags)
    for (x0, y0, x1, y1), c, f, w in zip(boxes.astype(int), classes, flags, words, strict=True):
        colour = ((160, 160, 160) if f else (0, 0, 255) if c == BACK else (255, 0, 255) if c == OTHER
                  else (0, 255, 0))
        text = CLASS_NAMES[c] + (f" ({w})" if f else "")
        cv2.rectangle(out, (x0, y0), (x1, y1), colour, 1)
        cv2.putText(out, text, (x0 + 1, y0 + 10), cv2.FONT_HERSHEY_SIMPLEX, 0.35, colour, 1, cv2.LINE_AA)
    return out
