"""The house-rules panel drawn from GET /v1/rules, in a real headless Chromium at 375 px: grouped switches with a
one-line explanation each, the preset's values to start from, only changed switches sent, and a round input a
switch needs (weekday for 星期鸡) shown only at a table that plays it.

The answer of GET /v1/rules is a small one in the shape of the contract (issue 54), served to the page by
Playwright, so that the page's side is tested whatever rules the server has; the server's own answer is
tested with the server (tests of the rules branch).
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterator

import pytest

from tests.api.web_support import (
    PHONE,
    WEB_MARKS,
    Problems,
    screenshot,
    sync_api,
    table_link,
)

pytestmark = WEB_MARKS
expect = sync_api.expect

RULES = {
    "presets": [
        {"name": "gy-normal", "title_zh": "贵阳 正常番", "title_en": "Guiyang, normal fan",
         "rules": {"wuguji": False, "dadiaoche": 0, "xingqi_ji": None}},
        {"name": "liupanshui", "title_zh": "六盘水", "title_en": "Liupanshui",
         "rules": {"wuguji": True, "dadiaoche": 0, "xingqi_ji": None}},
    ],
    "groups": [{"name": "chickens", "title_zh": "鸡", "title_en": "Chickens"},
               {"name": "hands", "title_zh": "牌型", "title_en": "Hands"}],
    "switches": [
        {"name": "wuguji", "group": "chickens", "title_zh": "乌骨鸡", "title_en": "8p chicken",
         "explanation_zh": "八筒也是鸡", "explanation_en": "8p is a chicken too", "kind": "bool", "default": False},
        {"name": "xingqi_ji", "group": "chickens", "title_zh": "星期鸡", "title_en": "Weekday chicken",
         "explanation_zh": "星期几，几就是鸡", "explanation_en": "the weekday's rank is a chicken", "kind": "choice",
         "choices": [{"value": None, "label_zh": "不打", "label_en": "off"},
                     {"value": "sunday7", "label_zh": "星期天算7", "label_en": "Sunday is 7"}], "default": None},
        {"name": "dadiaoche", "group": "hands", "title_zh": "大吊车", "title_en": "Big crane",
         "explanation_zh": "四副落地，单吊胡", "explanation_en": "four melds laid, won on the pair", "kind": "int",
         "default": 0},
    ],
    "profiles": [],
    "round_fields": [{"name": "weekday", "kind": "int", "min": 1, "max": 7, "explanation_en": "星期鸡: 1..7, 7 = Sunday",
                      "needed_when": {"xingqi_ji": ["sunday7", "sunday_none"]}}],
}




@pytest.fixture
def page(browser) -> Iterator[object]:
    page = browser.new_page(service_workers="block", **PHONE)  # the routes below see every request
    page.problems = Problems(page)
    page.route("**/v1/rules", lambda route: route.fulfill(json=RULES))
    yield page
    assert page.problems.lines == []
    page.close()


def test_the_panel_is_drawn_from_the_rules_list_and_sends_only_changes(page, served, tmp_path):
    _app, url = served
    page.goto(url + "/#table")
    page.locator("#t-house summary").click()
    expect(page.locator("#t-switches fieldset[data-group]")).to_have_count(2)
    expect(page.locator('#t-switches [data-group="chickens"] legend')).to_have_text("鸡 Chickens")
    expect(page.locator('[data-switch="wuguji"]')).to_contain_text("乌骨鸡 — 八筒也是鸡")
    expect(page.locator("#t-preset option")).to_have_count(2)
    expect(page.locator("#sw-wuguji")).not_to_be_checked()
    page.select_option("#t-preset", "liupanshui")
    expect(page.locator("#sw-wuguji")).to_be_checked()  # the preset's value
    page.select_option("#t-preset", "gy-normal")
    page.locator("#lang").click()
    expect(page.locator('[data-switch="wuguji"]')).to_contain_text("8p chicken — 8p is a chicken too")
    page.locator("#lang").click()
    screenshot(page, tmp_path, "rules-panel-375.png")
    page.locator("#sw-wuguji").check()
    page.fill("#sw-dadiaoche", "6")
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/v1/tables")) as sent:
        page.locator("#t-start").click()
    assert sent.value.post_data_json["rules"] == {"preset": "gy-normal", "wuguji": True, "dadiaoche": 6}
    expect(page.locator("#table-title")).to_be_visible()


def test_a_round_field_shows_only_where_the_tables_rules_need_it(page, served):
    _app, url = served
    table = page.request.post(f"{url}/v1/tables", data={"name": "Weekday", "players": ["A", "B", "C", "D"],
                                                         "rules": "gy-normal"}).json()
    page.goto(table_link(url, table))
    expect(page.locator("#table-title")).to_have_text("Weekday")
    expect(page.locator("#r-field-weekday")).to_have_count(0)  # gy-normal plays no 星期鸡

    # The same table as if it played 星期鸡 (the server's answer with the switch added).
    def plays_xingqi(route) -> None:
        answer = route.fetch()
        body = answer.json()
        body["rules"] = {"preset": "gy-normal", "xingqi_ji": "sunday7"}
        route.fulfill(response=answer, json=body)

    page.route(re.compile(r"/v1/tables/[0-9a-zA-Z_-]+$"), plays_xingqi)
    page.reload()
    today = datetime.date.today().isoweekday()
    expect(page.locator("#r-field-weekday")).to_have_value(str(today))
    page.fill("#r-field-weekday", "7")
    page.fill("#s0-tiles", "123m456p789s1155p")
    with page.expect_request("**/v1/settle") as sent:
        page.locator("#preview").click()
    assert json.loads(sent.value.post_data)["weekday"] == 7
    page.problems.lines.clear()  # this server refuses the rules it does not know: that is not the page's doing
