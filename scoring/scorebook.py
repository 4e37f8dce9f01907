"""A scorebook: a table of four named players playing round after round (pure logic, no I/O).

A :class:`Scorebook` holds what the players decide — names, rules (a preset plus house overrides, the same
spec ``scoring.settle`` takes), the first dealer (庄家) — and the rounds as entered: each round is the
``/v1/settle`` body without ``rules``, ``dealer``, ``streak`` and ``base``, because those follow from the
table. :func:`replay` settles the rounds in order through ``scoring.settle``: the dealer and 连庄 streak
(consecutive hands the same dealer deals) of round n+1 are the ``next_dealer`` / ``next_streak`` of round n,
so an edited or removed round 3 corrects every dealer, settlement and total after it.

A round is its JSON form (checked here by ``scoring.table.parse_table``, for scripts) or an already checked value
that makes the engine's :class:`~scoring.table.Table` itself (:class:`EnteredRound`: the service's and the
CLI's ``RoundIn``), so a round checked at the edge is not checked again.

Totals are whole numbers: each round adds the settlement's per-player ``total`` (fan × 底分 base), and every
settlement is zero-sum, so the running totals always sum to zero. Bad input raises ``ValueError`` with a
readable message, naming the round.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from scoring.results import Settlement
from scoring.rules import Rules, get_rules
from scoring.seat_names import name_seats, named_settlement
from scoring.settle import settle
from scoring.table import SEATS, Table

MAX_NAME = 40
# Keys a round may not carry: the table decides them (rules, 庄家 dealer, 连庄 streak, 底分 base).
TABLE_KEYS = ("rules", "dealer", "streak", "base")

RulesSpec = str | Mapping[str, Any]


class EnteredRound(Protocol):
    """A round already checked where it was entered (``pipeline.table_models.RoundIn``): the engine's table once
    the table has decided the rest, and the round's JSON as entered."""

    def to_table(self, rules: Rules, **decided: Any) -> Table: ...

    def entered(self) -> dict[str, Any]: ...


Round = Mapping[str, Any] | EnteredRound


@dataclass(frozen=True)
class Scorebook:
    players: tuple[str, ...]
    rules: RulesSpec = "gy-normal"
    first_dealer: int = 0
    rounds: tuple[Round, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class PlayedRound:
    """One round after replay: who dealt, the state the engine saw, its settlement, the running totals."""

    number: int  # 1-based
    round: Mapping[str, Any]  # as entered (JSON)
    dealer: int
    streak: int
    state: dict[str, Any]
    settlement: Settlement
    deltas: tuple[int, ...]
    totals_after: tuple[int, ...]


@dataclass(frozen=True)
class Standing:
    """The table after replaying every round: the next hand's dealer and streak, the totals."""

    dealer: int
    streak: int
    totals: tuple[int, ...]
    rounds: tuple[PlayedRound, ...]


class DuplicatePlayers(ValueError):
    """Two seats of a table given the same name."""


def new_scorebook(players: Sequence[str], rules: RulesSpec | None = "gy-normal", dealer: int = 0) -> Scorebook:
    """A scorebook with no rounds; names are trimmed and must be four distinct non-empty strings."""
    if isinstance(players, str) or not isinstance(players, Sequence) or len(players) != SEATS:
        raise ValueError(f"a table has {SEATS} players: give {SEATS} names")
    names = []
    for seat, name in enumerate(players):
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"player {seat}: a name must be a non-empty string")
        name = name.strip()
        if len(name) > MAX_NAME or any(not ch.isprintable() for ch in name):
            raise ValueError(f"player {seat}: a name is at most {MAX_NAME} printable characters")
        names.append(name)
    if len(set(names)) != SEATS:
        raise DuplicatePlayers(f"player names must differ: {', '.join(names)}")
    if isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < SEATS:
        raise ValueError(f"dealer is a seat 0..{SEATS - 1}, not {dealer!r}")
    spec: RulesSpec = "gy-normal" if rules is None else rules
    get_rules(dict(spec) if isinstance(spec, Mapping) else spec)  # ValueError for an unknown preset or key
    return Scorebook(tuple(names), copy.deepcopy(spec), dealer)


def round_state(round_: Mapping[str, Any], rules: RulesSpec, dealer: int, streak: int) -> dict[str, Any]:
    """The table state ``scoring.settle`` sees for a round dealt by ``dealer`` with 连庄 count ``streak``."""
    if not isinstance(round_, Mapping):
        raise ValueError("a round is a JSON object: players, outcome, flipped, first_1s")
    taken = [k for k in TABLE_KEYS if k in round_]
    if taken:
        raise ValueError(f"a round does not set {', '.join(taken)}: the table decides them")
    return {**copy.deepcopy(dict(round_)), "rules": copy.deepcopy(rules), "dealer": dealer, "streak": streak}


