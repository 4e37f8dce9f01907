"""Hardening of the service (issue 51): the Host allow-list, write quotas, database failures without internals,
security headers, and documentation pages that load nothing from a third party."""

from __future__ import annotations

import socket

import pytest
from fastapi.testclient import TestClient

from api.service.app import create_app
from pipeline.limits import Limits
from pipeline.settings import Settings
from tests.tables.support import draw_round

NO_MODEL = "/nonexistent/model.onnx"
PLAYERS = {"name": "Friday", "players": ["East", "South", "West", "North"]}


def key_headers(table: dict) -> dict[str, str]:
    """A write to ``table`` carries its edit key, once tables have keys."""
    return {"Authorization": f"Bearer {table['edit_key']}"} if "edit_key" in table else {}


def _app(tmp_path, **settings) -> object:
    base = Settings(model=NO_MODEL, database_url=f"sqlite:///{tmp_path / 'tables.db'}")
    return create_app(settings=base.replace(**settings))


# ------------------------------------------------------------------------------------- Host allow-list


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "localhost.evil.example", "127.0.0.1.nip.io",
                                  "", "[::1"])
def test_a_foreign_host_name_gets_400_json(tmp_path, host):
    with TestClient(_app(tmp_path), base_url="http://localhost") as c:
        r = c.get("/healthz", headers={"Host": host})
        assert r.status_code == 400
        assert r.json()["error"]["code"] == "invalid_host"
        assert r.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "LOCALHOST", "app.localhost:8000", "127.0.0.1:8000",
                                  "[::1]:8000", "192.168.1.20:8000", socket.gethostname(),
                                  f"{socket.gethostname()}.local:8000"])
def test_the_servers_own_names_and_addresses_are_answered(tmp_path, host):
    with TestClient(_app(tmp_path), base_url="http://localhost") as c:
        assert c.get("/healthz", headers={"Host": host}).status_code == 200


def test_allowed_hosts_from_the_settings_and_the_bound_host(tmp_path):
    app = _app(tmp_path, host="scorer.home.arpa", allowed_hosts=("tables.example.org", "*.example.net"))
    with TestClient(app, base_url="http://localhost") as c:
        for host in ("tables.example.org", "a.example.net:443", "scorer.home.arpa:8000"):
            assert c.get("/healthz", headers={"Host": host}).status_code == 200, host
        assert c.get("/healthz", headers={"Host": "example.org"}).status_code == 400
    with TestClient(_app(tmp_path, allowed_hosts=("*",)), base_url="http://localhost") as c:
        assert c.get("/healthz", headers={"Host": "anything.example"}).status_code == 200


def test_allowed_hosts_come_from_the_environment_and_the_flag():
    s = Settings.from_env({"ZHUOJI_ALLOWED_HOSTS": "a.example, b.example"}, allowed_hosts=["c.example"])
    assert s.allowed_hosts == ("a.example", "b.example", "c.example")
    assert Settings.from_env(s.env()) == s


# ------------------------------------------------------------------------------------- quotas


def test_table_creation_is_bounded_per_client_address(tmp_path):
    app = _app(tmp_path, limits=Limits(tables_per_hour=2))
    with TestClient(app, base_url="http://localhost", client=("203.0.113.7", 5000)) as c:
        assert [c.post("/v1/tables", json=PLAYERS).status_code for _ in range(2)] == [201, 201]
        r = c.post("/v1/tables", json=PLAYERS)
        assert r.status_code == 429 and r.json()["error"]["code"] == "too_many_requests"
        assert 3000 < int(r.headers["Retry-After"]) <= 3600  # an hour's window that has just begun
        assert c.get("/v1/tables/unknown").status_code == 404  # reading is not counted
    with TestClient(app, base_url="http://localhost", client=("203.0.113.8", 5000)) as other:
        assert other.post("/v1/tables", json=PLAYERS).status_code == 201  # another address has its own quota


def test_round_writes_are_bounded_per_client_address(tmp_path):
    app = _app(tmp_path, limits=Limits(round_writes_per_minute=3))
    with TestClient(app, base_url="http://localhost", client=("203.0.113.9", 5000)) as c:
        table = c.post("/v1/tables", json=PLAYERS).json()
        rounds, auth = f"/v1/tables/{table['id']}/rounds", key_headers(table)
        answers = [c.post(rounds, json={"round": draw_round(), "expected_version": v}, headers=auth).status_code
                   for v in (1, 2, 3, 4)]
        assert answers == [201, 201, 201, 429], answers
        r = c.delete(f"{rounds}/3", params={"expected_version": 4}, headers=auth)  # an undo is a round write too
        assert r.status_code == 429 and 0 < int(r.headers["Retry-After"]) <= 60
        assert c.get(f"/v1/tables/{table['id']}").json()["rounds"] == 3  # the refused writes wrote nothing


