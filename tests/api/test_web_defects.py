"""What a new user tripped on, in a real headless Chromium at 375 px: each test failed on the page before its fix.

Tiles not in the 108-tile set, stale retake advice and photos, a 点炮 that showed a fan and then "not allowed",
typed hands answered with the page's own vaguer messages, a picker that did not say which tile it corrects, the
favicon 404.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from api.service.app import create_app
from tests.api.support import SAMPLES, WIN_ROW, ScriptedDetector
from tests.api.web_support import (
    ENGLISH,
    PHONE,
    WEB_MARKS,
    Problems,
    ServerThread,
    screenshot,
    sync_api,
)

pytestmark = WEB_MARKS
expect = sync_api.expect



@pytest.fixture(scope="module")
def served() -> Iterator[tuple[object, str]]:
    app = create_app(model_path="/nonexistent/model.onnx")
    with ServerThread(app) as server:
        yield app, server.url
    assert app.state.internal_errors == 0


@pytest.fixture
def page(browser, served) -> Iterator[object]:
    page = browser.new_page(**PHONE)
    page.add_init_script(ENGLISH)  # its messages are read in English
    page.problems = Problems(page, allow_status=(415, 422))  # the refusals these tests provoke on purpose
    page.goto(served[1])
    yield page
    assert page.problems.lines == []
    page.close()


def upload(page, app, tiles: list[str]) -> None:
    app.state.detector = ScriptedDetector(tiles)
    page.set_input_files("#file", str(SAMPLES[0]))
    expect(page.locator("#overlay g.box")).to_have_count(len(tiles))


def type_hand(page, concealed: str, melds: str = "") -> None:
    page.locator("#hand summary").click()
    page.fill("#hand-text", concealed)
    page.fill("#meld-text", melds)
    page.locator("#text-score").click()


def test_a_tile_not_in_the_108_set_is_removed_and_said_so(page, served, tmp_path):
    app, _ = served
    upload(page, app, WIN_ROW[:6] + ["other"] + WIN_ROW[6:])  # a flower among a complete hand: 15 boxes
    expect(page.locator("#status")).to_contain_text("1 tile not in the 108-tile set (a wind, dragon or flower) — removed")
    expect(page.locator("#hand-strip .tile")).to_have_count(14)
    expect(page.locator("#overlay g.box.foreign text")).to_have_text("✕")
    # Scored without it (a 平胡 on a discard: the 豆 gate refuses it), and none of the old misleading advice.
    expect(page.locator("#hand-type")).to_contain_text("平胡")
    text = page.locator("main").inner_text()
    for wrong in ("counted twice", "hard to read", "tap it and choose", "could not be read"):
        assert wrong not in text
    screenshot(page, tmp_path, "defect-375-foreign-removed.png")


def test_a_correction_clears_the_retake_advice(page, served):
    app, _ = served
    upload(page, app, WIN_ROW[:12])  # 12 tiles: "a tile may be hidden" — retake
    expect(page.locator("#retake")).to_be_visible()
    page.locator('#overlay g.box[data-index="0"] rect').tap()
    page.locator('#picker-grid [data-tile="1m"]').tap()
    expect(page.locator("#retake")).to_be_hidden()
    expect(page.locator("#photo")).to_be_visible()  # corrections are made on the photo: it stays


def test_a_typed_hand_replaces_the_photo_and_its_advice(page, served):
    app, _ = served
    upload(page, app, WIN_ROW[:12])
    expect(page.locator("#retake")).to_be_visible()
    type_hand(page, "123m456p789s1155p")
    expect(page.locator("#hand-type")).to_contain_text("叫牌")
    expect(page.locator("#retake")).to_be_hidden()
    expect(page.locator("#photo")).to_be_hidden()
    expect(page.locator("#overlay g.box")).to_have_count(0)


def test_a_failed_upload_clears_the_old_photo(page, served, tmp_path):
    app, _ = served
    upload(page, app, WIN_ROW[:12])
    expect(page.locator("#retake")).to_be_visible()
    page.set_input_files("#file", files=[{"name": "notes.txt", "mimeType": "image/jpeg", "buffer": b"not a photo"}])
    expect(page.locator("#status")).to_have_class("status error")
    expect(page.locator("#photo")).to_be_hidden()
    expect(page.locator("#retake")).to_be_hidden()
    expect(page.locator("#hand-strip .tile")).to_have_count(0)


def test_a_refused_discard_win_is_one_verdict_with_why(page):
    page.locator("label:has(input[name=how][value=discard])").tap()
    type_hand(page, "123m456p789s1155p1p")  # 平胡 on a discard, no 豆: 胡牌通行证 refuses it
    expect(page.locator("#verdict")).to_contain_text("不能胡")
    expect(page.locator("#verdict")).to_contain_text("no win on this discard")
    expect(page.locator("#verdict-why")).to_contain_text("Why:")
    expect(page.locator("#verdict-why")).to_contain_text("自摸")
    assert page.locator("#result-body .fan b").count() == 0  # no big fan that is never paid
    page.locator("label:has(input[name=how][value=self])").tap()
    expect(page.locator("#fan")).to_contain_text("W = 2")
    expect(page.locator("#verdict")).to_have_count(0)


@pytest.mark.parametrize(("concealed", "melds", "shown"), [
    ("123m456p789s1155p1z", "", "honor tiles (z) are not in the 108-tile set"),
    ("11111m", "", "more than 4 copies of 1m"),
    ("123m456p789s11p", "pung:5m", "Meld “pung:5m”: write the type and the tile, e.g. pong:5m"),
    ("123m456p789s1", "", "ranks '1' have no suit letter"),
])
def test_typed_hands_get_the_servers_message(page, concealed, melds, shown):
    type_hand(page, concealed, melds)
    expect(page.locator("#score-error")).to_contain_text(shown)
    assert "Input should be" not in page.locator("#result-body").inner_text()  # no raw validator text
    assert page.locator("#hand-text").input_value() == concealed  # what was typed stays to be fixed


def test_typed_full_width_digits_and_a_meld_without_colon_are_read(page):
    type_hand(page, "１２３ｍ４５６ｐ７８９ｓ１ｐ", "pong5m")
    expect(page.locator("#hand-type")).to_contain_text("叫牌")
    expect(page.locator("#hand-strip .tile")).to_have_count(10)
    expect(page.locator("#meld-strip .meld")).to_have_count(1)


def test_the_picker_shows_the_tile_being_corrected(page, served, tmp_path):
    app, _ = served
    upload(page, app, WIN_ROW)
    page.locator('#overlay g.box[data-index="1"] rect').tap()
    expect(page.locator("#picker-title")).to_contain_text("tile 2 of the hand: read as 2m")
    expect(page.locator("#picker-current .tile")).to_have_attribute("data-tile", "2m")
    expect(page.locator('#picker-grid [data-tile="2m"]')).to_have_class("tile m current")
    assert page.locator("#picker-grid .current").count() == 1
    screenshot(page, tmp_path, "defect-375-picker.png")


def test_favicon(page, served):
    icon = page.request.get(served[1] + "/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert page.evaluate("document.querySelector('link[rel=icon]').href").endswith("/web/favicon.svg")
