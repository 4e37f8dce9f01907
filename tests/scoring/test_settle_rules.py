"""Config switches of docs/rules.md#switches, dealer rules, penalties and input validation of the settlement."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scoring import settle
from tests.scoring.settle_tables import column, example, first_1s, paid, ron, seat, table, zimo


def with_rules(name: str, **overrides: Any) -> dict[str, Any]:
    """A worked example under its own preset plus rule overrides."""
    state = example(name)
    preset = state["rules"] if isinstance(state["rules"], str) else state["rules"]["preset"]
    state["rules"] = {"preset": preset, **overrides}
    return state


def reasons(result: dict[str, Any], word: str) -> list[dict[str, Any]]:
    return [t for t in result.ledger if word in t.reason]


# ---- 豆 (kongs) -------------------------------------------------------------------------------------------


def test_dou_values_small_set():
    r = settle(with_rules("E3", dou_values="2/3/1"))
    assert paid(r, "dou") == {(1, 0): 2, (2, 0): 2, (3, 0): 2, (2, 1): 1}


def test_dou_not_ting_reverse_makes_the_owner_pay_the_ready_players():
    default = settle(example("E3"))
    r = settle(with_rules("E3", dou_not_ting="reverse"))
    reversed_ = reasons(r, "reversed")
    # P3's 转弯豆 (not 叫牌): P3 pays the 叫牌 P0 and P1, not the non-叫牌 P2.
    assert {(t.payer, t.payee, t.fan) for t in reversed_} == {(3, 0, 3), (3, 1, 3)}
    assert column(r, "dou") == [a + b for a, b in zip(column(default, "dou"), [3, 3, 0, -6], strict=True)]


def test_late_kong_scores_zero_only_without_hanbao_dou():
    state = example("E3", rules="liupanshui")
    state["players"][0]["melds"][0]["late"] = True
    r = settle(state)
    assert paid(r, "dou") == {(2, 1): 1}  # the late 闷豆 is 憨包豆; 点豆 still scores
    assert any("憨包豆" in line for line in r.explanation)
    state["rules"] = {"preset": "liupanshui", "hanbao_dou_scores": True}
    assert settle(state).players[0].dou == 6
    state["rules"] = "gy-normal"
    assert settle(state).players[0].dou == 9


# ---- 鸡 (chickens) ----------------------------------------------------------------------------------------


def test_chicken_scope_shoushang_drops_discarded_flipped_chicken_only():
    state = example("E1")
    state["players"][0]["river"] = "5m"  # a discarded 翻鸡 of the 叫牌 P0
    assert paid(settle(state), "chicken")[3, 0] == 2
    state["rules"] = {"preset": "gy-normal", "chicken_scope": "shoushang"}
    assert paid(settle(state), "chicken")[3, 0] == 1
    # Discarded 1s still count under 手上鸡: E6's winner keeps his 金冲锋鸡.
    assert column(settle(with_rules("E6", chicken_scope="shoushang")), "total") == [-16, -18, 56, -22]


def test_chickens_without_ting_requirement_pay_everyone_and_drop_bao_ji():
    r = settle(with_rules("E1", chicken_requires_ting=False))
    # V0=1 (5m), V1=1 (1s), V2=3 (冲锋鸡 in river + 5m), V3=2 (1s×2): each collects 3V, pays the others' V.
    assert column(r, "chicken") == [3 - 6, 3 - 6, 9 - 4, 6 - 5]
    assert not reasons(r, "包鸡")


def test_bao_ji_off():
    r = settle(with_rules("E1", bao_ji=False))
    assert column(r, "chicken") == [2, 2, -2, -2]


def test_chicken_payers_non_ting_only():
    r = settle(with_rules("E12", chicken_payers="non_ting_only"))
    assert paid(r, "chicken") == {(3, 0): 4}  # only the non-叫牌 P3 pays P0's chickens


def test_chongfeng_additive():
    assert column(settle(with_rules("E1", chongfeng_mode="additive")), "chicken") == [5, 5, -8, -2]
    golden = paid(settle(with_rules("E6", chongfeng_mode="additive")), "chicken")
    assert golden[1, 2] == 2 * 2 + 6  # 金冲锋鸡 3 × 2


def test_zeren_extra_and_its_golden_double():
    assert paid(settle(with_rules("E2", zeren_extra=2)), "chicken")[3, 0] == 3 + 2
    golden = settle(example("E2", flipped="9s"))  # 金鸡: the pong of 1s is worth 6, 责任鸡 2
    assert paid(golden, "chicken") == {(1, 0): 6, (2, 0): 6, (3, 0): 6 + 2}


def test_wuguji_in_hand_and_in_river():
    assert paid(settle(example("E6")), "chicken").get((1, 0), 0) == 0
    r = settle(with_rules("E6", wuguji=True))
    assert paid(r, "chicken")[1, 0] == 2 * 2  # P0 holds 8p×2, 乌骨鸡 2 each
    assert paid(settle(with_rules("E6", wuguji=True, wuguji_value=1)), "chicken")[1, 0] == 2
    gold = example("E6", flipped="7p", rules={"preset": "gy-normal", "wuguji": True})
    assert paid(settle(gold), "chicken")[1, 0] == 2 * 4  # F=7p: 金乌骨鸡 4 each
    plain = example("E6", flipped="7p")
    assert paid(settle(plain), "chicken")[1, 0] == 2  # without 乌骨鸡, 8p is just the 翻鸡
    state = with_rules("E1", wuguji=True)
    state["players"][2]["river"] = ["1s", "8p"]  # 包鸡 covers a discarded 乌骨鸡 too
    assert paid(settle(state), "chicken")[2, 0] == 1 + 2 + 2


def test_first_1s_won_on_is_a_plain_chicken():
    state = example("E8", first_1s=first_1s(0, claimed_by=3))
    state["outcome"] = ron([3], "1s", 0)  # the 报听 P3 wins on P0's first 1s
    r = settle(state)
    assert not reasons(r, "责任鸡") and not reasons(r, "冲锋鸡")
    assert paid(r, "chicken")[1, 3] == 2  # 1s×2 in P3's hand, the winning 1s included


# ---- hand fan -------------------------------------------------------------------------------------------


def test_repao_switches():
    r = settle(with_rules("E4", repao_burn=False))
    assert not r.players[1].burned
    assert paid(r, "dou") == {(0, 1): 3, (2, 1): 3, (3, 1): 3}  # P1's 转弯豆 scores again
    assert paid(r, "chicken")[3, 1] == 1 + 2  # V1 and 包鸡 now reach P1
    assert paid(settle(with_rules("E4", repao_extra=0)), "hand") == {(1, 2): 1}


def test_qianggang_burn_switch():
    gy = settle(with_rules("E12", qianggang_burn=True))
    assert gy.players[2].burned and column(gy, "dou") == [0, 0, 0, 0]
    lps = settle(with_rules("E12", qianggang_burn=False))
    assert not lps.players[2].burned and lps.players[2].dou == 6  # LPS 闷豆 2 each


def bao_ting_winner(rules: Any) -> dict[str, Any]:
    """E8's 报听 P3 self-draws his 1s instead: 平胡自摸 W=2 before the 报听 rule."""
    state = example("E8", rules=rules)
    state["outcome"] = zimo(3, "1s")
    return state


