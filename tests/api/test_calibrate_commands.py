"""Teach it your set on the command line and over HTTP: ``zhuoji calibrate``, ``read --calibration``,
``POST /v1/calibrate`` and the ``calibration`` form field, on photos composed from the CC0 tile art."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from api.cli import main
from api.service.app import create_app
from datasets.tile_photos import ART, calibration_photo, load_tiles, random_photo
from tests.api.support import encode, model_path
from vision.calibrate import parse_calibration
from vision.classify import DEFAULT_CLASSIFIER

needs_art = pytest.mark.skipif(not (ART / "Regular" / "Front.png").is_file(), reason="no CC0 tile art in ../shared")
needs_models = pytest.mark.skipif(model_path() is None or not DEFAULT_CLASSIFIER.is_file(),
                                  reason="needs the shipped detector and crop classifier")


@pytest.mark.slow
@needs_art
@needs_models
def test_calibrate_and_read_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import cv2

    tiles = load_tiles("regular")
    cal_file, out = tmp_path / "cal.jpg", tmp_path / "set.json"
    cv2.imwrite(str(cal_file), calibration_photo(np.random.default_rng(3), tiles, upside_down=True).image)
    assert main(["calibrate", str(cal_file), "--out", str(out)]) == 0
    assert "27 of 27" in capsys.readouterr().out
    cal = parse_calibration(out.read_text())
    assert cal.kind == "features" and cal.references.shape[:2] == (27, 4)
    photo = tmp_path / "hand.jpg"
    cv2.imwrite(str(photo), random_photo(np.random.default_rng(4), tiles).image)
    assert main(["calibrate", str(photo)]) == 2
    assert re.search(r"found \d+ tiles; a calibration photo shows the 27", capsys.readouterr().err)
    assert main(["read", str(photo), "--json", "--calibration", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["tiles"]
    (tmp_path / "bad.json").write_text("{}")
    for bad in ("bad.json", "missing.json"):
        assert main(["read", str(photo), "--calibration", str(tmp_path / bad)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "calibration" in err and "Traceback" not in err


@pytest.mark.slow
@needs_art
@needs_models
def test_calibrate_endpoint_and_the_calibration_field() -> None:
    tiles = load_tiles("regular")
    cal_jpeg = encode(calibration_photo(np.random.default_rng(5), tiles).image)
    hand_jpeg = encode(random_photo(np.random.default_rng(6), tiles).image)
    app = create_app(model_path=model_path())
    with TestClient(app) as c:
        r = c.post("/v1/calibrate", files={"image": ("cal.jpg", cal_jpeg, "image/jpeg")})
        assert r.status_code == 200, r.text
        body = r.json()
        assert parse_calibration(json.dumps(body)).references.shape[:2] == (27, 4)
        refused = c.post("/v1/calibrate", files={"image": ("hand.jpg", hand_jpeg, "image/jpeg")})
        assert refused.status_code == 422
        assert refused.json()["error"]["code"] == "calibration_photo"
        assert re.search(r"found \d+ tiles; a calibration photo shows the 27", refused.json()["error"]["message"])
        files = {"image": ("hand.jpg", hand_jpeg, "image/jpeg")}
        read = c.post("/v1/read", files=files, data={"calibration": json.dumps(body)})
        assert read.status_code == 200, read.text
        assert len(read.json()["tiles"]) >= 20
        bad = c.post("/v1/read", files=files, data={"calibration": "{\"version\": 1}"})
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_calibration"
        scored = c.post("/v1/score", files=files, data={"calibration": json.dumps(body)})
        assert scored.status_code == 200, scored.text
    assert app.state.internal_errors == 0
