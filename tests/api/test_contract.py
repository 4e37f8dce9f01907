"""The OpenAPI description against the service, fuzzed by schemathesis on a small budget: no 500, every status
answered is documented, every answer matches its documented schema and headers, invalid input is refused, a 405
names the methods the path has.

Not checked: ``positive_data_acceptance`` (a request the schema allows must be accepted). The rules engine refuses
schema-valid input the schema cannot describe, with a documented 422: a hand whose tile counts do not add up
(13 + 1 counting 3 per meld), 5 copies of a tile, 翻鸡 (the flipped chicken) before a win, a round on a table
of other names, ``calibration`` and ``table`` both given.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import positive_data_acceptance

from api.service.app import create_app
from pipeline.limits import Limits
from pipeline.settings import Settings
from tests.api.support import model_path


@pytest.fixture(scope="module")
def contract_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    if model_path() is None:
        pytest.skip("no tile model: without one /readyz and the photo routes answer 503 by design")
    folder = tmp_path_factory.mktemp("contract")
    app = create_app(settings=Settings(model=model_path(), database_url=f"sqlite:///{folder / 'tables.db'}",
                                       allowed_hosts=("testserver",),
                                       limits=Limits(tables_per_hour=10**6, round_writes_per_minute=10**6)))
    with TestClient(app):  # runs the lifespan: the model, the photo runner
        yield app
    assert app.state.internal_errors == 0  # nothing reached the catch-all 500 handler


@pytest.mark.slow
def test_the_service_keeps_its_openapi_contract(contract_app: object) -> None:
    """Every operation of the description, each with up to 24 generated requests, valid and invalid ones."""
    api = schemathesis.openapi.from_asgi("/openapi.json", contract_app)
    failures: list[str] = []
    operations = 0
    for result in api.get_all_operations():
        operation = result.ok()
        operations += 1

        @given(case=st.one_of(operation.as_strategy(mode) for mode in GenerationMode))
        @settings(max_examples=24, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def fuzz(case: schemathesis.Case) -> None:
            case.call_and_validate(excluded_checks=[positive_data_acceptance])

        try:
            fuzz()
        except (Exception, BaseExceptionGroup) as exc:  # schemathesis's failure groups: all reported at once
            failures.append(f"{operation.method.upper()} {operation.path}: {exc}")
    print(f"schemathesis: {operations} operations, {len(failures)} failing")
    assert operations >= 20
    assert not failures, "\n\n".join(failures)


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "abc", path)


def test_every_path_answers_405_with_its_documented_methods(tmp_path):
    app = create_app(settings=Settings(model="/nonexistent/model.onnx", database_url=f"sqlite:///{tmp_path / 't.db'}",
                                       allowed_hosts=("testserver",)))
    with TestClient(app) as c:
        paths = c.get("/openapi.json").json()["paths"]
        for path, operations in paths.items():
            r = c.request("PATCH", _concrete(path))
            documented = {m.upper() for m in operations}
            assert r.status_code == 405 and set(r.headers["Allow"].split(", ")) == documented, (path, r.headers)


def test_every_status_the_layers_answer_is_documented(tmp_path):
    app = create_app(settings=Settings(model="/nonexistent/model.onnx", database_url=f"sqlite:///{tmp_path / 't.db'}",
                                       allowed_hosts=("testserver",)))
    with TestClient(app) as c:
        paths = c.get("/openapi.json").json()["paths"]
        # A JSON body that does not parse: 400 invalid_json, documented on every JSON operation.
        for path, operations in paths.items():
            for method, operation in operations.items():
                content = operation.get("requestBody", {}).get("content", {})
                assert "400" in operation["responses"], (method, path)
                if content:
                    assert {"408", "413"} <= set(operation["responses"]), (method, path)
                if "multipart/form-data" in content:
                    assert {"415", "503"} <= set(operation["responses"]), (method, path)
                if "application/json" in content:
                    r = c.request(method.upper(), _concrete(path), content=b"{not json",
                                  headers={"Content-Type": "application/json"})
                    # 400 invalid_json; 404: no table "abc"; 401/403: a write that needs a key, refused before
                    # its body is read
                    assert r.status_code in (400, 401, 403, 404), (method, path, r.status_code)
                    if r.status_code == 400:
                        assert r.json()["error"]["code"] == "invalid_json", (method, path, r.text)
        for path in ("/v1/read", "/v1/score"):
            assert "404" in paths[path]["post"]["responses"]
