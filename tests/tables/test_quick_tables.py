"""Issue 52 over the API and the CLI: quick rounds at a table, players named in explanations and errors,
结账 payments, finishing a table, and the summary each round record carries for the history."""

from __future__ import annotations

import json

import pytest

from api.cli import main
from tests.scoring.settle_tables import EXAMPLES
from tests.tables.support import draw_round, win_round

NAMES = ["Ann", "Bo", "Cy", "Di"]
E1_TOTALS = [2, 10, -8, -4]  # docs/rules.md#examples E1 (Bo, seat 1, self-draws a 平胡 on 5p)


def new_table(client, players=NAMES):
    r = client.post("/v1/tables", json={"name": "Friday", "players": players, "rules": "gy-normal"})
    assert r.status_code == 201, r.text
    return r.json()


def post_round(client, table, round_, version):
    return client.post(f"/v1/tables/{table['id']}/rounds", json={"round": round_, "expected_version": version})


def quick_e1() -> dict:
    """E1 with Bo's hand shown and the others told: Ann ready (her 56m… waits on 4m/7m) holding the 翻鸡 5m
    (F = 4m), Cy not ready with the 冲锋鸡 1s in his river, Di not ready."""
    r = win_round(1)
    r["players"][0] = {"ready": True, "holds": "5m"}
    r["players"][2] = {"not_ready": True, "river": "1s"}
    r["players"][3] = {"not_ready": True, "holds": "1s1s"}
    return r


def e2_round() -> dict:
    """docs/rules.md#examples E2: Cy (seat 2) wins a 大对子 on Di's (seat 3) discarded 3p."""
    return {k: v for k, v in EXAMPLES["E2"].items() if k not in ("rules", "dealer", "streak")}


def test_a_quick_round_is_stored_and_totalled_as_the_full_round_with_names(client):
    full, quick = new_table(client), new_table(client)
    assert post_round(client, full, win_round(1), 1).status_code == 201
    r = post_round(client, quick, quick_e1(), 1)
    assert r.status_code == 201, r.text
    assert r.json()["table"]["totals"] == E1_TOTALS == client.get(f"/v1/tables/{full['id']}").json()["totals"]
    explanation = r.json()["settlement"]["explanation"]
    assert "Ann: ready (叫牌), as told; holds 5m" in explanation
    assert "Cy: not ready (not 叫牌), as told; holds no chicken tiles" in explanation
    assert not any("P0" in line or "P1" in line for line in explanation)
    assert any(t["reason"].startswith("自摸 (self-drawn win): Ann pays Bo") for t in r.json()["settlement"]["ledger"])


def test_errors_at_a_table_name_the_players(client):
    table = new_table(client)
    round_ = win_round(1)
    round_["players"][1]["concealed"] = ""  # the second player: Bo
    r = post_round(client, table, round_, 1)
    assert r.status_code == 422
    assert r.json()["error"]["message"].startswith("round 1: Bo has 0 concealed tiles")


def test_settle_names_players_only_when_given_names(client):
    state = {**quick_e1(), "rules": "gy-normal"}
    bare = client.post("/v1/settle", json=state).json()
    named = client.post("/v1/settle", json={**state, "names": ["安", "Bo", "Cy", "Di"]}).json()
    assert "P0: ready (叫牌), as told; holds 5m" in bare["explanation"]
    assert "安: ready (叫牌), as told; holds 5m" in named["explanation"]
    assert [p["total"] for p in named["players"]] == [p["total"] for p in bare["players"]] == E1_TOTALS
    state["players"][2] = {"concealed": "123m"}
    r = client.post("/v1/settle", json={**state, "names": NAMES})
    assert r.status_code == 422 and r.json()["error"]["message"].startswith("Cy has 3 concealed tiles")
    r = client.post("/v1/settle", json={**state, "names": ["Ann", "Bo"]})
    assert r.status_code == 422 and "error" in r.json()


def test_payments_square_the_totals_with_the_fewest_transfers(client):
    table = new_table(client)
    post_round(client, table, win_round(1), 1)
    r = client.get(f"/v1/tables/{table['id']}/payments?per_point=0.5")
    assert r.status_code == 200, r.text
    body = r.json()
    # [2, 10, −8, −4]: no pair or triple sums to 0, so 3 transfers; Cy (−8) pays Bo 8, then Di (−4) pays Ann 2
    # and Bo 2 (the largest debtor pays the largest creditor; Ann and Bo tie at +2, Ann first).
    assert [(p["from"], p["to"], p["points"], p["amount"]) for p in body["payments"]] == [
        (2, 1, 8, 4.0), (3, 0, 2, 1.0), (3, 1, 2, 1.0)]
    assert body["totals"] == E1_TOTALS and body["per_point"] == 0.5 and body["amounts"] == [1.0, 5.0, -4.0, -2.0]
    assert client.get(f"/v1/tables/{table['id']}/payments").json()["per_point"] == 1


@pytest.mark.parametrize("query", ["per_point=0", "per_point=-2", "per_point=abc", "per_point=nan",
                                   "per_point=inf"])
def test_a_bad_per_point_is_a_422_in_the_error_shape(client, query):
    table = new_table(client)
    r = client.get(f"/v1/tables/{table['id']}/payments?{query}")
    assert r.status_code == 422 and set(r.json()["error"]) >= {"code", "message"}


