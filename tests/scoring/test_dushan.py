"""独山 (docs/rules.md#dushan): the preset ``dushan`` settled by scoring/dushan.py.

Expected payments are derived by hand beside each test from the rules of P2's tutorial
(``LIGF9/zhuoji-mahjong-ai`` ``docs/独山麻将规则教程.md``): its worked examples §11.2 (a claimed 横鸡) and §7.4 (a
claimed 冲锋鸡, pong 5 and exposed kong 9) on a small table, then a table with 捉炮鸡, 金鸡, 翻鸡 and 报叫 settled
pairwise, a 黄牌, and the refusals. c[p] = the chickens of a 叫牌 player p; "hand" = the win value each payer owes.
"""

from __future__ import annotations

import copy

import pytest

from scoring import settle
from scoring.dushan import tag_discards
from scoring.ledger import matrix
from scoring.rules import get_rules
from scoring.table import Discard

# The claim table (§11.2, §7.4), dealer P0. A = P1 throws a 1s that B = P2 pongs or kongs; P3 wins 自摸 平胡 on
# 5s with no chicken anywhere else, so his win is 0 (平胡) + 3 (自摸) = 3 from each of the others. No flip: no 翻鸡.
# P0 and P1 are not 叫牌 and show no chicken (包鸡 0); P2 holds 10 concealed tiles waiting on 7p (叫牌).
B_READY = "345m678m345p7p"
B_NOT_READY = "345m679m345p8p"


def claim_table(tag: str, meld: str = "pong", b_hand: str = B_READY) -> dict:
    """``tag`` "heng": P1's 1s is his second discard, the first non-冲锋 1s (横鸡); "chongfeng": his first."""
    p1_discards = [[1, "9p"], [1, "1s", 2]] if tag == "heng" else [[1, "1s", 2], [1, "9p"]]
    order = [[0, "9m"], p1_discards[0], [2, "9s"], [3, "8m"], [0, "8p"], p1_discards[1], [2, "7m"], [3, "1p"]]
    return {
        "rules": "dushan", "dealer": 0, "discard_order": order,
        "players": [
            {"concealed": "13579m2468p2468s", "river": ["9m", "8p"]},
            {"concealed": "12468m1357p3579s", "river": ["9p"]},
            {"concealed": b_hand, "melds": [{"type": meld, "tile": "1s", "from": 1}], "river": ["9s", "7m"]},
            {"concealed": "123456m789p234s5s", "river": ["8m", "1p"]},
        ],
        "outcome": {"type": "win", "winners": [3], "win_tile": "5s", "self_drawn": True},
    }


def totals(state: dict) -> list[int]:
    return [p.total for p in settle(state).players]


def chicken_matrix(state: dict) -> list[list[int]]:
    """m[i][j] = chicken (鸡) fan seat i pays seat j."""
    return matrix([t for t in settle(state).ledger if t.component == "chicken"])


def test_claimed_heng_ji_by_a_ready_player_11_2():
    # §11.2, B 叫牌: c[B] = the pong's three 1s = 3; everyone else 0. Pairwise B collects 3 from P0, P1, P3;
    # A (P1) pays B the 横鸡 premium 2 − 1 = 1 more: 4 from A.
    state = claim_table("heng")
    m = chicken_matrix(state)
    assert [m[p][2] for p in (0, 1, 3)] == [3, 4, 3]
    # Totals: hand P3 +9, the others −3. P0 −3 −3 = −6; P1 −3 −4 = −7; P2 −3 +10 = +7; P3 +9 −3 = +6.
    assert totals(state) == [-6, -7, 7, 6]


def test_claimed_heng_ji_by_a_player_not_ready_11_2():
    # §11.2, B not 叫牌: c[B] = 0; 包鸡: B pays each other player the 3 1s of his pong, and A the premium 1
    # back: 3 to P0 and P3, 4 to A. Totals: P0 −3 +3 = 0; P1 −3 +4 = +1; P2 −3 −10 = −13; P3 +9 +3 = +12.
    state = claim_table("heng", b_hand=B_NOT_READY)
    m = chicken_matrix(state)
    assert [m[2][p] for p in (0, 1, 3)] == [3, 4, 3]
    assert totals(state) == [0, 1, -13, 12]


