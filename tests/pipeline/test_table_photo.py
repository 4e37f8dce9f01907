"""``pipeline.table_photo``: what the table photo's stages are handed (a stand-in detector records it)."""

from __future__ import annotations

import cv2
import numpy as np

from pipeline.table_photo import read_table_bytes
from vision.detections import Detections


class _Recorder:
    """A detector that finds nothing and keeps what it was given."""

    min_side = 1600

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[int, ...], tuple[int, ...] | None]] = []

    def __call__(self, image: np.ndarray, **kwargs) -> Detections:
        sharper = kwargs.get("sharper")
        self.calls.append((image.shape, None if sharper is None else sharper.shape))
        return Detections.empty((image.shape[1], image.shape[0]))


def _jpeg(width: int, height: int) -> bytes:
    rng = np.random.default_rng(0)
    ok, data = cv2.imencode(".jpg", rng.integers(0, 255, (height, width, 3), np.uint8))
    assert ok
    return data.tobytes()


def test_a_large_photo_is_detected_at_half_size_and_its_crops_get_the_full_size() -> None:
    """A 12 MP-like JPEG (here 3400 × 2550: twice the detector's 1,600 px fits) is decoded at half size for the
    detector, and at full size for the crops of small tiles; a photo decoded whole has no sharper copy, and a
    larger one gets its sharper copy one reduction step less reduced than the detector's, not at full size."""
    detector = _Recorder()
    photo = read_table_bytes(detector, _jpeg(3400, 2550))  # type: ignore[arg-type]
    assert detector.calls == [((1275, 1700, 3), (2550, 3400, 3))]
    assert photo.full_size == (3400, 2550)
    read_table_bytes(detector, _jpeg(1800, 1350))  # type: ignore[arg-type]
    assert detector.calls[1] == ((1350, 1800, 3), None)
    ok, flat = cv2.imencode(".jpg", np.full((5200, 6800, 3), 128, np.uint8))  # 35 MP: a quarter, and a half
    assert ok
    read_table_bytes(detector, flat.tobytes())  # type: ignore[arg-type]
    assert detector.calls[2] == ((1300, 1700, 3), (2600, 3400, 3))
