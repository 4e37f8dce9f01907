"""Chinese first, with an English switch that covers every label and message, in a real headless Chromium at 375 and
1280 px: on the start screen (house rules open), the table screen (totals, a round with a preview and its status,
share, settle up, history) and the photo scorer (a typed hand scored), every visible text node is in the page's
language, in Chinese, then in English after the switch, then in Chinese again after switching back.

A text node is untranslated when, once the players' and table's names, MPSZ tiles, numbers and a few neutral
tokens (CSV, QR, API, W, rules keys) are taken out, it is English words without a Chinese character while the page
is Chinese, or Chinese characters without an English word while the page is English (a 中文 rule term beside its
English meaning is how the English page names it). The server's own words (its explanation lines, marked
``lang="en"``) are the API's, not the page's; tile faces and the language button itself are not labels.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from api.service.app import create_app
from tests.api.web_support import (
    DESKTOP,
    PHONE,
    WEB_MARKS,
    Problems,
    ServerThread,
    launch_browser,
    screenshot,
    sync_api,
    table_link,
)

pytestmark = WEB_MARKS
expect = sync_api.expect
expect.set_options(timeout=15_000)

WINNER = "123m456p789s1155p"  # wins on 5p
OTHERS = ["456m789m234s567s9p", "555m666m777m8m9m44s", "123s456s77p88p99p3p"]
NAMES = ["安娜", "Bo", "Cy", "小迪"]
TABLE = "Tonight"

# Every visible text node of the page that is not in its language: [{text, where}].
UNTRANSLATED = """([names, en]) => {
  const han = /[\\u3400-\\u9fff]/, word = /[A-Za-z]{2,}/;
  const neutral = [/https?:\\/\\/\\S+/g, /\\b[a-z_0-9]+=\\S+/g, /\\d+[mpsz]/g, /\\b(CSV|QR|API|MPSZ|W|GET|v1)\\b/g];
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!el || el.closest("script, style, select, datalist, .tile, #lang, [lang=en]") || !el.checkVisibility()) continue;
    let text = walker.currentNode.textContent;
    for (const n of names) text = text.split(n).join(" ");
    for (const re of neutral) text = text.replace(re, " ");
    const wrong = en ? han.test(text) && !word.test(text) : word.test(text) && !han.test(text);
    if (wrong) found.push({ text: walker.currentNode.textContent.trim(), where: el.id || el.closest("[id]")?.id || el.tagName });
  }
  return found;
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    yield from launch_browser()


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[object, str]]:
    db = tmp_path_factory.mktemp("db") / "tables.db"
    app = create_app(model_path="/nonexistent/model.onnx", database=f"sqlite:///{db}")
    with ServerThread(app) as server:
        yield app, server.url
    assert app.state.internal_errors == 0
    app.state.tables.close()


def untranslated(page, en: bool) -> list[dict]:
    return page.evaluate(UNTRANSLATED, [[*NAMES, TABLE], en])


def both_ways(page) -> None:
    """Chinese, English after the switch, Chinese again: nothing untranslated in any of them."""
    expect(page.locator("html")).to_have_attribute("lang", "zh-Hans")
    assert untranslated(page, en=False) == []
    page.locator("#lang").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    assert untranslated(page, en=True) == []
    page.locator("#lang").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-Hans")
    assert untranslated(page, en=False) == []


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["375", "1280"])
def test_every_label_switches_language_and_back(browser, served, tmp_path, size):
    _app, url = served
    width = size["viewport"]["width"]
    context = browser.new_context(**size)
    page = context.new_page()
    problems = Problems(page)

    # The start screen, the house rules open.
    page.goto(url + "/#table")
    page.locator("#t-house summary").click()
    both_ways(page)

    # The table screen: two rounds saved, a third typed and previewed, share and settle up open.
    table = page.request.post(f"{url}/v1/tables", data={"name": TABLE, "players": NAMES, "rules": "gy-normal"}).json()
    key = {"Authorization": f"Bearer {table['edit_key']}"} if "edit_key" in table else {}
    for n in range(2):
        players = [{"concealed": WINNER if s == n else OTHERS[(s - n - 1) % 4]} for s in range(4)]
        body = {"round": {"players": players, "flipped": "4m", "outcome": {
            "type": "win", "winners": [n], "win_tile": "5p", "self_drawn": True}},
            "expected_version": n + 1}
        assert page.request.post(f"{url}/v1/tables/{table['id']}/rounds", data=body, headers=key).status == 201
    page.goto(table_link(url, table))
    expect(page.locator("#history tr[data-round]")).to_have_count(2)
    page.select_option("#r-win-tile", "5p")
    for s, tiles in enumerate([WINNER, *OTHERS]):
        page.fill(f"#s{s}-tiles", tiles)
    page.locator("#preview").click()
    expect(page.locator("#ledger")).to_be_visible()
    page.locator("#share").click()
    page.locator("#settle-open").click()
    expect(page.locator("#payments li").first).to_be_visible()
    both_ways(page)
    page.locator("#lang").click()
    screenshot(page, tmp_path, f"lang-en-table-{width}.png")
    page.locator("#lang").click()
    screenshot(page, tmp_path, f"lang-zh-table-{width}.png")

    # The photo scorer with a typed hand scored.
    page.locator("#tab-score").click()
    page.locator("#hand summary").click()
    page.fill("#hand-text", WINNER + "5p")
    page.locator("#text-score").click()
    expect(page.locator("#waits, #fan").first).to_be_visible()
    both_ways(page)
    assert problems.lines == []
    context.close()
