"""Whole-table settlement of one hand (docs/rules.md#dou to #settlement): ``settle(state, rules) -> result``.

The state is the JSON form of the table at the end of a hand (docs/rules.md#engine-input)::

    {"rules": "gy-normal" | {"preset": "liupanshui", <config overrides>},   # optional
     "dealer": 0, "streak": 1, "base": 1,                                   # optional: 0, 1, the rules' 底分
     "players": [{"concealed": "123m456p...", "melds": [{"type": "pong", "tile": "5m", "from": 2}],
                  "river": "1s9m" or ["1s", "9m"], "bao_ting": false}, ... 4 seats],
                # a seat that did not win may be told instead: {"ready": true, "holds": "1s1s", "melds": [...],
                # "river": ...} or {"not_ready": true, ...} (quick rounds, scoring.table)
     "outcome": {"type": "win", "winners": [1], "win_tile": "5p", "self_drawn": true, "discarder": null,
                 "kong_draw": false, "hot_discard": false, "robbed_kong": false}
              | {"type": "draw"}
              | {"type": "pass_lock_penalty", "player": 2, "win_tile": "5p"}   # 包牌 (过水)
              | {"type": "false_win", "player": 2},                            # 诈胡
     "flipped": "4m" | null, "first_1s": {"discarder": 2, "claimed_by": null} | null,
     # house-rule input (docs/rules.md#engine-input): "first_draw": true in a win outcome (天胡/地胡),
     "gen_zhuang": false, "first_8p": {"discarder": 3, "claimed_by": null} | null,   # 跟庄, first 8p
     "weekday": 3 | null, "indicators": ["2m", "7s"]}   # 星期鸡 day 1..7, 前后鸡/滚筒鸡 extra indicators

A winner's ``concealed`` excludes the winning tile. A ``"rules"`` key in the state wins over the ``rules``
argument; ``"base"`` in the state wins over the rules' 底分. The result holds the itemized ledger (amounts
already × 底分), the from→to matrix, per-player components and the next dealer; every component sums to zero.
Invalid input raises ``ValueError`` with a readable message. The result is a :class:`scoring.results.Settlement`;
its ``to_dict()`` is the JSON form.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scoring.chickens import CHUIFENG, chicken_transfers
from scoring.dealer import next_dealer
from scoring.dou import dou_transfers
from scoring.dushan import settle_dushan
from scoring.hand_fan import HandFan, hand_transfers
from scoring.ledger import COMPONENTS, Transfer, net
from scoring.results import SeatResult, SeatWin, Settlement
from scoring.rules import Rules
from scoring.shapes import waits as shape_waits
from scoring.table import SEATS, Table, Win, parse_table, table_counts
from scoring.tiles import tile_index


def settle(state: Mapping[str, Any] | Table,
           rules: str | Mapping[str, Any] | Rules | None = "gy-normal") -> Settlement:
    """Settle one hand: hand fan (牌型), 豆 (kongs) and 鸡 (chickens) between the four seats. ``state`` is the
    JSON form (parsed here with ``rules``) or an already parsed :class:`Table`."""
    table = state if isinstance(state, Table) else parse_table(state, rules)
    waits, counted = _waits(table)
    ting = _ting(table, counted)
    if table.rules.settlement == "dushan":
        return settle_dushan(table, waits, ting)
    hand = hand_transfers(table, ting, counted)  # also refuses a win the tiles or the 豆 gate do not allow
    if table.rules.chuifeng_ji == "hand" and table.flipped == CHUIFENG:
        return _blown_away(table, ting, waits)
    dou, dou_lines = dou_transfers(table, ting, hand.burned)
    chickens, chicken_lines = chicken_transfers(table, ting, hand.burned)
    dealer, streak, dealer_line = next_dealer(table, ting)

    base = table.rules.base
    times_base = "" if base == 1 else f"; × 底分 (base) {base} = {{}}"
    ledger = [Transfer(t.payer, t.payee, t.fan * base, t.component, t.reason + times_base.format(t.fan * base))
              for t in (*hand.transfers, *dou, *chickens) if t.fan * base]
    nets = {c: net(ledger, SEATS, c) for c in COMPONENTS}
    explanation = [f"Rules: {table.rules.preset}, 底分 (base) {base}",
                   _ting_line(ting, table), *_told_lines(table), *_dead_wait_lines(waits, counted), *hand.lines, *dou_lines,
                   *chicken_lines, dealer_line]
    return Settlement(table.rules, tuple(ledger),
                      tuple(_seat_result(table, seat, ting, waits, hand, nets) for seat in range(SEATS)),
                      dealer, streak, tuple(explanation))


def _blown_away(table: Table, ting: list[bool], waits: list[list[str]]) -> Settlement:
    """吹风鸡, whole-round reading (FW): F = 5p voids the round — every total 0 — and the dealer deals again,
    his 连庄 streak counting on."""
    line = (f"吹风鸡 (wind-blown chickens): F = {CHUIFENG}, the round is void: nobody pays; P{table.dealer} deals "
            f"again, k={table.streak + 1}")
    nets = {c: [0] * SEATS for c in COMPONENTS}
    players = tuple(_seat_result(table, seat, ting, waits, HandFan(), nets) for seat in range(SEATS))
    return Settlement(table.rules, (), players, table.dealer, table.streak + 1,
                      (f"Rules: {table.rules.preset}, 底分 (base) {table.rules.base}", _ting_line(ting, table), line))


def _waits(table: Table) -> tuple[list[list[str]], list[list[str]]]:
    """(all waits, waits that count for 叫牌) per seat; with ``dead_wait_counts=false`` a wait whose four
    copies are all on the table (hands, melds, rivers, winning and flipped tile) does not count."""
    all_waits = [[] if p.told is not None else shape_waits(list(p.concealed), list(p.melds)) for p in table.players]
    if table.rules.dead_wait_counts:
        return all_waits, all_waits
    counts = table_counts(table)
    return all_waits, [[w for w in ws if counts[tile_index(w)] < 4] for ws in all_waits]


def _ting(table: Table, counted: list[list[str]]) -> list[bool]:
    """叫牌 (ready) at settlement: winners and anyone with a counted wait (docs/rules.md#win-shapes, #engine-input: computed from the tiles).

    A 报听 flag does not make a hand ready: a player who declared 报听 but whose tiles wait on nothing is not
    叫牌 (he would otherwise escape his 查叫 payment at 黄牌). A hand not shown is 叫牌 as told."""
    outcome = table.outcome
    winners = outcome.winners if isinstance(outcome, Win) else ()
    told = [p.told for p in table.players]
    return [seat in winners or (told[seat].ready if told[seat] is not None else bool(counted[seat]))
            for seat in range(SEATS)]


def _ting_line(ting: list[bool], table: Table) -> str:
    ready = [f"P{s}" + (" (报听)" if table.players[s].bao_ting else "")
             + (" (said ready, hand not shown)" if table.players[s].told is not None else "") for s in range(SEATS) if ting[s]]
    not_ready = [f"P{s}" + (" (declared 报听 but not ready)" if table.players[s].bao_ting else "")
                 + (" (said not ready, hand not shown)" if table.players[s].not_ready else "")
                 for s in range(SEATS) if not ting[s]]
    return f"叫牌 (ready): {', '.join(ready) or 'nobody'}; not 叫牌: {', '.join(not_ready) or 'nobody'}"


def _told_lines(table: Table) -> list[str]:
    """What was taken as told of each hand not shown: ``P1: ready, as told; holds 1s 1s``."""
    lines = []
    for seat, player in enumerate(table.players):
        if player.told is None:
            continue
        ready = "ready (叫牌)" if player.told.ready else "not ready (not 叫牌)"
        # Held chickens matter only when somebody won: a draw pays no 鸡.
        holds = f"; holds {' '.join(player.told.holds) or 'no chicken tiles'}" if isinstance(table.outcome, Win) else ""
        lines.append(f"P{seat}: {ready}, as told{holds}")
    return lines


def _dead_wait_lines(waits: list[list[str]], counted: list[list[str]]) -> list[str]:
    return [f"Dead waits of P{s} not counted (all 4 copies on the table): {', '.join(sorted(dead))}"
            for s in range(SEATS) if (dead := set(waits[s]) - set(counted[s]))]


def _seat_result(table: Table, seat: int, ting: list[bool], waits: list[list[str]], hand: HandFan,
                 nets: dict[str, list[int]]) -> SeatResult:
    won = hand.winners.get(seat)
    return SeatResult(seat=seat, ting=ting[seat], waits=tuple(waits[seat]), hand=nets["hand"][seat],
                      dou=nets["dou"][seat], chicken=nets["chicken"][seat], burned=seat in hand.burned,
                      dealer=seat == table.dealer,
                      win=None if won is None else SeatWin(won.hand_type, won.value))
