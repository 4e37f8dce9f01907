"""YOLO label files, read in one place: one ``class cx cy w h`` row per box, coordinates normalised to 0..1."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def parse_yolo(text: str, dtype: type = np.float32) -> tuple[np.ndarray, np.ndarray]:
    """Label text → (class ids (N,), normalised cx cy w h (N, 4)); blank rows and rows of fewer than five
    fields are skipped."""
    rows = [r.split() for r in text.splitlines() if len(r.split()) >= 5]
    if not rows:
        return np.zeros(0, np.int64), np.zeros((0, 4), dtype)
    values = np.array([[float(v) for v in r[:5]] for r in rows], dtype)
    return values[:, 0].astype(np.int64), values[:, 1:5]


def to_xyxy(cxcywh: np.ndarray, width: int, height: int) -> np.ndarray:
    """Normalised centre boxes → corner boxes in pixels of a ``width`` × ``height`` image."""
    cx, cy, w, h = cxcywh[:, 0] * width, cxcywh[:, 1] * height, cxcywh[:, 2] * width, cxcywh[:, 3] * height
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1).reshape(-1, 4)


def read_yolo_labels(label_path: Path, width: int, height: int, remap: dict[int, int] | None = None,
                     dtype: type = np.float32) -> tuple[np.ndarray, np.ndarray]:
    """A label file (none: no boxes) → (xyxy pixels, class ids), with an optional class remap."""
    cls, cxcywh = parse_yolo(label_path.read_text() if label_path.exists() else "", dtype)
    if remap:
        cls = np.array([remap.get(int(c), int(c)) for c in cls], np.int64)
    return to_xyxy(cxcywh, width, height), cls