@pytest.mark.parametrize(("rules", "value"), [
    ("gy-normal", 10),  # max(2, 10)
    ({"preset": "gy-normal", "baoting_win": "add"}, 12),
    ({"preset": "gy-normal", "baoting_win": "replace"}, 10),
    ({"preset": "gy-normal", "baoting_q": 5}, 5),
    ("gy-reduced", 5),
    ("liupanshui", 11),  # LPS: no 自摸 bonus, W + Q
])
def test_bao_ting_winner(rules, value):
    r = settle(bao_ting_winner(rules))
    assert r.players[3].win.value == value
    assert r.players[3].hand == 3 * value + (1 if rules == "liupanshui" else 0)  # LPS: the dealer's k


@pytest.mark.parametrize(("name", "overrides", "winner", "value"), [
    ("E6", {"zimo_bonus": "all_plus1"}, 2, 11),  # every 自摸 +1, big hands too
    ("E6", {"fan_table": "app"}, 2, 20),  # app table: 龙七对 20
    ("E3", {"gangkai_bonus": 0}, 0, 2),  # no 杠上花 bonus
])
def test_hand_switches_reach_the_payments(name, overrides, winner, value):
    r = settle(with_rules(name, **overrides))
    assert r.players[winner].win.value == value
    assert r.players[winner].hand == 3 * value


