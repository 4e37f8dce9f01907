"""Win shapes (成牌) and waits (听牌), docs/rules.md#win-shapes.

A hand of 14 tiles (concealed tiles + 3 per meld; a kong counts as 3) is complete when it reads as

* the standard shape: 4 sets (面子: 顺子 runs inside one suit, 刻子 triplets; melds are always triplets or
  kongs, since there is no 吃) and 1 pair (将/雀头); or
* 七对 seven pairs: no melds at all, every tile count even (a concealed 4-of-a-kind is two pairs).

Speed comes from per-suit tables. With no honors, sets and pairs never cross a suit, so a hand is complete
exactly when each suit is complete on its own and exactly one suit holds the pair. A suit's nine counts are
packed into one integer, 4 bits per rank. At import we enumerate every suit key that splits into sets only
(2,869 keys) or sets plus one pair (18,874 keys), and for every key one tile short of those we store a 9-bit
mask of the ranks that complete it. A 13-tile hand's waits are then three dictionary look-ups; 七对 is one
bit test on the packed hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from itertools import product

from scoring.melds import Meld, parse_melds
from scoring.tiles import COPIES, SUITS, TILE_INDEX, TILES, parse_tiles, tile_index, to_counts

# A suit is packed 4 bits per rank (count of rank r at bits 4r..4r+3), a whole hand 4 bits per tile index.
# Nibbles (not base 5) let a hand be packed by plain addition and checked for a fifth copy with one mask
# test, and a suit key is then a shift and a mask.
_BITS = 4
_SUIT_BITS = 9 * _BITS
_SUIT_MASK = (1 << _SUIT_BITS) - 1
_RANK: tuple[int, ...] = tuple(1 << (_BITS * r) for r in range(9))
_PACK: dict[str, int] = {t: 1 << (_BITS * i) for i, t in enumerate(TILES)}  # tile name → its packed unit
_PACK_OF = _PACK.__getitem__
_ONES = sum(1 << (_BITS * i) for i in range(27))  # low bit of every nibble: the odd counts
_BIT3 = 8 * _ONES  # bit 3 of every nibble
_PLUS3 = 3 * _ONES
_MAX_SETS = 4  # a hand never holds more than 4 sets

# Suit status in the tables' info: not complete, sets only, sets plus one pair.
_NONE, _SETS, _PAIR = 0, 1, 2


def suit_key(counts9: Sequence[int]) -> int:
    """Packed key of one suit's nine counts (each 0..4): ``sum(count[r] << 4*r)``."""
    return sum(c << (_BITS * r) for r, c in enumerate(counts9))


def pack(counts27: Sequence[int]) -> int:
    """27 counts → one integer, 4 bits per tile index (suit s is bits 36s..36s+35)."""
    return sum(c << (_BITS * i) for i, c in enumerate(counts27))


def _digits(key: int) -> list[int]:
    """The nine counts of a suit key."""
    return [key >> (_BITS * r) & 15 for r in range(9)]


def _add_ok(key: int, addend: int) -> bool:
    """True when adding ``addend`` to ``key`` keeps every count ≤ 4."""
    return all(a + b <= COPIES for a, b in zip(_digits(key), _digits(addend), strict=True))


def _build_tables() -> tuple[frozenset[int], frozenset[int], dict[int, tuple[int, int, int]]]:
    """Enumerate complete suit keys and the one-tile-short keys with their completing ranks.

    Returns (keys splitting into sets only, keys splitting into sets + one pair, info) where
    ``info[key] = (status, ranks_to_sets_mask, ranks_to_pair_mask)``.
    """
    set_shapes = [_RANK[r] + _RANK[r + 1] + _RANK[r + 2] for r in range(7)] + [3 * _RANK[r] for r in range(9)]
    sets_only = {0}
    frontier = {0}
    for _ in range(_MAX_SETS):
        frontier = {k + s for k in frontier for s in set_shapes if _add_ok(k, s)}
        sets_only |= frontier
    with_pair = {k + 2 * _RANK[r] for k in sets_only for r in range(9) if _add_ok(k, 2 * _RANK[r])}

    to_sets: dict[int, int] = {}
    to_pair: dict[int, int] = {}
    for complete, table in ((sets_only, to_sets), (with_pair, to_pair)):
        for key in complete:
            for r, d in enumerate(_digits(key)):
                if d:
                    short = key - _RANK[r]
                    table[short] = table.get(short, 0) | 1 << r
    info: dict[int, tuple[int, int, int]] = {}
    for key in set(to_sets) | set(to_pair) | sets_only | with_pair:
        status = _SETS if key in sets_only else _PAIR if key in with_pair else _NONE
        info[key] = (status, to_sets.get(key, 0), to_pair.get(key, 0))
    return frozenset(sets_only), frozenset(with_pair), info


