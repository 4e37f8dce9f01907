"""Drawing detections (and later groups) over a photo for people to check."""

from __future__ import annotations

import cv2
import numpy as np

from vision.detections import Detections

_COLORS = {"m": (40, 40, 220), "p": (220, 120, 30), "s": (40, 160, 40), "b": (60, 60, 60), "o": (160, 0, 160)}


def draw_detections(image: np.ndarray, dets: Detections) -> np.ndarray:
    """A copy of ``image`` with each box outlined and labelled with its tile name and confidence."""
    out = image.copy()
    scale = max(out.shape[:2]) / 1000
    thick = max(1, round(2 * scale))
    for (x1, y1, x2, y2), name, conf in zip(dets.xyxy.astype(int), dets.names, dets.confidence, strict=True):
        color = _COLORS.get(name[-1] if name[0].isdigit() else name[0], (0, 0, 0))
        cv2.rectangle(out, (x1, y1), (x2, y2), color, thick)
        label = f"{name} {conf:.2f}"
        (tw, th), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 0.5 * scale + 0.2, thick)
        y_text = max(th + 2, y1 - 2)
        cv2.rectangle(out, (x1, y_text - th - 2), (x1 + tw + 2, y_text + 2), color, -1)
        cv2.putText(out, label, (x1 + 1, y_text), cv2.FONT_HERSHEY_SIMPLEX, 0.5 * scale + 0.2, (255, 255, 255),
                    thick, cv2.LINE_AA)
    return out