def test_yipao_reverse():
    r = settle(with_rules("E9", yipao_reverse=True))
    assert paid(r, "hand") == {(1, 0): 5, (3, 0): 1}
    single = settle(with_rules("E8", yipao_reverse=True))  # one winner: not 一炮多响, no reversal
    assert paid(single, "hand") == {(3, 1): 11}


def test_dealer_bonus_on_every_hand_payment_with_the_dealer():
    r = settle(with_rules("E1", dealer_bonus=True) | {"streak": 2})
    assert paid(r, "hand") == {(0, 1): 2 + 2, (2, 1): 2, (3, 1): 2}
    r = settle(with_rules("E9", dealer_bonus=True) | {"streak": 3})
    assert paid(r, "hand") == {(0, 1): 5 + 3, (0, 3): 1 + 3}
    # 杀报: k is added once to the payment, never to the Q extra.
    r = settle(with_rules("E8", dealer_bonus=True) | {"dealer": 3, "streak": 2})
    assert paid(r, "hand") == {(3, 1): 1 + 2 + 10}
    assert column(r, "dou") == [0, 0, 0, 0]


@pytest.mark.parametrize(("dealer", "robbed_pays"), [(0, 3 * (1 + 2)), (2, 3 * 1 + 2), (1, 3 * 1 + 2)])
def test_robbed_kong_with_dealer_streak(dealer, robbed_pays):
    """docs/rules.md#decisions: winner = dealer → 3(W+k); robbed = dealer → 3W+k; neither → 3W+k."""
    assert paid(settle(example("E12", dealer=dealer)), "hand") == {(2, 0): robbed_pays}


def test_draw_check_with_dealer_streak_in_liupanshui():
    r = settle(example("E10", rules="liupanshui", streak=2))
    assert paid(r, "hand") == {(1, 0): 10 + 2, (3, 0): 10 + 2, (1, 2): 1, (3, 2): 1}
    r = settle(example("E10", rules="liupanshui", dealer=1))  # the dealer is not 叫牌: pays each 叫牌 +k
    assert paid(r, "hand") == {(1, 0): 10 + 1, (3, 0): 10, (1, 2): 1 + 1, (3, 2): 1}


def test_dead_wait_switch():
    state = example("E4")
    state["players"][1]["river"] = "11m"  # with P2's 1m and P0's own, all four 1m are on the table
    assert settle(state).players[0].ting
    state["rules"] = {"preset": "gy-normal", "dead_wait_counts": False}
    r = settle(state)
    assert not r.players[0].ting
    assert any("Dead waits of P0" in line for line in r.explanation)


def test_base_multiplies_every_amount_and_state_base_wins():
    one = settle(example("E1"))
    two = settle(example("E1") | {"base": 2})
    assert column(two, "total") == [2 * t for t in column(one, "total")]
    assert [t.fan for t in two.ledger] == [2 * t.fan for t in one.ledger]
    three = settle(example("E1", rules={"preset": "gy-normal", "base": 3}))
    assert column(three, "total") == [3 * t for t in column(one, "total")]
    assert settle(example("E1", rules={"preset": "gy-normal", "base": 3}) | {"base": 2}).rules.base == 2


def test_rules_in_state_win_over_argument():
    assert settle(example("E7"), "liupanshui").rules.preset == "gy-reduced"
    state = example("E7")
    del state["rules"]
    assert settle(state, "liupanshui").rules.preset == "liupanshui"
    assert settle(state).rules.preset == "gy-normal"


# ---- penalties ------------------------------------------------------------------------------------------


def penalty(outcome: dict[str, Any], rules: Any = "gy-normal") -> dict[str, Any]:
    return example("E8", outcome=outcome, flipped=None, rules=rules, dealer=0, streak=4)


def test_pass_lock_penalty_pays_w_to_each_other_player():
    r = settle(penalty({"type": "pass_lock_penalty", "player": 1, "win_tile": "2m"}))
    assert paid(r, "hand") == {(1, 0): 1, (1, 2): 1, (1, 3): 1}
    assert column(r, "dou") == column(r, "chicken") == [0, 0, 0, 0]
    assert (r.next_dealer, r.next_streak) == (0, 5)


def test_pass_lock_forbid_refuses_the_win():
    with pytest.raises(ValueError, match="过水"):
        settle(penalty({"type": "pass_lock_penalty", "player": 1, "win_tile": "2m"},
                       {"preset": "gy-normal", "pass_lock": "forbid"}))


