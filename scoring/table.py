"""The table at the end of a hand: the validated input of :func:`scoring.settle.settle` (docs/rules.md#engine-input).

``parse_table(state, rules)`` turns the JSON form into plain frozen dataclasses and raises ``ValueError`` with a
readable message for anything that does not fit: unknown keys, wrong types, seats out of range, tile counts,
a fifth copy of a tile anywhere on the table, or an outcome that contradicts itself.

Precedence: a ``"rules"`` key inside the state wins over the ``rules`` argument; a ``"base"`` key (底分) inside
the state wins over the base of the rules (``"base": null`` = not given). Inputs that only house rules use
(docs/rules.md#engine-input): ``"gen_zhuang": true`` (跟庄), ``"first_8p"`` (the first discarded 8p, as ``first_1s``),
``"first_draw": true`` in a win outcome (天胡/地胡), ``"weekday": 1..7`` (星期鸡, 7 = Sunday; required when
``xingqi_ji`` is played and someone won), ``"indicators": [tile, ...]`` (前后鸡/滚筒鸡: the extra indicator tiles
in the order they were turned); they are accepted under any rules and score only when their switch is on.

Quick rounds: a seat that did not win may be told instead of shown (:class:`Told`):
``{"not_ready": true, "melds": [...], "river": "..."}`` or ``{"ready": true, "holds": "1s1s6m", "melds": [...],
"river": "..."}``. What a settlement needs of a player who did not win is whether he is 叫牌 (ready), the chicken
tiles in his hand, his melds (豆, claimed chickens) and his river (冲锋鸡, 包鸡); it settles exactly as his full
hand would. ``holds`` may list any tiles: only those that are chickens under the rules and the flipped tile
count (the others are worth nothing), and all of them count towards the 4 copies of a tile on the table. A
winner, and the player a penalty (包牌, 诈胡) judges, must show his hand. At 黄牌 (exhaustive draw) a seat may be
told not ready (``{"not_ready": true}``, melds and river optional: a draw pays no 豆 or 鸡, he only pays 查叫);
a seat said to be 叫牌 at a draw must show its tiles: his waits and best fan decide what he is paid.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scoring.melds import Meld, parse_melds
from scoring.rules import Rules, check_base, get_rules
from scoring.tiles import TILES, parse_tiles, tile_index, to_counts, to_mpsz

SEATS = 4
HAND_SIZE = 13  # tiles before the winning tile, a meld counting 3 (a kong's 4th is its replacement draw)


@dataclass(frozen=True)
class Told:
    """A hand not shown (a quick round): what the table says of it instead of its concealed tiles."""

    ready: bool  # 叫牌 (ready), taken as told
    holds: tuple[str, ...] = ()  # concealed tiles said to be held for 鸡 (chickens); only chickens count


@dataclass(frozen=True)
class Player:
    concealed: tuple[str, ...]  # empty for a hand told (``told``)
    melds: tuple[Meld, ...]
    river: tuple[str, ...]  # discards still in front of the player, in discard order when given as a list
    bao_ting: bool = False  # 报听 declared
    told: Told | None = None  # hand not shown: 叫牌 or not and the chicken tiles held, as the table tells it

    @property
    def not_ready(self) -> bool:
        """Told to be not 叫牌 (hand not shown)."""
        return self.told is not None and not self.told.ready

    @property
    def hand_tiles(self) -> tuple[str, ...]:
        """The concealed tiles known: the whole hand, or the tiles a hand told holds."""
        return self.concealed if self.told is None else self.told.holds

    @property
    def meld_tiles(self) -> list[str]:
        return [t for m in self.melds for t in m.tiles]

    @property
    def kongs(self) -> list[Meld]:
        return [m for m in self.melds if m.is_kong]


@dataclass(frozen=True)
class Win:
    winners: tuple[int, ...]
    win_tile: str
    self_drawn: bool
    discarder: int | None = None  # the player who discarded the winning tile; the robbed player on 抢杠
    kong_draw: bool = False  # 杠上花: self-drawn on a kong replacement
    hot_discard: bool = False  # 热炮: the discarder's first discard after his kong
    robbed_kong: bool = False  # 抢杠: won on the 4th tile of the discarder's 转弯豆
    first_draw: bool = False  # 天胡/地胡: self-drawn on the winner's first draw (the dealer: his dealt 14)


@dataclass(frozen=True)
class Draw:
    """黄牌 (exhaustive draw): nobody won and the wall is empty."""


@dataclass(frozen=True)
class PassLockPenalty:
    """包牌 (过水): the player passed a winnable discard, then won on another before his next draw."""

    player: int
    win_tile: str  # the tile of the voided win, needed for his win value W


@dataclass(frozen=True)
class FalseWin:
    """诈胡 (false win): the player declared a win his tiles do not make."""

    player: int


Outcome = Win | Draw | PassLockPenalty | FalseWin


@dataclass(frozen=True)
class FirstOneS:
    """The first 1s (or, for ``first_8p``, 8p) discarded this hand (冲锋鸡 if it stays in the river, 责任鸡 if
    a 1s is claimed)."""

    discarder: int
    claimed_by: int | None = None


@dataclass(frozen=True)
class Discard:
    """One discard of ``discard_order``: who threw which tile, and who claimed it (碰/杠) if anyone did."""

    seat: int
    tile: str
    claimed_by: int | None = None


@dataclass(frozen=True)
class Table:
    rules: Rules
    dealer: int
    streak: int  # k: hands dealt in a row by the current dealer, this one included
    players: tuple[Player, ...]  # seats 0..3
    outcome: Outcome
    flipped: str | None = None  # 翻鸡 indicator F; None = no flip (wall empty, last tile, no winner)
    first_1s: FirstOneS | None = None
    first_8p: FirstOneS | None = None  # the first discarded 8p: a 冲锋鸡 under the house rule wuguji_chongfeng
    gen_zhuang: bool = False  # 跟庄 (开局跟): the dealer's first discard was followed by all three others
    weekday: int | None = None  # 星期鸡: the round's day of the week, 1..7 (7 = Sunday)
    indicators: tuple[str, ...] = ()  # 前后鸡 / 滚筒鸡: extra indicator tiles turned from the wall's end, in order
    discard_order: tuple[Discard, ...] | None = None  # every discard in the order made (独山); None = not given

    def hand(self, seat: int) -> list[str]:
        """The concealed tiles of a seat, with the winning tile added for a winner."""
        tiles = list(self.players[seat].concealed)
        if isinstance(self.outcome, Win) and seat in self.outcome.winners:
            tiles.append(self.outcome.win_tile)
        return tiles

    def first_1s_is_win_tile(self) -> bool:
        """The first discarded 1s was the winning tile of a 点炮: just a chicken in the winner's hand (P4)."""
        return self.first_is_win_tile(self.first_1s, "1s")

    def first_is_win_tile(self, first: FirstOneS | None, tile: str) -> bool:
        """The first discarded ``tile`` (1s or 8p) was the winning tile of a 点炮."""
        win = self.outcome
        return (first is not None and isinstance(win, Win) and win.discarder == first.discarder
                and win.win_tile == tile and not win.robbed_kong
                and (first.claimed_by is None or first.claimed_by in win.winners))


