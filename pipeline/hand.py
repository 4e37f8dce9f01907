"""Hands and tables: typed requests in, the engine's stage functions, typed results out.

Nothing here scores: ``scoring.analyze_hand``, ``scoring.settle`` and ``scoring.hand.best_wait_fan`` do. This
module adds what a person at the table asks next: how many copies of each wait are still unseen, which
鸡 (chickens) the hand holds, and for 黄牌查叫 (the exhaustive-draw check) who pays whom among the hands shown.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

from pydantic import ValidationError

from pipeline.errors import Refused, refusing
from pipeline.models import (
    ChajiaoPlayerResult,
    ChajiaoRequest,
    ChajiaoResponse,
    ChajiaoWait,
    ChickensOut,
    HandAnalysis,
    HandRequest,
    HandTypeOut,
    MeldIn,
    RetakeReason,
    RulesSpec,
    SettleRequest,
    SettleResponse,
    TransferOut,
    WaitOut,
    win_flags,
)
from scoring import analyze_hand, parse_tiles, settle, waits
from scoring.chickens import held_chickens
from scoring.hand import best_wait_fan
from scoring.ledger import net
from scoring.melds import Meld
from scoring.results import WaitAnalysis, WinAnalysis
from scoring.rules import HAND_TYPES, Rules, get_rules
from scoring.seat_names import name_seats, named_settlement
from scoring.table import Draw, Player, Table, check_table
from scoring.tiles import COPIES, TILES, tile_index, to_counts, to_mpsz

SEATS = 4


def _type(key: str | None, fan: int) -> HandTypeOut | None:
    """A fan-table row key → its 中文 name and English meaning, with the fan it scored."""
    if key is None:
        return None
    name_zh, name_en = HAND_TYPES[key]
    return HandTypeOut(key=key, name_zh=name_zh, name_en=name_en, fan=fan)


def meld_tiles(melds: Iterable[MeldIn]) -> list[str]:
    """Every tile laid in melds: three for a pong, four for a kong."""
    return [m.tile for m in melds for _ in range(3 if m.type == "pong" else 4)]


def engine_melds(melds: Iterable[MeldIn]) -> list[Meld]:
    """Meld models (validated at the edge) → the engine's melds."""
    return [m.to_meld() for m in melds]


def copies_left(own: Sequence[str], seen: Sequence[str]) -> tuple[list[int], list[str]]:
    """Unseen copies per tile index (4 − copies in view), and a note per tile seen more than 4 times.

    ``seen`` comes from a photo's other tiles and may hold misreads, so an excess is a note, not an error.
    """
    counts = [a + b for a, b in zip(to_counts(own), to_counts(seen), strict=True)]
    notes = [f"{TILES[i]} is seen {c} times but the set has {COPIES}: one of them is probably misread"
             for i, c in enumerate(counts) if c > COPIES]
    return [max(0, COPIES - c) for c in counts], notes


def chickens_held(tiles: Sequence[str], flipped: str | None, rules: Rules) -> ChickensOut:
    """鸡 in a hand under the 翻鸡 indicator ``flipped`` (``scoring.chickens.held_chickens``)."""
    return ChickensOut.model_validate(held_chickens(list(tiles), flipped, rules))


CHICKENS_HELD = "鸡 (chickens) held"  # the explanation's chickens line starts so (the CLI's text puts it last)
MELD_TYPES: tuple[str, ...] = get_args(MeldIn.model_fields["type"].annotation)


def meld_from_text(token: str, where: str = "") -> MeldIn:
    """``"pong:5m"`` (TYPE:TILE, as ``zhuoji hand --meld``) → the meld; :class:`Refused` naming it (after ``where``)
    when the type or the tile is not one."""
    kind, sep, tile = token.partition(":")
    if not sep or kind not in MELD_TYPES:
        raise Refused("invalid_hand", f"{where}{token!r}: expected TYPE:TILE with TYPE one of {', '.join(MELD_TYPES)}")
    with refusing():
        tile_index(tile)  # the engine's words for a tile that is not one
    return MeldIn(type=kind, tile=tile)


def typed_hand_request(concealed: str, win_tile: str | None, melds: list[MeldIn], **context: Any
                       ) -> tuple[HandRequest, list[str]]:
    """The /v1/hand request for a hand as a person types it: 13 tiles (and ``win_tile``), or all 14 with the winning
    tile among them, the last one written when ``win_tile`` is not given; and the assumption made then.
    ``context``: the other fields of :class:`HandRequest` (rules, flipped, self_drawn, the win flags)."""
    with refusing():
        tiles = parse_tiles(concealed)
    assumptions = []
    if len(tiles) + 3 * len(melds) == 14:
        if win_tile is None:
            # the last tile as written (parse_tiles sorts): its rank and the suit after it
            win_tile = concealed.replace(" ", "")[-2:]
            assumptions.append(f"14 tiles: took the last one, {win_tile}, as the winning tile (--win picks another)")
        elif win_tile not in tiles:
            raise Refused("invalid_hand", f"the winning tile {win_tile} is not among the 14 tiles {concealed}")
        tiles.remove(win_tile)
        concealed = to_mpsz(tiles)
    return HandRequest(concealed=concealed, melds=melds, win_tile=win_tile, **context), assumptions


