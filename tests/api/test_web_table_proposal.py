"""The table screen's "相机读到一局 The camera proposes a round" in a real headless Chromium at 375 and 1280 px: a
round posted to ``/v1/tables/{id}/proposal`` (as ``zhuoji live --table --server`` posts it) shows with its frame,
a tap fills the round form as a photo of the table does, one misread tile is corrected, and the round is saved
with the totals the engine gives for it; the proposal is then gone. Dismiss clears it; the English labels. The
proposal is the pipeline's read-table answer for the hand-built table ``WON`` (``tests/vision/table_support.py``)
with one tile misread, over a drawn picture of it; screenshots go to ``artefacts/screenshots/``.
"""

from __future__ import annotations

import cv2
import pytest

from pipeline.proposal import proposal_body
from pipeline.table_photo import read_table
from tests.api.test_web_table_photo import (
    MISREAD_AS,
    MISREAD_FROM,
    MISREAD_SEAT,
    NAMES,
    WON,
    MisreadingTableDetector,
    mpsz,
    open_table,
    seat_expected,
    table_picture,
)
from tests.api.web_support import (
    DESKTOP,
    ENGLISH,
    PHONE,
    WEB_MARKS,
    Problems,
    edit_headers,
    screenshot,
    sync_api,
)

pytestmark = WEB_MARKS
expect = sync_api.expect
expect.set_options(timeout=15_000)


def camera_proposal(tmp_path) -> dict:
    """What live mode posts for the table ``WON``: the read-table answer of its frame (the drawn picture) and the
    frame as a JPEG."""
    frame = cv2.imread(str(table_picture(tmp_path / "frame.jpg")))
    return proposal_body(read_table(MisreadingTableDetector(), frame), frame).model_dump(mode="json")


def propose(page, url: str, table: dict, body: dict) -> str:
    posted = page.request.post(f"{url}/v1/tables/{table['id']}/proposal", data=body,
                               headers=edit_headers(page, table["id"]))
    assert posted.status == 201, posted.text()
    return posted.json()["id"]


def waiting(page, url: str, table: dict) -> dict | None:
    return page.request.get(f"{url}/v1/tables/{table['id']}/proposal").json()["proposal"]


