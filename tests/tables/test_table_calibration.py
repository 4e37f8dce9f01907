"""A table keeps its set's calibration ("teach it your set"): the store, /v1/tables/{id}/calibration and
/v1/tables/{id}/calibrate, the ``table`` field of /v1/read and /v1/score, and ``zhuoji table calibrate`` /
``read --table``, on SQLite and PostgreSQL. A kept calibration that no longer fits the crop classifier (the models
were retrained) never refuses a photo: it is read without it and the answer says "recalibrate: …"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import inspect as sa_inspect

from api.cli import main
from api.service.app import create_app
from datasets.tile_photos import ART, calibration_photo, load_tiles, random_photo
from pipeline.models import CalibrationIn, DisagreedTile
from tables import StaleVersion, TableNotFound, TableStore
from tests.api.support import encode, model_path
from tests.tables.support import bearer, remember_keys
from vision.calibrate import Calibration
from vision.classify import DEFAULT_CLASSIFIER, file_sha256

NAMES = ["Ann", "Bo", "Cy", "Di"]
needs_art = pytest.mark.skipif(not (ART / "Regular" / "Front.png").is_file(), reason="no CC0 tile art in ../shared")
needs_models = pytest.mark.skipif(model_path() is None or not DEFAULT_CLASSIFIER.is_file(),
                                  reason="needs the shipped detector and crop classifier")


SHIPPED_SHA = file_sha256(DEFAULT_CLASSIFIER) if DEFAULT_CLASSIFIER.is_file() else "0" * 64


def made_calibration(model: str = "zhuoji-crops-int8.onnx", dim: int = 16, seed: int = 0,
                     sha: str | None = SHIPPED_SHA) -> dict:
    """A well-formed calibration JSON, as `zhuoji calibrate` writes them, with random references (made with the
    shipped crop classifier's file unless ``sha`` says otherwise)."""
    refs = np.random.default_rng(seed).normal(size=(27, 4, dim)).astype(np.float32)
    made = Calibration(refs, "features", model, 25 / 27, sha).to_json()
    made["disagreed"] = [{"tile": "1s", "read_as": "other"}, {"tile": "7s", "read_as": "9s"}]
    return made


# ------------------------------------------------------------------------------------------------ the store


def test_the_store_keeps_one_calibration_per_table(db_url):
    store = TableStore.open(db_url)
    try:
        table = store.create_table("Friday", NAMES).table
        other = store.create_table("Saturday", NAMES).table
        assert store.get_calibration(table.id) is None
        made = made_calibration()
        after, kept = store.set_calibration(table.id, CalibrationIn.model_validate(made), expected_version=1)
        assert after.version == 2 and after.totals == table.totals and after.rounds == 0
        assert (kept.model, kept.kind, kept.agreement) == ("zhuoji-crops-int8.onnx", "features", made["agreement"])
        assert kept.model_sha256 == made["model_sha256"] == store.get_calibration(table.id).model_sha256
        assert kept.disagreed == [DisagreedTile(tile="1s", read_as="other"), DisagreedTile(tile="7s", read_as="9s")]
        assert kept.calibration is None
        summary = store.get_calibration(table.id)
        assert summary is not None and summary.calibration is None and summary.created_at == kept.created_at
        assert summary.disagreed == kept.disagreed
        assert store.get_calibration(table.id, full=True).calibration.model_dump(mode="json") == made
        assert store.get_calibration(other.id) is None  # one table's set is not another's
        with pytest.raises(StaleVersion) as stale:
            store.set_calibration(table.id, CalibrationIn.model_validate(made_calibration(seed=1)), expected_version=1)
        assert stale.value.current.version == 2
        replaced = made_calibration(seed=2)
        replaced.pop("disagreed")  # a file from before the list was kept
        after, kept = store.set_calibration(table.id, CalibrationIn.model_validate(replaced))
        assert after.version == 3 and kept.disagreed == []
        assert store.get_calibration(table.id, full=True).calibration.references_f16 == replaced["references_f16"]
        assert store.clear_calibration(table.id)[1] is True
        table_now, had = store.clear_calibration(table.id)
        assert had is False and table_now.version == 4 and store.get_calibration(table.id) is None
        store.set_calibration(other.id, CalibrationIn.model_validate(made))
        store.delete_table(other.id)
        for unknown in (other.id, "nope"):
            with pytest.raises(TableNotFound):
                store.get_calibration(unknown)
            with pytest.raises(TableNotFound):
                store.set_calibration(unknown, CalibrationIn.model_validate(made))
    finally:
        store.close()


def test_a_calibration_to_keep_is_refused_for_its_shape_before_the_store():
    """What the store's own checks refused before the body was typed: a wrong type, a model name that is no file
    name, an unknown kind, an agreement outside 0..1, a disagreed tile without what it was read as, a SHA-256 that
    is no hex digest, a key no calibration has."""
    made = made_calibration()
    for bad in ([1, 2], {**made, "model": 7}, {**made, "model": ""}, {**made, "kind": "pixels"},
                {**made, "agreement": 2}, {**made, "agreement": True}, {**made, "disagreed": [{"tile": "1s"}]},
                {**made, "model_sha256": "abc"}, {**made, "colour": "green"}):
        with pytest.raises(ValueError, match="validation error"):
            CalibrationIn.model_validate(bad)


def test_a_calibration_kept_without_an_agreement_still_reads(db_url):
    """A calibration kept when its agreement could be left out (0 was stored in the summary column) reads back
    with that agreement, and its table's photos still get it."""
    store = TableStore.open(db_url)
    try:
        table = store.create_table("Old set", NAMES).table
        made = made_calibration()
        store.set_calibration(table.id, CalibrationIn.model_validate({**made, "agreement": 0.0}))
        from tables.schema import table_calibrations

        with store.engine.begin() as conn:
            old = {k: v for k, v in made.items() if k != "agreement"}
            conn.execute(table_calibrations.update().where(table_calibrations.c.table_id == table.id)
                         .values(calibration=old))
        kept = store.get_calibration(table.id, full=True)
        assert kept.calibration.agreement == 0.0 and kept.calibration.references_f16 == made["references_f16"]
    finally:
        store.close()


# ---------------------------------------------------------------------------------------------------- HTTP


@pytest.fixture
def client(db_url):
    app = create_app(model_path=model_path() or "/nonexistent/model.onnx", database=db_url)
    with TestClient(app) as c:
        remember_keys(c)
        yield c
    assert app.state.internal_errors == 0
    app.state.tables.close()


def new_table(client) -> dict:
    r = client.post("/v1/tables", json={"name": "Friday", "players": NAMES})
    assert r.status_code == 201, r.text
    return r.json()


def test_calibration_json_over_http(client):
    table = new_table(client)
    url = f"/v1/tables/{table['id']}/calibration"
    shown = {k: v for k, v in table.items() if k not in ("edit_key", "edit_url", "view_url")}
    assert client.get(url).json() == {"calibration": None, "table": shown}
    made = made_calibration()
    r = client.put(url, json=made, params={"expected_version": 1})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["table"]["version"] == 2 and body["calibration"]["disagreed"] == made["disagreed"]
    assert body["calibration"]["calibration"] is None  # the ~75 kB of references only when asked for
    assert client.get(url, params={"full": "true"}).json()["calibration"]["calibration"] == made
    stale = client.put(url, json=made, params={"expected_version": 1})
    assert stale.status_code == 409 and stale.json()["table"]["version"] == 2
    for bad in ({"version": 1}, {**made, "references_f16": "###"}, {**made, "agreement": 3}, [1, 2]):
        r = client.put(url, json=bad)
        assert r.status_code == 422, r.text
        assert r.json()["error"]["code"] in ("invalid_calibration", "invalid_request")
    r = client.put(url, content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code in (400, 422) and r.json()["error"]["message"]
    assert client.get(url).json()["table"]["version"] == 2  # nothing refused was written
    gone = client.delete(url, params={"expected_version": 2})
    assert gone.status_code == 200 and gone.json()["calibration"] is None and gone.json()["table"]["version"] == 3
    for method, path in (("GET", "/v1/tables/0123456789ab/calibration"), ("PUT", "/v1/tables/nope/calibration"),
                         ("DELETE", "/v1/tables/0123456789ab/calibration")):
        r = client.request(method, path, json=made if method == "PUT" else None, headers=bearer("a key of no table"))
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", (method, r.text)


@pytest.mark.slow
@needs_art
@needs_models
def test_teach_a_table_its_set_and_read_its_photos_with_it(client):
    tiles = load_tiles("regular")
    cal_jpeg = encode(calibration_photo(np.random.default_rng(5), tiles).image)
    hand_jpeg = encode(random_photo(np.random.default_rng(6), tiles).image)
    table = new_table(client)
    tid = table["id"]
    photo = {"image": ("hand.jpg", hand_jpeg, "image/jpeg")}
    none = client.post("/v1/read", files=photo, data={"table": tid})
    assert none.status_code == 200 and none.json()["calibration"]["applied"] is False

    refused = client.post(f"/v1/tables/{tid}/calibrate", files=photo)  # a hand, not three rows of nine
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "calibration_photo"
    assert re.search(r"found \d+ tiles; a calibration photo shows the 27", refused.json()["error"]["message"])
    unknown = client.post("/v1/tables/0123456789ab/calibrate", files={"image": ("c.jpg", cal_jpeg, "image/jpeg")},
                          headers=bearer("a key of no table"))
    assert unknown.status_code == 404
    r = client.post(f"/v1/tables/{tid}/calibrate", files={"image": ("c.jpg", cal_jpeg, "image/jpeg")},
                    params={"expected_version": 1})
    assert r.status_code == 200, r.text
    kept = r.json()["calibration"]
    assert kept["model"] == DEFAULT_CLASSIFIER.name and kept["kind"] == "features" and kept["recalibrate"] is None
    assert len(kept["disagreed"]) == round((1 - kept["agreement"]) * 27)
    assert r.json()["table"]["version"] == 2

    read = client.post("/v1/read", files=photo, data={"table": tid})
    assert read.status_code == 200, read.text
    assert read.json()["calibration"] == {"applied": True, "source": "table",
                                          "message": "read with your set's calibration"}
    sent = client.post("/v1/read", files=photo,
                       data={"calibration": json.dumps(client.get(f"/v1/tables/{tid}/calibration?full=true")
                                                       .json()["calibration"]["calibration"])})
    assert [t["tile"] for t in sent.json()["tiles"]] == [t["tile"] for t in read.json()["tiles"]]
    assert sent.json()["calibration"]["source"] == "request"
    scored = client.post("/v1/score", files=photo, data={"table": tid, "self_drawn": "true"})
    assert scored.status_code == 200 and scored.json()["calibration"]["applied"] is True
    both = client.post("/v1/read", files=photo, data={"table": tid, "calibration": "{}"})
    assert both.status_code == 422 and "not both" in both.json()["error"]["message"]
    for path in ("/v1/read", "/v1/score"):
        r = client.post(path, files=photo, data={"table": "0123456789ab"})
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


@pytest.mark.slow
@needs_art
@needs_models
@pytest.mark.parametrize("stale", ["other model", "other size"])
def test_a_calibration_that_no_longer_fits_reads_without_it(client, stale):
    """Retrained models: a calibration made with another crop classifier (or of other vectors) is left out, the
    photo is read as without any, and the answer says to recalibrate; the same JSON sent by a client is a 422."""
    hand_jpeg = encode(random_photo(np.random.default_rng(6), load_tiles("regular")).image)
    photo = {"image": ("hand.jpg", hand_jpeg, "image/jpeg")}
    made = made_calibration("zhuoji-crops-old.onnx") if stale == "other model" \
        else made_calibration(DEFAULT_CLASSIFIER.name, dim=8)
    tid = new_table(client)["id"]
    kept = client.put(f"/v1/tables/{tid}/calibration", json=made)
    assert kept.status_code == 200
    if stale == "other model":  # known from the summary alone, before any photo
        assert "zhuoji-crops-old.onnx" in kept.json()["calibration"]["recalibrate"]
        assert client.get(f"/v1/tables/{tid}/calibration").json()["calibration"] == kept.json()["calibration"]
    plain = client.post("/v1/read", files=photo).json()
    for path in ("/v1/read", "/v1/score"):
        r = client.post(path, files=photo, data={"table": tid})
        assert r.status_code == 200, r.text
        note = r.json()["calibration"]
        assert note["applied"] is False and note["message"].startswith("recalibrate: ")
        assert "zhuoji-crops-old.onnx" in note["message"] if stale == "other model" else "8 numbers" in note["message"]
        assert [t["tile"] for t in r.json()["tiles"]] == [t["tile"] for t in plain["tiles"]]
    sent = client.post("/v1/read", files=photo, data={"calibration": json.dumps(made)})
    assert sent.status_code == 422 and sent.json()["error"]["code"] == "invalid_calibration"


@needs_models
def test_a_calibration_kept_before_the_classifier_hash_asks_for_a_new_photo(db_url):
    """Migration 0003 adds the crop classifier's SHA-256 to kept calibrations. One kept before it (a database at
    0002) is null after the upgrade: a retrained classifier keeps its file name, so it may no longer fit and says
    "recalibrate" instead of naming tiles with another network's features."""
    from pipeline.calibration import calibration_problem
    from pipeline.settings import Settings, open_detector
    from tables.db import downgrade

    store = TableStore.open(db_url)
    table = store.create_table("Friday", NAMES).table
    store.set_calibration(table.id, CalibrationIn.model_validate(made_calibration()))
    downgrade(store.engine, "0002")  # back to the schema of the release before 0003
    with store.engine.connect() as conn:
        assert "model_sha256" not in {c["name"] for c in sa_inspect(conn).get_columns("table_calibrations")}
    store.close()
    store = TableStore.open(db_url)  # upgrades to the newest
    try:
        kept = store.get_calibration(table.id)
        assert kept is not None and kept.model == DEFAULT_CLASSIFIER.name and kept.model_sha256 is None
        detector = open_detector(Settings.from_env())
        assert "another version" in calibration_problem(detector, kept.model, kept.kind, kept.model_sha256)
        assert calibration_problem(detector, kept.model, kept.kind, SHIPPED_SHA) is None
    finally:
        store.close()


# ------------------------------------------------------------------------------------------------ the CLI


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
@needs_art
@needs_models
def test_teach_a_table_its_set_on_the_command_line(capsys, db_url, tmp_path: Path):
    import cv2

    tiles = load_tiles("regular")
    cal, hand = tmp_path / "set.jpg", tmp_path / "hand.jpg"
    cv2.imwrite(str(cal), calibration_photo(np.random.default_rng(3), tiles, upside_down=True).image)
    cv2.imwrite(str(hand), random_photo(np.random.default_rng(4), tiles).image)
    code, out, _ = run(capsys, "table", "new", "Friday", "--players", ",".join(NAMES), "--db", db_url, "--json")
    tid = json.loads(out)["id"]
    code, out, _ = run(capsys, "table", "show", tid, "--db", db_url)
    assert code == 0 and "calibration: none" in out
    code, _, err = run(capsys, "table", "calibrate", tid, str(hand), "--db", db_url)
    assert code == 2 and re.search(r"found \d+ tiles; a calibration photo", err) and err.count("\n") == 1
    code, out, _ = run(capsys, "table", "calibrate", tid, str(cal), "--db", db_url, "--expected-version", "1")
    assert code == 0 and "calibration kept" in out and "of 27 as their place says" in out
    code, out, _ = run(capsys, "table", "show", tid, "--db", db_url, "--json")
    shown = json.loads(out)
    assert shown["calibration"]["model"] == DEFAULT_CLASSIFIER.name and shown["table"]["version"] == 2
    assert shown["calibration"]["recalibrate"] is None  # made with the models here: it fits
    code, out, _ = run(capsys, "table", "show", tid, "--db", db_url)
    assert "calibration: your set's" in out and "recalibrate" not in out
    code, out, _ = run(capsys, "read", str(hand), "--table", tid, "--db", db_url)
    assert code == 0 and "calibration: read with your set's calibration" in out
    code, out, _ = run(capsys, "read", str(hand), "--table", tid, "--db", db_url, "--json")
    assert json.loads(out)["calibration"]["applied"] is True

    old = tmp_path / "old.json"  # a calibration file from before the models were retrained
    old.write_text(json.dumps(made_calibration("zhuoji-crops-old.onnx")))
    code, out, _ = run(capsys, "table", "calibrate", tid, str(old), "--db", db_url)
    assert code == 0 and "recalibrate: " in out and "zhuoji-crops-old.onnx" in out
    code, out, _ = run(capsys, "table", "show", tid, "--db", db_url)  # said wherever the table is shown
    assert "\n  recalibrate: " in out and "zhuoji-crops-old.onnx" in out
    code, out, _ = run(capsys, "table", "show", tid, "--db", db_url, "--json")
    assert "zhuoji-crops-old.onnx" in json.loads(out)["calibration"]["recalibrate"]
    code, out, _ = run(capsys, "score", str(hand), "--table", tid, "--db", db_url)
    assert "calibration: recalibrate: " in out and "Traceback" not in out

    for argv, words in ((["table", "calibrate", tid, "--db", db_url], "or --clear"),
                        (["table", "calibrate", tid, str(cal), "--clear", "--db", db_url], "or --clear"),
                        (["table", "calibrate", "0123456789ab", str(cal), "--db", db_url], "no table"),
                        (["table", "calibrate", tid, str(tmp_path / "missing.jpg"), "--db", db_url], "no such file"),
                        (["read", str(hand), "--table", "0123456789ab", "--db", db_url], "no table"),
                        (["read", str(hand), "--table", tid, "--calibration", str(old), "--db", db_url], "not both")):
        code, _, err = run(capsys, *argv)
        assert code == 2 and words in err and err.count("\n") == 1 and "Traceback" not in err, (argv, err)
    (tmp_path / "bad.json").write_text('{"version": 1}')
    code, _, err = run(capsys, "table", "calibrate", tid, str(tmp_path / "bad.json"), "--db", db_url)
    assert code == 2 and "calibration" in err
    code, out, _ = run(capsys, "table", "calibrate", tid, "--clear", "--db", db_url)
    assert code == 0 and "forgotten" in out and "calibration: none" in out


def test_a_calibration_file_kept_from_the_command_line_is_checked_as_the_put_body(capsys, sqlite_url, tmp_path):
    """``zhuoji table calibrate ID set.json`` keeps what ``zhuoji calibrate --out`` wrote; a file with a key no
    calibration has, one that is no JSON, or references that do not parse is one line and exit 2, nothing kept."""
    code, out, _ = run(capsys, "table", "new", "Friday", "--players", ",".join(NAMES), "--db", sqlite_url, "--json")
    tid = json.loads(out)["id"]
    good = tmp_path / "set.json"
    good.write_text(json.dumps(made_calibration()), encoding="utf-8")
    code, out, _ = run(capsys, "table", "calibrate", tid, str(good), "--db", sqlite_url, "--json")
    assert code == 0 and json.loads(out)["calibration"]["disagreed"][1] == {"tile": "7s", "read_as": "9s"}
    bad = {"extra.json": json.dumps({**made_calibration(), "colour": "green"}), "text.json": "{nope",
           "refs.json": json.dumps({**made_calibration(), "references_f16": "###"})}
    for name, text in bad.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        code, out, err = run(capsys, "table", "calibrate", tid, str(tmp_path / name), "--db", sqlite_url)
        assert code == 2 and not out and len(err.strip().splitlines()) == 1 and name in err, (name, err)
    code, out, _ = run(capsys, "table", "show", tid, "--db", sqlite_url, "--json")
    assert json.loads(out)["table"]["version"] == 2  # only the good file was kept
