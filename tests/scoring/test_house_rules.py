"""House-rule switches (docs/rules.md#switches), each off by default: off, a hand-built table settles exactly as
before; on, it pays what the note documents. Also ``zeren_scope`` (docs/rules.md#chicken-values) and every new key being
accepted by every surface that takes rules."""

from __future__ import annotations

import json

import pytest

from api.cli import main
from scoring import analyze_hand, settle
from scoring.rules import PRESETS, get_rules
from tests.scoring.settle_tables import EXAMPLES, column, example, paid, seat, table, zimo

HOUSE_KEYS = {"dadiaoche": 17, "tianhu": 33, "dihu": 23, "tiandi_mode": "add", "genzhuang": 4,
              "wuguji_chongfeng": True, "bao_ji_shared": True, "chongfeng_moves": True, "zeren_scope": "all",
              "yipao_chicken": "each"}


def with_rules(state: dict, **overrides) -> dict:
    base = state["rules"] if isinstance(state["rules"], str) else state["rules"]["preset"]
    return {**state, "rules": {"preset": base, **overrides}}


def test_every_house_rule_is_off_in_every_preset():
    for rules in PRESETS.values():
        assert (rules.dadiaoche, rules.tianhu, rules.dihu, rules.genzhuang) == (0, 0, 0, 0)
        assert not (rules.wuguji_chongfeng or rules.bao_ji_shared or rules.chongfeng_moves)
        assert rules.zeren_scope == "first" and rules.yipao_chicken == "first"


def test_switches_left_off_change_no_worked_example():
    # The house-rule keys at their off values, spelled out: every worked example (docs/rules.md#examples) settles the same.
    off = {"dadiaoche": 0, "tianhu": 0, "dihu": 0, "genzhuang": 0, "bao_ji_shared": False,
           "chongfeng_moves": False, "wuguji_chongfeng": False, "zeren_scope": "first"}
    for name, state in EXAMPLES.items():
        assert settle(with_rules(state, **off)) == settle(state), name


# ------------------------------------------------------------------------------------ 大吊车 / 单吊

DADIAOCHE = table([seat("1357m2468p1379s5p"),
                   seat("5p", "P:2m<0", "P:6s<2", "P:9p<3", "P:4m<0"),
                   seat("3578m1346p2458s9m"),
                   seat("1369m1357p3468s7m")], zimo(1, "5p"))


def test_dadiaoche_off_is_daduizi_on_pays_its_value():
    off = settle(DADIAOCHE)
    assert off.players[1].win.hand_type.key == "daduizi" and column(off, "hand") == [-5, 15, -5, -5]
    on = settle(with_rules(DADIAOCHE, dadiaoche=17))
    assert on.players[1].win.hand_type.name_zh == "大吊车" and column(on, "hand") == [-17, 51, -17, -17]
    ten = settle(with_rules(DADIAOCHE, dadiaoche=10))
    assert column(ten, "hand") == [-10, 30, -10, -10]


def test_dadiaoche_takes_the_higher_row_and_needs_four_melds():
    pongs = [{"type": "pong", "tile": t, "from": 2} for t in ("2p", "4p", "6p", "9p")]
    # 清: 清大对 15 against 大吊车 17 → 17 (P1: no 清大吊车 row); against 10 → 清大对 15 stays
    assert analyze_hand("5p", "5p", pongs, True, {"dadiaoche": 17}).hand_type.key == "dadiaoche"
    assert analyze_hand("5p", "5p", pongs, True, {"dadiaoche": 10}).hand_type.fan == 15
    assert analyze_hand("5p", "5p", pongs, True).hand_type.key == "qingdadui"
    three = analyze_hand("555p5m", "5m", pongs[:3], True, {"dadiaoche": 17})  # three melds: no 大吊车
    assert three.hand_type.key == "daduizi"
    waiting = analyze_hand("5p", None, pongs, rules={"dadiaoche": 17})
    assert waiting.best is not None and (waiting.best.hand_type.key, waiting.best.hand_type.fan) == ("dadiaoche", 17)


# ------------------------------------------------------------------------------------------ 天胡 / 地胡


