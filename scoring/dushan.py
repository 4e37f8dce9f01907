"""独山 (Dushan) settlement of one hand (docs/rules.md#dushan): ``settle_dushan(table, waits, ting)``.

独山 scores everything in one unit, the 鸡 (chicken), and settles the chickens **pairwise**: each 叫牌 (ready)
player's chickens are counted, and for every two players A and B, B pays A the difference c[A] − c[B] when A
has more. Besides: the win (自摸 / 点炮 3, 杠上开花 / 热炮 5) with the hand types adding up and 报叫, 3 per kong of
a 叫牌 player, the claimed chicken's premium and 包鸡 (a player not 叫牌 pays for the chickens he showed).

A discarded 1s is a 冲锋鸡 (the discarder's own first discard, 3), a 横鸡 (the first 1s discarded after that
which is not a 冲锋鸡, and the 1s others throw before the go-around closes, 2) or a plain chicken (1). Which one
depends on the order of discards across the table: ``table.discard_order`` when the round gives it, otherwise
derived from the rivers (see :func:`discard_sequence`). Only 1s is a chicken while the tiles are played: the
翻鸡 indicator is turned after the win, so its chickens count in hands and melds only.

Sources: P2 ``LIGF9/zhuoji-mahjong-ai`` ``docs/独山麻将规则教程.md`` §7-§11 and ``zhuoji/dushan.py``; the
values where ``LIGF9/DushanMajiang`` (``settings.py``) differs are switches (``dushan_*``).
"""

from __future__ import annotations

from dataclasses import dataclass

from scoring.hand import (
    DUSHAN_WIN,
    HandType,
    classify_win,
    dushan_type_fan,
    dushan_value,
    win_allowed_on_discard,
)
from scoring.ledger import COMPONENTS, Transfer, net
from scoring.results import SeatResult, SeatWin, Settlement
from scoring.table import SEATS, Discard, Draw, Table, Win
from scoring.tiles import TILE_INDEX, TILES

YAOJI = "1s"  # 幺鸡, the one chicken kind that is known while the tiles are played
HOLD = 1  # a chicken in a 叫牌 player's hand or melds, and a 翻鸡 tile there
GOLD = 2  # 金鸡: a held 1s counts double when the flipped chickens include 1s
DISCARD_VALUES = {"chongfeng": 3, "heng": 2, "plain": 1}
DISCARD_NAMES = {"chongfeng": "冲锋鸡 (charging chicken, his first discard)", "heng": "横鸡 (cross chicken)",
                 "plain": "discarded 1s"}
SHORT_NAMES = {"chongfeng": "冲锋鸡", "heng": "横鸡", "plain": "plain 1s"}
KONG = 3  # each kong of a 叫牌 player


@dataclass(frozen=True)
class TaggedDiscard:
    """A discarded 1s and what it is worth: 冲锋鸡, 横鸡 or plain."""

    discard: Discard
    tag: str  # chongfeng | heng | plain
    fed_win: bool = False  # the tile a 点炮 / 热炮 was won on (捉炮鸡)

    @property
    def value(self) -> int:
        return DISCARD_VALUES[self.tag]

    @property
    def name(self) -> str:
        return DISCARD_NAMES[self.tag]


def discard_sequence(table: Table) -> tuple[list[Discard], str]:
    """Every discard in the order made, and how it was known.

    Without ``discard_order``: discard k of seat s (its river in order, the tile that fed a win last) comes at
    turn k·4 + (s − dealer) mod 4. That ignores turns skipped by claims, and a claimed 1s is not in any river,
    so a hand with a claimed 1s needs ``discard_order``."""
    if table.discard_order is not None:
        return list(table.discard_order), "discard order as given"
    claims = [(seat, m) for seat, p in enumerate(table.players) for m in p.melds if m.tile == YAOJI and m.source is not None]
    if claims:
        seat, meld = claims[0]
        raise ValueError(f"独山 (dushan): P{seat} claimed a 1s from P{meld.source}; whether it was a 冲锋鸡 or a 横鸡 "
                         f"depends on when it was thrown, so give discard_order ([seat, tile, claimed_by] for it)")
    timed = [(k * SEATS + (seat - table.dealer) % SEATS, Discard(seat, t))
             for seat, player in enumerate(table.players) for k, t in enumerate(player.river)]
    sequence = [d for _, d in sorted(timed, key=lambda x: x[0])]
    win = table.outcome
    if isinstance(win, Win) and win.discarder is not None and not win.robbed_kong:
        sequence.append(Discard(win.discarder, win.win_tile))  # the tile that fed the win was the last discard
    return sequence, "discard order derived from the rivers"


