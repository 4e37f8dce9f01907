"""A table playing regional variants (docs/rules.md#switches): the round field weekday reaches the engine, a
吹风鸡 round that voids the hand keeps the totals and hands the deal back with the streak counted on."""

from __future__ import annotations

from tests.tables.support import win_round


def test_table_with_weekday_and_chuifeng_rounds(client):
    r = client.post("/v1/tables", json={"name": "Zunyi night", "players": ["Ann", "Bo", "Cy", "Di"],
                                        "rules": {"preset": "gy-normal", "xingqi_ji": "sunday7",
                                                  "chuifeng_ji": "hand"}})
    assert r.status_code == 201, r.text
    table = r.json()
    # E1 on a Wednesday: 3m 3p 3s are chickens too → 6, 14, −12, −8 (tests/scoring/test_variants.py).
    r = client.post(f"/v1/tables/{table['id']}/rounds", json={"round": {**win_round(1), "weekday": 3},
                                                                "expected_version": table["version"]})
    assert r.status_code == 201, r.text
    table = r.json()["table"]
    assert table["totals"] == [6, 14, -12, -8] and (table["dealer"], table["streak"]) == (1, 1)
    # The same hand with F = 5p (吹风鸡, whole round): void; P1 deals again with streak 2.
    blown = {**win_round(1), "weekday": 3, "flipped": "5p"}
    r = client.post(f"/v1/tables/{table['id']}/rounds", json={"round": blown,
                                                                "expected_version": table["version"]})
    assert r.status_code == 201, r.text
    table = r.json()["table"]
    assert table["totals"] == [6, 14, -12, -8] and (table["dealer"], table["streak"]) == (1, 2)
    # 星期鸡 is played, so a won round without its weekday is refused, in the one error shape.
    r = client.post(f"/v1/tables/{table['id']}/rounds", json={"round": win_round(1),
                                                                "expected_version": table["version"]})
    assert r.status_code == 422 and "weekday" in r.json()["error"]["message"]
