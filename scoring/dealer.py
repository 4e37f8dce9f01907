"""Next dealer and 连庄 count (docs/rules.md#dealer, #chajiao, #penalties, #decisions).

Entry point: :func:`next_dealer`.
"""

from __future__ import annotations

from scoring.table import SEATS, Draw, Table, Win


def next_dealer(table: Table, ting: list[bool]) -> tuple[int, int, str]:
    """(next dealer seat, next streak k, explanation line). k counts on while the dealer keeps the deal."""
    seat, why = _next_seat(table, ting)
    streak = table.streak + 1 if seat == table.dealer else 1
    kept = "keeps the deal (连庄)" if seat == table.dealer else "deals next"
    return seat, streak, f"Next dealer: P{seat} {kept}, k={streak} — {why}"


def _in_turn_order(start: int) -> list[int]:
    return [(start + i) % SEATS for i in range(SEATS)]


def _next_seat(table: Table, ting: list[bool]) -> tuple[int, str]:
    rules, dealer, outcome = table.rules, table.dealer, table.outcome
    if isinstance(outcome, Draw):
        return _draw_seat(rules.huang_dealer, dealer, ting)
    if not isinstance(outcome, Win):  # 包牌 / 诈胡 end the hand without a win (INF)
        return dealer, "a penalty ends the hand, the dealer stays"
    winners = outcome.winners
    if len(winners) == 1:
        return winners[0], "the winner deals"
    if rules.yipao_dealer == "lps":
        first = next(s for s in _in_turn_order((outcome.discarder + 1) % SEATS) if s in winners)
        return first, "一炮多响 (multiple winners): first winner from the discarder's 下家 (next seat)"
    if len(winners) == 3:
        return outcome.discarder, "一炮三响 (three winners on one discard): the discarder deals"
    first = next(s for s in _in_turn_order(dealer) if s in winners)
    return first, "一炮双响 (two winners on one discard): first winner from the dealer in turn order"


def _draw_seat(mode: str, dealer: int, ting: list[bool]) -> tuple[int, str]:
    """黄牌 (exhaustive draw)."""
    ready = sum(ting)
    if mode == "stay" or ready in (0, SEATS):
        return dealer, "黄牌 (draw): the dealer stays"
    if mode == "qq" and ready == SEATS - 1:
        return ting.index(False), "黄牌 (draw), QQ rule: the only player not 叫牌 deals"
    if ting[dealer]:
        return dealer, "黄牌 (draw): the dealer is 叫牌 (ready) and stays"
    nearest = next(s for s in _in_turn_order(dealer) if ting[s])
    return nearest, "黄牌 (draw): the dealer is not 叫牌; the 叫牌 player nearest him in turn order deals"