_STATE_KEYS = {"rules", "dealer", "streak", "players", "outcome", "flipped", "first_1s", "base", "first_8p",
               "gen_zhuang", "weekday", "indicators", "discard_order"}
_PLAYER_KEYS = {"concealed", "melds", "river", "bao_ting", "not_ready", "ready", "holds"}
_OUTCOME_KEYS = {
    "win": {"type", "winners", "win_tile", "self_drawn", "discarder", "kong_draw", "hot_discard", "robbed_kong",
            "first_draw"},
    "draw": {"type"},
    "pass_lock_penalty": {"type", "player", "win_tile"},
    "false_win": {"type", "player"},
}


def parse_table(state: Any, rules: str | Mapping[str, Any] | Rules | None = "gy-normal") -> Table:
    """Validate a table state (JSON form, see module doc) into a :class:`Table`."""
    obj = _object(state, "the table state", _STATE_KEYS, required=("players", "outcome"))
    rule_set = get_rules(rules if obj.get("rules") is None else obj["rules"])
    if obj.get("base") is not None:
        rule_set = dataclasses.replace(rule_set, base=check_base(obj["base"]))
    dealer = _seat(obj.get("dealer", 0), "dealer")
    streak = _whole(obj.get("streak", 1), "streak (连庄 count k)", minimum=1)
    raw_players = obj["players"]
    if not isinstance(raw_players, list) or len(raw_players) != SEATS:
        count = len(raw_players) if isinstance(raw_players, list) else type(raw_players).__name__
        raise ValueError(f"players must be a list of {SEATS} seats, got {count}")
    players = tuple(_player(p, seat) for seat, p in enumerate(raw_players))
    outcome = _outcome(obj["outcome"])
    flipped = None if obj.get("flipped") is None else _tile(obj["flipped"], "flipped (翻鸡 indicator)")
    first_1s = _first_1s(obj.get("first_1s"))
    first_8p = _first_1s(obj.get("first_8p"), "first_8p")
    gen_zhuang = _flag(obj.get("gen_zhuang", False), "gen_zhuang (跟庄)")
    weekday = obj.get("weekday")
    if weekday is not None and (isinstance(weekday, bool) or not isinstance(weekday, int) or not 1 <= weekday <= 7):
        raise ValueError(f"weekday (星期鸡) must be a day 1..7 (7 = Sunday), not {weekday!r}")
    indicators = obj.get("indicators") or []
    if not isinstance(indicators, list):
        raise ValueError("indicators (前后鸡/滚筒鸡) must be a list of tiles, in the order they were turned")
    indicators = tuple(_tile(t, "indicators (前后鸡/滚筒鸡 indicator tiles)") for t in indicators)
    order = obj.get("discard_order")
    discard_order = None if order is None else parse_discard_order(order)
    table = Table(rule_set, dealer, streak, players, outcome, flipped, first_1s, first_8p, gen_zhuang, weekday,
                  indicators, discard_order)
    _check_table(table)
    return table


