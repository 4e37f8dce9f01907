"""结账 (settling up) at the end of an evening: who pays whom, in money, with the fewest transfers.

A table's totals (points, summing to zero) become payments between players. The fewest transfers that leave
every player with exactly his total is n − g, where n counts the players whose total is not zero and g is the
largest number of groups those players split into with each group summing to zero (each group of k settles
with k − 1 transfers and never fewer: k players need k − 1 links to be connected). The groups are found by
trying every split (dynamic programming over the subsets: a table has four players). Within a group the
largest debtor pays the largest creditor until all are square: each transfer squares at least one player and
the last squares two, so a group of k takes k − 1.

Money: each payment is its points × the money per point, rounded to the cent (half up); a per point in whole
cents (``2``, ``0.5``, ``1.25``) is exact. Every cent paid is a cent received, so each player's money
(``amounts``) is the sum of his payments and the amounts sum to zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")
MAX_PER_POINT = Decimal(1_000_000)
MAX_PLAYERS = 12  # the subset search is 3^n; a table has 4


@dataclass(frozen=True)
class Payment:
    payer: int  # seat
    payee: int  # seat
    points: int
    amount: Decimal  # points × per point, to the cent


@dataclass(frozen=True)
class SettleUp:
    per_point: Decimal
    totals: tuple[int, ...]  # points per seat, as the table stands
    payments: tuple[Payment, ...]

    @property
    def amounts(self) -> tuple[Decimal, ...]:
        """Money per seat: received minus paid."""
        money = [Decimal(0)] * len(self.totals)
        for p in self.payments:
            money[p.payer] -= p.amount
            money[p.payee] += p.amount
        return tuple(money)


def per_point_value(value: object) -> Decimal:
    """The money a point is worth: a positive number up to a million (text such as ``"0.5"`` or a number);
    ``ValueError`` otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"per_point must be a positive number, not {value!r}")
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError(f"per_point must be a positive number, not {str(value)[:40]!r}") from None
    if not number.is_finite() or not 0 < number <= MAX_PER_POINT:
        raise ValueError(f"per_point must be a number above 0 and at most {MAX_PER_POINT}, not {str(value)[:40]}")
    return number


def settle_up(totals: Sequence[int], per_point: object = 1) -> SettleUp:
    """The fewest payments that square ``totals`` (points per seat, summing to zero), with their money."""
    rate = per_point_value(per_point)
    if sum(totals) != 0:
        raise ValueError(f"totals must sum to zero, not {sum(totals)}: {list(totals)}")
    payments = tuple(Payment(a, b, points, (points * rate).quantize(CENT, ROUND_HALF_UP))
                     for a, b, points in fewest_transfers(totals))
    return SettleUp(rate, tuple(totals), payments)


def fewest_transfers(nets: Sequence[int]) -> list[tuple[int, int, int]]:
    """(payer, payee, points) transfers, as few as possible, after which every seat's net is zero: a seat
    with a negative net pays, a positive one receives."""
    seats = [s for s, n in enumerate(nets) if n]
    if len(seats) > MAX_PLAYERS:
        raise ValueError(f"at most {MAX_PLAYERS} players with a balance, not {len(seats)}")
    transfers = []
    for group in zero_sum_groups([nets[s] for s in seats]):
        transfers += _square([seats[i] for i in group], nets)
    return transfers


def zero_sum_groups(values: Sequence[int]) -> list[list[int]]:
    """Indexes of ``values`` (summing to zero, none zero) split into as many zero-sum groups as possible."""
    n = len(values)
    full = (1 << n) - 1
    total = [0] * (1 << n)
    for mask in range(1, 1 << n):
        low = mask & -mask
        total[mask] = total[mask ^ low] + values[low.bit_length() - 1]
    # best[mask]: most zero-sum groups a zero-sum ``mask`` splits into; pick[mask]: the group with its lowest
    # index (fixing that index keeps each split from being counted in every order).
    best, pick = {0: 0}, {}
    for mask in range(1, full + 1):
        if total[mask]:
            continue
        low = mask & -mask
        rest = mask ^ low
        sub = rest
        while True:
            group = sub | low
            if total[group] == 0 and (mask ^ group) in best and best[mask ^ group] + 1 > best.get(mask, 0):
                best[mask], pick[mask] = best[mask ^ group] + 1, group
            if sub == 0:
                break
            sub = (sub - 1) & rest
    groups, mask = [], full
    while mask:
        group = pick[mask]
        groups.append([i for i in range(n) if group >> i & 1])
        mask ^= group
    return groups


def _square(group: list[int], nets: Sequence[int]) -> list[tuple[int, int, int]]:
    """A zero-sum group squared by the largest debtor paying the largest creditor, again and again."""
    owed = {s: nets[s] for s in group}
    transfers = []
    while any(owed.values()):
        payer = min(owed, key=lambda s: (owed[s], s))
        payee = max(owed, key=lambda s: (owed[s], -s))
        points = min(-owed[payer], owed[payee])
        transfers.append((payer, payee, points))
        owed[payer] += points
        owed[payee] -= points
    return transfers
