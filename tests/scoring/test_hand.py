"""Hand types, the 豆 gate, the win value W and analyze_hand (scoring/hand.py), docs/rules.md#win-shapes to #kong-gate, #examples."""

from __future__ import annotations

import pytest

from scoring import analyze_hand
from scoring.hand import best_wait_fan, classify_win, win_allowed_on_discard, win_value
from scoring.melds import Meld
from scoring.results import WaitAnalysis, WinAnalysis
from scoring.rules import get_rules
from scoring.tiles import parse_tiles

PRESETS = ("gy-normal", "gy-reduced", "liupanshui")

# (concealed without the winning tile, winning tile, melds) → base shape, one hand per table row.
TYPE_HANDS = {
    "pinghu": ("123m456p234789s5p", "5p", []),
    "daduizi": ("111999m222p333s5p", "5p", []),
    "qidui": ("1133m2255p6688s9s", "9s", []),
    "longqidui": ("1111m2255p6688s9s", "9s", []),
    "shuanglong": ("1111m5555p6688s9s", "9s", []),
    "qingyise": ("1112345678999m", "5m", []),
    "qingdadui": ("111333555777m9m", "9m", []),
    "qingqidui": ("1133557799m224m", "4m", []),
    "qinglongbei": ("1111335577992m", "2m", []),
    "qingshuanglong": ("1111333355779m", "9m", []),
}

# docs/rules.md#hand-types: (key reported, fan) per preset. In Guiyang 双龙七对 scores (and is named) as 龙七对.
EXPECTED = {
    "gy-normal": {"pinghu": ("pinghu", 1), "daduizi": ("daduizi", 5), "qidui": ("qidui", 7),
                  "longqidui": ("longqidui", 10), "shuanglong": ("longqidui", 10), "qingyise": ("qingyise", 10),
                  "qingdadui": ("qingdadui", 15), "qingqidui": ("qingqidui", 17),
                  "qinglongbei": ("qinglongbei", 20), "qingshuanglong": ("qinglongbei", 20)},
    "gy-reduced": {"pinghu": ("pinghu", 1), "daduizi": ("daduizi", 3), "qidui": ("qidui", 4),
                   "longqidui": ("longqidui", 5), "shuanglong": ("longqidui", 5), "qingyise": ("qingyise", 5),
                   "qingdadui": ("qingdadui", 8), "qingqidui": ("qingqidui", 9),
                   "qinglongbei": ("qinglongbei", 10), "qingshuanglong": ("qinglongbei", 10)},
    "liupanshui": {"pinghu": ("pinghu", 1), "daduizi": ("daduizi", 5), "qidui": ("qidui", 7),
                   "longqidui": ("longqidui", 10), "shuanglong": ("shuanglong", 20),
                   "qingyise": ("qingyise", 10), "qingdadui": ("qingdadui", 15), "qingqidui": ("qingqidui", 17),
                   "qinglongbei": ("qinglongbei", 20), "qingshuanglong": ("qingshuanglong", 30)},
}


def classify(concealed: str, win: str, melds=(), rules="gy-normal"):
    return classify_win([*parse_tiles(concealed), win], melds, rules, win_tile=win)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("row", list(TYPE_HANDS))
def test_every_type_and_preset_fan(row, preset):
    concealed, win, melds = TYPE_HANDS[row]
    ht = classify(concealed, win, melds, preset)
    assert ht is not None
    assert (ht.key, ht.fan) == EXPECTED[preset][row]
    assert ht.qing == row.startswith("qing")


def test_type_names():
    ht = classify(*TYPE_HANDS["daduizi"])
    assert (ht.name_zh, ht.name_en, ht.base) == ("大对子", "all triplets", "daduizi")
    assert ht.decompositions == (("111m", "999m", "222p", "333s", "55p"),)


def test_not_a_win_returns_none():
    assert classify("123m456p789s1357s", "9s") is None