@cache
def _tables() -> tuple[frozenset[int], frozenset[int], dict[int, tuple[int, int, int]]]:
    """The tables of :func:`_build_tables`, built on first use (about 0.3 s): a process that never looks at a
    hand's shape (``zhuoji detect``) never pays for them."""
    return _build_tables()


def __getattr__(name: str) -> frozenset[int]:
    """``SETS_KEYS`` (suit keys splitting into sets only) and ``PAIR_KEYS`` (sets + one pair), built on first use."""
    if name == "SETS_KEYS":
        return _tables()[0]
    if name == "PAIR_KEYS":
        return _tables()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_NOT_CLOSE = (_NONE, 0, 0)  # a suit that is neither complete nor one tile short

# 9-bit rank mask of suit s → the tile names it stands for, in index order.
_MASK_NAMES: tuple[tuple[tuple[str, ...], ...], ...] = tuple(
    tuple(tuple(f"{r + 1}{s}" for r in range(9) if m >> r & 1) for m in range(512)) for s in SUITS
)


# --------------------------------------------------------------------------------------------- validation


def _tile_list(concealed: str | Iterable[str]) -> Sequence[str]:
    """MPSZ text → parsed tile names; a list or tuple of names is used as is."""
    if isinstance(concealed, str):
        return parse_tiles(concealed)
    if isinstance(concealed, (list, tuple)):
        return concealed
    try:
        return list(concealed)
    except TypeError:
        raise ValueError(f"tiles must be MPSZ text or a list of tile names, not {concealed!r}") from None


def _packed(names: Sequence[str]) -> int:
    """Tile names → the packed hand; ``ValueError`` naming the first thing that is not a tile."""
    try:
        return sum(map(_PACK_OF, names))
    except (KeyError, TypeError):
        for t in names:
            tile_index(t)  # raises the readable error
        raise


def _over_four(packed: int) -> bool:
    """True when a packed hand of at most 15 tiles holds a tile more than 4 times.

    A count d ≥ 5 sets bit 3 of its nibble in d + 3 (d ≤ 12) or in d itself (d ≥ 8); d + 3 only carries into
    the next nibble when d ≥ 13, which is flagged by d itself.
    """
    return bool((packed | (packed + _PLUS3)) & _BIT3)


def check_hand(counts: Sequence[int], melds: Sequence[Meld], total: int) -> None:
    """Validate a hand: concealed + 3 per meld must equal ``total`` (13 waiting, 14 complete) and no tile may
    have more than 4 copies counting the melds. Raises ``ValueError`` with the numbers involved."""
    n = sum(counts)
    if n + 3 * len(melds) != total:
        what = "a waiting hand (听牌)" if total == 13 else "a complete hand (成牌)"
        raise ValueError(
            f"{what} needs {total} tiles counting each meld as 3: got {n} concealed + {len(melds)} meld(s) "
            f"= {n + 3 * len(melds)}")
    own = list(counts)
    for m in melds:
        own[TILE_INDEX[m.tile]] += m.size
    over = [TILES[i] for i, c in enumerate(own) if c > COPIES]
    if over:
        raise ValueError(f"more than {COPIES} copies of {', '.join(over)} counting the melds: the set has only "
                         f"{COPIES} of each tile")


# ---------------------------------------------------------------------------------------------- waits


def _wait_masks(packed: int, seven_pairs: bool) -> tuple[int, int, int]:
    """Per-suit 9-bit masks of the tiles completing a hand of 3n+1 concealed tiles (melds excluded).

    Standard shape: the waiting suit must be one tile short of complete and the other two complete, with
    exactly one pair among the three suits after the draw. 七对 (only with no melds): exactly one odd count.
    """
    info = _tables()[2]
    s0, t0, p0 = info.get(packed & _SUIT_MASK, _NOT_CLOSE)
    s1, t1, p1 = info.get(packed >> _SUIT_BITS & _SUIT_MASK, _NOT_CLOSE)
    s2, t2, p2 = info.get(packed >> (2 * _SUIT_BITS), _NOT_CLOSE)
    # The drawn tile goes to one suit; the two others must already be complete: both sets-only (the drawn
    # suit then takes the pair) or one sets-only and one with the pair (statuses 1 + 2 == 3).
    m0 = p0 if s1 == s2 == _SETS else t0 if s1 + s2 == 3 else 0
    m1 = p1 if s0 == s2 == _SETS else t1 if s0 + s2 == 3 else 0
    m2 = p2 if s0 == s1 == _SETS else t2 if s0 + s1 == 3 else 0
    if seven_pairs:
        # 13 tiles with exactly one odd count: the 14th copy of that tile leaves only pairs (a 3 becomes
        # a concealed quad, i.e. two pairs). ``odd & (odd - 1) == 0`` tests for a single set bit.
        odd = packed & _ONES
        if odd and not odd & (odd - 1):
            i = (odd.bit_length() - 1) >> 2
            if i < 9:
                m0 |= 1 << i
            elif i < 18:
                m1 |= 1 << (i - 9)
            else:
                m2 |= 1 << (i - 18)
    return m0, m1, m2