def test_pass_lock_penalty_needs_a_real_win():
    with pytest.raises(ValueError, match="winning hand"):
        settle(penalty({"type": "pass_lock_penalty", "player": 1, "win_tile": "9m"}))


@pytest.mark.parametrize(("rules", "q"), [("gy-normal", 10), ("gy-reduced", 5)])
def test_false_win_pays_q_to_each(rules, q):
    r = settle(penalty({"type": "false_win", "player": 2}, rules))
    assert column(r, "total") == [q, q, -3 * q, q]
    assert (r.next_dealer, r.next_streak) == (0, 5)


# ---- next dealer ----------------------------------------------------------------------------------------


def three_winners(rules: Any = "gy-normal", dealer: int = 0) -> dict[str, Any]:
    """一炮三响: the 报听 P0 discards 5p into three 平胡 (allowed by 杀报)."""
    return table([seat("111m999p789s456p7p", bao_ting=True),
                  seat("123456789m11p46p"),
                  seat("123456789s22p34p"),
                  seat("345m678m678s99s55p")],
                 ron([1, 2, 3], "5p", 0), rules=rules, dealer=dealer, flipped="2m")


def test_three_winners_discarder_deals_in_guiyang():
    r = settle(three_winners(dealer=2))
    assert paid(r, "hand") == {(0, 1): 11, (0, 2): 11, (0, 3): 11}  # W 1 + 杀报 10 to each winner
    assert (r.next_dealer, r.next_streak) == (0, 1)
    assert (settle(three_winners()).next_dealer, settle(three_winners()).next_streak) == (0, 2)


def test_multiple_winners_in_liupanshui_first_from_discarders_next_seat():
    assert settle(three_winners("liupanshui", dealer=2)).next_dealer == 1
    assert settle(example("E9", rules="liupanshui", dealer=2)).next_dealer == 1


def test_two_winners_first_from_the_dealer():
    assert settle(example("E9", dealer=2)).next_dealer == 3
    assert settle(example("E9", dealer=1)).next_dealer == 1
    assert settle(with_rules("E9", yipao_dealer="lps") | {"dealer": 2}).next_dealer == 1


def draw_three_ready(dealer: int, huang_dealer: str) -> dict[str, Any]:
    """E10 with P3 made 叫牌 too: P0, P2, P3 ready; P1 not."""
    state = example("E10", dealer=dealer, rules={"preset": "gy-normal", "huang_dealer": huang_dealer})
    state["players"][3]["concealed"] = "234567m678s22s55p"
    return state


@pytest.mark.parametrize(("dealer", "mode", "expected"), [
    (0, "s2", 0), (1, "s2", 2), (3, "s2", 3),  # dealer stays if 叫牌, else nearest 叫牌 in turn order
    (0, "qq", 1), (3, "qq", 1),  # 3 叫, 1 not: the non-叫牌 player deals
    (1, "stay", 1),
])
def test_draw_next_dealer(dealer, mode, expected):
    r = settle(draw_three_ready(dealer, mode))
    assert [p.ting for p in r.players] == [True, False, True, True]
    assert r.next_dealer == expected
    assert r.next_streak == (2 if expected == dealer else 1)


def test_draw_with_two_ready_under_qq_follows_s2():
    assert settle(example("E10", dealer=1, rules={"preset": "gy-normal", "huang_dealer": "qq"})).next_dealer == 2
    assert settle(example("E10", dealer=3)).next_dealer == 0


def test_draw_nobody_or_everybody_ready_dealer_stays_and_nobody_pays():
    state = example("E10", dealer=1)
    state["players"][0]["concealed"] = "12345678922p59p"
    state["players"][2]["concealed"] = "234m567s888p33m69m"
    r = settle(state)
    assert not any(p.ting for p in r.players)
    assert r.ledger == () and r.next_dealer == 1


# ---- validation -----------------------------------------------------------------------------------------


def broken(name: str, edit) -> dict[str, Any]:
    state = copy.deepcopy(example(name))
    edit(state)
    return state


def _set(path: list[Any], value: Any):
    def edit(state: dict[str, Any]) -> None:
        target = state
        for key in path[:-1]:
            target = target[key]
        if value is _DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    return edit


_DELETE = object()