def test_highest_fan_reading_wins():
    # 111222333m reads as three triplets (大对子 5) or three runs (平胡 1).
    ht = classify("111222333m555p7p", "7p")
    assert (ht.key, ht.fan) == ("daduizi", 5)
    assert ht.decompositions[0] == ("111m", "222m", "333m", "555p", "77p")
    assert len(ht.decompositions) == 2
    # One suit: 清大对 15 beats 清一色 10.
    assert classify("111222333555m7m", "7m").key == "qingdadui"
    # 11223344556677m: runs (清一色 10) or seven pairs (清七对 17).
    ht = classify("1122334455667m", "7m")
    assert (ht.key, ht.fan) == ("qingqidui", 17)
    assert ht.decompositions[0] == ("11m", "22m", "33m", "44m", "55m", "66m", "77m")


def test_qing_counts_melds():
    assert classify("123456789m1m", "1m", [Meld("pong", "5m")]).key == "qingyise"
    assert classify("123456789m1m", "1m", [Meld("pong", "5p")]).key == "pinghu"
    # A meld of the same suit keeps 大对子 清 (E7, docs/rules.md#examples); one of another suit does not.
    assert classify("444666999p1p", "1p", [Meld("pong", "2p")], "gy-reduced").fan == 8
    assert classify("444666999p1p", "1p", [Meld("concealed_kong", "2s")]).key == "daduizi"


def test_melds_count_as_triplets_for_daduizi():
    ht = classify("222999m3p555s", "3p", [Meld("pong", "7p", 0)])  # E2 (docs/rules.md#examples)
    assert (ht.key, ht.fan) == ("daduizi", 5)
    assert ht.decompositions[0][-1] == "[777p]"


def test_seven_pairs_quad_is_two_pairs():
    ht = classify("1111m2255p6688s9s", "9s")
    assert ht.decompositions == (("11m", "11m", "22p", "55p", "66s", "88s", "99s"),)


def test_long_needs_win_tile_switch():
    strict = get_rules({"preset": "gy-normal", "long_needs_win_tile": True})
    # The quad was already in hand: plain 七对 under the switch, 龙七对 by default.
    assert classify("1111m2255p6688s9s", "9s").key == "longqidui"
    assert classify("1111m2255p6688s9s", "9s", rules=strict).key == "qidui"
    # The winning tile completes the quad: 龙七对 either way.
    assert classify("111m2255p6688s99s", "1m", rules=strict).key == "longqidui"
    # Without the winning tile nothing can be shown to complete a quad.
    tiles = parse_tiles("1111m2255p6688s99s")
    assert classify_win(tiles, [], strict).key == "qidui"
    # Two quads, only one completed by the winning tile: 龙七对 (LPS 10), not 双龙七对.
    lps_strict = get_rules({"preset": "liupanshui", "long_needs_win_tile": True})
    assert classify("111m5555p6688s99s", "1m", rules=lps_strict).key == "longqidui"


def test_classify_validates():
    with pytest.raises(ValueError, match="needs 14 tiles"):
        classify_win(parse_tiles("1112345678999m"), [], "gy-normal")
    with pytest.raises(ValueError, match="winning tile 5p is not among"):
        classify_win(parse_tiles("11123456789999m"), [], "gy-normal", win_tile="5p")
    with pytest.raises(ValueError, match="more than 4 copies of 5m"):
        classify_win(parse_tiles("55m1234567p11s"), [Meld("pong", "5m")], "gy-normal")
    with pytest.raises(ValueError, match="unknown rules preset"):
        classify_win(parse_tiles("11123456789999m"), [], "tokyo")


# ------------------------------------------------------------------------------------- docs/rules.md#kong-gate the 豆 gate

