"""``POST /v1/read-table`` and ``zhuoji read-table``: the whole table's answer through both shells, with a scripted
detector that sees the hand-built table of ``tests/vision/table_support.py``; bad photos refused as on the other
photo routes (4xx with the error shape, one line and exit 2 on the command line)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

import pipeline.settings
from api.cli import main
from api.service.app import create_app
from tests.api.support import encode
from tests.vision.table_support import SIZE, WON, build
from vision.detections import Detections

NO_MODEL = "/nonexistent/model.onnx"


class TableDetector:
    """Stands in for ``vision.detect.Detector``: sees the table ``WON`` in any photo (boxes scaled to it)."""

    def __init__(self) -> None:
        self.model_path = Path("scripted.onnx")
        self.classifier = None

    def __call__(self, image: np.ndarray, **_: object) -> Detections:
        dets = build(WON).dets
        dets.image_size = (SIZE, SIZE)
        return dets.rescaled((image.shape[1], image.shape[0]))


def table_photo(size: int = 1000) -> bytes:
    return encode(np.full((size, size, 3), 90, np.uint8))


@pytest.fixture(scope="module")
def service() -> Iterator[TestClient]:
    app = create_app(model_path=NO_MODEL)
    with TestClient(app) as client:
        app.state.detector = TableDetector()
        yield client
    assert app.state.internal_errors == 0


def upload(data: bytes, name: str = "table.jpg", kind: str = "image/jpeg") -> dict:
    return {"image": (name, data, kind)}


def test_the_round_from_one_photo(service: TestClient) -> None:
    r = service.post("/v1/read-table", files=upload(table_photo()))
    assert r.status_code == 200, r.text
    body = r.json()
    # the contract, and the heap: discards thrown into the middle, and whether each seat's river is its own
    assert set(body) == {"seats", "flipped", "heap", "winner", "retake", "detections"}
    assert [set(s) for s in body["seats"]] == [{"seat", "concealed", "melds", "river", "river_separated",
                                                "doubtful"}] * 4
    assert body["heap"] == [] and all(s["river_separated"] for s in body["seats"])
    assert [s["concealed"] for s in body["seats"]] == [s.concealed for s in WON.seats]
    assert [s["river"] for s in body["seats"]] == [s.river for s in WON.seats]
    assert body["seats"][1]["melds"] == [{"type": "pong", "tile": "9s"}]
    assert body["flipped"] == "4m" and body["winner"] == 0
    assert [r["code"] for r in body["retake"]] == ["blurry"]  # a grey photo: said once, not once per seat
    first = body["detections"][0]
    assert set(first) == {"tile", "box", "confidence", "seat", "role"}
    assert first["tile"] == "1m" and first["seat"] == 0 and first["role"] == "hand"
    # boxes in the photo's own pixels: the table of 2000 px seen in a 1000 px photo
    assert max(max(d["box"]) for d in body["detections"]) <= 1000


def test_the_command_line_prints_the_http_body(service: TestClient, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(pipeline.settings, "open_detector", lambda settings: TableDetector())
    path = tmp_path / "table.jpg"
    path.write_bytes(table_photo())
    out = tmp_path / "read.jpg"
    assert main(["read-table", str(path), "--json", "--annotate", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == service.post("/v1/read-table", files=upload(path.read_bytes())).json()
    assert cv2.imread(str(out)).shape[:2] == (1000, 1000)
    assert main(["read-table", str(path)]) == 0
    text = capsys.readouterr().out
    assert "seat 1: 2m 3m 4m 6p 7p 8p 2s 3s 4s 7s [pong:9s]" in text and "winner (guess): seat 0" in text


@pytest.mark.parametrize(("data", "name", "kind", "status", "code"), [
    (b"hello", "notes.txt", "text/plain", 415, "unsupported_media_type"),
    (b"%PDF-1.7 ...", "table.jpg", "image/jpeg", 415, "unsupported_media_type"),
    (b"", "table.jpg", "image/jpeg", 422, "invalid_image"),
    (b"\xff\xd8\xff" + b"\x13" * 500, "table.jpg", "image/jpeg", 422, "invalid_image"),
    (encode(np.zeros((20, 20, 3), np.uint8)), "tiny.jpg", "image/jpeg", 422, "image_shape"),
])
def test_bad_photos_are_refused(service: TestClient, data: bytes, name: str, kind: str, status: int,
                                code: str) -> None:
    r = service.post("/v1/read-table", files=upload(data, name, kind))
    assert r.status_code == status, r.text
    assert set(r.json()) == {"error"} and r.json()["error"]["code"] == code and r.json()["error"]["message"]


def test_no_image_field_is_refused(service: TestClient) -> None:
    r = service.post("/v1/read-table", files={"photo": ("t.jpg", table_photo(), "image/jpeg")})
    assert r.status_code == 422 and set(r.json()) == {"error"}


def test_without_a_model_the_service_says_so() -> None:
    app = create_app(model_path=NO_MODEL)
    with TestClient(app) as client:
        r = client.post("/v1/read-table", files=upload(table_photo()))
    assert r.status_code == 503 and set(r.json()) == {"error"}


@pytest.mark.parametrize("content", [None, b"not a photo"])
def test_the_command_line_refuses_in_one_line(tmp_path: Path, capsys, content: bytes | None) -> None:
    path = tmp_path / "table.jpg"
    if content is not None:
        path.write_bytes(content)
    assert main(["read-table", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("zhuoji read-table: error:") and err.count("\n") == 1
