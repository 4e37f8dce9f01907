"""Teach it your set, for the shells: a calibration photo → the calibration JSON, a calibration as text → the
value, and detections named with it (``vision/calibrate.py`` holds the stage; this module says no the pipeline's
way, with :class:`~pipeline.errors.Refused`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
from pydantic import ValidationError

from pipeline.errors import Refused, validation_line
from pipeline.images import decode_photo
from pipeline.models import CalibrationFile, CalibrationIn, CalibrationNote, DisagreedTile
from vision.calibrate import (
    MAX_FILE_BYTES,
    SUITED,
    TURNS,
    Calibration,
    CalibrationError,
    apply_calibration,
    build_calibration,
    check_compatible,
    find_grid,
    load_calibration,
    parse_calibration,
)
from vision.classes import CLASS_NAMES
from vision.deadline import Deadline, check
from vision.detect import Detector
from vision.detections import Detections
from vision.files import read_file

MAX_CALIBRATION = 200_000  # characters: 27 × 4 × 256 float16 numbers in base64 are about 74,000


def calibrate_photo(detector: Detector, image: np.ndarray, deadline: Deadline | None = None) -> CalibrationFile:
    """``zhuoji calibrate`` and ``POST /v1/calibrate``: the calibration JSON of a photo of the set's 27 suited tiles
    in three rows (both looks of the detector, as a scored hand gets); refused (``calibration_photo``) with what
    was found when the photo does not show them so. ``deadline``: checked between model runs."""
    if detector.classifier is None:
        raise Refused("calibration_photo", "calibration needs the crop classifier, and this service runs without one")
    dets = detector(image, turned=True, deadline=deadline)
    check(deadline)
    try:
        made = build_calibration(detector.classifier, image, dets).to_json()
        grid = find_grid(dets)  # the same 27 boxes in tile order: which the networks named otherwise
    except CalibrationError as exc:
        raise Refused("calibration_photo", str(exc)) from None
    disagreed = [DisagreedTile(tile=CLASS_NAMES[k], read_as=grid.names[k])
                 for k in range(SUITED) if int(grid.class_id[k]) != k]
    return CalibrationFile(**made, disagreed=disagreed)


def calibrate_bytes(detector: Detector, data: bytes | BinaryIO, field: str = "image",
                    deadline: Deadline | None = None) -> CalibrationFile:
    """:func:`calibrate_photo` on a photo's bytes (decoded here, ``pipeline.images``): what ``POST /v1/calibrate``,
    ``POST /v1/tables/{id}/calibrate`` and ``zhuoji calibrate`` / ``zhuoji table calibrate`` run."""
    image, _ = decode_photo(data, field)
    return calibrate_photo(detector, image, deadline)


def read_calibration_file(path: str | os.PathLike) -> Calibration:
    """The calibration in a file written by ``zhuoji calibrate --out`` (``read``/``score --calibration``);
    refused (``invalid_calibration``) when missing or malformed."""
    try:
        return load_calibration(path)
    except CalibrationError as exc:
        raise Refused("invalid_calibration", str(exc)) from None


def calibration_file(path: str | os.PathLike) -> CalibrationFile:
    """The calibration in a file written by ``zhuoji calibrate --out``, checked as ``PUT
    /v1/tables/{id}/calibration`` checks its body (:class:`CalibrationIn`, :func:`check_calibration`), to keep
    with a table."""
    text = read_file(path, MAX_FILE_BYTES)
    try:
        calibration = CalibrationIn.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            raise Refused("invalid_calibration", f"{path} is not JSON ({first['msg']})") from None
        raise Refused("invalid_calibration", f"{path} is not a calibration file ({validation_line(exc)})") from None
    try:
        return check_calibration(calibration)
    except Refused as exc:
        raise Refused(exc.code, f"{path}: {exc.message}") from None


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


def check_calibration(calibration: CalibrationFile) -> CalibrationFile:
    """A calibration a client sends to keep (``PUT /v1/tables/{id}/calibration``), refused
    (``invalid_calibration``) unless its references parse (version, tiles, shape, base64 float16 numbers);
    returned as given."""
    try:
        Calibration.from_json(calibration.model_dump(mode="json"))
    except CalibrationError as exc:
        raise Refused("invalid_calibration", str(exc)) from None
    return calibration


def calibration_problem(detector: Detector | None, model: str, kind: str, model_sha256: str | None) -> str | None:
    """Why a calibration made with the crop classifier ``model`` (its output ``kind``, the file's SHA-256) cannot
    name tiles with this detector's classifier, or None when it can (or no model is loaded: nothing to say yet)."""
    if detector is None:
        return None
    if detector.classifier is None:
        return "calibration needs the crop classifier, and this service runs without one"
    try:  # the same check as a photo's, on the summary alone (the references are not needed for it)
        summary = Calibration(np.zeros((SUITED, len(TURNS), 1), np.float32), kind, model, 0.0, model_sha256)
        check_compatible(summary, detector.classifier)
    except CalibrationError as exc:
        return str(exc)
    return None


@dataclass(frozen=True)
class KeptCalibration:
    """A table's stored calibration for reading that table's photos: ``calibration`` when the stored JSON still
    parses, else ``problem``; neither when the table has none. Unlike a calibration the client sends, one that no
    longer fits (the models were retrained) never refuses a photo: it is read without it, and the note says so."""

    calibration: Calibration | None = None
    problem: str | None = None


def kept_calibration(kept: CalibrationFile | None) -> KeptCalibration:
    """The :class:`KeptCalibration` of a table's stored calibration (None: the table has none)."""
    if kept is None:
        return KeptCalibration()
    try:
        return KeptCalibration(Calibration.from_json(kept.model_dump(mode="json")))
    except CalibrationError as exc:
        return KeptCalibration(problem=str(exc))


def with_kept(detector: Detector, kept: KeptCalibration, image: np.ndarray, dets: Detections
              ) -> tuple[Detections, CalibrationNote]:
    """The detections named with a table's calibration when it fits this detector's crop classifier; else as they
    are, with a note starting "recalibrate:" that says why."""
    if kept.calibration is None and kept.problem is None:
        return dets, CalibrationNote(applied=False, source="table", message="this table has no calibration of its "
                                     "set: read with the shipped models only")
    problem = kept.problem
    if kept.calibration is not None:
        try:
            return calibrated(detector, kept.calibration, image, dets), CalibrationNote(
                applied=True, source="table", message="read with your set's calibration")
        except Refused as exc:
            problem = exc.message
    return dets, CalibrationNote(applied=False, source="table",
                                 message=f"recalibrate: {problem}; this photo was read without it")