def test_the_openapi_description_names_the_429(tmp_path):
    with TestClient(_app(tmp_path), base_url="http://localhost") as c:
        paths = c.get("/openapi.json").json()["paths"]
    assert "429" in paths["/v1/tables"]["post"]["responses"]
    assert "429" in paths["/v1/tables/{table_id}/rounds"]["post"]["responses"]
    assert "429" not in paths["/v1/tables"]["get"]["responses"]
    assert "429" not in paths["/v1/hand"]["post"]["responses"]


# ------------------------------------------------------------------------------------- the database


def test_a_database_server_that_cannot_be_reached_answers_503_without_its_address(tmp_path):
    url = "postgresql+psycopg://zhuoji:hunter2@/tables?host=/nonexistent/socket-dir"
    with TestClient(_app(tmp_path, database_url=url), base_url="http://localhost") as c:
        r = c.post("/v1/tables", json=PLAYERS)
        assert r.status_code == 503 and r.json()["error"]["code"] == "database_unavailable"
        assert "Retry-After" in r.headers
        for secret in ("nonexistent", "socket", "hunter2", "zhuoji:", "postgresql", "tables?"):
            assert secret not in r.text, secret
        ready = c.get("/readyz")
        assert ready.status_code == 503 and not ready.json()["checks"]["database"]["ok"]
        assert "nonexistent" not in ready.text


@pytest.mark.parametrize("layout", ["file_as_folder", "folder_as_file", "not_a_database"])
def test_an_unusable_sqlite_path_answers_503_and_is_not_ready(tmp_path, layout):
    if layout == "file_as_folder":
        (tmp_path / "data").write_text("a file where the folder should be")
        path = tmp_path / "data" / "zhuoji" / "tables.db"
    elif layout == "folder_as_file":
        path = tmp_path / "tables.db"
        path.mkdir()
    else:
        path = tmp_path / "tables.db"
        path.write_bytes(b"this is no SQLite database, only some text that is long enough" * 20)
    with TestClient(_app(tmp_path, database_url=f"sqlite:///{path}"), base_url="http://localhost") as c:
        r = c.post("/v1/tables", json=PLAYERS)
        assert r.status_code == 503 and r.json()["error"]["code"] == "database_unavailable", r.text
        assert str(tmp_path) not in r.text
        if layout != "not_a_database":  # a file's contents are only known by opening it
            ready = c.get("/readyz")
            assert ready.status_code == 503 and not ready.json()["checks"]["database"]["ok"]
            assert str(tmp_path) not in ready.text
        assert c.app.state.internal_errors == 0


def test_a_usable_sqlite_path_is_ready_without_being_created(tmp_path):
    path = tmp_path / "new" / "folder" / "tables.db"
    with TestClient(_app(tmp_path, database_url=f"sqlite:///{path}"), base_url="http://localhost") as c:
        assert c.get("/readyz").json()["checks"]["database"]["ok"]
        assert not (tmp_path / "new").exists()
        assert c.post("/v1/tables", json=PLAYERS).status_code == 201


# ------------------------------------------------------------------------------------- headers, documentation


def test_the_page_and_the_api_carry_security_headers(tmp_path):
    with TestClient(_app(tmp_path), base_url="http://localhost") as c:
        for path in ("/", "/t/abc", "/web/app.js", "/v1/rules", "/healthz", "/nope"):
            r = c.get(path)
            assert r.headers["X-Content-Type-Options"] == "nosniff", path
            assert r.headers["X-Frame-Options"] == "DENY", path
            assert r.headers["Referrer-Policy"] == "no-referrer", path
        policy = c.get("/").headers["Content-Security-Policy"]
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
        assert directives["default-src"] == "'self'" and directives["frame-ancestors"] == "'none'"
        assert "unsafe-inline" not in directives.get("script-src", "") and "script-src" not in directives
        assert "<script>" not in c.get("/").text  # the page has no inline script for the policy to forbid


def test_docs_and_redoc_load_their_scripts_from_the_service(tmp_path):
    with TestClient(_app(tmp_path), base_url="http://localhost") as c:
        for page in ("/docs", "/redoc"):
            html = c.get(page).text
            assert "cdn.jsdelivr.net" not in html and "https://" not in html.replace("https://fonts", ""), page
            scripts = [part.split('"')[0] for part in html.split('src="')[1:]]
            assert scripts and all(src.startswith("/") for src in scripts), scripts
            for src in scripts:
                assert c.get(src).status_code == 200, src
            assert c.get(page).headers["Content-Security-Policy"].startswith("default-src 'self'")


def test_a_405_names_every_method_of_the_path(tmp_path):
    with TestClient(_app(tmp_path), base_url="http://localhost") as c:
        for path, allow in (("/v1/tables", "GET, POST"), ("/v1/tables/abc/rounds/1", "DELETE, PUT"),
                            ("/v1/hand", "POST"), ("/healthz", "GET")):
            r = c.request("PATCH", path)
            assert r.status_code == 405 and r.headers["Allow"] == allow, (path, r.headers.get("Allow"))
            assert r.json()["error"]["code"] == "method_not_allowed"
