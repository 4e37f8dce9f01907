"""Who may write a table (issue 51): every write needs the table's edit key, a view id reads and cannot write, the
list of every table and saving house profiles need the admin key, keys never appear in a read answer, and tables
stored before get a view id and a key nobody knows (migration 0004) that ``zhuoji table key`` replaces."""

from __future__ import annotations

import hashlib
import json

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from api.cli import main
from api.service.app import create_app
from pipeline.settings import Settings
from pipeline.table_models import TableCreated
from tables import TableStore
from tables.db import downgrade
from tables.keys import is_view_id, new_edit_key, new_view_id
from tables.schema import idempotency_keys
from tests.tables.support import ADMIN, bearer, entered, win_round

NAMES = ["Ann", "Bo", "Cy", "Di"]
ROUND = {"round": win_round(1), "expected_version": 2}

# Every write to a table: (method, path after /v1/tables/{id}, request keywords). Bodies are valid where that is
# easy and refused by validation where not: either way the key is asked for first.
WRITES = [
    ("POST", "/rounds", {"json": ROUND}),
    ("POST", "/rounds", {"json": {"round": "not a round"}}),
    ("PUT", "/rounds/1", {"json": ROUND}),
    ("PUT", "/rounds/1", {"json": {"expected_version": "two"}}),
    ("DELETE", "/rounds/1", {"params": {"expected_version": 2}}),
    ("DELETE", "/rounds/1", {}),  # no expected_version: a 422 for a key holder
    ("DELETE", "", {}),
    ("PUT", "/calibration", {"json": {"model": "zhuoji-crops-int8.onnx"}}),
    ("DELETE", "/calibration", {}),
    ("POST", "/calibrate", {"files": {"image": ("set.jpg", b"not a photo", "image/jpeg")}}),
    ("POST", "/finish", {}),
]


@pytest.fixture
def table(client: TestClient) -> dict:
    """A table with one round, created by ``client`` (which keeps its key)."""
    created = client.post("/v1/tables", json={"name": "Friday", "players": NAMES})
    assert created.status_code == 201, created.text
    body = created.json()
    assert client.post(f"/v1/tables/{body['id']}/rounds", json={"round": win_round(1), "expected_version": 1}
                       ).status_code == 201
    return body


def _state(client: TestClient, table_id: str) -> tuple[dict, list]:
    return (client.get(f"/v1/tables/{table_id}").json(), client.get(f"/v1/tables/{table_id}/rounds").json())


@pytest.mark.parametrize(("method", "path", "request_kw"), WRITES)
def test_every_write_needs_the_tables_key(client, anonymous, table, method, path, request_kw):
    url = f"/v1/tables/{table['id']}{path}"
    before = _state(client, table["id"])
    other = client.post("/v1/tables", json={"name": "Other", "players": NAMES}).json()
    headers = dict(request_kw.get("headers", {}))
    kw = {k: v for k, v in request_kw.items() if k != "headers"}

    none = anonymous.request(method, url, headers=headers, **kw)
    assert none.status_code == 401, none.text
    assert none.json()["error"]["code"] == "key_required" and none.headers["WWW-Authenticate"] == "Bearer"
    for wrong in ("not the key", other["edit_key"], table["view_id"], "x" * 5000):
        refused = anonymous.request(method, url, headers={**headers, **bearer(wrong)}, **kw)
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "wrong_key"
    basic = anonymous.request(method, url, headers={**headers, "Authorization": f"Basic {table['edit_key']}"}, **kw)
    assert basic.status_code == 401
    assert _state(client, table["id"]) == before  # nothing written

    # With the key the same request gets past the check: written, or refused for its body, never 401/403.
    allowed = anonymous.request(method, url, headers={**headers, **bearer(table["edit_key"])}, **kw)
    assert allowed.status_code not in (401, 403), allowed.text


