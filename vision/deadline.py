"""A cooperative deadline and cancel token for one photo's work.

An onnxruntime run cannot be interrupted from outside, so a long job is bounded by checking a token between model
runs (each crop, each look, each classifier batch): past its deadline, or cancelled because the client went away,
the job raises :class:`WorkCancelled` at the next check and its worker is free again. One check costs a clock read.
"""

from __future__ import annotations

import threading
import time


class WorkCancelled(Exception):
    """The job ran past its deadline (``reason == "deadline"``) or was cancelled (``reason == "cancelled"``)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class Deadline:
    """Seconds of work allowed from :meth:`start` (None: no limit), and a flag another thread may set with
    :meth:`cancel`. Thread-safe: the event loop cancels, the worker thread checks."""

    def __init__(self, seconds: float | None = None, *, start: bool = True) -> None:
        self.seconds = seconds
        self._expires: float | None = None
        self._cancelled = threading.Event()
        self._why = ""
        if start:
            self.start()

    def start(self) -> None:
        """Start the clock (a queued job starts it when a worker takes it: waiting is not work)."""
        if self.seconds is not None:
            self._expires = time.monotonic() + self.seconds

    def cancel(self, why: str = "the request was cancelled") -> None:
        self._why = why
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def expired(self) -> bool:
        return self._expires is not None and time.monotonic() >= self._expires

    def check(self) -> None:
        """Raise :class:`WorkCancelled` when the job must stop; call it before each model run."""
        if self._cancelled.is_set():
            raise WorkCancelled("cancelled", self._why)
        if self.expired():
            raise WorkCancelled("deadline", f"the photo took more than {self.seconds:g} s of work")


def check(deadline: Deadline | None) -> None:
    """:meth:`Deadline.check` for an optional deadline (the stages take ``deadline=None`` for no limit)."""
    if deadline is not None:
        deadline.check()
