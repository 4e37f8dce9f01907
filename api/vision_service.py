"""Photo glue for the HTTP API: bytes → image → detections → layout → reading → hand analysis.

Each step is a stage function of ``vision/`` or ``scoring/``; this module only joins them, runs them off the
event loop, and shapes the answers (every box with its role, so the web page can let people correct a tile and
re-score the hand through /v1/hand without running the detector again).
"""

from __future__ import annotations

import base64
import itertools
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, TypeVar

import anyio
import cv2
import numpy as np
from pydantic import ValidationError

from api.errors import ApiError, error_body
from api.schemas import (
    Alternative,
    DetectedTile,
    DetectResponse,
    ErrorBody,
    HandRead,
    HandRequest,
    ImageInfo,
    MeldIn,
    MeldRead,
    ReadTile,
    RetakeReason,
    ScoreContext,
    ScoreResponse,
)
from api.scoring_service import analyze
from api.uploads import decode_image
from scoring.tiles import to_mpsz
from vision.annotate import draw_detections
from vision.classes import CLASS_NAMES
from vision.deadline import Deadline, WorkCancelled, check
from vision.detect import DEFAULT_MODEL, Detector, back_check_choice, classifier_choice, get_detector
from vision.detections import Detections
from vision.layout import Layout, layout
from vision.reading import Reading, read

T = TypeVar("T")
ANNOTATED_MAX_SIDE = 1280  # the annotated JPEG is for a phone screen; full resolution only costs bandwidth


def load_detector(model_path: str | os.PathLike | None, threads: int | None) -> Detector:
    """The process's detector: ``get_detector``'s shared one, or a private session with ``threads`` threads
    (several workers on one machine should split the cores instead of each taking all of them)."""
    if threads is None:
        return get_detector(model_path)
    path = model_path or os.environ.get("ZHUOJI_MODEL") or DEFAULT_MODEL
    return Detector(path, threads=threads, classifier=classifier_choice(), back_check=back_check_choice())


class InferenceRunner:
    """Runs photo jobs in worker threads, ``concurrency`` at a time, refusing new ones (503) when
    ``max_waiting`` are already queued: under overload clients get a quick "busy, retry" instead of a
    timeout, and memory stays bounded (each job holds one decoded photo).

    A job waits at most ``queue_wait_s`` for a worker (else 503 busy), then gets a
    :class:`~vision.deadline.Deadline` of ``deadline_s`` seconds of work; the job's function receives it as
    ``deadline=`` and checks it between model runs. Past it the request is answered 503 with ``Retry-After`` and
    the worker is free again. ``is_disconnected`` (the request's) is polled while the job waits and runs: a client
    gone cancels the job, before its first model run if it is still queued."""

    def __init__(self, concurrency: int, max_waiting: int, deadline_s: float | None = None,
                 retry_after_s: int = 1, poll_s: float = 0.25, queue_wait_s: float | None = None) -> None:
        self.limiter = anyio.CapacityLimiter(max(1, concurrency))
        self._threads = anyio.CapacityLimiter(max(1, concurrency))  # the jobs' own threads, apart from uploads'
        self.max_waiting = max_waiting
        self.deadline_s = deadline_s
        self.queue_wait_s = queue_wait_s
        self.retry_after = str(retry_after_s)
        self.poll_s = poll_s
        self.pending = 0
        self.running: dict[int, float] = {}  # job number → when a worker took it (time.monotonic)
        self._numbers = itertools.count()

    @property
    def capacity(self) -> int:
        """Jobs held at once, running and queued."""
        return int(self.limiter.total_tokens) + self.max_waiting

    def full(self) -> bool:
        return self.pending >= self.capacity

    def oldest_running_s(self) -> float:
        """How long the oldest running job has run (0 when none): the readiness check's sign of a stuck queue."""
        started = list(self.running.values())
        return time.monotonic() - min(started) if started else 0.0

    def busy_error(self, message: str = "the server is busy with other photos: retry in a moment") -> ApiError:
        return ApiError(503, "busy", message, headers={"Retry-After": self.retry_after})

    async def run(self, fn: Callable[..., T], *args: Any,
                  is_disconnected: Callable[[], Awaitable[bool]] | None = None) -> T:
        if self.full():
            raise self.busy_error()
        self.pending += 1
        deadline = Deadline(self.deadline_s, start=False)
        number = next(self._numbers)

        def job() -> T:
            deadline.start()  # waiting in the queue is not work
            self.running[number] = time.monotonic()
            try:
                deadline.check()  # the client went away while the job waited: no model run at all
                return fn(*args, deadline=deadline)
            finally:
                del self.running[number]

        done = anyio.Event()

        async def watch(is_disconnected: Callable[[], Awaitable[bool]]) -> None:
            while not done.is_set():
                if await is_disconnected():
                    deadline.cancel("the client went away")
                    return
                with anyio.move_on_after(self.poll_s):
                    await done.wait()

        failure: Exception | None = None
        try:
            async with anyio.create_task_group() as tg:
                if is_disconnected is not None:
                    tg.start_soon(watch, is_disconnected)
                try:
                    result = await self._in_turn(job)
                except Exception as exc:  # raised below, outside the task group (which would wrap it in a group)
                    failure = exc
                finally:
                    done.set()
        finally:
            self.pending -= 1
        if isinstance(failure, WorkCancelled):
            code = "deadline_exceeded" if failure.reason == "deadline" else "cancelled"
            raise ApiError(503, code, f"{failure}: retry later, or send a smaller photo of the tiles only",
                           headers={"Retry-After": self.retry_after}) from None
        if failure is not None:
            raise failure
        return result

    async def _in_turn(self, job: Callable[[], T]) -> T:
        """Run ``job`` in a thread once a worker is free, waiting at most ``queue_wait_s`` for one."""
        with anyio.move_on_after(self.queue_wait_s) as waiting:
            await self.limiter.acquire()
        if waiting.cancelled_caught:
            raise self.busy_error(f"the server is busy: no worker was free for {self.queue_wait_s:g} s; retry in a "
                                  f"moment")
        try:
            return await anyio.to_thread.run_sync(job, limiter=self._threads)
        finally:
            self.limiter.release()


