"""``POST /v1/calibrate``: teach it your set. A photo of the table's 27 suited tiles in three rows (1–9m, 1–9p,
1–9s) → the calibration JSON (``pipeline/calibration.py``), to send back as the ``calibration`` form field of
/v1/read and /v1/score (or keep with the table: storing it there is for the tables API to wire)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Request, UploadFile

from api.service.deps import loaded_detector
from api.service.routes_vision import ERRORS
from api.service.uploads import checked_upload
from pipeline.calibration import calibrate_bytes
from pipeline.models import CalibrationFile

router = APIRouter(prefix="/v1", tags=["photos"], responses=ERRORS)


@router.post("/calibrate", summary="Teach it your set: references from a photo of its 27 suited tiles")
async def post_calibrate(request: Request, image: Annotated[UploadFile, File(
        description="the 27 suited tiles face up in three rows: 1–9m, 1–9p, 1–9s")]) -> CalibrationFile:
    """Finds the 27 tiles, names each by its place (row = suit, position = rank; the rows may come in any order and
    the photo upside down), and returns the set's references: per tile, the crop classifier's features of its crop
    at four quarter turns (float16, base64). Send this JSON as the ``calibration`` form field of /v1/read or
    /v1/score to name tiles at that table with it too. A photo without 27 tiles in three rows of nine is a 422
    (``calibration_photo``) saying what was found."""
    data = await checked_upload(image)
    detector = loaded_detector(request)
    return await request.app.state.runner.run(calibrate_bytes, detector, data,
                                              is_disconnected=request.is_disconnected)
