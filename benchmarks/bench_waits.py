"""Speed of ``scoring.shapes.waits`` (听牌 waits) against the riichi library ``mahjong`` (PyPI) on the same hands.

    python benchmarks/bench_waits.py [--random N] [--ready N] [--seed S]

Two hand sets, both seeded: (a) N random 13-tile hands drawn from the 108-tile wall; (b) N ready (听牌)
hands, each a random complete hand (4 sets + pair; one in ten seven pairs) with one random tile removed.

Our side is timed through the public API on lists of tile names. The library is given its 34-count arrays
ready made (conversion not timed) and is used two ways: ``calculate_shanten`` (kokushi off, there are no
honors) and, only when it says 0 (tenpai), each of the 27 tiles still available is added and checked with
``calculate_shanten == -1`` (method A) or with ``Agari.is_agari`` (method B, the fastest use we found).
Disagreements are counted and shown: riichi 七对 (chiitoitsu) needs seven different pairs, while docs/rules.md#win-shapes
counts a concealed 4-of-a-kind as two pairs.
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from importlib.metadata import version

from mahjong.agari import Agari
from mahjong.shanten import Shanten
from mahjong.tile import TilesConverter

from scoring.shapes import waits
from scoring.tiles import TILES

try:
    from tqdm import tqdm
except ImportError:  # progress is optional
    tqdm = None

WALL = [t for t in TILES for _ in range(4)]  # the 108-tile wall
SET_SHAPES = [(i, i + 1, i + 2) for i in range(27) if i % 9 <= 6] + [(i, i, i) for i in range(27)]
SEVEN_PAIRS_SHARE = 0.1
CHUNK = 1000  # hands per timed chunk; the progress bar moves between chunks so it is never timed

Hand = list[str]
Counts34 = list[int]


def check_index_order() -> None:
    """Our indices 0..26 (1m..9m, 1p..9p, 1s..9s) must equal the library's 34-array positions."""
    for i, tile in enumerate(TILES):
        rank, suit = tile
        arr = TilesConverter.string_to_34_array(**{{"m": "man", "p": "pin", "s": "sou"}[suit]: rank})
        assert arr.index(1) == i and sum(arr) == 1, tile


def random_hands(rng: random.Random, n: int) -> list[Hand]:
    return [rng.sample(WALL, 13) for _ in range(n)]


def complete_hand(rng: random.Random) -> list[int]:
    """A random complete 14-tile hand as tile indices, at most 4 copies of any tile."""
    while True:
        if rng.random() < SEVEN_PAIRS_SHARE:
            tiles = [i for i in rng.choices(range(27), k=7) for _ in range(2)]
        else:
            pair = rng.randrange(27)
            tiles = [pair, pair] + [i for _ in range(4) for i in rng.choice(SET_SHAPES)]
        if all(tiles.count(i) <= 4 for i in set(tiles)):
            return tiles


def ready_hands(rng: random.Random, n: int) -> list[Hand]:
    out = []
    for _ in range(n):
        tiles = complete_hand(rng)
        tiles.pop(rng.randrange(14))
        out.append([TILES[i] for i in tiles])
    return out


def to_34(hand: Hand) -> Counts34:
    arr = [0] * 34
    for t in hand:
        arr[TILES.index(t)] += 1
    return arr


def lib_waits_shanten(arr: Counts34) -> list[str]:
    """Method A: shanten, then shanten == -1 for every tile that can still be drawn."""
    if Shanten.calculate_shanten(arr, use_kokushi=False) != 0:
        return []
    out = []
    for i in range(27):
        if arr[i] < 4:
            arr[i] += 1
            if Shanten.calculate_shanten(arr, use_kokushi=False) == -1:
                out.append(TILES[i])
            arr[i] -= 1
    return out


_AGARI = Agari()


def lib_waits_agari(arr: Counts34) -> list[str]:
    """Method B: shanten, then ``is_agari`` for every tile that can still be drawn."""
    if Shanten.calculate_shanten(arr, use_kokushi=False) != 0:
        return []
    out = []
    for i in range(27):
        if arr[i] < 4:
            arr[i] += 1
            if _AGARI.is_agari(arr):
                out.append(TILES[i])
            arr[i] -= 1
    return out