def tag_discards(sequence: list[Discard]) -> list[TaggedDiscard]:
    """冲锋鸡 / 横鸡 / plain for every discarded 1s (P2 §7.3, §7.3.1).

    The first 1s that is not a 冲锋鸡 opens the 横鸡 go-around: every 1s thrown while it is open is a 横鸡; it
    closes when a player who threw a 1s in it (the opener included) discards again, and no other opens."""
    first_done: set[int] = set()
    heng_opened = False
    in_round: set[int] | None = None  # seats that threw a 1s in the open go-around
    tagged = []
    for d in sequence:
        if in_round is not None and d.seat in in_round:
            in_round = None  # closed before this discard is judged: it is plain (P2 _close_hengji_rounds)
        if d.tile == YAOJI:
            if d.seat not in first_done:
                tag = "chongfeng"
            elif not heng_opened:
                heng_opened, in_round, tag = True, set(), "heng"
            else:
                tag = "heng" if in_round is not None else "plain"
            if in_round is not None:
                in_round.add(d.seat)  # a 冲锋鸡 inside the go-around closes it too when its thrower goes again
            tagged.append(TaggedDiscard(d, tag))
        first_done.add(d.seat)
    return tagged


def flipped_chickens(table: Table) -> tuple[str, ...]:
    """翻鸡 (``dushan_fanji``): F + 1 and F − 1 (上下鸡), or one of them, same suit, 9 and 1 wrapping."""
    if table.flipped is None:
        return ()
    i = TILE_INDEX[table.flipped]
    suit, rank = divmod(i, 9)
    steps = {"both": (1, -1), "up": (1,), "down": (-1,)}[table.rules.dushan_fanji]
    return tuple(TILES[suit * 9 + (rank + s) % 9] for s in steps)


class _Book:
    """Transfers in fan (before 底分) with their explanation."""

    def __init__(self) -> None:
        self.transfers: list[Transfer] = []

    def pay(self, payer: int, payee: int, fan: int, component: str, reason: str) -> None:
        if fan > 0 and payer != payee:
            self.transfers.append(Transfer(payer, payee, fan, component, reason))


def settle_dushan(table: Table, waits: list[list[str]], ting: list[bool]) -> Settlement:
    """Settle a win or a 黄牌 (draw) by the 独山 rules; ``ting[p]``: p is 叫牌, ``waits[p]``: his waits."""
    outcome = table.outcome
    if isinstance(outcome, Draw):
        return _draw(table, waits, ting)
    if not isinstance(outcome, Win):
        raise ValueError("独山 (dushan) settles wins and 黄牌 (draws); 包牌 and 诈胡 penalties are not in its rules")
    return _win(table, outcome, waits, ting)


def _win(table: Table, win: Win, waits: list[list[str]], ting: list[bool]) -> Settlement:
    book = _Book()
    lines: list[str] = []
    burned = {win.discarder} if win.hot_discard or win.robbed_kong else set()
    payers = [s for s in range(SEATS) if s != win.winners[0]] if win.self_drawn else [win.discarder]
    seat_wins = {}
    for w in win.winners:
        hand_type, value, why = _winner(table, win, w)
        seat_wins[w] = SeatWin(hand_type, value)
        for p in payers:
            book.pay(p, w, value, "hand", f"P{w}'s win: {why}")
        lines.append(f"P{w} wins: {why}; paid by {', '.join(f'P{p}' for p in payers)}")
    _kongs(table, ting, burned, book, lines)

    sequence, how = discard_sequence(table)
    tagged = tag_discards(sequence)
    if win.discarder is not None and not win.robbed_kong and win.win_tile == YAOJI:
        # the last discard fed the win, and it is a 1s: the last one tagged
        tagged[-1] = TaggedDiscard(tagged[-1].discard, tagged[-1].tag, fed_win=True)
    flips = flipped_chickens(table)
    gold = YAOJI in flips
    lines.append(_discards_line(tagged, how))
    if table.flipped is not None:
        lines.append(f"翻鸡 (flipped chickens): F = {table.flipped} → {', '.join(flips)}"
                     + (" — 金鸡 (gold): a held 1s counts 2" if gold else ""))

    counts = [0] * SEATS
    for seat in range(SEATS):
        if not ting[seat] or seat in burned:
            continue
        counts[seat], items = _chickens(table, seat, tagged, flips, gold, won=seat in win.winners)
        lines.append(f"P{seat} 鸡 (chickens) {counts[seat]}: {'; '.join(items) or 'none'}")
    for seat in burned:
        lines.append(f"P{seat} 全烧 (burned, 热炮/抢杠): his chickens and kongs count nothing, he still pays")
    for a in range(SEATS):
        for b in range(SEATS):
            if counts[a] > counts[b]:
                book.pay(b, a, counts[a] - counts[b], "chicken",
                         f"鸡 (chickens) pairwise: P{a} {counts[a]} − P{b} {counts[b]}")
    _claims(table, tagged, ting, burned, book, lines)
    _bao_ji(table, tagged, ting, gold, book, lines)
    first, why = win.winners[0], "the winner deals"
    if len(win.winners) > 1:
        first = next(s for s in _turn_order(win.discarder + 1) if s in win.winners)
        why = "一炮多响 (several winners): the first winner from the discarder's 下家 (next seat) deals"
    return _settlement(table, book, lines, waits, ting, burned, seat_wins, first, why)