def test_gate():
    pinghu = classify(*TYPE_HANDS["pinghu"])
    daduizi = classify(*TYPE_HANDS["daduizi"])
    ok, why = win_allowed_on_discard(pinghu, [])
    assert not ok and "胡牌通行证" in why
    assert not win_allowed_on_discard(pinghu, [Meld("pong", "5m")])[0]  # a pong is not a 豆
    for kind in ("kong", "added_kong", "concealed_kong"):
        assert win_allowed_on_discard(pinghu, [Meld(kind, "5m")]) == (True, "allowed: the winner owns a 豆 (kong)")
    assert win_allowed_on_discard(daduizi, [])[0]
    assert "热炮" in win_allowed_on_discard(pinghu, [], hot_discard=True)[1]
    assert "抢杠" in win_allowed_on_discard(pinghu, [], robbed_kong=True)[1]
    assert "杀报" in win_allowed_on_discard(pinghu, [], discarder_bao_ting=True)[1]
    assert "winner declared 报听" in win_allowed_on_discard(pinghu, [], winner_bao_ting=True)[1]
    assert win_allowed_on_discard("qingyise", [])[0]  # a key works as well as a HandType
    assert win_allowed_on_discard(None, [])[0] is False
    with pytest.raises(ValueError, match="unknown hand type"):
        win_allowed_on_discard("tenhou", [])


# ------------------------------------------------------------------------------------- docs/rules.md#win-value value W

def test_win_value_zimo_bonus():
    pinghu = classify(*TYPE_HANDS["pinghu"])
    daduizi = classify(*TYPE_HANDS["daduizi"])
    assert win_value(pinghu, "gy-normal", self_drawn=True)[0] == 2  # 平胡自摸 = 2
    assert win_value(pinghu, "gy-normal", self_drawn=False)[0] == 1
    assert win_value(daduizi, "gy-normal", self_drawn=True)[0] == 5  # big hands: no bonus
    assert win_value(pinghu, "liupanshui", self_drawn=True)[0] == 1  # LPS: none
    plus1 = {"preset": "gy-normal", "zimo_bonus": "all_plus1"}
    assert win_value(daduizi, plus1, self_drawn=True)[0] == 6


def test_win_value_kong_draw_and_bao_ting():
    pinghu = classify(*TYPE_HANDS["pinghu"])
    qingqidui = classify(*TYPE_HANDS["qingqidui"])
    w, lines = win_value(pinghu, "gy-normal", self_drawn=True, kong_draw=True)
    assert w == 3 and any("杠上花" in line for line in lines) and lines[-1] == "win value W = 3 fan"
    assert win_value(pinghu, "gy-normal", self_drawn=False, bao_ting=True)[0] == 10  # max(1, 10)
    assert win_value(qingqidui, "gy-normal", self_drawn=False, bao_ting=True)[0] == 17  # max(17, 10)
    assert win_value(pinghu, "gy-reduced", self_drawn=False, bao_ting=True)[0] == 5  # Q = 5
    assert win_value(pinghu, "liupanshui", self_drawn=False, bao_ting=True)[0] == 11  # W + Q
    replace = {"preset": "gy-normal", "baoting_win": "replace"}
    assert win_value(qingqidui, replace, self_drawn=False, bao_ting=True)[0] == 10
    with pytest.raises(ValueError, match="self-drawn"):
        win_value(pinghu, "gy-normal", self_drawn=False, kong_draw=True)


# ---------------------------------------------------------------------------------- best_wait_fan

def test_best_wait_fan():
    assert best_wait_fan("1234567892256p", [], "gy-normal") == (10, "qingyise")  # E10 P0: 4p/7p
    assert best_wait_fan(parse_tiles("2333467m888p567s"), [], "gy-normal") == (1, "pinghu")  # E10 P2
    assert best_wait_fan("123m456p789s1357s", [], "gy-normal") == (0, None)
    # 1122334455667m: 1m/4m → 清一色 10, 7m → 清七对 17 (also a run reading).
    assert best_wait_fan("1122334455667m", [], "gy-reduced") == (9, "qingqidui")
    # Melds count: E12 P2 waits 1s for 1s1s 123m 999m + [P:4p] + [AK:9s] → 平胡.
    melds = [Meld("pong", "4p"), Meld("concealed_kong", "9s")]
    assert best_wait_fan("123999m1s", melds, "liupanshui") == (1, "pinghu")


