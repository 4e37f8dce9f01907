"""鸡 (chickens): which tiles score, what each is worth, who pays whom (RULES.md §6, §12.1.1, §12.1.4).

Entry point: :func:`chicken_transfers`. Chickens are settled only when somebody won; once per hand, however
many players won. House rules (docs/house-rules.md): the first 8p as a 冲锋鸡 (``wuguji_chongfeng``), a claimed
冲锋鸡 moving to a 叫牌 claimer (``chongfeng_moves``), 包鸡 shared by every non-叫牌 player (``bao_ji_shared``),
every claimed 1s a 责任鸡 (``zeren_scope=all``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from scoring.ledger import Transfer
from scoring.rules import Rules
from scoring.table import SEATS, FirstOneS, Table, Win
from scoring.tiles import tile_index

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

    def chongfeng_value(self, tile: str = YAOJI) -> int:
        """冲锋鸡 (charging chicken): its worth doubled (加倍, replacing the base) or tripled (base + twice the
        base, additive): a 1s 2/4 or 3/6 under 金鸡; a 冲锋 8p from its 乌骨鸡 value the same way."""
        return (2 if self.rules.chongfeng_mode == "replace" else 3) * self.value(tile)

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

    holders = _win_tile_holders(table)
    win = table.outcome
    assert isinstance(win, Win)
    if len(holders) < len(win.winners) and kinds.value(win.win_tile):
        lines.append(f"一炮多响 (several winners on one discard): the one winning tile {win.win_tile} counts once, "
                     f"for P{holders[0]} (the first winner from P{win.discarder}'s 下家 next seat)")
    charging = _chongfeng(table, ting)
    lines += [c.line for c in charging if c.line]
    # Without the 叫牌 requirement (P2, P5) everyone collects for his own chickens and 包鸡 does not arise.
    collects = [ting[p] or not rules.chicken_requires_ting for p in range(SEATS)]
    transfers: list[Transfer] = []

    for p in range(SEATS):
        if not collects[p]:
            continue
        items = _counted_chickens(table, kinds, p, charging, holders)
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
        transfers += _bao_ji(table, kinds, collects, burned, charging)

    for d, r, which in _zeren_pairs(table):
        extra = rules.zeren_extra * (2 if kinds.golden else 1)
        if collects[r] and r not in burned and extra:
            transfers.append(Transfer(d, r, extra, "chicken",
                                      f"责任鸡 (responsibility chicken): P{d} pays P{r} {extra} extra, "
                                      f"P{r} claimed {which}"))
    return transfers, lines


Item = tuple[str, str, int]  # (tile, identity, worth)


@dataclass(frozen=True)
class Chongfeng:
    """A 冲锋鸡 (charging chicken) and where it counts: ``river`` (the first copy in the discarder's river),
    ``meld`` (moved into a 叫牌 claimer's pong/kong) or ``stays`` (claimed by a player not 叫牌: it stays with
    the discarder although it left his river) — the last two only under ``chongfeng_moves``."""

    tile: str
    seat: int
    place: str
    line: str = ""


def _chongfeng(table: Table, ting: list[bool]) -> list[Chongfeng]:
    """The 冲锋鸡 of this hand: the first discarded 1s (and 8p under ``wuguji_chongfeng``), §6.2, §12.1.4."""
    rules = table.rules
    firsts: list[tuple[FirstOneS | None, str]] = [(table.first_1s, YAOJI)]
    if rules.wuguji and rules.wuguji_chongfeng:
        firsts.append((table.first_8p, WUGUJI))
    found = []
    for first, tile in firsts:
        if first is None:
            continue
        d, r = first.discarder, first.claimed_by
        if r is None:
            if tile in table.players[d].river:
                found.append(Chongfeng(tile, d, "river"))
        elif rules.chongfeng_moves and not table.first_is_win_tile(first, tile):
            if ting[r]:
                found.append(Chongfeng(tile, r, "meld", f"冲锋鸡 (charging chicken) {tile}: claimed by P{r}, who is "
                                                        f"叫牌 (ready), so it moves to P{r}"))
            else:
                found.append(Chongfeng(tile, d, "stays", f"冲锋鸡 (charging chicken) {tile}: claimed by P{r}, who is "
                                                         f"not 叫牌, so it stays with P{d}"))
    return found


def _win_tile_holders(table: Table) -> list[int]:
    """Winners whose hand holds the winning tile for chickens: every winner, or under ``yipao_chicken=first``
    only the first winner counting from the discarder's 下家 (§7 order) — one physical tile, counted once."""
    win = table.outcome
    assert isinstance(win, Win)
    if len(win.winners) == 1 or table.rules.yipao_chicken == "each":
        return list(win.winners)
    assert win.discarder is not None  # several winners: a discard win
    return [next((win.discarder + i) % SEATS for i in range(1, SEATS) if (win.discarder + i) % SEATS in win.winners)]


def _counted_chickens(table: Table, kinds: ChickenKinds, seat: int, charging: list[Chongfeng],
                      holders: list[int]) -> list[Item]:
    """(tile, identity, worth) of every chicken in the scope S(p) of §6.3: hand, melds, own river."""
    player = table.players[seat]
    win = table.outcome
    assert isinstance(win, Win)
    hand = [*player.hand_tiles, *([win.win_tile] if seat in holders else [])]
    items = [(t, kinds.label(t), kinds.value(t)) for t in [*hand, *player.meld_tiles] if kinds.value(t)]
    for c in charging:
        if c.place == "meld" and c.seat == seat:
            # One tile of the claimer's pong/kong is the 冲锋鸡: its worth replaces the plain one.
            items.remove((c.tile, kinds.label(c.tile), kinds.value(c.tile)))
            items.append((c.tile, f"冲锋鸡 (charging chicken: first discarded {c.tile}, claimed)",
                          kinds.chongfeng_value(c.tile)))
    if table.rules.chicken_scope == "mantang":
        river_items = [(t, kinds.label(t), kinds.value(t)) for t in player.river
                       if kinds.value(t) and not kinds.is_fixed(t)]
        items += river_items
    # Discarded fixed chickens count under both scopes (满堂鸡 and 手上鸡).
    return items + _river_fixed_chickens(table, kinds, seat, charging)


def _river_fixed_chickens(table: Table, kinds: ChickenKinds, seat: int, charging: list[Chongfeng]) -> list[Item]:
    """Fixed chickens in a seat's river; the first 1s (8p) there is the 冲锋鸡 when this seat discarded it."""
    items = []
    pending = {c.tile for c in charging if c.place == "river" and c.seat == seat}
    for t in table.players[seat].river:
        if not kinds.is_fixed(t):
            continue
        if t in pending:
            pending.discard(t)
            items.append((t, f"冲锋鸡 (charging chicken: first discarded {t})", kinds.chongfeng_value(t)))
        else:
            items.append((t, kinds.label(t), kinds.value(t)))
    items += [(c.tile, f"冲锋鸡 (charging chicken: first discarded {c.tile}, claimed by a player not 叫牌)",
               kinds.chongfeng_value(c.tile)) for c in charging if c.place == "stays" and c.seat == seat]
    return items


def _bao_ji(table: Table, kinds: ChickenKinds, collects: list[bool], burned: set[int],
            charging: list[Chongfeng]) -> list[Transfer]:
    """包鸡: a non-叫牌 player q pays the fixed chickens in his river to each 叫牌 player. Under ``bao_ji_shared``
    the plain ones (not his 冲锋鸡) are paid by every non-叫牌 player instead (P1: a discarded chicken of a
    player not 叫牌 is judged to every 叫牌 player, and every player not 叫牌 pays it)."""
    transfers = []
    payees = [p for p in range(SEATS) if collects[p] and p not in burned]
    non_ting = [q for q in range(SEATS) if not collects[q]]
    for q in non_ting:
        items = _river_fixed_chickens(table, kinds, q, charging)
        shared = [i for i in items if not i[1].startswith("冲锋鸡")] if table.rules.bao_ji_shared else []
        own = [i for i in items if i not in shared]
        for payers, part, whose in (([q], own, ""), (non_ting, shared, ", paid by every player not 叫牌")):
            owed = sum(v for _, _, v in part)
            if not owed:
                continue
            for payer in payers:
                for p in payees:
                    transfers.append(Transfer(payer, p, owed, "chicken",
                                              f"包鸡 (chicken liability): P{payer} pays P{p} {owed} for "
                                              f"{_describe(part)} in P{q}'s river (P{q} not 叫牌{whose})"))
    return transfers


def _zeren_pairs(table: Table) -> list[tuple[int, int, str]]:
    """(discarder, claimer, which 1s) of each 责任鸡: the claimed first 1s; under ``zeren_scope=all`` also every
    other 1s pong/kong whose meld names the seat it came from (one per claimer: a seat holds one 1s meld)."""
    first = table.first_1s
    pairs = []
    if first is not None and first.claimed_by is not None and not table.first_1s_is_win_tile():
        pairs.append((first.discarder, first.claimed_by, "the first discarded 1s"))
    if table.rules.zeren_scope == "all":
        claimers = {r for _, r, _ in pairs}
        for owner, player in enumerate(table.players):
            for m in player.melds:
                if m.tile == YAOJI and m.source is not None and owner not in claimers:
                    pairs.append((m.source, owner, f"a 1s P{m.source} discarded"))
    return pairs


def _describe(items: list[tuple[str, str, int]]) -> str:
    """``1s×2 幺鸡 (fixed chicken) = 2, 5m 翻鸡 (flipped chicken) = 1``."""
    groups = Counter((tile, label) for tile, label, _ in items)
    worth = {(tile, label): v for tile, label, v in items}
    parts = []
    for (tile, label), n in groups.items():
        count = f"×{n}" if n > 1 else ""
        parts.append(f"{tile}{count} {label} = {n * worth[(tile, label)]}")
    return ", ".join(parts)


def held_chickens(tiles: list[str], flipped: str | None, rules: Rules) -> dict[str, object]:
    """鸡 (chickens) among one player's tiles under the 翻鸡 indicator ``flipped``: who pays whom needs the
    whole table (``scoring.settle``); this is what a single hand shows (``/v1/hand``, ``zhuoji hand``)."""
    flip = None if flipped is None else flipped_chicken(flipped)
    kinds = ChickenKinds(flip, flip == YAOJI, rules)
    counts = Counter(tiles)
    rows = [{"tile": t, "label": kinds.label(t), "count": counts[t], "value": kinds.value(t)}
            for t in sorted(counts, key=tile_index) if kinds.value(t)]
    return {"flipped": flipped, "flipped_chicken": flip, "golden": kinds.golden, "tiles": rows,
            "total": sum(r["count"] * r["value"] for r in rows)}