def _winner(table: Table, win: Win, w: int) -> tuple[HandType, int, str]:
    """The winner's hand type and win value; refuses tiles that do not win and a discard the gate forbids."""
    player = table.players[w]
    hand_type = classify_win(table.hand(w), player.melds, table.rules, win.win_tile)
    if hand_type is None:
        raise ValueError(f"P{w}'s tiles with {win.win_tile} do not form a win (不成牌)")
    if not win.self_drawn:
        allowed, reason = win_allowed_on_discard(hand_type, player.melds, hot_discard=win.hot_discard,
                                                 robbed_kong=win.robbed_kong, winner_bao_ting=player.bao_ting,
                                                 discarder_bao_ting=table.players[win.discarder].bao_ting)
        if not allowed:
            raise ValueError(f"P{w} may not win on P{win.discarder}'s {win.win_tile}: {reason}")
    value, steps = dushan_value(hand_type, table.rules, self_drawn=win.self_drawn, kong_draw=win.kong_draw,
                                bao_ting=player.bao_ting, hot_discard=win.hot_discard)
    return hand_type, value, ", ".join(steps)


def _kongs(table: Table, ting: list[bool], burned: set[int], book: _Book, lines: list[str]) -> None:
    """3 per kong of a 叫牌 player: 点杠 (exposed) from the feeder, 暗杠 / 补杠 from each other player."""
    for seat, player in enumerate(table.players):
        if not ting[seat] or seat in burned:
            continue
        for m in player.kongs:
            payers = [m.source] if m.type == "kong" else [s for s in range(SEATS) if s != seat]
            for p in payers:
                book.pay(p, seat, KONG, "dou", f"P{seat}'s {m.type.replace('_', ' ')} of {m.tile} (杠): {KONG}")
            lines.append(f"P{seat} 杠 (kong) of {m.tile}: {KONG} from {', '.join(f'P{p}' for p in payers)}")


def _chickens(table: Table, seat: int, tagged: list[TaggedDiscard], flips: tuple[str, ...], gold: bool, *,
              won: bool) -> tuple[int, list[str]]:
    """c[seat] of a 叫牌 player: his discarded 1s still his, held and melded 1s, 翻鸡 tiles, 捉炮鸡."""
    items: list[tuple[str, int]] = []
    for t in tagged:
        if t.discard.seat == seat and t.discard.claimed_by is None and not t.fed_win:
            items.append((t.name, t.value))
    tiles = table.hand(seat) + table.players[seat].meld_tiles
    captured = [t for t in tagged if t.fed_win] if won else []
    held = tiles.count(YAOJI) - len(captured)  # the 捉炮鸡 counts at its discard value instead
    if held:
        items.append((f"{held} × 1s held" + (" (金鸡 ×2)" if gold else ""), held * HOLD * (GOLD if gold else 1)))
    flipped = sum(tiles.count(f) for f in flips)
    if flipped:
        items.append((f"{flipped} 翻鸡 tile(s) {'/'.join(flips)}", flipped * HOLD))
    for t in captured:
        items.append((f"捉炮鸡 (the {t.name} he won on)", t.value))
    return sum(v for _, v in items), [f"{name} {v}" for name, v in items]


def _claims(table: Table, tagged: list[TaggedDiscard], ting: list[bool], burned: set[int], book: _Book,
            lines: list[str]) -> None:
    """A claimed 冲锋鸡 / 横鸡: the tile is the claimer's (counted in his meld); its discarder pays a 叫牌 claimer
    the premium, value − 1 (P2 §7.4). A claimer not 叫牌 pays it back through 包鸡 instead."""
    for t in tagged:
        claimer = t.discard.claimed_by
        premium = t.value - HOLD
        if claimer is None or not premium or not ting[claimer] or claimer in burned:
            continue
        book.pay(t.discard.seat, claimer, premium, "chicken",
                 f"责任鸡 (claimed chicken): P{claimer} took P{t.discard.seat}'s {t.name}, premium {premium}")
        lines.append(f"责任鸡: P{t.discard.seat} pays P{claimer} {premium} for the claimed {t.name}")


