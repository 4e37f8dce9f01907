"""Live table mode (``zhuoji live``): read a camera, stream or video continuously and print the reading and score when it changes.

Frames come from OpenCV. A live source (camera index, http/rtsp URL) is drained by a grabber thread that
keeps only the newest frame, so detection runs as fast as the machine allows and frames that arrive meanwhile
are dropped, never queued. A video file is read in order, every ``--every``-th frame processed, so runs repeat.

A table does not change between two frames, and the detector is the costly step: it runs only when the view
changed beyond a shift of the camera, while the tiles are not settled, and once every ``REFRESH_FRAMES`` frames.
The tracking, the reading (the photo pipeline's own steps) and the vote are ``pipeline.live``'s; the voted reading
is reported once most of the window has agreed on it for a few frames in a row and it differs from the one
reported before.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pipeline.live import ReadingVoter, TrackedView, Voted, reading_text
from pipeline.live_table import SETTLE_FRAMES, Proposal, RoundWatch
from pipeline.models import HandAnalysis, ScoreContext
from pipeline.photo import Detector, Reading, score_hand

REFRESH_FRAMES = 15  # the detector looks again at least this often (frames), however still the view

# ------------------------------------------------------------------------------------------------ frames


def check_source(source: str) -> None:
    """A video file that is not there is refused before any model loads."""
    if not is_live(source) and not Path(source).is_file():
        raise ValueError(f"{source}: no such video file")


def open_source(source: str) -> cv2.VideoCapture:
    check_source(source)
    # OpenCV logs every backend it tried for a camera that is not there; the one-line error below says it all
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    try:
        cap = cv2.VideoCapture(int(source) if source.isdigit() else source)
    finally:
        cv2.utils.logging.setLogLevel(level)
    if not cap.isOpened():
        raise ValueError(f"cannot open video source {source!r} (a camera index, stream URL or video file)")
    return cap


def is_live(source: str) -> bool:
    return source.isdigit() or "://" in source


class LatestFrame:
    """Grabber thread for a live source: always holds the newest frame; older ones are dropped."""

    def __init__(self, cap: cv2.VideoCapture) -> None:
        self.cap = cap
        self.frame: np.ndarray | None = None
        self.number = 0  # frames grabbed so far
        self.ended = False
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._grab, daemon=True)
        self.thread.start()

    def _grab(self) -> None:
        while not self.ended:
            ok, frame = self.cap.read()
            with self.cond:
                if not ok:
                    self.ended = True
                else:
                    self.frame, self.number = frame, self.number + 1
                self.cond.notify_all()

    def next(self, last: int) -> tuple[int, np.ndarray] | None:
        """The newest frame after frame ``last``; None once the source has ended."""
        with self.cond:
            while self.number <= last and not self.ended:
                self.cond.wait(timeout=1.0)
            if self.number <= last:
                return None
            return self.number, self.frame  # type: ignore[return-value]

    def stop(self) -> None:
        self.ended = True


class Frames:
    """The frames to process from a source: ``for number, frame in Frames(source, every)``; ``read`` counts
    every frame taken from the source (processed or dropped)."""

    def __init__(self, source: str, every: int) -> None:
        self.source, self.every, self.read = source, every, 0

    def __iter__(self) -> Iterator[tuple[int, np.ndarray]]:
        cap = open_source(self.source)
        try:
            if is_live(self.source):
                grabber = LatestFrame(cap)
                last = 0
                try:
                    while (got := grabber.next(last)) is not None:
                        last, frame = got
                        self.read = grabber.number
                        yield last, frame
                finally:
                    grabber.stop()
                return
            while True:
                ok, frame = cap.read()
                if not ok:
                    return
                self.read += 1
                if (self.read - 1) % self.every == 0:
                    yield self.read, frame
        finally:
            cap.release()


# ----------------------------------------------------------------------------------------------- scoring


def score_line(voted: Voted, ctx: ScoreContext) -> tuple[str, HandAnalysis | None]:
    """The score of a voted reading (the same glue as POST /v1/score), as one line."""
    _, _, a, problem = score_hand(voted.reading(), ctx)
    if a is None:
        return f"no score: {problem.message if problem else 'unreadable'}", None
    if a.status == "win":
        assert a.hand_type is not None
        return f"{a.hand_type.name_zh} ({a.hand_type.name_en}) {a.hand_type.fan} fan, W {a.win_value}", a
    if a.status == "ready":
        return "叫牌 (ready), waits " + " ".join(f"{w.tile}×{w.copies_left}" for w in a.waits), a
    return ("不成牌 (not a win)" if a.status == "not_a_win" else "not ready (未叫牌)"), a


def _banner(image: np.ndarray, text: str) -> np.ndarray:
    """ASCII text strip on top of a frame (OpenCV's fonts have no CJK glyphs)."""
    out = image.copy()
    scale = max(out.shape[:2]) / 1000
    cv2.rectangle(out, (0, 0), (out.shape[1], int(36 * scale) + 6), (0, 0, 0), -1)
    cv2.putText(out, text.encode("ascii", "replace").decode(), (6, int(28 * scale)), cv2.FONT_HERSHEY_SIMPLEX,
                0.8 * scale, (255, 255, 255), max(1, round(2 * scale)), cv2.LINE_AA)
    return out


# ------------------------------------------------------------------------------------------------- loop


@dataclass
class LiveStats:
    frames_read: int = 0
    frames_processed: int = 0
    detector_runs: int = 0  # processed frames the detector ran on (the others were tracked)
    changes: int = 0
    seconds: float = 0.0
    busy_seconds: float = 0.0  # time spent on the frames: tracking, and detect + layout + read where they run

    @property
    def fps(self) -> float:
        return self.frames_processed / self.seconds if self.seconds else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"frames_read": self.frames_read, "frames_processed": self.frames_processed,
                "detector_runs": self.detector_runs, "changes": self.changes,
                "seconds": round(self.seconds, 2), "fps": round(self.fps, 2),
                "ms_per_frame": round(1000 * self.busy_seconds / max(1, self.frames_processed), 1)}