def test_pong_of_a_chongfeng_ji_is_5_from_the_discarder_7_4():
    # §7.4: P1's first discard is the 1s (冲锋鸡, 3) and B pongs it: B's 3 chickens + premium 3 − 1 = 2 → 5 from
    # A; 3 from P0 and P3. Totals: P0 −6; P1 −3 −5 = −8; P2 −3 +11 = +8; P3 +9 −3 = +6.
    state = claim_table("chongfeng")
    assert chicken_matrix(state)[1][2] == 5
    assert totals(state) == [-6, -8, 8, 6]


def test_exposed_kong_of_a_chongfeng_ji_is_9_from_the_discarder_7_4():
    # §7.4: B kongs A's 冲锋鸡 (点杠): the kong 3 (豆, from A alone) + the kong's four 1s (c[B] = 4) + premium 2
    # = 9 from A; 4 from P0 and P3. Totals: P0 −3 −4 = −7; P1 −3 −9 = −12; P2 −3 +3 +4+6+4 = +14;
    # P3 +9 −4 = +5.
    state = claim_table("chongfeng", meld="kong")
    assert sum(t.fan for t in settle(state).ledger if t.payer == 1 and t.payee == 2) == 9
    assert totals(state) == [-7, -12, 14, 5]


def test_claimed_1s_needs_the_discard_order():
    # Which kind the claimed 1s was depends on when it was thrown; the rivers do not show it.
    state = claim_table("heng")
    del state["discard_order"]
    with pytest.raises(ValueError, match="discard_order"):
        settle(state)


def test_heng_ji_go_around_and_its_close():
    # §7.3 / §7.3.1. P2's first discard is a 1s: 冲锋鸡, and it takes no 横鸡 place. P0's 1s (not his first) opens
    # the 横鸡 go-around; P1 and P3 follow with 1s before P0 discards again: 横鸡 too.
    d = Discard
    followed = [d(0, "9m"), d(1, "9p"), d(2, "1s"), d(3, "8m"), d(0, "1s"), d(1, "1s"), d(2, "5p"), d(3, "1s")]
    assert [t.tag for t in tag_discards(followed)] == ["chongfeng", "heng", "heng", "heng"]
    # P0 opens it and discards again (5m): closed, and no other opens: P1's next 1s is a plain 1.
    closed = [d(0, "9m"), d(1, "9p"), d(2, "9s"), d(3, "8m"), d(0, "1s"), d(1, "2m"), d(2, "3m"), d(3, "4m"),
              d(0, "5m"), d(1, "1s")]
    assert [(t.tag, t.value) for t in tag_discards(closed)] == [("heng", 2), ("plain", 1)]


# The pairwise table, dealer P0, F = 9s: 翻鸡 F+1 = 1s (9 wraps to 1) and F−1 = 8s (上下鸡); 1s among them → 金鸡.
# Discards: P0 1s (his first: 冲锋鸡), P1 9p, P2 7p, P3 9m, P0 5p, P1 1s — the first 1s that is no 冲锋鸡: a 横鸡,
# and P2 (报叫, 叫牌 from the start) wins on it. P2 平胡 on a discard: 0 + 点炮 3 + 报叫 13 = 16 from P1.
PAIRWISE = {
    "rules": "dushan", "dealer": 0, "flipped": "9s",
    "players": [
        {"concealed": "123456789m99p78s", "river": ["1s", "5p"]},
        {"concealed": "1357m2468p24569s", "river": ["9p"]},
        {"concealed": "234m567m345p1123s", "river": ["7p"], "bao_ting": True},
        {"concealed": "234p567p456s23m88m", "river": ["9m"]},
    ],
    "outcome": {"type": "win", "winners": [2], "win_tile": "1s", "discarder": 1},
}


