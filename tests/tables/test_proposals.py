"""``/v1/tables/{id}/proposal``: the round a camera over the table proposes, kept (the latest per table) until a
round is saved or it is dismissed; writes need the table's edit key, reads are free; bad bodies are 422; migration
0006 upgrades a database of the release before. On SQLite and PostgreSQL (``db_url``)."""

from __future__ import annotations

import base64
import json

import cv2
import numpy as np
import pytest
import sqlalchemy as sa

from pipeline.proposal import MAX_FRAME_BYTES, ProposalIn, proposal_body
from pipeline.table_photo import TableReading, read_table
from tables import TableStore
from tables.db import downgrade
from tests.tables.support import bearer, entered, win_round
from tests.vision.table_support import SIZE, WON, build

NAMES = ["Ann", "Bo", "Cy", "Di"]


def won_reading() -> TableReading:
    """The read-table answer of the hand-built table ``WON`` (the whole read-table pipeline on its boxes)."""
    def detector(image: np.ndarray, **_: object):
        dets = build(WON).dets
        dets.image_size = (SIZE, SIZE)
        return dets

    return read_table(detector, np.zeros((SIZE, SIZE, 3), np.uint8))


@pytest.fixture(scope="module")
def reading() -> dict:
    return won_reading().model_dump(mode="json")


def jpeg(side: int = 64) -> str:
    ok, data = cv2.imencode(".jpg", np.full((side, side, 3), 128, np.uint8))
    assert ok
    return base64.b64encode(data.tobytes()).decode("ascii")


def new_table(client) -> dict:
    made = client.post("/v1/tables", json={"name": "Camera", "players": NAMES})
    assert made.status_code == 201, made.text
    return made.json()


def test_a_proposal_is_kept_until_dismissed_and_the_latest_wins(client, reading):
    table = new_table(client)
    url = f"/v1/tables/{table['id']}/proposal"
    assert client.get(url).json() == {"proposal": None}
    first = client.post(url, json={"table": reading, "frame": jpeg()})
    assert first.status_code == 201, first.text
    got = client.get(url).json()["proposal"]
    assert got["id"] == first.json()["id"] and got["table"] == reading and got["frame"] == jpeg()
    # Asked again with its ETag (as a polling browser does): 304, the frame not sent again.
    tag = client.get(url).headers["ETag"]
    assert tag == f'"{got["id"]}"' and client.get(url, headers={"If-None-Match": tag}).status_code == 304
    # A second camera's (or the next round's) proposal replaces it: one per table, the latest.
    changed = {**reading, "flipped": "9m"}
    second = client.post(url, json={"table": changed})
    assert second.status_code == 201 and second.json()["id"] != first.json()["id"]
    got = client.get(url).json()["proposal"]
    assert got["id"] == second.json()["id"] and got["table"]["flipped"] == "9m" and got["frame"] is None
    # Not a write of the table: its version and rounds are unchanged, so a phone saving meanwhile is not stale.
    after = client.get(f"/v1/tables/{table['id']}").json()
    assert after["version"] == table["version"] and after["rounds"] == 0
    # Dismissing the one shown before leaves the newer one; dismissing it (twice) clears it.
    assert client.delete(url, params={"proposal": first.json()["id"]}).status_code == 204
    assert client.get(url).json()["proposal"]["id"] == second.json()["id"]
    assert client.delete(url, params={"proposal": second.json()["id"]}).status_code == 204
    assert client.get(url).json() == {"proposal": None}
    assert client.get(url, headers={"If-None-Match": tag}).status_code == 200  # changed: the answer again
    assert client.delete(url).status_code == 204


def test_saving_a_round_clears_the_proposal(client, reading):
    table = new_table(client)
    url = f"/v1/tables/{table['id']}/proposal"
    assert client.post(url, json={"table": reading}).status_code == 201
    saved = client.post(f"/v1/tables/{table['id']}/rounds", json={"round": win_round(1), "expected_version": 1})
    assert saved.status_code == 201, saved.text
    assert client.get(url).json() == {"proposal": None}
    # Deleting the table deletes its proposal with it (the foreign key cascades).
    assert client.post(url, json={"table": reading}).status_code == 201
    assert client.delete(f"/v1/tables/{table['id']}").status_code == 204
    assert client.get(url).status_code == 404


