"""The ``zhuoji hand`` and ``zhuoji waits`` subcommands (api/cli/__init__.py)."""

from __future__ import annotations

import json

import pytest

from api.cli import main
from pipeline.models import WIN_FLAGS


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", ["hand", "score"])
def test_help_lists_the_win_context_flags(capsys, command):
    """The flags are added when their command is used (building the parser loads no engine): its help has them."""
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0
    assert all(f"--{name.replace('_', '-')}" in out for name in WIN_FLAGS), out


def test_hand_text_output(capsys):
    code, out, err = run(capsys, "hand", "789m2345p123456s", "--win", "5p", "--self-drawn")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert "平胡 (plain win): 1 fan" in lines
    assert "win value W = 2 fan" in lines
    assert lines[1] == "reading: 789m 234p 123s 456s 55p"


def test_hand_json_with_melds(capsys):
    code, out, _ = run(capsys, "hand", "123456p2278s", "--win", "9s", "--self-drawn", "--kong-draw",
                       "--meld", "concealed_kong:6m", "--json")
    assert code == 0
    r = json.loads(out)
    assert r["hand_type"]["key"] == "pinghu" and r["win_value"] == 3  # E3 (docs/rules.md#examples)
    assert r["melds"] == [{"type": "concealed_kong", "tile": "6m", "from": None, "late": False}]
    assert r["discard_win_allowed"] is True


def test_hand_rules_and_flags(capsys):
    code, out, _ = run(capsys, "hand", "1444666999p", "--win", "1p", "--meld", "pong:2p", "--rules",
                       "gy-reduced", "--json")
    assert code == 0 and json.loads(out)["hand_type"]["fan"] == 8
    code, out, _ = run(capsys, "hand", "34m56799p345789s", "--win", "2m", "--bao-ting", "--json")
    assert json.loads(out)["win_value"] == 10  # 报听 winner: max(1, 10)
    code, out, _ = run(capsys, "hand", "12389m22p456789s", "--win", "7m", "--hot-discard", "--json")
    assert json.loads(out)["discard_win_allowed"] is True
    code, out, _ = run(capsys, "hand", "111m99m234789p45s", "--win", "6s", "--robbed-kong", "--json")
    assert json.loads(out)["win_value"] == 2


def test_hand_without_win_lists_waits(capsys):
    code, out, _ = run(capsys, "hand", "1234567892256p")
    assert code == 0
    assert "叫牌 (ready), waits: 4p 7p" in out
    assert "best type: 清一色 10 fan (used by 黄牌查叫)" in out


def test_hand_not_a_win(capsys):
    code, out, _ = run(capsys, "hand", "1234567892256p", "--win", "9p", "--json")
    assert code == 0
    r = json.loads(out)
    assert r["status"] == "not_a_win" and "does not complete" in r["reason"]


def test_waits_with_melds(capsys):
    code, out, _ = run(capsys, "waits", "34m123456p99s", "--meld", "concealed_kong:5m")
    assert (code, out.strip()) == (0, "2m")
    code, out, _ = run(capsys, "waits", "34m123456p99s", "--meld", "pong:5m", "--json")
    assert [w["tile"] for w in json.loads(out)["waits"]] == ["2m", "5m"]
    code, out, _ = run(capsys, "waits", "123m456p789s1357s")
    assert out.startswith("not ready")


@pytest.mark.parametrize("argv", [
    ["hand", "123z", "--win", "5p"],
    ["hand", "789m2345p123456s", "--win", "5x"],
    ["hand", "789m2345p123456s", "--win", "5p", "--meld", "chi:1m"],
    ["hand", "789m2345p123456s", "--win", "5p", "--meld", "pong"],
    ["hand", "789m2345p123456s", "--win", "5p", "--meld", "pong:5m"],  # 17 tiles
    ["hand", "789m2345p123456s", "--win", "5p", "--kong-draw"],  # 杠上花 needs 自摸
    ["hand", "789m2345p123456s", "--win", "5p", "--rules", "tokyo"],
    ["hand", "11111m"],
    ["waits", "1112345678999m", "--meld", "pong:1p"],
])
def test_bad_input_exits_2_without_traceback(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith(f"zhuoji {argv[0]}: error: ") and "Traceback" not in err


def test_unknown_option_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["waits", "1112345678999m", "--bogus"])
    assert exit_info.value.code == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err
