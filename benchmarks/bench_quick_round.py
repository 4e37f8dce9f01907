"""Taps and seconds to record a quick round on the table page, in headless Chromium at 375 px (a phone).

    python -m benchmarks.bench_quick_round [--rounds 5] [--real-model] [--json]

A quick round (issue 52): the winner's tiles by photo, the 翻鸡 (flipped tile) chosen, each of the three others
by one tap (叫 ready / 不叫 not ready), saved. Every click, file choice and dropdown choice counts as a tap (a
dropdown as two: open, choose). Seconds are the page's and the server's time from the first tap to "saved",
without a person's thinking time. Goal: at most 10 taps.

The server runs in-process on 127.0.0.1 with a throwaway SQLite database; the photo is read by a stand-in
detector that sees a fixed 平胡 hand (``--real-model``: the shipped model on the README's sample photo).
Needs Playwright for Python and Debian's chromium (the dev extra), and a server that takes quick rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from api.service.app import create_app
from tests.api.support import SAMPLES, WIN_ROW, ScriptedDetector, model_path
from tests.api.web_support import PHONE, ServerThread, launch_browser, sync_api

ROOT = Path(__file__).resolve().parents[1]

GOAL_TAPS = 10


class Taps:
    """Counts the taps a person would make."""

    def __init__(self) -> None:
        self.count = 0

    def click(self, locator) -> None:
        self.count += 1
        locator.click()

    def choose(self, page, selector: str, value: str) -> None:
        self.count += 2  # open the list, pick the value
        page.select_option(selector, value)


def quick_round(page, taps: Taps, number: int, loser_modes: list[str], photo: Path) -> float:
    expect = sync_api.expect
    start = time.perf_counter()
    with page.expect_file_chooser() as chooser:
        taps.click(page.locator("#s0-photo"))
    with page.expect_response("**/v1/score"):
        taps.count += 1  # choose the photo (or take it)
        chooser.value.set_files(str(photo))
    expect(page.locator("#hand-strip .tile").first).to_be_visible(timeout=60_000)  # the photo is read
    taps.click(page.locator("#use-hand"))
    taps.choose(page, "#r-flipped", "4m")
    for seat, mode in zip((1, 2, 3), loser_modes, strict=True):
        taps.click(page.locator(f'#s{seat}-quick label[data-mode="{mode}"]'))
    taps.click(page.locator("#save-round"))
    status = page.locator("#round-status")
    expect(status).to_contain_text(f"第 {number} 局已保存", timeout=60_000)  # "Round n saved." (Chinese first)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--real-model", action="store_true", help="read the photo with the shipped model")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    # The README's sample photo (a complete hand) for the shipped model; any photo for the stand-in.
    photo = ROOT / "datasets" / "samples" / "sample_02.jpg" if args.real_model else SAMPLES[0]
    with tempfile.TemporaryDirectory() as tmp:
        model = model_path() if args.real_model else None
        app = create_app(model_path=str(model) if model else "/nonexistent/model.onnx",
                         database=f"sqlite:///{tmp}/tables.db")
        with ServerThread(app) as server:
            if not args.real_model:  # after the start, which loads (or fails to load) the model
                app.state.detector = ScriptedDetector(WIN_ROW)
            for browser in launch_browser():
                page = browser.new_page(**PHONE)
                table = page.request.post(f"{server.url}/v1/tables", data={
                    "name": "Bench", "players": ["Ann", "Bo", "Cy", "Di"], "rules": "gy-normal"}).json()
                page.goto(server.url + table["edit_url"])  # the edit link: the phone keeps the table's key
                results = []
                for n in range(1, args.rounds + 1):
                    taps = Taps()
                    try:
                        seconds = quick_round(page, taps, n, ["not_ready", "ready", "not_ready"], photo)
                    except AssertionError as failed:
                        said = page.locator("#round-status").inner_text()
                        sys.exit(f"round {n} not saved: {said!r} (a server with quick rounds is needed)\n"
                                 f"{str(failed).splitlines()[0]}")
                    results.append({"round": n, "taps": taps.count, "seconds": round(seconds, 2)})
    summary = {"rounds": results, "taps": max(r["taps"] for r in results), "goal_taps": GOAL_TAPS,
               "median_seconds": round(statistics.median(r["seconds"] for r in results), 2),
               "detector": "shipped model" if args.real_model else "stand-in (fixed 平胡)"}
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
        return
    for r in results:
        print(f"round {r['round']}: {r['taps']} taps, {r['seconds']:.2f} s")
    print(f"quick round: {summary['taps']} taps (goal ≤ {GOAL_TAPS}), median {summary['median_seconds']:.2f} s "
          f"from first tap to saved; detector: {summary['detector']}")


if __name__ == "__main__":
    main()
