"""Regional variant switches (docs/rules.md, issue 54), each off in every preset.

Every expected payment is derived by hand beside the test from the tiles of the table (docs/rules.md#example-tiles hands of
the worked examples, docs/rules.md#examples), with a control where the switch is off. Notation: V_p = the
chickens a 叫牌 player p collects from each other player; "hand" = the win value W each payer owes.
"""

from __future__ import annotations

import pytest

from scoring import settle
from scoring.rules import PRESETS, get_rules
from scoring.scorebook import add_round, new_scorebook, replay
from tests.scoring.settle_tables import EXAMPLES, column, example, seat

VARIANTS_ON = {"shangxia_ji": True, "ben_ji": True, "ben_ji_gold": "flip_only", "xingqi_ji": "sunday7",
               "chuifeng_ji": "chickens", "mantang_all": "double", "tongsan": True, "qingyise_bonus": 3,
               "heavy_chickens": True, "shabao_pinghu": True, "yin_ji": True, "yiwai_ji": True,
               "zhan_ji": "double", "qianhou_ji": "all", "lianzhuang": True}
VARIANTS_OFF = {"shangxia_ji": False, "ben_ji": False, "ben_ji_gold": "either", "xingqi_ji": None,
                "chuifeng_ji": None, "mantang_all": None, "tongsan": False, "qingyise_bonus": 0,
                "heavy_chickens": False, "shabao_pinghu": False, "yin_ji": False, "yiwai_ji": False,
                "zhan_ji": None, "qianhou_ji": None, "lianzhuang": False}


def with_rules(state: dict, **overrides) -> dict:
    base = state["rules"] if isinstance(state["rules"], str) else state["rules"]["preset"]
    return {**state, "rules": {"preset": base, **overrides}}


def totals(state: dict) -> list[int]:
    return column(settle(state), "total")


def test_every_variant_is_off_in_every_preset():
    for rules in PRESETS.values():
        assert {k: getattr(rules, k) for k in VARIANTS_OFF} == VARIANTS_OFF


def test_variants_spelled_out_off_change_no_worked_example():
    for name, state in EXAMPLES.items():
        assert settle(with_rules(state, **VARIANTS_OFF)) == settle(state), name


def test_every_variant_value_is_accepted_and_bad_values_refused():
    rules = get_rules({"preset": "gy-normal", **VARIANTS_ON})
    assert {k: getattr(rules, k) for k in VARIANTS_ON} == VARIANTS_ON
    for key, bad in (("xingqi_ji", "sunday"), ("shangxia_ji", 1), ("mantang_all", True), ("zimo_bonus", "triple"),
                     ("qingyise_bonus", -1), ("qianhou_ji", "some")):
        with pytest.raises(ValueError, match=key):
            get_rules({key: bad})


# E1 (docs/rules.md#examples): P1 wins 自摸 平胡 (W 2: each pays 2). P0 叫牌 holds 5m 6m 2s 3s3s 4s4s 5s5s 6s 7s 8s8s;
# P1 holds 1s..6s 2p3p4p 7m8m9m 5p + 5p; P2 not 叫牌 with the 冲锋鸡 1s in his river (包鸡 2 to P0 and P1);
# P3 not 叫牌 (his 1s×2 ignored). F=4m → 5m: V0 = 1, V1 = 1 (1s) → P0 +2, P1 +10, P2 −8, P3 −4.

def test_shangxia_ji_both_neighbours_of_the_flip():
    # F=5s: 翻鸡 6s, and 上下鸡 adds 4s. P0: 4s×2 + 6s = 3; P1: 1s + 4s + 6s = 3.
    # P0 = −2 hand + 3×3 − 3 (to P1) + 2 包鸡 = +6; P1 = +6 + 9 − 3 + 2 = +14;
    # P2 = −2 − 3 − 3 − 4 = −12; P3 = −2 − 3 − 3 = −8.
    state = example("E1", flipped="5s")
    assert totals(with_rules(state, shangxia_ji=True)) == [6, 14, -12, -8]
    # Control, switch off: only 6s. V0 = 1, V1 = 2 (1s, 6s): P0 −2+3−2+2, P1 6+6−1+2, P2 −2−1−2−4, P3 −2−1−2.
    assert totals(state) == [1, 13, -9, -5]


