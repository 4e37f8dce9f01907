"""The HTTP API: every endpoint with good input, and every kind of hostile input → 4xx with a JSON message.

TestClient re-raises any exception that reaches the catch-all handler, and ``internal_errors`` counts them:
both prove that no hostile case below ends in a 500.
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import time
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from fastapi import HTTPException
from fastapi.testclient import TestClient

from api.service.app import create_app
from api.service.errors import ApiError
from api.service.runner import InferenceRunner
from api.service.uploads import MAX_IMAGE_BYTES
from tests.api.support import SAMPLES, WIN_ROW, ScriptedDetector, blank_photo, encode
from vision.back_check import DEFAULT_BACK_CHECK
from vision.classify import DEFAULT_CLASSIFIER
from vision.detect import DEFAULT_MODEL
from vision.detections import box_iou

TABLES = Path(__file__).parents[1] / "data" / "tables"


def error_of(response) -> dict:
    body = response.json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] and body["error"]["message"], body
    return body["error"]


def needs_model(client) -> None:
    if client.app.state.detector is None:
        pytest.skip("no tile model: models/zhuoji-tiles-int8.onnx missing and ZHUOJI_MODEL not set")


def photo(name: str = "photo.jpg", data: bytes | None = None, kind: str = "image/jpeg") -> dict:
    return {"image": (name, SAMPLES[0].read_bytes() if data is None else data, kind)}


# ------------------------------------------------------------------------------------------ good input


def test_healthz(client):
    body = client.get("/healthz").json()
    assert body["model_loaded"] is (client.app.state.detector is not None)
    assert body["status"] in ("ok", "no_model") and body["version"] and body["classes"] == 29
    detector = client.app.state.detector
    if detector is not None and detector.classifier is not None:
        assert body["classifier"] == detector.classifier.model_path.name  # a file name, never a path


def test_the_classifier_can_be_turned_off(monkeypatch: pytest.MonkeyPatch):
    if not DEFAULT_CLASSIFIER.is_file() or not DEFAULT_MODEL.is_file():
        pytest.skip("needs the shipped models")
    monkeypatch.setenv("ZHUOJI_CLASSIFIER", "none")
    with TestClient(create_app()) as c:
        body = c.get("/healthz").json()
        assert body["model_loaded"] is True and body["classifier"] is None
        assert body["back_check"] == (DEFAULT_BACK_CHECK.name if DEFAULT_BACK_CHECK.is_file() else None)
        assert c.post("/v1/detect", files=photo()).json()["count"] > 0
    monkeypatch.setenv("ZHUOJI_BACK_CHECK", "none")
    with TestClient(create_app()) as c:
        assert c.get("/healthz").json()["back_check"] is None
    monkeypatch.setenv("ZHUOJI_CLASSIFIER", "/nonexistent/crops.onnx")
    with TestClient(create_app()) as c:  # a classifier asked for and missing: no model, said so
        body = c.get("/healthz").json()
        assert body["model_loaded"] is False and body["status"] == "no_model"


def test_web_page_and_openapi(client):
    page = client.get("/")
    assert page.status_code == 200 and "捉鸡" in page.text and 'capture="environment"' in page.text
    assert client.get("/web/main.js").status_code == 200 and client.get("/web/scorer.js").status_code == 200
    spec = client.get("/openapi.json").json()
    assert {"/v1/detect", "/v1/read", "/v1/score", "/v1/hand", "/v1/settle", "/v1/chajiao",
            "/v1/chajiao/photos", "/healthz"} <= set(spec["paths"])


def test_detect_read_score_on_a_real_photo(client):
    needs_model(client)
    det = client.post("/v1/detect", files=photo())
    assert det.status_code == 200, det.text
    body = det.json()
    assert body["count"] == len(body["tiles"]) and body["image"]["width"] > 0
    read = client.post("/v1/read", files=photo()).json()
    # /v1/read looks twice (as is and turned 180°), /v1/detect once: the same tiles, give or take a doubtful box
    read_boxes = np.array([t["box"] for t in read["tiles"]], dtype=float)
    found = [box_iou(np.array([t["box"]], dtype=float), read_boxes).max() >= 0.5 for t in body["tiles"]]
    assert sum(found) >= body["count"] - 1 and abs(len(read["tiles"]) - body["count"]) <= 1
    assert {t["role"] for t in read["tiles"]} <= {"concealed", "meld", "river", "indicator", "unassigned"}
    assert all(isinstance(r["message"], str) for r in read["retake"])
    score = client.post("/v1/score", files=photo(), data={"self_drawn": "true"})
    assert score.status_code == 200, score.text
    s = score.json()
    assert (s["analysis"] is None) == (s["score_error"] is not None)
    annotated = cv2.imdecode(np.frombuffer(base64.b64decode(s["annotated_jpeg"]), np.uint8), cv2.IMREAD_COLOR)
    assert annotated is not None and annotated.shape[1] <= 1280


def test_score_pipeline_on_a_known_hand(scripted):
    r = scripted.post("/v1/score", files=photo(data=blank_photo()),
                      data={"self_drawn": "true", "flipped": "9s", "rules": "gy-normal"})
    assert r.status_code == 200, r.text
    s = r.json()
    assert s["hand"]["count"] == 14 and s["hand"]["complete"] is True
    a = s["analysis"]
    assert a["status"] == "win" and a["hand_type"]["name_zh"] == "平胡" and a["hand_type"]["name_en"] == "plain win"
    assert a["win_value"] == 2  # 平胡自摸 = 2 (docs/rules.md#win-value)
    assert s["assumptions"] == ["winning tile not given: took the last tile of the hand, 5p"]
    assert a["chickens"]["golden"] is True and a["chickens"]["total"] == 0  # 金鸡, but no 1s in the hand
    # Before the win (5p) the 13 tiles waited on 1p and 5p; the photo shows 2 + 3 of them.
    assert {w["tile"]: w["copies_left"] for w in a["waits"]} == {"1p": 2, "5p": 0}
    # The hand_request is what the page sends to /v1/hand after a correction: same result.
    again = scripted.post("/v1/hand", json=s["hand_request"]).json()
    assert again["hand_type"] == a["hand_type"] and again["win_value"] == a["win_value"]


def test_score_explicit_win_tile_and_waiting_hand(scripted):
    r = scripted.post("/v1/score", files=photo(data=blank_photo()), data={"win_tile": "1p", "annotate": "false"})
    s = r.json()
    assert s["analysis"]["win_tile"] == "1p" and s["annotated_jpeg"] is None
    assert s["analysis"]["allowed"] is False  # 平胡 without a 豆 may not win on a discard (胡牌通行证)
    r = scripted.post("/v1/score", files=photo(data=blank_photo()), data={"win_tile": "9m"})
    assert r.status_code == 200 and r.json()["score_error"]["code"] == "invalid_hand"


def test_hand_waiting_with_copies_left(client):
    r = client.post("/v1/hand", json={"concealed": "123m456p789s1155p", "seen": "1p9m"})
    assert r.status_code == 200, r.text
    a = r.json()
    assert a["status"] == "ready" and a["ready"] is True
    left = {w["tile"]: w["copies_left"] for w in a["waits"]}
    assert left == {"1p": 1, "5p": 1}  # 1p: 2 held + 1 seen; 5p: 3 held (456p, 55p)
    assert any("叫牌" in line for line in a["explanation"])
    # Seen tiles as a list (what a photo gives) may hold a misread extra copy: a note, not an error.
    r = client.post("/v1/hand", json={"concealed": "123m456p789s1155p", "seen": ["1p", "1p", "1p"]}).json()
    assert {w["tile"]: w["copies_left"] for w in r["waits"]}["1p"] == 0
    assert any("1p is seen 5 times" in line for line in r["explanation"])


def test_hand_win_types_and_context(client):
    qing = client.post("/v1/hand", json={"concealed": "1112345678999p", "win_tile": "5p", "self_drawn": True}).json()
    assert qing["hand_type"]["key"] == "qingyise" and qing["hand_type"]["name_zh"] == "清一色"
    assert qing["win_value"] == 10  # big hands get no 自摸 bonus in GY
    kong = client.post("/v1/hand", json={"concealed": "123m456p78s22s", "win_tile": "9s", "self_drawn": True,
                                         "kong_draw": True, "melds": [{"type": "concealed_kong", "tile": "6m"}]}).json()
    assert kong["win_value"] == 3  # E3: 平胡自摸 2 + 杠上花 1
    reduced = client.post("/v1/hand", json={"concealed": "444666999p1p22p", "win_tile": "1p", "rules": "gy-reduced",
                                            "melds": [{"type": "pong", "tile": "2p", "from": 3}]})
    assert reduced.status_code == 422  # 14 concealed + a meld: too many tiles
    e7 = client.post("/v1/hand", json={"concealed": "4446669991p", "win_tile": "1p", "rules": "gy-reduced",
                                       "self_drawn": True, "melds": [{"type": "pong", "tile": "2p", "from": 3}]})
    assert e7.json()["hand_type"]["name_zh"] == "清大对" and e7.json()["win_value"] == 8  # E7 (GY-R)
    nowin = client.post("/v1/hand", json={"concealed": "123m456p789s1155p", "win_tile": "9m"}).json()
    assert nowin["status"] == "not_a_win" and nowin["reason"]


def test_settle_example_tables(client):
    for name, totals in (("e1", [2, 10, -8, -4]), ("e9", [-15, 16, -4, 3])):
        r = client.post("/v1/settle", json=json.loads((TABLES / f"{name}.json").read_text(encoding="utf-8")))
        assert r.status_code == 200, r.text
        body = r.json()
        assert [p["total"] for p in body["players"]] == totals
        assert all({"from", "to", "fan", "component", "reason"} <= set(t) for t in body["ledger"])


def test_chajiao_e10_all_four(client):
    # E10 (docs/rules.md#examples): P0 清一色 10 and P2 平胡 1 are 叫牌; P1, P3 each pay both.
    players = [{"concealed": "1234567892256p"}, {"concealed": "11m123p22346799s"},
               {"concealed": "234m567s888p33m67m"}, {"concealed": "255668m5p223678s"}]
    r = client.post("/v1/chajiao", json={"players": players})
    assert r.status_code == 200, r.text
    body = r.json()
    assert [p["total"] for p in body["players"]] == [20, -11, 2, -11]
    assert [p["ting"] for p in body["players"]] == [True, False, True, False]
    assert body["players"][0]["best_hand_type"]["name_zh"] == "清一色" and body["next_dealer"] == 0


def test_chajiao_two_hands_leave_the_others_out(client):
    r = client.post("/v1/chajiao", json={"players": [{"seat": 1, "concealed": "1234567892256p"},
                                                     {"seat": 3, "concealed": "11m123p22346799s"}]})
    body = r.json()
    assert [p["total"] for p in body["players"]] == [0, 10, 0, -10]
    assert [p["given"] for p in body["players"]] == [False, True, False, True]
    assert all(t["from"] == 3 and t["to"] == 1 for t in body["ledger"]) and body["next_dealer"] is None


def test_chajiao_photos_mixes_photo_and_text(scripted):
    hand13 = WIN_ROW[:13]
    scripted.app.state.detector = ScriptedDetector(hand13)
    try:
        r = scripted.post("/v1/chajiao/photos", files={"photo0": ("a.jpg", blank_photo(), "image/jpeg")},
                          data={"hand2": "11m123p22346799s"})
    finally:
        scripted.app.state.detector = ScriptedDetector(WIN_ROW)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["players"][0]["source"] == "photo" and body["players"][0]["ting"] is True
    assert body["players"][2]["source"] == "text" and body["players"][2]["total"] < 0
    bad = scripted.post("/v1/chajiao/photos", data={"hand1": "123m"})
    assert bad.status_code == 422 and "at least 2" in error_of(bad)["message"]
    meld = scripted.post("/v1/chajiao/photos", data={"hand0": "123m456p789s1p bogus:5m", "hand1": "123m"})
    assert meld.status_code == 422 and "TYPE:TILE" in error_of(meld)["message"]


# --------------------------------------------------------------------------------------- hostile input


def test_oversize_rejected_by_content_length(scripted):
    big = b"\xff\xd8\xff" + b"\0" * (MAX_IMAGE_BYTES + 10)
    r = scripted.post("/v1/detect", files=photo(data=big))
    assert r.status_code == 413 and error_of(r)["code"] == "payload_too_large"
    r = scripted.post("/v1/hand", content=b"{" + b" " * (2 << 20) + b"}", headers={"Content-Type": "application/json"})
    assert r.status_code == 413


def test_oversize_rejected_while_reading_a_chunked_body(scripted):
    boundary = "x" * 16

    def body():  # a generator: httpx sends it chunked, without Content-Length
        yield (f"--{boundary}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.jpg\"\r\n"
               f"Content-Type: image/jpeg\r\n\r\n").encode()
        chunk = b"\0" * (1 << 20)
        for _ in range(25):
            yield chunk
        yield f"\r\n--{boundary}--\r\n".encode()

    r = scripted.post("/v1/score", content=body(), headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert r.status_code == 413 and error_of(r)["code"] == "payload_too_large"


@pytest.mark.parametrize("path", ["/v1/detect", "/v1/read", "/v1/score"])
def test_wrong_content_type(scripted, path):
    r = scripted.post(path, files=photo("notes.txt", b"hello", "text/plain"))
    assert r.status_code == 415 and "not an image" in error_of(r)["message"]


@pytest.mark.parametrize(("data", "words"), [
    (b"hello, this is not a photo", "not an image"),
    (b"%PDF-1.7 ...", "PDF"),
    (b"\0\0\0\x18ftypheic" + b"\0" * 40, "HEIC"),
])
def test_non_image_bytes_with_an_image_content_type(scripted, data, words):
    r = scripted.post("/v1/read", files=photo(data=data))
    assert r.status_code == 415 and words in error_of(r)["message"]


def test_truncated_and_corrupt_images(scripted):
    jpeg = SAMPLES[0].read_bytes()
    for data in (jpeg[: len(jpeg) // 2], jpeg[:200], b"\xff\xd8\xff" + b"\x13" * 500):
        r = scripted.post("/v1/score", files=photo(data=data))
        assert r.status_code == 422 and error_of(r)["code"] == "invalid_image"
    png = encode(np.zeros((50, 50, 3), np.uint8), ".png")
    r = scripted.post("/v1/detect", files=photo("a.png", png[:60], "image/png"))
    assert r.status_code == 422


def _png_header(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk + struct.pack(">I", zlib.crc32(chunk))


def test_huge_dimensions_refused_before_decoding(scripted):
    r = scripted.post("/v1/detect", files=photo("bomb.png", _png_header(100_000, 100_000) + b"\0" * 100, "image/png"))
    assert r.status_code == 422 and "too large" in error_of(r)["message"]


@pytest.mark.parametrize(("name", "data"), [
    ("bomb.webp", b"RIFF\0\0\0\0WEBPVP8X" + b"\x0a\0\0\0" + b"\0" * 4 + (16000).to_bytes(3, "little") * 2),
    ("bomb.bmp", b"BM" + b"\0" * 12 + struct.pack("<Iii", 40, 60000, -60000) + b"\0" * 40),
    ("bomb.tif", b"II*\0" + struct.pack("<I", 8) + struct.pack("<H", 2)
     + struct.pack("<HHII", 256, 4, 1, 90000) + struct.pack("<HHII", 257, 4, 1, 90000) + b"\0" * 8),
])
def test_huge_dimension_headers_of_other_formats(scripted, name, data):
    r = scripted.post("/v1/read", files=photo(name, data, "application/octet-stream"))
    assert r.status_code == 422 and error_of(r)["code"] == "image_too_large"


def test_bad_json(client):
    r = client.post("/v1/hand", content=b'{"concealed": "123m", ', headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and error_of(r)["code"] == "invalid_json"
    r = client.post("/v1/settle", content=b"[1, 2", headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    r = client.post("/v1/hand", json=["123m"])
    assert r.status_code == 422 and error_of(r)["code"] == "invalid_request"


@pytest.mark.parametrize(("payload", "words"), [
    ({"concealed": "11111m2345678p9s"}, "more than 4 copies of 1m"),  # 5 copies
    ({"concealed": "123m456p789s11223p"}, "14 tiles given without a winning tile"),  # 14 + no win tile
    ({"concealed": "123m456p789s112233p", "win_tile": "5p"}, "needs 14 tiles"),  # 15 + 1 tiles
    ({"concealed": "123m456p789s1234z"}, "honor tiles (z)"),  # honors
    ({"concealed": "123m456p789s1155p", "win_tile": "1z"}, "not a tile"),
    ({"concealed": "123m456p789s115p", "win_tile": "5p", "kong_draw": True}, "self-drawn"),
    ({"concealed": "123m", "melds": [{"type": "chow", "tile": "5m"}]}, "melds[0].type"),
    ({"concealed": "123m", "rules": "tokyo"}, "rules"),
    ({"concealed": "123m", "rules": {"preset": "gy-normal", "dou_values": 3.5}}, "rules"),
    ({"concealed": 123}, "concealed"),
    ({"concealed": "123m", "self_drawn": "yes"}, "self_drawn"),
    ({"concealed": "123m", "surprise": 1}, "surprise"),
    ({}, "concealed"),
])
def test_impossible_or_malformed_hands(client, payload, words):
    r = client.post("/v1/hand", json=payload)
    assert r.status_code == 422, r.text
    assert words in error_of(r)["message"]


def test_impossible_tables(client):
    state = json.loads((TABLES / "e1.json").read_text(encoding="utf-8"))
    state["players"][0]["concealed"] = "56m23344556788s9s"  # 14 tiles for a player who did not win
    r = client.post("/v1/settle", json=state)
    assert r.status_code == 422 and "P0" in error_of(r)["message"]
    state["players"] = state["players"][:3]
    assert client.post("/v1/settle", json=state).status_code == 422
    r = client.post("/v1/chajiao", json={"players": [{"concealed": "11111m"}, {"concealed": "123m"}]})
    assert r.status_code == 422 and "copies" in error_of(r)["message"]
    r = client.post("/v1/chajiao", json={"players": [{"concealed": "123m456p789s1155p"}]})
    assert r.status_code == 422
    r = client.post("/v1/chajiao", json={"players": [{"seat": 1, "concealed": "123m456p789s1155p"},
                                                     {"seat": 1, "concealed": "123m456p789s1155p"}]})
    assert r.status_code == 422 and "twice" in error_of(r)["message"]


def test_score_form_errors(scripted):
    r = scripted.post("/v1/score", files=photo(data=blank_photo()), data={"selfdrawn": "true"})
    assert r.status_code == 422 and "selfdrawn" in error_of(r)["message"]
    r = scripted.post("/v1/score", files=photo(data=blank_photo()), data={"win_tile": "1z"})
    assert r.status_code == 422 and "win_tile" in error_of(r)["message"]
    r = scripted.post("/v1/score", data={"self_drawn": "true"})
    assert r.status_code == 422 and "image" in error_of(r)["message"]
    r = scripted.post("/v1/score", content=b"--broken", headers={"Content-Type": "multipart/form-data; boundary=zz"})
    assert 400 <= r.status_code < 500


def test_unknown_paths_and_methods(client):
    r = client.get("/v1/nothing")
    assert r.status_code == 404 and error_of(r)["code"] == "not_found"
    r = client.get("/v1/hand")
    assert r.status_code == 405 and error_of(r)["code"] == "method_not_allowed"


def test_photo_endpoints_without_a_model():
    app = create_app(model_path="/nonexistent/model.onnx")
    with TestClient(app) as c:
        assert c.get("/healthz").json()["model_loaded"] is False
        r = c.post("/v1/score", files=photo(data=blank_photo()))
        assert r.status_code == 503 and error_of(r)["code"] == "model_unavailable"
        assert c.post("/v1/hand", json={"concealed": "123m456p789s1155p"}).status_code == 200


def test_busy_runner_answers_503():
    async def scenario() -> list[object]:
        runner = InferenceRunner(concurrency=1, max_waiting=0)

        async def first() -> str:
            return await runner.run(lambda **_: (time.sleep(0.2), "done")[1])

        async def second() -> object:
            await asyncio.sleep(0.05)
            try:
                return await runner.run(lambda **_: "late")
            except ApiError as exc:
                return exc.status

        return list(await asyncio.gather(first(), second()))

    assert asyncio.run(scenario()) == ["done", 503]


def test_catch_all_handler_returns_generic_json_500():
    app = create_app(model_path="/nonexistent/model.onnx")

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("secret detail")

    @app.get("/http")
    def http() -> None:
        raise HTTPException(418, "teapot")

    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.get("/boom")
        assert r.status_code == 500
        err = error_of(r)
        assert err["code"] == "internal_error" and "secret" not in err["message"]
        assert app.state.internal_errors == 1
        assert c.get("/http").status_code == 418