@pytest.mark.parametrize("width", [375, 1280])
def test_the_cameras_round_fills_the_form_and_is_saved(browser, served, tmp_path, width):
    _, url = served
    context = browser.new_context(**(PHONE if width == 375 else DESKTOP))
    page = context.new_page()
    problems = Problems(page)
    table = open_table(page, url)
    expect(page.locator("#tp-proposal")).to_be_hidden()  # nothing proposed yet
    propose(page, url, table, camera_proposal(tmp_path))

    card = page.locator("#tp-proposal")
    expect(card).to_be_visible()  # the page asks every few seconds
    expect(card).to_contain_text("相机读到一局")
    tiles = sum(1 for d in camera_proposal(tmp_path)["table"]["detections"] if d["seat"] is not None)
    expect(page.locator("#tp-proposal-what")).to_contain_text(f"四家的 {tiles} 张牌")
    expect(page.locator("#tp-proposal-img")).to_be_visible()
    assert page.locator("#tp-proposal-img").evaluate("(img) => img.naturalWidth") == 1000  # the frame as sent
    screenshot(page, tmp_path, f"table-proposal-{width}-1-proposed.png")

    # A tap on the frame fills the round form, exactly as a photo of the table does.
    page.locator("#tp-proposal-img").click()
    expect(card).to_be_hidden()
    expect(page.locator("#tp-status")).to_contain_text(f"相机读到四家的 {tiles} 张牌")
    expect(page.locator("#tp-overlay g.box")).to_have_count(len(camera_proposal(tmp_path)["table"]["detections"]))
    expect(page.locator("#r-winner")).to_have_value("0")
    expect(page.locator("#r-win-tile")).to_have_value(WON.seats[0].concealed[-1])
    expect(page.locator("#s0-tiles")).to_have_value(seat_expected(0, winner=True))
    expect(page.locator("#s3-tiles")).to_have_value(mpsz([*WON.seats[3].concealed[:-1], MISREAD_AS]))
    for seat in range(4):
        expect(page.locator(f"#s{seat}-river")).to_have_value(mpsz(WON.seats[seat].river))
    expect(page.locator("#r-flipped")).to_have_value(WON.flipped)
    expect(page.locator("#tp-frame .tp-tag.bottom")).to_have_text(NAMES[0])
    screenshot(page, tmp_path, f"table-proposal-{width}-2-filled.png")

    # One correction by a tap, the players confirm 自摸, preview, save.
    page.locator(f'#tp-seats .tp-seat[data-seat="{MISREAD_SEAT}"] .tp-hand .tile[data-tile="{MISREAD_AS}"]').click()
    page.locator(f'#picker-grid .tile[data-tile="{MISREAD_FROM}"]').click()
    expect(page.locator("#s3-tiles")).to_have_value(seat_expected(3))
    page.locator('#tp-winner button[data-how="self"]').click()
    page.locator("#preview").click()
    expect(page.locator("#ledger")).to_contain_text(NAMES[0])
    page.locator("#save-round").click()
    expect(page.locator("#round-status")).to_contain_text("第 1 局已保存")

    # Saved as the table lies, with the engine's totals; the proposal is done with, on the server and the page.
    rounds = page.request.get(f"{url}/v1/tables/{table['id']}/rounds").json()["rounds"]
    saved = rounds[0]["round"]
    assert saved["outcome"]["winners"] == [0] and saved["outcome"]["self_drawn"] is True
    assert [p["concealed"] for p in saved["players"]] == [seat_expected(s, winner=s == 0) for s in range(4)]
    engine = page.request.post(f"{url}/v1/settle", data={"rules": table["rules"], "dealer": rounds[0]["dealer"],
                                                         "streak": rounds[0]["streak"], **saved})
    assert engine.status == 200, engine.text()
    totals = [p["total"] for p in engine.json()["players"]]
    assert page.request.get(f"{url}/v1/tables/{table['id']}").json()["totals"] == totals and totals[0] > 0
    for seat, total in enumerate(totals):
        expect(page.locator(f"#total-{seat}")).to_have_text(f"+{total}" if total > 0 else str(total))
    assert waiting(page, url, table) is None
    page.wait_for_timeout(3500)  # a poll after the save: nothing offered again
    expect(card).to_be_hidden()
    expect(page.locator("#tp-view")).to_be_hidden()
    screenshot(page, tmp_path, f"table-proposal-{width}-3-saved.png")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert problems.lines == []
    context.close()


def test_dismiss_clears_the_proposal_and_a_new_one_shows(browser, served, tmp_path):
    _, url = served
    context = browser.new_context(**PHONE)
    context.add_init_script(ENGLISH)
    page = context.new_page()
    problems = Problems(page)
    table = open_table(page, url)
    body = camera_proposal(tmp_path)
    first = propose(page, url, table, body)
    card = page.locator("#tp-proposal")
    expect(card).to_contain_text("The camera proposes a round 相机读到一局")
    expect(page.locator("#tp-proposal-dismiss")).to_have_text("Dismiss")
    screenshot(page, tmp_path, "table-proposal-375-english.png")
    page.locator("#tp-proposal-dismiss").click()
    expect(card).to_be_hidden()
    assert waiting(page, url, table) is None
    expect(page.locator("#tp-view")).to_be_hidden()  # dismissed: nothing filled
    assert page.locator("#s0-tiles").input_value() == ""

    # The next round the camera proposes shows again (without a frame: the boxes over a plain picture).
    second = propose(page, url, table, {**body, "frame": None})
    assert second != first
    expect(card).to_be_visible()
    expect(page.locator("#tp-proposal-img")).to_be_hidden()
    page.locator("#tp-proposal-use").click()
    expect(page.locator("#tp-status")).to_contain_text("The camera read")
    expect(page.locator("#r-winner")).to_have_value("0")
    expect(page.locator("#tp-overlay g.box")).to_have_count(len(body["table"]["detections"]))
    assert problems.lines == []
    context.close()
