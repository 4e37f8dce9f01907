"""Fuzzing the JSON endpoints: arbitrary JSON and near-valid payloads never get a 5xx.

Bounded: a few hundred examples per endpoint, no deadline per example, well under 30 s in all.
"""

from __future__ import annotations

import json
import math

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.rules import Rules
from scoring.tiles import TILES

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
PATHS = ["/v1/hand", "/v1/settle", "/v1/chajiao"]
PRESETS = ["gy-normal", "gy-reduced", "liupanshui"]


@pytest.fixture(scope="module")
def client(text_client):
    return text_client  # text endpoints only: no model needed


scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=True, allow_infinity=True)
           | st.text(max_size=12))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=16)

# Tiles and MPSZ text: mostly valid, sometimes not (honors, rank 0, stray letters, wrong counts).
tile = st.sampled_from(TILES) | st.sampled_from(["0m", "10p", "1z", "5x", "", "back", " 5p"]) | st.text(max_size=3)


def mpsz(tiles: list[str]) -> str:
    return "".join(tiles)


hand13 = st.lists(st.sampled_from(TILES), min_size=13, max_size=13).map(mpsz)
hand_text = hand13 | st.lists(st.sampled_from(TILES), max_size=16).map(mpsz) | st.text(alphabet="0123456789mpsz ",
                                                                                           max_size=24)
meld = st.fixed_dictionaries(
    {"type": st.sampled_from(["pong", "kong", "added_kong", "concealed_kong", "chow"]), "tile": tile},
    optional={"from": st.integers(-1, 5) | json_values, "late": st.booleans() | json_values})
rule_keys = [f.name for f in Rules.__dataclass_fields__.values() if f.name != "preset"]
rules = st.sampled_from(PRESETS) | st.text(max_size=10) | st.fixed_dictionaries(
    {"preset": st.sampled_from(PRESETS)},
    optional={k: st.booleans() | st.integers(-3, 30) | st.sampled_from(["void", "max", "2/3/1", "x"]) | json_values
              for k in rule_keys[:12]})
flag = st.booleans() | json_values

hand_payload = st.fixed_dictionaries(
    {"concealed": hand_text},
    optional={"win_tile": tile | st.none(), "melds": st.lists(meld, max_size=5), "self_drawn": flag,
              "kong_draw": st.booleans(), "hot_discard": st.booleans(), "robbed_kong": st.booleans(),
              "bao_ting": st.booleans(), "discarder_bao_ting": st.booleans(), "rules": rules,
              "flipped": tile | st.none(), "seen": hand_text})
player = st.fixed_dictionaries({"concealed": hand_text | st.lists(tile, max_size=14)},
                               optional={"melds": st.lists(meld, max_size=4), "river": hand_text | st.lists(tile, max_size=8),
                                         "bao_ting": flag})
seat = st.integers(-1, 4)
outcome = st.one_of(
    st.fixed_dictionaries({"type": st.just("win"), "winners": st.lists(seat, max_size=4), "win_tile": tile},
                          optional={"self_drawn": flag, "discarder": seat | st.none(), "kong_draw": st.booleans(),
                                    "hot_discard": st.booleans(), "robbed_kong": st.booleans()}),
    st.just({"type": "draw"}),
    st.fixed_dictionaries({"type": st.just("pass_lock_penalty"), "player": seat, "win_tile": tile}),
    st.fixed_dictionaries({"type": st.just("false_win"), "player": seat}),
    json_values)
WALL = [t for t in TILES for _ in range(4)]


@st.composite
def dealt(draw, players: int) -> list[str]:
    """13 tiles for each of ``players`` seats (and one more tile) from a shuffled wall: legal hands, mostly."""
    wall = draw(st.permutations(WALL))
    return [mpsz(wall[13 * k:13 * k + 13]) for k in range(players)] + [wall[13 * players]]


