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

import pytest

from tests.api.web_support import (
    DESKTOP,
    PHONE,
    WEB_MARKS,
    Problems,
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
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # the longer English labels fit
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


def test_the_round_is_a_store_kept_as_the_draft_and_a_switch_keeps_it(browser, served):
    # What is typed goes into the round's state; the draft kept per table is that state; a language switch
    # relabels the form without losing a value; Preview sends the round made from the state.
    _app, url = served
    context = browser.new_context(**PHONE)
    page = context.new_page()
    problems = Problems(page, allow_status=(422,))  # a 平胡 on a discard may be refused: the request is checked
    table = page.request.post(f"{url}/v1/tables", data={"name": TABLE, "players": NAMES, "rules": "gy-normal"}).json()
    page.goto(table_link(url, table))
    expect(page.locator("#round-title")).to_have_text("第 1 局")
    page.locator("#r-how label:has(input[value=discard])").click()
    page.select_option("#r-discarder", "3")
    page.select_option("#r-win-tile", "5p")
    page.fill("#s0-tiles", WINNER)
    page.locator("#s1-baoting").check()
    page.locator("#seat-2 button", has_text="碰/杠").click()
    page.locator("#s2-melds .m-tile").select_option("7m")
    page.locator("#s2-melds .m-from").select_option("0")
    page.locator('#s3-quick label[data-mode="not_ready"]').click()
    state = page.evaluate("T.round")
    assert (state["how"], state["discarder"], state["winTile"]) == ("discard", "3", "5p")
    assert state["seats"][0]["tiles"] == WINNER and state["seats"][1]["baoTing"] is True
    assert state["seats"][2]["melds"] == [{"type": "pong", "tile": "7m", "from": "0"}]
    assert state["seats"][3]["mode"] == "not_ready"
    draft = page.evaluate("(id) => JSON.parse(localStorage.getItem('zhuoji.draft.' + id))", table["id"])
    assert draft["state"] == state

    page.locator("#lang").click()
    expect(page.locator("#round-title")).to_have_text("Round 1")
    expect(page.locator("#s3-quick label[data-mode=not_ready]")).to_have_text("不叫 not ready")
    expect(page.locator("#s0-tiles")).to_have_value(WINNER)
    expect(page.locator("#s2-melds .m-tile")).to_have_value("7m")
    expect(page.locator("#s2-melds .m-from option:checked")).to_have_text(f"fed by {NAMES[0]}")
    assert page.evaluate("T.round") == state
    with page.expect_request("**/v1/settle") as sent:
        page.locator("#preview").click()
    body = sent.value.post_data_json
    assert body["outcome"]["discarder"] == 3 and body["outcome"]["win_tile"] == "5p"
    assert body["outcome"]["self_drawn"] is False
    assert body["players"][0]["concealed"] == WINNER and body["players"][1]["bao_ting"] is True
    assert body["players"][2]["melds"] == [{"type": "pong", "tile": "7m", "from": 0}]
    assert body["players"][3] == {"not_ready": True, "melds": [], "river": ""}

    # A draft kept by the page before the store (the round as it would be sent) is still restored.
    older = {"how": "multi", "winners": [1, 3], "round": {
        "players": [{"concealed": OTHERS[0], "melds": [], "river": "1s", "bao_ting": False},
                    {"concealed": WINNER, "melds": [], "river": "", "bao_ting": False},
                    {"not_ready": True, "melds": [], "river": ""},
                    {"concealed": WINNER, "melds": [], "river": "", "bao_ting": False}],
        "outcome": {"type": "win", "winners": [1, 3], "win_tile": "5p", "self_drawn": False, "discarder": 0},
        "flipped": "4m", "first_1s": None}}
    page.evaluate("([id, d]) => localStorage.setItem('zhuoji.draft.' + id, JSON.stringify(d))", [table["id"], older])
    page.reload()
    expect(page.locator("input[name=r-how][value=multi]")).to_be_checked()
    for seat, checked in enumerate([False, True, False, True]):
        assert page.locator(f"#r-w{seat}").is_checked() is checked
    expect(page.locator("#s0-river")).to_have_value("1s")
    expect(page.locator("#s2-quick input[value=not_ready]")).to_be_checked()
    expect(page.locator("#r-flipped")).to_have_value("4m")
    assert problems.lines == []
    context.close()
