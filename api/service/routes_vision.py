"""Routes that take photos: /v1/detect, /v1/read, /v1/score, /v1/chajiao/photos.

``async def`` routes: admission (``api.service.admission``) has let the request in before its body was read; the upload
is spooled to a temporary file while it is received, its header checked on the event loop, then the CPU-bound
work (decoding included) runs in a worker thread through ``app.state.runner``, with a deadline, cancelled when the
client goes away.
"""

from __future__ import annotations

import time
from typing import Annotated, BinaryIO

from fastapi import APIRouter, File, Form, Request, UploadFile
from starlette.concurrency import run_in_threadpool

from api.service.errors import ApiError
from api.service.responses import ErrorResponse
from api.service.routes_tables import _errors, _store
from api.service.uploads import checked_upload, decode_image_reduced
from pipeline.calibration import KeptCalibration, kept_calibration, parse_calibration_text
from pipeline.hand import DrawHand, chajiao, text_hand
from pipeline.models import (
    ChajiaoResponse,
    DetectResponse,
    Preset,
    ReadResponse,
    ScoreContext,
    ScoreResponse,
)
from pipeline.photo import Photo as ReadPhoto
from pipeline.photo import detect_photo, photo_hand, read_photo, read_response, score_photo
from vision.calibrate import Calibration
from vision.deadline import Deadline
from vision.detect import Detector

ERRORS = {413: {"model": ErrorResponse, "description": "body over 20 MB"},
          415: {"model": ErrorResponse, "description": "not a JPEG, PNG, WebP, BMP or TIFF image"},
          422: {"model": ErrorResponse, "description": "corrupt or oversized image, or bad context"},
          503: {"model": ErrorResponse, "description": "no model loaded, busy, or past the photo's deadline "
                                                       "(Retry-After)"}}

router = APIRouter(prefix="/v1", tags=["photos"], responses=ERRORS)
ImageFile = Annotated[UploadFile, File(description="photo of one player's tiles (JPEG, PNG, WebP, BMP, TIFF)")]


def _detector(request: Request) -> Detector:
    detector = getattr(request.app.state, "detector", None)
    if detector is None:
        reason = getattr(request.app.state, "model_error", None) or "no model"
        raise ApiError(503, "model_unavailable", f"the tile model is not loaded ({reason}); text endpoints still work")
    return detector


@router.post("/detect", response_model=DetectResponse, summary="Find and name the tiles in a photo")
async def post_detect(request: Request, image: ImageFile) -> DetectResponse:
    """Boxes, tile names (1m..9s, back = face down, other = not in the 108-tile set) and confidences."""
    data = await checked_upload(image)
    detector = _detector(request)
    return await request.app.state.runner.run(_detect, detector, data, is_disconnected=request.is_disconnected)


CalibrationField = Annotated[str | None, Form(description="the table's calibration (the JSON /v1/calibrate "
                                                           "returned): its own tiles' references name tiles too")]


TableField = Annotated[str | None, Form(max_length=40, description="a table's id: name tiles with the calibration "
                                                                    "kept with that table (when it has one)")]


async def _calibration(request: Request, calibration: str | None, table: str | None
                       ) -> Calibration | KeptCalibration | None:
    """The calibration a photo is read with: the form field's, or the one kept with ``table`` (404: no table)."""
    if calibration is not None and calibration.strip() and table:
        raise ApiError(422, "invalid_request", "give calibration or table, not both")
    if not table:
        return parse_calibration_text(calibration)
    store = _store(request)
    with _errors():
        kept = await run_in_threadpool(store.get_calibration, table, True)
    return kept_calibration(kept.calibration if kept is not None else None)


@router.post("/read", response_model=ReadResponse, summary="Read one player's tiles from a photo")
async def post_read(request: Request, image: ImageFile, calibration: CalibrationField = None,
                    table: TableField = None) -> ReadResponse:
    """The layout (手牌 concealed hand, 副露 melds, 牌河 discards, 翻鸡 indicator) and the reading: each box's
    tile after the rules' checks (at most 4 copies, melds alike, a 14-tile hand complete), doubtful tiles, and
    retake reasons in plain words. The live camera view polls this. With ``table``, the calibration kept with
    that table names the tiles too; one that no longer fits the crop classifier is left out and ``calibration``
    in the answer says "recalibrate: …"."""
    calibrated = await _calibration(request, calibration, table)
    data = await checked_upload(image)
    detector = _detector(request)
    photo = await request.app.state.runner.run(_read, detector, data, "image", calibrated,
                                               is_disconnected=request.is_disconnected)
    return ReadResponse(**read_response(photo, detector.model_path.name))


