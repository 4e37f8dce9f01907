"""豆 (kongs): who pays whom for each kong on the table (docs/rules.md#dou, #decisions).

Entry point: :func:`dou_transfers`. 豆 are settled once per hand, only when somebody won.
"""

from __future__ import annotations

from scoring.ledger import Transfer
from scoring.melds import Meld
from scoring.table import SEATS, Table, Win

_NAMES = {
    "concealed_kong": "闷豆 (concealed kong)",
    "added_kong": "转弯豆 (added kong)",
    "kong": "点豆 (exposed kong)",
}


def _value_and_payers(table: Table, owner: int, meld: Meld) -> tuple[int, list[int]]:
    """Value and paying seats of a scoring kong: 闷豆/转弯豆 by each other player, 点豆 by the feeder only."""
    dou = table.rules.dou_values
    others = [p for p in range(SEATS) if p != owner]
    if meld.type == "concealed_kong":
        return dou.concealed, others
    if meld.type == "added_kong":
        return dou.added, others
    assert meld.source is not None  # validated: an exposed kong names its feeder
    return dou.exposed, [meld.source]


def dou_transfers(table: Table, ting: list[bool], burned: set[int]) -> tuple[list[Transfer], list[str]]:
    """豆 payments and explanation lines. ``ting[p]``: p is 叫牌; ``burned``: seats whose 豆 income is void.

    A kong scores only for a 叫牌 owner (S0 双杀); otherwise it is void, or with ``dou_not_ting=reverse`` the
    owner pays the same amounts to the 叫牌 counterparts. The robbed 转弯豆 of a 抢杠 is listed as a pong, so it
    never reaches this function.
    """
    if not isinstance(table.outcome, Win):
        return [], []
    rules = table.rules
    transfers: list[Transfer] = []
    lines: list[str] = []
    for owner, player in enumerate(table.players):
        for meld in player.kongs:
            name = f"P{owner}'s {_NAMES[meld.type]} of {meld.tile}"
            if meld.late and not rules.hanbao_dou_scores and meld.type != "kong":
                lines.append(f"憨包豆 (late kong): {name} was declared a round late and scores 0")
                continue
            value, payers = _value_and_payers(table, owner, meld)
            if value == 0:
                continue
            if ting[owner]:
                if owner in burned:
                    lines.append(f"全烧 (burned): {name} earns nothing")
                    continue
                for p in payers:
                    transfers.append(Transfer(p, owner, value, "dou", f"豆 (kong): P{p} pays P{owner} {value} "
                                                                      f"for {name}"))
            elif rules.dou_not_ting == "reverse":
                for p in payers:
                    if ting[p] and p not in burned:
                        transfers.append(Transfer(owner, p, value, "dou", (
                            f"豆 reversed (kong of a player not 叫牌): P{owner} pays P{p} {value} for {name}")))
            else:
                lines.append(f"{name} is void: P{owner} is not 叫牌 (ready)")
    return transfers, lines
