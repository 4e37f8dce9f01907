"""/v1/tables and /v1/profiles over HTTP: shapes, 404 / 409 / 422 in the one error shape, idempotent round
POSTs, undo and edit, export as CSV and JSON."""

from __future__ import annotations

import codecs
import csv
import io

import pytest
from fastapi.testclient import TestClient

from api.service.app import create_app
from tests.tables.support import ADMIN, bearer, draw_round, impossible_round, win_round

NAMES = ["Ann", "Bo", "Cy", "Di"]
TABLE_KEYS = {"id", "name", "players", "rules", "dealer", "streak", "rounds", "totals", "version", "created_at",
              "updated_at", "view_id", "finished"}
KEYS = {"edit_key", "edit_url", "view_url"}  # the answer to POST /v1/tables only


def new_table(client, **body):
    r = client.post("/v1/tables", json={"name": "Friday", "players": NAMES, **body})
    assert r.status_code == 201, r.text
    return r.json()


def post_round(client, table, round_, version, key=None):
    headers = {"Idempotency-Key": key} if key else {}
    return client.post(f"/v1/tables/{table['id']}/rounds", json={"round": round_, "expected_version": version},
                       headers=headers)


def test_table_round_trip(client):
    table = new_table(client, rules={"preset": "gy-normal", "base": 2}, dealer=2)
    assert set(table) == TABLE_KEYS | KEYS
    assert (table["dealer"], table["streak"], table["rounds"], table["totals"], table["version"]) == (2, 1, 0,
                                                                                                    [0] * 4, 1)
    r = post_round(client, table, win_round(1), 1)
    assert r.status_code == 201, r.text
    body = r.json()
    assert set(body) == {"number", "settlement", "table"} and body["number"] == 1
    assert body["table"]["totals"] == [p["total"] for p in body["settlement"]["players"]]
    assert body["table"]["dealer"] == 1 and body["table"]["version"] == 2
    assert client.get(f"/v1/tables/{table['id']}").json() == body["table"] and set(body["table"]) == TABLE_KEYS
    rounds = client.get(f"/v1/tables/{table['id']}/rounds").json()["rounds"]
    assert len(rounds) == 1
    assert {"number", "round", "settlement", "dealer", "streak", "totals_after"} <= set(rounds[0])
    assert rounds[0]["round"] == win_round(1) and rounds[0]["dealer"] == 2


def test_list_is_newest_first_and_paginated(client):
    ids = [new_table(client, name=f"T{i}")["id"] for i in range(3)]
    page = client.get("/v1/tables?limit=2", headers=ADMIN).json()
    assert [t["id"] for t in page["tables"]] == [ids[2], ids[1]] and page["total"] == 3
    page = client.get("/v1/tables?limit=2&offset=2", headers=ADMIN).json()
    assert [t["id"] for t in page["tables"]] == [ids[0]]
    assert client.get("/v1/tables?limit=0", headers=ADMIN).status_code == 422


def test_stale_version_is_409_with_the_current_table(client):
    table = new_table(client)
    assert post_round(client, table, win_round(1), 1).status_code == 201
    r = post_round(client, table, win_round(2), 1)  # the second phone still shows version 1
    assert r.status_code == 409
    body = r.json()
    assert body["error"]["code"] == "stale_version" and "version 2" in body["error"]["message"]
    assert body["table"]["version"] == 2 and body["table"]["rounds"] == 1
    tid = table["id"]
    assert client.put(f"/v1/tables/{tid}/rounds/1", json={"round": win_round(3), "expected_version": 1}
                      ).status_code == 409
    assert client.delete(f"/v1/tables/{tid}/rounds/1?expected_version=1").status_code == 409
    assert client.get(f"/v1/tables/{tid}").json() == body["table"]


def test_idempotency_key_retry_stores_once(client):
    table = new_table(client)
    first = post_round(client, table, win_round(1), 1, key="ann-phone-7")
    again = post_round(client, table, win_round(1), 1, key="ann-phone-7")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again.headers.get("Idempotent-Replayed") == "true"
    assert client.get(f"/v1/tables/{table['id']}").json()["rounds"] == 1
    reused = post_round(client, table, win_round(2), 2, key="ann-phone-7")
    assert reused.status_code == 422 and reused.json()["error"]["code"] == "idempotency_key_reused"
    assert post_round(client, table, win_round(2), 2, key="bad key\x01").status_code == 422


