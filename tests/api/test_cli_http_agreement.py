"""One path per question: for every command with ``--json``, the command line prints exactly the body the HTTP
service answers for the same input (both call the same pipeline or store function and dump the same typed answer).
Photos are seen by one scripted detector on both sides; ``seconds`` (the time taken) is the only key left out."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

import pipeline.settings
from api.cli import main
from api.service.app import create_app
from pipeline.settings import Settings
from tests.api.support import SAMPLES, WIN_ROW, ScriptedDetector, blank_photo
from tests.scoring.settle_tables import example
from tests.tables.support import ADMIN, ADMIN_KEY, draw_round, remember_keys, win_round

TABLES = Path(__file__).parents[1] / "data" / "tables"
HAND13 = ["1m", "1m", "1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m", "9m", "9m"]  # 九莲 shape: ready


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TestClient, str]]:
    """The service and the command line on one database and one scripted detector (seeing WIN_ROW)."""
    db = f"sqlite:///{tmp_path / 'tables.db'}"
    detector = ScriptedDetector(WIN_ROW)
    monkeypatch.setattr(pipeline.settings, "open_detector", lambda settings: detector)
    app = create_app(model_path="/nonexistent/model.onnx", database=db, settings=Settings(admin_key=ADMIN_KEY))
    with TestClient(app) as client:
        app.state.detector = detector
        yield client, db
    assert app.state.internal_errors == 0


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code in (0, 1), err  # score exits 1 when the tiles cannot be scored, still printing its answer
    return json.loads(out)


def body(response: Any) -> Any:
    assert response.status_code in (200, 201), response.text
    return response.json()


def timeless(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k != "seconds"}


def photo_file(tmp_path: Path) -> Path:
    path = tmp_path / "hand.jpg"
    path.write_bytes(blank_photo())
    return path


def upload(path: Path, field: str = "image") -> dict[str, Any]:
    return {field: (path.name, path.read_bytes(), "image/jpeg")}


# ----------------------------------------------------------------------------------------------------- text


@pytest.mark.parametrize(("argv", "request_body"), [
    (["789m2345p123456s", "--win", "5p", "--self-drawn"],
     {"concealed": "789m2345p123456s", "win_tile": "5p", "self_drawn": True}),
    # 14 tiles: the last one written is the winning tile, the request carries the other 13
    (["123m456p789s11s55p5p"], {"concealed": "123m45556p11789s", "win_tile": "5p"}),
    (["123456p2278s", "--win", "9s", "--self-drawn", "--kong-draw", "--meld", "concealed_kong:6m"],
     {"concealed": "123456p2278s", "win_tile": "9s", "self_drawn": True, "kong_draw": True,
      "melds": [{"type": "concealed_kong", "tile": "6m"}]}),
    (["1444666999p", "--win", "1p", "--meld", "pong:2p", "--rules", '{"preset": "gy-reduced", "base": 2}',
      "--flipped", "8s"],
     {"concealed": "1444666999p", "win_tile": "1p", "melds": [{"type": "pong", "tile": "2p"}],
      "rules": {"preset": "gy-reduced", "base": 2}, "flipped": "8s"}),
    (["1112345678999m"], {"concealed": "1112345678999m"}),  # no winning tile: the waits
])
def test_hand(service, capsys, argv, request_body):
    client, _ = service
    assert cli_json(capsys, "hand", *argv, "--json") == body(client.post("/v1/hand", json=request_body))


def test_waits(service, capsys):
    client, _ = service
    answer = cli_json(capsys, "waits", "34m123456p99s", "--meld", "pong:5m", "--json")
    assert answer == body(client.post("/v1/hand", json={"concealed": "34m123456p99s",
                                                         "melds": [{"type": "pong", "tile": "5m"}]}))
    assert [w["tile"] for w in answer["waits"]] == ["2m", "5m"]


@pytest.mark.parametrize("path", sorted(TABLES.glob("*.json")), ids=lambda p: p.stem)
def test_settle_a_table_file(service, capsys, path):
    client, _ = service
    assert cli_json(capsys, "settle", str(path), "--json") == body(
        client.post("/v1/settle", json=json.loads(path.read_text(encoding="utf-8"))))


def test_settle_with_the_rules_replaced(service, capsys, tmp_path):
    client, _ = service
    state = example("E1", rules={"preset": "gy-normal", "bao_ji": False})
    path = tmp_path / "table.json"
    path.write_text(json.dumps(state), encoding="utf-8")
    sent = {**state, "rules": {"preset": "liupanshui", "bao_ji": False}}  # --rules keeps the file's overrides
    assert cli_json(capsys, "settle", str(path), "--rules", "liupanshui", "--json") == body(
        client.post("/v1/settle", json=sent))


@pytest.mark.parametrize("rules", ["gy-reduced", {"preset": "gy-reduced", "base": 3}])
def test_chajiao_as_text(service, capsys, rules):
    client, _ = service
    hands = {0: "1112345678999m", 2: "258m258p147p9s pong:5s"}
    answer = cli_json(capsys, "chajiao", *[a for seat, text in hands.items() for a in ("--hand", str(seat), text)],
                      "--rules", rules if isinstance(rules, str) else json.dumps(rules), "--dealer", "2", "--json")
    if isinstance(rules, str):  # the photo route's form field takes a preset name only
        form = {f"hand{seat}": text for seat, text in hands.items()} | {"rules": rules, "dealer": "2"}
        assert answer == body(client.post("/v1/chajiao/photos", data=form))
    players = [{"seat": 0, "concealed": hands[0]},
               {"seat": 2, "concealed": "258m258p147p9s", "melds": [{"type": "pong", "tile": "5s"}]}]
    assert answer == body(client.post("/v1/chajiao", json={"players": players, "rules": rules, "dealer": 2}))
    # P2 is not 叫牌 and pays P0 (叫牌 on 九莲's nine waits) its best fan, times the 底分 (base) of the rules given
    payment = answer["ledger"][0]["fan"]
    assert [(t["from"], t["to"]) for t in answer["ledger"]] == [(2, 0)]
    assert payment == answer["players"][0]["best_fan"] * (3 if isinstance(rules, dict) else 1)


# --------------------------------------------------------------------------------------------------- photos


def test_detect(service, capsys, tmp_path):
    client, _ = service
    path = photo_file(tmp_path)
    answer = cli_json(capsys, "detect", str(path), "--json")
    assert timeless(answer) == timeless(body(client.post("/v1/detect", files=upload(path))))
    assert [t["tile"] for t in answer["tiles"]] == WIN_ROW


def test_read(service, capsys, tmp_path):
    client, _ = service
    path = photo_file(tmp_path)
    answer = cli_json(capsys, "read", str(path), "--json")
    assert timeless(answer) == timeless(body(client.post("/v1/read", files=upload(path))))
    assert answer["hand"]["concealed_tiles"] == WIN_ROW


def test_read_table(service, capsys, tmp_path):
    client, _ = service
    path = photo_file(tmp_path)
    answer = cli_json(capsys, "read-table", str(path), "--json")
    assert answer == body(client.post("/v1/read-table", files=upload(path)))
    assert [d["tile"] for d in answer["detections"]] == WIN_ROW and len(answer["seats"]) == 4


@pytest.mark.parametrize(("argv", "form"), [
    ([], {}),
    (["--win", "1p", "--self-drawn", "--flipped", "9s", "--rules", "liupanshui"],
     {"win_tile": "1p", "self_drawn": "true", "flipped": "9s", "rules": "liupanshui"}),
    (["--win", "9m"], {"win_tile": "9m"}),  # not among the tiles: no score, and the same reason on both sides
])
def test_score(service, capsys, tmp_path, argv, form):
    client, _ = service
    path = photo_file(tmp_path)
    answer = cli_json(capsys, "score", str(path), *argv, "--json")
    http = body(client.post("/v1/score", files=upload(path), data={**form, "annotate": "false"}))
    assert timeless(answer) == timeless(http)


def test_chajiao_from_a_photo(service, capsys, tmp_path):
    client, _ = service
    path = photo_file(tmp_path)
    client.app.state.detector.tiles = HAND13  # the scripted detector (shared with the command line) sees 13 tiles
    answer = cli_json(capsys, "chajiao", "--photo", "1", str(path), "--hand", "3", "258m258p258s147p9s", "--json")
    assert answer == body(client.post("/v1/chajiao/photos", files=upload(path, "photo1"),
                                      data={"hand3": "258m258p258s147p9s"}))
    assert answer["players"][1]["source"] == "photo" and answer["players"][1]["ting"] is True


def test_calibrate_refuses_in_the_same_words(service, capsys, tmp_path):
    client, _ = service
    path = photo_file(tmp_path)
    assert main(["calibrate", str(path)]) == 2
    out, err = capsys.readouterr()
    refused = client.post("/v1/calibrate", files=upload(path))
    assert refused.status_code == 422 and out == ""
    assert err == f"zhuoji calibrate: error: {refused.json()['error']['message']}\n"


# --------------------------------------------------------------------------------------------------- tables


def round_file(tmp_path: Path, name: str, round_: dict[str, Any]) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(round_), encoding="utf-8")
    return str(path)


def test_table_commands(service, capsys, tmp_path):
    client, db = service
    table = cli_json(capsys, "table", "new", "Friday", "--players", "Ann,Bo,Cy,Di", "--rules",
                     '{"preset": "gy-normal", "base": 2}', "--dealer", "1", "--db", db, "--json")
    table_id = table["id"]
    remember_keys(client)[table_id] = table["edit_key"]  # the HTTP writes below carry it, as the page's do
    # The POST /v1/tables answer: the table as GET shows it, plus its edit key and links, shown once.
    keys = {"edit_key", "edit_url", "view_url"}
    assert {k: v for k, v in table.items() if k not in keys} == body(client.get(f"/v1/tables/{table_id}"))
    assert table["view_url"] == f"/t/{table['view_id']}" and table["edit_url"].endswith(table["edit_key"])
    over_http = client.post("/v1/tables", json={"name": "Friday", "players": ["Ann", "Bo", "Cy", "Di"]}).json()
    assert set(over_http) == set(table)
    added = cli_json(capsys, "table", "round", table_id, round_file(tmp_path, "win", win_round(1)),
                     "--expected-version", "1", "--key", "first", "--db", db, "--json")
    # the same round again with the same key over HTTP: the service answers what it answered the command line
    replay = client.post(f"/v1/tables/{table_id}/rounds", json={"round": win_round(1), "expected_version": 1},
                         headers={"Idempotency-Key": "first"})
    assert replay.headers.get("Idempotent-Replayed") == "true" and added == body(replay)
    cli_json(capsys, "table", "round", table_id, round_file(tmp_path, "draw", draw_round()), "--db", db, "--json")
    edited = cli_json(capsys, "table", "edit", table_id, "2", round_file(tmp_path, "win3", win_round(3)),
                      "--db", db, "--json")
    assert edited == {"table": body(client.get(f"/v1/tables/{table_id}"))}
    shown = cli_json(capsys, "table", "show", table_id, "--db", db, "--json")
    assert shown["table"] == body(client.get(f"/v1/tables/{table_id}"))
    assert shown["rounds"] == body(client.get(f"/v1/tables/{table_id}/rounds"))["rounds"]
    assert shown["calibration"] == body(client.get(f"/v1/tables/{table_id}/calibration"))["calibration"]
    undone = cli_json(capsys, "table", "undo", table_id, "--db", db, "--json")
    assert undone == {"table": body(client.get(f"/v1/tables/{table_id}"))}
    assert cli_json(capsys, "table", "list", "--db", db, "--json") == body(client.get("/v1/tables", headers=ADMIN))
    profile = cli_json(capsys, "table", "profile", "house", "--from-table", table_id, "--db", db, "--json")
    assert profile == body(client.get("/v1/profiles/house"))
    rules = {"preset": "liupanshui", "wuguji": True}
    given = cli_json(capsys, "table", "profile", "lps", "--rules", json.dumps(rules), "--db", db, "--json")
    put = body(client.put("/v1/profiles/lps", json={"rules": rules}, headers=ADMIN))  # the same name saved again
    stamps = {"created_at", "updated_at"}
    assert given["rules"] == rules and {k: v for k, v in given.items() if k not in stamps} == \
        {k: v for k, v in put.items() if k not in stamps}
    assert cli_json(capsys, "table", "profiles", "--db", db, "--json") == body(client.get("/v1/profiles"))


@pytest.mark.slow
@pytest.mark.parametrize("command", ["detect", "read", "score"])
def test_photo_commands_with_the_shipped_models(client, capsys, command):
    """The same agreement with the real detector, crop classifier and facing look (the ``client`` fixture's)."""
    if client.app.state.detector is None:
        pytest.skip("no tile model here")
    path = SAMPLES[0]
    answer = cli_json(capsys, command, str(path), "--json")
    form = {"annotate": "false"} if command == "score" else {}
    assert timeless(answer) == timeless(body(client.post(f"/v1/{command}", files=upload(path), data=form)))


def test_table_calibrate_from_a_calibration_file(service, capsys, tmp_path):
    client, db = service
    table_id = cli_json(capsys, "table", "new", "Friday", "--players", "Ann,Bo,Cy,Di", "--db", db, "--json")["id"]
    refs = base64.b64encode(np.ones((27, 4, 1), np.float16).tobytes()).decode("ascii")
    tiles = [f"{rank}{suit}" for suit in "mps" for rank in range(1, 10)]
    calibration = {"version": 1, "tiles": tiles, "kind": "features", "model": "crops.onnx", "shape": [27, 4, 1],
                   "agreement": 1.0, "references_f16": refs}
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(calibration), encoding="utf-8")
    kept = cli_json(capsys, "table", "calibrate", table_id, str(path), "--db", db, "--json")
    assert kept == body(client.get(f"/v1/tables/{table_id}/calibration"))
    # the scripted detector has no crop classifier: both sides say the calibration cannot be used here
    assert kept["calibration"]["recalibrate"] == "calibration needs the crop classifier, and this service runs without one"
    full = body(client.get(f"/v1/tables/{table_id}/calibration", params={"full": "true"}))["calibration"]
    assert full["calibration"] == {**calibration, "model_sha256": None, "disagreed": []}  # the typed file, defaults said



