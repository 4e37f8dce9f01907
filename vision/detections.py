"""``Detections``: the plain value passed from the detector to the layout and reading stages."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vision.classes import CLASS_NAMES

TURNS = 4  # quarter turns of a crop the crop classifier may look at (Detections.features)


@dataclass
class Detections:
    """N boxes as numpy arrays (one row per box).

    xyxy: (N, 4) float32 corners in original-image pixels. confidence: (N,) float32.
    class_id: (N,) int64 index into :data:`CLASS_NAMES`. top3_class / top3_prob: (N, 3) the three most probable
    classes per box and their probabilities (normalised over classes) for the reading step.
    image_size: (width, height) of the original image.
    probs: (N, classes) float32 every class's probability (normalised over classes), or None where only the top 3
    are known (hand-made detections); the crop classifier weighs all of them, not only the top 3.
    facing: (N, 2) float32 where each box's face points (image x, y: towards the top of its glyph), its length
    the log-odds of that against the opposite way (``vision.upright``); zero where not looked at. None: no box was.
    features: (N, 4, D) float32 the crop classifier's features of each box's crop at each quarter turn
    (counter-clockwise; turn 0 is the crop as it lies), NaN where that turn was not looked at; None where the
    classifier looked at no box. Computed once, with the names (``vision.classify``), and reused by calibration
    (``vision.calibrate``) and facing (``vision.upright``) instead of cropping and running the network again.
    """

    xyxy: np.ndarray
    confidence: np.ndarray
    class_id: np.ndarray
    top3_class: np.ndarray = field(default=None)  # type: ignore[assignment]
    top3_prob: np.ndarray = field(default=None)  # type: ignore[assignment]
    image_size: tuple[int, int] = (0, 0)
    probs: np.ndarray | None = None
    facing: np.ndarray | None = None
    features: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.xyxy = np.asarray(self.xyxy, dtype=np.float32).reshape(-1, 4)
        n = len(self.xyxy)
        self.confidence = np.asarray(self.confidence, dtype=np.float32).reshape(n)
        self.class_id = np.asarray(self.class_id, dtype=np.int64).reshape(n)
        if self.top3_class is None:
            self.top3_class = np.stack([self.class_id, np.full(n, -1), np.full(n, -1)], axis=1)
            self.top3_prob = np.stack([self.confidence, np.zeros(n), np.zeros(n)], axis=1)
        self.top3_class = np.asarray(self.top3_class, dtype=np.int64).reshape(n, 3)
        self.top3_prob = np.asarray(self.top3_prob, dtype=np.float32).reshape(n, 3)
        if self.probs is not None:
            self.probs = np.asarray(self.probs, dtype=np.float32).reshape(n, len(CLASS_NAMES))
        if self.facing is not None:
            self.facing = np.asarray(self.facing, dtype=np.float32).reshape(n, 2)
        if self.features is not None:
            self.features = np.asarray(self.features, dtype=np.float32)
            self.features = self.features.reshape(n, TURNS, self.features.shape[-1])

    def __len__(self) -> int:
        return len(self.xyxy)

    def __getitem__(self, index: np.ndarray | slice | list[int]) -> Detections:
        return Detections(self.xyxy[index], self.confidence[index], self.class_id[index],
                          self.top3_class[index], self.top3_prob[index], self.image_size,
                          None if self.probs is None else self.probs[index],
                          None if self.facing is None else self.facing[index],
                          None if self.features is None else self.features[index])

    def rescaled(self, image_size: tuple[int, int]) -> Detections:
        """The same boxes in the pixels of the same photo at another size (found on a reduced decode)."""
        if tuple(image_size) == tuple(self.image_size):
            return self
        fx, fy = image_size[0] / max(self.image_size[0], 1), image_size[1] / max(self.image_size[1], 1)
        return Detections(self.xyxy * np.array([fx, fy, fx, fy], np.float32), self.confidence, self.class_id,
                          self.top3_class, self.top3_prob, tuple(image_size), self.probs, self.facing,
                          self.features)

    @classmethod
    def empty(cls, image_size: tuple[int, int] = (0, 0)) -> Detections:
        return cls(np.zeros((0, 4)), np.zeros(0), np.zeros(0), image_size=image_size)

    @property
    def names(self) -> list[str]:
        return [CLASS_NAMES[c] for c in self.class_id]

    @property
    def centers(self) -> np.ndarray:
        return (self.xyxy[:, :2] + self.xyxy[:, 2:]) / 2

    def to_json(self) -> list[dict]:
        """One dict per box: ``{"tile", "box", "confidence", "alternatives"}`` (box in pixels, 1 decimal)."""
        out = []
        for i in range(len(self)):
            alts = [{"tile": CLASS_NAMES[c], "p": round(float(p), 3)}
                    for c, p in zip(self.top3_class[i], self.top3_prob[i], strict=True) if c >= 0]
            out.append({"tile": CLASS_NAMES[self.class_id[i]],
                        "box": [round(float(v), 1) for v in self.xyxy[i]],
                        "confidence": round(float(self.confidence[i]), 3),
                        "alternatives": alts})
        return out


def box_intersection(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a), len(b)) intersection areas of two sets of xyxy boxes."""
    if len(a) == 0 or len(b) == 0:
        return np.zeros((len(a), len(b)), np.float32)
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    return np.prod(np.clip(rb - lt, 0, None), 2)


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a), len(b)) intersection over union of two sets of xyxy boxes."""
    if len(a) == 0 or len(b) == 0:
        return np.zeros((len(a), len(b)), np.float32)
    inter = box_intersection(a, b)
    area_a = np.prod(a[:, 2:] - a[:, :2], 1)
    area_b = np.prod(b[:, 2:] - b[:, :2], 1)
    return inter / np.maximum(area_a[:, None] + area_b[None, :] - inter, 1e-9)


def repeated_boxes(xyxy: np.ndarray, class_id: np.ndarray | list[int], iou: float = 0.8) -> np.ndarray:
    """Mask of the boxes that repeat an earlier kept box of their class (IoU ≥ ``iou``): one tile labelled twice.
    Greedy in order, like NMS: a box that only repeats a dropped box is kept."""
    match = (box_iou(xyxy, xyxy) >= iou) & np.equal.outer(np.asarray(class_id), np.asarray(class_id))
    repeated = np.zeros(len(xyxy), bool)
    for i in range(1, len(xyxy)):
        repeated[i] = (match[i, :i] & ~repeated[:i]).any()
    return repeated