def test_404s(client):
    missing = "/v1/tables/000000000000"
    for method, path, body in [("get", missing, None), ("get", f"{missing}/rounds", None),
                               ("delete", missing, None), ("get", f"{missing}/export", None),
                               ("post", f"{missing}/rounds", {"round": win_round(1), "expected_version": 1}),
                               ("get", "/v1/profiles/nobody", None)]:
        r = client.request(method, path, json=body, headers=bearer("a key of no table"))
        assert r.status_code == 404, (method, path, r.text)
        assert r.json()["error"]["code"] == "not_found"
    table = new_table(client)
    r = client.put(f"/v1/tables/{table['id']}/rounds/3", json={"round": win_round(1), "expected_version": 1})
    assert r.status_code == 404 and "no round 3" in r.json()["error"]["message"]
    assert client.delete(f"/v1/tables/{table['id']}/rounds/1?expected_version=1").status_code == 404


@pytest.mark.parametrize("bad", [
    {"round": impossible_round(), "expected_version": 1},  # the engine refuses it
    {"round": {**win_round(1), "dealer": 2}, "expected_version": 1},  # the table decides the dealer
    {"round": {**win_round(1), "players": win_round(1)["players"][:3]}, "expected_version": 1},
    {"round": win_round(1)},  # no expected_version
    {"round": win_round(1), "expected_version": "1"},
    {"round": "1m2m3m", "expected_version": 1},
])
def test_invalid_rounds_are_422_and_change_nothing(client, bad):
    table = new_table(client)
    post_round(client, table, win_round(1), 1)
    before = client.get(f"/v1/tables/{table['id']}").json()
    if isinstance(bad.get("expected_version"), int):
        bad = {**bad, "expected_version": before["version"]}  # current: only the round itself is wrong
    r = client.post(f"/v1/tables/{table['id']}/rounds", json=bad)
    assert r.status_code == 422 and r.json()["error"]["message"]
    r = client.put(f"/v1/tables/{table['id']}/rounds/1", json=bad)
    assert r.status_code == 422
    assert client.get(f"/v1/tables/{table['id']}").json() == before


@pytest.mark.parametrize("body", [
    {"name": "x", "players": NAMES[:3]},
    {"name": "x", "players": ["Ann", "Ann", "Bo", "Cy"]},
    {"name": "", "players": NAMES},
    {"name": "x", "players": NAMES, "rules": "nanjing"},
    {"name": "x", "players": NAMES, "rules": {"preset": "gy-normal", "colour": 1}},
    {"name": "x", "players": NAMES, "dealer": 4},
    {"name": "x", "players": NAMES, "rules": "gy-normal", "profile": "p"},
])
def test_invalid_tables_are_422(client, body):
    r = client.post("/v1/tables", json=body)
    assert r.status_code == 422 and r.json()["error"]["message"]
    assert client.get("/v1/tables", headers=ADMIN).json()["total"] == 0


def test_undo_and_edit(client):
    table = new_table(client)
    version = 1
    for r in [win_round(1), win_round(1), draw_round(), win_round(2)]:
        version = post_round(client, table, r, version).json()["table"]["version"]
    tid = table["id"]
    r = client.put(f"/v1/tables/{tid}/rounds/1", json={"round": win_round(3), "expected_version": version})
    assert r.status_code == 200 and set(r.json()) == {"table"}
    rounds = client.get(f"/v1/tables/{tid}/rounds").json()["rounds"]
    assert [x["dealer"] for x in rounds] == [0, 3, 1, 1]
    r = client.delete(f"/v1/tables/{tid}/rounds/2?expected_version={r.json()['table']['version']}")
    assert r.status_code == 200
    table_now = r.json()["table"]
    rounds = client.get(f"/v1/tables/{tid}/rounds").json()["rounds"]
    assert [x["number"] for x in rounds] == [1, 2, 3] and table_now["rounds"] == 3
    assert table_now["totals"] == rounds[-1]["totals_after"] and sum(table_now["totals"]) == 0
    assert client.delete(f"/v1/tables/{tid}").status_code == 204
    assert client.get(f"/v1/tables/{tid}").status_code == 404