def test_pairwise_chickens_with_zhuopao_gold_and_flipped_chickens():
    # c[P0] = 冲锋鸡 3 (still in his river) + one 8s (翻鸡) 1 = 4.
    # c[P2]: 1s held 1s1s and the won 1s; the won one is his 捉炮鸡 at its 横鸡 value 2, the other two are held
    #   chickens, ×2 under 金鸡 = 4; all three are 翻鸡 tiles (F+1 = 1s), +1 each = 3 → c = 4 + 3 + 2 = 9.
    # c[P1] = 0 (not 叫牌; his 1s went to P2, he shows nothing: 包鸡 0); c[P3] = 0 (叫牌, no chicken).
    # Pairwise: P0 pays P2 9 − 4 = 5; P1 and P3 pay P2 9 and P0 4.
    # P0 −5 +4 +4 = +3; P1 −16 −9 −4 = −29; P2 +16 +5 +9 +9 = +39; P3 −9 −4 = −13.
    result = settle(PAIRWISE)
    assert [p.total for p in result.players] == [3, -29, 39, -13]
    assert [p.hand for p in result.players] == [0, -16, 16, 0]
    m = chicken_matrix(PAIRWISE)
    assert (m[0][2], m[1][2], m[3][2], m[1][0], m[3][0]) == (5, 9, 9, 4, 4)
    # The order derived from the rivers is the one given: the same settlement.
    order = [[0, "1s"], [1, "9p"], [2, "7p"], [3, "9m"], [0, "5p"], [1, "1s"]]
    assert settle({**PAIRWISE, "discard_order": order}).ledger == result.ledger


def test_dushan_switches_change_what_they_say():
    # 上鸡 only (dushan_fanji "up"): 8s is no chicken → c[P0] = 3, c[P2] = 9 (1s still F+1, 金 still on).
    # P0 pays P2 6; P1, P3 pay P2 9 and P0 3: P0 −6 +6 = 0; P1 −16 −9 −3 = −28; P2 +16 +6 +18 = +40;
    # P3 −9 −3 = −12.
    up = {**PAIRWISE, "rules": {"preset": "dushan", "dushan_fanji": "up"}}
    assert totals(up) == [0, -28, 40, -12]
    # 报叫 10 (DushanMajiang): P2's win is 13, 3 less from P1.
    ten = {**PAIRWISE, "rules": {"preset": "dushan", "dushan_baojiao": 10}}
    assert totals(ten) == [3, -26, 36, -13]


def test_two_winners_each_take_the_zhuopao_ji():
    # 一炮多响 (§8.1): P3 (报叫, waiting 1s/4s on 23s) wins on the same 1s: 3 + 13 = 16 from P1 too, and the 横鸡
    # is his 捉炮鸡 as well. c[P3]: the won 1s is no held chicken; it is a 翻鸡 tile (+1) and 捉炮鸡 2 → 3.
    # c = [4, 0, 9, 3]. Pairwise: P0→P2 5, P1→P2 9, P3→P2 6, P1→P0 4, P3→P0 1, P1→P3 3.
    # P0 −5 +4 +1 = 0; P1 −16 −16 −9 −4 −3 = −48; P2 +16 +5 +9 +6 = +36; P3 +16 −6 −1 +3 = +12.
    # The next dealer is the first winner from the discarder's 下家: P2.
    state = copy.deepcopy(PAIRWISE)
    state["players"][3] = {"concealed": "234p567p456s23s88m", "river": ["9m"], "bao_ting": True}
    state["outcome"]["winners"] = [3, 2]
    result = settle(state)
    assert [p.total for p in result.players] == [0, -48, 36, 12]
    assert result.next_dealer == 2


def test_hot_discard_burns_the_discarder():
    # P1 has a concealed kong of 9p and his next discard (the 1s) feeds P2: 热炮 5 + 报叫 13 = 18 from P1;
    # P1 is burned (全烧): no chickens, no kong income. He is not 叫牌 anyway here; c as in PAIRWISE.
    # Tiles: P1 holds 9p9p9p9p as 闷豆 (P0's 99p become 66p, P1's river 9p a 4s).
    state = copy.deepcopy(PAIRWISE)
    state["players"][1] = {"concealed": "1357m2468p24s", "melds": [{"type": "concealed_kong", "tile": "9p"}],
                           "river": ["4s"]}
    state["players"][0]["concealed"] = "123456789m78s" + "66p"  # 99p gone to P1's kong: P0 waits on 6p/6s/9s
    state["outcome"]["hot_discard"] = True
    # Chickens unchanged: c = [4, 0, 9, 0] (P0's hand still has the one 8s). P1 −18 −9 −4 = −31;
    # P0 +3; P2 +18 +5 +9 +9 = +41; P3 −13.
    result = settle(state)
    assert [p.total for p in result.players] == [3, -31, 41, -13]
    assert result.players[1].burned


