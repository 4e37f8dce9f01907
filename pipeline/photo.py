"""Photos: image → detections → layout → reading → hand request → hand analysis.

Each step is a stage function of ``vision/`` or ``scoring/``; this module only joins them and shapes the
answers (every box with its role, so the web page can let people correct a tile and re-score the hand
through /v1/hand without running the detector again). A photo's bytes are decoded here too (``*_bytes``,
``pipeline.images``), so the HTTP routes and the command line refuse the same photos with the same words.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from typing import BinaryIO

import cv2
import numpy as np
from pydantic import ValidationError

from pipeline.calibration import KeptCalibration, calibrated, with_kept
from pipeline.detection import decode, image_info
from pipeline.detection_models import Alternative
from pipeline.errors import Refused
from pipeline.hand import DrawHand, analyze
from pipeline.models import (
    CalibrationNote,
    ChangeOut,
    DoubtOut,
    ErrorBody,
    HandAnalysis,
    HandRead,
    HandRequest,
    LayoutOut,
    MeldIn,
    MeldRead,
    ReadResponse,
    ReadTile,
    RetakeReason,
    ScoreContext,
    ScoreResponse,
    win_flags,
)
from scoring.tiles import to_mpsz
from vision.annotate import draw_detections
from vision.calibrate import Calibration
from vision.classes import CLASS_NAMES
from vision.deadline import Deadline, check
from vision.detect import Detector
from vision.detections import Detections
from vision.layout import Layout, arrange, build
from vision.reading import Reading, read
from vision.upright import look_at_faces

ANNOTATED_MAX_SIDE = 1280  # the annotated JPEG is for a phone screen; full resolution only costs bandwidth


# ---------------------------------------------------------------------------------------- photo → tiles


@dataclass
class Photo:
    """One photo through the vision stages."""

    image: np.ndarray
    dets: Detections
    layout: Layout
    reading: Reading
    seconds: float
    full_size: tuple[int, int] | None = None  # the photo's (width, height) when ``image`` is a reduced decode
    calibration: CalibrationNote | None = None  # whether a set's calibration named the tiles

    def boxes(self) -> Detections:
        """The detections in the photo's own pixels (``dets`` are in ``image``'s)."""
        return self.dets.rescaled(self.full_size) if self.full_size else self.dets


def read_photo(detector: Detector, image: np.ndarray, turned: bool | str = "auto", start: float | None = None,
               deadline: Deadline | None = None, full_size: tuple[int, int] | None = None,
               calibration: Calibration | KeptCalibration | None = None, found: Detections | None = None) -> Photo:
    """Detect, group (``vision.layout``) and read (``vision.reading``) one decoded hand photo. ``turned``: the
    detector also looks at the photo turned 180° ("auto": when a tile is doubtful after the first look); ``start``:
    when decoding began, for ``seconds``; ``deadline``: checked between model runs (:mod:`vision.deadline`);
    ``full_size``: the photo's (width, height) when ``image`` is a reduced decode of it; ``calibration``: the
    table's own set's references also name the tiles (``vision.calibrate``): one sent with the photo must fit the
    crop classifier (else refused), a table's stored one is left out when it no longer does (the note says so);
    ``found``: the photo's detections when the caller already has them (live mode's tracked tiles): the detector
    does not run again. The photo is grouped once (``vision.layout.arrange``); a hand running up or down it is
    oriented by the evidence of which way its faces point (``vision.upright``, from the crop classifier's features
    of the detection)."""
    start = time.perf_counter() if start is None else start
    dets = detector(image, turned=turned, deadline=deadline) if found is None else found
    check(deadline)
    note = None
    if isinstance(calibration, KeptCalibration):
        dets, note = with_kept(detector, calibration, image, dets)
        check(deadline)
    elif calibration is not None:
        dets = calibrated(detector, calibration, image, dets)
        note = CalibrationNote(applied=True, source="request", message="read with the calibration sent")
        check(deadline)
    arranged = arrange(dets)  # grouped once; oriented once the faces' evidence, if any, is in
    # A row up or down the photo: its faces tell the player's side. Stand-in detectors (tests, scripts) may have
    # neither a classifier nor a probe.
    classifier, probe = getattr(detector, "classifier", None), getattr(detector, "upright", None)
    if classifier is not None and probe is not None:
        check(deadline)
        dets = look_at_faces(classifier, probe, image, dets, arranged) or dets
    lay = arranged.unfaced if dets.facing is None else build(arranged, dets.facing)
    reading = read(dets, lay, image)
    return Photo(image, dets, lay, reading, time.perf_counter() - start, full_size, note)


def read_bytes(detector: Detector, data: bytes | BinaryIO, field: str = "image", turned: bool | str = "auto",
               calibration: Calibration | KeptCalibration | None = None, deadline: Deadline | None = None) -> Photo:
    """:func:`read_photo` on a photo's bytes (decoded here, timed from the first byte decoded): what
    ``POST /v1/read``, ``/v1/score`` and ``zhuoji read``/``score`` run."""
    start = time.perf_counter()
    image, full_size = decode(detector, data, field)
    return read_photo(detector, image, turned=turned, start=start, deadline=deadline, full_size=full_size,
                      calibration=calibration)


def _box_tiles(photo: Photo) -> dict[int, tuple[str, str, int | None, int]]:
    """box index → (tile as read, role, meld index, position in its role) from the layout and the reading."""
    lay, reading, names = photo.layout, photo.reading, photo.dets.names
    out: dict[int, tuple[str, str, int | None, int]] = {}
    for k, (placed, tile) in enumerate(zip(lay.concealed, reading.concealed_tiles, strict=False)):
        out[placed.box] = (tile, "concealed", None, k)
    for g, (group, meld) in enumerate(zip(lay.melds, reading.melds, strict=False)):
        for k, placed in enumerate(group.tiles):
            # A face-down tile of a 闷豆 stays "back": the reading's meld tile is what the open tiles show.
            face_down = names[placed.box] == "back" or meld.tile is None
            out[placed.box] = ("back" if face_down else meld.tile, "meld", g, k)
    for k, (placed, tile) in enumerate(zip(lay.river, reading.river, strict=False)):
        out[placed.box] = (tile, "river", None, k)
    if lay.indicator is not None and reading.indicator is not None:
        out[lay.indicator.box] = (reading.indicator, "indicator", None, 0)
    return out


def read_response(photo: Photo, model: str) -> ReadResponse:
    """``POST /v1/read`` and ``zhuoji read --json``: every box with its role, the hand, and why to retake."""
    dets, lay, reading = photo.boxes(), photo.layout, photo.reading
    roles = _box_tiles(photo)
    changed = {c.box for c in reading.changes}
    doubtful = {b for d in reading.doubtful for b in d.boxes}
    tiles = []
    for i, d in enumerate(dets.to_json()):
        tile, role, group, order = roles.get(i, (d["tile"], "unassigned", None, 0))
        tiles.append(ReadTile(index=i, tile=tile, detected=d["tile"], box=d["box"], confidence=d["confidence"],
                              alternatives=[Alternative(**a) for a in d["alternatives"]], role=role, group=group,
                              order=order, changed=i in changed, doubtful=i in doubtful))
    hand = HandRead(concealed=reading.concealed, concealed_tiles=reading.concealed_tiles,
                    melds=[MeldRead(type=g.type, tile=m.tile, boxes=g.boxes, missing=g.missing)
                           for g, m in zip(lay.melds, reading.melds, strict=False)],
                    river=reading.river, indicator=reading.indicator, count=reading.count, complete=reading.complete)
    return ReadResponse(
        image=image_info(photo.image, photo.full_size), tiles=tiles, hand=hand, ok=reading.ok,
        retake=[RetakeReason(code=r.code, message=r.message, boxes=list(r.boxes)) for r in reading.retake],
        changes=[ChangeOut.of(c) for c in reading.changes], doubtful=[DoubtOut.of(d) for d in reading.doubtful],
        layout=LayoutOut.of(lay), model=model, seconds=round(photo.seconds, 3), calibration=photo.calibration)


def annotated_jpeg(photo: Photo) -> str:
    """The photo with each box labelled by the tile as read, as base64 JPEG (long side ≤ 1280 px)."""
    read_ids = photo.dets.class_id.copy()
    for box, (tile, *_rest) in _box_tiles(photo).items():
        if tile in CLASS_NAMES:
            read_ids[box] = CLASS_NAMES.index(tile)
    shown = Detections(photo.dets.xyxy, photo.dets.confidence, read_ids, image_size=photo.dets.image_size)
    return jpeg_base64(draw_detections(photo.image, shown))


def jpeg_base64(image: np.ndarray) -> str:
    """An image as base64 JPEG, its long side at most 1280 px (for a phone screen)."""
    scale = ANNOTATED_MAX_SIDE / max(image.shape[:2])
    if scale < 1:
        image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 80])
    if not ok:  # pragma: no cover - OpenCV encodes any uint8 BGR image
        raise RuntimeError("JPEG encoding failed")
    return base64.b64encode(jpeg.tobytes()).decode("ascii")


# ---------------------------------------------------------------------------------------- tiles → score


def hand_request(reading: Reading, ctx: ScoreContext) -> tuple[HandRequest | None, list[str], ErrorBody | None]:
    """The /v1/hand request a reading stands for under the given context, the assumptions made, or why the
    reading cannot be scored yet (which the page shows next to the tiles to correct)."""
    assumptions: list[str] = []
    if "?" in reading.concealed_tiles:
        return None, [], ErrorBody(code="unreadable_tile", message="a concealed tile could not be read: tap it "
                                                                  "and choose the right tile")
    hidden = [m for m in reading.melds if m.tile is None]
    if hidden:
        return None, [], ErrorBody(code="hidden_kong", message="a 闷豆 (concealed kong) lies face down: tap it "
                                                              "and choose its tile")
    concealed = list(reading.concealed_tiles)
    melds = [MeldIn(type=m.type, tile=m.tile) for m in reading.melds]
    count = len(concealed) + 3 * len(melds)
    win_tile = ctx.win_tile
    if count == 14:
        if win_tile is None:
            # The drawn tile is usually set apart at the right end of the hand: the layout lists it last.
            win_tile = concealed[-1]
            assumptions.append(f"winning tile not given: took the last tile of the hand, {win_tile}")
        elif win_tile not in concealed:
            return None, [], ErrorBody(code="invalid_hand", message=f"the winning tile {win_tile} is not among "
                                                                   f"the 14 tiles in the photo")
        concealed.remove(win_tile)
    elif count != 13:
        return None, [], ErrorBody(
            code="count_mismatch", message=f"the photo shows {count} tiles (concealed + 3 per meld); a hand has 13 "
                                           f"(waiting) or 14 (won): correct the tiles or retake")
    flipped = ctx.flipped
    if flipped is None and reading.indicator is not None:
        flipped = reading.indicator
        assumptions.append(f"翻鸡 indicator: the tile lying apart, {flipped}")
    try:
        req = HandRequest(concealed=to_mpsz(concealed), melds=melds, win_tile=win_tile, rules=ctx.rules,
                          flipped=flipped, seen=[t for t in reading.river if t != "?"], self_drawn=ctx.self_drawn,
                          **win_flags(ctx))
    except ValidationError as exc:  # e.g. a river of hundreds of boxes on a photo of a whole tile wall
        message = "; ".join(e["msg"] for e in exc.errors()[:3])
        return None, [], ErrorBody(code="invalid_hand", message=f"the tiles read cannot be scored: {message}")
    return req, assumptions, None


def score_hand(reading: Reading, ctx: ScoreContext
               ) -> tuple[HandRequest | None, list[str], HandAnalysis | None, ErrorBody | None]:
    """The hand a reading shows, scored under ``ctx``: the request, the assumptions made, the analysis, or why
    there is none (shared by /v1/score, ``zhuoji score`` and live mode)."""
    req, assumptions, problem = hand_request(reading, ctx)
    analysis = None
    if req is not None:
        try:
            analysis = analyze(req)
        except Refused as exc:  # the tiles as read make an impossible hand: say so next to the reading
            problem = ErrorBody(code=exc.code, message=exc.message)
    return req, assumptions, analysis, problem


def score_bytes(detector: Detector, data: bytes | BinaryIO, ctx: ScoreContext,
                calibration: Calibration | KeptCalibration | None = None, deadline: Deadline | None = None,
                turned: bool | str = "auto", field: str = "image") -> tuple[Photo, ScoreResponse]:
    """``POST /v1/score`` and ``zhuoji score``: read the photo, then score the hand it shows under ``ctx``; the
    read photo too (the command line draws it)."""
    photo = read_bytes(detector, data, field, turned, calibration, deadline)
    return photo, score_reading(photo, ctx, detector.model_path.name)


def score_reading(photo: Photo, ctx: ScoreContext, model: str) -> ScoreResponse:
    """Score the hand a read photo shows under ``ctx`` (the scoring half of :func:`score_bytes`)."""
    req, assumptions, analysis, problem = score_hand(photo.reading, ctx)
    return ScoreResponse(**dict(read_response(photo, model)), context=ctx, hand_request=req,
                         assumptions=assumptions, analysis=analysis, score_error=problem,
                         annotated_jpeg=annotated_jpeg(photo) if ctx.annotate else None)


def photo_hand(reading: Reading, seat: int) -> DrawHand:
    """A seat's hand for 黄牌查叫 (the draw check) as read from its photo; refused when a tile is unreadable."""
    if "?" in reading.concealed_tiles or any(m.tile is None for m in reading.melds):
        raise Refused("unreadable_tile", f"photo{seat}: a tile could not be read (or a 闷豆 lies face down); "
                                         f"retake it or send hand{seat} as text")
    return DrawHand(seat=seat, concealed=list(reading.concealed_tiles),
                    melds=[MeldIn(type=m.type, tile=m.tile) for m in reading.melds], source="photo",
                    seen=[t for t in reading.river if t != "?"],
                    retake=[RetakeReason(code=r.code, message=r.message, boxes=list(r.boxes)) for r in reading.retake])


def photo_hand_bytes(detector: Detector, seat: int, data: bytes | BinaryIO, deadline: Deadline | None = None) -> DrawHand:
    """Seat ``seat``'s hand for 黄牌查叫 from its photo's bytes (the form field ``photo{seat}``)."""
    return photo_hand(read_bytes(detector, data, f"photo{seat}", deadline=deadline).reading, seat)
