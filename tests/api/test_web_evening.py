"""An evening on a phone, in a real headless Chromium at 375 and 1280 px: eight rounds (typed, from a photo, quick
rounds where the server takes them), a reload in the middle of a round that loses nothing, a round typed offline
and sent when the network returns, 结账 (settle up), the view link on a second browser context, a table that is
not there. Totals are checked against the API after every step; screenshots go to ``artefacts/screenshots/``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from api.service.app import create_app
from tests.api.support import SAMPLES, WIN_ROW, ScriptedDetector
from tests.api.web_support import (
    DESKTOP,
    PHONE,
    WEB_MARKS,
    Problems,
    ServerThread,
    screenshot,
    sync_api,
)

pytestmark = WEB_MARKS
expect = sync_api.expect
expect.set_options(timeout=15_000)  # a long flow on a shared, busy machine: waits, not speed, are tested here

# Four hands of 13 that do not run out of any tile together: the winner holds WINNER and wins on 5p (自摸).
WINNER = "123m456p789s1155p"
OTHERS = ["456m789m234s567s9p", "555m666m777m8m9m44s", "123s456s77p88p99p3p"]
NAMES = ["安娜", "Bo", "Cy", "小迪"]



@pytest.fixture
def served(tmp_path) -> Iterator[tuple[object, str]]:
    app = create_app(model_path="/nonexistent/model.onnx", database=f"sqlite:///{tmp_path / 'tables.db'}")
    with ServerThread(app) as server:
        yield app, server.url
    assert app.state.internal_errors == 0
    app.state.tables.close()


def takes_quick_rounds(page, url: str) -> bool:
    """Whether this server settles a seat given as 不叫 / 叫 without its tiles (branch quick)."""
    body = {"players": [{"concealed": WINNER}, {"not_ready": True, "melds": [], "river": ""},
                        {"ready": True, "holds": "", "melds": [], "river": ""}, {"concealed": OTHERS[2]}],
            "outcome": {"type": "win", "winners": [0], "win_tile": "5p", "self_drawn": True}, "flipped": "4m"}
    return page.request.post(f"{url}/v1/settle", data=body).status == 200


def how(page, value: str) -> None:
    page.locator(f"#r-how label:has(input[value={value}])").click()


def hands_for(winner: int) -> list[str]:
    others = iter(OTHERS)
    return [WINNER if s == winner else next(others) for s in range(4)]


def typed_round(page, winner: int, quick: dict[int, str] | None = None) -> None:
    """A 自摸 on 5p by ``winner``; the others typed, or given quick ({seat: "ready" | "not_ready"})."""
    how(page, "self")
    page.select_option("#r-winner", str(winner))
    page.select_option("#r-win-tile", "5p")
    page.select_option("#r-flipped", "4m")
    for seat, tiles in enumerate(hands_for(winner)):
        mode = (quick or {}).get(seat)
        if mode:
            page.locator(f'#s{seat}-quick label[data-mode="{mode}"]').click()
        else:
            page.fill(f"#s{seat}-tiles", tiles)


def save(page, expected: str) -> None:
    page.locator("#save-round").click()
    expect(page.locator("#round-status")).to_contain_text(expected)


def api_table(page, url: str) -> tuple[dict, list[dict]]:
    table_id = page.evaluate("T.table.id")
    return (page.request.get(f"{url}/v1/tables/{table_id}").json(),
            page.request.get(f"{url}/v1/tables/{table_id}/rounds").json()["rounds"])


def totals_shown_are_the_apis(page, url: str) -> list[int]:
    table, rounds = api_table(page, url)
    for seat, total in enumerate(table["totals"]):
        expect(page.locator(f"#total-{seat}")).to_have_text(f"+{total}" if total > 0 else str(total))
    expect(page.locator("#history tr[data-round]")).to_have_count(len(rounds))
    assert sum(table["totals"]) == 0
    return table["totals"]


@pytest.mark.parametrize("width", [375, 1280])
def test_an_evening_of_eight_rounds(browser, served, tmp_path, width):
    app, url = served
    context = browser.new_context(**(PHONE if width == 375 else DESKTOP))
    page = context.new_page()
    problems = Problems(page)
    shot = lambda name: screenshot(page, tmp_path, f"evening-{width}-{name}.png")  # noqa: E731
    quick = takes_quick_rounds(page, url)

    page.goto(url + "/#table")
    expect(page.locator("html")).to_have_attribute("lang", "zh-Hans")
    expect(page.locator("#capture")).to_be_hidden()  # the start screen is the start form, not the photo scorer
    for seat, name in enumerate(NAMES):
        page.fill(f"#t-p{seat}", name)
    page.fill("#t-name", "周五 Friday")
    shot("1-start")
    page.locator("#t-start").click()
    expect(page.locator("#table-title")).to_have_text("周五 Friday")
    assert page.evaluate("location.hash") == f"#table={page.evaluate('T.table.id')}"

    # Round 1: the winner's tiles from a photo, the others typed.
    app.state.detector = ScriptedDetector(WIN_ROW)
    with page.expect_file_chooser() as chooser:
        page.locator("#s0-photo").click()
    with page.expect_response("**/v1/score"):
        chooser.value.set_files(str(SAMPLES[0]))
    expect(page.locator("#overlay g.box")).to_have_count(len(WIN_ROW))  # the photo is read and drawn
    page.locator("#use-hand").click()
    expect(page.locator("#s0-tiles")).to_have_value(WINNER)
    expect(page.locator("#r-win-tile")).to_have_value("5p")
    for seat, tiles in enumerate(hands_for(0)[1:], start=1):
        page.fill(f"#s{seat}-tiles", tiles)
    page.select_option("#r-flipped", "4m")
    page.locator("#preview").click()
    expect(page.locator("#ledger")).to_contain_text("安娜")
    # No P-number where the players have names.
    assert "P0" not in page.locator("#settle-preview").inner_text()
    save(page, "第 1 局已保存")
    totals_shown_are_the_apis(page, url)

    # Rounds 2–4: typed, or quick (three taps for the three who did not win) where the server takes it.
    for n, winner in [(2, 1), (3, 2), (4, 3)]:
        typed_round(page, winner, {s: ("ready" if s % 2 else "not_ready") for s in range(4) if s != winner}
                    if quick else None)
        save(page, f"第 {n} 局已保存")
        totals_shown_are_the_apis(page, url)
    shot("2-four-rounds")

    # Round 5, half typed; the phone reloads the tab: nothing typed is lost.
    how(page, "self")
    page.select_option("#r-winner", "2")
    page.select_option("#r-win-tile", "5p")
    page.select_option("#r-flipped", "4m")
    for seat, tiles in enumerate(hands_for(2)[:3]):
        page.fill(f"#s{seat}-tiles", tiles)
    page.fill("#s1-river", "1s")
    page.reload()
    expect(page.locator("#round-status")).to_contain_text("草稿已恢复")
    expect(page.locator("#r-winner")).to_have_value("2")
    expect(page.locator("#r-flipped")).to_have_value("4m")
    for seat, tiles in enumerate(hands_for(2)[:3]):
        expect(page.locator(f"#s{seat}-tiles")).to_have_value(tiles)
    expect(page.locator("#s1-river")).to_have_value("1s")
    page.fill("#s3-tiles", hands_for(2)[3])
    save(page, "第 5 局已保存")
    totals_shown_are_the_apis(page, url)

    # Round 6, typed without the network: kept on the phone with its Idempotency-Key, sent when it returns.
    context.set_offline(True)
    expect(page.locator("#offline-badge")).to_be_visible()
    typed_round(page, 0)
    page.locator("#save-round").click()
    expect(page.locator("#round-status")).to_contain_text("离线")
    expect(page.locator("#queue-note")).to_be_visible()
    shot("3-offline")
    context.set_offline(False)
    expect(page.locator("#offline-badge")).to_be_hidden()
    expect(page.locator("#queue-note")).to_be_hidden()
    expect(page.locator("#history tr[data-round]")).to_have_count(6)
    table, rounds = api_table(page, url)
    assert len(rounds) == 6 and rounds[5]["round"]["outcome"]["winners"] == [0]
    totals_shown_are_the_apis(page, url)

    # Round 7 a 黄牌 with everyone 不叫; round 8 a last win.
    how(page, "draw")
    for seat in range(4):
        page.locator(f"#s{seat}-notready").check()
    save(page, "第 7 局已保存")
    typed_round(page, 1)
    save(page, "第 8 局已保存")
    totals = totals_shown_are_the_apis(page, url)
    expect(page.locator("#chart polyline")).to_have_count(4)
    # The chart's labels are at least 12 px as shown.
    sizes = page.locator("#chart text").evaluate_all("ts => ts.map((t) => t.getBoundingClientRect().height)")
    assert sizes and min(sizes) >= 12, sizes
    shot("4-eight-rounds")

    # 结账: the standings, and who pays whom where the server works it out.
    page.locator("#settle-open").click()
    page.fill("#per-point", "0.5")
    page.locator("#settle-go").click()
    expect(page.locator("#standings tr[data-seat]")).to_have_count(4)
    best = max(range(4), key=lambda s: totals[s])
    expect(page.locator("#standings tr[data-seat]").first).to_contain_text(NAMES[best])
    payments = page.request.get(f"{url}/v1/tables/{table['id']}/payments?per_point=0.5")
    if payments.status == 200:
        expect(page.locator("#payments li[data-from]")).to_have_count(len(payments.json()["payments"]))
    else:
        expect(page.locator("#settle-status")).to_contain_text("服务器")
    shot("5-settle")

    # The view link, on another phone (its own storage): the totals, read only, marked so.
    page.locator("#share").click()
    expect(page.locator("#qr svg")).to_be_visible()
    view_link = page.locator("#view-link").input_value()
    assert "/t/" in view_link
    other = browser.new_context(**PHONE)
    viewer = other.new_page()
    viewer_problems = Problems(viewer)
    viewer.goto(view_link)
    for seat, total in enumerate(totals):
        expect(viewer.locator(f"#total-{seat}")).to_have_text(f"+{total}" if total > 0 else str(total))
    expect(viewer.locator("#readonly-badge")).to_be_visible()
    expect(viewer.locator("#round-card")).to_be_hidden()
    expect(viewer.locator("#settle-open")).to_be_hidden()
    assert viewer.locator("#history button").count() == 0
    screenshot(viewer, tmp_path, f"evening-{width}-6-view.png")
    assert viewer.evaluate("document.documentElement.scrollWidth") <= 375
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    # Offline, the browser logs each request that could not go out; the 404 is the payments probe of a server
    # that has none yet.
    offline = "net::ERR_INTERNET_DISCONNECTED"
    assert [line for line in problems.lines if offline not in line and not (
        payments.status == 404 and ("/payments" in line or "status of 404" in line))] == []
    assert viewer_problems.lines == []
    other.close()
    context.close()


def test_a_link_to_no_table_says_so(browser, served, tmp_path):
    _app, url = served
    page = browser.new_page(**PHONE)
    problems = Problems(page, allow_status=(404,))
    page.goto(url + "/t/no-such-view")
    expect(page.locator("#not-found")).to_be_visible()
    expect(page.locator("#not-found")).to_contain_text("找不到")
    expect(page.locator("#table-start")).to_be_hidden()
    screenshot(page, tmp_path, "evening-375-not-found.png")
    page.locator("#lang").click()  # the English switch
    expect(page.locator("#not-found h2")).to_have_text("Table not found")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    assert [line for line in problems.lines if "404" not in line] == []
    page.close()


def test_an_edit_link_keeps_its_key_out_of_the_address_bar(browser, served):
    _app, url = served
    page = browser.new_page(**PHONE)
    table = page.request.post(f"{url}/v1/tables", data={"name": "Keys", "players": NAMES, "rules": "gy-normal"}).json()
    key = table.get("edit_key", "secret-key-123")  # a server without keys takes any
    page.goto(f"{url}/#table={table['id']}&key={key}")
    expect(page.locator("#table-title")).to_have_text("Keys")
    assert "key" not in page.evaluate("location.href")
    stored = page.evaluate("JSON.parse(localStorage.getItem('zhuoji.tables'))")
    assert stored[table["id"]]["key"] == key
    # The key goes with the table's writes as a Bearer token.
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/rounds")) as sent:
        typed_round(page, 0)
        page.locator("#save-round").click()
    assert sent.value.headers.get("authorization") == f"Bearer {key}"
    page.locator("#share").click()
    expect(page.locator("#edit-link")).to_have_value(f"{url}/#table={table['id']}&key={key}")
    page.close()


def test_a_round_sent_on_return_shows_even_when_the_first_read_is_the_offline_copy(browser, served):
    """Back online the page sends the round it kept and reads the table again; that read can still be answered
    from the offline copy (a service worker's network can return after the page's). The page reads again until
    the round it sent is shown."""
    _app, url = served
    page = browser.new_page(service_workers="block", **PHONE)  # the route below sees every request
    page.goto(url + "/#table")
    for seat, name in enumerate(NAMES):
        page.fill(f"#t-p{seat}", name)
    page.locator("#t-start").click()
    typed_round(page, 0)
    save(page, "第 1 局已保存")
    table_id = page.evaluate("T.table.id")
    offline_copy = page.request.get(f"{url}/v1/tables/{table_id}/rounds").text()  # one round
    page.context.set_offline(True)
    typed_round(page, 1)
    page.locator("#save-round").click()
    expect(page.locator("#queue-note")).to_be_visible()
    stale = []

    def first_read_stale(route):
        if stale or route.request.method != "GET":
            route.continue_()
        else:
            stale.append(route.request.url)
            route.fulfill(status=200, content_type="application/json", body=offline_copy)

    page.route(f"**/v1/tables/{table_id}/rounds", first_read_stale)
    page.context.set_offline(False)
    expect(page.locator("#queue-note")).to_be_hidden()
    expect(page.locator("#history tr[data-round]")).to_have_count(2)
    assert stale and len(api_table(page, url)[1]) == 2
    page.close()
