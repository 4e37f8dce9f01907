"""The engine's results as typed values: a hand analysis (a win, or the waits of a waiting hand) and a whole-table
settlement. Each has ``to_dict()``, the JSON form the CLI prints and the HTTP API answers (its keys in the order
they are written here).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scoring.ledger import Transfer, matrix
from scoring.melds import Meld
from scoring.rules import Rules


@dataclass(frozen=True)
class HandType:
    """The scored type of a complete hand.

    ``key`` is the fan-table row (e.g. ``"qingdadui"``), ``base`` the base shape before 清, ``qing`` whether
    every tile (melds included) is of one suit, ``decompositions`` the readings as MPSZ groups, the scored
    reading first.
    """

    key: str
    name_zh: str
    name_en: str
    fan: int
    qing: bool
    base: str
    decompositions: tuple[tuple[str, ...], ...]

    def label(self) -> str:
        """``"大对子 (all triplets)"``."""
        return f"{self.name_zh} ({self.name_en})"

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "name_zh": self.name_zh, "name_en": self.name_en, "fan": self.fan}


@dataclass(frozen=True)
class WaitValue:
    """One wait (听牌) of a waiting hand: the type it completes and its values (docs/rules.md#hand-types, #kong-gate)."""

    tile: str
    hand_type: HandType
    self_drawn_value: int  # win value W if self-drawn (自摸)
    discard_win_allowed: bool  # 胡牌通行证 (the 豆 gate): may it be won on another player's tile

    def to_dict(self) -> dict[str, Any]:
        return {"tile": self.tile, "hand_type": self.hand_type.key, "name_zh": self.hand_type.name_zh,
                "fan": self.hand_type.fan, "self_drawn_value": self.self_drawn_value,
                "discard_win_allowed": self.discard_win_allowed}


@dataclass(frozen=True)
class WaitAnalysis:
    """A hand without its winning tile: whether it is 叫牌 (ready), and per wait its type and values."""

    concealed: str  # MPSZ
    melds: tuple[Meld, ...]
    rules: str  # the preset's name
    waits: tuple[WaitValue, ...]
    explanation: tuple[str, ...]

    @property
    def ready(self) -> bool:
        return bool(self.waits)

    @property
    def best(self) -> WaitValue | None:
        """The wait of the highest type fan (the first on a tie): what 黄牌查叫 (the draw check) uses."""
        return max(self.waits, key=lambda w: w.hand_type.fan, default=None)

    def to_dict(self) -> dict[str, Any]:
        best = self.best
        return {"concealed": self.concealed, "melds": [m.to_dict() for m in self.melds], "rules": self.rules,
                "ready": self.ready, "waits": [w.to_dict() for w in self.waits],
                "best_fan": best.hand_type.fan if best else 0,
                "best_hand_type": best.hand_type.key if best else None, "explanation": list(self.explanation)}


@dataclass(frozen=True)
class WinAnalysis:
    """A hand with its winning tile: its type and win value W, or why the tiles do not make a win (不成牌)."""

    concealed: str  # MPSZ, without the winning tile
    win_tile: str
    melds: tuple[Meld, ...]
    self_drawn: bool
    rules: str  # the preset's name
    hand_type: HandType | None  # None: not a win
    win_value: int  # W (0 when not a win)
    discard_win_allowed: bool
    discard_win_reason: str
    explanation: tuple[str, ...]
    reason: str | None = None  # why it is not a win

    @property
    def win(self) -> bool:
        return self.hand_type is not None

    @property
    def allowed(self) -> bool:
        """May this win be taken: 自摸 (self-draw) always, on another player's tile per the 豆 gate."""
        return self.self_drawn or self.discard_win_allowed

    def to_dict(self) -> dict[str, Any]:
        head = {"concealed": self.concealed, "win_tile": self.win_tile, "melds": [m.to_dict() for m in self.melds],
                "self_drawn": self.self_drawn, "rules": self.rules}
        if self.hand_type is None:
            return {**head, "win": False, "reason": self.reason, "hand_type": None, "win_value": 0,
                    "decompositions": [], "discard_win_allowed": False, "discard_win_reason": self.discard_win_reason,
                    "explanation": list(self.explanation)}
        return {**head, "win": True, "hand_type": self.hand_type.to_dict(), "win_value": self.win_value,
                "decompositions": [list(d) for d in self.hand_type.decompositions],
                "discard_win_allowed": self.discard_win_allowed, "discard_win_reason": self.discard_win_reason,
                "allowed": self.allowed, "explanation": list(self.explanation)}


HandAnalysis = WinAnalysis | WaitAnalysis


@dataclass(frozen=True)
class SeatWin:
    """A winner's hand in a settlement: its type and win value W."""

    hand_type: HandType
    value: int

    def to_dict(self) -> dict[str, Any]:
        ht = self.hand_type
        return {"type": ht.key, "name": ht.name_zh, "name_en": ht.name_en, "fan": ht.fan, "value": self.value}


@dataclass(frozen=True)
class SeatResult:
    """One seat's line of a settlement: 叫牌 (ready) and waits, net fan per component, 全烧 (burned), its win."""

    seat: int
    ting: bool
    waits: tuple[str, ...]
    hand: int  # net 牌型 (hand) fan
    dou: int  # net 豆 (kong) fan
    chicken: int  # net 鸡 (chicken) fan
    burned: bool  # 全烧: pays everything, receives nothing
    dealer: bool
    win: SeatWin | None

    @property
    def total(self) -> int:
        return self.hand + self.dou + self.chicken

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "ting": self.ting, "waits": list(self.waits), "hand": self.hand, "dou": self.dou,
                "chicken": self.chicken, "total": self.total, "burned": self.burned, "dealer": self.dealer,
                "win": None if self.win is None else self.win.to_dict()}


@dataclass(frozen=True)
class Settlement:
    """One hand settled between the four seats: the itemized ledger (amounts already × 底分), who pays whom,
    each seat's result and the next dealer. Every component of the ledger sums to zero."""

    rules: Rules
    ledger: tuple[Transfer, ...]
    players: tuple[SeatResult, ...]
    next_dealer: int
    next_streak: int
    explanation: tuple[str, ...]

    @property
    def matrix(self) -> list[list[int]]:
        """``m[i][j]`` = total fan seat i pays seat j."""
        return matrix(self.ledger, len(self.players))

    def to_dict(self) -> dict[str, Any]:
        return {"rules": self.rules.to_dict(), "ledger": [t.to_dict() for t in self.ledger], "matrix": self.matrix,
                "players": [p.to_dict() for p in self.players], "next_dealer": self.next_dealer,
                "next_streak": self.next_streak, "explanation": list(self.explanation)}
