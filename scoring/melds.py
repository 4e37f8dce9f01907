"""Melds (副露) laid on the table: 碰 pong and the three kinds of 杠 kong (豆).

No 吃 (chow) in 捉鸡 mahjong, so every meld is three or four of one tile.
Input form (JSON): ``{"type": "pong"|"kong"|"added_kong"|"concealed_kong", "tile": "5m", "from": 2}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scoring.tiles import tile_index

MELD_TYPES: dict[str, tuple[str, str, int]] = {
    # type: (Chinese term, English meaning, tiles laid)
    "pong": ("碰", "pong: three of a tile claimed from a discard", 3),
    "kong": ("点豆", "exposed kong: three concealed plus another player's discard", 4),
    "added_kong": ("转弯豆", "added kong: a pong upgraded by a self-drawn fourth (爬坡豆)", 4),
    "concealed_kong": ("闷豆", "concealed kong: four concealed tiles, laid face down", 4),
}


MELD_KEYS = frozenset({"type", "tile", "from", "late"})


@dataclass(frozen=True)
class Meld:
    type: str
    tile: str
    source: int | None = None  # seat that fed the pong / exposed kong ("from" in JSON)
    late: bool = False  # LPS 憨包豆: declared a round later than first possible

    @property
    def size(self) -> int:
        return MELD_TYPES[self.type][2]

    @property
    def is_kong(self) -> bool:
        return self.type != "pong"

    @property
    def tiles(self) -> list[str]:
        return [self.tile] * self.size

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type, "tile": self.tile}
        if self.source is not None:
            d["from"] = self.source
        if self.late:
            d["late"] = True
        return d


def parse_meld(obj: Meld | Mapping[str, Any]) -> Meld:
    """A :class:`Meld` from its JSON form; ``ValueError`` with a clear message on anything malformed."""
    if isinstance(obj, Meld):
        return obj
    if not isinstance(obj, Mapping):
        raise ValueError(f"a meld must be an object like {{'type': 'pong', 'tile': '5m'}}, not {obj!r}")
    unknown = sorted(map(repr, set(obj) - MELD_KEYS))
    if unknown:
        # A misspelt key ("form" for "from") would otherwise be dropped without a word.
        raise ValueError(f"unknown key(s) {', '.join(unknown)} in a meld; allowed: {', '.join(sorted(MELD_KEYS))}")
    kind = obj.get("type")
    if not isinstance(kind, str) or kind not in MELD_TYPES:
        raise ValueError(f"meld type must be one of {', '.join(MELD_TYPES)}, not {kind!r}")
    tile = obj.get("tile")
    tile_index(tile)  # raises ValueError for a non-tile
    source = obj.get("from")
    if source is not None and (isinstance(source, bool) or not isinstance(source, int) or not 0 <= source <= 3):
        raise ValueError(f"meld 'from' must be a seat 0..3, not {source!r}")
    late = obj.get("late", False)
    if not isinstance(late, bool):
        raise ValueError(f"meld 'late' must be true or false, not {late!r}")
    return Meld(kind, tile, source, late)


def parse_melds(objs: Iterable[Meld | Mapping[str, Any]] | None) -> list[Meld]:
    if objs is None:
        return []
    if isinstance(objs, (str, bytes, Mapping)) or not isinstance(objs, Iterable):
        raise TypeError(f"melds must be a list of meld objects, not {type(objs).__name__}")
    return [parse_meld(o) for o in objs]
