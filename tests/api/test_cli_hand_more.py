"""``zhuoji hand``: 14 tiles (the last one is the winning tile, as for a photo), ``--flipped`` (the 翻鸡
indicator) and the 鸡 (chickens) held, shown as the API's ``chickens`` field."""

from __future__ import annotations

import json

import pytest

from api.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_fourteen_tiles_take_the_last_one_as_the_winning_tile(capsys):
    code, out, err = run(capsys, "hand", "123m456p789s11s55p5p", "--self-drawn", "--json")
    # stdout is the POST /v1/hand body; the assumption made is said on stderr
    assert code == 0 and err == "assumed: 14 tiles: took the last one, 5p, as the winning tile (--win picks another)\n"
    r = json.loads(out)
    assert r["win_tile"] == "5p" and r["concealed"] == "123m45556p11789s"
    assert r["hand_type"]["key"] == "pinghu" and r["win_value"] == 2
    # the last tile as written (6p), not the last in sorted order (9s)
    code, out, _ = run(capsys, "hand", "789s11s555p123m456p", "--self-drawn", "--json")
    assert code == 0 and json.loads(out)["win_tile"] == "6p"


def test_fourteen_tiles_with_melds_and_an_explicit_winning_tile(capsys):
    code, out, _ = run(capsys, "hand", "123456p2278s9s", "--meld", "concealed_kong:6m", "--self-drawn",
                       "--kong-draw", "--json")
    assert code == 0 and json.loads(out)["win_value"] == 3  # E3 (docs/rules.md#examples)
    code, out, err = run(capsys, "hand", "123m456p789s11s555p", "--win", "1s", "--json")
    r = json.loads(out)
    assert code == 0 and r["win_tile"] == "1s" and err == ""
    code, out, err = run(capsys, "hand", "123m456p789s11s555p", "--win", "9m")
    assert code == 2 and out == "" and "9m is not among the 14 tiles" in err


def test_fourteen_tiles_text_output_says_which_tile_won(capsys):
    code, out, _ = run(capsys, "hand", "123m456p789s11s55p5p")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("14 tiles: took the last one, 5p")
    assert "hand: 123m45556p11789s + 5p, 点炮 (on a discard)" in lines


def test_flipped_indicator_and_chickens_held(capsys):
    code, out, _ = run(capsys, "hand", "123m456p789s11s55p", "--win", "5p", "--flipped", "4m")
    assert code == 0
    # 翻 4m → 5m is a chicken; the hand holds none, but two 幺鸡
    assert out.splitlines()[-1] == "鸡 (chickens) held (翻 4m → 5m): 1s×2 幺鸡 (fixed chicken) = 2"
    code, out, _ = run(capsys, "hand", "123m456p789s11s55p", "--win", "5p", "--flipped", "4p", "--json")
    chickens = json.loads(out)["chickens"]
    assert chickens["flipped_chicken"] == "5p" and chickens["golden"] is False
    assert [(c["tile"], c["count"], c["value"]) for c in chickens["tiles"]] == [("5p", 4, 1), ("1s", 2, 1)]
    assert chickens["total"] == 6
    # 金鸡: 翻 9s → every 1s is worth 2
    code, out, _ = run(capsys, "hand", "123m456p789s11s55p", "--win", "5p", "--flipped", "9s", "--json")
    assert json.loads(out)["chickens"]["total"] == 4


def test_chickens_held_without_flip_and_in_melds(capsys):
    code, out, _ = run(capsys, "hand", "1s", "--win", "1s", "--meld", "pong:5m", "--meld", "pong:6m",
                       "--meld", "pong:7m", "--meld", "pong:8p", "--self-drawn", "--rules",
                       '{"preset": "gy-normal", "wuguji": true}')
    assert code == 0 and out.splitlines()[-1] == ("鸡 (chickens) held: 8p×3 乌骨鸡 (black-bone chicken), "
                                                  "1s×2 幺鸡 (fixed chicken) = 8")
    code, out, _ = run(capsys, "hand", "789m2345p123456s")
    assert code == 0 and out.splitlines()[-1] == "鸡 (chickens) held: 1s×1 幺鸡 (fixed chicken) = 1"
    code, out, _ = run(capsys, "hand", "789m2345p234456s")
    assert out.splitlines()[-1] == "鸡 (chickens) held: none"


def test_bad_flipped_tile_is_one_line_and_exit_2(capsys):
    code, out, err = run(capsys, "hand", "789m2345p123456s", "--flipped", "0z")
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "not a tile" in err