def test_draw_pays_the_ready_players_only():
    # 黄牌 (§11.3): no chickens, no kongs. P0 is 叫牌 on 4m / 5p, both 大对子 (5): each player not 叫牌 pays him
    # 3 + 5 = 8. P1 is 叫牌 on 1m/4m 平胡 (0): 3. P2, P3 are not: each pays 8 + 3 = 11. The dealer stays.
    state = {
        "rules": "dushan", "dealer": 0, "streak": 2,
        "players": [{"concealed": "111m222p333s44m55p"}, {"concealed": "23m456m789m456s77p"},
                    {"concealed": "1357m1357p1357s9p"}, {"not_ready": True}],
        "outcome": {"type": "draw"},
    }
    result = settle(state)
    assert [p.total for p in result.players] == [16, 6, -11, -11]
    assert (result.next_dealer, result.next_streak) == (0, 3)


def test_dushan_refusals():
    with pytest.raises(ValueError, match="wuguji"):
        get_rules({"preset": "dushan", "wuguji": True})  # a Guiyang switch 独山 does not read
    with pytest.raises(ValueError, match="dushan_fanji"):
        get_rules({"preset": "dushan", "dushan_fanji": "sideways"})
    bad_order = {**PAIRWISE, "discard_order": [[0, "1s"], [1, "9p"], [2, "7p"], [3, "9m"], [1, "1s"]]}
    with pytest.raises(ValueError, match="discard_order"):
        settle(bad_order)  # P0's 5p is missing
    with pytest.raises(ValueError, match="dushan"):
        settle({**PAIRWISE, "flipped": None, "outcome": {"type": "false_win", "player": 1}})
    # A 平胡 on a discard needs its pass (通行证): no kong, no 报叫, the discarder no 报叫.
    no_pass = copy.deepcopy(PAIRWISE)
    no_pass["players"][2]["bao_ting"] = False
    with pytest.raises(ValueError, match="may not win"):
        settle(no_pass)


def test_hand_analysis_under_dushan():
    # /v1/hand's engine: 清一色 + 七对 add up to 20, + 自摸 3 = 23; 龙七对 needs the winning tile to make the four.
    from scoring.hand import analyze_hand
    seven = analyze_hand("1122334455667s", "7s", self_drawn=True, rules="dushan")
    assert seven.hand_type.key == "qingqidui" and seven.win_value == 23
    long = analyze_hand("1122334455777m", "7m", self_drawn=False, rules="dushan")
    assert long.hand_type.key == "qinglongbei" and long.win_value == 20 + 10 + 3


def test_guiyang_e1_under_dushan():
    # E1 (docs/rules.md#examples, tiles in tests/scoring/settle_tables.py) by 独山: P1 自摸 平胡 0 + 3 = 3 from
    # each. F = 4m → 翻鸡 5m and 3m. c[P0] = his 5m (翻鸡) 1; c[P1] = his 1s 1; P2 is not 叫牌 and his only discard,
    # the 1s, was his first: a 冲锋鸡 he shows, 包鸡 3 to each; P3 is not 叫牌 (his 1s1s in hand are not shown).
    # Pairwise P2 and P3 pay P0 and P1 1 each; P0 and P1 are even.
    # P0 −3 +1 +1 +3 = +2; P1 +9 +1 +1 +3 = +14; P2 −3 −2 −9 = −14; P3 −3 −2 +3 = −2.
    from tests.scoring.settle_tables import EXAMPLES

    assert totals({**EXAMPLES["E1"], "rules": "dushan"}) == [2, 14, -14, -2]


def test_every_worked_example_under_dushan_is_zero_sum_or_refused():
    # The twelve Guiyang worked examples (docs/rules.md#examples) re-scored by 独山: each either settles with
    # every component zero-sum, or is refused with a reason (a claimed 1s without discard_order, a 平胡 without
    # its pass, a penalty outcome) — never another error.
    from tests.scoring.settle_tables import EXAMPLES

    settled = 0
    for name, state in EXAMPLES.items():
        try:
            result = settle({**state, "rules": "dushan"})
        except ValueError as exc:
            assert str(exc), name
            continue
        settled += 1
        for component in ("hand", "dou", "chicken"):
            assert sum(getattr(p, component) for p in result.players) == 0, (name, component)
        assert sum(p.total for p in result.players) == 0, name
    assert settled >= 6  # most of them are plain wins and draws 独山 settles too
