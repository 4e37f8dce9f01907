"""The ``calibration`` form field of the photo routes (/v1/read, /v1/score): the JSON /v1/calibrate returned."""

from __future__ import annotations

from api.errors import ApiError
from vision.calibrate import Calibration, CalibrationError, parse_calibration

MAX_CALIBRATION = 200_000  # characters: 27 × 4 × 256 float16 numbers in base64 are about 74,000


def calibration_field(text: str | None) -> Calibration | None:
    """The ``calibration`` form field of the photo routes: the JSON /v1/calibrate returned, or absent."""
    if text is None or not text.strip():
        return None
    if len(text) > MAX_CALIBRATION:
        raise ApiError(422, "invalid_calibration", f"calibration: over {MAX_CALIBRATION:,} characters")
    try:
        return parse_calibration(text)
    except CalibrationError as exc:
        raise ApiError(422, "invalid_calibration", str(exc)) from None