def check_table(table: Table) -> Table:
    """The cross checks of :func:`parse_table` (tile counts, winners' hands, who can have done what) on a table built
    from already validated values (``pipeline.models.SettleRequest.to_table``); the table itself when it passes."""
    _check_table(table)
    return table


# ---- field parsers -------------------------------------------------------------------------------------------

def _object(value: Any, where: str, allowed: set[str], required: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be an object, not {type(value).__name__}")
    unknown = sorted(map(repr, set(value) - allowed))
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)} in {where}; "
                         f"allowed: {', '.join(sorted(allowed))}")
    missing = [k for k in required if k not in value]
    if missing:
        raise ValueError(f"{where} lacks {', '.join(map(repr, missing))}")
    return dict(value)


def _whole(value: Any, where: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{where} must be a whole number ≥ {minimum}, not {value!r}")
    return value


def _seat(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < SEATS:
        raise ValueError(f"{where} must be a seat 0..{SEATS - 1}, not {value!r}")
    return value


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{where} must be true or false, not {value!r}")
    return value


def _tile(value: Any, where: str) -> str:
    try:
        tile_index(value)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return value


def _tiles(value: Any, where: str) -> tuple[str, ...]:
    """MPSZ text (order lost) or a list of tile names (order kept)."""
    if isinstance(value, str):
        try:
            return tuple(parse_tiles(value))
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    if isinstance(value, list):
        return tuple(_tile(t, where) for t in value)
    raise ValueError(f"{where} must be MPSZ text such as '123m45p' or a list of tile names, "
                     f"not {type(value).__name__}")


def _player(value: Any, seat: int) -> Player:
    where = f"P{seat}"
    obj = _object(value, where, _PLAYER_KEYS)
    told = _told(obj, where)
    if told is None and "concealed" not in obj:
        raise ValueError(f"{where} lacks 'concealed' (the tiles); a hand not shown is {{\"ready\": true, "
                         f"\"holds\": …}} or {{\"not_ready\": true}}")
    raw_melds = obj.get("melds") or []
    if not isinstance(raw_melds, list):
        raise ValueError(f"{where} melds must be a list of meld objects, not {type(raw_melds).__name__}")
    try:
        melds = parse_melds(raw_melds)
    except ValueError as exc:
        raise ValueError(f"{where} melds: {exc}") from None
    concealed = () if told is not None else _tiles(obj["concealed"], f"{where} concealed")
    return Player(concealed=concealed, melds=tuple(melds), river=_tiles(obj.get("river", ""), f"{where} river"),
                  bao_ting=_flag(obj.get("bao_ting", False), f"{where} bao_ting (报听)"), told=told)


def _told(obj: dict[str, Any], where: str) -> Told | None:
    """``ready``/``not_ready`` + ``holds`` of a hand not shown; None for a hand shown (``concealed``)."""
    ready = _flag(obj.get("ready", False), f"{where} ready (叫牌, hand not shown)")
    not_ready = _flag(obj.get("not_ready", False), f"{where} not_ready (not 叫牌, hand not shown)")
    if ready and not_ready:
        raise ValueError(f"{where} is marked both ready and not_ready: either ready (叫牌) or not_ready")
    if not (ready or not_ready):
        if "holds" in obj:
            raise ValueError(f"{where} gives holds (the chicken tiles of a hand not shown) without ready or "
                             f"not_ready: give either the tiles (concealed) or ready/not_ready with holds")
        return None
    if "concealed" in obj:
        mark = "ready" if ready else "not_ready"
        raise ValueError(f"{where} is marked {mark} (hand not shown), so give no concealed: either the tiles "
                         f"or {mark} with the chicken tiles it holds (holds)")
    return Told(ready=ready, holds=_tiles(obj.get("holds", ""), f"{where} holds"))


def _outcome(value: Any) -> Outcome:
    kind = value.get("type") if isinstance(value, Mapping) else None
    if not isinstance(kind, str) or kind not in _OUTCOME_KEYS:
        raise ValueError(f"outcome must be an object whose type is one of {', '.join(_OUTCOME_KEYS)}, "
                         f"not {kind if kind is not None else value!r}")
    where = f"{kind} outcome"
    if kind == "draw":
        _object(value, where, _OUTCOME_KEYS[kind])
        return Draw()
    if kind == "false_win":
        obj = _object(value, where, _OUTCOME_KEYS[kind], required=("player",))
        return FalseWin(_seat(obj["player"], f"{where} player"))
    if kind == "pass_lock_penalty":
        obj = _object(value, where, _OUTCOME_KEYS[kind], required=("player", "win_tile"))
        return PassLockPenalty(_seat(obj["player"], f"{where} player"), _tile(obj["win_tile"], f"{where} win_tile"))
    obj = _object(value, where, _OUTCOME_KEYS[kind], required=("winners",))
    if "win_tile" not in obj or obj["win_tile"] is None:
        raise ValueError("a win needs its win_tile (the tile that completed the hand)")
    winners = obj["winners"]
    if not isinstance(winners, list) or not 1 <= len(winners) <= SEATS - 1:
        raise ValueError(f"winners must be a list of 1 to 3 seats, not {winners!r}")
    winners = tuple(_seat(w, "winner") for w in winners)
    if len(set(winners)) != len(winners):
        raise ValueError(f"winners lists a seat twice: {list(winners)}")
    discarder = obj.get("discarder")
    discarder = None if discarder is None else _seat(discarder, "discarder")
    given = obj.get("self_drawn")  # null = not given, as the API schema reads it
    self_drawn = discarder is None if given is None else _flag(given, "self_drawn (自摸)")
    return Win(winners=winners, win_tile=_tile(obj["win_tile"], "win_tile"), self_drawn=self_drawn,
               discarder=discarder, kong_draw=_flag(obj.get("kong_draw", False), "kong_draw (杠上花)"),
               hot_discard=_flag(obj.get("hot_discard", False), "hot_discard (热炮)"),
               robbed_kong=_flag(obj.get("robbed_kong", False), "robbed_kong (抢杠)"),
               first_draw=_flag(obj.get("first_draw", False), "first_draw (天胡/地胡)"))


def _first_1s(value: Any, where: str = "first_1s") -> FirstOneS | None:
    if value is None:
        return None
    obj = _object(value, where, {"discarder", "claimed_by"}, required=("discarder",))
    claimed_by = obj.get("claimed_by")
    return FirstOneS(_seat(obj["discarder"], f"{where} discarder"),
                     None if claimed_by is None else _seat(claimed_by, f"{where} claimed_by"))


def parse_discard_order(value: Any) -> tuple[Discard, ...]:
    """``[[seat, tile], [seat, tile, claimed_by], ...]``: every discard of the hand in the order made."""
    where = "discard_order (every discard in the order made: [seat, tile] or [seat, tile, claimed_by])"
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list")
    order = []
    for entry in value:
        if not isinstance(entry, (list, tuple)) or len(entry) not in (2, 3):
            raise ValueError(f"{where}: {entry!r} is not [seat, tile] or [seat, tile, claimed_by]")
        seat = _seat(entry[0], "discard_order seat")
        claimer = None if len(entry) == 2 or entry[2] is None else _seat(entry[2], "discard_order claimed_by")
        if claimer == seat:
            raise ValueError(f"discard_order: P{seat} cannot claim his own discard")
        order.append(Discard(seat, _tile(entry[1], "discard_order tile"), claimer))
    return tuple(order)


# ---- cross checks --------------------------------------------------------------------------------------------

def _check_table(table: Table) -> None:
    outcome = table.outcome
    if isinstance(outcome, Win):
        _check_win(table, outcome)
    elif table.flipped is not None or table.indicators:
        raise ValueError("flipped and indicators must be empty: 翻鸡 (the flipped chicken) is only turned after a win")
    if table.rules.xingqi_ji and isinstance(outcome, Win) and table.weekday is None:
        raise ValueError("星期鸡 (xingqi_ji) is played: give the round's weekday, 1..7 (7 = Sunday)")
    for seat, player in enumerate(table.players):
        _check_player(table, seat, player)
    counts = table_counts(table)
    over = [f"{TILES[i]} ×{c}" for i, c in enumerate(counts) if c > 4]
    if over:
        raise ValueError(f"more than 4 copies on the table (hands, melds, rivers, winning and flipped tile): "
                         f"{', '.join(over)}")
    if isinstance(outcome, PassLockPenalty):
        own = to_counts([*_table_tiles(table, outcome.player), outcome.win_tile])
        if max(own) > 4:
            raise ValueError(f"P{outcome.player} cannot win on {outcome.win_tile}: all 4 copies are in his own tiles")
    _check_first(table, table.first_1s, "1s", "first_1s")
    _check_first(table, table.first_8p, "8p", "first_8p")
    if table.discard_order is not None:
        _check_discard_order(table, table.discard_order)


def table_counts(table: Table) -> list[int]:
    """Copies of each tile on the table: hands, melds, rivers, the winning tile and the flipped tile."""
    counts = to_counts(t for seat in range(SEATS) for t in _table_tiles(table, seat))
    if isinstance(table.outcome, Win):
        counts[tile_index(table.outcome.win_tile)] += 1  # one physical tile, however many players win on it
    if table.flipped is not None:
        counts[tile_index(table.flipped)] += 1
    for tile in table.indicators:
        counts[tile_index(tile)] += 1
    return counts


def _table_tiles(table: Table, seat: int) -> list[str]:
    player = table.players[seat]
    return [*player.hand_tiles, *player.meld_tiles, *player.river]


def _check_player(table: Table, seat: int, player: Player) -> None:
    if player.told is not None:
        _check_told(table, seat, player)
        return
    size = len(player.concealed) + 3 * len(player.melds)
    outcome = table.outcome
    is_winner = isinstance(outcome, Win) and seat in outcome.winners
    if size != HAND_SIZE:
        role = "a winner holds 13 (the win tile is given apart)" if is_winner else "every player holds 13"
        raise ValueError(f"P{seat} has {len(player.concealed)} concealed tiles and {len(player.melds)} melds = "
                         f"{size} counting 3 per meld; {role}")
    _check_melds(seat, player)


def _check_told(table: Table, seat: int, player: Player) -> None:
    """A hand not shown: never a winner's nor a penalized player's (judged from his tiles); at a draw only not
    叫牌 (a 叫牌 hand's waits decide his 查叫); at most the tiles a hand holds besides its melds."""
    outcome, told = table.outcome, player.told
    assert told is not None
    shown = "give his tiles (concealed), not ready/not_ready"
    if isinstance(outcome, Win) and seat in outcome.winners:
        raise ValueError(f"P{seat} won, so his hand is judged from its tiles: {shown}")
    if isinstance(outcome, PassLockPenalty | FalseWin) and seat == outcome.player:
        raise ValueError(f"P{seat}'s penalty is judged from his tiles: {shown}")
    if isinstance(outcome, Draw) and told.ready:
        raise ValueError(f"P{seat} is said to be ready (叫牌) at 黄牌 (draw): his waits decide what he is paid "
                         f"(查叫), so give his tiles (concealed); a hand not ready may be {{\"not_ready\": true}}")
    room = HAND_SIZE - 3 * len(player.melds)
    if len(told.holds) > room:
        raise ValueError(f"P{seat} holds {len(told.holds)} tiles besides {len(player.melds)} melds: a hand has "
                         f"at most {room} concealed tiles then")
    _check_melds(seat, player)


def _check_melds(seat: int, player: Player) -> None:
    if player.bao_ting and player.melds:
        raise ValueError(f"P{seat} declared 报听 (ready at the start) but has melds: a 报听 hand is locked, "
                         f"no 碰/杠 (pong/kong)")
    for meld in player.melds:
        if meld.source == seat:
            raise ValueError(f"P{seat}'s {meld.type} of {meld.tile} says it came from P{seat} himself")
        if meld.type == "kong" and meld.source is None:
            raise ValueError(f"P{seat}'s exposed kong (点豆) of {meld.tile} needs 'from': the seat whose "
                             f"discard made it pays for it")
        if meld.type == "concealed_kong" and meld.source is not None:
            raise ValueError(f"P{seat}'s concealed kong (闷豆) of {meld.tile} cannot come from another seat")


def _check_win(table: Table, win: Win) -> None:
    d = win.discarder
    if win.self_drawn:
        if d is not None:
            raise ValueError(f"a self-drawn win (自摸) has no discarder, but discarder is P{d}")
        if len(win.winners) != 1:
            raise ValueError("only one player can win by self-draw (自摸)")
        if win.hot_discard or win.robbed_kong:
            raise ValueError("热炮 (hot discard) and 抢杠 (robbed kong) are wins on another player's tile, "
                             "not self-drawn")
        if win.kong_draw and not table.players[win.winners[0]].kongs:
            raise ValueError(f"杠上花 (win on a kong replacement) needs a kong of P{win.winners[0]}")
        if win.first_draw:
            _check_first_draw(table, win)
        return
    if win.first_draw:
        raise ValueError("first_draw (天胡/地胡) is a self-drawn win on the first draw; self_drawn must be true")
    if win.kong_draw:
        raise ValueError("杠上花 (kong_draw) is a self-drawn win; self_drawn must be true")
    if d is None:
        raise ValueError("a win on a discard (点炮) needs the discarder's seat")
    if d in win.winners:
        raise ValueError(f"the discarder P{d} cannot also be a winner")
    discarder = table.players[d]
    if win.hot_discard and win.robbed_kong:
        raise ValueError("a win cannot be both 热炮 (hot discard) and 抢杠 (robbed kong)")
    if win.hot_discard and not discarder.kongs:
        raise ValueError(f"热炮 (hot discard) is the discarder's first discard after a kong, but P{d} has no kong")
    if win.robbed_kong and not any(m.type == "pong" and m.tile == win.win_tile for m in discarder.melds):
        raise ValueError(f"抢杠 (robbed kong): P{d} must hold the pong of {win.win_tile} he was upgrading "
                         f"(list the robbed 转弯豆 as a pong)")


def _check_first_draw(table: Table, win: Win) -> None:
    """天胡/地胡: nothing laid and nothing discarded by the winner before his first draw."""
    w = win.winners[0]
    player = table.players[w]
    if win.kong_draw or player.melds:
        raise ValueError(f"first_draw (天胡/地胡): P{w} won on his first draw, so he cannot have melds or a kong "
                         f"replacement draw")
    if player.river:
        raise ValueError(f"first_draw (天胡/地胡): P{w} won on his first draw, so his river must be empty")
    if w == table.dealer and any(p.river or p.melds for p in table.players):
        raise ValueError("first_draw as the dealer (天胡) is a win on the dealt 14 tiles, before any discard: "
                         "every river and meld must be empty")


def _check_discard_order(table: Table, order: tuple[Discard, ...]) -> None:
    """Each seat's discards in the order are its river, the tiles others claimed from it, and the tile it
    fed a win (the last discard of the hand); a claim names a pong or kong of that tile made from that seat."""
    win = table.outcome
    fed = isinstance(win, Win) and win.discarder is not None and not win.robbed_kong
    if fed and (not order or (order[-1].seat, order[-1].tile) != (win.discarder, win.win_tile)):
        raise ValueError(f"discard_order must end with the tile that fed the win: [{win.discarder}, "
                         f"\"{win.win_tile}\"]")
    for seat, player in enumerate(table.players):
        if player.not_ready:
            continue
        claimed = [m.tile for p in table.players for m in p.melds if m.source == seat and m.type != "concealed_kong"]
        expected = sorted([*player.river, *claimed, *([win.win_tile] if fed and win.discarder == seat else [])])
        given = sorted(d.tile for d in order if d.seat == seat)
        if given != expected:
            raise ValueError(f"discard_order lists P{seat}'s discards as {to_mpsz(given) or 'none'}, but his river, "
                             f"the tiles claimed from him and a tile that fed the win make "
                             f"{to_mpsz(expected) or 'none'}")
    for d in order:
        if d.claimed_by is not None and not any(m.tile == d.tile and m.source == d.seat
                                                for m in table.players[d.claimed_by].melds):
            raise ValueError(f"discard_order: P{d.claimed_by} claimed P{d.seat}'s {d.tile}, so P{d.claimed_by} "
                             f"needs a pong or kong of {d.tile} from P{d.seat}")


def _check_first(table: Table, first: FirstOneS | None, tile: str, where: str) -> None:
    """The first discarded ``tile`` is in its discarder's river, or in the claimer's pong/kong, or won on."""
    if first is None:
        return
    d, r = first.discarder, first.claimed_by
    if isinstance(table.outcome, Draw) and any(s is not None and table.players[s].told is not None for s in (d, r)):
        return  # a hand not shown at 黄牌 may leave out its river and melds, and a draw pays no 鸡
    won_on_it = table.first_is_win_tile(first, tile)
    if r is None:
        if tile not in table.players[d].river and not won_on_it:
            raise ValueError(f"{where}: P{d} discarded the first {tile}, but it is not in P{d}'s river; "
                             f"give claimed_by if someone took it")
        return
    if r == d:
        raise ValueError(f"{where}: P{d} cannot claim his own discard")
    if won_on_it:
        return
    if not any(m.tile == tile and m.type in ("pong", "kong", "added_kong") for m in table.players[r].melds):
        raise ValueError(f"{where}: P{r} claimed the first {tile}, so P{r} needs a pong or kong of {tile}")
