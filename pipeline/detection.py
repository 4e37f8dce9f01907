"""A photo through the detector alone (``POST /v1/detect``, ``zhuoji detect``): decoded, its boxes found and named.

The first stage of every photo job (``pipeline.photo`` reads on from here); a module of its own so that a
detection loads neither the layout and reading stages nor the rules engine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from pipeline.detection_models import Alternative, DetectedTile, DetectResponse, ImageInfo
from pipeline.images import decode_photo
from vision.annotate import draw_detections
from vision.deadline import Deadline
from vision.detect import Detector
from vision.detections import Detections


def image_info(image: np.ndarray, full_size: tuple[int, int] | None) -> ImageInfo:
    """The photo's size: its own (width, height) when ``image`` is a reduced decode of it."""
    width, height = full_size or (int(image.shape[1]), int(image.shape[0]))
    return ImageInfo(width=width, height=height)


@dataclass
class Found:
    """One photo through the detector alone (``POST /v1/detect``, ``zhuoji detect``)."""

    image: np.ndarray
    dets: Detections  # in ``image``'s pixels
    seconds: float
    full_size: tuple[int, int] | None = None  # the photo's (width, height) when ``image`` is a reduced decode


def decode(detector: Detector, data: bytes | BinaryIO, field: str = "image") -> tuple[np.ndarray, tuple[int, int]]:
    """The photo's bytes decoded (:func:`pipeline.images.decode_photo`), a large JPEG at the reduced size the
    detector needs; and the photo's full (width, height)."""
    return decode_photo(data, field, getattr(detector, "min_side", None))  # None: a stand-in detector


def find_tiles(detector: Detector, data: bytes | BinaryIO, field: str = "image", deadline: Deadline | None = None,
               **look: Any) -> Found:
    """Decode the photo and run the detector on it (``look``: the detector's own options, e.g. ``conf``,
    ``tiled``, ``turned``; ``deadline``: checked between model runs, :mod:`vision.deadline`)."""
    start = time.perf_counter()
    image, full_size = decode(detector, data, field)
    dets = detector(image, deadline=deadline, **look)
    return Found(image, dets, time.perf_counter() - start, full_size)


def detect_response(found: Found, model: str) -> DetectResponse:
    """Boxes (in the photo's own pixels), tile names and confidences."""
    dets = found.dets.rescaled(found.full_size) if found.full_size else found.dets
    tiles = [DetectedTile(index=i, tile=d["tile"], box=d["box"], confidence=d["confidence"],
                          alternatives=[Alternative(**a) for a in d["alternatives"]])
             for i, d in enumerate(dets.to_json())]
    return DetectResponse(image=image_info(found.image, found.full_size), count=len(tiles), tiles=tiles,
                          model=model, seconds=round(found.seconds, 3))


def detect_bytes(detector: Detector, data: bytes | BinaryIO, field: str = "image",
                 deadline: Deadline | None = None) -> DetectResponse:
    """``POST /v1/detect`` and ``zhuoji detect --json``: the photo's boxes, names and confidences."""
    return detect_response(find_tiles(detector, data, field, deadline), detector.model_path.name)


def annotated_image(found: Found) -> np.ndarray:
    """The photo with each box labelled by the detector's name for it (``zhuoji detect --annotate``)."""
    return draw_detections(found.image, found.dets)
