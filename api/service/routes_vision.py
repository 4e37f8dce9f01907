"""Routes that take photos: /v1/detect, /v1/read, /v1/score, /v1/chajiao/photos.

``async def`` routes: admission (``api.service.admission``) has let the request in before its body was read; the upload
is spooled to a temporary file while it is received, its header checked on the event loop, then the CPU-bound
work (the pipeline's ``*_bytes`` functions, decoding included) runs in a worker thread through ``app.state.runner``,
with a deadline, cancelled when the client goes away.
"""

from __future__ import annotations

from typing import Annotated, BinaryIO

from fastapi import APIRouter, File, Form, Request, UploadFile
from starlette.concurrency import run_in_threadpool

from api.service.deps import loaded_detector, store_errors, table_store
from api.service.errors import ApiError
from api.service.responses import ErrorResponse
from api.service.uploads import checked_upload
from pipeline.calibration import Calibration, KeptCalibration, kept_calibration, parse_calibration_text
from pipeline.detection import detect_bytes
from pipeline.detection_models import DetectResponse
from pipeline.hand import chajiao, text_hand
from pipeline.models import (
    ChajiaoResponse,
    Preset,
    ReadResponse,
    ScoreContext,
    ScoreResponse,
)
from pipeline.photo import (
    Deadline,
    Detector,
    photo_hand_bytes,
    read_bytes,
    read_response,
    score_bytes,
)

ERRORS = {413: {"model": ErrorResponse, "description": "body over 20 MB"},
          415: {"model": ErrorResponse, "description": "not a JPEG, PNG, WebP, BMP or TIFF image"},
          422: {"model": ErrorResponse, "description": "corrupt or oversized image, or bad context"},
          503: {"model": ErrorResponse, "description": "no model loaded, busy, or past the photo's deadline "
                                                       "(Retry-After)"}}

router = APIRouter(prefix="/v1", tags=["photos"], responses=ERRORS)
ImageFile = Annotated[UploadFile, File(description="photo of one player's tiles (JPEG, PNG, WebP, BMP, TIFF)")]


@router.post("/detect", response_model=DetectResponse, summary="Find and name the tiles in a photo")
async def post_detect(request: Request, image: ImageFile) -> DetectResponse:
    """Boxes, tile names (1m..9s, back = face down, other = not in the 108-tile set) and confidences."""
    data = await checked_upload(image)
    detector = loaded_detector(request)
    return await request.app.state.runner.run(detect_bytes, detector, data, is_disconnected=request.is_disconnected)


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
    store = table_store(request)
    with store_errors():
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
    detector = loaded_detector(request)
    photo = await request.app.state.runner.run(read_bytes, detector, data, "image", "auto", calibrated,
                                               is_disconnected=request.is_disconnected)
    return read_response(photo, detector.model_path.name)


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
    detector = loaded_detector(request)
    return await request.app.state.runner.run(_score, detector, data, context, calibrated,
                                              is_disconnected=request.is_disconnected)


def _score(detector: Detector, data: BinaryIO, context: ScoreContext,
           calibration: Calibration | KeptCalibration | None = None, deadline: Deadline | None = None) -> ScoreResponse:
    # A photo job, in a worker: the answer alone (the command line also draws the read photo).
    return score_bytes(detector, data, context, calibration, deadline)[1]


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
            hands.append(await request.app.state.runner.run(photo_hand_bytes, loaded_detector(request), seat, data,
                                                            is_disconnected=request.is_disconnected))
    if len(hands) < 2:
        raise ApiError(422, "invalid_request", "give at least 2 hands (photoN or handN for seats N = 0..3)")
    return await run_in_threadpool(chajiao, hands, rules, dealer, streak)