def test_payments_of_an_unknown_table_is_404(client):
    r = client.get("/v1/tables/0123456789ab/payments")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_a_finished_table_refuses_round_writes_with_409(client):
    table = new_table(client)
    post_round(client, table, win_round(1), 1)
    r = client.post(f"/v1/tables/{table['id']}/finish")
    assert r.status_code == 200 and r.json()["finished"] is True and r.json()["version"] == 3
    assert client.get(f"/v1/tables/{table['id']}").json()["finished"] is True
    for answer in (post_round(client, table, win_round(0), 3),
                   client.put(f"/v1/tables/{table['id']}/rounds/1", json={"round": draw_round(),
                                                                           "expected_version": 3}),
                   client.delete(f"/v1/tables/{table['id']}/rounds/1?expected_version=3")):
        assert answer.status_code == 409 and answer.json()["error"]["code"] == "table_finished"
    after = client.get(f"/v1/tables/{table['id']}").json()
    assert (after["rounds"], after["totals"], after["version"]) == (1, E1_TOTALS, 3)
    again = client.post(f"/v1/tables/{table['id']}/finish")
    assert again.status_code == 200 and again.json()["version"] == 3  # nothing changed
    assert client.get(f"/v1/tables/{table['id']}/payments").status_code == 200
    # An unknown table: 401 without a key (asked for before anything is looked up), 404 with one.
    assert client.post("/v1/tables/0123456789ab/finish").status_code == 401
    assert client.post("/v1/tables/0123456789ab/finish",
                       headers={"Authorization": f"Bearer {table['edit_key']}"}).status_code == 404


def test_a_retry_of_a_round_stored_before_finishing_gets_its_answer(client):
    table = new_table(client)
    body = {"round": win_round(1), "expected_version": 1}
    first = client.post(f"/v1/tables/{table['id']}/rounds", json=body, headers={"Idempotency-Key": "k1"})
    client.post(f"/v1/tables/{table['id']}/finish")
    again = client.post(f"/v1/tables/{table['id']}/rounds", json=body, headers={"Idempotency-Key": "k1"})
    assert again.status_code == 201 and again.json() == first.json()


def test_each_round_record_carries_its_summary(client):
    table = new_table(client)
    version = 1
    for r in (win_round(1), e2_round(), draw_round()):
        answer = post_round(client, table, r, version)
        assert answer.status_code == 201, answer.text
        version = answer.json()["table"]["version"]
    summaries = [r["summary"] for r in client.get(f"/v1/tables/{table['id']}/rounds").json()["rounds"]]
    plain = {"zh": "平胡", "en": "plain win"}
    assert summaries[0] == {"kind": "win", "winner": [1], "hand_type": plain, "fan": 1, "payer": None,
                            "wins": [{"seat": 1, "hand_type": plain, "fan": 1}]}  # 自摸: everyone pays
    triplets = {"zh": "大对子", "en": "all triplets"}
    assert summaries[1] == {"kind": "win", "winner": [2], "hand_type": triplets, "fan": 5, "payer": 3,
                            "wins": [{"seat": 2, "hand_type": triplets, "fan": 5}]}  # 点炮 by Di
    assert summaries[2] == {"kind": "draw", "winner": [], "hand_type": None, "fan": None, "payer": None,
                            "wins": []}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_command_line_takes_quick_rounds_pays_and_finishes(capsys, sqlite_url, tmp_path):
    code, out, _ = run(capsys, "table", "new", "Friday", "--players", ",".join(NAMES), "--db", sqlite_url, "--json")
    tid = json.loads(out)["id"]
    path = tmp_path / "quick.json"
    path.write_text(json.dumps(quick_e1()))
    code, out, _ = run(capsys, "table", "round", tid, str(path), "--db", sqlite_url, "--json")
    assert code == 0 and json.loads(out)["table"]["totals"] == E1_TOTALS
    code, out, _ = run(capsys, "table", "pay", tid, "--per-point", "2", "--db", sqlite_url, "--json")
    assert code == 0 and [p["amount"] for p in json.loads(out)["payments"]] == [16.0, 4.0, 4.0]
    code, out, _ = run(capsys, "table", "pay", tid, "--db", sqlite_url)
    assert code == 0 and "Cy pays Bo 8.00 (8 points)" in out
    code, out, _ = run(capsys, "table", "finish", tid, "--db", sqlite_url)
    assert code == 0 and "finished" in out
    code, _, err = run(capsys, "table", "round", tid, str(path), "--db", sqlite_url)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "is finished" in err
    code, _, err = run(capsys, "table", "pay", tid, "--per-point", "x", "--db", sqlite_url)
    assert code == 2 and "per_point must be a positive number" in err


def test_zhuoji_settle_takes_the_summary_form_and_names(capsys, tmp_path):
    path = tmp_path / "quick.json"
    path.write_text(json.dumps({**quick_e1(), "names": NAMES}))
    code, out, _ = run(capsys, "settle", str(path), "--json")
    assert code == 0, out
    body = json.loads(out)
    assert [p["total"] for p in body["players"]] == E1_TOTALS
    assert "Ann: ready (叫牌), as told; holds 5m" in body["explanation"]


def test_random_summaries_answer_200_or_422_never_500(client):
    import random

    rng = random.Random(52)
    values = [True, False, "yes", None, 1, "1s1s", ["1s", "9z"], "x" * 200, [], {"a": 1}]
    keys = ["ready", "not_ready", "holds", "melds", "river", "bao_ting", "concealed"]
    for _ in range(150):
        state = {**quick_e1(), "rules": "gy-normal"}
        seat = rng.choice([0, 2, 3])
        state["players"][seat] = {k: rng.choice(values) for k in rng.sample(keys, rng.randint(1, 4))}
        r = client.post("/v1/settle", json={**state, "names": NAMES})
        assert r.status_code in (200, 422), (state["players"][seat], r.text)
        if r.status_code == 422:
            assert set(r.json()["error"]) >= {"code", "message"}