# ------------------------------------------------------------------------- docs/rules.md#examples winners

WINNERS = [
    # example, concealed, win, melds, self_drawn, context, preset, key, W, discard allowed
    ("E1", "789m2345p123456s", "5p", [], True, {}, "gy-normal", "pinghu", 2, False),
    ("E2", "222999m3p555s", "3p", [Meld("pong", "7p", 0)], False, {}, "gy-normal", "daduizi", 5, True),
    ("E3", "123456p2278s", "9s", [Meld("concealed_kong", "6m")], True, {"kong_draw": True}, "gy-normal",
     "pinghu", 3, True),
    ("E4", "12389m22p456789s", "7m", [], False, {"hot_discard": True}, "gy-normal", "pinghu", 1, True),
    ("E5", "111m99m234789p45s", "6s", [], False, {"robbed_kong": True}, "gy-normal", "pinghu", 2, True),
    ("E6", "7788m335555p119s", "9s", [], True, {}, "gy-normal", "longqidui", 10, True),
    ("E7", "1444666999p", "1p", [Meld("pong", "2p", 3)], True, {}, "gy-reduced", "qingdadui", 8, True),
    ("E8", "34m56799p345789s", "2m", [], False, {"discarder_bao_ting": True}, "gy-normal", "pinghu", 1, True),
    ("E8 自摸", "34m56799p345789s", "2m", [], True, {}, "gy-normal", "pinghu", 2, False),
    ("E9 P1", "333m55666p11199s", "5p", [], False, {}, "gy-normal", "daduizi", 5, True),
    ("E9 P3", "77m34p234678s", "5p", [Meld("kong", "8m", 2)], False, {}, "gy-normal", "pinghu", 1, True),
    ("E11", "22229m5555p3377s", "9m", [], True, {}, "liupanshui", "shuanglong", 20, True),
    ("E11 GY", "22229m5555p3377s", "9m", [], True, {}, "gy-normal", "longqidui", 10, True),
    ("E12", "567m44m23p111888s", "4p", [], False, {"robbed_kong": True}, "liupanshui", "pinghu", 1, True),
    ("E12 GY", "567m44m23p111888s", "4p", [], False, {"robbed_kong": True}, "gy-normal", "pinghu", 2, True),
]


@pytest.mark.parametrize(("ex", "concealed", "win", "melds", "self_drawn", "ctx", "preset", "key", "w", "gate"),
                         WINNERS, ids=[w[0] for w in WINNERS])
def test_rules_examples_winners(ex, concealed, win, melds, self_drawn, ctx, preset, key, w, gate):
    r = analyze_hand(concealed, win, melds, self_drawn, preset, **ctx)
    assert isinstance(r, WinAnalysis) and r.win is True
    assert r.hand_type is not None and r.hand_type.key == key
    assert r.win_value == w
    assert r.discard_win_allowed is gate
    assert r.allowed is (self_drawn or gate)


# ------------------------------------------------------------------------------------ analyze_hand

def test_analyze_win_output():
    r = analyze_hand("111222333m555p7p", "7p", self_drawn=True)
    assert isinstance(r, WinAnalysis) and r.hand_type is not None
    assert (r.hand_type.key, r.hand_type.name_zh, r.hand_type.fan) == ("daduizi", "大对子", 5)
    assert r.hand_type.decompositions[0] == ("111m", "222m", "333m", "555p", "77p")
    assert "大对子 (all triplets): 5 fan" in r.explanation
    assert r.explanation[-2] == "win value W = 5 fan"
    assert r.concealed == "111222333m5557p" and r.melds == ()
    # the JSON form (what `zhuoji hand --json` prints)
    d = r.to_dict()
    assert d["hand_type"] == {"key": "daduizi", "name_zh": "大对子", "name_en": "all triplets", "fan": 5}
    assert d["decompositions"][0] == ["111m", "222m", "333m", "555p", "77p"]
    assert list(d) == ["concealed", "win_tile", "melds", "self_drawn", "rules", "win", "hand_type", "win_value",
                       "decompositions", "discard_win_allowed", "discard_win_reason", "allowed", "explanation"]
    assert d["win"] is True and d["allowed"] is True and d["melds"] == []