def waits(concealed: str | Iterable[str], melds: Sequence[Meld | Mapping] = ()) -> list[str]:
    """听牌 (waits): the tiles that would complete the hand, sorted by tile index.

    ``concealed`` is MPSZ text or a list of tile names, with ``len(concealed) + 3 * len(melds) == 13``.
    Counts standard and 七对/龙七对 shapes. A tile whose 4 copies are all in the player's own concealed tiles
    and melds is not a wait (docs/rules.md#decisions); the 豆 gate is ignored. ``ValueError`` on a wrong tile
    count or a fifth copy.
    """
    names = _tile_list(concealed)
    packed = _packed(names)
    meld_list: list[Meld] = []
    if melds or len(names) != 13 or _over_four(packed):
        # Off the fast path (melds, or a count/copies problem): validate on plain counts, which cannot
        # overflow a nibble the way 16+ copies of one tile would.
        meld_list = parse_melds(melds)
        check_hand(to_counts(names), meld_list, 13)
    m0, m1, m2 = _wait_masks(packed, not meld_list)
    if meld_list:
        m0, m1, m2 = _drop_exhausted(to_counts(names), meld_list, [m0, m1, m2])
    table = _MASK_NAMES
    return [*table[0][m0], *table[1][m1], *table[2][m2]]