# ------------------------------------------------------------------------------------------- rules refused

NAMES = ["Ann", "Bo", "Cy", "Di"]
CHAJIAO = {0: "1112345678999m", 2: "258m258p147p9s"}


def rules_commands(db: str, text: str) -> dict[str, list[str]]:
    """Every command that takes a rules object, with ``--rules text``."""
    return {
        "table new": ["table", "new", "x", "--players", ",".join(NAMES), "--rules", text, "--db", db],
        "table profile": ["table", "profile", "house", "--rules", text, "--db", db],
        "chajiao": ["chajiao", *[a for seat, t in CHAJIAO.items() for a in ("--hand", str(seat), t)], "--rules", text],
        "hand": ["hand", HAND13_TEXT, "--rules", text],
        "settle": ["settle", str(TABLES / "e1.json"), "--rules", text],
    }


HAND13_TEXT = "1112345678999m"


def http_refusal(client: TestClient, command: str, rules: Any) -> Any:
    """The same rules sent to the route that answers ``command``."""
    if command == "table new":
        return client.post("/v1/tables", json={"name": "x", "players": NAMES, "rules": rules})
    if command == "table profile":
        return client.put("/v1/profiles/house", json={"rules": rules}, headers=ADMIN)
    if command == "chajiao":
        players = [{"seat": seat, "concealed": t} for seat, t in CHAJIAO.items()]
        return client.post("/v1/chajiao", json={"players": players, "rules": rules})
    if command == "hand":
        return client.post("/v1/hand", json={"concealed": HAND13_TEXT, "rules": rules})
    state = json.loads((TABLES / "e1.json").read_text(encoding="utf-8"))
    return client.post("/v1/settle", json={**state, "rules": rules})


