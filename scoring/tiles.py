"""Tiles and MPSZ notation.

The 108-tile set of 捉鸡 mahjong has three suits of nine ranks, four copies each:
``m`` = 万 characters, ``p`` = 筒 dots, ``s`` = 条 bamboo. No honors (字牌).
A tile is written rank + suit (``"5p"``); a hand groups ranks before their suit (``"123m456p789s55p"``).

Internally a tile is an index 0..26: ``1m..9m`` = 0..8, ``1p..9p`` = 9..17, ``1s..9s`` = 18..26.
"""

from __future__ import annotations

from collections.abc import Iterable

SUITS = "mps"
SUIT_NAMES = {"m": "万 characters", "p": "筒 dots", "s": "条 bamboo"}
TILES: tuple[str, ...] = tuple(f"{r}{s}" for s in SUITS for r in range(1, 10))
TILE_INDEX: dict[str, int] = {t: i for i, t in enumerate(TILES)}
COPIES = 4


def parse_tiles(text: str) -> list[str]:
    """Parse MPSZ text (``"123m456p789s55p"``) into a sorted list of tile names.

    Spaces are ignored. Raises ``ValueError`` with a readable message for honors (``z``), unknown suits, a digit
    without a suit, rank 0, or a fifth copy of any tile.
    """
    if not isinstance(text, str):
        raise ValueError(f"tiles must be MPSZ text such as '123m456p', not {type(text).__name__}")
    tiles: list[str] = []
    pending: list[str] = []
    for ch in text.replace(" ", ""):
        if ch.isdigit():
            pending.append(ch)
        elif ch in SUITS:
            if not pending:
                raise ValueError(f"suit '{ch}' without ranks in {text!r}")
            for r in pending:
                if r == "0":
                    raise ValueError(f"rank 0 (red five) is not in the 108-tile set: {text!r}")
                tiles.append(f"{r}{ch}")
            pending = []
        elif ch == "z":
            raise ValueError(f"honor tiles (z) are not in the 108-tile set of 捉鸡 mahjong: {text!r}")
        else:
            raise ValueError(f"unknown suit or character {ch!r} in {text!r}; use m (万), p (筒), s (条)")
    if pending:
        raise ValueError(f"ranks {''.join(pending)!r} have no suit letter in {text!r}")
    check_copies(tiles)
    return sorted(tiles, key=TILE_INDEX.__getitem__)


def check_copies(tiles: Iterable[str], limit: int = COPIES) -> None:
    """Raise ``ValueError`` if any tile occurs more than ``limit`` times."""
    counts = to_counts(tiles)
    over = [TILES[i] for i, c in enumerate(counts) if c > limit]
    if over:
        raise ValueError(f"more than {limit} copies of {', '.join(over)}: the set has only {limit} of each tile")


def tile_index(tile: str) -> int:
    """Index 0..26 of a tile name; ``ValueError`` for anything else."""
    try:
        return TILE_INDEX[tile]
    except (KeyError, TypeError):
        raise ValueError(f"not a tile of the 108-tile set: {tile!r} (expected e.g. '5p')") from None


def to_counts(tiles: Iterable[str]) -> list[int]:
    """Tile names → a 27-long list of copies per tile."""
    counts = [0] * 27
    for t in tiles:
        counts[tile_index(t)] += 1
    return counts


def from_counts(counts: Iterable[int]) -> list[str]:
    """27 counts → the sorted list of tile names."""
    return [TILES[i] for i, c in enumerate(counts) for _ in range(c)]


def to_mpsz(tiles: Iterable[str]) -> str:
    """Tile names → compact MPSZ text grouped by suit (``["1m","2m","5p"]`` → ``"12m5p"``)."""
    by_suit: dict[str, list[str]] = {s: [] for s in SUITS}
    for t in sorted(tiles, key=tile_index):
        by_suit[t[1]].append(t[0])
    return "".join("".join(ranks) + s for s, ranks in by_suit.items() if ranks)

