"""Teach it your set, for the shells: a calibration photo → the calibration JSON, a calibration as text → the
value, and detections named with it (``vision/calibrate.py`` holds the stage; this module says no the pipeline's
way, with :class:`~pipeline.errors.Refused`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pipeline.errors import Refused
from vision.calibrate import (
    Calibration,
    CalibrationError,
    apply_calibration,
    build_calibration,
    parse_calibration,
)
from vision.deadline import Deadline, check
from vision.detect import Detector
from vision.detections import Detections

MAX_CALIBRATION = 200_000  # characters: 27 × 4 × 256 float16 numbers in base64 are about 74,000


def calibrate_photo(detector: Detector, image: np.ndarray, deadline: Deadline | None = None) -> dict[str, Any]:
    """``zhuoji calibrate`` and ``POST /v1/calibrate``: the calibration JSON of a photo of the set's 27 suited tiles
    in three rows (both looks of the detector, as a scored hand gets); refused (``calibration_photo``) with what
    was found when the photo does not show them so. ``deadline``: checked between model runs."""
    if detector.classifier is None:
        raise Refused("calibration_photo", "calibration needs the crop classifier, and this service runs without one")
    dets = detector(image, turned=True, deadline=deadline)
    check(deadline)
    try:
        return build_calibration(detector.classifier, image, dets).to_json()
    except CalibrationError as exc:
        raise Refused("calibration_photo", str(exc)) from None


def parse_calibration_text(text: str | None, source: str = "calibration") -> Calibration | None:
    """A calibration from its JSON text (a form field's or a file's); None when absent or blank."""
    if text is None or not text.strip():
        return None
    if len(text) > MAX_CALIBRATION:
        raise Refused("invalid_calibration", f"{source}: over {MAX_CALIBRATION:,} characters")
    try:
        return parse_calibration(text, source)
    except CalibrationError as exc:
        raise Refused("invalid_calibration", str(exc)) from None


def calibrated(detector: Detector, calibration: Calibration, image: np.ndarray, dets: Detections) -> Detections:
    """The detections named with the calibration too; one this detector's classifier cannot use is refused."""
    if detector.classifier is None:
        raise Refused("invalid_calibration", "calibration needs the crop classifier, and this service runs without one")
    try:
        return apply_calibration(calibration, detector.classifier, image, dets)
    except CalibrationError as exc:
        raise Refused("invalid_calibration", str(exc)) from None