@pytest.mark.parametrize(("text", "named"), [
    ('{"preset": "gy-normal", "bogus": 1}', "unknown rules key 'bogus'"),  # an unknown key
    ('{"shangxia_ji": 3}', "rules key 'shangxia_ji' takes true or false, not 3"),  # a wrong type
    ('{"base": 2.5}', "rules key 'base' (底分) must be a whole number from 1 to 1,000,000, not 2.5"),
    ('{"preset": "dushan", "bao_ji": false}', "独山 (dushan) settles by its own rules"),  # a switch it does not read
    ("tokyo", "unknown rules preset 'tokyo'"),  # an unknown preset
    ('{"preset": "nanjing"}', "unknown rules preset 'nanjing'"),
    ("[1, 2]", "rules must be a preset name or an object"),
])
@pytest.mark.parametrize("command", ["table new", "table profile", "chajiao", "hand", "settle"])
def test_rules_refused_in_the_same_words(service, capsys, command, text, named):
    """A rules object the HTTP route refuses is refused by the command line on parsing, in one line with the
    route's message, before anything is stored."""
    client, db = service
    argv = rules_commands(db, text)[command]
    refused = http_refusal(client, command, json.loads(text) if text[0] in "{[" else text)
    assert refused.status_code == 422, refused.text
    message = refused.json()["error"]["message"]
    assert message.startswith("rules: ") and named in message
    capsys.readouterr()  # what the service logged
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"zhuoji {argv[0]}: error: {message}\n"
    assert body(client.get("/v1/tables", headers=ADMIN))["total"] == 0  # neither side stored anything
    assert body(client.get("/v1/profiles"))["profiles"] == []


@pytest.mark.parametrize("command", ["table new", "table profile", "chajiao", "hand", "settle"])
def test_rules_that_are_not_json_are_one_line(service, capsys, command):
    _, db = service
    argv = rules_commands(db, '{"preset": gy-normal}')[command]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"zhuoji {argv[0]}: error: --rules is not valid JSON: ")
    assert len(err.splitlines()) == 1
