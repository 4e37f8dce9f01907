"""Shared by the API, web and live tests: sample photos, the model to test with, a scripted detector."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np

from vision.classes import CLASS_NAMES
from vision.detect import DEFAULT_MODEL
from vision.detections import Detections

ROOT = Path(__file__).resolve().parents[2]
SHARED_TEST_IMAGES = ROOT.parent / "shared" / "datasets" / "rf-chinese-mahjong-v4" / "images" / "test"
SAMPLES = sorted((ROOT / "datasets" / "samples").glob("*.jpg")) or sorted(SHARED_TEST_IMAGES.glob("*.jpg"))[:5]

# 14 tiles of a complete 平胡 (plain win) hand, laid in one row; the last one is the winning tile.
WIN_ROW = ["1m", "2m", "3m", "4p", "5p", "6p", "7s", "8s", "9s", "1p", "1p", "5p", "5p", "5p"]


def model_path() -> Path | None:
    """The shipped model, else ``ZHUOJI_MODEL``; None when neither exists (photo tests then skip)."""
    for candidate in (DEFAULT_MODEL, os.environ.get("ZHUOJI_MODEL")):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def encode(image: np.ndarray, ext: str = ".jpg") -> bytes:
    ok, data = cv2.imencode(ext, image)
    assert ok
    return data.tobytes()


def blank_photo(width: int = 640, height: int = 300) -> bytes:
    return encode(np.full((height, width, 3), 90, np.uint8))


def row_detections(tiles: list[str], image_size: tuple[int, int] = (640, 300)) -> Detections:
    """Boxes of ``tiles`` side by side in one row, as a detector would report a photographed hand."""
    xyxy = np.array([[20 + 42 * i, 100, 60 + 42 * i, 155] for i in range(len(tiles))], float)
    return Detections(xyxy, np.full(len(tiles), 0.95), [CLASS_NAMES.index(t) for t in tiles], image_size=image_size)


class ScriptedDetector:
    """Stands in for ``vision.detect.Detector``: returns fixed detections whatever the photo shows, so the
    layout, reading and scoring stages can be tested on a known hand."""

    def __init__(self, tiles: list[str]) -> None:
        self.tiles = tiles
        self.model_path = Path("scripted.onnx")
        self.classifier = None

    def __call__(self, image: np.ndarray, **_: object) -> Detections:
        return row_detections(self.tiles, (image.shape[1], image.shape[0]))