@st.composite
def mutated(draw, base: dict) -> dict:
    """``base`` with up to two of its values replaced by junk or deleted."""
    value = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(0, 2))):
        parent, key = value, None
        path = []
        node = value
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
            parent, node = node, node[key]
            path.append(key)
        if key is None:
            continue
        if draw(st.booleans()):
            parent[key] = draw(json_values | tile | hand_text | st.integers(-1, 5) | st.booleans())
        elif isinstance(parent, dict):
            del parent[key]
    return value


@st.composite
def table(draw) -> dict:
    """A table state from a dealt wall: a draw, or a win (self-drawn or on a discard) by one seat."""
    hands = draw(dealt(4))
    state: dict = {"players": [{"concealed": h} for h in hands[:4]], "rules": draw(st.sampled_from(PRESETS)),
                   "dealer": draw(st.integers(0, 3))}
    if draw(st.booleans()):
        state["outcome"] = {"type": "draw"}
    else:
        winner = draw(st.integers(0, 3))
        self_drawn = draw(st.booleans())
        state["outcome"] = {"type": "win", "winners": [winner], "win_tile": hands[4], "self_drawn": self_drawn}
        if not self_drawn:
            state["outcome"]["discarder"] = (winner + 1) % 4
        state["flipped"] = draw(st.sampled_from(TILES) | st.none())
    return draw(mutated(state))


@st.composite
def draw_check(draw) -> dict:
    n = draw(st.integers(2, 4))
    hands = draw(dealt(n))
    seats = draw(st.permutations(range(4)))
    payload = {"players": [{"seat": seats[k], "concealed": hands[k]} for k in range(n)],
               "rules": draw(st.sampled_from(PRESETS))}
    return draw(mutated(payload))


settle_payload = table() | st.fixed_dictionaries(
    {"players": st.lists(player, min_size=3, max_size=5), "outcome": outcome},
    optional={"rules": rules, "dealer": seat | json_values, "streak": st.integers(-1, 2000), "base": st.integers(-1, 10),
              "flipped": tile | st.none(), "first_1s": st.fixed_dictionaries({"discarder": seat},
                                                                             optional={"claimed_by": seat | st.none()})})
chajiao_payload = draw_check() | st.fixed_dictionaries(
    {"players": st.lists(st.fixed_dictionaries({"concealed": hand_text},
                                               optional={"seat": seat | json_values, "melds": st.lists(meld, max_size=4),
                                                         "bao_ting": flag}), max_size=5)},
    optional={"rules": rules, "dealer": seat, "streak": st.integers(-1, 2000)})


def post(client: TestClient, path: str, value: object) -> None:
    # json.dumps writes NaN/Infinity, which Python's parser (and so the server) accepts: they are fuzzed too.
    body = json.dumps(value, allow_nan=True)
    response = client.post(path, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code < 500, (path, body, response.text)
    if response.status_code >= 400:
        error = response.json()["error"]
        assert error["code"] and error["message"]


@FUZZ
@given(path=st.sampled_from(PATHS), value=json_values)
def test_arbitrary_json_never_5xx(client, path, value):
    post(client, path, value)


@pytest.mark.slow
@FUZZ
@given(value=hand_payload)
def test_near_valid_hands_never_5xx(client, value):
    post(client, "/v1/hand", value)


@pytest.mark.slow
@FUZZ
@given(value=settle_payload)
def test_near_valid_tables_never_5xx(client, value):
    post(client, "/v1/settle", value)


@pytest.mark.slow
@FUZZ
@given(value=chajiao_payload)
def test_near_valid_draw_checks_never_5xx(client, value):
    post(client, "/v1/chajiao", value)


@pytest.mark.parametrize(("path", "value"), [
    ("/v1/settle", {"players": [], "outcome": {"type": "draw"}, "streak": math.inf}),
    # int(inf) raises OverflowError inside the engine's rule parser: the schema must stop it before.
    ("/v1/hand", {"concealed": "123m", "rules": {"preset": "gy-normal", "dou_values": [math.inf, 1, 1]}}),
    ("/v1/chajiao", {"players": [{"concealed": "123m"}, {"concealed": "456m"}], "dealer": math.nan}),
])
def test_non_finite_numbers_are_refused(client, path, value):
    r = client.post(path, content=json.dumps(value), headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.text
