"""The table screen's "Teach it your set" step in a real headless Chromium, at 375 px and 1280 px, with the shipped
models: a photo that is not three rows of nine is refused with what was found; the 27 tiles (composed from the
CC0 art) are taught and kept; a round photo is then read with the set's calibration (the page says so and sends
the table's id); a calibration from older models is left out with "recalibrate: …"; removing it is one tap.
Screenshots go to ``artefacts/screenshots/``; no console error and no HTTP error but the one refusal."""

from __future__ import annotations

import re
from collections.abc import Iterator

import cv2
import numpy as np
import pytest

from api.service.app import create_app
from datasets.tile_photos import ART, calibration_photo, load_tiles, random_photo
from tests.api.support import model_path
from tests.api.web_support import (
    DESKTOP,
    ENGLISH,
    PHONE,
    WEB_MARKS,
    Problems,
    ServerThread,
    edit_headers,
    screenshot,
    sync_api,
)
from tests.tables.test_table_calibration import made_calibration
from vision.classify import DEFAULT_CLASSIFIER

pytestmark = [*WEB_MARKS,
              pytest.mark.skipif(not (ART / "Regular" / "Front.png").is_file(), reason="no CC0 tile art in ../shared"),
              pytest.mark.skipif(model_path() is None or not DEFAULT_CLASSIFIER.is_file(),
                                 reason="needs the shipped detector and crop classifier")]



@pytest.fixture
def served(tmp_path) -> Iterator[str]:
    app = create_app(model_path=model_path(), database=f"sqlite:///{tmp_path / 'tables.db'}")
    with ServerThread(app) as server:
        yield server.url
    assert app.state.internal_errors == 0
    app.state.tables.close()


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> dict[str, str]:
    tiles = load_tiles("regular")
    folder = tmp_path_factory.mktemp("photos")
    paths = {"set": folder / "set.jpg", "hand": folder / "hand.jpg"}
    cv2.imwrite(str(paths["set"]), calibration_photo(np.random.default_rng(5), tiles).image)
    cv2.imwrite(str(paths["hand"]), random_photo(np.random.default_rng(6), tiles).image)
    return {k: str(v) for k, v in paths.items()}


@pytest.mark.parametrize("width", [375, 1280])
def test_teach_the_table_its_set(browser, served, photos, tmp_path, width):
    expect = sync_api.expect
    url = served
    page = browser.new_page(**(PHONE if width == 375 else DESKTOP))
    page.add_init_script(ENGLISH)  # its messages are read in English
    problems = Problems(page, allow_status=(422,))
    shot = lambda name: screenshot(page, tmp_path, f"table-set-{width}-{name}.png")  # noqa: E731
    page.goto(url + "/#table")
    page.locator("#t-start").click()
    expect(page.locator("#set-card")).to_be_visible()
    expect(page.locator("#set-state")).to_contain_text("Not taught yet")
    expect(page.locator("#set-clear")).to_be_hidden()
    table_id = page.evaluate("T.table.id")

    # A photo of a hand is no calibration photo: refused with what was found, nothing kept.
    with page.expect_response(f"**/v1/tables/{table_id}/calibrate") as refused:
        page.set_input_files("#set-file", photos["hand"])
    assert refused.value.status == 422
    expect(page.locator("#set-status")).to_contain_text(re.compile(r"found \d+ tiles; a calibration photo"))
    expect(page.locator("#set-status")).to_have_class("status error")
    shot("1-refused")

    # The 27 tiles: taught and kept with the table.
    with page.expect_response(f"**/v1/tables/{table_id}/calibrate"):
        page.set_input_files("#set-file", photos["set"])
    expect(page.locator("#set-status")).to_contain_text("Your set is taught")
    expect(page.locator("#set-state")).to_contain_text("This table's photos are read with your set's calibration.")
    expect(page.locator("#set-take")).to_contain_text("Photograph again")
    expect(page.locator("#set-clear")).to_be_visible()
    kept = page.request.get(f"{url}/v1/tables/{table_id}/calibration").json()
    assert kept["calibration"]["model"] == DEFAULT_CLASSIFIER.name
    assert page.evaluate("T.table.version") == kept["table"]["version"] == 2
    shot("2-taught")

    # A round photo of seat 0 is read with it: the page sends the table's id and says what the server did.
    with page.expect_file_chooser() as chooser:
        page.locator("#s0-photo").click()
    with page.expect_response("**/v1/score") as answer:
        chooser.value.set_files(photos["hand"])
    assert answer.value.json()["calibration"] == {"applied": True, "source": "table",  # the table's id was sent
                                                  "message": "read with your set's calibration"}
    expect(page.locator("#status")).to_contain_text("Read with your set's calibration.")
    shot("3-round-photo")

    # The models were retrained: the kept calibration no longer fits; the photo is read without it, and said so.
    old = page.request.put(f"{url}/v1/tables/{table_id}/calibration", data=made_calibration("zhuoji-crops-old.onnx"),
                           headers=edit_headers(page, table_id))
    assert old.status == 200
    with page.expect_file_chooser() as chooser:
        page.locator("#s1-photo").click()
    with page.expect_response("**/v1/score"):
        chooser.value.set_files(photos["hand"])
    expect(page.locator("#status")).to_contain_text("recalibrate: this calibration was made with the crop "
                                                    "classifier zhuoji-crops-old.onnx")
    shot("4-recalibrate")

    # Remove it: photos are read with the shipped models only.
    page.reload()
    expect(page.locator("#set-state")).to_contain_text("The models were updated since your set was taught")
    assert "zhuoji-crops-old.onnx" in page.locator("#set-state b").get_attribute("title")
    expect(page.locator("#set-clear")).to_be_visible()
    expect(page.locator("#set-disagreed li")).to_have_count(2)  # the made-up file lists 1s and 7s
    expect(page.locator("#set-disagreed")).to_contain_text("1s 1条 was read as other")
    shot("5-kept-after-reload")
    page.locator("#set-clear").click()
    expect(page.locator("#set-state")).to_contain_text("Not taught yet")
    expect(page.locator("#set-status")).to_contain_text("Removed")
    assert page.request.get(f"{url}/v1/tables/{table_id}/calibration").json()["calibration"] is None
    shot("6-removed")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert problems.lines == []
    page.close()
