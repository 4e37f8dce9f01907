"""结账 (settling up): the fewest transfers that square a table's totals, and their money (tables/payments.py).

Hand-derived examples, each derivation beside it, then properties over random totals: each seat's net equals its
total, at most n − 1 transfers for n seats with a balance, and never more than a brute force finds.
"""

from __future__ import annotations

import itertools
import random
from decimal import Decimal

import pytest

from tables.payments import fewest_transfers, settle_up, zero_sum_groups


def nets(transfers, seats):
    out = [0] * seats
    for payer, payee, points in transfers:
        out[payer] -= points
        out[payee] += points
    return out


def test_one_winner_is_paid_by_each_loser():
    # [12, −5, −4, −3]: no two or three of them sum to 0 (12 needs all three losers), so one group of four and
    # 4 − 1 = 3 transfers, each loser paying seat 0 his whole debt. At 0.5 a point: 2.50, 2.00, 1.50.
    result = settle_up([12, -5, -4, -3], "0.5")
    assert [(p.payer, p.payee, p.points, p.amount) for p in result.payments] == [
        (1, 0, 5, Decimal("2.50")), (2, 0, 4, Decimal("2.00")), (3, 0, 3, Decimal("1.50"))]
    assert result.amounts == (Decimal("6.0"), Decimal("-2.50"), Decimal("-2.00"), Decimal("-1.50"))


def test_two_pairs_that_square_each_other_take_two_transfers():
    # [8, −8, 3, −3]: {0, 1} and {2, 3} each sum to 0: two groups, 4 − 2 = 2 transfers (one per pair), not 3.
    # At 1.25 a point: 8 × 1.25 = 10.00 and 3 × 1.25 = 3.75.
    result = settle_up([8, -8, 3, -3], 1.25)
    assert [(p.payer, p.payee, p.points, p.amount) for p in result.payments] == [
        (1, 0, 8, Decimal("10.00")), (3, 2, 3, Decimal("3.75"))]


def test_a_pair_among_four_is_squared_apart():
    # [3, 7, −7, −3]: {1, 2} and {0, 3} each sum to 0: 4 − 2 = 2 transfers, seat 2 → 1 (7) and seat 3 → 0 (3).
    assert sorted(fewest_transfers([3, 7, -7, -3])) == [(2, 1, 7), (3, 0, 3)]
    # [6, 4, −5, −5]: no pair or triple sums to 0 (6−5 = 1, 4−5 = −1, 6+4−5 = 5, 6−5−5 = −4, 4−5−5 = −6),
    # so one group: 4 − 1 = 3 transfers.
    assert len(fewest_transfers([6, 4, -5, -5])) == 3


def test_seats_at_zero_take_no_part_and_nothing_is_owed_when_all_are_square():
    # [0, 6, −6, 0]: only seats 1 and 2 have a balance: 2 − 1 = 1 transfer.
    assert fewest_transfers([0, 6, -6, 0]) == [(2, 1, 6)]
    assert settle_up([0, 0, 0, 0]).payments == ()


def test_money_is_rounded_per_payment_and_no_cent_is_lost():
    # 1 point × 0.005 = 0.005 → 0.01 (half up) on each of the two payments: seat 2 pays 0.02, seats 0 and 1 get
    # 0.01 each; what is paid is what is received.
    result = settle_up([1, 1, -2, 0], "0.005")
    assert [p.amount for p in result.payments] == [Decimal("0.01"), Decimal("0.01")]
    assert sum(result.amounts) == 0 and result.amounts[2] == Decimal("-0.02")


@pytest.mark.parametrize("per_point", [0, -1, "abc", "nan", "inf", True, 2_000_000])
def test_a_per_point_that_is_no_positive_number_is_refused(per_point):
    with pytest.raises(ValueError, match="per_point"):
        settle_up([1, -1, 0, 0], per_point)


def test_totals_that_do_not_sum_to_zero_are_refused():
    with pytest.raises(ValueError, match="sum to zero"):
        settle_up([1, 0, 0, 0])


def _root(part, s):
    while part[s] != s:
        s = part[s]
    return s


def brute_force_fewest(values):
    """The fewest transfers by trying every set of pairs: a set of k pairs can carry the balances exactly when
    each seat with a balance is in a pair and every connected part of the pairs sums to zero."""
    seats = [s for s, v in enumerate(values) if v]
    pairs = list(itertools.combinations(seats, 2))
    for k in range(len(pairs) + 1):
        for chosen in itertools.combinations(pairs, k):
            part = {s: s for s in seats}
            for a, b in chosen:
                part[_root(part, a)] = _root(part, b)
            sums = {}
            for s in seats:
                sums[_root(part, s)] = sums.get(_root(part, s), 0) + values[s]
            alone = [s for s in seats if not any(s in pair for pair in chosen)]
            if not alone and all(v == 0 for v in sums.values()):
                return k
    raise AssertionError("unreachable: all pairs connect every seat")


def random_totals(rng, players):
    values = [rng.choice([0, 0, *range(-12, 13)]) for _ in range(players - 1)]
    return [*values, -sum(values)]


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_random_totals_square_with_the_fewest_transfers(players):
    rng = random.Random(52 + players)
    for _ in range(300):
        totals = random_totals(rng, players)
        transfers = fewest_transfers(totals)
        assert nets(transfers, players) == totals, totals
        assert all(points > 0 and payer != payee for payer, payee, points in transfers)
        with_balance = sum(1 for t in totals if t)
        assert len(transfers) <= max(0, with_balance - 1)
        assert len(transfers) == brute_force_fewest(totals), totals


def test_the_groups_split_every_balance_into_zero_sums():
    rng = random.Random(7)
    for _ in range(200):
        values = [v for v in random_totals(rng, 4) if v]
        groups = zero_sum_groups(values)
        assert sorted(i for g in groups for i in g) == list(range(len(values)))
        assert all(sum(values[i] for i in g) == 0 for g in groups)


def test_each_payment_is_its_points_times_the_rate_to_the_cent():
    rng = random.Random(11)
    for _ in range(200):
        totals = random_totals(rng, 4)
        rate = Decimal(rng.choice(["1", "0.5", "2.25", "0.1", "3"]))
        result = settle_up(totals, rate)
        assert all(p.amount == p.points * rate for p in result.payments)  # whole cents: exact
        assert result.amounts == tuple(t * rate for t in totals)
