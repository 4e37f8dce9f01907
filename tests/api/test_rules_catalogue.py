"""GET /v1/rules and ``zhuoji rules``: one catalogue, every switch of the engine listed once, every listed value
accepted by the endpoints that take rules, every preset and profile a rules object that round-trips."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path

import pytest

from api.cli import main
from scoring.rules import PRESETS, Rules, get_rules
from tests.scoring.settle_tables import EXAMPLES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
SWITCH_KEYS = {f.name for f in dataclasses.fields(Rules)} - {"preset"}
NEEDS = {"wuguji_chongfeng": {"wuguji": True}}  # a switch that needs another on (its explanation says so)


@pytest.fixture(scope="module")
def body(text_client):
    r = text_client.get("/v1/rules")
    assert r.status_code == 200, r.text
    return r.json()


def _values(switch: dict) -> list:
    """Every value a switch offers besides its default (ints: one more; the kong map: 2/3/1)."""
    kind = switch["kind"]
    if kind == "choice":
        return [c["value"] for c in switch["choices"] if c["value"] != switch["default"]]
    if kind == "bool":
        return [not switch["default"]]
    if kind == "int_map":
        return [{"concealed": 2, "added": 3, "exposed": 1}]
    return [switch["default"] + 1]


def _settle_body(rules: dict, round_fields: list[dict]) -> dict:
    state = copy.deepcopy(EXAMPLES["E1"])
    for field in round_fields:  # the round input a switch needs (星期鸡 → weekday)
        if any(rules.get(k) in v for k, v in field["needed_when"].items()) and field["kind"] == "int":
            state[field["name"]] = field["min"]
    return {**state, "rules": rules}


def test_catalogue_shape_and_every_switch_once(body):
    assert set(body) == {"presets", "groups", "switches", "profiles", "round_fields"}
    names = [s["name"] for s in body["switches"]]
    assert len(names) == len(set(names)) and set(names) == SWITCH_KEYS
    groups = {g["name"] for g in body["groups"]}
    gy = PRESETS["gy-normal"].to_dict()
    for s in body["switches"]:
        assert s["group"] in groups and s["doc"] == f"docs/rules.md#{s['name']}"
        assert all(s[k] for k in ("title_zh", "title_en", "explanation_zh", "explanation_en")), s["name"]
        assert s["default"] == gy[s["name"]], s["name"]
        assert (s["choices"] is not None) == (s["kind"] == "choice"), s["name"]
    assert [p["name"] for p in body["presets"]] == list(PRESETS)
    assert {p["name"] for p in body["profiles"]} >= {"zunyi", "anshun", "xingyi", "duyun", "tongren"}
    weekday = next(f for f in body["round_fields"] if f["name"] == "weekday")
    assert (weekday["min"], weekday["max"], weekday["needed_when"]) == (1, 7, {"xingqi_ji": ["sunday7",
                                                                                             "sunday_none"]})


def test_every_preset_round_trips(body, text_client):
    for preset in body["presets"]:
        assert set(preset["rules"]) == SWITCH_KEYS
        assert get_rules({"preset": preset["name"], **preset["rules"]}) == PRESETS[preset["name"]]
        by_name = text_client.post("/v1/settle", json={**EXAMPLES["E1"], "rules": preset["name"]})
        spelled = text_client.post("/v1/settle", json={**EXAMPLES["E1"],
                                                       "rules": {"preset": preset["name"], **preset["rules"]}})
        assert by_name.status_code == spelled.status_code == 200 and by_name.json() == spelled.json()


def test_every_switch_value_is_accepted_by_settle(body, text_client):
    for switch in body["switches"]:
        for value in _values(switch):
            rules = {"preset": "gy-normal", switch["name"]: value, **NEEDS.get(switch["name"], {})}
            r = text_client.post("/v1/settle", json=_settle_body(rules, body["round_fields"]))
            assert r.status_code == 200, (switch["name"], value, r.text)
            assert r.json()["rules"][switch["name"]] == value


def test_new_switches_reach_hand_and_chajiao(text_client):
    rules = {"preset": "gy-normal", "xingqi_ji": "sunday7", "zimo_bonus": "double", "tongsan": True}
    hand = text_client.post("/v1/hand", json={"concealed": "123456s234p789m5p", "win_tile": "5p",
                                              "self_drawn": True, "rules": rules})
    assert hand.status_code == 200, hand.text
    assert hand.json()["win_value"] == 1 * 2 + 3  # 平胡 1, 自摸翻倍 → 2, 通三 + 3
    draw = text_client.post("/v1/chajiao", json={"players": [{"concealed": "12345678922p56p"},
                                                             {"concealed": "11m123p22346799s"}], "rules": rules})
    assert draw.status_code == 200, draw.text
    bad = text_client.post("/v1/settle", json={**EXAMPLES["E1"], "rules": {"xingqi_ji": "monday"}})
    assert bad.status_code == 422 and "xingqi_ji" in bad.json()["error"]["message"]


def test_weekday_is_round_input(text_client):
    ok = text_client.post("/v1/settle", json={**EXAMPLES["E1"], "weekday": 3, "rules": {"xingqi_ji": "sunday7"}})
    assert ok.status_code == 200 and [p["total"] for p in ok.json()["players"]] == [6, 14, -12, -8]
    missing = text_client.post("/v1/settle", json={**EXAMPLES["E1"], "rules": {"xingqi_ji": "sunday7"}})
    assert missing.status_code == 422 and "weekday" in missing.json()["error"]["message"]
    for bad in (0, 8, "3"):
        assert text_client.post("/v1/settle", json={**EXAMPLES["E1"], "weekday": bad}).status_code == 422


def test_every_profile_is_accepted(body, text_client):
    for profile in body["profiles"]:
        assert profile["source"] and profile["rules"]["preset"] in PRESETS
        rules = get_rules(profile["rules"])
        assert all(getattr(rules, k) == v for k, v in profile["rules"].items()), profile["name"]
        r = text_client.post("/v1/settle", json=_settle_body(profile["rules"], body["round_fields"]))
        assert r.status_code == 200, (profile["name"], r.text)


def test_cli_rules_json_is_the_http_body(body, capsys):
    assert main(["rules", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == body
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert all(re.search(rf"^  {name} = ", out, re.M) for name in SWITCH_KEYS)


def test_rules_reference_has_a_section_per_switch(body):
    text = DOCS.read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a id="([a-z0-9_-]+)"></a>', text))
    assert {s["name"] for s in body["switches"]} <= anchors
    assert {p["name"] for p in body["presets"]} | {"profiles"} <= anchors


def test_cli_settle_takes_a_rules_object(capsys):
    table = str(Path(__file__).resolve().parents[1] / "data" / "tables" / "e1.json")
    # E1 under 通三 (docs/rules.md#tongsan, derived in tests/scoring/test_variants.py): 0, +20, −13, −7.
    assert main(["settle", table, "--json", "--rules", '{"tongsan": true}']) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rules"]["preset"] == "gy-normal" and out["rules"]["tongsan"] is True
    assert [p["total"] for p in out["players"]] == [0, 20, -13, -7]
    assert main(["settle", table, "--rules", '{"tongsan": 1}']) == 2
    assert "tongsan" in capsys.readouterr().err


def test_cli_chajiao_takes_a_rules_object(capsys):
    # E10 (docs/rules.md#examples) under gy-reduced spelled as an object: P0's best wait is 清一色 5 (not 10), P2's
    # 平胡 1; P1 and P3 each pay P0 5 and P2 1 → +10, −6, +2, −6.
    hands = ["0", "12345678922p56p", "1", "11m123p22346799s", "2", "234m567s888p33m67m", "3", "255668m5p223678s"]
    args = [a for i in range(0, 8, 2) for a in ("--hand", hands[i], hands[i + 1])]
    assert main(["chajiao", *args, "--json", "--rules", '{"preset": "gy-reduced"}']) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["total"] for p in out["players"]] == [10, -6, 2, -6]
    assert main(["chajiao", *args, "--rules", '{"xingqi_ji": "friday"}']) == 2
    assert "xingqi_ji" in capsys.readouterr().err