@pytest.mark.parametrize(("name", "path", "value", "message"), [
    ("E1", ["players"], [], "list of 4"),
    ("E1", ["dealer"], 4, "seat 0..3"),
    ("E1", ["dealer"], True, "seat 0..3"),
    ("E1", ["streak"], 0, "streak"),
    ("E1", ["base"], "2", "base"),
    ("E1", ["color"], "red", "unknown key"),
    ("E1", ["players", 0, "hand"], "1m", "unknown key"),
    ("E1", ["players", 0, "concealed"], 123, "MPSZ"),
    ("E1", ["players", 0, "concealed"], "56m2334455678s", "13"),
    ("E1", ["players", 1, "concealed"], "123456s234p789m55p", "winner holds 13"),
    ("E1", ["players", 0, "concealed"], "56m2334455678z", "honor"),
    ("E1", ["players", 0, "river"], ["1s", "x"], "not a tile"),
    ("E1", ["players", 0, "river"], "1s", "more than 4 copies"),
    ("E1", ["flipped"], "1s", "more than 4 copies"),
    ("E1", ["players", 0, "bao_ting"], "yes", "true or false"),
    ("E1", ["players", 0, "melds"], "P:5m", "list of meld"),
    ("E1", ["outcome", "win_tile"], None, "win_tile"),
    ("E1", ["outcome", "winners"], [], "1 to 3 seats"),
    ("E1", ["outcome", "winners"], [1, 1], "twice"),
    ("E1", ["outcome", "discarder"], 2, "no discarder"),
    ("E1", ["outcome", "type"], "tsumo", "type is one of"),
    ("E1", ["outcome", "extra"], 1, "unknown key"),
    ("E1", ["outcome", "hot_discard"], True, "not self-drawn"),
    ("E1", ["outcome", "kong_draw"], True, "needs a kong"),
    ("E1", ["flipped"], "4x", "not a tile"),
    ("E1", ["first_1s", "discarder"], 0, "not in P0's river"),
    ("E1", ["first_1s", "claimed_by"], 3, "pong or kong of 1s"),
    ("E1", ["first_1s", "when"], 3, "unknown key"),
    ("E1", ["rules"], "guiyang", "unknown rules preset"),
    ("E1", ["rules"], {"preset": "gy-normal", "bao_ji": "no"}, "true or false"),
    ("E1", ["rules"], {"preset": "gy-normal", "chicken_scope": "all"}, "one of"),
    ("E1", ["rules"], {"preset": "gy-normal", "fan_cap": 20}, "unknown rules key"),
    ("E2", ["outcome", "discarder"], 2, "cannot also be a winner"),
    ("E2", ["outcome", "discarder"], None, "needs the discarder"),
    ("E2", ["outcome", "kong_draw"], True, "self-drawn"),
    ("E2", ["outcome", "hot_discard"], True, "has no kong"),
    ("E2", ["outcome", "robbed_kong"], True, "pong of 3p"),
    ("E2", ["players", 0, "melds", 0, "from"], 0, "from P0 himself"),
    ("E2", ["players", 0, "melds", 0, "type"], "chow", "meld type"),
    ("E3", ["players", 1, "melds", 0, "from"], _DELETE, "needs 'from'"),
    ("E3", ["players", 0, "melds", 0, "from"], 1, "cannot come from"),
    ("E8", ["players", 0, "bao_ting"], True, None),  # valid: 报听 without melds
    ("E2", ["players", 0, "bao_ting"], True, "报听"),
    ("E5", ["outcome", "hot_discard"], True, "both"),
    ("E8", ["outcome", "discarder"], 0, "cannot win on P0's 2m"),
    ("E8", ["outcome", "win_tile"], "9m", "winning hand"),
    ("E10", ["flipped"], "4m", "only turned after a win"),
    ("E10", ["outcome"], {"type": "false_win"}, "lacks 'player'"),
    ("E10", ["outcome"], {"type": "pass_lock_penalty", "player": 0}, "lacks 'win_tile'"),
])
def test_invalid_input_raises_value_error(name, path, value, message):
    state = broken(name, _set(path, value))
    if message is None:
        settle(state)
        return
    with pytest.raises(ValueError, match=message):
        settle(state)


@pytest.mark.parametrize("state", [None, [], "E1", {"players": []}])
def test_invalid_top_level_raises_value_error(state):
    with pytest.raises(ValueError):
        settle(state)