def timed_interleaved(contenders: dict[str, tuple[Callable, Sequence]], n: int, label: str
                      ) -> dict[str, tuple[list, float]]:
    """Run every contender chunk by chunk, taking turns, so that load from other processes falls on all of
    them alike. Returns per contender its results and hands per second (progress-bar updates not timed)."""
    results: dict[str, list] = {name: [] for name in contenders}
    elapsed = dict.fromkeys(contenders, 0.0)
    bar = tqdm(total=n, desc=label, unit="hand", leave=False, file=sys.stderr) if tqdm else None
    for start in range(0, n, CHUNK):
        for name, (fn, inputs) in contenders.items():
            chunk = inputs[start:start + CHUNK]
            t0 = time.perf_counter()
            out = [fn(x) for x in chunk]
            elapsed[name] += time.perf_counter() - t0
            results[name] += out
        if bar:
            bar.update(min(CHUNK, n - start))
        elif start // CHUNK % 20 == 19:
            print(f"  ... {start + CHUNK:,}/{n:,}", file=sys.stderr)
    if bar:
        bar.close()
    return {name: (results[name], n / elapsed[name]) for name in contenders}


def run_set(name: str, hands: list[Hand], goal: float) -> None:
    arrays = [to_34(h) for h in hands]
    timings = timed_interleaved({"ours": (waits, hands), "A": (lib_waits_shanten, arrays),
                                 "B": (lib_waits_agari, arrays)}, len(hands), name)
    (ours, ours_rate), (lib_a, rate_a), (lib_b, rate_b) = timings["ours"], timings["A"], timings["B"]
    ready = sum(bool(w) for w in ours)
    print(f"{name}: {len(hands):,} hands, {ready:,} ready by our rules ({100 * ready / len(hands):.1f}%)")
    print(f"  ours      waits()                              {ours_rate:>11,.0f} hands/s")
    # The goals were set against method A, the use the goal figures (~16k and ~1k hands/s) describe.
    verdict = "met" if ours_rate / rate_a >= goal else "MISSED"
    print(f"  mahjong A shanten, then shanten per tile      {rate_a:>11,.0f} hands/s   speed-up "
          f"{ours_rate / rate_a:6.1f}x (goal >= {goal:g}x: {verdict})")
    print(f"  mahjong B shanten, then is_agari per tile     {rate_b:>11,.0f} hands/s   speed-up "
          f"{ours_rate / rate_b:6.1f}x (faster library use; no goal set)")
    if lib_a != lib_b:
        print(f"  note: the two library methods disagree on {sum(a != b for a, b in zip(lib_a, lib_b, strict=True)):,} hands")
    diffs = [(h, o, b) for h, o, b in zip(hands, ours, lib_b, strict=True) if o != b]
    explained = sum(_quad_as_two_pairs(h, o, b) for h, o, b in diffs)
    print(f"  disagreements with the library: {len(diffs):,} hands, {explained:,} of them only because a "
          f"concealed 4-of-a-kind counts as two pairs in 七对")
    for hand, o, b in diffs[:5]:
        print(f"    {_mpsz(hand)}: ours {' '.join(o) or '-'}; mahjong {' '.join(b) or '-'}")


def _quad_as_two_pairs(hand: Hand, ours: list[str], lib: list[str]) -> bool:
    """True when we list extra waits only, each making seven pairs that include a 4-of-a-kind."""
    if set(lib) - set(ours):
        return False
    for tile in set(ours) - set(lib):
        counts = [c for c in to_34(hand + [tile]) if c]
        if any(c % 2 for c in counts) or 4 not in counts:
            return False
    return True


def _mpsz(hand: Hand) -> str:
    out = ""
    for suit in "mps":
        ranks = sorted(t[0] for t in hand if t[1] == suit)
        out += "".join(ranks) + suit if ranks else ""
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=100_000, help="random hands (default 100000)")
    parser.add_argument("--ready", type=int, default=10_000, help="ready hands (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    check_index_order()
    print(f"bench_waits: seed {args.seed}, mahjong {version('mahjong')}, Python {platform.python_version()}")
    rng = random.Random(args.seed)
    run_set("(a) random", random_hands(rng, args.random), goal=5)
    run_set("(b) ready", ready_hands(rng, args.ready), goal=50)
    return 0


if __name__ == "__main__":
    sys.exit(main())
