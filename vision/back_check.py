"""Detections → Detections with every box named ``back`` checked: is it a face-down tile (闷豆, a face-down kong)
or something flat in a back's colour? (onnxruntime + OpenCV; no torch.)

Most of the detector's false ``back`` boxes lie on nothing that is a tile: a coin, a chip or a card on the table, the
top edge of a standing tile, the side of a tile in its back colour. Seen from the detector's 640×640 view of the
whole photo, and in the crop classifier's tight crop, a green chip and a green back look alike. The back check is a
small binary network that sees each ``back`` box with its surroundings (the box grown by half its size on each
side): a face-down tile has a body, ivory edges and a shadow, and usually neighbours; a chip has none of these.
A checked box's confidence is multiplied by p(face-down tile) ** ``weight``; other boxes are untouched. A box the
detector and the crop classifier together already call ``back`` with confidence ≥ ``BACK_SURE`` is not checked:
there both networks have seen the tile itself, and the check, which sees mostly its surroundings, was measured to
sink teal backs beside a meld in turned photos (docs/experiments/views-run43.md).

A :class:`BackCheck` called on (image, detections) is the stage's entry point; the :class:`~vision.detect.Detector`
holds one and calls it after the crop classifier. ``datasets/back_crops.py`` cuts its training crops and
``vision/training/train_back_check.py`` trains it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from vision.classes import BACK
from vision.classify import crop_tiles, to_input
from vision.detections import Detections
from vision.images import load_image
from vision.sessions import open_session, run_crops

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BACK_CHECK = ROOT / "models" / "zhuoji-backs.onnx"
BACK_CROP_SIZE = 64
BACK_CROP_MARGIN = 0.5  # share of a box's width/height added on each side: the tile's body and neighbours in view
BACK_WEIGHT = 1.0  # exponent of p(face-down tile) in a checked box's confidence (models/README.md: chosen on seed 0)
BACK_SURE = 0.8  # a back box this confident is not checked (chosen on the views37 validation scenes)


class BackCheck:
    """One onnxruntime session of the back-check model; ``__call__`` is safe to use from many threads."""

    def __init__(self, model_path: str | os.PathLike = DEFAULT_BACK_CHECK, threads: int | None = None) -> None:
        path = Path(model_path)
        self.session = open_session(path, threads, "back check")
        meta = self.session.get_modelmeta().custom_metadata_map
        if meta.get("kind") != "back_check":
            raise ValueError(f"{path}: not a back-check model (its metadata has no kind 'back_check')")
        self.size = int(meta.get("crop_size", BACK_CROP_SIZE))
        self.margin = float(meta.get("crop_margin", BACK_CROP_MARGIN))
        self.model_path = path

    def probs(self, img: np.ndarray, xyxy: np.ndarray) -> np.ndarray:
        """(N,) probability that each box is a face-down tile."""
        if len(xyxy) == 0:
            return np.zeros(0, np.float32)
        crops = crop_tiles(img, xyxy, self.size, self.margin)
        return run_crops(self.session, to_input(crops)).reshape(-1)

    def __call__(self, image, dets: Detections, weight: float = BACK_WEIGHT, sure: float = BACK_SURE) -> Detections:
        """The detections with each ``back`` box under confidence ``sure`` multiplied by p(face-down tile) **
        ``weight``; boxes, names and every other box unchanged (``sure`` > 1 checks every ``back`` box)."""
        checked = np.flatnonzero((dets.class_id == BACK) & (dets.confidence < sure))
        if len(checked) == 0:
            return dets
        p = self.probs(load_image(image), dets.xyxy[checked])
        out = dets[np.arange(len(dets))]  # a copy
        out.confidence[checked] = out.confidence[checked] * np.power(np.clip(p, 1e-6, 1.0), weight)
        return out