def test_the_key_opens_only_its_table_and_a_write_with_it_counts(client, anonymous, table):
    other = client.post("/v1/tables", json={"name": "Other", "players": NAMES}).json()
    r = anonymous.post(f"/v1/tables/{other['id']}/rounds", json={"round": win_round(1), "expected_version": 1},
                       headers=bearer(table["edit_key"]))
    assert r.status_code == 403
    r = anonymous.post(f"/v1/tables/{other['id']}/rounds", json={"round": win_round(1), "expected_version": 1},
                       headers=bearer(other["edit_key"]))
    assert r.status_code == 201 and r.json()["table"]["rounds"] == 1
    # An unknown table with a key: 404, without one: 401 (the key is asked for before anything is looked up).
    assert anonymous.delete("/v1/tables/0123456789ab", headers=bearer(table["edit_key"])).status_code == 404
    assert anonymous.delete("/v1/tables/0123456789ab").status_code == 401
    assert anonymous.delete(f"/v1/tables/{other['id']}", headers=bearer(other["edit_key"])).status_code == 204
    assert client.get(f"/v1/tables/{other['id']}").status_code == 404


def test_the_key_is_never_in_a_read_answer(client, anonymous, table, db_url):
    key, tid, view = table["edit_key"], table["id"], table["view_id"]
    assert len(key) >= 22 and table["edit_url"] == f"/#table={tid}&key={key}" and table["view_url"] == f"/t/{view}"
    answers = [anonymous.get(path) for path in (
        f"/v1/tables/{tid}", f"/v1/tables/{tid}/rounds", f"/v1/tables/{tid}/export?format=json",
        f"/v1/tables/{tid}/export?format=csv", f"/v1/tables/{tid}/calibration", f"/v1/views/{view}",
        f"/v1/views/{view}/rounds", f"/v1/views/{view}/export?format=json")]
    answers.append(anonymous.get("/v1/tables", headers=ADMIN))
    stale = client.post(f"/v1/tables/{tid}/rounds", json={"round": win_round(1), "expected_version": 1})
    answers.append(stale)  # 409 with the current table
    assert stale.status_code == 409
    for answer in answers:
        assert answer.status_code == 200 or answer is stale, answer.text
        assert key not in answer.text and "edit_key" not in answer.text, answer.request.url
    assert anonymous.get(f"/v1/tables/{tid}").json()["view_id"] == view
    # The database keeps the key's SHA-256 only.
    engine = sa.create_engine(db_url)
    with engine.connect() as conn:
        row = conn.execute(sa.text("SELECT * FROM score_tables WHERE id = :id"), {"id": tid}).mappings().one()
    engine.dispose()
    assert row["edit_key_hash"] == hashlib.sha256(key.encode()).hexdigest()
    assert not any(key in str(value) for value in row.values())


