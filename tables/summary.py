"""A round's summary for the history: what kind of round, who won with what hand type and fan, who paid.

Read from the round as entered and its stored settlement (no new column: every round ever stored has both).
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.models import SettleResponse, WinOutcome
from pipeline.table_models import RoundIn


@dataclass(frozen=True)
class HandTypeName:
    zh: str  # e.g. 平胡
    en: str  # e.g. plain win


@dataclass(frozen=True)
class WinSummary:
    seat: int
    hand_type: HandTypeName
    fan: int  # the hand type's fan (番)


@dataclass(frozen=True)
class RoundSummary:
    """``kind``: win, draw (黄牌), pass_lock_penalty (包牌) or false_win (诈胡). ``winner``: the winning seats;
    ``hand_type`` and ``fan``: the first winner's (every winner's in ``wins``, for 一炮多响); ``payer``: who paid
    alone — the discarder of a 点炮 (or the robbed player of a 抢杠), the player a penalty judges — null for a
    self-drawn win (everyone pays) and a draw."""

    kind: str
    winner: tuple[int, ...]
    hand_type: HandTypeName | None
    fan: int | None
    payer: int | None
    wins: tuple[WinSummary, ...]


def round_summary(round_: RoundIn, settlement: SettleResponse) -> RoundSummary:
    outcome = round_.outcome
    if not isinstance(outcome, WinOutcome):
        return RoundSummary(outcome.type, (), None, None, getattr(outcome, "player", None), ())
    players = settlement.players
    wins = tuple(WinSummary(seat, HandTypeName(win.name, win.name_en), win.fan)
                 for seat in outcome.winners if seat < len(players) and (win := players[seat].win) is not None)
    payer = None if outcome.self_drawn or outcome.discarder is None else outcome.discarder
    first = wins[0] if wins else None
    return RoundSummary("win", tuple(outcome.winners), first and first.hand_type, first and first.fan, payer, wins)
