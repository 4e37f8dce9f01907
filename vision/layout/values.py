"""The layout's values: what lies on the table in front of one player, box by box."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

LEGAL_COUNTS = (13, 14)  # concealed + 3 per meld: waiting, or holding the winning tile


@dataclass(frozen=True)
class PlacedTile:
    """One box in a group: its index into the :class:`Detections`, the detector's top-1 class name, and
    whether it lies sideways (turned 90°, e.g. the claimed tile of a 碰 pong)."""

    box: int
    tile: str
    turned: bool = False

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"box": self.box, "tile": self.tile}
        if self.turned:
            d["turned"] = True
        return d


@dataclass
class MeldGroup:
    """A meld as laid: ``type`` pong (碰) / kong (杠, exposed or added) / concealed_kong (闷豆).

    ``tile`` is the tile the group shows (``None`` when every tile lies face down: an unidentified 闷豆);
    ``missing`` counts tiles of the meld without a box (a pong seen as two tiles has ``missing=1``).
    """

    type: str
    tile: str | None
    tiles: list[PlacedTile]
    missing: int = 0
    confidence: float = 1.0

    @property
    def boxes(self) -> list[int]:
        return [t.box for t in self.tiles]

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "tile": self.tile, "tiles": [t.to_json() for t in self.tiles],
                "missing": self.missing, "confidence": round(self.confidence, 3)}


@dataclass(frozen=True)
class Unassigned:
    """A box that belongs to no group, and why."""

    box: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"box": self.box, "reason": self.reason}


@dataclass
class Layout:
    """What lies on the table in front of one player.

    concealed: the 手牌 concealed hand, left to right as the player sees it (the drawn tile, if set apart, last).
    melds: 碰/杠/闷豆 groups. river: 牌河 discards in reading order (row nearest the hand first, each row left
    to right). indicator: the flipped 翻鸡 tile lying apart. unassigned: boxes in no group, with a reason.
    tile_size: (width along the row, depth across it) in pixels, median over boxes. angle: direction of the
    rows in degrees, image axes (x right, y down; clockwise positive), pointing left to right for the player.
    holes: tile-sized gaps inside the concealed row (a tile the detector probably missed).
    confidence: per part, 0..1 ("concealed": its gaps clear and its count legal; "river": well apart from the
    hand; "indicator": the only lone tile; "orientation": 1 from the river, 0.9 from the faces, 0.8 from
    perspective, 0.5 assumed upright; "hand": 0.5 when two blocks of rows could each be the hand); each meld has its own.
    notes: human-readable doubts found while grouping.
    """

    concealed: list[PlacedTile] = field(default_factory=list)
    melds: list[MeldGroup] = field(default_factory=list)
    river: list[PlacedTile] = field(default_factory=list)
    indicator: PlacedTile | None = None
    unassigned: list[Unassigned] = field(default_factory=list)
    tile_size: tuple[float, float] = (0.0, 0.0)
    angle: float = 0.0
    holes: int = 0
    confidence: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        """Concealed tiles (with holes) + 3 per meld: 13 while waiting, 14 with the winning tile."""
        return len(self.concealed) + self.holes + 3 * len(self.melds)

    def to_json(self) -> dict[str, Any]:
        return {
            "concealed": [t.to_json() for t in self.concealed],
            "melds": [m.to_json() for m in self.melds],
            "river": [t.to_json() for t in self.river],
            "indicator": self.indicator.to_json() if self.indicator else None,
            "unassigned": [u.to_json() for u in self.unassigned],
            "tile_size": [round(self.tile_size[0], 1), round(self.tile_size[1], 1)],
            "angle": round(self.angle, 1),
            "holes": self.holes,
            "confidence": {k: round(v, 3) for k, v in self.confidence.items()},
            "notes": list(self.notes),
        }