def test_a_view_id_reads_the_table_and_its_history_but_cannot_write(client, anonymous, table):
    tid, view = table["id"], table["view_id"]
    assert is_view_id(view) and tid not in view
    by_id = anonymous.get(f"/v1/tables/{tid}").json()
    shown = anonymous.get(f"/v1/views/{view}")
    assert shown.status_code == 200 and shown.json() == {k: v for k, v in by_id.items() if k != "id"}
    rounds = anonymous.get(f"/v1/views/{view}/rounds")
    assert rounds.json() == anonymous.get(f"/v1/tables/{tid}/rounds").json() and len(rounds.json()["rounds"]) == 1
    csv = anonymous.get(f"/v1/views/{view}/export?format=csv")
    assert csv.text == anonymous.get(f"/v1/tables/{tid}/export?format=csv").text
    assert view in csv.headers["Content-Disposition"]
    exported = anonymous.get(f"/v1/views/{view}/export?format=json")
    assert "id" not in exported.json()["table"] and exported.json()["rounds"][0]["number"] == 1
    paid = anonymous.get(f"/v1/views/{view}/payments?per_point=0.5")
    assert paid.status_code == 200 and paid.json() == anonymous.get(f"/v1/tables/{tid}/payments?per_point=0.5").json()
    assert paid.json()["payments"]  # one round was played: somebody pays
    for answer in (shown, rounds, csv, exported, paid):
        assert tid not in answer.text and tid not in str(answer.headers)
    # The view id names no table to write: not as the table id, not as a key, and the view has no write route.
    assert anonymous.post(f"/v1/tables/{view}/rounds", json=ROUND, headers=bearer(view)).status_code == 404
    assert anonymous.delete(f"/v1/tables/{tid}", headers=bearer(view)).status_code == 403
    for method in ("POST", "PUT", "DELETE"):
        assert anonymous.request(method, f"/v1/views/{view}").status_code == 405
        assert anonymous.request(method, f"/v1/views/{view}/rounds").status_code == 405
    page = anonymous.get(f"/t/{view}")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    for unknown in ("AAAAAAAAAAAAAAAAAAAAAA", tid, "x" * 300, "%00"):
        r = anonymous.get(f"/v1/views/{unknown}")
        assert r.status_code == 404 and r.json()["error"]["code"] == "table_not_found", unknown
        assert anonymous.get(f"/v1/views/{unknown}/rounds").json()["error"]["code"] == "table_not_found"


def test_the_list_of_every_table_needs_the_admin_key(client, anonymous, table):
    none = anonymous.get("/v1/tables")
    assert none.status_code == 401 and none.json()["error"]["code"] == "key_required"
    assert none.headers["WWW-Authenticate"] == "Bearer"
    for wrong in ("nope", table["edit_key"]):
        r = anonymous.get("/v1/tables", headers=bearer(wrong))
        assert r.status_code == 403 and r.json()["error"]["code"] == "wrong_key"
    listed = anonymous.get("/v1/tables", headers=ADMIN)
    assert listed.status_code == 200 and [t["id"] for t in listed.json()["tables"]] == [table["id"]]
    assert listed.json()["tables"][0]["view_id"] == table["view_id"]


@pytest.mark.parametrize("query", ["offset=9223372036854775808", "offset=1000000001", "limit=9223372036854775808",
                                   "offset=-1", "limit=101"])
def test_absurd_pages_are_422(client, query):
    r = client.get(f"/v1/tables?{query}", headers=ADMIN)
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"
    assert client.get(f"/v1/tables?{query}").status_code == 401  # the key is asked for first


def test_without_an_admin_key_configured_nobody_lists(sqlite_url):
    app = create_app(model_path="/nonexistent/model.onnx", database=sqlite_url, settings=Settings())
    with TestClient(app) as c:
        for headers in (ADMIN, bearer(""), bearer("None")):
            r = c.get("/v1/tables", headers=headers)
            assert r.status_code in (401, 403) and r.json()["error"]["code"] in ("key_required", "wrong_key")
        r = c.get("/v1/tables", headers=ADMIN)
        assert r.status_code == 403 and "no admin key is configured" in r.json()["error"]["message"]
        assert c.put("/v1/profiles/home", json={"rules": "gy-normal"}, headers=ADMIN).status_code == 403
    app.state.tables.close()


def test_saving_a_house_profile_needs_the_admin_key_reading_does_not(client, anonymous):
    body = {"rules": {"preset": "gy-normal", "base": 2}}
    assert anonymous.put("/v1/profiles/home", json=body).status_code == 401
    assert anonymous.put("/v1/profiles/home", json=body, headers=bearer("nope")).status_code == 403
    assert anonymous.put("/v1/profiles/home", json={"rules": 7}).status_code == 401  # before validation
    assert anonymous.get("/v1/profiles").json() == {"profiles": []}  # nothing saved
    saved = anonymous.put("/v1/profiles/home", json=body, headers=ADMIN)
    assert saved.status_code == 200 and saved.json()["rules"] == body["rules"]
    assert anonymous.get("/v1/profiles/home").json()["rules"] == body["rules"]
    assert [p["name"] for p in anonymous.get("/v1/profiles").json()["profiles"]] == ["home"]


