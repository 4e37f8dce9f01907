"""黄牌 (exhaustive draw) with hands not shown: a seat may be ``{"not_ready": true}`` (not 叫牌, no tiles).

docs/rules.md#chajiao: at a draw only 查叫 is paid (no 豆, no 鸡): each player not 叫牌 pays each 叫牌 player that
player's best fan. A hand not shown cannot be judged, so the table says it is not 叫牌; a 叫牌 hand must be
shown (its waits decide what it is paid). A winner's hand and a penalized player's are judged from their tiles, so
they are never told (quick rounds of the others: tests/scoring/test_quick_rounds.py).
"""

from __future__ import annotations

import copy

import pytest

from scoring import settle
from tests.scoring.settle_tables import EXAMPLES, column, example, first_1s, zimo

NOT_SHOWN = {"not_ready": True}


def hidden(state: dict, *seats: int) -> dict:
    state = copy.deepcopy(state)
    for s in seats:
        state["players"][s] = dict(NOT_SHOWN)
    return state


def test_e10_with_the_two_hands_not_ready_left_unshown_settles_as_with_every_hand():
    full = settle(EXAMPLES["E10"])
    short = settle(hidden(EXAMPLES["E10"], 1, 3))
    assert column(short, "total") == column(full, "total") == [20, -11, 2, -11]  # E10 (docs/rules.md#examples)
    assert (short.next_dealer, short.next_streak) == (full.next_dealer, full.next_streak)
    assert [p.ting for p in short.players] == [True, False, True, False]
    assert "P1 (said not ready, hand not shown)" in short.explanation[1]


def test_a_ready_dealer_hidden_is_no_longer_paid_and_the_deal_moves():
    # The dealer P0 said not ready: P2 (叫牌) is paid by P0, P1 and P3, and is nearest the dealer in turn order.
    result = settle(hidden(EXAMPLES["E10"], 0, 1, 3))
    assert column(result, "total") == [-1, -1, 3, -1]
    assert result.next_dealer == 2


def test_nobody_shown_nobody_pays_and_the_dealer_stays():
    result = settle(hidden(EXAMPLES["E10"], 0, 1, 2, 3))
    assert column(result, "total") == [0, 0, 0, 0] and result.next_dealer == 0
    assert any("nobody is 叫牌" in line for line in result.explanation)


def test_genzhuang_is_still_paid_at_a_draw_with_hands_not_shown():
    state = hidden(EXAMPLES["E10"], 1, 3)
    state.update(gen_zhuang=True, rules={"preset": "gy-normal", "genzhuang": 4})
    assert column(settle(state), "total") == [20 - 12, -11 + 4, 2 + 4, -11 + 4]


def test_a_first_1s_record_of_a_hand_not_shown_is_accepted_at_a_draw():
    # The 1s is in the river of a hand not shown: nothing to check it against, and a draw pays no 鸡.
    state = hidden(EXAMPLES["E10"], 1, 3)
    state["first_1s"] = first_1s(3)
    assert column(settle(state), "total") == [20, -11, 2, -11]


@pytest.mark.parametrize("change, seat, fragment", [
    ({"outcome": zimo(1, "5p")}, 1, "P1 won, so his hand is judged from its tiles"),
    ({"outcome": {"type": "false_win", "player": 2}, "flipped": None}, 2, "P2's penalty is judged from his tiles"),
])
def test_a_winner_or_penalized_hand_not_shown_is_refused(change, seat, fragment):
    state = hidden(example("E1", **change), seat)
    with pytest.raises(ValueError, match=fragment):
        settle(state)


def test_a_ready_hand_at_a_draw_must_be_shown():
    state = copy.deepcopy(EXAMPLES["E10"])
    state["players"][0] = {"ready": True}
    with pytest.raises(ValueError, match="P0 is said to be ready .* at 黄牌"):
        settle(state)


@pytest.mark.parametrize("seat_value, fragment", [
    ({"not_ready": True, "concealed": "123m"}, "give no concealed"),
    ({"not_ready": True, "ready": True}, "both ready and not_ready"),
    ({"holds": "1s"}, "holds .* without ready or not_ready"),
    ({}, "lacks 'concealed'"),
    ({"not_ready": "yes"}, "must be true or false"),
])
def test_a_seat_is_its_tiles_or_not_ready_never_both_or_neither(seat_value, fragment):
    state = copy.deepcopy(EXAMPLES["E10"])
    state["players"][1] = seat_value
    with pytest.raises(ValueError, match=fragment):
        settle(state)


def test_not_ready_false_is_an_ordinary_seat():
    state = copy.deepcopy(EXAMPLES["E10"])
    state["players"][1]["not_ready"] = False
    assert settle(state) == settle(EXAMPLES["E10"])