@dataclass(frozen=True)
class Carry:
    """What one round hands the next: its dealer, 连庄 streak and the running totals."""

    dealer: int
    streak: int
    totals: tuple[int, ...]


def replay(book: Scorebook, start: int = 1, carry: Carry | None = None) -> Standing:
    """Settle rounds ``start``.. in order (``Standing.rounds`` holds those only). ``carry``: the state after
    round ``start - 1`` when resuming (an edit of round n settles n and after); default the table's start."""
    if carry is None:
        if start != 1:
            raise ValueError("resuming after round 1 needs the carry of the round before")
        carry = Carry(book.first_dealer, 1, (0,) * SEATS)
    played: list[PlayedRound] = []
    for number in range(start, len(book.rounds) + 1):
        played.append(play_round(book.rules, number, book.rounds[number - 1], carry, book.players))
        last = played[-1]
        carry = Carry(last.settlement.next_dealer, last.settlement.next_streak, last.totals_after)
    return Standing(carry.dealer, carry.streak, tuple(carry.totals), tuple(played))


def play_round(rules: RulesSpec, number: int, round_: Round, carry: Carry,
               names: Sequence[str] | None = None) -> PlayedRound:
    """Settle round ``number`` dealt as ``carry`` says: appending a round needs only the round before. With the
    players' ``names`` its explanation and errors name them instead of P0–P3."""
    entered = round_ if isinstance(round_, Mapping) else round_.entered()
    try:
        state = round_state(entered, rules, carry.dealer, carry.streak)
        if isinstance(round_, Mapping):
            table: Mapping[str, Any] | Table = state  # the JSON form, parsed by settle
        else:
            table = round_.to_table(get_rules(dict(rules) if isinstance(rules, Mapping) else rules),
                                    dealer=carry.dealer, streak=carry.streak)
        result = named_settlement(settle(table), names)
    except ValueError as exc:
        raise ValueError(f"round {number}: {name_seats(str(exc), names)}") from None
    deltas = tuple(p.total for p in result.players)
    if sum(deltas):  # the engine's contract; a table must never drift from zero
        raise AssertionError(f"round {number}: settlement is not zero-sum: {deltas}")
    totals = tuple(t + d for t, d in zip(carry.totals, deltas, strict=True))
    return PlayedRound(number, entered, carry.dealer, carry.streak, state, result, deltas, totals)


def _number(book: Scorebook, n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= len(book.rounds):
        raise LookupError(f"no round {n!r}: the table has {len(book.rounds)} round(s)")
    return n


def _kept(round_: Round) -> Round:
    # A JSON round is copied (the caller may change its dict later); a checked one is kept as it is.
    return copy.deepcopy(dict(round_)) if isinstance(round_, Mapping) else round_


def add_round(book: Scorebook, round_: Round) -> Scorebook:
    return replace(book, rounds=(*book.rounds, _kept(round_)))


def replace_round(book: Scorebook, n: int, round_: Round) -> Scorebook:
    """Round ``n`` (1-based) replaced; ``LookupError`` for a round that does not exist."""
    n = _number(book, n)
    return replace(book, rounds=(*book.rounds[:n - 1], _kept(round_), *book.rounds[n:]))


def remove_round(book: Scorebook, n: int) -> Scorebook:
    """Round ``n`` (1-based) removed, later rounds renumbered; ``LookupError`` for a round that does not exist."""
    n = _number(book, n)
    return replace(book, rounds=(*book.rounds[:n - 1], *book.rounds[n:]))


def outcome_words(round_: Mapping[str, Any], players: Sequence[str]) -> str:
    """The outcome of a round in plain words, e.g. ``Bo wins on 5p, 自摸 (self-drawn)``."""
    outcome = round_.get("outcome") or {}
    kind = outcome.get("type")
    if kind == "win":
        winners = " & ".join(players[s] for s in outcome.get("winners", []))
        tile, discarder = outcome.get("win_tile"), outcome.get("discarder")
        verb = "win" if len(outcome.get("winners", [])) > 1 else "wins"
        if outcome.get("robbed_kong"):
            how = f"抢杠 (robbing the kong of {players[discarder]})"
        elif outcome.get("self_drawn") or discarder is None:
            how = "杠上花 (kong-replacement self-draw)" if outcome.get("kong_draw") else "自摸 (self-drawn)"
        else:
            how = f"点炮 (discarded by {players[discarder]})"
        return f"{winners} {verb} on {tile}, {how}"
    if kind == "draw":
        return "黄牌 (exhaustive draw)"
    if kind == "pass_lock_penalty":
        return f"包牌 (pass-lock penalty): {players[outcome['player']]}"
    if kind == "false_win":
        return f"诈胡 (false win): {players[outcome['player']]}"
    return str(kind)