# ---------------------------------------------------------------------------------------- photo → tiles


@dataclass
class Photo:
    """One photo through the vision stages."""

    image: np.ndarray
    dets: Detections
    layout: Layout
    reading: Reading
    seconds: float


def _image_info(image: np.ndarray) -> ImageInfo:
    return ImageInfo(width=int(image.shape[1]), height=int(image.shape[0]))


def detect_photo(detector: Detector, data: bytes | BinaryIO, deadline: Deadline | None = None) -> DetectResponse:
    """``POST /v1/detect``: boxes, tile names and confidences."""
    start = time.perf_counter()
    image = decode_image(data)
    dets = detector(image, deadline=deadline)
    tiles = [DetectedTile(index=i, tile=d["tile"], box=d["box"], confidence=d["confidence"],
                          alternatives=[Alternative(**a) for a in d["alternatives"]])
             for i, d in enumerate(dets.to_json())]
    return DetectResponse(image=_image_info(image), count=len(tiles), tiles=tiles, model=detector.model_path.name,
                          seconds=round(time.perf_counter() - start, 3))


def read_photo(detector: Detector, data: bytes | BinaryIO, field: str = "image", turned: bool = True,
               deadline: Deadline | None = None) -> Photo:
    """Decode, detect, group (``vision.layout``) and read (``vision.reading``) one hand photo. ``turned``: the
    detector also looks at the photo turned 180° (a scored hand is worth twice the detection time).
    ``deadline``: checked between model runs (:mod:`vision.deadline`)."""
    start = time.perf_counter()
    image = decode_image(data, field)
    dets = detector(image, turned=turned, deadline=deadline)
    check(deadline)
    lay = layout(dets, mode="hand")
    reading = read(dets, lay, image)
    return Photo(image, dets, lay, reading, time.perf_counter() - start)


def _box_tiles(photo: Photo) -> dict[int, tuple[str, str, int | None, int]]:
    """box index → (tile as read, role, meld index, position in its role) from the layout and the reading."""
    lay, reading, names = photo.layout, photo.reading, photo.dets.names
    out: dict[int, tuple[str, str, int | None, int]] = {}
    for k, (placed, tile) in enumerate(zip(lay.concealed, reading.concealed_tiles, strict=False)):
        out[placed.box] = (tile, "concealed", None, k)
    for g, (group, meld) in enumerate(zip(lay.melds, reading.melds, strict=False)):
        for k, placed in enumerate(group.tiles):
            # A face-down tile of a 闷豆 stays "back": the reading's meld tile is what the open tiles show.
            face_down = names[placed.box] == "back" or meld["tile"] is None
            out[placed.box] = ("back" if face_down else meld["tile"], "meld", g, k)
    for k, (placed, tile) in enumerate(zip(lay.river, reading.river, strict=False)):
        out[placed.box] = (tile, "river", None, k)
    if lay.indicator is not None and reading.indicator is not None:
        out[lay.indicator.box] = (reading.indicator, "indicator", None, 0)
    return out


