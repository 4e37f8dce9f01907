"""Drawing detections (and later groups) over a photo for people to check.

A full hand is 14 tiles side by side, each label as wide as its tile or wider: labels go above or below their
box, whichever is free (above first), stacked further out when both are taken, on a filled background and
scaled to the box size, so that no two labels overlap and each stays next to its tile.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.detections import Detections

_COLORS = {"m": (40, 40, 220), "p": (220, 120, 30), "s": (40, 160, 40), "b": (60, 60, 60), "o": (160, 0, 160)}
_FONT = cv2.FONT_HERSHEY_SIMPLEX
_PAD = 2  # pixels of background around the text


def _overlaps(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def label_rects(xyxy: np.ndarray, sizes: list[tuple[int, int]], image_size: tuple[int, int]
                ) -> list[tuple[int, int, int, int]]:
    """Where each label goes: ``(x1, y1, x2, y2)`` per box, given each label's ``(width, height)`` with padding.

    Boxes are placed left to right; each label takes the first free slot of: just above its box, just below,
    then one label height further out above and below, and so on. Slots stay inside the image where they fit.
    """
    width, height = image_size
    placed: list[tuple[int, int, int, int]] = []
    out: list[tuple[int, int, int, int]] = [(0, 0, 0, 0)] * len(sizes)
    for i in sorted(range(len(sizes)), key=lambda k: (float(xyxy[k][0]), float(xyxy[k][1]))):
        x1, y1, _x2, y2 = (int(v) for v in xyxy[i])
        w, h = sizes[i]
        left = min(max(0, x1), max(0, width - w))
        slots = []
        for level in range(len(sizes) + 1):
            slots.append(y1 - h * (level + 1))  # above, stacked upwards
            slots.append(y2 + h * level)  # below, stacked downwards
        inside = [top for top in slots if top >= 0 and top + h <= height]
        chosen = None
        for top in inside + [s for s in slots if s not in inside]:
            rect = (left, top, left + w, top + h)
            if not any(_overlaps(rect, other) for other in placed):
                chosen = rect
                break
        out[i] = chosen or (left, max(0, y1 - h), left + w, max(0, y1 - h) + h)
        placed.append(out[i])
    return out


def _scale(box_width: float, text: str) -> float:
    """Font scale that makes ``text`` about as wide as the box (never below a readable 0.35)."""
    (unit_w, _), _ = cv2.getTextSize(text, _FONT, 1.0, 1)
    return max(0.35, min(2.5, 1.1 * box_width / max(unit_w, 1)))


def draw_detections(image: np.ndarray, dets: Detections) -> np.ndarray:
    """A copy of ``image`` with each box outlined and labelled with its tile name and confidence."""
    out = image.copy()
    thick = max(1, round(2 * max(out.shape[:2]) / 1000))
    labels, colors, metrics = [], [], []
    for (x1, _y1, x2, _y2), name, conf in zip(dets.xyxy, dets.names, dets.confidence, strict=True):
        label = f"{name} {conf:.2f}".replace(" 0.", " .")
        scale = _scale(x2 - x1, label)
        text_thick = max(1, round(scale * 1.6))
        (tw, th), base = cv2.getTextSize(label, _FONT, scale, text_thick)
        labels.append(label)
        colors.append(_COLORS.get(name[-1] if name[0].isdigit() else name[0], (0, 0, 0)))
        metrics.append((scale, text_thick, tw, th, base))
    rects = label_rects(dets.xyxy, [(tw + 2 * _PAD, th + base + 2 * _PAD) for _, _, tw, th, base in metrics],
                        (out.shape[1], out.shape[0]))
    for (x1, y1, x2, y2), color in zip(dets.xyxy.astype(int), colors, strict=True):
        cv2.rectangle(out, (x1, y1), (x2, y2), color, thick)
    for label, color, (scale, text_thick, _tw, th, _base), (rx1, ry1, rx2, ry2) in zip(
            labels, colors, metrics, rects, strict=True):
        cv2.rectangle(out, (rx1, ry1), (rx2 - 1, ry2 - 1), color, -1)
        cv2.putText(out, label, (rx1 + _PAD, ry1 + _PAD + th), _FONT, scale, (255, 255, 255), text_thick,
                    cv2.LINE_AA)
    return out
