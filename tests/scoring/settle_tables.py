"""Table states for settlement tests: the worked examples E1–E12 of docs/rules.md#examples with the full tiles of docs/rules.md#example-tiles,
and small readers of a settlement result.

Melds are written in the notation of docs/rules.md#tiles: ``P:5m<2`` pong from seat 2, ``K:4m<2`` 点豆 (exposed kong
fed by seat 2), ``BK:9p`` 转弯豆 (added kong), ``AK:6m`` 闷豆 (concealed kong).
"""

from __future__ import annotations

import copy
from typing import Any

from scoring.results import Settlement

_MELD_TYPES = {"P": "pong", "K": "kong", "BK": "added_kong", "AK": "concealed_kong"}


def meld(text: str) -> dict[str, Any]:
    """``"P:5m<2"`` → ``{"type": "pong", "tile": "5m", "from": 2}``."""
    kind, rest = text.split(":")
    tile, _, source = rest.partition("<")
    out: dict[str, Any] = {"type": _MELD_TYPES[kind], "tile": tile}
    if source:
        out["from"] = int(source)
    return out


def seat(concealed: str, *melds: str, river: str | list[str] = "", bao_ting: bool = False) -> dict[str, Any]:
    return {"concealed": concealed, "melds": [meld(m) for m in melds], "river": river, "bao_ting": bao_ting}


def zimo(winner: int, tile: str, **flags: bool) -> dict[str, Any]:
    """自摸 (self-drawn win)."""
    return {"type": "win", "winners": [winner], "win_tile": tile, "self_drawn": True, "discarder": None, **flags}


def ron(winners: list[int], tile: str, discarder: int, **flags: bool) -> dict[str, Any]:
    """Win on a discard (点炮), or on a robbed kong with ``robbed_kong=True``."""
    return {"type": "win", "winners": winners, "win_tile": tile, "self_drawn": False, "discarder": discarder,
            **flags}


def table(players: list[dict[str, Any]], outcome: dict[str, Any], *, rules: Any = "gy-normal", dealer: int = 0,
          streak: int = 1, flipped: str | None = None, first_1s: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"rules": rules, "dealer": dealer, "streak": streak, "players": players, "outcome": outcome,
            "flipped": flipped, "first_1s": first_1s}


def first_1s(discarder: int, claimed_by: int | None = None) -> dict[str, Any]:
    return {"discarder": discarder, "claimed_by": claimed_by}


EXAMPLES: dict[str, dict[str, Any]] = {
    # E1 GY-N: 平胡自摸, 翻鸡, 包鸡 with 冲锋鸡.
    "E1": table([seat("56m23344556788s"),
                 seat("123456s234p789m5p"),
                 seat("224567m2468p799s", river="1s"),
                 seat("3467889m7p11247s")],
                zimo(1, "5p"), flipped="4m", first_1s=first_1s(2)),
    # E2 GY-N: 大对子 点炮 without 豆; 责任鸡.
    "E2": table([seat("2244467999p", "P:1s<3"),
                 seat("113446778m19p24s"),
                 seat("222m555s999m3p", "P:7p<0"),
                 seat("14556m3456p2679s")],
                ron([2], "3p", 3), flipped="8s", first_1s=first_1s(3, claimed_by=0)),
    # E3 GY-N: 闷豆 + 杠上花; 点豆; void 豆 of a non-叫牌 player.
    "E3": table([seat("123456p78s22s", "AK:6m"),
                 seat("123m4566789s", "K:4m<2"),
                 seat("1238m47788p1348s"),
                 seat("379m45p22378s", "BK:9p")],
                zimo(0, "9s", kong_draw=True), flipped="3p"),
    # E4 GY-N: 热炮 with 全烧.
    "E4": table([seat("1334455789m123s"),
                 seat("1234566799s", "BK:5p"),
                 seat("123m456s789s22p89m"),
                 seat("224678m38p23458s", river="1s")],
                ron([2], "7m", 1, hot_discard=True), flipped="6p", first_1s=first_1s(3)),
    # E5 GY-N: 抢杠.
    "E5": table([seat("45s111m234p789p99m"),
                 seat("12233557799m11s"),
                 seat("2356788m45p2379s"),
                 seat("12469p12344s", "P:6s")],
                ron([0], "6s", 3, robbed_kong=True), flipped="5s"),
    # E6 GY-N: 龙七对 自摸, 金鸡, 金冲锋鸡.
    "E6": table([seat("22m447788p22336s"),
                 seat("2569m122349p458s"),
                 seat("11s33p5555p77m88m9s", river="1s"),
                 seat("335899m2269p678s", river="1s")],
                zimo(2, "9s"), flipped="9s", first_1s=first_1s(2)),
    # E7 GY-R: 清大对 自摸 on the last tile (no 翻鸡).
    "E7": table([seat("1223334678m345p"),
                 seat("444p666p999p1p", "P:2p<3"),
                 seat("34578m8p1234689s"),
                 seat("2459m138p245589s", river=["1s", "1s"])],
                zimo(1, "1p"), rules="gy-reduced", flipped=None, first_1s=first_1s(3)),
    # E8 GY-N: 杀报 (P3 declared 报听 and discards into P1's 平胡).
    "E8": table([seat("24568m14578p118s"),
                 seat("34m567p345s789s99p"),
                 seat("23468m145p56679s"),
                 seat("111567789m678p1s", bao_ting=True)],
                ron([1], "2m", 3), flipped="2s"),
    # E9 GY-N: 一炮双响 (the dealer P0 discards 5p; P1 and P3 win).
    "E9": table([seat("1445m2377p24555s", river="1s"),
                 seat("111s333m666p99s55p"),
                 seat("1112224566799m"),
                 seat("34p234s678s77m", "K:8m<2")],
                ron([1, 3], "5p", 0), flipped="8p", first_1s=first_1s(0)),
    # E10 GY-N: 黄牌查叫.
    "E10": table([seat("12345678922p56p"),
                  seat("11m123p22346799s"),
                  seat("234m567s888p33m67m"),
                  seat("255668m5p223678s")],
                 {"type": "draw"}),
    # E11 LPS: 双龙七对 自摸 by a 闲 with 连庄 k=1; LPS 点豆 1.
    "E11": table([seat("4568m137p256679s"),
                  seat("2222m5555p33s77s9m"),
                  seat("145688m23689p35s", river="1s"),
                  seat("123778899p1s", "K:4p<0")],
                 zimo(1, "9m"), rules="liupanshui", flipped="6s", first_1s=first_1s(2)),
    # E12 LPS: 抢杠 by the dealer (k=2) with 燒光.
    "E12": table([seat("23p567m111s888s44m"),
                  seat("13m22233445678s"),
                  seat("123999m1s", "P:4p", "AK:9s"),
                  seat("2288m125669p347s")],
                 ron([0], "4p", 2, robbed_kong=True), rules="liupanshui", streak=2, flipped="6m"),
}


def example(name: str, **changes: Any) -> dict[str, Any]:
    """A deep copy of a worked example, with top-level keys replaced."""
    state = copy.deepcopy(EXAMPLES[name])
    state.update(changes)
    return state


def column(result: Settlement, key: str) -> list[int]:
    """One per-seat field of a settlement result, seats 0..3."""
    return [getattr(p, key) for p in result.players]


def paid(result: Settlement, component: str) -> dict[tuple[int, int], int]:
    """(payer, payee) → fan over one component of the ledger."""
    out: dict[tuple[int, int], int] = {}
    for t in result.ledger:
        if t.component == component:
            out[t.payer, t.payee] = out.get((t.payer, t.payee), 0) + t.fan
    return out