def live(source: str, detector: Detector, *, every: int = 1, window: int = 5, ctx: ScoreContext | None = None,
         out: Path | None = None, max_frames: int | None = None, seconds: float | None = None,
         emit=print, as_json: bool = False, refresh: int = REFRESH_FRAMES) -> LiveStats:
    """Run live table mode; ``emit`` gets one line per change of the voted reading.

    The detector runs on a frame only when the view changed beyond a shift of the camera (``ViewChange``), when
    the tiles are not settled (a track new or unseen, the last ``window`` readings not all the same, or the voted
    reading not the one announced), or once every ``refresh`` processed frames; on the other frames the tiles'
    tracks (``TileTracks``) follow the view's shift and the reading stays what it was. A reading is announced when
    the voter has agreed on it for ``window // 2 + 1`` frames and as many detector runs in a row, and it differs
    from the one announced before."""
    ctx = ctx or ScoreContext()
    voter = ReadingVoter(window)
    hold = window // 2 + 1
    view = TrackedView(detector)
    recent: deque[str] = deque(maxlen=max(1, window))
    stats = LiveStats()
    recording = _Recording(out, source, every)
    reported: Voted | None = None
    candidate, agreed, agreed_runs = "", 0, 0  # the voted reading, for how many frames and detector runs
    reading: Reading | None = None
    since = 0  # frames since the detector last ran
    banner = "reading..."
    source_frames = Frames(source, every)
    start = time.perf_counter()
    try:
        for number, frame in source_frames:
            t0 = time.perf_counter()
            motion = view.motion(frame)
            settled = (view.steady and len(recent) == recent.maxlen and len(set(recent)) == 1
                       and reported is not None and candidate == reported.text())
            ran = reading is None or motion.changed or not settled or since >= refresh
            if ran:
                reading = view.look(frame, motion)  # the photo pipeline's steps, on the tracked tiles
                stats.detector_runs += 1
                since = 0
            else:
                since += 1
                view.follow(motion)
            stats.busy_seconds += time.perf_counter() - t0
            stats.frames_processed += 1
            stats.frames_read = source_frames.read
            voted = voter.add(reading)
            recent.append(reading_text(reading))
            text = voted.text() if voted is not None else ""
            if text != candidate:
                candidate, agreed, agreed_runs = text, 0, 0
            agreed, agreed_runs = agreed + 1, agreed_runs + ran
            if (voted is not None and min(agreed, agreed_runs) >= hold
                    and (reported is None or text != reported.text())):
                reported = voted
                stats.changes += 1
                line, analysis = score_line(voted, ctx)
                banner = f"{voted.text()} | {line}"
                elapsed = time.perf_counter() - start
                if as_json:
                    emit(json.dumps({"frame": number, "seconds": round(elapsed, 2), "reading": voted.text(),
                                     "support": round(voted.support, 2), "score": line,
                                     "analysis": analysis.model_dump(mode="json") if analysis else None},
                                    ensure_ascii=False))
                else:
                    emit(f"[frame {number}, {elapsed:.1f} s] {voted.text()} → {line}")
            if out is not None:
                recording.write(_banner(view.annotated(frame), banner))
            stats.seconds = time.perf_counter() - start
            if _enough(stats, max_frames, seconds):
                break
    except KeyboardInterrupt:
        pass
    finally:
        recording.close()
    stats.seconds = time.perf_counter() - start
    stats.frames_read = source_frames.read
    return stats


