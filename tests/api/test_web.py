"""The web page in a real headless Chromium (Debian package ``chromium``, driven by Playwright for Python).

The server runs in this process (uvicorn in a thread) so one test can give it a scripted detector: the page then
shows a known hand, and correcting a tile must change the score. A second test runs the real model on a sample
photo. A 375 px wide screenshot of each is written to the test's tmp folder (and to ``ZHUOJI_SCREENSHOTS`` when
that names a folder).
"""

from __future__ import annotations

import pytest

from api.service.app import create_app
from tests.api.support import SAMPLES, WIN_ROW, ScriptedDetector, model_path
from tests.api.web_support import (
    ENGLISH,
    PHONE,
    WEB_MARKS,
    ServerThread,
    screenshot,
    sync_api,
)

pytestmark = WEB_MARKS



def test_upload_correct_a_tile_and_the_score_changes(browser, tmp_path):
    app = create_app(model_path="/nonexistent/model.onnx")
    with ServerThread(app) as server:
        app.state.detector = ScriptedDetector(WIN_ROW)  # whatever the photo, the "detector" sees this hand
        page = browser.new_page(**PHONE)
        page.add_init_script(ENGLISH)  # its messages are read in English
        expect = sync_api.expect
        page.goto(server.url)
        page.locator("label:has(input[name=how][value=discard])").tap()
        page.set_input_files("#file", str(SAMPLES[0]))
        expect(page.locator("#overlay g.box")).to_have_count(14)
        expect(page.locator("#hand-type")).to_contain_text("平胡")
        expect(page.locator("#hand-type")).to_contain_text("plain win")
        # 点炮 on a 平胡 without a 豆: one verdict, no fan shown as if it were paid.
        expect(page.locator("#verdict")).to_contain_text("no win on this discard")
        expect(page.locator("#waits")).to_contain_text("left")
        screenshot(page, tmp_path, "web-375-scored.png")

        # Tap the second tile on the photo (2m) and make it a 9m: no longer a complete hand.
        page.locator('#overlay g.box[data-index="1"] rect').tap()
        expect(page.locator("#picker")).to_be_visible()
        page.locator('#picker-grid [data-tile="9m"]').tap()
        expect(page.locator('#overlay g.box[data-index="1"] text')).to_have_text("9m")
        expect(page.locator("#hand-type")).to_contain_text("不成牌")
        screenshot(page, tmp_path, "web-375-corrected.png")

        # Back to 2m through the tile strip under the photo, then 自摸: 平胡自摸 is worth 2.
        page.locator("#hand-strip .tile").nth(1).tap()
        page.locator('#picker-grid [data-tile="2m"]').tap()
        expect(page.locator("#hand-type")).to_contain_text("平胡")
        page.locator("label:has(input[name=how][value=self])").tap()
        expect(page.locator("#fan")).to_contain_text("W = 2")
        # Removing a tile leaves 13: the page now shows the waits (叫牌) instead of a win.
        page.locator("#hand-strip .tile").nth(13).tap()
        page.locator("#picker-remove").tap()
        expect(page.locator("#hand-type")).to_contain_text("叫牌")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375  # nothing wider than the phone
        page.close()
    assert app.state.internal_errors == 0


def test_real_model_on_a_sample_photo(browser, tmp_path):
    model = model_path()
    if model is None:
        pytest.skip("no tile model: models/zhuoji-tiles-int8.onnx missing and ZHUOJI_MODEL not set")
    app = create_app(model_path=model)
    with ServerThread(app) as server:
        page = browser.new_page(**PHONE)
        page.add_init_script(ENGLISH)  # its messages are read in English
        expect = sync_api.expect
        page.goto(server.url)
        with page.expect_response("**/v1/score") as answer:
            page.set_input_files("#file", str(SAMPLES[1 if len(SAMPLES) > 1 else 0]))
        data = answer.value.json()
        expect(page.locator("#status")).to_contain_text("tiles found")
        expect(page.locator("#overlay g.box")).to_have_count(len(data["tiles"]))
        if data["tiles"]:
            # Correct the first box: its label follows and the score section is redrawn (a result through
            # /v1/hand, or what is still missing, e.g. a tile count that is not 13 or 14).
            first = data["tiles"][0]
            new = "9p" if first["tile"] != "9p" else "1m"
            page.locator(f'#overlay g.box[data-index="{first["index"]}"] rect').tap()
            page.locator(f'#picker-grid [data-tile="{new}"]').tap()
            expect(page.locator(f'#overlay g.box[data-index="{first["index"]}"] text')).to_have_text(new)
        expect(page.locator("#result-body")).not_to_be_empty()
        screenshot(page, tmp_path, "web-375-real-model.png")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        page.close()
    assert app.state.internal_errors == 0


def test_live_camera_freezes_on_a_steady_reading(browser, tmp_path):
    # The scripted detector reads the same hand from every camera frame, so after three equal readings the view
    # must freeze and show the score.
    app = create_app(model_path="/nonexistent/model.onnx")
    with ServerThread(app) as server:
        app.state.detector = ScriptedDetector(WIN_ROW)
        context = browser.new_context(**PHONE, permissions=["camera"])
        context.add_init_script(ENGLISH)
        page = context.new_page()
        page.goto(server.url)
        page.locator("#live-start").tap()
        expect = sync_api.expect
        expect(page.locator("#live")).to_be_visible()
        expect(page.locator("#status")).to_contain_text("frozen", timeout=20_000)
        expect(page.locator("#live")).to_be_hidden()
        expect(page.locator("#overlay g.box")).to_have_count(14)
        expect(page.locator("#hand-type")).to_contain_text("平胡")
        screenshot(page, tmp_path, "web-375-live-frozen.png")
        context.close()
    assert app.state.internal_errors == 0