def test_error_codes_name_the_thing(client):
    r = client.post("/v1/tables", json={"name": "x", "players": ["Ann", "Bo", "Ann", "Di"]})
    assert r.status_code == 422 and r.json()["error"]["code"] == "duplicate_players"
    # Refused by the store (the schema lets them through): named as a profile, not as a round (invalid_round).
    for body in ({}, {"rules": "gy-normal", "table": "0" * 12}):
        r = client.put("/v1/profiles/home", json=body, headers=ADMIN)
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_profile", r.text
    r = client.put("/v1/profiles/" + "n" * 61, json={"rules": "gy-normal"}, headers=ADMIN)
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_profile"


def test_the_admin_key_comes_from_the_environment_or_the_serve_flag(monkeypatch):
    assert Settings.from_env({"ZHUOJI_ADMIN_KEY": "secret"}).admin_key == "secret"
    assert Settings.from_env({}).admin_key is None and Settings.from_env({"ZHUOJI_ADMIN_KEY": ""}).admin_key is None
    settings = Settings.from_env({"ZHUOJI_ADMIN_KEY": "secret"})
    assert Settings.from_env(settings.env()).admin_key == "secret"  # worker processes get it
    assert "secret" not in repr(settings)
    served = []
    monkeypatch.setattr("api.service.server.serve", lambda s, _level: served.append(s))
    monkeypatch.setenv("ZHUOJI_ADMIN_KEY", "from env")
    assert main(["serve", "--admin-key", "from flag"]) == 0 and main(["serve"]) == 0
    assert [s.admin_key for s in served] == ["from flag", "from env"]


# --------------------------------------------------------------------------------------- migration 0004