def proposal_lines(proposal: Proposal, seconds: float) -> list[str]:
    """A proposed round as text: one line per seat (hand, melds, river), the flipped tile and the winner guess."""
    read = proposal.reading
    lines = [f"[frame {proposal.frame}, {seconds:.1f} s] round laid down, proposed:"]
    for seat in read.seats:
        melds = " ".join(f"[{m.type}:{m.tile or '?'}]" for m in seat.melds)
        lines.append(f"  seat {seat.seat}: {' '.join(seat.concealed) or '-'} {melds}".rstrip()
                     + (f" | river {' '.join(seat.river)}" if seat.river else ""))
    lines.append(f"  翻鸡 flipped: {read.flipped or '-'}; winner (guess): "
                 + ("-" if read.winner is None else f"seat {read.winner}"))
    return lines


def live_table(source: str, detector: Detector, *, every: int = 1, settle: int = SETTLE_FRAMES,
               out: Path | None = None, max_frames: int | None = None, seconds: float | None = None,
               emit=print, as_json: bool = False,
               on_proposal: Callable[[Proposal, np.ndarray], None] | None = None) -> LiveStats:
    """Watch a camera fixed over the table (``zhuoji live --table``); ``emit`` gets each proposed round: one JSON line
    (``frame``, ``seconds`` and ``table``, the body of ``POST /v1/read-table``) or a few lines of text;
    ``on_proposal`` too, with the frame it was read on (``--server``: it goes to the table screen).

    The frames are watched by :class:`pipeline.live_table.RoundWatch`: the whole-table reading runs only on views
    that have settled, and a round is proposed once per laying down of the hands. In the stats, ``detector_runs``
    counts the whole-table readings and ``changes`` the rounds proposed."""
    watch = RoundWatch(detector, settle=settle)
    stats = LiveStats()
    recording = _Recording(out, source, every)
    banner = "watching"
    source_frames = Frames(source, every)
    start = time.perf_counter()
    try:
        for number, frame in source_frames:
            t0 = time.perf_counter()
            proposal = watch.add(number, frame)
            stats.busy_seconds += time.perf_counter() - t0
            stats.frames_processed += 1
            stats.frames_read = source_frames.read
            elapsed = time.perf_counter() - start
            if proposal is not None:
                stats.changes += 1
                if as_json:
                    emit(json.dumps({"frame": number, "seconds": round(elapsed, 2),
                                     "table": proposal.reading.model_dump(mode="json")}, ensure_ascii=False))
                else:
                    for line in proposal_lines(proposal, elapsed):
                        emit(line)
                if on_proposal is not None:
                    on_proposal(proposal, frame)
                banner = "proposed: " + " / ".join("".join(s.concealed) for s in proposal.reading.seats)
            elif watch.armed:
                banner = watch.state
            if out is not None:
                recording.write(_banner(frame, banner))
            stats.seconds = time.perf_counter() - start
            if _enough(stats, max_frames, seconds):
                break
    except KeyboardInterrupt:
        pass
    finally:
        recording.close()
    stats.seconds = time.perf_counter() - start
    stats.frames_read = source_frames.read
    stats.detector_runs = watch.stats.looks
    return stats


class _Recording:
    """The annotated video of a live run (``--out``): opened at its first frame, whose size it takes."""

    def __init__(self, out: Path | None, source: str, every: int) -> None:
        self.out, self.source, self.every = out, source, every
        self.writer: cv2.VideoWriter | None = None

    def write(self, image: np.ndarray) -> None:
        if self.out is None:
            return
        if self.writer is None:
            self.writer = _writer(self.out, self.source, self.every, image.shape)
        self.writer.write(image)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.release()


def _enough(stats: LiveStats, max_frames: int | None, seconds: float | None) -> bool:
    """Whether a run has processed the frames or run the seconds it was asked for."""
    return bool((max_frames and stats.frames_processed >= max_frames) or (seconds and stats.seconds >= seconds))


def _writer(out: Path, source: str, every: int, shape: tuple[int, ...]) -> cv2.VideoWriter:
    cap = cv2.VideoCapture(int(source) if source.isdigit() else source)
    fps = cap.get(cv2.CAP_PROP_FPS) or 10.0
    cap.release()
    fps = max(1.0, fps / every) if not is_live(source) else 5.0
    out.parent.mkdir(parents=True, exist_ok=True)
    fourcc = cv2.VideoWriter_fourcc(*("MJPG" if out.suffix.lower() == ".avi" else "mp4v"))
    writer = cv2.VideoWriter(str(out), fourcc, fps, (shape[1], shape[0]))
    if not writer.isOpened():
        raise ValueError(f"cannot write video {out} (use a .mp4 or .avi name)")
    return writer
