"""Write quotas per client address: table creation and round writes (429 ``too_many_requests`` + Retry-After).

A moving window per client address and kind of write, counted by the ``limits`` library in this process's memory:
with several workers or replicas each counts its own, so a client gets up to that many times the quota (a bound
all the same; a shared counter would need Redis, which a table at home does not have). The client address is the
connection's peer, or the proxy's ``X-Forwarded-For`` when the peer is a trusted proxy (uvicorn's
``--forwarded-allow-ips``, ``Settings.forwarded_allow_ips``).

Checked from the method and path alone, before the body is read or anything is written.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass

from limits import RateLimitItem, RateLimitItemPerHour, RateLimitItemPerMinute
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from starlette.types import ASGIApp, Receive, Scope, Send

from api.service.errors import error_response
from pipeline.limits import Limits


@dataclass(frozen=True)
class Quota:
    name: str  # what is counted, in the refusal's message
    methods: frozenset[str]
    path: re.Pattern[str]  # a request path, or a route's path format ("/v1/tables/{table_id}/rounds")


QUOTAS = (Quota("table creations", frozenset({"POST"}), re.compile(r"/v1/tables/?")),
          # a camera's proposed round counts as a round write
          Quota("round writes", frozenset({"POST", "PUT", "DELETE"}),
                re.compile(r"/v1/tables/[^/]+/(rounds(/[^/]+)?|proposal)/?")))


class QuotaMiddleware:
    def __init__(self, app: ASGIApp, limits: Limits) -> None:
        self.app = app
        self.items: dict[str, RateLimitItem] = {
            "table creations": RateLimitItemPerHour(limits.tables_per_hour),
            "round writes": RateLimitItemPerMinute(limits.round_writes_per_minute)}
        self.limiter = MovingWindowRateLimiter(MemoryStorage())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        quota = quota_for(scope["method"], scope["path"]) if scope["type"] == "http" else None
        if quota is not None:
            item = self.items[quota.name]
            client = (scope.get("client") or ("unknown", 0))[0]
            if not self.limiter.hit(item, quota.name, client):
                reset_at, _ = self.limiter.get_window_stats(item, quota.name, client)
                wait = max(1, math.ceil(reset_at - time.time()))
                await error_response(429, "too_many_requests",
                                     f"too many {quota.name} from your address: at most {item.amount} per "
                                     f"{item.GRANULARITY.name}; retry in {wait} s",
                                     headers={"Retry-After": str(wait)})(scope, receive, send)
                return
        await self.app(scope, receive, send)


def quota_for(method: str, path: str) -> Quota | None:
    return next((q for q in QUOTAS if method in q.methods and q.path.fullmatch(path)), None)