def analyze(req: HandRequest) -> HandAnalysis:
    """One hand: with a winning tile its type, fan and win value; without, its waits (听牌); always the copies
    of each wait still unseen and the chickens held."""
    # The request was validated at the edge; its melds and rules become the engine's values once, here.
    melds, rules = engine_melds(req.melds), get_rules(req.rules)
    with refusing():
        names = parse_tiles(req.concealed)
        seen = parse_tiles(req.seen) if isinstance(req.seen, str) else list(req.seen)
        result = analyze_hand(names, req.win_tile, melds, req.self_drawn, rules, **win_flags(req))
        # The waits of the 13 tiles before the win: what else the hand could have won on, and what is left.
        waiting = result if isinstance(result, WaitAnalysis) else analyze_hand(names, None, melds, False, rules,
                                                                               **win_flags(req))
    assert isinstance(waiting, WaitAnalysis)
    held = [*names, *meld_tiles(req.melds), *([req.win_tile] if req.win_tile else [])]
    left, notes = copies_left(held, [*seen, *([req.flipped] if req.flipped else [])])
    wait_list = [WaitOut(tile=w.tile, hand_type=_type(w.hand_type.key, w.hand_type.fan),
                         self_drawn_value=w.self_drawn_value, discard_win_allowed=w.discard_win_allowed,
                         copies_left=left[TILES.index(w.tile)]) for w in waiting.waits]
    chickens = chickens_held(held, req.flipped, rules)
    explanation = list(result.explanation)
    if req.win_tile is not None and wait_list:
        explanation.append("before the win it waited on " + ", ".join(
            f"{w.tile} ({w.copies_left} left)" for w in wait_list))
    elif wait_list:
        explanation.append("copies still unseen: " + ", ".join(f"{w.tile} ×{w.copies_left}" for w in wait_list))
    if chickens.tiles:
        explanation.append(f"{CHICKENS_HELD}: " + ", ".join(
            f"{c.tile}×{c.count} {c.label}" for c in chickens.tiles) + f" = {chickens.total}")
    explanation += notes
    best = waiting.best
    best_fan, best_type = (best.hand_type.fan, _type(best.hand_type.key, best.hand_type.fan)) if best else (0, None)
    if isinstance(result, WinAnalysis):
        ht = result.hand_type
        return HandAnalysis(
            status="win" if result.win else "not_a_win", concealed=result.concealed, melds=req.melds,
            win_tile=req.win_tile, self_drawn=req.self_drawn, rules=result.rules,
            ready=result.win or bool(wait_list), hand_type=_type(ht.key, ht.fan) if ht else None,
            win_value=result.win_value, decompositions=[list(d) for d in ht.decompositions] if ht else [],
            allowed=result.allowed if result.win else None, discard_win_allowed=result.discard_win_allowed,
            discard_win_reason=result.discard_win_reason, reason=result.reason, waits=wait_list, best_fan=best_fan,
            best_hand_type=best_type, chickens=chickens, explanation=explanation)
    return HandAnalysis(
        status="ready" if result.ready else "not_ready", concealed=result.concealed, melds=req.melds,
        rules=result.rules, ready=result.ready, waits=wait_list, best_fan=best_fan, best_hand_type=best_type,
        chickens=chickens, explanation=explanation)


def settle_table(req: SettleRequest) -> SettleResponse:
    """``POST /v1/settle`` and ``zhuoji settle``: ``scoring.settle`` on the request's table (its own conversion,
    ``SettleRequest.to_table``, makes the engine's value; the engine's cross checks refuse as invalid_table); with
    ``names`` the explanation and errors name the players instead of P0–P3."""
    try:
        result = settle(req.to_table())
    except ValueError as exc:
        raise Refused("invalid_table", name_seats(str(exc), req.names)) from exc
    return SettleResponse.of(named_settlement(result, req.names))


# ------------------------------------------------------------------------------ 黄牌查叫 (draw check)


@dataclass
class DrawHand:
    """One seat's hand at a draw, from text or read from a photo."""

    seat: int
    concealed: list[str]
    melds: list[MeldIn]
    bao_ting: bool = False
    source: str = "text"
    seen: list[str] = field(default_factory=list)  # other tiles in its photo (river), for copies left
    retake: list[RetakeReason] = field(default_factory=list)


def _filler_hand(used: Counter[str], seed: int) -> list[str]:
    """13 tiles from the copies nobody holds that wait on nothing: a stand-in for a seat whose hand was not
    shown, so ``scoring.settle`` (which needs four seats) can run. Its transfers are dropped afterwards."""
    pool = [t for t in TILES for _ in range(COPIES - used[t])]
    rng = random.Random(seed)
    for _ in range(500):
        hand = rng.sample(pool, 13)
        if not waits(hand):
            return hand
    raise Refused("invalid_hand", "cannot complete the table around the hands given")  # pragma: no cover