def test_dihu_off_and_on():
    # E1 (docs/rules.md#examples): P1 (not the dealer) wins 自摸 平胡, W 2; as his first draw it is 地胡.
    state = example("E1", outcome=zimo(1, "5p", first_draw=True))
    assert settle(state).ledger == settle(EXAMPLES["E1"]).ledger
    assert any("地胡" in line and "not played" in line for line in settle(state).explanation)
    on = settle(with_rules(state, dihu=23))
    assert on.players[1].win.value == 24  # max(1, 23) + 平胡自摸 1 (pinghu_only)
    assert column(on, "hand") == [-24, 72, -24, -24]
    add = settle(with_rules(state, dihu=20, tiandi_mode="add"))
    assert add.players[1].win.value == 22  # 1 + 20 + 1


def test_tianhu_is_the_dealers_first_draw_with_nothing_discarded():
    state = example("E1", dealer=1, first_1s=None, outcome=zimo(1, "5p", first_draw=True))
    state["players"][2]["river"] = ""
    on = settle(with_rules(state, tianhu=33, dihu=23))
    assert on.players[1].win.value == 34  # 天胡 33 + 自摸 1 (P1's 天胡 34)
    assert column(on, "hand") == [-34, 102, -34, -34]
    assert settle(state).players[1].win.value == 2  # off


@pytest.mark.parametrize("change, fragment", [
    ({"outcome": {"type": "win", "winners": [1], "win_tile": "5p", "discarder": 0, "first_draw": True}},
     "self-drawn win on the first draw"),
    ({"dealer": 1, "outcome": zimo(1, "5p", first_draw=True)}, "before any discard"),  # P2's river holds a 1s
])
def test_first_draw_refusals(text_client, change, fragment):
    state = example("E1", **change)
    with pytest.raises(ValueError, match=fragment):
        settle(state)
    assert text_client.post("/v1/settle", json=state).status_code == 422
    melded = example("E3", outcome=zimo(0, "9s", first_draw=True))
    with pytest.raises(ValueError, match="cannot have melds"):
        settle(melded)


# ---------------------------------------------------------------------------------------------- 跟庄


@pytest.mark.parametrize("name", ["E1", "E10"])
def test_genzhuang_dealer_pays_each_other_player(name):
    plain = settle(EXAMPLES[name])
    followed = example(name, gen_zhuang=True)
    assert column(settle(followed), "total") == column(plain, "total")  # off
    on = settle(with_rules(followed, genzhuang=4))
    assert [a - b for a, b in zip(column(on, "total"), column(plain, "total"), strict=True)] == [-12, 4, 4, 4]
    assert sum(column(on, "total")) == 0


# ----------------------------------------------------------------------------------- 冲锋鸡 on the first 8p


def _first_8p_table(**rules) -> dict:
    # E1 (docs/rules.md#examples) with 乌骨鸡 on; P3 (not 叫牌) discarded the first 8p, still in his river.
    state = example("E1", first_8p={"discarder": 3})
    state["players"][3]["river"] = "8p"
    return with_rules(state, wuguji=True, **rules)


def test_first_8p_as_chongfeng():
    off = paid(settle(_first_8p_table()), "chicken")
    on = paid(settle(_first_8p_table(wuguji_chongfeng=True)), "chicken")
    # 包鸡 of P3 to each 叫牌 player (P0, P1): the 8p is worth 2 (乌骨鸡), as 冲锋鸡 doubled to 4
    assert off[(3, 0)] == 1 + 2 and off[(3, 1)] == 1 + 2
    assert on[(3, 0)] == 1 + 4 and on[(3, 1)] == 1 + 4
    assert {k: v for k, v in on.items() if k[0] != 3} == {k: v for k, v in off.items() if k[0] != 3}
    with pytest.raises(ValueError, match="needs 'wuguji'"):
        get_rules({"wuguji_chongfeng": True})


# --------------------------------------------------------------------------------------- 包鸡 shared


def test_bao_ji_shared_by_every_player_not_ting():
    state = example("E1", first_1s=None)  # P2's river 1s is a plain 幺鸡, not the 冲锋鸡
    # V0 = 1 (5m), V1 = 1 (1s) from each; 包鸡: P2 pays 1 for his discarded 1s to each 叫牌 player
    assert paid(settle(state), "chicken") == {(1, 0): 1, (2, 0): 2, (3, 0): 1, (0, 1): 1, (2, 1): 2, (3, 1): 1}
    # shared: P3 (not 叫牌 either) pays that 1s to P0 and P1 too
    assert paid(settle(with_rules(state, bao_ji_shared=True)), "chicken") == {
        (1, 0): 1, (2, 0): 2, (3, 0): 2, (0, 1): 1, (2, 1): 2, (3, 1): 2}
    # the 冲锋鸡 stays its discarder's own debt: E1 (P2's 1s is the 冲锋鸡) is unchanged
    assert settle(with_rules(EXAMPLES["E1"], bao_ji_shared=True)).ledger == settle(EXAMPLES["E1"]).ledger


