"""Fan transfers between seats: the ledger of a settlement (docs/rules.md#ledger).

Three independent components, each zero-sum: ``hand`` (牌型 hand fan), ``dou`` (豆 kongs), ``chicken`` (鸡).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

COMPONENTS = ("hand", "dou", "chicken")


@dataclass(frozen=True)
class Transfer:
    payer: int
    payee: int
    fan: int
    component: str  # one of COMPONENTS
    reason: str  # English with the Chinese rule term

    def to_dict(self) -> dict[str, object]:
        return {"from": self.payer, "to": self.payee, "fan": self.fan, "component": self.component,
                "reason": self.reason}


def net(transfers: Iterable[Transfer], seats: int = 4, component: str | None = None) -> list[int]:
    """Received minus paid per seat, over one component or all."""
    totals = [0] * seats
    for t in transfers:
        if component is None or t.component == component:
            totals[t.payee] += t.fan
            totals[t.payer] -= t.fan
    return totals


def matrix(transfers: Iterable[Transfer], seats: int = 4) -> list[list[int]]:
    """``m[i][j]`` = total fan seat i pays seat j."""
    m = [[0] * seats for _ in range(seats)]
    for t in transfers:
        m[t.payer][t.payee] += t.fan
    return m
