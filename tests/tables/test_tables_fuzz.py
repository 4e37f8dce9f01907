"""Fuzzing the table endpoints on both databases: arbitrary JSON, near-valid rounds and odd ids never get a 5xx,
and nothing that is refused changes the table."""

from __future__ import annotations

import copy
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.tables.support import ADMIN, draw_round, win_round

FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
NAMES = ["Ann", "Bo", "Cy", "Di"]

scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
           | st.text(max_size=12))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=16)


@st.composite
def near_rounds(draw):
    """A valid round with one part replaced by something else."""
    r = copy.deepcopy(draw(st.sampled_from([win_round(1), win_round(2), draw_round()])))
    where = draw(st.sampled_from(["outcome", "flipped", "first_1s", "player", "concealed", "extra", "winners"]))
    value = draw(json_values)
    if where == "player":
        r["players"][draw(st.integers(0, 3))] = value
    elif where == "concealed":
        r["players"][draw(st.integers(0, 3))]["concealed"] = value
    elif where == "winners" and r["outcome"]["type"] == "win":
        r["outcome"]["winners"] = value
    elif where == "extra":
        r[draw(st.text(max_size=6))] = value
    else:
        r[where] = value
    return r


@FUZZ
@given(body=json_values | near_rounds().map(lambda r: {"round": r, "expected_version": 2}),
       key=st.none() | st.text(max_size=30))
@pytest.mark.slow
def test_round_posts_never_5xx(client, body, key):
    tid = client.post("/v1/tables", json={"name": "fuzz", "players": NAMES}).json()["id"]
    client.post(f"/v1/tables/{tid}/rounds", json={"round": win_round(1), "expected_version": 1})
    before = client.get(f"/v1/tables/{tid}").json()
    headers = {"Idempotency-Key": key} if key and key.isascii() and key.isprintable() else {}
    r = client.post(f"/v1/tables/{tid}/rounds", json=body, headers=headers)
    assert r.status_code < 500, r.text
    if r.status_code != 201:  # 201: a near-valid round the engine accepts
        assert client.get(f"/v1/tables/{tid}").json() == before
    r = client.put(f"/v1/tables/{tid}/rounds/1", json=body)
    assert r.status_code < 500, r.text


@FUZZ
@given(name=st.text(max_size=120), players=json_values, rules=json_values, dealer=json_values,
       table_id=st.text(max_size=20))
@pytest.mark.slow
def test_tables_and_ids_never_5xx(client, name, players, rules, dealer, table_id):
    r = client.post("/v1/tables", json={"name": name, "players": players, "rules": rules, "dealer": dealer})
    assert r.status_code in (201, 422), r.text
    segment = quote(table_id, safe="")
    for path in (f"/v1/tables/{segment}", f"/v1/tables/{segment}/rounds", f"/v1/profiles/{segment}"):
        r = client.get(path, headers=ADMIN)  # an empty segment is the list of every table
        assert r.status_code in (200, 404, 405, 422), (path, r.text)
    r = client.put(f"/v1/profiles/{segment}", json={"rules": rules}, headers=ADMIN)
    assert r.status_code < 500, r.text