def test_shangxia_ji_with_gold_from_a_flipped_2s():
    # F=2s: 3s and 1s are chickens, so 1s is 金 (2 each) and the 冲锋鸡 in P2's river is 4.
    # V0 = 3s×2 = 2; V1 = 1s 金 2 + 3s 1 = 3; 包鸡 4 to P0 and P1.
    # P0 = −2 + 2×3 − 3 + 4 = +5; P1 = +6 + 9 − 2 + 4 = +17; P2 = −2 − 2 − 3 − 8 = −15; P3 = −2 − 2 − 3 = −7.
    state = example("E1", flipped="2s")
    assert totals(with_rules(state, shangxia_ji=True)) == [5, 17, -15, -7]
    # Off: 3s only, no 金. V0 = 2, V1 = 2, 包鸡 2: P0 −2+6−2+2, P1 6+6−2+2, P2 −2−2−2−4, P3 −2−2−2.
    assert totals(state) == [4, 12, -10, -6]


def test_ben_ji_the_flipped_tile_itself():
    # F=5m: 5m and 6m are chickens. V0 = 5m + 6m = 2 (1 without); V1 = 1s = 1.
    # P0 = −2 + 6 − 1 + 2 = +5; P1 = +6 + 3 − 2 + 2 = +9; P2 = −2 − 2 − 1 − 4 = −9; P3 = −2 − 2 − 1 = −5.
    state = example("E1", flipped="5m")
    assert totals(with_rules(state, ben_ji=True)) == [5, 9, -9, -5]
    assert totals(state) == [2, 10, -8, -4]  # off: as E1 (6m only, V0 = 1)


def test_ben_ji_gold_either_or_flip_only():
    # E6: P2 wins 龙七对 自摸 (10 from each) holding 1s×2 and 9s + 9s, 冲锋鸡 1s in his river; F=9s.
    # either: 1s 金 (F+1 = 1s): 1s×2 = 4, 9s×2 (本鸡) = 2, 冲锋 金 4 → V2 = 10; P3's river 1s 包鸡 2 to P0, P2.
    # P0 = −10 − 10 + 2 = −18; P1 = −20; P2 = +30 + 30 + 2 = +62; P3 = −10 − 10 − 4 = −24.
    assert totals(with_rules(EXAMPLES["E6"], ben_ji=True)) == [-18, -20, 62, -24]
    # flip_only (金 only when F is 1s): 1s×2 = 2, 9s×2 = 2, 冲锋 2 → V2 = 6; 包鸡 1.
    # P0 = −10 − 6 + 1 = −15; P1 = −16; P2 = +30 + 18 + 1 = +49; P3 = −10 − 6 − 2 = −18.
    assert totals(with_rules(EXAMPLES["E6"], ben_ji=True, ben_ji_gold="flip_only")) == [-15, -16, 49, -18]


@pytest.mark.parametrize(("mode", "weekday", "expected"), [
    # Wednesday: 3m 3p 3s. V0 = 5m + 3s×2 = 3; V1 = 1s + 3s + 3p = 3.
    # P0 = −2 + 9 − 3 + 2 = +6; P1 = +6 + 9 − 3 + 2 = +14; P2 = −2 − 3 − 3 − 4 = −12; P3 = −2 − 3 − 3 = −8.
    ("sunday7", 3, [6, 14, -12, -8]),
    # Sunday as 7: 7m 7p 7s. V0 = 5m + 7s = 2; V1 = 1s + 7m = 2.
    # P0 = −2 + 6 − 2 + 2 = +4; P1 = +6 + 6 − 2 + 2 = +12; P2 = −2 − 2 − 2 − 4 = −10; P3 = −2 − 2 − 2 = −6.
    ("sunday7", 7, [4, 12, -10, -6]),
    ("sunday_none", 7, [2, 10, -8, -4]),  # no 星期鸡 on Sunday: as E1
    ("sunday_none", 3, [6, 14, -12, -8]),
])
def test_xingqi_ji_weekday_chickens(mode, weekday, expected):
    assert totals(with_rules(example("E1", weekday=weekday), xingqi_ji=mode)) == expected


