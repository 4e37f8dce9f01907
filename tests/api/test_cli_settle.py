"""``zhuoji settle table.json [--rules PRESET] [--json]``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from api.cli import main
from tests.scoring.settle_tables import example

TABLES = Path(__file__).parents[1] / "data" / "tables"


def write(tmp_path: Path, content: object, name: str = "table.json") -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False),
                    encoding="utf-8")
    return str(path)


def test_human_readable_output(capsys):
    assert main(["settle", str(TABLES / "e1.json")]) == 0
    out = capsys.readouterr().out
    assert "叫牌" in out and "Ledger:" in out and "包鸡 (chicken liability)" in out
    assert "Next dealer: P1" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("P") and "→" not in line]
    assert [row[0] for row in rows] == ["P0", "P1", "P2", "P3"]
    assert "+10" in rows[1] and "-8" in rows[2]


@pytest.mark.parametrize(("name", "totals", "dealer"), [("e1", [2, 10, -8, -4], 1), ("e9", [-15, 16, -4, 3], 1)])
def test_json_output_of_the_demo_tables(capsys, name, totals, dealer):
    assert main(["settle", str(TABLES / f"{name}.json"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [p["total"] for p in result["players"]] == totals
    assert result["next_dealer"] == dealer
    assert len(result["matrix"]) == 4 and result["ledger"]


def test_rules_option_replaces_the_preset_and_keeps_overrides(tmp_path, capsys):
    state = example("E1", rules={"preset": "gy-normal", "bao_ji": False})
    assert main(["settle", write(tmp_path, state), "--rules", "liupanshui", "--json"]) == 0
    rules = json.loads(capsys.readouterr().out)["rules"]
    assert rules["preset"] == "liupanshui" and rules["bao_ji"] is False and rules["dealer_bonus"] is True


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "JSON object"),
    # the request model's words, as POST /v1/settle answers them
    (json.dumps(example("E1") | {"players": []}), "players: List should have at least 4 items"),
    (json.dumps(example("E1") | {"dealer": 7}), "dealer: Input should be less than or equal to 3"),
    (json.dumps(example("E8") | {"outcome": {"type": "win", "winners": [1], "win_tile": "2m",
                                             "self_drawn": False, "discarder": 0}}), "cannot win"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, content, message):
    assert main(["settle", write(tmp_path, content)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("zhuoji settle: error:") and len(err.strip().splitlines()) == 1


def test_missing_file_and_bad_preset_exit_2(tmp_path, capsys):
    assert main(["settle", str(tmp_path / "nope.json")]) == 2
    assert "nope.json" in capsys.readouterr().err
    assert main(["settle", str(TABLES / "e1.json"), "--rules", "tokyo"]) == 2
    assert "unknown rules preset" in capsys.readouterr().err
