"""A table playing regional variants (docs/rules.md#switches): the round field weekday reaches the engine, a
吹风鸡 round that voids the hand keeps the totals and hands the deal back with the streak counted on."""

from __future__ import annotations

from tests.tables.support import ADMIN, win_round


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


def test_example_profiles_save_and_start_a_table(client):
    # Every example house profile GET /v1/rules lists starts a table by its name, unsaved, keeping its rules;
    # saving one (with the admin key) under the same name then takes precedence.
    profiles = client.get("/v1/rules").json()["profiles"]
    assert profiles
    for profile in profiles:
        r = client.post("/v1/tables", json={"name": profile["title_en"], "players": ["Ann", "Bo", "Cy", "Di"],
                                            "profile": profile["name"]})
        assert r.status_code == 201, r.text
        assert r.json()["rules"] == profile["rules"]
    saved = {"preset": "gy-reduced"}
    assert client.put(f"/v1/profiles/{profiles[0]['name']}", json={"rules": saved}).status_code == 401
    assert client.put(f"/v1/profiles/{profiles[0]['name']}", json={"rules": saved}, headers=ADMIN).status_code == 200
    r = client.post("/v1/tables", json={"name": "saved", "players": ["Ann", "Bo", "Cy", "Di"],
                                        "profile": profiles[0]["name"]})
    assert r.status_code == 201 and r.json()["rules"] == saved
    assert client.post("/v1/tables", json={"name": "x", "players": ["Ann", "Bo", "Cy", "Di"],
                                           "profile": "no-such-town"}).status_code == 404
    # 兴义 (站鸡 double, 自摸翻倍) on E1: P1's 平胡 self-draw W = 2 × 1 = 2 from each; his 1s never shown is a
    # 站鸡 worth 2 (V1 = 2); P0's 5m 1; P2's 冲锋鸡 包鸡 2 to P0 and P1.
    # P0 = −2 + 3 − 2 + 2 = +1; P1 = +6 + 6 − 1 + 2 = +13; P2 = −2 − 1 − 2 − 4 = −9; P3 = −2 − 1 − 2 = −5.
    xingyi = client.post("/v1/tables", json={"name": "Xingyi", "players": ["Ann", "Bo", "Cy", "Di"],
                                             "profile": "xingyi"}).json()
    r = client.post(f"/v1/tables/{xingyi['id']}/rounds", json={"round": win_round(1),
                                                                "expected_version": xingyi["version"]})
    assert r.status_code == 201 and r.json()["table"]["totals"] == [1, 13, -9, -5]