def read_response(photo: Photo, model: str) -> dict[str, Any]:
    """The fields of a :class:`ReadResponse` (a dict, so :class:`ScoreResponse` can extend it)."""
    dets, lay, reading = photo.dets, photo.layout, photo.reading
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
                    melds=[MeldRead(type=g.type, tile=m["tile"], boxes=g.boxes, missing=g.missing)
                           for g, m in zip(lay.melds, reading.melds, strict=False)],
                    river=reading.river, indicator=reading.indicator, count=reading.count, complete=reading.complete)
    return {"image": _image_info(photo.image), "tiles": tiles, "hand": hand, "ok": reading.ok,
            "retake": [RetakeReason(code=r.code, message=r.message, boxes=list(r.boxes)) for r in reading.retake],
            "changes": [c.to_json() for c in reading.changes], "doubtful": [d.to_json() for d in reading.doubtful],
            "layout": lay.to_json(), "model": model, "seconds": round(photo.seconds, 3)}


def annotated_jpeg(photo: Photo) -> str:
    """The photo with each box labelled by the tile as read, as base64 JPEG (long side ≤ 1280 px)."""
    read_ids = photo.dets.class_id.copy()
    for box, (tile, *_rest) in _box_tiles(photo).items():
        if tile in CLASS_NAMES:
            read_ids[box] = CLASS_NAMES.index(tile)
    shown = Detections(photo.dets.xyxy, photo.dets.confidence, read_ids, image_size=photo.dets.image_size)
    image = draw_detections(photo.image, shown)
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
        return None, [], ErrorBody(**error_body("unreadable_tile", "a concealed tile could not be read: tap it "
                                                                   "and choose the right tile")["error"])
    hidden = [m for m in reading.melds if m["tile"] is None]
    if hidden:
        return None, [], ErrorBody(**error_body("hidden_kong", "a 闷豆 (concealed kong) lies face down: tap it "
                                                               "and choose its tile")["error"])
    concealed = list(reading.concealed_tiles)
    melds = [MeldIn(type=m["type"], tile=m["tile"]) for m in reading.melds]
    count = len(concealed) + 3 * len(melds)
    win_tile = ctx.win_tile
    if count == 14:
        if win_tile is None:
            # The drawn tile is usually set apart at the right end of the hand: the layout lists it last.
            win_tile = concealed[-1]
            assumptions.append(f"winning tile not given: took the last tile of the hand, {win_tile}")
        elif win_tile not in concealed:
            return None, [], ErrorBody(**error_body("invalid_hand", f"the winning tile {win_tile} is not among the "
                                                                    f"14 tiles in the photo")["error"])
        concealed.remove(win_tile)
    elif count != 13:
        return None, [], ErrorBody(**error_body(
            "count_mismatch", f"the photo shows {count} tiles (concealed + 3 per meld); a hand has 13 (waiting) or "
                              f"14 (won): correct the tiles or retake")["error"])
    flipped = ctx.flipped
    if flipped is None and reading.indicator is not None:
        flipped = reading.indicator
        assumptions.append(f"翻鸡 indicator: the tile lying apart, {flipped}")
    try:
        req = HandRequest(concealed=to_mpsz(concealed), melds=melds, win_tile=win_tile, rules=ctx.rules,
                          flipped=flipped, seen=[t for t in reading.river if t != "?"], self_drawn=ctx.self_drawn,
                          kong_draw=ctx.kong_draw, hot_discard=ctx.hot_discard, robbed_kong=ctx.robbed_kong,
                          bao_ting=ctx.bao_ting, discarder_bao_ting=ctx.discarder_bao_ting)
    except ValidationError as exc:  # e.g. a river of hundreds of boxes on a photo of a whole tile wall
        message = "; ".join(e["msg"] for e in exc.errors()[:3])
        return None, [], ErrorBody(code="invalid_hand", message=f"the tiles read cannot be scored: {message}")
    return req, assumptions, None


def score_photo(detector: Detector, data: bytes | BinaryIO, ctx: ScoreContext,
                deadline: Deadline | None = None) -> ScoreResponse:
    """``POST /v1/score``: read the photo, then score the hand it shows under ``ctx``."""
    return score_reading(read_photo(detector, data, deadline=deadline), ctx, detector.model_path.name)


def score_reading(photo: Photo, ctx: ScoreContext, model: str) -> ScoreResponse:
    """Score the hand a read photo shows under ``ctx`` (the scoring half of ``score_photo``)."""
    req, assumptions, problem = hand_request(photo.reading, ctx)
    analysis = None
    if req is not None:
        try:
            analysis = analyze(req)
        except ApiError as exc:  # the tiles as read make an impossible hand: say so next to the reading
            problem = ErrorBody(code=exc.code, message=exc.message)
    return ScoreResponse(**read_response(photo, model), context=ctx, hand_request=req,
                         assumptions=assumptions, analysis=analysis, score_error=problem,
                         annotated_jpeg=annotated_jpeg(photo) if ctx.annotate else None)
