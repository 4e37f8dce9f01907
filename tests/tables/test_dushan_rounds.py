"""独山 (docs/rules.md#dushan) through the HTTP service: ``/v1/settle`` and a table playing the ``dushan`` preset,
with the round input ``discard_order``. Payments derived in tests/scoring/test_dushan.py."""

from __future__ import annotations

from tests.scoring.test_dushan import PAIRWISE, claim_table


def _round(state: dict) -> dict:
    return {k: v for k, v in state.items() if k not in ("rules", "dealer", "streak")}


def test_dushan_settles_through_the_service_and_a_table(client):
    # §11.2 through /v1/settle: B (P2) pongs A's 横鸡 and is 叫牌: P0 −6, P1 −7, P2 +7, P3 +6.
    r = client.post("/v1/settle", json=claim_table("heng"))
    assert r.status_code == 200, r.text
    body = r.json()
    assert [p["total"] for p in body["players"]] == [-6, -7, 7, 6]
    assert body["rules"]["settlement"] == "dushan" and body["next_dealer"] == 3
    # Without the order a claimed 1s cannot be told 冲锋鸡 from 横鸡: one 422 in the error shape.
    no_order = {k: v for k, v in claim_table("heng").items() if k != "discard_order"}
    r = client.post("/v1/settle", json=no_order)
    assert r.status_code == 422 and "discard_order" in r.json()["error"]["message"]

    r = client.post("/v1/tables", json={"name": "Dushan", "players": ["Ann", "Bo", "Cy", "Di"], "rules": "dushan"})
    assert r.status_code == 201, r.text
    table = r.json()
    # Round 1, the §11.2 round (dealer P0): totals −6, −7, +7, +6; P3 won and deals next.
    r = client.post(f"/v1/tables/{table['id']}/rounds", json={"round": _round(claim_table("heng")),
                                                                "expected_version": table["version"]})
    assert r.status_code == 201, r.text
    table = r.json()["table"]
    assert table["totals"] == [-6, -7, 7, 6] and table["dealer"] == 3
    # Round 2, the pairwise round (its seats' roles do not depend on the dealer: the order is derived with P3
    # dealing, and P0's 1s is still his first discard, P1's the first 1s after it): +3, −29, +39, −13 more.
    r = client.post(f"/v1/tables/{table['id']}/rounds", json={"round": _round(PAIRWISE),
                                                                "expected_version": table["version"]})
    assert r.status_code == 201, r.text
    assert r.json()["table"]["totals"] == [-3, -36, 46, -7]
    # A Guiyang switch under 独山 is refused, not silently ignored.
    r = client.post("/v1/tables", json={"name": "Mixed", "players": ["Ann", "Bo", "Cy", "Di"],
                                        "rules": {"preset": "dushan", "wuguji": True}})
    assert r.status_code == 422 and "wuguji" in r.json()["error"]["message"]
