"""MPSZ parsing and tile indices (scoring/tiles.py)."""

import pytest

from scoring.tiles import TILES, from_counts, parse_tiles, tile_index, to_counts, to_mpsz


def test_tile_order_is_m_then_p_then_s():
    assert TILES[0] == "1m" and TILES[8] == "9m" and TILES[9] == "1p" and TILES[18] == "1s" and TILES[26] == "9s"
    assert [tile_index(t) for t in ("1m", "9m", "1p", "5p", "1s", "9s")] == [0, 8, 9, 13, 18, 26]


def test_parse_sorts_by_index_and_ignores_spaces():
    assert parse_tiles("5s 12p 9m") == ["9m", "1p", "2p", "5s"]
    assert parse_tiles("1m1m2p") == ["1m", "1m", "2p"]


def test_counts_round_trip():
    tiles = parse_tiles("1112345678999m55p")
    counts = to_counts(tiles)
    assert counts[0] == 3 and counts[8] == 3 and counts[13] == 2 and sum(counts) == 15
    assert from_counts(counts) == tiles
    assert to_mpsz(tiles) == "1112345678999m55p"


@pytest.mark.parametrize(("text", "fragment"), [
    ("123z", "honor"),
    ("12x", "unknown suit"),
    ("11111m", "more than 4 copies of 1m"),
    ("1m1m1m1m1m", "more than 4 copies of 1m"),
    ("123m45", "no suit letter"),
    ("m", "without ranks"),
    ("105m", "rank 0"),
])
def test_parse_errors_are_readable(text, fragment):
    with pytest.raises(ValueError, match=fragment):
        parse_tiles(text)


def test_parse_rejects_non_text():
    with pytest.raises(ValueError, match="MPSZ text"):
        parse_tiles(["1m"])  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["0m", "10m", "5z", "m5", "", None, 5])
def test_tile_index_rejects_non_tiles(bad):
    with pytest.raises(ValueError, match="not a tile"):
        tile_index(bad)
