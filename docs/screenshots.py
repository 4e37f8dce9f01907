"""Regenerate the README's screenshots: a scored photo (the shipped model on a sample photo) and a table's
totals screen, both at 1280 px in headless Chromium.

    python -m docs.screenshots          # from the checkout; needs the dev extra (Playwright) and chromium
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import cv2

from api.service.app import create_app
from tests.api.web_support import DESKTOP, ServerThread, launch_browser

ROOT = Path(__file__).resolve().parents[1]

HANDS = ["456m789m234s567s9p", "555m666m777m8m9m44s", "123m456p789s1155p", "123s456s77p88p99p3p"]
WIDTH = 800  # the PNGs are scaled to this width to stay small


def save(page, path: Path, selector: str | None = None) -> None:
    page.evaluate("document.fonts.ready")
    raw = path.with_suffix(".raw.png")
    (page.locator(selector) if selector else page).screenshot(path=str(raw))
    image = cv2.imread(str(raw))
    scale = WIDTH / image.shape[1]
    image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    cv2.imwrite(str(path), image, [cv2.IMWRITE_PNG_COMPRESSION, 9])
    raw.unlink()
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size:,} bytes")


def round_(winner: int | None, tile: str = "5p") -> dict:
    players = [{"concealed": HANDS[(s - (2 if winner is None else winner) + 2) % 4]} for s in range(4)]
    outcome = {"type": "draw"} if winner is None else {"type": "win", "winners": [winner], "win_tile": tile,
                                                       "self_drawn": True}
    return {"players": players, "outcome": outcome, "flipped": None if winner is None else "4m"}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(database=f"sqlite:///{tmp}/tables.db")
        with ServerThread(app) as server:
            for browser in launch_browser():
                page = browser.new_page(**DESKTOP)
                page.goto(server.url)
                page.locator("label:has(input[name=how][value=self])").click()
                with page.expect_response("**/v1/score"):
                    page.set_input_files("#file", str(ROOT / "datasets" / "samples" / "sample_02.jpg"))
                page.locator("#result-body #fan").wait_for()
                save(page, ROOT / "docs" / "page-scored-photo.png", "main")

                table = page.request.post(f"{server.url}/v1/tables", data={
                    "name": "Friday", "players": ["Ann", "Bo", "Cy", "Di"], "rules": "gy-normal"}).json()
                key = {"Authorization": f"Bearer {table['edit_key']}"} if "edit_key" in table else {}
                for n, r in enumerate([round_(2), round_(0), round_(0), round_(None), round_(1), round_(0)], start=1):
                    answer = page.request.post(f"{server.url}/v1/tables/{table['id']}/rounds",
                                               data={"round": r, "expected_version": n}, headers=key)
                    assert answer.status == 201, answer.text()
                # The view link (a view id where the server has them, else the table's id).
                page.goto(server.url + table.get("view_url", f"/t/{table['id']}"))
                page.locator("#history tr[data-round]").nth(5).wait_for()
                save(page, ROOT / "docs" / "page-table-totals.png", "main")
                page.close()


if __name__ == "__main__":
    main()
