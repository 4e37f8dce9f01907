"""The 12 worked examples of docs/rules.md#examples, built from docs/rules.md#examples and #example-tiles, with their stated results."""

from __future__ import annotations

from typing import Any

import pytest

from scoring import settle
from tests.scoring.settle_tables import EXAMPLES, column, example, paid

TOTALS = {
    "E1": [2, 10, -8, -4],
    "E2": [10, -3, 2, -9],
    "E3": [21, -4, -10, -7],
    "E4": [5, -3, 3, -5],
    "E5": [7, 5, -3, -9],
    "E6": [-16, -18, 56, -22],
    "E7": [-5, 27, -8, -14],
    "E8": [-2, 13, -2, -9],
    "E9": [-15, 16, -4, 3],
    "E10": [20, -11, 2, -11],
    "E11": [-25, 68, -27, -16],
    "E12": [21, -4, -13, -4],
}

# 叫牌 status and waits of the non-winners as docs/rules.md#example-tiles states them.
WAITS = {
    "E1": {0: ["4m", "7m"], 2: [], 3: []},
    "E2": {0: ["5p", "8p"], 1: [], 3: []},
    "E3": {1: ["3s", "6s", "9s"], 2: [], 3: []},
    "E4": {0: ["1m"], 1: ["5s", "8s"], 3: []},
    "E5": {1: ["1m"], 2: [], 3: []},
    "E6": {0: ["6s"], 1: [], 3: []},
    "E7": {0: ["3m"], 2: [], 3: []},
    "E8": {0: [], 2: [], 3: ["1s"]},
    "E9": {0: [], 2: ["5m", "8m"]},
    "E10": {0: ["4p", "7p"], 1: [], 2: ["5m", "8m"], 3: []},
    "E11": {0: [], 2: [], 3: ["1s"]},
    "E12": {1: ["2m"], 2: ["1s"], 3: []},
}


@pytest.fixture(scope="module")
def results() -> dict[str, dict[str, Any]]:
    return {name: settle(state) for name, state in EXAMPLES.items()}


@pytest.mark.parametrize("name", TOTALS)
def test_totals(results, name):
    assert column(results[name], "total") == TOTALS[name]


@pytest.mark.parametrize("name", TOTALS)
def test_ready_and_waits_match_section_11_1(results, name):
    players = results[name].players
    for seat, waits in WAITS[name].items():
        assert list(players[seat].waits) == waits
        assert players[seat].ting == bool(waits)


def test_e1_components(results):
    r = results["E1"]
    assert column(r, "hand") == [-2, 6, -2, -2]  # 平胡自摸 W=2 from each
    assert column(r, "chicken") == [4, 4, -6, -2]
    chickens = paid(r, "chicken")
    assert chickens[2, 0] == 1 + 2 and chickens[2, 1] == 1 + 2  # V0, V1 and 包鸡 of the 冲锋鸡
    assert chickens[3, 0] == 1 and chickens[3, 1] == 1  # P3's 1s×2 in hand are ignored (not 叫牌)
    assert r.next_dealer == 1 and r.next_streak == 1


def test_e2_components(results):
    r = results["E2"]
    assert paid(r, "hand") == {(3, 2): 5}
    chickens = paid(r, "chicken")
    assert chickens == {(1, 0): 3, (2, 0): 3, (3, 0): 3 + 1}  # V0=3 (pong of 1s) and 责任鸡 +1
    assert [e for e in r.ledger if "责任鸡" in e.reason][0].fan == 1


def test_e3_components(results):
    r = results["E3"]
    assert column(r, "hand") == [9, -3, -3, -3]  # 平胡自摸 2 + 杠上花 1
    assert column(r, "dou") == [9, 0, -6, -3]  # 闷豆 3 each; 点豆 P2→P1 3; P3's 转弯豆 void
    assert paid(r, "dou")[2, 1] == 3
    assert column(r, "chicken") == [3, -1, -1, -1]
    assert r.players[0].win.value == 3


def test_e4_components(results):
    r = results["E4"]
    assert paid(r, "hand") == {(1, 2): 2}  # 热炮: W 1 + 1
    assert column(r, "dou") == [0, 0, 0, 0]  # P1's 转弯豆 burned
    assert [p.burned for p in r.players] == [False, True, False, False]
    chickens = paid(r, "chicken")
    assert chickens[3, 0] == 1 + 2 and chickens[3, 2] == 2 and (3, 1) not in chickens  # 包鸡 not to burned P1
    assert column(r, "chicken") == [5, -1, 1, -5]


