"""Win shapes and waits (scoring/shapes.py), checked against the brute force in tests/scoring/bruteforce.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from scoring.melds import MELD_TYPES, Meld
from scoring.shapes import PAIR_KEYS, SETS_KEYS, decompositions, is_complete, suit_key, wait_indices, waits
from scoring.tiles import TILES, parse_tiles, to_counts
from tests.scoring.bruteforce import brute_waits, is_win


def pong(tile: str) -> Meld:
    return Meld("pong", tile)


# ------------------------------------------------------------------------------------ known waits

@pytest.mark.parametrize(("concealed", "expected"), [
    ("1112345678999m", [f"{r}m" for r in range(1, 10)]),  # 九莲宝灯 shape: every rank of the suit
    ("1122334455667m", ["1m", "4m", "7m"]),  # 七对 single 7m, or runs waiting 1m/4m/7m
    ("2244668m113355p", ["8m"]),  # pure 七对 wait
    ("224466m1133555p", ["5p"]),  # 七对 with a triplet: the 4th copy makes 龙七对
    ("123m456p789s1122s", ["1s", "2s"]),  # 对倒 (two pairs, either becomes a triplet)
    ("123m456p789s111s5p", ["5p"]),  # 单吊 (pair wait); 1s cannot be taken: 1111s is not a set + pair
    ("123m456p789s1357s", []),  # no wait
    ("13579m13579p135s", []),
])
def test_known_waits(concealed, expected):
    assert waits(concealed) == expected
    assert waits(parse_tiles(concealed)) == expected  # list of names gives the same
    assert waits(concealed) == brute_waits(parse_tiles(concealed))


# docs/rules.md#example-tiles: every non-winner of the worked examples, with its stated 叫牌 status and waits.
SPEC_HANDS = [
    ("E1 P0", "56m23344556788s", [], ["4m", "7m"]),
    ("E1 P2", "224567m2468p799s", [], []),
    ("E1 P3", "3467889m7p11247s", [], []),
    ("E2 P0", "2244467999p", [pong("1s")], ["5p", "8p"]),
    ("E2 P1", "113446778m19p24s", [], []),
    ("E2 P3", "14556m3456p2679s", [], []),
    ("E3 P1", "123m4566789s", [Meld("kong", "4m", 2)], ["3s", "6s", "9s"]),
    ("E3 P2", "1238m47788p1348s", [], []),
    ("E3 P3", "379m45p22378s", [Meld("added_kong", "9p")], []),
    ("E4 P0", "1334455789m123s", [], ["1m"]),
    ("E4 P1", "1234566799s", [Meld("added_kong", "5p")], ["5s", "8s"]),
    ("E4 P3", "224678m38p23458s", [], []),
    ("E5 P1", "12233557799m11s", [], ["1m"]),
    ("E5 P2", "2356788m45p2379s", [], []),
    ("E5 P3", "12469p12344s", [pong("6s")], []),
    ("E6 P0", "22m447788p22336s", [], ["6s"]),
    ("E6 P1", "2569m122349p458s", [], []),
    ("E6 P3", "335899m2269p678s", [], []),
    ("E7 P0", "1223334678m345p", [], ["3m"]),
    ("E7 P2", "34578m8p1234689s", [], []),
    ("E7 P3", "2459m138p245589s", [], []),
    ("E8 P0", "24568m14578p118s", [], []),
    ("E8 P2", "23468m145p56679s", [], []),
    ("E8 P3", "111567789m678p1s", [], ["1s"]),
    ("E9 P0", "1445m2377p24555s", [], []),
    ("E9 P2", "1112224566799m", [], ["5m", "8m"]),
    ("E10 P0", "1234567892256p", [], ["4p", "7p"]),
    ("E10 P1", "11m123p22346799s", [], []),
    ("E10 P2", "2333467m888p567s", [], ["5m", "8m"]),
    ("E10 P3", "255668m5p223678s", [], []),
    ("E11 P0", "4568m137p256679s", [], []),
    ("E11 P2", "145688m23689p35s", [], []),
    ("E11 P3", "123778899p1s", [Meld("kong", "4p", 0)], ["1s"]),
    ("E12 P1", "13m22233445678s", [], ["2m"]),
    ("E12 P2", "123999m1s", [pong("4p"), Meld("concealed_kong", "9s")], ["1s"]),
    ("E12 P3", "2288m125669p347s", [], []),
]


@pytest.mark.parametrize(("who", "concealed", "melds", "expected"), SPEC_HANDS, ids=[h[0] for h in SPEC_HANDS])
def test_rules_examples_waits(who, concealed, melds, expected):
    assert waits(concealed, melds) == expected
    assert brute_waits(parse_tiles(concealed), melds) == expected


# ------------------------------------------------------------------------- the 4-copy rule and errors

def test_tile_held_four_times_with_melds_is_not_a_wait():
    # 单吊 5m while holding a pong of 5m: the only remaining 5m is the one in hand (docs/rules.md#decisions).
    assert waits("123456789p5m", [pong("5m")]) == []
    assert waits("123456789p6m", [pong("5m")]) == ["6m"]
    # 34m waits 2m/5m, but all four 5m are in the player's kong.
    assert waits("34m123456p99s", [Meld("concealed_kong", "5m")]) == ["2m"]
    assert waits("34m123456p99s", [pong("5m")]) == ["2m", "5m"]


def test_melds_as_json_objects():
    assert waits("34m123456p99s", [{"type": "concealed_kong", "tile": "5m"}]) == ["2m"]


@pytest.mark.parametrize(("concealed", "melds", "fragment"), [
    ("1112345678999m1p", [], "got 14 concealed"),  # 14 tiles
    ("1112345678999m12p", [], "got 15 concealed"),
    ("111234567899m", [], "got 12 concealed"),
    ("1112345678999m", [pong("1p")], "1 meld"),  # count does not match melds
    ("12345678p55m", [pong("5m")], "more than 4 copies of 5m"),  # 5th copy counting melds
    ("1234m", [pong("5p"), pong("5p"), pong("6p")], "more than 4 copies of 5p"),
])
def test_wrong_hands_raise(concealed, melds, fragment):
    with pytest.raises(ValueError, match=fragment):
        waits(concealed, melds)


@pytest.mark.parametrize("n", [5, 8, 12, 13])
def test_fifth_copy_in_a_list_of_names_raises(n):
    with pytest.raises(ValueError, match="more than 4 copies of 1m"):
        waits(["1m"] * n + ["2p"] * (13 - n))


def test_bad_tile_names_raise():
    with pytest.raises(ValueError, match="not a tile"):
        waits(["1m"] * 3 + ["5z"] + ["2p"] * 9)


# ------------------------------------------------------------------------ tables and decompositions

def test_suit_tables():
    assert suit_key([1, 1, 1, 0, 0, 0, 0, 0, 0]) == 0x111  # 4 bits per rank
    assert 0 in SETS_KEYS and suit_key([1, 1, 1, 0, 0, 0, 0, 0, 0]) in SETS_KEYS
    assert suit_key([2, 0, 0, 0, 0, 0, 0, 0, 0]) in PAIR_KEYS
    assert suit_key([1, 1, 0, 0, 0, 0, 0, 0, 0]) not in SETS_KEYS | PAIR_KEYS
    assert len(SETS_KEYS) == 2869 and len(PAIR_KEYS) == 18874


def test_decompositions_list_every_reading():
    counts = to_counts(parse_tiles("111222333m555p77p"))
    readings = sorted(tuple(d.groups()) for d in decompositions(counts))
    assert readings == [("111m", "222m", "333m", "555p", "77p"), ("123m", "123m", "123m", "555p", "77p")]


def test_each_reading_is_listed_once():
    # Regression: the pair and the run starting at 1m could be taken in either order.
    assert len(decompositions(to_counts(parse_tiles("11123m456p789s123s")))) == 1
    readings = [tuple(sorted(d.groups())) for d in decompositions(to_counts(parse_tiles("11112222333344m")))]
    assert sorted(readings) == sorted([
        ("11m", "11m", "22m", "22m", "33m", "33m", "44m"),
        ("111m", "123m", "222m", "333m", "44m"),
        ("11m", "123m", "123m", "234m", "234m"),
        ("123m", "123m", "123m", "123m", "44m"),
    ])


def test_seven_pairs_reading_counts_a_quad_as_two_pairs():
    counts = to_counts(parse_tiles("1111m2255p6688s99s"))
    decs = decompositions(counts)
    assert [d.kind for d in decs] == ["seven_pairs"]
    assert decs[0].groups() == ["11m", "11m", "22p", "55p", "66s", "88s", "99s"]
    # Both readings exist for 11223344556677m: runs and seven pairs.
    kinds = sorted(d.kind for d in decompositions(to_counts(parse_tiles("11223344556677m"))))
    assert kinds.count("seven_pairs") == 1 and "standard" in kinds


def test_melds_appear_in_readings():
    counts = to_counts(parse_tiles("123m456p789s55s"))
    (dec,) = decompositions(counts, [Meld("added_kong", "9m")])
    assert dec.groups() == ["123m", "456p", "789s", "55s", "[9999m]"]
    assert is_complete(counts, [Meld("added_kong", "9m")])


def test_decompositions_validate():
    with pytest.raises(ValueError, match="got 13 concealed"):
        decompositions(to_counts(parse_tiles("1112345678999m")))


def test_not_a_win_has_no_decomposition():
    counts = to_counts(parse_tiles("1112345678999m1p"))
    assert decompositions(counts) == [] and not is_complete(counts)


# --------------------------------------------------------------------------- exhaustive single suit

def _suit_vectors(ranks: int = 9, total: int = 13) -> Iterator[tuple[int, ...]]:
    """Every count vector of ``ranks`` entries 0..4 summing to ``total``."""
    if ranks == 1:
        if total <= 4:
            yield (total,)
        return
    for c in range(min(4, total) + 1):
        for rest in _suit_vectors(ranks - 1, total - c):
            yield (c, *rest)


def _brute_suit_waits(v: tuple[int, ...]) -> list[int]:
    counts = [*v, *[0] * 18]
    out = []
    for r in range(9):
        if counts[r] < 4:
            counts[r] += 1
            if is_win(counts, 0):
                out.append(r)
            counts[r] -= 1
    return out


@pytest.mark.slow
def test_exhaustive_single_suit_hands():
    """All 93,600 one-suit 13-tile hands, in each of the three suits, against the brute force.

    A tile of another suit can never complete a one-suit hand (it would stand alone), so the brute force
    tries the nine ranks of the suit; our function is asked about all 27 tiles.
    """
    vectors = list(_suit_vectors())
    assert len(vectors) == 93600
    ready = 0
    for v in vectors:
        expected = _brute_suit_waits(v)
        ready += bool(expected)
        for s in range(3):
            counts = [0] * 27
            counts[9 * s:9 * s + 9] = v
            assert wait_indices(counts) == [9 * s + r for r in expected], (s, v)
    assert ready == 47933  # about half of all one-suit hands are ready


# ------------------------------------------------------------------------------ property tests

@st.composite
def hands(draw: st.DrawFn) -> tuple[list[str], list[Meld]]:
    """A 13-equivalent hand: 0..4 melds and 13 − 3·melds concealed tiles, at most 4 copies of anything."""
    n_melds = draw(st.integers(0, 4))
    own = [0] * 27
    melds = []
    for _ in range(n_melds):
        i = draw(st.integers(0, 26).filter(lambda k: own[k] == 0))
        kind = draw(st.sampled_from(sorted(MELD_TYPES)))
        melds.append(Meld(kind, TILES[i]))
        own[i] += melds[-1].size
    concealed = []
    for _ in range(13 - 3 * n_melds):
        i = draw(st.integers(0, 26).filter(lambda k: own[k] < 4))
        own[i] += 1
        concealed.append(TILES[i])
    return concealed, melds


SET_SHAPES = [(i, i + 1, i + 2) for i in range(27) if i % 9 <= 6] + [(i, i, i) for i in range(27)]


@st.composite
def ready_hands(draw: st.DrawFn) -> tuple[list[str], list[Meld]]:
    """A complete hand (sets + pair, or seven pairs) with one tile removed; some sets laid as melds."""
    if draw(st.booleans()):
        pairs = draw(st.lists(st.integers(0, 26), min_size=7, max_size=7).filter(
            lambda ps: all(ps.count(p) <= 2 for p in ps)))
        tiles = [TILES[p] for p in pairs for _ in range(2)]
        melds: list[Meld] = []
    else:
        pair = draw(st.integers(0, 26))
        sets = draw(st.lists(st.sampled_from(SET_SHAPES), min_size=4, max_size=4))
        n_melds = draw(st.integers(0, 4))
        triplets = [s for s in sets if s[0] == s[1]]
        n_melds = min(n_melds, len(triplets))
        melds = [Meld(draw(st.sampled_from(["pong", "concealed_kong"])), TILES[s[0]]) for s in triplets[:n_melds]]
        laid = triplets[:n_melds]
        rest = list(sets)
        for s in laid:
            rest.remove(s)
        tiles = [TILES[pair]] * 2 + [TILES[i] for s in rest for i in s]
    own = to_counts(tiles)
    for m in melds:
        own[TILES.index(m.tile)] += m.size
    assume(max(own) <= 4)
    drop = draw(st.integers(0, len(tiles) - 1))
    return tiles[:drop] + tiles[drop + 1:], melds


def _check_against_brute(concealed: list[str], melds: list[Meld]) -> None:
    got = waits(concealed, melds)
    assert got == brute_waits(concealed, melds)
    counts = to_counts(concealed)
    own = list(counts)
    for m in melds:
        own[TILES.index(m.tile)] += m.size
    for i, tile in enumerate(TILES):
        counts[i] += 1
        completes = own[i] < 4 and is_win(counts, len(melds))
        counts[i] -= 1
        assert (tile in got) == completes, tile


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(hands())
def test_random_hands_match_brute_force(hand):
    _check_against_brute(*hand)


def _group_counts(groups: list[str]) -> list[int]:
    """MPSZ groups (melds in brackets) → the 27 counts they use, melds as 3 tiles."""
    counts = [0] * 27
    for g in groups:
        meld = g.startswith("[")
        g = g.strip("[]")
        ranks = g[:-1][:3] if meld else g[:-1]
        for r in ranks:
            counts[TILES.index(r + g[-1])] += 1
    return counts


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(ready_hands(), st.integers(0, 26))
def test_decompositions_are_valid_and_distinct(hand, extra):
    concealed, melds = hand
    counts = to_counts(concealed)
    own = list(counts)
    for m in melds:
        own[TILES.index(m.tile)] += m.size
    assume(own[extra] < 4)
    counts[extra] += 1
    decs = decompositions(counts, melds)
    assert bool(decs) == is_win(counts, len(melds))
    readings = [tuple(sorted(d.groups())) for d in decs]
    assert len(set(readings)) == len(readings)
    full = list(counts)
    for m in melds:
        full[TILES.index(m.tile)] += 3
    for d in decs:
        assert _group_counts(d.groups()) == full


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(ready_hands())
def test_ready_hands_match_brute_force(hand):
    concealed, melds = hand
    assert waits(concealed, melds), "a complete hand minus one tile is always ready"
    _check_against_brute(concealed, melds)