def test_analyze_not_a_win_says_so():
    r = analyze_hand("1234567892256p", "9p", self_drawn=True)
    assert isinstance(r, WinAnalysis)
    assert r.win is False and r.hand_type is None and r.win_value == 0
    assert r.reason is not None and "9p does not complete this hand" in r.reason
    assert "the hand waits on 4p, 7p" in r.explanation
    d = r.to_dict()
    assert d["win"] is False and d["hand_type"] is None and d["decompositions"] == [] and "allowed" not in d
    assert d["discard_win_reason"] == "not a win" and d["reason"] == r.reason


def test_analyze_waits():
    r = analyze_hand("1122334455667m", rules="gy-normal")
    assert isinstance(r, WaitAnalysis) and r.best is not None
    assert r.ready is True and r.best.hand_type.fan == 17 and r.best.hand_type.key == "qingqidui"
    assert [(w.tile, w.hand_type.key, w.hand_type.fan, w.self_drawn_value) for w in r.waits] == [
        ("1m", "qingyise", 10, 10), ("4m", "qingyise", 10, 10), ("7m", "qingqidui", 17, 17)]
    d = r.to_dict()
    assert d["best_fan"] == 17 and d["best_hand_type"] == "qingqidui" and d["ready"] is True
    assert d["waits"][2] == {"tile": "7m", "hand_type": "qingqidui", "name_zh": "清七对", "fan": 17,
                             "self_drawn_value": 17, "discard_win_allowed": True}
    r = analyze_hand("789m2345p123456s", melds=[])
    assert [(w.tile, w.hand_type.key, w.self_drawn_value, w.discard_win_allowed) for w in r.waits] == [
        ("2p", "pinghu", 2, False), ("5p", "pinghu", 2, False)]
    r = analyze_hand("789m2345p123456s", hot_discard=True)
    assert all(w.discard_win_allowed for w in r.waits)
    r = analyze_hand("123m456p789s1357s")
    assert isinstance(r, WaitAnalysis)
    assert r.ready is False and r.waits == () and r.best is None
    assert r.to_dict()["best_fan"] == 0 and r.to_dict()["best_hand_type"] is None
    assert r.explanation[-1].startswith("not 叫牌")


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"concealed": "789m2345p123456s", "win_tile": "5p", "dealer": True}, "unknown context key"),
    ({"concealed": "789m2345p123456s", "win_tile": "5p", "bao_ting": "yes"}, "true or false"),
    ({"concealed": "789m2345p123456s", "win_tile": "5p", "kong_draw": True}, "self-drawn"),
    ({"concealed": "789m2345p123456s", "win_tile": "5p", "self_drawn": True, "hot_discard": True}, "热炮"),
    ({"concealed": "789m2345p123456s", "win_tile": "5p", "self_drawn": True, "robbed_kong": True}, "抢杠"),
    ({"concealed": "789m2345p123456s", "win_tile": "5z"}, "not a tile"),
    ({"concealed": "789m2345p123456s5p"}, "winning tile separately"),
    ({"concealed": "789m2345p123456s", "win_tile": "5p", "rules": "osaka"}, "unknown rules preset"),
    ({"concealed": "789m2345p123456s", "win_tile": "5p", "melds": [{"type": "chi", "tile": "1m"}]}, "meld type"),
])
def test_analyze_rejects_bad_input(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        analyze_hand(**kwargs)
