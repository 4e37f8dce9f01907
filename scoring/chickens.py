"""鸡 (chickens): which tiles score, what each is worth, who pays whom (docs/rules.md#chickens, #decisions).

Entry point: :func:`chicken_transfers`. Chickens are settled only when somebody won; once per hand, however
many players won. House rules (docs/rules.md#switches): the first 8p as a 冲锋鸡 (``wuguji_chongfeng``), a claimed
冲锋鸡 moving to a 叫牌 claimer (``chongfeng_moves``), 包鸡 shared by every non-叫牌 player (``bao_ji_shared``),
every claimed 1s a 责任鸡 (``zeren_scope=all``); the regional chickens — 上下鸡, 本鸡, 星期鸡, 吹风鸡, 银鸡, 意外鸡,
站鸡, 前后鸡/滚筒鸡 — and values (heavier values, 通三, all four with chickens doubled or cancelled).
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
YIWAI = ("7p", "9m")  # 意外鸡, fixed chickens when rules.yiwai_ji
CHUIFENG = "5p"  # 吹风鸡: this flipped tile cancels the chickens (rules.chuifeng_ji)
WEEK_SUITS = "msp"  # 星期鸡: the weekday's rank in every suit


@dataclass(frozen=True)
class ChickenKinds:
    """The chicken tiles of this hand and their worth.

    ``flipped``: the flip-derived chickens — 翻鸡 F+1, and under the variants F-1 (上下鸡), F itself (本鸡) and
    each extra indicator's +1 (前后鸡/滚筒鸡). ``weekday``: the 星期鸡 tiles. A tile that is a chicken under
    several rules counts once, at its highest worth (one identity, docs/rules.md#one-identity)."""

    flipped: frozenset[str]
    golden: bool  # 金鸡: 1s is flip-derived (F = 9s; F = 2s under 上下鸡), so every 1s is worth more
    rules: Rules
    weekday: frozenset[str] = frozenset()

    def is_fixed(self, tile: str) -> bool:
        """Fixed chickens (幺鸡; 乌骨鸡, 意外鸡 when played) count from a river and are 包鸡 (paid by a non-叫牌
        owner)."""
        rules = self.rules
        return tile == YAOJI or (rules.wuguji and tile == WUGUJI) or (rules.yiwai_ji and tile in YIWAI)

    def is_golden(self, tile: str) -> bool:
        """金: 1s when the flip makes it a chicken too; 8p (乌骨鸡) likewise (F = 7p)."""
        return (tile == YAOJI and self.golden) or (tile == WUGUJI and self.rules.wuguji and tile in self.flipped)

    def plain_value(self, tile: str) -> int:
        """A fixed chicken's worth before 金."""
        if tile == YAOJI or (self.rules.yiwai_ji and tile in YIWAI):
            return 1
        return self.rules.wuguji_value if self.rules.wuguji and tile == WUGUJI else 0

    def value(self, tile: str) -> int:
        """Worth of one tile under one identity only: a fixed chicken first, else its best flip/weekday worth."""
        if self.is_fixed(tile):
            gold = 3 if self.rules.heavy_chickens else 2  # heavier values (P3 gy/): 幺鸡 金 3, 乌骨 金 6
            return self.plain_value(tile) * (gold if self.is_golden(tile) else 1)
        if tile in self.flipped:
            return 2 if self.rules.yin_ji and tile in ("1m", "1p") else 1  # 银鸡: silver flip-derived 1m/1p
        return 1 if tile in self.weekday else 0

    def chongfeng_value(self, tile: str = YAOJI) -> int:
        """冲锋鸡 (charging chicken): its worth doubled (加倍, replacing the base) or tripled (base + twice the
        base: additive, 通三, heavier values): a 1s 2/4 or 3/6 under 金鸡; a 冲锋 8p from its 乌骨鸡 value."""
        rules = self.rules
        factor = 3 if rules.chongfeng_mode == "additive" or rules.tongsan or rules.heavy_chickens else 2
        return factor * self.plain_value(tile) * (2 if self.is_golden(tile) else 1)

    def label(self, tile: str) -> str:
        gold = self.is_golden(tile)
        if tile == YAOJI:
            return "幺鸡 (fixed chicken" + (", 金鸡 golden chicken)" if gold else ")")
        if self.rules.wuguji and tile == WUGUJI:
            return "乌骨鸡 (black-bone chicken" + (", golden)" if gold else ")")
        if self.rules.yiwai_ji and tile in YIWAI:
            return "意外鸡 (surprise chicken)"
        if tile in self.flipped:
            return "银鸡 (silver chicken)" if self.value(tile) == 2 else "翻鸡 (flipped chicken)"
        return "星期鸡 (weekday chicken)"


def flipped_chicken(indicator: str) -> str:
    """翻鸡: same suit, next rank, 9 → 1 (翻 5m → 6m; 翻 9p → 1p)."""
    rank, suit = int(indicator[0]), indicator[1]
    return f"{rank % 9 + 1}{suit}"


def _previous(indicator: str) -> str:
    """上下鸡's lower neighbour: same suit, rank − 1, 1 → 9."""
    rank, suit = int(indicator[0]), indicator[1]
    return f"{(rank - 2) % 9 + 1}{suit}"


def weekday_chickens(rules: Rules, weekday: int | None) -> frozenset[str]:
    """星期鸡: the tiles whose rank is the weekday, in all three suits; Sunday is 7 or none (``xingqi_ji``)."""
    if rules.xingqi_ji is None or weekday is None or (weekday == 7 and rules.xingqi_ji == "sunday_none"):
        return frozenset()
    return frozenset(f"{weekday}{suit}" for suit in WEEK_SUITS)


def chicken_kinds(rules: Rules, flipped: str | None, weekday: int | None = None,
                  indicators: tuple[str, ...] = ()) -> ChickenKinds:
    """The chicken tiles of a hand from the flipped tile F, the round's weekday and the extra indicators."""
    derived: set[str] = set()
    if flipped is not None:
        derived.add(flipped_chicken(flipped))
        if rules.shangxia_ji:
            derived.add(_previous(flipped))
        if rules.ben_ji:
            derived.add(flipped)
    if rules.qianhou_ji and indicators:
        # 前后鸡: each kong turns a new indicator and the old one closes (last); 滚筒鸡: all stay (all).
        derived |= {flipped_chicken(t) for t in (indicators[-1:] if rules.qianhou_ji == "last" else indicators)}
    # P3 mygy: under 本鸡 金 only when F itself is 1s; otherwise whenever 1s is flip-derived.
    golden = flipped == YAOJI if rules.ben_ji and rules.ben_ji_gold == "flip_only" else YAOJI in derived
    return ChickenKinds(frozenset(derived), golden, rules, weekday_chickens(rules, weekday))


def chicken_transfers(table: Table, ting: list[bool], burned: set[int]) -> tuple[list[Transfer], list[str]]:
    """Chicken payments and explanation lines.

    ``ting[p]``: p is 叫牌 (ready) at settlement. ``burned``: seats whose chicken income is void (全烧/燒光).
    """
    if not isinstance(table.outcome, Win):
        return [], []
    rules = table.rules
    if rules.chuifeng_ji == "chickens" and table.flipped == CHUIFENG:
        return [], ["吹风鸡 (wind-blown chickens): F = 5p, so no chicken is settled this round"]
    kinds = chicken_kinds(rules, table.flipped, table.weekday, table.indicators)
    lines = _kinds_lines(table, kinds)

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
    paid: set[int] = set()  # seats with a chicken actually paid (满堂鸡 variant mantang_all)

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
        paid |= {p} if payers else set()
        for q in payers:
            transfers.append(Transfer(q, p, worth, "chicken",
                                      f"鸡 (chickens): P{q} pays P{p} {worth} for {_describe(items)}"))

    if rules.bao_ji and rules.chicken_requires_ting:
        bao, owers = _bao_ji(table, kinds, collects, burned, charging)
        transfers += bao
        paid |= owers

    for d, r, which in _zeren_pairs(table):
        extra = rules.zeren_extra * (2 if rules.heavy_chickens else 1) * (2 if kinds.golden else 1)
        if collects[r] and r not in burned and extra:
            transfers.append(Transfer(d, r, extra, "chicken",
                                      f"责任鸡 (responsibility chicken): P{d} pays P{r} {extra} extra, "
                                      f"P{r} claimed {which}"))
    if rules.mantang_all and len(paid) == SEATS and transfers:
        return _mantang_all(rules.mantang_all, transfers, lines)
    return transfers, lines


def _mantang_all(mode: str, transfers: list[Transfer], lines: list[str]) -> tuple[list[Transfer], list[str]]:
    """满堂鸡 (all four have a chicken paid): every chicken payment doubled, or all of them cancel (P2, P1)."""
    if mode == "cancel":
        return [], [*lines, "满堂鸡 (all four players have a chicken paid): every chicken payment cancels"]
    doubled = [Transfer(t.payer, t.payee, 2 * t.fan, t.component, f"{t.reason}; ×2 满堂鸡 (all four have chickens)")
               for t in transfers]
    return doubled, [*lines, "满堂鸡 (all four players have a chicken paid): every chicken payment doubled"]


def _kinds_lines(table: Table, kinds: ChickenKinds) -> list[str]:
    """What makes a chicken this hand: the flip and the variants that add to it."""
    lines = []
    derived = ", ".join(sorted(kinds.flipped, key=tile_index))
    if table.flipped is None:
        lines.append("No 翻鸡 (flipped chicken): the wall was empty")
    elif kinds.golden:
        lines.append(f"翻鸡 (flipped chicken): F={table.flipped} → {derived}, 金鸡 (golden chicken): every 1s is "
                     f"worth {kinds.value(YAOJI)}")
    else:
        lines.append(f"翻鸡 (flipped chicken): F={table.flipped} → {derived}")
    if table.rules.qianhou_ji and table.indicators:
        lines.append(f"前后鸡/滚筒鸡 (extra indicators): {', '.join(table.indicators)} turned")
    if kinds.weekday:
        lines.append(f"星期鸡 (weekday chickens): day {table.weekday} → {', '.join(sorted(kinds.weekday))}")
    return lines


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
    """The 冲锋鸡 of this hand: the first discarded 1s (and 8p under ``wuguji_chongfeng``), docs/rules.md#chicken-values, #decisions."""
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
    only the first winner counting from the discarder's 下家 (the order of docs/rules.md#dealer) — one physical tile, counted once."""
    win = table.outcome
    assert isinstance(win, Win)
    if len(win.winners) == 1 or table.rules.yipao_chicken == "each":
        return list(win.winners)
    assert win.discarder is not None  # several winners: a discard win
    return [next((win.discarder + i) % SEATS for i in range(1, SEATS) if (win.discarder + i) % SEATS in win.winners)]


def _counted_chickens(table: Table, kinds: ChickenKinds, seat: int, charging: list[Chongfeng],
                      holders: list[int]) -> list[Item]:
    """(tile, identity, worth) of every chicken in the scope S(p) (docs/rules.md#chicken-scope): hand, melds, own river."""
    player = table.players[seat]
    win = table.outcome
    assert isinstance(win, Win)
    standing_win = win.self_drawn and seat in holders  # a self-drawn winning tile was never shown (站鸡)
    concealed = [*player.hand_tiles, *([win.win_tile] if standing_win else [])]
    shown = [*([win.win_tile] if seat in holders and not standing_win else [])]
    for m in player.melds:
        (concealed if m.type == "concealed_kong" else shown).extend(m.tiles)
    items = [_standing(kinds, t) for t in concealed if kinds.value(t)]
    items += [(t, kinds.label(t), kinds.value(t)) for t in shown if kinds.value(t)]
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


def _standing(kinds: ChickenKinds, tile: str) -> Item:
    """A chicken never shown; under 站鸡 a fixed one scores double or + 1 (RL ×2, another server + 1)."""
    mode, worth = kinds.rules.zhan_ji, kinds.value(tile)
    if mode is None or not kinds.is_fixed(tile):
        return tile, kinds.label(tile), worth
    return tile, f"站鸡 (standing chicken: {kinds.label(tile)} never shown)", 2 * worth if mode == "double" else worth + 1


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
            charging: list[Chongfeng]) -> tuple[list[Transfer], set[int]]:
    """包鸡: a non-叫牌 player q pays the fixed chickens in his river to each 叫牌 player (and the seats q
    whose river owes something). Under ``bao_ji_shared``
    the plain ones (not his 冲锋鸡) are paid by every non-叫牌 player instead (P1: a discarded chicken of a
    player not 叫牌 is judged to every 叫牌 player, and every player not 叫牌 pays it)."""
    transfers = []
    owers: set[int] = set()
    payees = [p for p in range(SEATS) if collects[p] and p not in burned]
    non_ting = [q for q in range(SEATS) if not collects[q]]
    for q in non_ting:
        items = _river_fixed_chickens(table, kinds, q, charging)
        if payees and any(v for _, _, v in items):
            owers.add(q)
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
    return transfers, owers


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
    kinds = chicken_kinds(rules, flipped)
    counts = Counter(tiles)
    rows = [{"tile": t, "label": kinds.label(t), "count": counts[t], "value": kinds.value(t)}
            for t in sorted(counts, key=tile_index) if kinds.value(t)]
    return {"flipped": flipped, "flipped_chicken": flip, "golden": kinds.golden, "tiles": rows,
            "total": sum(r["count"] * r["value"] for r in rows)}