def test_e5_components(results):
    r = results["E5"]
    assert paid(r, "hand") == {(3, 0): 6}  # 抢杠: counts as 自摸, W=2, robbed pays 3×W
    assert column(r, "chicken") == [1, 5, -3, -3]  # V0=1 (the robbed 6s is the 翻鸡), V1=2
    assert r.players[0].win.value == 2


def test_e6_components(results):
    r = results["E6"]
    assert column(r, "hand") == [-10, -10, 30, -10]  # 龙七对 10, no 自摸 bonus
    chickens = paid(r, "chicken")
    assert chickens[1, 2] == 8  # V2 = 2×2 (金鸡) + 4 (金冲锋鸡)
    assert chickens[3, 0] == 2 and chickens[3, 2] == 8 + 2  # 包鸡 of a 1s under 金鸡 is 2 (docs/rules.md#decisions)
    assert r.players[2].win.hand_type.key == "longqidui"


def test_e7_components(results):
    r = results["E7"]
    assert r.rules.preset == "gy-reduced"
    assert column(r, "hand") == [-8, 24, -8, -8]  # 清大对 8 (reduced)
    assert paid(r, "chicken") == {(3, 0): 3, (3, 1): 3}  # 冲锋鸡 2 + another 1s 1, no 翻鸡


def test_e8_components_and_zimo_variant(results):
    r = results["E8"]
    assert paid(r, "hand") == {(3, 1): 11}  # 杀报: W 1 + Q 10
    assert column(r, "chicken") == [-2, 2, -2, 2]  # V1=1 (3s), V3=1 (1s)
    variant = settle(example("E8", outcome={"type": "win", "winners": [1], "win_tile": "2m", "self_drawn": True}))
    assert column(variant, "hand") == [-2, 16, -2, -12]


def test_e9_components_and_next_dealer(results):
    r = results["E9"]
    assert paid(r, "hand") == {(0, 1): 5, (0, 3): 1}
    assert paid(r, "dou") == {(2, 3): 3}
    chickens = paid(r, "chicken")
    assert chickens[0, 1] == 3 + 2 and chickens[0, 2] == 2 and chickens[0, 3] == 2  # V1 once + 包鸡 to each
    assert chickens[2, 1] == 3 and chickens[3, 1] == 3
    assert r.next_dealer == 1 and r.next_streak == 1


def test_e10_components(results):
    r = results["E10"]
    assert paid(r, "hand") == {(1, 0): 10, (1, 2): 1, (3, 0): 10, (3, 2): 1}
    assert column(r, "dou") == column(r, "chicken") == [0, 0, 0, 0]
    assert r.next_dealer == 0 and r.next_streak == 2


def test_e11_components(results):
    r = results["E11"]
    assert r.players[1].win.hand_type.key == "shuanglong" and r.players[1].win.hand_type.fan == 20
    assert paid(r, "hand") == {(0, 1): 21, (2, 1): 20, (3, 1): 20}  # dealer pays 20 + k=1
    assert paid(r, "dou") == {(0, 3): 1}  # LPS 点豆 1
    chickens = paid(r, "chicken")
    assert chickens[0, 1] == 2 and chickens[2, 1] == 2 + 2 and chickens[2, 3] == 1 + 2  # V1=2, V3=1, 包鸡 2


def test_e11_under_gy_normal():
    r = settle(example("E11", rules="gy-normal"))
    assert r.players[1].win.hand_type.key == "longqidui"
    assert paid(r, "hand") == {(0, 1): 10, (2, 1): 10, (3, 1): 10}  # 龙七对 10, no k
    assert paid(r, "dou") == {(0, 3): 3}  # 点豆 3
    assert sum(column(r, "total")) == 0


def test_e12_components(results):
    r = results["E12"]
    assert paid(r, "hand") == {(2, 0): 9}  # 3 × (W 1 + k 2)
    assert column(r, "dou") == [0, 0, 0, 0]  # P2's 闷豆 burned (燒光)
    assert r.players[2].burned and r.players[2].ting
    assert column(r, "chicken") == [12, -4, -4, -4]  # V0 = 3 (1s) + 1 (7m); P2's 1s void
    assert r.next_dealer == 0 and r.next_streak == 3


def test_e12_under_gy_normal():
    r = settle(example("E12", rules="gy-normal", streak=1))
    assert paid(r, "hand") == {(2, 0): 6}  # 3 × W 2, no k
    assert not r.players[2].burned
    assert column(r, "dou")[2] == 9  # his 闷豆 scores: he is 叫牌
    assert sum(column(r, "total")) == 0


@pytest.mark.parametrize("name", TOTALS)
def test_each_component_is_zero_sum(results, name):
    for key in ("hand", "dou", "chicken", "total"):
        assert sum(column(results[name], key)) == 0