def test_xingqi_ji_needs_the_weekday_and_counts_without_a_flip():
    with pytest.raises(ValueError, match="weekday"):
        settle(with_rules(EXAMPLES["E1"], xingqi_ji="sunday7"))
    assert totals(example("E1", weekday=3)) == [2, 10, -8, -4]  # given but not played: ignored
    # E7 (GY-R, last tile, no flip): P1 wins 清大对 自摸 (8 each) holding 4p 6p 9p pongs-in-hand, 2p pong, 1p + 1p.
    # Friday would be 5s etc.; Monday: 1m 1p 1s: P1 holds 1p×2 → V1 = 2; P0 (叫牌) holds 1m → V0 = 1.
    # P3's river 1s 冲锋 2 + 1s 1 = 包鸡 3 to P0 and P1 (1s is fixed, not doubled by the weekday).
    # P0 = −8 + 3 − 2 + 3 = −4; P1 = +24 + 6 − 1 + 3 = +32; P2 = −8 − 1 − 2 = −11; P3 = −8 − 1 − 2 − 6 = −17.
    assert totals(with_rules(example("E7", weekday=1), xingqi_ji="sunday7")) == [-4, 32, -11, -17]


def test_ben_ji_and_xingqi_ji_on_the_same_tile_count_once():
    # F=5m with 本鸡 (5m, 6m) and Friday (5m 5p 5s): 5m is one chicken, not two.
    # V0 = 5m 1 + 6m 1 + 5s×2 = 4; V1 = 1s + 5s + 5p×2 (hand and winning tile) = 4.
    # P0 = −2 + 12 − 4 + 2 = +8; P1 = +6 + 12 − 4 + 2 = +16; P2 = −2 − 4 − 4 − 4 = −14; P3 = −2 − 4 − 4 = −10.
    state = with_rules(example("E1", flipped="5m", weekday=5), ben_ji=True, xingqi_ji="sunday7")
    assert totals(state) == [8, 16, -14, -10]


def test_chuifeng_ji_chickens_or_the_whole_round():
    state = example("E1", flipped="5p")  # F=5p: 吹风鸡
    # chickens: no chicken settled, hand fan only (docs/rules.md#chuifeng_ji).
    assert totals(with_rules(state, chuifeng_ji="chickens")) == [-2, 6, -2, -2]
    # hand: the round is void, the dealer P0 deals again with k 2.
    void = settle(with_rules(state, chuifeng_ji="hand"))
    assert column(void, "total") == [0, 0, 0, 0] and not void.ledger
    assert (void.next_dealer, void.next_streak) == (0, 2)
    # Off: 翻鸡 6p (nobody 叫牌 holds one). V1 = 1s; 包鸡 2 to P0, P1.
    # P0 = −2 − 1 + 2 = −1; P1 = +6 + 3 + 2 = +11; P2 = −2 − 1 − 4 = −7; P3 = −2 − 1 = −3.
    assert totals(state) == [-1, 11, -7, -3]
    # Another flip is no 吹风鸡.
    assert totals(with_rules(EXAMPLES["E1"], chuifeng_ji="hand")) == [2, 10, -8, -4]


def test_chuifeng_ji_hand_replays_the_deal_in_a_scorebook():
    rnd = {k: v for k, v in example("E1", flipped="5p").items() if k not in ("rules", "dealer", "streak")}
    book = add_round(add_round(new_scorebook(["A", "B", "C", "D"], {"chuifeng_ji": "hand"}), rnd), rnd)
    standing = replay(book)
    assert [(r.dealer, r.streak) for r in standing.rounds] == [(0, 1), (0, 2)]
    assert (standing.dealer, standing.streak, standing.totals) == (0, 3, (0, 0, 0, 0))


# E1 with a 1s moved from P3's hand into P3's river (P3 still not 叫牌): all four have a chicken paid —
# P0 (5m), P1 (1s), P2 (包鸡 冲锋 2), P3 (包鸡 1). Chickens: P0 +3 −1 +2 +1 = +5; P1 +5; P2 −1 −1 −4 = −6;
# P3 −1 −1 −2 = −4. Hand: −2, +6, −2, −2.
ALL_FOUR = example("E1")
ALL_FOUR["players"][3] = seat("3467889m79p1247s", river="1s")