def _drop_exhausted(counts: Sequence[int], melds: Sequence[Meld], masks: list[int]) -> tuple[int, int, int]:
    """Clear the wait bit of every meld tile whose 4 copies are all the player's own."""
    for m in melds:
        i = TILE_INDEX[m.tile]
        if counts[i] + m.size >= COPIES:
            masks[i // 9] &= ~(1 << (i % 9))
    return masks[0], masks[1], masks[2]


def wait_indices(counts13: Sequence[int], melds: Sequence[Meld | Mapping] = ()) -> list[int]:
    """Waits as tile indices for 27 concealed counts (validated like :func:`waits`)."""
    meld_list = parse_melds(melds)
    check_hand(counts13, meld_list, 13)
    masks = list(_wait_masks(pack(counts13), not meld_list))
    if meld_list:
        masks = list(_drop_exhausted(counts13, meld_list, masks))
    return [9 * s + r for s in range(3) for r in range(9) if masks[s] >> r & 1]


# ------------------------------------------------------------------------------------ complete hands


def _suit_keys(counts: Sequence[int]) -> tuple[int, int, int]:
    packed = pack(counts)
    return packed & _SUIT_MASK, packed >> _SUIT_BITS & _SUIT_MASK, packed >> (2 * _SUIT_BITS)


def is_seven_pairs(counts14: Sequence[int], melds: Sequence[Meld] = ()) -> bool:
    """七对 (seven pairs): no melds, 14 concealed tiles, every count even (a quad is two pairs)."""
    return not melds and sum(counts14) == 14 and all(c % 2 == 0 for c in counts14)


def is_standard(counts: Sequence[int]) -> bool:
    """标准型 (standard shape) of the concealed part: every suit splits into sets, exactly one pair overall."""
    statuses = [_tables()[2].get(k, _NOT_CLOSE)[0] for k in _suit_keys(counts)]
    return _NONE not in statuses and statuses.count(_PAIR) == 1


def is_complete(counts14: Sequence[int], melds: Sequence[Meld | Mapping] = ()) -> bool:
    """成牌 (complete hand): standard shape or 七对. Validates the tile count and copies."""
    meld_list = parse_melds(melds)
    check_hand(counts14, meld_list, 14)
    return is_standard(counts14) or is_seven_pairs(counts14, meld_list)


# ------------------------------------------------------------------------------------- decompositions


@dataclass(frozen=True)
class Decomposition:
    """One reading of a complete hand.

    ``kind`` is ``"standard"`` (4 sets + 1 pair) or ``"seven_pairs"`` (七对). Tiles are indices 0..26.
    Standard: ``pair`` is the 将 (pair) tile, ``runs`` the first tiles of the concealed 顺子 (runs),
    ``triplets`` the concealed 刻子 (triplets); ``melds`` are the laid melds (always triplets/kongs).
    Seven pairs: ``pairs`` lists the seven pairs (a concealed quad appears twice).
    """

    kind: str
    pair: int | None = None
    runs: tuple[int, ...] = ()
    triplets: tuple[int, ...] = ()
    pairs: tuple[int, ...] = ()
    melds: tuple[Meld, ...] = field(default=())

    @property
    def has_run(self) -> bool:
        return bool(self.runs)

    def groups(self) -> list[str]:
        """Readable MPSZ groups: ``["123m", "555p", "55s", "[5555m]"]``; melds in brackets."""
        if self.kind == "seven_pairs":
            return [_rank_text(i, 2) for i in self.pairs]
        out = [_run_text(i) for i in self.runs] + [_rank_text(i, 3) for i in self.triplets]
        out.sort(key=_group_order)
        if self.pair is not None:
            out.append(_rank_text(self.pair, 2))
        out += [f"[{_rank_text(TILE_INDEX[m.tile], m.size)}]" for m in self.melds]
        return out


def _rank_text(i: int, n: int) -> str:
    return str(i % 9 + 1) * n + SUITS[i // 9]


def _run_text(i: int) -> str:
    return f"{i % 9 + 1}{i % 9 + 2}{i % 9 + 3}{SUITS[i // 9]}"


def _group_order(text: str) -> tuple[int, str]:
    return SUITS.index(text[-1]), text


Group = tuple[str, int]  # ("run" | "triplet" | "pair", rank)


@lru_cache(maxsize=65536)
def _suit_parses(counts9: tuple[int, ...], with_pair: bool) -> tuple[tuple[Group, ...], ...]:
    """Every way to split one suit's counts into sets (and one pair when ``with_pair``), each once.

    All copies of the lowest held rank r are used up in one step: a pair (0 or 1), a triplet (0 or 1) and
    k runs r, r+1, r+2 with 2·pair + 3·triplet + k = count[r]. Choosing whole counts rather than one group
    at a time means two orders of the same groups are never produced twice.
    """
    r = next((i for i, c in enumerate(counts9) if c), None)
    if r is None:
        return ((),) if not with_pair else ()
    out: list[tuple[Group, ...]] = []
    for pair in (1, 0) if with_pair else (0,):
        for triplet in (1, 0):
            k = counts9[r] - 2 * pair - 3 * triplet
            if k < 0 or (k and (r > 6 or counts9[r + 1] < k or counts9[r + 2] < k)):
                continue
            rest = list(counts9)
            rest[r] = 0
            if k:
                rest[r + 1] -= k
                rest[r + 2] -= k
            groups: tuple[Group, ...] = (("pair", r),) * pair + (("triplet", r),) * triplet + (("run", r),) * k
            out += [groups + parse for parse in _suit_parses(tuple(rest), with_pair and not pair)]
    return tuple(out)


def decompositions(counts14: Sequence[int], melds: Sequence[Meld | Mapping] = ()) -> list[Decomposition]:
    """Every reading of a complete hand: each standard split (pair + sets) and the 七对 reading.

    ``counts14`` are the 27 concealed counts including the winning tile (14 − 3 × melds tiles). Returns an
    empty list when the tiles do not form a win. ``ValueError`` on a wrong tile count or a fifth copy.
    """
    meld_list = parse_melds(melds)
    check_hand(counts14, meld_list, 14)
    out: list[Decomposition] = []
    if is_standard(counts14):
        out += _standard_decompositions(counts14, tuple(meld_list))
    if is_seven_pairs(counts14, meld_list):
        pairs = tuple(i for i, c in enumerate(counts14) for _ in range(c // 2))
        out.append(Decomposition("seven_pairs", pairs=pairs))
    return out


def _standard_decompositions(counts: Sequence[int], melds: tuple[Meld, ...]) -> list[Decomposition]:
    """Combine the per-suit parses; the suit whose count is 2 mod 3 holds the pair."""
    per_suit = []
    for s in range(3):
        part = tuple(counts[9 * s:9 * s + 9])
        per_suit.append([[(kind, 9 * s + r) for kind, r in p] for p in _suit_parses(part, sum(part) % 3 == 2)])
    out = []
    for combo in product(*per_suit):
        groups = [g for suit in combo for g in suit]
        pair = next(i for kind, i in groups if kind == "pair")
        runs = tuple(i for kind, i in groups if kind == "run")
        triplets = tuple(i for kind, i in groups if kind == "triplet")
        out.append(Decomposition("standard", pair=pair, runs=runs, triplets=triplets, melds=melds))
    return out