# ------------------------------------------------------------------------------ 冲锋鸡 moving with a claim


def test_claimed_chongfeng_moves_to_a_ting_claimer():
    # E2 (docs/rules.md#examples): P0 (叫牌) claimed the first 1s from P3: 责任鸡 (+1), no 冲锋鸡; P0 collects 3 from each.
    assert column(settle(EXAMPLES["E2"]), "total") == [10, -3, 2, -9]
    on = settle(with_rules(EXAMPLES["E2"], chongfeng_moves=True))
    # one tile of P0's pong is the 冲锋鸡 (2 for 1): 4 from each, the 责任鸡 extra still paid
    assert paid(on, "chicken") == {(1, 0): 4, (2, 0): 4, (3, 0): 5}
    assert column(on, "total") == [13, -4, 1, -10]


def test_claimed_chongfeng_stays_with_the_discarder_when_the_claimer_is_not_ting():
    state = example("E2")
    state["players"][0]["concealed"] = "2468p2579s88m"  # P0 waits on nothing now
    assert paid(settle(state), "chicken") == {}
    on = settle(with_rules(state, chongfeng_moves=True))
    assert column(on, "ting") == [False, False, True, False]
    # P3 (not 叫牌) keeps the 冲锋鸡 he discarded: 包鸡 of 2 to the only 叫牌 player, the winner P2
    assert paid(on, "chicken") == {(3, 2): 2}


# ------------------------------------------------------------------------------------------- zeren_scope


def test_zeren_scope_all_charges_every_claimed_1s():
    # E2 with the first 1s discarded by P2 (stays in his river: 冲锋鸡); P0's pong of 1s came later from P3.
    state = example("E2", first_1s={"discarder": 2, "claimed_by": None})
    state["players"][2]["river"] = "1s"
    first = paid(settle(state), "chicken")
    every = paid(settle(with_rules(state, zeren_scope="all")), "chicken")
    assert (3, 0) in first and every[(3, 0)] == first[(3, 0)] + 1
    assert {k: v for k, v in every.items() if k != (3, 0)} == {k: v for k, v in first.items() if k != (3, 0)}
    # the claimed first 1s is charged once, not again through its meld
    assert settle(with_rules(EXAMPLES["E2"], zeren_scope="all")).ledger == settle(EXAMPLES["E2"]).ledger


# ------------------------------------------------------------------------ every surface takes the keys


@pytest.mark.parametrize("key, value", sorted(HOUSE_KEYS.items()))
def test_new_rule_keys_are_accepted_everywhere(text_client, capsys, tmp_path, key, value):
    rules = {"preset": "gy-normal", key: value}
    if key == "wuguji_chongfeng":
        rules["wuguji"] = True
    assert get_rules(rules)
    hand = text_client.post("/v1/hand", json={"concealed": "789m2345p123456s", "win_tile": "5p", "rules": rules})
    assert hand.status_code == 200, hand.text
    assert text_client.post("/v1/settle", json={**EXAMPLES["E1"], "rules": rules}).status_code == 200
    chajiao = text_client.post("/v1/chajiao", json={"rules": rules, "players": [{"concealed": "1234567892256p"},
                                                                           {"concealed": "11m123p22346799s"}]})
    assert chajiao.status_code == 200, chajiao.text
    assert main(["hand", "789m2345p123456s", "--win", "5p", "--rules", json.dumps(rules)]) == 0
    path = tmp_path / "table.json"
    path.write_text(json.dumps({**EXAMPLES["E1"], "rules": rules}), encoding="utf-8")
    assert main(["settle", str(path)]) == 0
    capsys.readouterr()


def test_bad_values_of_new_keys_are_refused(text_client):
    for rules in ({"zeren_scope": "some"}, {"yipao_chicken": 1}, {"dadiaoche": -1}, {"genzhuang": True},
                  {"tiandi_mode": "sum"}, {"bao_ji_shared": "yes"}):
        with pytest.raises(ValueError):
            get_rules(rules)
        assert text_client.post("/v1/settle", json={**EXAMPLES["E1"], "rules": rules}).status_code == 422
