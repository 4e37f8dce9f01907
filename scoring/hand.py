"""Hand types (牌型), the 豆 gate (胡牌通行证) and the win value W (docs/rules.md#hand-types, #kong-gate).

A complete hand gets one base shape — 平胡 (standard with a run), 大对子 (standard, all triplets), 七对,
龙七对 (七对 with a concealed quad), 双龙七对 (two quads) — and the flag 清 (one suit, melds included). The pair
picks a single row of the fan table; rows never add up. When the tiles read several ways, the reading with
the highest fan wins.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from scoring.melds import Meld, parse_melds
from scoring.results import HandType, WaitAnalysis, WaitValue, WinAnalysis
from scoring.rules import HAND_TYPES, Rules, get_rules
from scoring.shapes import Decomposition, check_hand, decompositions, waits
from scoring.tiles import TILE_INDEX, parse_tiles, tile_index, to_counts, to_mpsz

# 清 (one suit) version of each base shape: the table row to use when every tile is of one suit.
QING_OF: dict[str, str] = {
    "pinghu": "qingyise",
    "daduizi": "qingdadui",
    "qidui": "qingqidui",
    "longqidui": "qinglongbei",
    "shuanglong": "qingshuanglong",
}

# The one definition of the win-context flags (how a hand was won, besides 自摸 self_drawn): name → (term,
# meaning). The API models, the CLI options and ``analyze_hand``'s keyword context are all built from it.
WIN_FLAGS: dict[str, tuple[str, str]] = {
    "kong_draw": ("杠上花", "won on a kong replacement draw (self-drawn)"),
    "hot_discard": ("热炮", "the discarder's first discard after his kong"),
    "robbed_kong": ("抢杠", "won on another player's added kong"),
    "bao_ting": ("报听", "the player declared ready at the start"),
    "discarder_bao_ting": ("杀报", "the discarder declared 报听"),
}
CONTEXT_KEYS = tuple(WIN_FLAGS)
TONGSAN = 3  # 通三: added to every win, and the 热炮 extra under it
DUSHAN_WIN = 3  # 独山: 自摸 and 点炮 (and 抢杠) are each worth 3 before the hand types (P2 §8)

RulesSpec = Rules | str | Mapping[str, Any] | None
MeldsSpec = Sequence[Meld | Mapping[str, Any]]


def _as_tiles(tiles: str | Iterable[str]) -> list[str]:
    """MPSZ text or tile names → validated tile names; ``TypeError`` for anything else (None, a number)."""
    if isinstance(tiles, str):
        return parse_tiles(tiles)
    if isinstance(tiles, (bytes, Mapping)) or not isinstance(tiles, Iterable):
        raise TypeError(f"tiles must be MPSZ text such as '123m456p' or a list of tile names, "
                        f"not {type(tiles).__name__}")
    names = list(tiles)
    for t in names:
        tile_index(t)
    return names


def is_qing(counts: Sequence[int], melds: Sequence[Meld]) -> bool:
    """清 (one suit): every concealed tile and every meld in the same suit."""
    suits = {i // 9 for i, c in enumerate(counts) if c} | {TILE_INDEX[m.tile] // 9 for m in melds}
    return len(suits) == 1


def _base_candidates(dec: Decomposition, counts: Sequence[int], rules: Rules, win_index: int | None,
                     melds: Sequence[Meld]) -> list[str]:
    """Base shapes one reading supports, in order of preference on equal fan."""
    if dec.kind == "standard":
        if len(melds) == 4 and rules.fan("dadiaoche"):
            # 大吊车 (house rule): four melds laid and the pair won alone; one value, 清 or not (P1).
            return ["daduizi", "dadiaoche"]
        return ["pinghu" if dec.has_run else "daduizi"]
    quads = [i for i, c in enumerate(counts) if c == 4]
    if rules.long_needs_win_tile:
        # P2/P3 variant: only the quad the winning tile completes makes 龙; unknown winning tile → none.
        quads = [i for i in quads if i == win_index]
    if not quads:
        return ["qidui"]
    if len(quads) == 1:
        return ["longqidui"]
    # 双龙七对: Guiyang tables give it the 龙七对 value; on a tie it is named 龙七对 (docs/rules.md#win-shapes).
    return ["longqidui", "shuanglong"]


def classify_win(tiles14: str | Iterable[str], melds: MeldsSpec, rules: RulesSpec,
                 win_tile: str | None = None) -> HandType | None:
    """牌型 (hand type) of a complete hand, or ``None`` when the tiles do not form a win.

    ``tiles14`` are the winner's concealed tiles *including* the winning tile (14 − 3 × melds tiles, a kong
    counting as 3); ``melds`` the laid melds; ``win_tile`` matters only for ``rules.long_needs_win_tile``
    (without it no quad counts as 龙 under that switch). The highest-fan reading is returned.
    ``ValueError`` on a wrong tile count, a fifth copy, or a winning tile not among ``tiles14``.
    """
    return _classify(_as_tiles(tiles14), parse_melds(melds), get_rules(rules), win_tile)


def _classify(names: Sequence[str], meld_list: Sequence[Meld], rules: Rules,
              win_tile: str | None = None) -> HandType | None:
    """:func:`classify_win` on values already parsed (checked tile names, melds, rules)."""
    counts = to_counts(names)
    check_hand(counts, meld_list, 14)
    win_index = None
    if win_tile is not None:
        win_index = tile_index(win_tile)
        if not counts[win_index]:
            raise ValueError(f"winning tile {win_tile} is not among the hand's tiles {to_mpsz(names)}")
    decs = decompositions(counts, meld_list)
    if not decs:
        return None
    qing = is_qing(counts, meld_list)
    scored = []  # (fan, -order, key, base, decomposition index)
    for d_index, dec in enumerate(decs):
        for base in _base_candidates(dec, counts, rules, win_index, meld_list):
            key = QING_OF[base] if qing and base in QING_OF else base
            scored.append((rules.fan(key), -len(scored), key, base, d_index))
    fan, _, key, base, best = max(scored)
    ordered = [decs[best]] + [d for i, d in enumerate(decs) if i != best]
    name_zh, name_en = HAND_TYPES[key]
    return HandType(key, name_zh, name_en, fan, qing, base, tuple(tuple(d.groups()) for d in ordered))


def best_wait_fan(concealed: str | Iterable[str], melds: MeldsSpec, rules: RulesSpec) -> tuple[int, str | None]:
    """Best type fan T over every wait of a waiting hand (13 counting melds as 3), and its key.

    Used by 黄牌查叫 (settling an exhaustive draw): no 自摸/杠上花/报听 modifiers, no 豆 gate.
    Returns ``(0, None)`` when the hand is not 叫牌 (ready).
    """
    rules = get_rules(rules)
    names, meld_list = _as_tiles(concealed), parse_melds(melds)
    best: tuple[int, str | None] = (0, None)
    for w in waits(names, meld_list):
        ht = _classify([*names, w], meld_list, rules, win_tile=w)
        if ht is not None and ht.fan > best[0]:
            best = (ht.fan, ht.key)
    return best


def win_allowed_on_discard(hand_type: HandType | str | None, melds: MeldsSpec, *, hot_discard: bool = False,
                           robbed_kong: bool = False, discarder_bao_ting: bool = False,
                           winner_bao_ting: bool = False) -> tuple[bool, str]:
    """胡牌通行证 (the 豆 gate, docs/rules.md#kong-gate): may this hand win on another player's tile (点炮/抢杠)?

    Self-draw is always allowed and is not asked here. Any one of: the winner owns a 豆 (kong) of any kind,
    the type is above 平胡, 热炮 (discarder's first discard after his kong), 抢杠 (robbing a kong), the
    discarder is 报听 (杀报), the winner is 报听. Returns (allowed, reason).
    """
    key = hand_type.key if isinstance(hand_type, HandType) else hand_type
    if key is None:
        return False, "not allowed: the tiles do not form a win (不成牌)"
    if key not in HAND_TYPES:
        raise ValueError(f"unknown hand type {key!r}; known: {', '.join(HAND_TYPES)}")
    return _gate(key, parse_melds(melds), hot_discard=hot_discard, robbed_kong=robbed_kong,
                 discarder_bao_ting=discarder_bao_ting, winner_bao_ting=winner_bao_ting)


def _gate(key: str, meld_list: Sequence[Meld], *, hot_discard: bool, robbed_kong: bool, discarder_bao_ting: bool,
          winner_bao_ting: bool) -> tuple[bool, str]:
    """:func:`win_allowed_on_discard` of a known type key and parsed melds."""
    name = f"{HAND_TYPES[key][0]} ({HAND_TYPES[key][1]})"
    if any(m.is_kong for m in meld_list):
        return True, "allowed: the winner owns a 豆 (kong)"
    if key != "pinghu":
        return True, f"allowed: {name} is above 平胡 (plain win)"
    if hot_discard:
        return True, "allowed: 热炮 (the discarder's first discard after his kong)"
    if robbed_kong:
        return True, "allowed: 抢杠 (robbing a kong)"
    if discarder_bao_ting:
        return True, "allowed: 杀报 (the discarder declared 报听, ready at the start)"
    if winner_bao_ting:
        return True, "allowed: the winner declared 报听 (ready at the start)"
    return False, ("not allowed: 平胡 (plain win) without a 豆 (kong) may not win on a discard; "
                   "it needs 自摸 (self-draw) — 胡牌通行证 (the kong gate)")


def win_value(hand_type: HandType, rules: RulesSpec, *, self_drawn: bool, kong_draw: bool = False,
              bao_ting: bool = False, first_draw: str | None = None) -> tuple[int, list[str]]:
    """Win value W (docs/rules.md#win-value) from the type fan T, with one explanation line per step.

    天胡/地胡 (house rule, ``first_draw`` = "tianhu" or "dihu"): max with or added to T per
    ``rules.tiandi_mode`` when its value is on; 自摸 bonus per ``rules.zimo_bonus`` (pinghu_only: 平胡自摸 = 2;
    none; all_plus1), 杠上花 (win on a kong replacement draw) + ``gangkai_bonus``, 报听 winner (declared
    ready) max/add/replace with Q. A 抢杠 win counts as 自摸 here: pass ``self_drawn=True``.
    """
    if kong_draw and not self_drawn:
        raise ValueError("杠上花 (kong_draw) is a self-drawn win: it needs self_drawn")
    return _value(hand_type, get_rules(rules), self_drawn=self_drawn, kong_draw=kong_draw, bao_ting=bao_ting,
                  first_draw=first_draw)


def _value(hand_type: HandType, rules: Rules, *, self_drawn: bool, kong_draw: bool, bao_ting: bool,
           first_draw: str | None = None) -> tuple[int, list[str]]:
    """:func:`win_value` under parsed rules."""
    if rules.settlement == "dushan":
        return dushan_value(hand_type, rules, self_drawn=self_drawn, kong_draw=kong_draw, bao_ting=bao_ting)
    w = hand_type.fan
    lines = [f"{hand_type.label()}: {w} fan"]
    if first_draw is not None:
        w, line = _first_draw(rules, first_draw, w)
        lines.append(line)
    if self_drawn:
        w, line = _zimo_bonus(hand_type, rules, w)
        lines.append(line)
    if rules.qingyise_bonus and hand_type.qing:
        w += rules.qingyise_bonus
        lines.append(f"清一色奖励 (one-suit bonus): +{rules.qingyise_bonus} → {w}")
    if rules.tongsan:
        w += TONGSAN
        lines.append(f"通三 (three on every win): +{TONGSAN} → {w}")
    if kong_draw:
        w += rules.gangkai_bonus
        lines.append(f"杠上花 (win on a kong replacement draw): +{rules.gangkai_bonus} → {w}")
    if bao_ting:
        w, line = _bao_ting(rules, w)
        lines.append(line)
    lines.append(f"win value W = {w} fan")
    return w, lines


def dushan_type_fan(hand_type: HandType, rules: Rules) -> int:
    """独山 hand-type fan, types adding up: the table row, and 清一色 on top of 单吊 (which has no 清 row)."""
    if hand_type.key == "dadiaoche" and hand_type.qing:
        return hand_type.fan + rules.fan("qingyise")
    return hand_type.fan


def dushan_value(hand_type: HandType, rules: Rules, *, self_drawn: bool, kong_draw: bool, bao_ting: bool,
                 hot_discard: bool = False) -> tuple[int, list[str]]:
    """独山 win value (docs/rules.md#dushan): how it was won (自摸 3, 杠上开花, 点炮 3, 热炮) + the hand types
    + 报叫; each payer pays it whole (every other player on a self-draw, the discarder otherwise)."""
    t = dushan_type_fan(hand_type, rules)
    qing = " + 清一色 (one suit)" if t != hand_type.fan else ""
    if kong_draw:
        how, value = "杠上开花 (self-drawn on a kong replacement)", rules.dushan_gangkai
    elif self_drawn:
        how, value = "自摸 (self-drawn)", DUSHAN_WIN
    elif hot_discard:
        how, value = "热炮 (the discarder's first discard after his kong)", rules.dushan_repao
    else:
        how, value = "点炮 (on a discard)", DUSHAN_WIN
    w = t + value
    lines = [f"{hand_type.label()}{qing}: {t}", f"{how}: +{value} → {w}"]
    if bao_ting:
        w += rules.dushan_baojiao
        lines.append(f"报叫 (declared ready): +{rules.dushan_baojiao} → {w}")
    lines.append(f"win value = {w}")
    return w, lines


def _zimo_bonus(hand_type: HandType, rules: Rules, w: int) -> tuple[int, str]:
    """自摸 (self-draw) bonus: only 平胡 gets +1 by default (平胡自摸 = 2); LPS gives none; the regional
    variants +1, +2 or double on every self-drawn win."""
    if rules.zimo_bonus == "double":
        return 2 * w, f"自摸翻倍 (self-drawn, doubled): ×2 → {2 * w}"
    if rules.zimo_bonus == "all_plus2":
        return w + 2, f"自摸 (self-drawn): +2 → {w + 2}"
    if rules.zimo_bonus == "all_plus1" or (rules.zimo_bonus == "pinghu_only" and hand_type.key == "pinghu"):
        return w + 1, f"自摸 (self-drawn): +1 → {w + 1}"
    if rules.zimo_bonus == "pinghu_only":
        return w, "自摸 (self-drawn): no bonus above 平胡 (plain win)"
    return w, "自摸 (self-drawn): no bonus under these rules"


_FIRST_DRAW = {"tianhu": "天胡 (heavenly win: the dealer's dealt 14 tiles)",
               "dihu": "地胡 (earthly win: self-drawn on a non-dealer's first draw)"}


def _first_draw(rules: Rules, kind: str, w: int) -> tuple[int, str]:
    """天胡/地胡 (house rules, docs/rules.md#tianhu): off when its value is 0."""
    value = rules.tianhu if kind == "tianhu" else rules.dihu
    name = _FIRST_DRAW[kind]
    if not value:
        return w, f"{name}: not played under these rules (0)"
    if rules.tiandi_mode == "add":
        return w + value, f"{name}: +{value} → {w + value}"
    return max(w, value), f"{name}: max({w}, {value}) → {max(w, value)}"


def _bao_ting(rules: Rules, w: int) -> tuple[int, str]:
    """报听 winner: Guiyang W = max(W, Q), Liupanshui W + Q, or Q flat (``baoting_win``)."""
    q = rules.baoting_q
    if rules.baoting_win == "add":
        return w + q, f"报听 (declared ready) winner: +{q} → {w + q}"
    if rules.baoting_win == "replace":
        return q, f"报听 (declared ready) winner: counts as {q}"
    return max(w, q), f"报听 (declared ready) winner: max({w}, {q}) → {max(w, q)}"


# ------------------------------------------------------------------------------------------ public API


def _context(context: Mapping[str, Any]) -> dict[str, bool]:
    unknown = sorted(set(context) - set(CONTEXT_KEYS))
    if unknown:
        raise ValueError(f"unknown context key(s) {', '.join(unknown)}; known: {', '.join(CONTEXT_KEYS)}")
    for k, v in context.items():
        if not isinstance(v, bool):
            raise ValueError(f"context key {k!r} takes true or false, not {v!r}")
    return {k: bool(context.get(k, False)) for k in CONTEXT_KEYS}


def _check_hand_context(melds: Sequence[Meld], ctx: Mapping[str, bool]) -> None:
    """Reject flags the melds make impossible (the same refusals as ``scoring.settle``)."""
    if ctx["kong_draw"] and not any(m.is_kong for m in melds):
        raise ValueError("杠上花 (kong_draw, win on a kong replacement draw) needs a kong among the melds")
    if ctx["bao_ting"] and melds:
        # S4: after 报听 "不能換牌 … 也不能碰、槓牌" — no pong and no kong of any kind, a concealed kong
        # included (declaring it draws a replacement and changes the locked hand).
        raise ValueError("报听 (bao_ting, declared ready at the start) locks the hand: no 碰/杠 (pong/kong), "
                         "so a 报听 hand has no melds")


def _check_win_context(self_drawn: bool, ctx: Mapping[str, bool]) -> None:
    """Reject flag combinations that cannot happen at a table."""
    if ctx["kong_draw"] and not self_drawn:
        raise ValueError("kong_draw (杠上花) is a self-drawn win: set self_drawn too")
    if self_drawn and ctx["hot_discard"]:
        raise ValueError("hot_discard (热炮) is a win on a discard: it cannot be self-drawn")
    if self_drawn and ctx["robbed_kong"]:
        raise ValueError("robbed_kong (抢杠) is a win on another player's kong tile: leave self_drawn unset "
                         "(it is scored as 自摸 anyway)")
    if ctx["hot_discard"] and ctx["robbed_kong"]:
        raise ValueError("a win is either on a discard (热炮) or on a robbed kong (抢杠), not both")


def analyze_hand(concealed: str | Iterable[str], win_tile: str | None = None, melds: MeldsSpec = (),
                 self_drawn: bool = False, rules: RulesSpec = "gy-normal",
                 **context: bool) -> WinAnalysis | WaitAnalysis:
    """Analyse one player's hand.

    With ``win_tile`` (``concealed`` excludes it): a :class:`WinAnalysis`, the hand type, win value W, every
    reading and whether the win may be taken on a discard. Without it: a :class:`WaitAnalysis`, whether the hand
    is 叫牌 (ready) and, per wait, its type and values. Context flags: ``kong_draw`` (杠上花), ``hot_discard``
    (热炮), ``robbed_kong`` (抢杠), ``bao_ting`` (the player declared 报听), ``discarder_bao_ting``.
    ``ValueError`` on malformed input or flags that cannot happen (杠上花 without a kong, 报听 with melds, a
    non-boolean flag); ``TypeError`` when ``concealed`` or ``melds`` is not tiles / a list at all. A hand that
    simply is not a win is reported with ``win`` false.
    """
    ctx = _context(context)
    if not isinstance(self_drawn, bool):
        raise ValueError(f"self_drawn (自摸) takes true or false, not {self_drawn!r}")
    rules_obj = get_rules(rules)
    meld_list = parse_melds(melds)
    names = _as_tiles(concealed)
    if win_tile is None:
        if len(names) + 3 * len(meld_list) == 14:
            raise ValueError("14 tiles given without a winning tile: pass the winning tile separately "
                             "(win_tile / --win) and leave it out of the concealed tiles")
        _check_hand_context(meld_list, ctx)
        return _analyze_waiting(names, meld_list, rules_obj, ctx)
    tile_index(win_tile)
    _check_win_context(self_drawn, ctx)
    _check_hand_context(meld_list, ctx)
    return _analyze_win(names, win_tile, meld_list, self_drawn, rules_obj, ctx)


def _hand_text(names: Sequence[str], melds: Sequence[Meld]) -> str:
    laid = " ".join(f"[{m.type}:{m.tile}]" for m in melds)
    return f"{to_mpsz(names)} {laid}".strip()


def _analyze_win(names: list[str], win_tile: str, melds: list[Meld], self_drawn: bool, rules: Rules,
                 ctx: Mapping[str, bool]) -> WinAnalysis:
    how = "自摸 (self-drawn)" if self_drawn else "抢杠 (robbing a kong)" if ctx["robbed_kong"] else "点炮 (on a discard)"
    ht = _classify([*names, win_tile], melds, rules, win_tile=win_tile)
    explanation = [f"hand: {_hand_text(names, melds)} + {win_tile}, {how}"]
    if ht is None:
        before = waits(names, melds)
        reason = f"{win_tile} does not complete this hand (不成牌: no 4 sets + pair, no 七对)"
        explanation.append(reason)
        explanation.append("the hand waits on " + ", ".join(before) if before else "the hand is not 叫牌 (ready)")
        return WinAnalysis(to_mpsz(names), win_tile, tuple(melds), self_drawn, rules.preset, None, 0, False,
                           "not a win", tuple(explanation), reason)
    w, value_lines = _value(ht, rules, self_drawn=self_drawn or ctx["robbed_kong"], kong_draw=ctx["kong_draw"],
                            bao_ting=ctx["bao_ting"])
    allowed, why = _gate(ht.key, melds, hot_discard=ctx["hot_discard"], robbed_kong=ctx["robbed_kong"],
                         discarder_bao_ting=ctx["discarder_bao_ting"], winner_bao_ting=ctx["bao_ting"])
    explanation.append("reading: " + " ".join(ht.decompositions[0]))
    explanation += value_lines
    if self_drawn:
        explanation.append("自摸 (self-draw) is always allowed; on a discard: " + why)
    else:
        explanation.append(f"win on another player's tile: {why}")
    return WinAnalysis(to_mpsz(names), win_tile, tuple(melds), self_drawn, rules.preset, ht, w, allowed, why,
                       tuple(explanation))


def _analyze_waiting(names: list[str], melds: list[Meld], rules: Rules, ctx: Mapping[str, bool]) -> WaitAnalysis:
    tiles = waits(names, melds)
    explanation = [f"hand: {_hand_text(names, melds)}"]
    entries = []
    for w in tiles:
        ht = _classify([*names, w], melds, rules, win_tile=w)
        assert ht is not None  # every wait completes the hand
        value, _ = _value(ht, rules, self_drawn=True, kong_draw=ctx["kong_draw"], bao_ting=ctx["bao_ting"])
        allowed, _ = _gate(ht.key, melds, hot_discard=ctx["hot_discard"], robbed_kong=ctx["robbed_kong"],
                           discarder_bao_ting=ctx["discarder_bao_ting"], winner_bao_ting=ctx["bao_ting"])
        entries.append(WaitValue(w, ht, value, allowed))
        explanation.append(f"{w}: {ht.label()} {ht.fan} fan; 自摸 (self-drawn) W = {value}; "
                           f"on a discard {'allowed' if allowed else 'not allowed (no 豆)'}")
    result = WaitAnalysis(to_mpsz(names), tuple(melds), rules.preset, tuple(entries), ())
    best = result.best
    if best is None:
        explanation.append("not 叫牌 (not ready): no tile completes this hand")
    else:
        explanation.insert(1, "叫牌 (ready), waits: " + " ".join(tiles))
        explanation.append(f"best type: {best.hand_type.name_zh} {best.hand_type.fan} fan (used by 黄牌查叫)")
    return dataclasses.replace(result, explanation=tuple(explanation))