def _bao_ji(table: Table, tagged: list[TaggedDiscard], ting: list[bool], gold: bool, book: _Book,
            lines: list[str]) -> None:
    """包鸡: a player not 叫牌 pays each other player the chickens he showed — his discarded 1s still his and the
    1s in his melds — and the discarder of a 1s he claimed that tile's premium as well (P2 §11.2)."""
    for seat, player in enumerate(table.players):
        if ting[seat]:
            continue
        shown = sum(t.value for t in tagged
                    if t.discard.seat == seat and t.discard.claimed_by is None and not t.fed_win)
        shown += player.meld_tiles.count(YAOJI) * HOLD * (GOLD if gold else 1)
        for other in range(SEATS):
            book.pay(seat, other, shown, "chicken", f"包鸡: P{seat} is not 叫牌 and pays for his shown chickens {shown}")
        for t in tagged:
            if t.discard.claimed_by == seat and t.value > HOLD:
                book.pay(seat, t.discard.seat, t.value - HOLD, "chicken",
                         f"包鸡: P{seat} is not 叫牌 and pays back the premium of P{t.discard.seat}'s {t.name}")
        if shown:
            lines.append(f"包鸡 (not ready): P{seat} pays each other player {shown} for his shown chickens")


def _draw(table: Table, waits: list[list[str]], ting: list[bool]) -> Settlement:
    """黄牌 (P2 §11.3): no chickens, no kongs; each player not 叫牌 pays each 叫牌 player 3 + his best type."""
    book = _Book()
    lines = []
    for seat in range(SEATS):
        if not ting[seat]:
            continue
        player = table.players[seat]
        best = max((dushan_type_fan(ht, table.rules) for w in waits[seat]
                    if (ht := classify_win([*player.concealed, w], player.melds, table.rules, w)) is not None),
                   default=0)
        for p in range(SEATS):
            if not ting[p]:
                book.pay(p, seat, DUSHAN_WIN + best, "hand",
                         f"黄牌 (draw): P{p} not 叫牌 pays P{seat} 自摸 {DUSHAN_WIN} + best hand type {best}")
        lines.append(f"黄牌 (draw): P{seat} is 叫牌, best hand type {best}: each player not 叫牌 pays {DUSHAN_WIN + best}")
    lines.append("黄牌 (draw): chickens and kongs are not settled")
    return _settlement(table, book, lines, waits, ting, set(), {}, table.dealer, "黄牌 (draw): the dealer stays")


def _turn_order(start: int) -> list[int]:
    return [(start + i) % SEATS for i in range(SEATS)]


def _discards_line(tagged: list[TaggedDiscard], how: str) -> str:
    if not tagged:
        return f"Discarded 1s: none ({how})"
    named = [f"P{t.discard.seat} {SHORT_NAMES[t.tag]} {t.value}"
             + (f" → claimed by P{t.discard.claimed_by}" if t.discard.claimed_by is not None else "")
             + (" → won on (捉炮鸡)" if t.fed_win else "") for t in tagged]
    return f"Discarded 1s in order ({how}): {'; '.join(named)}"


def _settlement(table: Table, book: _Book, lines: list[str], waits: list[list[str]], ting: list[bool],
                burned: set[int], wins: dict[int, SeatWin], dealer: int, why: str) -> Settlement:
    base = table.rules.base
    suffix = "" if base == 1 else "; × 底分 (base) {base} = {amount}"
    ledger = tuple(Transfer(t.payer, t.payee, t.fan * base, t.component,
                            t.reason + suffix.format(base=base, amount=t.fan * base)) for t in book.transfers)
    nets = {c: net(ledger, SEATS, c) for c in COMPONENTS}
    streak = table.streak + 1 if dealer == table.dealer else 1
    players = tuple(SeatResult(seat=s, ting=ting[s], waits=tuple(waits[s]), hand=nets["hand"][s], dou=nets["dou"][s],
                               chicken=nets["chicken"][s], burned=s in burned, dealer=s == table.dealer,
                               win=wins.get(s)) for s in range(SEATS))
    ready = ", ".join(f"P{s}" for s in range(SEATS) if ting[s]) or "nobody"
    kept = "keeps the deal (连庄)" if dealer == table.dealer else "deals next"
    explanation = (f"Rules: {table.rules.preset} (独山 settlement), 底分 (base) {base}", f"叫牌 (ready): {ready}",
                   *lines, f"Next dealer: P{dealer} {kept}, k={streak} — {why}")
    return Settlement(table.rules, ledger, players, dealer, streak, explanation)