def test_writes_need_the_tables_key_and_reads_are_free(client, reading):
    table, other = new_table(client), new_table(client)
    url = f"/v1/tables/{table['id']}/proposal"
    for method, kw in (("POST", {"json": {"table": reading}}), ("DELETE", {})):
        none = client.request(method, url, headers={"Authorization": ""}, **kw)
        assert none.status_code == 401 and none.json()["error"]["code"] == "key_required"
        wrong = client.request(method, url, headers=bearer(other["edit_key"]), **kw)
        assert wrong.status_code == 403 and wrong.json()["error"]["code"] == "wrong_key"
    assert client.get(url).json() == {"proposal": None}  # nothing was written
    # A key-less request learns nothing of its body: an empty body is 401 without a key, 422 with the right one.
    assert client.post(url, json={}, headers={"Authorization": ""}).status_code == 401
    assert client.post(url, json={}).status_code == 422


def test_unknown_tables_and_finished_ones(client, reading):
    for url in ("/v1/tables/0123456789ab/proposal", "/v1/tables/no%20such/proposal"):
        answer = client.get(url)
        assert answer.status_code == 404 and answer.json()["error"]["code"] == "not_found"
    table = new_table(client)
    assert client.post(f"/v1/tables/{table['id']}/finish").status_code == 200
    refused = client.post(f"/v1/tables/{table['id']}/proposal", json={"table": reading})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "table_finished"


@pytest.mark.parametrize("body, why", [
    ({}, "no reading"),
    ({"table": {"seats": []}}, "a reading without its fields"),
    ({"table": "1m2m3m"}, "text instead of a reading"),
    ("READING", "no object"),
    ({"frame": "not base64 at all!"}, "a frame that is no base64"),
    ({"frame": base64.b64encode(b"GIF89a" + bytes(100)).decode()}, "a frame that is no JPEG"),
    ({"frame": "A" * ((MAX_FRAME_BYTES + 2) // 3 * 4 + 4)}, "a frame over 512 kB"),
    ({"unknown": 1}, "an unknown field"),
])
def test_bad_bodies_are_422(client, reading, body, why):
    table = new_table(client)
    url = f"/v1/tables/{table['id']}/proposal"
    sent = {"table": reading, **body} if isinstance(body, dict) and "table" not in body and body else body
    answer = client.post(url, json=sent)
    assert answer.status_code == 422, (why, answer.text)
    assert answer.json()["error"]["code"] in ("invalid_request", "invalid_json"), why
    assert client.get(url).json() == {"proposal": None}
    broken = client.post(url, content=b"{not json", headers={"Content-Type": "application/json"})
    assert broken.status_code == 400 and broken.json()["error"]["code"] == "invalid_json"


def test_live_modes_body_scales_a_large_frame_and_its_boxes():
    table = won_reading()
    frame = np.full((SIZE, SIZE, 3), 90, np.uint8)
    body = proposal_body(table, frame)
    shown = cv2.imdecode(np.frombuffer(body.frame_bytes(), np.uint8), cv2.IMREAD_COLOR)
    assert shown.shape[:2] == (1280, 1280)
    scale = 1280 / SIZE
    for sent, read in zip(body.table.detections, table.detections, strict=True):
        assert sent.box == pytest.approx([v * scale for v in read.box], abs=0.06)
    assert body.table.seats == table.seats
    assert ProposalIn.model_validate_json(body.model_dump_json()) == body  # what the service parses


def test_the_store_keeps_a_proposal_across_an_upgrade_from_0005(db_url, reading):
    """Migration 0006 on a database of the release before: the tables and rounds stay, proposals work."""
    store = TableStore.open(db_url)
    made = store.create_table("Before", NAMES)
    store.add_round(made.table.id, entered(win_round(1)), 1)
    downgrade(store.engine, "0005")
    assert "round_proposals" not in sa.inspect(store.engine).get_table_names()
    store.close()
    store = TableStore.open(db_url)  # upgrades
    try:
        assert store.get_table(made.table.id).rounds == 1 and store.get_proposal(made.table.id) is None
        kept = store.set_proposal(made.table.id, reading, b"\xff\xd8\xff frame")
        again = store.get_proposal(made.table.id)
        assert again == kept and json.dumps(again.reading, sort_keys=True) == json.dumps(reading, sort_keys=True)
        assert store.clear_proposal(made.table.id, "not its id") is False
        assert store.clear_proposal(made.table.id, kept.id) is True and store.get_proposal(made.table.id) is None
    finally:
        store.close()
