"""Round inputs a table needs beyond tiles and winner, over the API and the CLI on SQLite and PostgreSQL:
a 黄牌 (draw) with hands not shown (``{"not_ready": true}``), and the house-rule round flags ``first_draw``
(天胡/地胡), ``gen_zhuang`` (跟庄) and ``first_8p`` (冲锋鸡 on the first 8p). Each reaches the stored round and
the settlement is the engine's."""

from __future__ import annotations

import copy
import json

import pytest

from api.cli import main
from scoring import settle
from tests.tables.support import draw_round, win_round

NAMES = ["Ann", "Bo", "Cy", "Di"]


def new_table(client, rules="gy-normal"):
    r = client.post("/v1/tables", json={"name": "Friday", "players": NAMES, "rules": rules})
    assert r.status_code == 201, r.text
    return r.json()


def post_round(client, table, round_, version=1):
    return client.post(f"/v1/tables/{table['id']}/rounds", json={"round": round_, "expected_version": version})


def short_draw() -> dict:
    """E1's hands at a draw with the two hands not ready (seats 2, 3) left unshown."""
    r = draw_round()
    r["players"][2] = {"not_ready": True}
    r["players"][3] = {"not_ready": True}
    return r


def test_a_draw_with_hands_not_shown_is_stored_and_totalled_like_the_full_draw(client):
    full, short = new_table(client), new_table(client)
    assert post_round(client, full, draw_round()).status_code == 201
    r = post_round(client, short, short_draw())
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["table"]["totals"] == client.get(f"/v1/tables/{full['id']}").json()["totals"]
    assert [p["ting"] for p in body["settlement"]["players"]] == [True, True, False, False]
    assert body["table"]["totals"][2] < 0 and body["table"]["totals"][3] < 0
    stored = client.get(f"/v1/tables/{short['id']}/rounds").json()["rounds"][0]["round"]
    assert stored["players"][2:] == [{"not_ready": True}, {"not_ready": True}]


@pytest.mark.parametrize("change, fragment", [
    # Bo (seat 1) won: a winner's hand is judged from its tiles, and the table names him.
    (lambda r: r["players"].__setitem__(1, {"not_ready": True}), "Bo won, so his hand is judged from its tiles"),
    (lambda r: r["players"][3].__setitem__("not_ready", True), "either the tiles or not_ready"),
])
def test_a_round_that_cannot_be_settled_is_refused_and_nothing_is_stored(client, change, fragment):
    table = new_table(client)
    round_ = win_round(1)
    change(round_)
    r = post_round(client, table, round_)
    assert r.status_code == 422 and fragment in r.json()["error"]["message"]
    after = client.get(f"/v1/tables/{table['id']}").json()
    assert (after["rounds"], after["version"]) == (0, 1)


def _dihu() -> dict:
    r = win_round(1)  # Bo (not the dealer) self-draws on his first draw: 地胡
    r["outcome"]["first_draw"] = True
    return r


def _gen_zhuang() -> dict:
    return {**short_draw(), "gen_zhuang": True}


def _first_8p() -> dict:
    r = win_round(1)  # Di (not 叫牌) discarded the first 8p; it stays in his river
    r["players"][3]["river"] = "8p"
    r["first_8p"] = {"discarder": 3, "claimed_by": None}
    return r


def _without(round_: dict, key: str) -> dict:
    r = copy.deepcopy(round_)
    if key == "first_draw":
        r["outcome"].pop(key)
    else:
        r.pop(key)
    return r


@pytest.mark.parametrize("rules, round_, key", [
    ({"preset": "gy-normal", "dihu": 23}, _dihu(), "first_draw"),
    ({"preset": "gy-normal", "genzhuang": 4}, _gen_zhuang(), "gen_zhuang"),
    ({"preset": "gy-normal", "wuguji": True, "wuguji_chongfeng": True}, _first_8p(), "first_8p"),
])
def test_house_round_flags_reach_the_stored_round_and_change_the_settlement(client, rules, round_, key):
    table = new_table(client, rules)
    r = post_round(client, table, round_)
    assert r.status_code == 201, r.text
    got = [p["total"] for p in r.json()["settlement"]["players"]]
    engine = settle({**round_, "rules": rules, "dealer": 0, "streak": 1})
    assert got == [p.total for p in engine.players]
    plain = settle({**_without(round_, key), "rules": rules, "dealer": 0, "streak": 1})
    assert got != [p.total for p in plain.players]  # the flag is what changed the money
    assert client.get(f"/v1/tables/{table['id']}/rounds").json()["rounds"][0]["round"] == round_
    # The same flag under rules that do not play it is accepted and pays nothing for it.
    off = new_table(client)
    r = post_round(client, off, round_)
    assert r.status_code == 201
    assert [p["total"] for p in r.json()["settlement"]["players"]] == [
        p.total for p in settle({**_without(round_, key), "dealer": 0, "streak": 1}).players]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_command_line_takes_the_same_short_draw_and_refuses_the_same(capsys, db_url, tmp_path):
    code, out, _ = run(capsys, "table", "new", "Friday", "--players", ",".join(NAMES), "--db", db_url, "--json")
    tid = json.loads(out)["id"]
    good, bad = tmp_path / "draw.json", tmp_path / "win.json"
    good.write_text(json.dumps(short_draw()))
    win = win_round(1)
    win["players"][1] = {"not_ready": True}
    bad.write_text(json.dumps(win))
    code, _, err = run(capsys, "table", "round", tid, str(bad), "--db", db_url)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Bo won, so his hand is judged" in err
    code, out, _ = run(capsys, "table", "round", tid, str(good), "--db", db_url, "--json")
    assert code == 0
    answer = json.loads(out)
    assert answer["number"] == 1 and answer["table"]["version"] == 2
    assert answer["table"]["totals"] == [p.total for p in settle({**draw_round(), "dealer": 0}).players]
