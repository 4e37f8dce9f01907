"""The pure table logic (scoring.scorebook): replay, dealers and 连庄 streaks, zero-sum totals, every preset."""

from __future__ import annotations

import pytest

from scoring import settle
from scoring.rules import PRESETS
from scoring.scorebook import (
    Carry,
    add_round,
    new_scorebook,
    outcome_words,
    remove_round,
    replace_round,
    replay,
    round_state,
)
from scoring.seat_names import named_settlement
from tests.tables.support import draw_round, impossible_round, win_round

NAMES = ["Ann", "Bo", "Cy", "Di"]


def book_of(rounds, rules="gy-normal", dealer=0):
    book = new_scorebook(NAMES, rules, dealer)
    for r in rounds:
        book = add_round(book, r)
    return book


def test_dealer_and_streak_carry_from_round_to_round():
    # Seat 1 wins twice (连庄: keeps the deal), then seat 3 wins and deals next.
    standing = replay(book_of([win_round(1), win_round(1), win_round(3)]))
    assert [(r.dealer, r.streak) for r in standing.rounds] == [(0, 1), (1, 1), (1, 2)]
    assert (standing.dealer, standing.streak) == (3, 1)
    # Every round was settled with exactly the dealer and streak it shows.
    for r in standing.rounds:
        alone = named_settlement(settle({**r.round, "rules": "gy-normal", "dealer": r.dealer, "streak": r.streak}),
                                 NAMES)
        assert alone == r.settlement
        assert r.state["dealer"] == r.dealer and r.state["streak"] == r.streak


def test_totals_are_the_running_sum_and_zero_sum():
    standing = replay(book_of([win_round(1), draw_round(), win_round(2), win_round(0), draw_round()]))
    running = [0, 0, 0, 0]
    for r in standing.rounds:
        assert sum(r.deltas) == 0
        running = [a + b for a, b in zip(running, r.deltas, strict=True)]
        assert list(r.totals_after) == running
    assert list(standing.totals) == running and sum(standing.totals) == 0
    assert any(standing.totals)


def test_editing_an_early_round_changes_later_dealers():
    book = book_of([win_round(1), win_round(1), draw_round(), win_round(2)])
    before = replay(book)
    assert [r.dealer for r in before.rounds] == [0, 1, 1, 1]
    edited = replay(replace_round(book, 1, win_round(3)))
    # Round 1 now goes to seat 3: he deals round 2, and the draw of round 3 keeps a 叫牌 dealer.
    assert [r.dealer for r in edited.rounds] == [0, 3, 1, 1]
    assert [r.streak for r in edited.rounds] == [1, 1, 1, 2]
    assert edited.rounds[1].settlement != before.rounds[1].settlement  # settled again with the new dealer
    assert sum(edited.totals) == 0 and edited.totals != before.totals


def test_undo_of_any_round_renumbers_and_replays():
    book = book_of([win_round(1), win_round(2), win_round(2)])
    standing = replay(remove_round(book, 2))
    assert [r.number for r in standing.rounds] == [1, 2]
    # Without seat 2's first win, his remaining win is not a 连庄 any more.
    assert [(r.dealer, r.streak) for r in standing.rounds] == [(0, 1), (1, 1)]
    assert (standing.dealer, standing.streak) == (2, 1)
    with pytest.raises(LookupError, match="no round 4"):
        remove_round(book, 4)
    with pytest.raises(LookupError):
        replace_round(book, 0, win_round(1))


def test_resuming_from_a_carry_equals_a_full_replay():
    book = book_of([win_round(1), draw_round(), win_round(3), win_round(3), win_round(0)])
    full = replay(book)
    third = full.rounds[2]
    carry = Carry(third.settlement.next_dealer, third.settlement.next_streak, third.totals_after)
    tail = replay(book, start=4, carry=carry)
    assert tail.rounds == full.rounds[3:] and tail.totals == full.totals
    with pytest.raises(ValueError, match="carry"):
        replay(book, start=3)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_is_zero_sum_and_uses_its_rules(preset):
    rounds = [win_round(1), draw_round(), win_round(2), win_round(2), win_round(0), draw_round()]
    standing = replay(book_of(rounds, rules=preset, dealer=2))
    assert standing.rounds[0].dealer == 2
    assert sum(standing.totals) == 0
    for r in standing.rounds:
        assert r.settlement.rules.preset == preset and sum(r.deltas) == 0
    # House overrides ride along: 底分 3 triples every payment.
    tripled = replay(book_of(rounds, rules={"preset": preset, "base": 3}, dealer=2))
    assert list(tripled.totals) == [3 * t for t in standing.totals]


def test_a_bad_round_is_refused_with_its_number():
    book = book_of([win_round(1), impossible_round()])
    with pytest.raises(ValueError, match=r"^round 2: .*cannot win"):
        replay(book)
    with pytest.raises(ValueError, match="table decides"):
        round_state({**win_round(1), "dealer": 2}, "gy-normal", 0, 1)


@pytest.mark.parametrize(("players", "message"), [
    (["Ann", "Bo", "Cy"], "4 players"),
    (["Ann", "Bo", "Cy", "  "], "non-empty"),
    (["Ann", "Bo", "Cy", "Ann"], "must differ"),
    (["Ann", "Bo", "Cy", "x" * 41], "at most"),
    ("AnnBoCyDi", "4 players"),
])
def test_player_names_are_checked(players, message):
    with pytest.raises(ValueError, match=message):
        new_scorebook(players)


def test_rules_and_dealer_are_checked():
    with pytest.raises(ValueError, match="unknown rules preset"):
        new_scorebook(NAMES, "nanjing")
    with pytest.raises(ValueError, match="unknown rules key"):
        new_scorebook(NAMES, {"preset": "gy-normal", "colour": "red"})
    with pytest.raises(ValueError, match="dealer"):
        new_scorebook(NAMES, "gy-normal", 4)
    assert new_scorebook([" Ann ", "Bo", "Cy", "Di"]).players[0] == "Ann"


def test_outcome_words():
    assert outcome_words(win_round(1), NAMES) == "Bo wins on 5p, 自摸 (self-drawn)"
    assert outcome_words(impossible_round(), NAMES) == "Bo wins on 5p, 点炮 (discarded by Di)"
    assert outcome_words(draw_round(), NAMES) == "黄牌 (exhaustive draw)"
    assert "诈胡" in outcome_words({"outcome": {"type": "false_win", "player": 2}}, NAMES)
