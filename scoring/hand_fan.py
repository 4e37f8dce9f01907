"""Hand-fan (牌型番) payments of a hand: wins, 黄牌查叫 and the penalties (docs/rules.md#dealer, #hand-payments to #penalties).

Entry point: :func:`hand_transfers`. The win value W of each winner comes from ``scoring.hand``; this module
decides who pays it to whom and adds the 连庄 k, 热炮 and 杀报 terms.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scoring.hand import TONGSAN, HandType, classify_win, win_allowed_on_discard, win_value
from scoring.ledger import Transfer
from scoring.table import SEATS, Draw, FalseWin, PassLockPenalty, Table, Win
from scoring.tiles import to_mpsz


@dataclass(frozen=True)
class WinnerFan:
    hand_type: HandType
    value: int  # W of docs/rules.md#win-value


@dataclass
class HandFan:
    transfers: list[Transfer] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    burned: set[int] = field(default_factory=set)  # 全烧/燒光: 豆 and 鸡 income void
    winners: dict[int, WinnerFan] = field(default_factory=dict)


def hand_transfers(table: Table, ting: list[bool], waits: list[list[str]]) -> HandFan:
    """Hand-fan transfers. ``ting[p]``: p is 叫牌; ``waits[p]``: the waits that count for p (查叫)."""
    outcome = table.outcome
    if isinstance(outcome, Win):
        result = _win(table, outcome)
    elif isinstance(outcome, Draw):
        result = _draw(table, ting, waits)
    elif isinstance(outcome, PassLockPenalty):
        result = _pass_lock(table, outcome)
    else:
        assert isinstance(outcome, FalseWin)
        result = _false_win(table, outcome)
    if table.gen_zhuang:
        _gen_zhuang(table, result)
    return result


def _gen_zhuang(table: Table, result: HandFan) -> None:
    """跟庄 (开局跟, house rule): the dealer's first discard was followed by all three others, so the dealer
    pays each of them ``rules.genzhuang`` — whatever the outcome, since it happened at the start (P1: 4)."""
    value, dealer = table.rules.genzhuang, table.dealer
    if not value:
        result.lines.append("跟庄 (the dealer's first discard followed by all three): not played under these rules")
        return
    result.lines.append(f"跟庄 (the dealer's first discard followed by all three): P{dealer} pays each other "
                        f"player {value}")
    for p in range(SEATS):
        if p != dealer:
            result.transfers.append(Transfer(dealer, p, value, "hand", f"跟庄 (dealer's first discard followed by "
                                                                     f"all three): P{dealer} pays P{p} {value}"))


def _type_name(hand_type: HandType) -> str:
    return f"{hand_type.name_zh} ({hand_type.name_en})"


def _dealer_k(table: Table, a: int, b: int) -> int:
    """连庄 term: k on every hand-fan payment between the dealer and another player (docs/rules.md#dealer), when enabled."""
    return table.streak if table.rules.dealer_bonus and table.dealer in (a, b) else 0


def _dealer_win(table: Table, w: int) -> list[tuple[str, int]]:
    """连庄 as a dealer's win bonus (``lianzhuang``, P2): a winning dealer collects k more from each payer."""
    if table.rules.lianzhuang and w == table.dealer:
        return [("连庄 (dealer wins) k", table.streak)]
    return []


def _shabao(table: Table, hand_type: HandType, who: str) -> tuple[str, int]:
    """杀报 extra: Q; under ``shabao_pinghu`` Q − 1 on a 平胡, not added to the 平胡's own 1 (P3 gy/: 9)."""
    q = table.rules.baoting_q
    if table.rules.shabao_pinghu and hand_type.key == "pinghu":
        return f"杀报 (报听 {who} pays extra) Q − 1 on a 平胡", q - 1
    return f"杀报 (报听 {who} pays extra) Q", q


def _terms(w: int, hand_type: HandType, extras: list[tuple[str, int]]) -> str:
    text = f"W {w} for {_type_name(hand_type)}"
    return text + "".join(f" + {name} {n}" for name, n in extras if n)


Judged = tuple[HandType, int, list[str]]  # hand type, W, explanation lines


def _judge(table: Table, seat: int, win_tile: str, *, self_drawn: bool, discarder: int | None = None,
           kong_draw: bool = False, hot_discard: bool = False, robbed_kong: bool = False,
           first_draw: bool = False) -> Judged:
    """Hand type and W of a seat's win on ``win_tile``; ``ValueError`` when it is no legal win."""
    rules, player = table.rules, table.players[seat]
    hand_type = classify_win([*player.concealed, win_tile], list(player.melds), rules, win_tile)
    if hand_type is None:
        shown = " ".join([to_mpsz(player.concealed), *(f"[{m.type} {m.tile}]" for m in player.melds)])
        raise ValueError(f"P{seat}'s tiles {shown} + {win_tile} do not make a winning hand (成牌)")
    gate: list[str] = []
    if discarder is not None:
        allowed, why = win_allowed_on_discard(
            hand_type, list(player.melds), hot_discard=hot_discard, robbed_kong=robbed_kong,
            discarder_bao_ting=table.players[discarder].bao_ting, winner_bao_ting=player.bao_ting)
        if not allowed:
            raise ValueError(f"P{seat} cannot win on P{discarder}'s {win_tile}: {why}")
        gate.append(f"胡牌通行证 (kong gate): {why}")
    heavenly = ("tianhu" if seat == table.dealer else "dihu") if first_draw else None
    value, lines = win_value(hand_type, rules, self_drawn=self_drawn, kong_draw=kong_draw,
                             bao_ting=player.bao_ting, first_draw=heavenly)
    return hand_type, value, gate + lines


def _win(table: Table, win: Win) -> HandFan:
    result = HandFan()
    for w in win.winners:
        hand_type, value, why = _judge(
            table, w, win.win_tile, self_drawn=win.self_drawn or win.robbed_kong, discarder=win.discarder,
            kong_draw=win.kong_draw, hot_discard=win.hot_discard, robbed_kong=win.robbed_kong,
            first_draw=win.first_draw)
        result.winners[w] = WinnerFan(hand_type, value)
        how = "自摸 (self-drawn)" if win.self_drawn else (
            f"抢杠 (robbing P{win.discarder}'s kong)" if win.robbed_kong else f"on P{win.discarder}'s discard")
        result.lines.append(f"P{w} wins {how} with {_type_name(hand_type)} {hand_type.fan}: W = {value}")
        result.lines += [f"  {line}" for line in why]
        if win.self_drawn:
            result.transfers += _self_drawn_payments(table, w, hand_type, value)
        elif win.robbed_kong:
            result.transfers.append(_robbed_kong_payment(table, win, w, hand_type, value))
        else:
            result.transfers.append(_discard_payment(table, win, w, hand_type, value))
    d, rules = win.discarder, table.rules
    if d is not None and ((win.hot_discard and rules.repao_burn) or (win.robbed_kong and rules.qianggang_burn)):
        result.burned.add(d)
        cause = "热炮 (hot discard)" if win.hot_discard else "抢杠 (robbed kong)"
        result.lines.append(f"全烧 (burned): after his {cause} P{d}'s 豆 and 鸡 income is void; he still pays")
    return result


def _self_drawn_payments(table: Table, w: int, hand_type: HandType, value: int) -> list[Transfer]:
    """自摸: each other player pays W (+k with the dealer); a 报听 non-winner adds Q (杀报)."""
    transfers = []
    for p in range(SEATS):
        if p == w:
            continue
        extras = [("连庄 (dealer streak) k", _dealer_k(table, p, w)), *_dealer_win(table, w)]
        if table.players[p].bao_ting:
            extras.append(_shabao(table, hand_type, "player"))
        amount = value + sum(n for _, n in extras)
        transfers.append(Transfer(p, w, amount, "hand", f"自摸 (self-drawn win): P{p} pays P{w} {amount} — "
                                                        f"{_terms(value, hand_type, extras)}"))
    return transfers


def _robbed_kong_payment(table: Table, win: Win, w: int, hand_type: HandType, value: int) -> Transfer:
    """抢杠 (docs/rules.md#qianggang, #decisions): the robbed player pays what all three would have paid for a 自摸, k terms included;
    no 杀报 extra."""
    d = win.discarder
    assert d is not None
    k_total = sum(_dealer_k(table, p, w) + sum(n for _, n in _dealer_win(table, w)) for p in range(SEATS) if p != w)
    amount = 3 * value + k_total
    return Transfer(d, w, amount, "hand", (
        f"抢杠 (robbed kong): P{d} pays P{w} {amount} for all three — 3 × W {value} for {_type_name(hand_type)}"
        + (f" + 连庄 (dealer streak) terms {k_total}" if k_total else "")))


def _discard_payment(table: Table, win: Win, w: int, hand_type: HandType, value: int) -> Transfer:
    """点炮: the discarder pays W (+k, +1 for 热炮, +Q when he is 报听); 一炮多响 pays each winner so.
    With ``yipao_reverse`` and several winners each winner pays the discarder instead (S0 20 literal)."""
    d = win.discarder
    assert d is not None
    extras = [("连庄 (dealer streak) k", _dealer_k(table, d, w)), *_dealer_win(table, w)]
    if win.hot_discard:
        extras.append(("热炮 (hot discard after a kong)", TONGSAN if table.rules.tongsan else table.rules.repao_extra))
    if table.players[d].bao_ting:
        extras.append(_shabao(table, hand_type, "discarder"))
    amount = value + sum(n for _, n in extras)
    terms = _terms(value, hand_type, extras)
    if table.rules.yipao_reverse and len(win.winners) > 1:
        return Transfer(w, d, amount, "hand", f"一炮多响 reversed (S0 literal, winners pay the discarder): "
                                              f"P{w} pays P{d} {amount} — {terms}")
    return Transfer(d, w, amount, "hand", f"点炮 (discard win): P{d} pays P{w} {amount} — {terms}")


def _draw(table: Table, ting: list[bool], waits: list[list[str]]) -> HandFan:
    """黄牌查叫 (draw, ready-hand check): each non-叫牌 player pays each 叫牌 player his best type fan."""
    result = HandFan()
    result.lines.append("黄牌 (exhaustive draw): no 豆 (kongs), no 鸡 (chickens)")
    if all(ting) or not any(ting):
        result.lines.append("查叫 (ready-hand check): " + ("everybody" if all(ting) else "nobody")
                            + " is 叫牌, no payment")
        return result
    rules = table.rules
    for p in range(SEATS):
        if not ting[p]:
            continue
        player = table.players[p]
        best, best_tile, best_type = 0, None, None
        for tile in waits[p]:
            hand_type = classify_win([*player.concealed, tile], list(player.melds), rules, tile)
            if hand_type is not None and hand_type.fan > best:
                best, best_tile, best_type = hand_type.fan, tile, hand_type
        assert best_type is not None  # 叫牌 at a draw means a counted wait (settle._ting)
        what = f"best wait {best_tile} → {_type_name(best_type)} {best}"
        for q in range(SEATS):
            if ting[q]:
                continue
            k = _dealer_k(table, p, q)
            amount = best + k
            result.transfers.append(Transfer(q, p, amount, "hand", (
                f"黄牌查叫 (draw, ready-hand check): P{q} pays P{p} {amount} — P{p} waits on "
                f"{'/'.join(waits[p]) or 'nothing'}, {what}" + (f" + 连庄 (dealer streak) k {k}" if k else ""))))
    return result


def _pass_lock(table: Table, penalty: PassLockPenalty) -> HandFan:
    """包牌 (过水 pass lock, docs/rules.md#penalties): the win is void and the player pays each other player his W."""
    p, rules = penalty.player, table.rules
    if rules.pass_lock == "forbid":
        raise ValueError(f"过水 (pass lock): P{p} passed a winnable discard, so under pass_lock=forbid he may "
                         f"not win on a discard before his next draw; the win on {penalty.win_tile} is refused")
    hand_type, value, _ = _judge(table, p, penalty.win_tile, self_drawn=False)
    result = HandFan()
    result.lines.append(f"包牌 (过水 pass lock): P{p}'s win on {penalty.win_tile} is void; he pays each other "
                        f"player W {value}; no 豆/鸡, the dealer stays")
    for q in range(SEATS):
        if q == p:
            continue
        extras = [("连庄 (dealer streak) k", _dealer_k(table, p, q))]
        amount = value + extras[0][1]
        result.transfers.append(Transfer(p, q, amount, "hand", (
            f"包牌 (pass-lock penalty): P{p} pays P{q} {amount} — {_terms(value, hand_type, extras)}")))
    return result


def _false_win(table: Table, penalty: FalseWin) -> HandFan:
    """诈胡 (false win, docs/rules.md#penalties): the player pays each other player Q (活一色 one-suit fan)."""
    p, q = penalty.player, table.rules.baoting_q
    result = HandFan()
    result.lines.append(f"诈胡 (false win): P{p} pays each other player Q {q}; no 豆/鸡, the dealer stays")
    for other in range(SEATS):
        if other != p:
            result.transfers.append(Transfer(p, other, q, "hand",
                                             f"诈胡 (false win penalty): P{p} pays P{other} {q}"))
    return result
