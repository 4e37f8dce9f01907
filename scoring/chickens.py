"""鸡 (chickens): which tiles score, what each is worth, who pays whom (RULES.md §6, §12.1.1, §12.1.4).

Entry point: :func:`chicken_transfers`. Chickens are settled only when somebody won; once per hand, however
many players won.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from scoring.ledger import Transfer
from scoring.rules import Rules
from scoring.table import SEATS, Table, Win

YAOJI = "1s"  # 幺鸡, the fixed chicken
WUGUJI = "8p"  # 乌骨鸡, fixed chicken when rules.wuguji


@dataclass(frozen=True)
class ChickenKinds:
    """The chicken tiles of this hand and their worth."""

    flipped_chicken: str | None  # 翻鸡: the tile after the flipped indicator F
    golden: bool  # 金鸡: F = 9s, so the 翻鸡 is 1s itself and every 1s is worth double
    rules: Rules

    def is_fixed(self, tile: str) -> bool:
        """Fixed chickens (幺鸡, 乌骨鸡 when played) count from a river and are 包鸡 (paid by a non-叫牌 owner)."""
        return tile == YAOJI or (self.rules.wuguji and tile == WUGUJI)

    def value(self, tile: str) -> int:
        """Worth of one tile under one identity only (§6.1): fixed chicken first, then 翻鸡."""
        if tile == YAOJI:
            return 2 if self.golden else 1
        if self.rules.wuguji and tile == WUGUJI:
            return self.rules.wuguji_value * (2 if self.flipped_chicken == WUGUJI else 1)
        return 1 if tile == self.flipped_chicken else 0

    def chongfeng_value(self) -> int:
        """冲锋鸡 (charging chicken): 2 replacing the base 1, or base 1 + 2 (additive); doubled under 金鸡."""
        worth = 2 if self.rules.chongfeng_mode == "replace" else 3
        return worth * (2 if self.golden else 1)

    def label(self, tile: str) -> str:
        if tile == YAOJI:
            return "幺鸡 (fixed chicken" + (", ×2 under 金鸡 golden chicken)" if self.golden else ")")
        if self.rules.wuguji and tile == WUGUJI:
            return "乌骨鸡 (black-bone chicken" + (", ×2 golden)" if self.flipped_chicken == WUGUJI else ")")
        return "翻鸡 (flipped chicken)"


def flipped_chicken(indicator: str) -> str:
    """翻鸡: same suit, next rank, 9 → 1 (翻 5m → 6m; 翻 9p → 1p)."""
    rank, suit = int(indicator[0]), indicator[1]
    return f"{rank % 9 + 1}{suit}"


def chicken_transfers(table: Table, ting: list[bool], burned: set[int]) -> tuple[list[Transfer], list[str]]:
    """Chicken payments and explanation lines.

    ``ting[p]``: p is 叫牌 (ready) at settlement. ``burned``: seats whose chicken income is void (全烧/燒光).
    """
    if not isinstance(table.outcome, Win):
        return [], []
    rules = table.rules
    flip = None if table.flipped is None else flipped_chicken(table.flipped)
    kinds = ChickenKinds(flip, flip == YAOJI, rules)
    lines: list[str] = []
    if flip is None:
        lines.append("No 翻鸡 (flipped chicken): the wall was empty")
    elif kinds.golden:
        lines.append(f"翻鸡 (flipped chicken): F={table.flipped} → 1s, 金鸡 (golden chicken): every 1s is worth 2")
    else:
        lines.append(f"翻鸡 (flipped chicken): F={table.flipped} → {flip}")

    chongfeng_seat = _chongfeng_seat(table)
    # Without the 叫牌 requirement (P2, P5) everyone collects for his own chickens and 包鸡 does not arise.
    collects = [ting[p] or not rules.chicken_requires_ting for p in range(SEATS)]
    transfers: list[Transfer] = []

    for p in range(SEATS):
        if not collects[p]:
            continue
        items = _counted_chickens(table, kinds, p, chongfeng_seat)
        worth = sum(v for _, _, v in items)
        if worth == 0:
            continue
        if p in burned:
            lines.append(f"全烧 (burned): P{p}'s chickens ({_describe(items)}) earn nothing")
            continue
        payers = [q for q in range(SEATS) if q != p and (rules.chicken_payers == "all_others" or not ting[q])]
        for q in payers:
            transfers.append(Transfer(q, p, worth, "chicken",
                                      f"鸡 (chickens): P{q} pays P{p} {worth} for {_describe(items)}"))

    if rules.bao_ji and rules.chicken_requires_ting:
        for q in range(SEATS):
            if collects[q]:
                continue
            items = _river_fixed_chickens(table, kinds, q, chongfeng_seat)
            owed = sum(v for _, _, v in items)
            if owed == 0:
                continue
            for p in range(SEATS):
                if p != q and collects[p] and p not in burned:
                    transfers.append(Transfer(q, p, owed, "chicken",
                                              f"包鸡 (chicken liability): P{q} pays P{p} {owed} for "
                                              f"{_describe(items)} in P{q}'s river (P{q} not 叫牌)"))

    first = table.first_1s
    if first is not None and first.claimed_by is not None and not table.first_1s_is_win_tile():
        d, r = first.discarder, first.claimed_by
        extra = rules.zeren_extra * (2 if kinds.golden else 1)
        if collects[r] and r not in burned and extra:
            transfers.append(Transfer(d, r, extra, "chicken",
                                      f"责任鸡 (responsibility chicken): P{d} pays P{r} {extra} extra, "
                                      f"P{r} claimed the first discarded 1s"))
    return transfers, lines


def _chongfeng_seat(table: Table) -> int | None:
    """Seat whose river holds the 冲锋鸡: the first discarded 1s, unclaimed and still in the river (§12.1.4)."""
    first = table.first_1s
    if first is None or first.claimed_by is not None:
        return None
    return first.discarder if YAOJI in table.players[first.discarder].river else None


def _counted_chickens(table: Table, kinds: ChickenKinds, seat: int,
                      chongfeng_seat: int | None) -> list[tuple[str, str, int]]:
    """(tile, identity, worth) of every chicken in the scope S(p) of §6.3: hand, melds, own river."""
    player = table.players[seat]
    held = [*table.hand(seat), *player.meld_tiles]
    items = [(t, kinds.label(t), kinds.value(t)) for t in held if kinds.value(t)]
    if table.rules.chicken_scope == "mantang":
        river_items = [(t, kinds.label(t), kinds.value(t)) for t in player.river
                       if kinds.value(t) and not kinds.is_fixed(t)]
        items += river_items
    # Discarded fixed chickens count under both scopes (满堂鸡 and 手上鸡).
    return items + _river_fixed_chickens(table, kinds, seat, chongfeng_seat)


def _river_fixed_chickens(table: Table, kinds: ChickenKinds, seat: int,
                          chongfeng_seat: int | None) -> list[tuple[str, str, int]]:
    """Fixed chickens in a seat's river; the first 1s there is the 冲锋鸡 when this seat discarded it."""
    items = []
    chongfeng_pending = seat == chongfeng_seat
    for t in table.players[seat].river:
        if not kinds.is_fixed(t):
            continue
        if t == YAOJI and chongfeng_pending:
            chongfeng_pending = False
            items.append((t, "冲锋鸡 (charging chicken: first discarded 1s)", kinds.chongfeng_value()))
        else:
            items.append((t, kinds.label(t), kinds.value(t)))
    return items


def _describe(items: list[tuple[str, str, int]]) -> str:
    """``1s×2 幺鸡 (fixed chicken) = 2, 5m 翻鸡 (flipped chicken) = 1``."""
    groups = Counter((tile, label) for tile, label, _ in items)
    worth = {(tile, label): v for tile, label, v in items}
    parts = []
    for (tile, label), n in groups.items():
        count = f"×{n}" if n > 1 else ""
        parts.append(f"{tile}{count} {label} = {n * worth[(tile, label)]}")
    return ", ".join(parts)