def test_mantang_all_double_or_cancel():
    assert totals(ALL_FOUR) == [3, 11, -8, -6]
    assert totals(with_rules(ALL_FOUR, mantang_all="double")) == [-2 + 10, 6 + 10, -2 - 12, -2 - 8]
    assert totals(with_rules(ALL_FOUR, mantang_all="cancel")) == [-2, 6, -2, -2]
    # Control: in E1 P3 pays no chicken of his own, so only three have chickens paid: nothing changes.
    assert totals(with_rules(EXAMPLES["E1"], mantang_all="double")) == [2, 10, -8, -4]


def test_tongsan_three_on_every_win():
    # E1: W = 2 + 3 = 5 each; 冲锋鸡 3 → 包鸡 3.
    # P0 = −5 + 3 − 1 + 3 = 0; P1 = +15 + 3 − 1 + 3 = +20; P2 = −5 − 1 − 1 − 6 = −13; P3 = −5 − 1 − 1 = −7.
    assert totals(with_rules(EXAMPLES["E1"], tongsan=True)) == [0, 20, -13, -7]
    # E4 热炮: P2's 平胡 W = 1 + 3 = 4, 热炮 extra 3 → P1 pays 7. V0 = 1 (1s); P1 burned; P3's 冲锋鸡 3 包鸡
    # to P0 and P2. P0 = +3 + 3 = +6; P1 = −7 − 1 = −8; P2 = +7 − 1 + 3 = +9; P3 = −1 − 6 = −7.
    assert totals(with_rules(EXAMPLES["E4"], tongsan=True)) == [6, -8, 9, -7]


def test_zimo_bonus_double_and_plus2():
    # E6: 龙七对 10 自摸 (no bonus by default: P0 −16, P1 −18, P2 +56, P3 −22, hand 10 each).
    assert totals(with_rules(EXAMPLES["E6"], zimo_bonus="double")) == [-26, -28, 86, -32]  # 20 each
    assert totals(with_rules(EXAMPLES["E6"], zimo_bonus="all_plus2")) == [-18, -20, 62, -24]  # 12 each
    assert totals(EXAMPLES["E6"]) == [-16, -18, 56, -22]


def test_qingyise_bonus():
    # E7 (GY-R): 清大对 8 自摸 → 8 + 3 = 11 each instead of 8: P0 −5−3, P1 +27+9, P2 −8−3, P3 −14−3.
    assert totals(with_rules(EXAMPLES["E7"], qingyise_bonus=3)) == [-8, 36, -11, -17]
    assert totals(with_rules(EXAMPLES["E1"], qingyise_bonus=3)) == [2, 10, -8, -4]  # mixed suits: no bonus


def test_heavy_chickens():
    # E6 (金鸡): 1s 金 3 each, 冲锋 金 6 → V2 = 3 + 3 + 6 = 12; P3's river 1s 包鸡 3.
    # P0 = −10 − 12 + 3 = −19; P1 = −22; P2 = +30 + 36 + 3 = +69; P3 = −10 − 12 − 6 = −28.
    assert totals(with_rules(EXAMPLES["E6"], heavy_chickens=True)) == [-19, -22, 69, -28]
    # E2: 责任鸡 2 instead of 1 (P0 +10 → +11, P3 −9 → −10); the 1s pong stays 1 each (no 金).
    assert totals(with_rules(EXAMPLES["E2"], heavy_chickens=True)) == [11, -3, 2, -10]


def test_shabao_pinghu_nine():
    # E8: P3 (报听) discards into P1's 平胡 W 1: 1 + 9 = 10 instead of 1 + 10 = 11.
    assert totals(with_rules(EXAMPLES["E8"], shabao_pinghu=True)) == [-2, 12, -2, -8]
    assert totals(EXAMPLES["E8"]) == [-2, 13, -2, -9]


