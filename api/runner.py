"""Running photo jobs off the event loop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio

from api.errors import ApiError

T = TypeVar("T")


class InferenceRunner:
    """Runs photo jobs in worker threads, ``concurrency`` at a time, refusing new ones (503) when
    ``max_waiting`` are already queued: under overload clients get a quick "busy, retry" instead of a
    timeout, and memory stays bounded (each job holds one decoded photo)."""

    def __init__(self, concurrency: int, max_waiting: int) -> None:
        self.limiter = anyio.CapacityLimiter(max(1, concurrency))
        self.max_waiting = max_waiting
        self.pending = 0

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        if self.pending >= self.limiter.total_tokens + self.max_waiting:
            raise ApiError(503, "busy", "the server is busy with other photos: retry in a moment",
                           headers={"Retry-After": "1"})
        self.pending += 1
        try:
            return await anyio.to_thread.run_sync(fn, *args, limiter=self.limiter)
        finally:
            self.pending -= 1
