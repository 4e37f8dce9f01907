"""An independent, table-free win checker for tests: plain recursion over tile counts.

It shares nothing with ``scoring.shapes`` except the tile names, so the two can check each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache

from scoring.melds import Meld, parse_melds
from scoring.tiles import TILES, tile_index


@cache
def _standard(counts: tuple[int, ...], pair_left: bool) -> bool:
    """Can ``counts`` be split into sets (plus one pair when ``pair_left``)?

    The lowest held tile must start a group: a pair, a triplet, or a run inside its suit.
    """
    i = next((k for k, c in enumerate(counts) if c), -1)
    if i < 0:
        return not pair_left
    c = list(counts)
    if pair_left and c[i] >= 2:
        c[i] -= 2
        if _standard(tuple(c), False):
            return True
        c[i] += 2
    if c[i] >= 3:
        c[i] -= 3
        if _standard(tuple(c), pair_left):
            return True
        c[i] += 3
    if i % 9 <= 6 and c[i + 1] and c[i + 2]:
        c[i] -= 1
        c[i + 1] -= 1
        c[i + 2] -= 1
        if _standard(tuple(c), pair_left):
            return True
    return False


def is_win(counts27: Sequence[int], n_melds: int) -> bool:
    """True when the concealed counts (14 − 3·n_melds tiles) plus ``n_melds`` triplet melds form a win:
    4 sets + 1 pair, or seven pairs (no melds; a quad counts as two pairs)."""
    counts = tuple(counts27)
    if sum(counts) != 14 - 3 * n_melds:
        return False
    if n_melds == 0 and all(c % 2 == 0 for c in counts):
        return True
    return _standard(counts, True)


def brute_waits(concealed_tiles: Iterable[str], melds: Sequence[Meld | Mapping] = ()) -> list[str]:
    """Every tile that completes the hand, trying all 27; a tile whose 4 copies are all the player's own
    (concealed + melds) is skipped."""
    meld_list = parse_melds(melds)
    counts = [0] * 27
    for t in concealed_tiles:
        counts[tile_index(t)] += 1
    own = list(counts)
    for m in meld_list:
        own[tile_index(m.tile)] += m.size
    out = []
    for i in range(27):
        if own[i] >= 4:
            continue
        counts[i] += 1
        if is_win(counts, len(meld_list)):
            out.append(TILES[i])
        counts[i] -= 1
    return out