def test_export_csv_and_json(client):
    table = new_table(client, players=["Ann", "=Bo", "Cy", "Di"])
    version = 1
    for r in [win_round(1), draw_round(), win_round(0)]:
        version = post_round(client, table, r, version).json()["table"]["version"]
    rounds = client.get(f"/v1/tables/{table['id']}/rounds").json()["rounds"]
    r = client.get(f"/v1/tables/{table['id']}/export?format=csv")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert "attachment" in r.headers["content-disposition"]
    assert r.content.startswith(codecs.BOM_UTF8)  # Excel reads the names as UTF-8
    rows = list(csv.reader(io.StringIO(r.content.decode("utf-8-sig"))))
    assert rows[0] == ["number", "dealer", "outcome", "hand type", "fan", "Ann", "'=Bo", "Cy", "Di",
                       "Ann total", "'=Bo total", "Cy total", "Di total"]  # no formula in a spreadsheet
    assert [row[0] for row in rows[1:]] == ["1", "2", "3", "total"]
    assert rows[1][1] == "Ann" and rows[1][2] == "'=Bo wins on 5p, 自摸 (self-drawn)"
    assert rows[1][3:5] == ["平胡 (plain win)", "1"]  # E1's 平胡 (docs/rules.md#examples)
    assert rows[2][2] == "黄牌 (exhaustive draw)" and rows[2][3:5] == ["", ""]
    for row, x in zip(rows[1:4], rounds, strict=True):
        assert [int(v) for v in row[5:9]] == x["deltas"]
        assert [int(v) for v in row[9:]] == x["totals_after"]
    final = client.get(f"/v1/tables/{table['id']}").json()["totals"]
    assert [int(v) for v in rows[4][5:9]] == final == [int(v) for v in rows[4][9:]]
    assert final == [sum(x["deltas"][s] for x in rounds) for s in range(4)]
    data = client.get(f"/v1/tables/{table['id']}/export?format=json").json()
    assert data["table"]["id"] == table["id"] and len(data["rounds"]) == 3
    assert [x["totals_after"] for x in data["rounds"]] == [x["totals_after"] for x in rounds]
    assert client.get(f"/v1/tables/{table['id']}/export?format=xml").status_code == 422


def test_profiles(client):
    rules = {"preset": "liupanshui", "base": 2}
    table = new_table(client, rules=rules)
    r = client.put("/v1/profiles/home", json={"table": table["id"]}, headers=ADMIN)
    assert r.status_code == 200 and r.json()["rules"] == rules
    assert client.get("/v1/profiles").json()["profiles"][0]["name"] == "home"
    again = new_table(client, name="Next week", profile="home")
    assert again["rules"] == rules
    assert client.post("/v1/tables", json={"name": "x", "players": NAMES, "profile": "none"}).status_code == 404
    assert client.put("/v1/profiles/bad", json={"rules": "nanjing"}, headers=ADMIN).status_code == 422
    refused = client.put("/v1/profiles/empty", json={}, headers=ADMIN)
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_profile"


def test_unreachable_database_is_503_and_the_rest_still_works(tmp_path):
    app = create_app(model_path="/nonexistent/model.onnx",
                     database="postgresql+psycopg://nobody@/none?host=/nonexistent-socket-dir&port=1")
    with TestClient(app) as c:
        r = c.get(f"/v1/tables/{'0' * 12}")
        assert r.status_code == 503 and r.json()["error"]["code"] == "database_unavailable"
        assert c.post("/v1/hand", json={"concealed": "1112345678999m"}).status_code == 200
    assert app.state.internal_errors == 0


def test_readyz_asks_a_database_server(pg_url):
    up = create_app(model_path="/nonexistent/model.onnx", database=pg_url)
    down = create_app(model_path="/nonexistent/model.onnx",
                      database="postgresql+psycopg://nobody:secret@/none?host=/nonexistent-socket-dir&port=1")
    with TestClient(up) as c:
        assert c.get("/readyz").json()["checks"]["database"] == {"ok": True, "detail": "the database answers"}
    with TestClient(down) as c:
        check = c.get("/readyz").json()["checks"]["database"]
        assert check["ok"] is False and "secret" not in check["detail"] and "nonexistent" not in check["detail"]
    up.state.tables.close()


def test_round_carries_the_house_rule_events(client):
    """A round takes every key of the /v1/settle body except what the table decides: 跟庄 (gen_zhuang) pays under
    a table whose house rules turn it on, and the stored round keeps the flag."""
    plain = new_table(client)
    house = new_table(client, rules={"preset": "gy-normal", "genzhuang": 4})
    round_ = {**draw_round(), "gen_zhuang": True}
    totals = {}
    for table in (plain, house):
        r = post_round(client, table, round_, 1)
        assert r.status_code == 201, r.text
        totals[table["id"]] = r.json()["table"]["totals"]
        stored = client.get(f"/v1/tables/{table['id']}/rounds").json()["rounds"][0]["round"]
        assert stored["gen_zhuang"] is True
    # The dealer (seat 0) pays each other player 4 more under the house rule; the plain table ignores the flag.
    diff = [h - p for h, p in zip(totals[house["id"]], totals[plain["id"]], strict=True)]
    assert diff == [-12, 4, 4, 4]