def test_yin_ji_silver_flip():
    # E1 with P0 = 1p2p3p 2s3s4s 4s5s6s 7s8s 5m5m (叫牌 on 6s/9s), F=9p → 1p: 银鸡 2.
    # P0 = −2 + 2×3 − 1 + 2 = +5; P1 = +6 + 3 − 2 + 2 = +9; P2 = −2 − 2 − 1 − 4 = −9; P3 = −2 − 2 − 1 = −5.
    state = example("E1", flipped="9p")
    state["players"][0] = seat("123p234456s78s55m")
    assert totals(with_rules(state, yin_ji=True)) == [5, 9, -9, -5]
    assert totals(state) == [2, 10, -8, -4]  # off: 1p worth 1


def test_yiwai_ji_7p_and_9m():
    # E1: P1 holds 9m → V1 = 1s + 9m = 2 (P3's 7p and 9m: not 叫牌, ignored).
    # P0 = −2 + 3 − 2 + 2 = +1; P1 = +6 + 6 − 1 + 2 = +13; P2 = −2 − 1 − 2 − 4 = −9; P3 = −2 − 1 − 2 = −5.
    assert totals(with_rules(EXAMPLES["E1"], yiwai_ji=True)) == [1, 13, -9, -5]


def test_zhan_ji_standing_chickens():
    # E6: P2's 1s×2 never shown (金 2 each): double → 4 each, plus1 → 3 each; the river 冲锋鸡 4 unchanged.
    # double: V2 = 12, +4 from each payer: P0 −20, P1 −22, P2 +68, P3 −26.
    assert totals(with_rules(EXAMPLES["E6"], zhan_ji="double")) == [-20, -22, 68, -26]
    # plus1: V2 = 10: P0 −18, P1 −20, P2 +62, P3 −24.
    assert totals(with_rules(EXAMPLES["E6"], zhan_ji="plus1")) == [-18, -20, 62, -24]
    # Control: E2's 1s is in a pong (shown): nothing changes.
    assert totals(with_rules(EXAMPLES["E2"], zhan_ji="double")) == [10, -3, 2, -9]


def test_qianhou_ji_extra_indicators():
    state = example("E1", indicators=["2s", "6m"])
    # all (滚筒鸡): 3s and 7m besides 5m. V0 = 5m + 3s×2 = 3; V1 = 1s + 3s + 7m = 3.
    # P0 = −2 + 9 − 3 + 2 = +6; P1 = +6 + 9 − 3 + 2 = +14; P2 = −2 − 3 − 3 − 4 = −12; P3 = −2 − 3 − 3 = −8.
    assert totals(with_rules(state, qianhou_ji="all")) == [6, 14, -12, -8]
    # last (前后鸡): only 7m. V0 = 1, V1 = 2: P0 −2+3−2+2, P1 6+6−1+2, P2 −2−1−2−4, P3 −2−1−2.
    assert totals(with_rules(state, qianhou_ji="last")) == [1, 13, -9, -5]
    assert totals(state) == [2, 10, -8, -4]  # off: the indicators are ignored
    with pytest.raises(ValueError, match="more than 4 copies"):
        settle(example("E1", indicators=["2s", "2s"]))  # 2s: P0, P1, P3 and two indicators


def test_lianzhuang_dealer_win_bonus():
    # E3: the dealer P0 wins 杠上花 W 3 (P0 +21, P1 −4, P2 −10, P3 −7); k=2 → each pays 3 + 2.
    state = example("E3", streak=2)
    assert totals(with_rules(state, lianzhuang=True)) == [27, -6, -12, -9]
    assert totals(state) == [21, -4, -10, -7]
    # Control: a non-dealer winner (E1) gets nothing more.
    assert totals(with_rules(example("E1", streak=3), lianzhuang=True)) == [2, 10, -8, -4]



def test_chuifeng_ji_hand_still_refuses_an_impossible_win():
    # E1 won on P3's discard: a 平胡 without a kong may not win on a discard (the 豆 gate), blown away or not.
    state = with_rules(example("E1", flipped="5p", outcome={"type": "win", "winners": [1], "win_tile": "5p",
                                                            "self_drawn": False, "discarder": 3}),
                       chuifeng_ji="hand")
    with pytest.raises(ValueError, match="cannot win"):
        settle(state)
