"""Running photo jobs off the event loop: a few at a time, each with a deadline, cancelled when its client goes."""

from __future__ import annotations

import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

from api.service.errors import ApiError
from pipeline.deadline import Deadline, WorkCancelled

T = TypeVar("T")


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
