"""Running the service with uvicorn, bounded against slow and numerous clients.

uvicorn times out an idle keep-alive connection, but not a client that sends its headers a byte at a time, and it
accepts any number of connections. :class:`GuardedH11Protocol` adds both bounds to uvicorn's h11 protocol:

- a request's headers must be complete within ``Limits.header_timeout_s`` of the connection opening (or of the
  previous answer on a keep-alive connection), else the connection is closed;
- beyond ``Limits.max_connections`` open connections, a new one is closed at once.

Body timeouts are the application's (``api.service.admission``); behind a reverse proxy that buffers uploads (nginx,
Caddy: api/README.md) slow clients never reach the process at all.
"""

from __future__ import annotations

import asyncio
import os
from functools import partial
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from pipeline.limits import Limits
from pipeline.settings import Settings


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header timeout and a connection cap (``limits``: the settings' own, given by
    :func:`serve`; worker processes get them with the pickled protocol factory)."""

    def __init__(self, *args: Any, limits: Limits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits
        self._header_timer: asyncio.TimerHandle | None = None
        self._armed_cycle: object | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            transport.close()  # connection_lost forgets it
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._header_timer is not None and self.cycle is not self._armed_cycle:
            self._disarm()  # a new request's headers are complete: its body has its own timeouts

    def on_response_complete(self) -> None:
        cycle = self.cycle
        super().on_response_complete()
        if not self.transport.is_closing() and self.cycle is cycle:  # no pipelined request has started
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._armed_cycle = self.cycle
        self._header_timer = self.loop.call_later(self.limits.header_timeout_s, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()


def serve(settings: Settings, log_level: str) -> None:
    """``zhuoji serve``: uvicorn with the guarded protocol and ``settings.limits``."""
    import uvicorn

    from api.service.app import create_app

    limits = settings.limits
    options: dict[str, Any] = dict(host=settings.host, port=settings.port, log_level=log_level,
                                   timeout_graceful_shutdown=10, http=partial(GuardedH11Protocol, limits=limits),
                                   timeout_keep_alive=limits.keep_alive_s,  # a float works: call_later
                                   backlog=min(2048, limits.max_connections))
    if settings.workers == 1:
        uvicorn.run(create_app(settings=settings), **options)
        return
    # Workers are fresh processes that build the app themselves (uvicorn's factory mode): the settings reach them as
    # their environment, which create_app reads once.
    os.environ.update(settings.env())
    uvicorn.run("api.service.app:create_app", factory=True, workers=settings.workers, **options)