def chajiao(hands: Sequence[DrawHand], rules: RulesSpec, dealer: int, streak: int) -> ChajiaoResponse:
    """黄牌查叫 (docs/rules.md#chajiao): who is 叫牌 (ready), each one's best fan, who pays whom.

    ``scoring.settle`` with outcome draw does the paying. Seats not given get a stand-in hand that waits on
    nothing; every transfer to or from them is dropped, so only the hands shown pay and receive. ``rules`` was
    checked at the edge (a request's field, ``zhuoji chajiao --rules``); it becomes the engine's value once, here.
    """
    engine_rules = get_rules(rules)
    seats = [h.seat for h in hands]
    if len(set(seats)) != len(seats):
        raise Refused("invalid_hand", f"a seat is given twice: {sorted(seats)}")
    if not 2 <= len(hands) <= SEATS:
        raise Refused("invalid_hand", f"give 2 to 4 hands, not {len(hands)}")
    by_seat = {h.seat: h for h in hands}
    shown = [t for h in hands for t in [*h.concealed, *meld_tiles(h.melds)]]
    used = Counter(shown)
    players: list[Player] = []
    for seat in range(SEATS):
        hand = by_seat.get(seat)
        if hand is None:
            filler = _filler_hand(used, seat)
            used.update(filler)
            players.append(Player(concealed=tuple(filler), melds=(), river=()))
            continue
        # The feeder of a 点豆 does not matter at a draw (no 豆 are paid), but the engine wants one.
        melds = [dataclasses.replace(m, source=(seat + 1) % SEATS) if m.type == "kong" and m.source is None else m
                 for m in engine_melds(hand.melds)]
        players.append(Player(concealed=tuple(hand.concealed), melds=tuple(melds), river=(), bao_ting=hand.bao_ting))
    with refusing():
        result = settle(check_table(Table(engine_rules, dealer, streak, tuple(players), Draw())))
    ledger = [t for t in result.ledger if t.payer in by_seat and t.payee in by_seat]
    totals = net(ledger, SEATS)
    left, _ = copies_left(shown, [t for h in hands for t in h.seen])
    rows, lines = [], []
    for seat in range(SEATS):
        hand = by_seat.get(seat)
        if hand is None:
            rows.append(ChajiaoPlayerResult(seat=seat, given=False, source="absent"))
            lines.append(f"P{seat}: hand not shown, left out of the check")
            continue
        row = result.players[seat]
        with refusing():
            fan, key = best_wait_fan(hand.concealed, engine_melds(hand.melds), engine_rules)
        rows.append(ChajiaoPlayerResult(
            seat=seat, given=True, source=hand.source, concealed=to_mpsz(hand.concealed), melds=hand.melds,
            bao_ting=hand.bao_ting, ting=row.ting,
            waits=[ChajiaoWait(tile=w, copies_left=left[TILES.index(w)]) for w in row.waits],
            best_fan=fan, best_hand_type=_type(key, fan), total=totals[seat], retake=hand.retake))
        ready = ("叫牌 (ready), waits " + " ".join(row.waits) + (f", best {HAND_TYPES[key][0]} {fan} fan"
                                                                    if key else "")) if row.ting else "not 叫牌"
        lines.append(f"P{seat}: {to_mpsz(hand.concealed)} — {ready}")
    ting_given = [r.ting for r in rows if r.given]
    if all(ting_given) or not any(ting_given):
        lines.append("查叫: " + ("everybody" if all(ting_given) else "nobody") + " shown is 叫牌, no payment")
    lines += [t.reason for t in ledger]
    return ChajiaoResponse(rules=result.rules.preset, players=rows,
                           ledger=[TransferOut.of(t) for t in ledger],
                           next_dealer=result.next_dealer if len(hands) == SEATS else None, explanation=lines)


def chajiao_request(req: ChajiaoRequest) -> ChajiaoResponse:
    """``POST /v1/chajiao`` and ``zhuoji chajiao`` with hands as text: :func:`chajiao` on the request's hands."""
    hands = []
    for index, p in enumerate(req.players):
        with refusing():
            tiles = parse_tiles(p.concealed)
        hands.append(DrawHand(seat=index if p.seat is None else p.seat, concealed=tiles, melds=p.melds,
                              bao_ting=p.bao_ting))
    return chajiao(hands, req.rules, req.dealer, req.streak)


def text_hand(seat: int, text: str) -> DrawHand:
    """``"123m456p789s1p pong:5m"``: MPSZ concealed tiles, then melds as TYPE:TILE (as ``zhuoji hand --meld``)."""
    tiles, melds = [], []
    for token in text.split():
        kind, sep, tile = token.partition(":")
        if sep:
            try:
                melds.append(MeldIn.model_validate({"type": kind, "tile": tile}))
            except ValidationError:
                raise Refused("invalid_hand", f"hand{seat}: meld {token!r}: expected TYPE:TILE with TYPE one "
                                              f"of pong, kong, added_kong, concealed_kong") from None
        else:
            with refusing():
                tiles += parse_tiles(token)
    return DrawHand(seat=seat, concealed=tiles, melds=melds)