@router.post("/score", response_model=ScoreResponse, summary="Score the hand in a photo")
async def post_score(request: Request, image: ImageFile, context: Annotated[ScoreContext, Form()],
                     calibration: CalibrationField = None, table: TableField = None) -> ScoreResponse:
    """Read the photo, then score its hand: 牌型 hand type (中文 + English), fan, win value, waits (听牌) with the
    copies still unseen, 叫牌 (ready) status, explanation lines, and the photo with labelled boxes. A 14-tile
    hand is scored as won (winning tile: ``win_tile`` or the last tile); a 13-tile hand gets its waits. When
    the tiles read cannot be scored (wrong count, unreadable tile), ``analysis`` is null and ``score_error``
    says why; ``hand_request`` is what to send to /v1/hand after correcting the tiles."""
    known = {"image", "calibration", "table"}
    unknown = sorted(set((await request.form()).keys()) - set(ScoreContext.model_fields) - known)
    if unknown:
        raise ApiError(422, "invalid_request", f"unknown form field(s) {', '.join(unknown)}; known: image, "
                                               f"calibration, table, {', '.join(ScoreContext.model_fields)}")
    calibrated = await _calibration(request, calibration, table)
    data = await checked_upload(image)
    detector = _detector(request)
    return await request.app.state.runner.run(_score, detector, data, context, calibrated,
                                              is_disconnected=request.is_disconnected)


# The photo jobs, in a worker: read the spooled upload and decode it (the parsing edge), then the pipeline, timed
# from the first byte decoded; ``deadline`` from the runner, checked between model runs.
def _decode(detector: Detector, data: BinaryIO, field: str = "image"):
    """The photo, a large JPEG at the reduced size the detector needs, and its full (width, height)."""
    return decode_image_reduced(data, field, getattr(detector, "min_side", None))  # None: a stand-in detector


def _detect(detector: Detector, data: BinaryIO, deadline: Deadline | None = None) -> DetectResponse:
    start = time.perf_counter()
    image, full_size = _decode(detector, data)
    return detect_photo(detector, image, start, deadline=deadline, full_size=full_size)


def _read(detector: Detector, data: BinaryIO, field: str = "image",
          calibration: Calibration | KeptCalibration | None = None, deadline: Deadline | None = None) -> ReadPhoto:
    start = time.perf_counter()
    image, full_size = _decode(detector, data, field)
    return read_photo(detector, image, start=start, deadline=deadline, full_size=full_size, calibration=calibration)


def _score(detector: Detector, data: BinaryIO, context: ScoreContext,
           calibration: Calibration | KeptCalibration | None = None, deadline: Deadline | None = None) -> ScoreResponse:
    start = time.perf_counter()
    image, full_size = _decode(detector, data)
    return score_photo(detector, image, context, start, deadline=deadline, full_size=full_size,
                       calibration=calibration)


def _photo_hand(detector: Detector, seat: int, data: BinaryIO, deadline: Deadline | None = None) -> DrawHand:
    return photo_hand(_read(detector, data, f"photo{seat}", deadline=deadline).reading, seat)


Hand = Annotated[str | None, Form(max_length=200, description="MPSZ text, melds as TYPE:TILE, e.g. "
                                                              "'123m456p789s1p pong:5m'")]
Photo = Annotated[UploadFile | None, File(description="photo of the hand")]


@router.post("/chajiao/photos", response_model=ChajiaoResponse, summary="黄牌查叫 from photos and/or text")
async def post_chajiao_photos(request: Request, photo0: Photo = None, photo1: Photo = None, photo2: Photo = None,
                              photo3: Photo = None, hand0: Hand = None, hand1: Hand = None, hand2: Hand = None,
                              hand3: Hand = None, rules: Annotated[Preset, Form()] = "gy-normal",
                              dealer: Annotated[int, Form(ge=0, le=3)] = 0,
                              streak: Annotated[int, Form(ge=1, le=1000)] = 1) -> ChajiaoResponse:
    """The exhaustive-draw check (docs/rules.md#chajiao) with each seat N given as ``photoN`` or ``handN`` (2–4 seats):
    who is 叫牌 (ready), waits and best fan, who pays whom."""
    photos, texts = [photo0, photo1, photo2, photo3], [hand0, hand1, hand2, hand3]
    hands = []
    for seat, (photo, text) in enumerate(zip(photos, texts, strict=True)):
        if photo is not None and text:
            raise ApiError(422, "invalid_request", f"seat {seat}: give photo{seat} or hand{seat}, not both")
        if text:
            hands.append(text_hand(seat, text))
        elif photo is not None:
            data = await checked_upload(photo, f"photo{seat}")
            hands.append(await request.app.state.runner.run(_photo_hand, _detector(request), seat, data,
                                                            is_disconnected=request.is_disconnected))
    if len(hands) < 2:
        raise ApiError(422, "invalid_request", "give at least 2 hands (photoN or handN for seats N = 0..3)")
    return await run_in_threadpool(chajiao, hands, rules, dealer, streak)