def test_tables_stored_before_get_a_view_id_and_a_key_nobody_knows(db_url, capsys):
    store = TableStore.open(db_url)
    made = [store.create_table(f"T{i}", NAMES) for i in range(3)]
    for keyed in made[:2]:
        store.add_round(keyed.table.id, entered(win_round(1)), 1, idempotency_key="phone-1")
    before = [store.get_table(k.table.id) for k in made]
    downgrade(store.engine, "0003")  # the schema as the release before left it
    columns = {c["name"] for c in sa.inspect(store.engine).get_columns("score_tables")}
    assert "edit_key_hash" not in columns and "view_id" not in columns
    with store.engine.begin() as conn:  # answers kept for retries then had no view id
        for key_row in conn.execute(sa.select(idempotency_keys)).all():
            old = {**key_row.response, "table": {k: v for k, v in key_row.response["table"].items() if k != "view_id"}}
            conn.execute(idempotency_keys.update().where(idempotency_keys.c.table_id == key_row.table_id)
                         .values(response=old))
    store.close()

    store = TableStore.open(db_url)  # upgrades
    try:
        tables = [store.get_table(k.table.id) for k in made]
        assert [len(store.list_rounds(t.id)) for t in tables] == [1, 1, 0]  # no round lost to the upgrade
        assert [(t.totals, t.version) for t in tables] == [(t.totals, t.version) for t in before]
        views = [t.view_id for t in tables]
        assert all(is_view_id(v) for v in views) and len(set(views)) == 3
        assert not set(views) & {k.table.view_id for k in made}  # new ids, not the ones before the downgrade
        assert [store.get_view(v).id for v in views] == [t.id for t in tables]
        for keyed in made:  # the key handed out before is gone with its hash; nobody knows the new one
            with pytest.raises(PermissionError):
                store.check_edit_key(keyed.table.id, keyed.edit_key)
        retried, replayed = store.add_round(tables[0].id, entered(win_round(1)), 1, idempotency_key="phone-1")
        assert replayed and retried.table.view_id == tables[0].view_id and retried.number == 1
        issued = store.issue_edit_key(tables[0].id)
        store.check_edit_key(tables[0].id, issued.edit_key)
        assert issued.table.version == tables[0].version  # a new key is not a change of the table
    finally:
        store.close()
    # The owner gets a working key from the command line.
    assert main(["table", "key", tables[1].id, "--db", db_url, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    app = create_app(model_path="/nonexistent/model.onnx", database=db_url)
    with TestClient(app) as c:
        r = c.post(f"/v1/tables/{tables[1].id}/rounds", json={"round": win_round(2), "expected_version": 2},
                   headers=bearer(answer["edit_key"]))
        assert r.status_code == 201, r.text
    app.state.tables.close()


# --------------------------------------------------------------------------------------- the command line


def _cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_cli_hands_out_keys_and_links(capsys, sqlite_url):
    code, out = _cli(capsys, "table", "new", "Friday", "--players", ",".join(NAMES), "--db", sqlite_url, "--json")
    assert code == 0
    created = json.loads(out)
    app = create_app(model_path="/nonexistent/model.onnx", database=sqlite_url)
    with TestClient(app) as c:
        over_http = c.post("/v1/tables", json={"name": "Friday", "players": NAMES}).json()
        # The same answer as POST /v1/tables: the same keys, and it is a valid TableCreated.
        assert set(created) == set(over_http)
        assert TableCreated.model_validate(created).model_dump(mode="json") == created
        tid, key = created["id"], created["edit_key"]
        assert created["edit_url"] == f"/#table={tid}&key={key}" and created["view_url"] == f"/t/{created['view_id']}"
        assert c.delete(f"/v1/tables/{tid}/rounds/1?expected_version=1", headers=bearer(key)).status_code == 404

        code, out = _cli(capsys, "table", "key", tid, "--db", sqlite_url, "--base-url", "http://192.168.1.20:8000/")
        assert code == 0 and "old one no longer writes" in out
        new_key = next(line.split()[2] for line in out.splitlines() if line.startswith("edit key:"))
        assert f"edit link: http://192.168.1.20:8000/#table={tid}&key={new_key}" in out
        assert f"view link: http://192.168.1.20:8000/t/{created['view_id']}" in out
        round_ = {"round": win_round(1), "expected_version": 1}
        assert c.post(f"/v1/tables/{tid}/rounds", json=round_, headers=bearer(key)).status_code == 403
        assert c.post(f"/v1/tables/{tid}/rounds", json=round_, headers=bearer(new_key)).status_code == 201
    app.state.tables.close()

    code, out = _cli(capsys, "table", "show", tid, "--db", sqlite_url)
    assert code == 0 and f"view link: /t/{created['view_id']}" in out and new_key not in out
    code, out = _cli(capsys, "table", "show", tid, "--db", sqlite_url, "--json")
    assert json.loads(out)["table"]["view_id"] == created["view_id"] and "edit_key" not in out
    code, out = _cli(capsys, "table", "new", "Sat", "--players", ",".join(NAMES), "--db", sqlite_url)
    assert code == 0 and "edit key: " in out and "edit link: /#table=" in out and "view link: /t/" in out
    assert main(["table", "key", "0123456789ab", "--db", sqlite_url]) == 2
    assert main(["table", "list", "--db", sqlite_url, "--offset", "9223372036854775808"]) == 2



def test_no_key_or_view_id_begins_like_a_command_line_option():
    """A key beginning with "-" (one in 64 of URL-safe tokens) would be taken for an option after ``--key``."""
    keys = [new_edit_key() for _ in range(2000)]
    views = [new_view_id() for _ in range(2000)]
    assert not [k for k in keys + views if k.startswith("-")]
    assert {len(k) for k in keys} == {43} and all(is_view_id(v) for v in views)
    assert len(set(keys)) == len(keys)
