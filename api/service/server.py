"""Running the service with uvicorn, bounded against slow and numerous clients.

uvicorn times out an idle keep-alive connection, but not a client that sends its headers a byte at a time, and it
accepts any number of connections. :class:`GuardedH11Protocol` adds both bounds to uvicorn's h11 protocol:

- a request's headers must be complete within ``Limits.header_timeout_s`` of the connection opening (or of the
  previous answer on a keep-alive connection), else the connection is closed;
- beyond ``Limits.max_connections`` open connections, a new one is closed at once;
- beyond ``Limits.connections_per_client`` open connections from one peer address, a new one from it is closed at
  once, so one client holding idle connections cannot take the whole cap (and ``/healthz``) from everyone. A
  trusted proxy (``--forwarded-allow-ips``) is exempt: every client behind it shares its address.

Body timeouts are the application's (``api.service.admission``); behind a reverse proxy that buffers uploads (nginx,
Caddy: api/README.md) slow clients never reach the process at all.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
from collections import Counter
from functools import partial
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from pipeline.limits import Limits
from pipeline.settings import Settings


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header timeout and a connection cap (``limits``: the settings' own, given by
    :func:`serve`; worker processes get them with the pickled protocol factory)."""

    per_peer: Counter[str] = Counter()  # open connections per peer address, in this process

    def __init__(self, *args: Any, limits: Limits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits
        self._header_timer: asyncio.TimerHandle | None = None
        self._armed_cycle: object | None = None
        self._peer: str | None = None  # counted in per_peer

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            transport.close()  # connection_lost forgets it
            return
        peer = self.client[0] if self.client else None
        if peer is not None and not _trusted(peer, self.config.forwarded_allow_ips):
            if self.per_peer[peer] >= min(self.limits.connections_per_client, self.limits.max_connections):
                transport.close()
                return
            self.per_peer[peer] += 1
            self._peer = peer
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
        if self._peer is not None:
            self.per_peer[self._peer] -= 1
            if not self.per_peer[self._peer]:
                del self.per_peer[self._peer]
            self._peer = None
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


def _trusted(peer: str, proxies: str | list[str]) -> bool:
    """Whether ``peer`` is one of uvicorn's ``forwarded_allow_ips`` (addresses, networks, ``*``)."""
    entries = [e.strip() for e in (proxies.split(",") if isinstance(proxies, str) else proxies) if e.strip()]
    if "*" in entries:
        return True
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:  # a Unix socket's peer: local
        return True
    for entry in entries:
        try:
            if address in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def serve(settings: Settings, log_level: str) -> None:
    """``zhuoji serve``: uvicorn with the guarded protocol and ``settings.limits``."""
    import uvicorn

    from api.service.app import create_app

    limits = settings.limits
    options: dict[str, Any] = dict(host=settings.host, port=settings.port, log_level=log_level,
                                   timeout_graceful_shutdown=10, http=partial(GuardedH11Protocol, limits=limits),
                                   timeout_keep_alive=limits.keep_alive_s,  # a float works: call_later
                                   backlog=min(2048, limits.max_connections),
                                   forwarded_allow_ips=settings.forwarded_allow_ips)
    if settings.workers == 1:
        uvicorn.run(create_app(settings=settings), **options)
        return
    # Workers are fresh processes that build the app themselves (uvicorn's factory mode): the settings reach them as
    # their environment, which create_app reads once.
    os.environ.update(settings.env())
    uvicorn.run("api.service.app:create_app", factory=True, workers=settings.workers, **options)
