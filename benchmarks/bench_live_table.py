"""A camera fixed over the table (``zhuoji live --table``): does it propose each round once, and right?

Each run renders one round's end in tile styles held out of training (``datasets/table_video.py``: play with arms
over the table, a still spell of play, the hands laid down and held still, an arm passing over, the tiles pushed in),
evenly over both cameras, neat and messy rivers, with and without a winner; every frame goes through a JPEG round
trip (a camera's stream) and :class:`pipeline.live_table.RoundWatch` with the shipped models.

Reported: rounds proposed exactly once (the goal: all), no proposal, or more than one; of the proposals, the round
exact (every seat's hand and melds and the flipped tile as the scene's truth) and river exact; the frame the
proposal came on, counted from the first laid-down frame; the whole-table readings per round and the milliseconds
of a watched frame without a reading and with one. Then the laid-down signal (:func:`pipeline.live_table.laid_down`)
on one reading of each state: how often it says laid down for play, laid and pushed tables.

    PYTHONPATH=. python benchmarks/bench_live_table.py --n 16 --seed 0

Measured 2026-12-07 with the shipped zhuoji-tiles-int8.onnx (no detector trained on tables yet), 16 rounds of 44
frames at 1600 px: proposed once 9/16, more than once 0, none 7 (1 never read as laid down, 6 laid down but no two
looks in a row agreed on every hand: the reading of a seat flickers between looks); of the 9 proposals 5 round exact
(from above 5 of 8 rounds, from the seat 0 of 8: the whole-table reading's own accuracy, bench_table_photo), river
exact 4/9; proposed on the 7th frame of the laid-down table (median: 3 frames of arms, settle 3, two looks); 6 table
readings a round (median; max 11); 4.1 ms a watched frame, 329 ms a frame with a reading (a shared 2-core machine).
The laid-down signal on one reading: play 0/16, laid 12/16, pushed 0/16. With the detector's table look (quarter
turns, windows over every tile, every crop turned: ``pipeline.table_photo.detect_table``) and this release's table
layout: proposed once 15/16, more than once 0, none 1 (two looks never agreed); round exact 10/15 (from above 8 of
8, from the seat 2 of 7), river exact 12/15; proposed on the 7th frame (median); 5 readings a round (max 11);
3.5 ms a watched frame, 862 ms with a reading. Laid-down signal: play 1/16, laid 16/16, pushed 0/16.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from datasets import synth as S
from datasets import views as V
from datasets.table_video import ROUND_SCRIPT, round_frames, table_states
from pipeline.live_table import RoundWatch, laid_down, read_found
from pipeline.settings import Settings, open_detector
from pipeline.table_photo import TableReading, read_table
from vision.detect import Detector
from vision.detections import Detections

KINDS = [(camera, messy, winner) for camera in V.TABLE_CAMERAS for messy in (False, True) for winner in (True, False)]


def round_exact(reading: TableReading, truth: dict) -> bool:
    """Every seat's hand (in laid order) and melds, and the flipped tile, as the truth has them; the order between
    a seat's melds does not matter (as in ``bench_table_photo.py``)."""
    def melds(pairs: list[tuple[str, str | None]]) -> list[tuple[str, str]]:
        return sorted((kind, tile or "") for kind, tile in pairs)

    return reading.flipped == truth["flipped"] and all(
        list(got.concealed) == want["concealed"]
        and melds([(m.type, m.tile) for m in got.melds]) == melds([(m["type"], m["tile"]) for m in want["melds"]])
        for got, want in zip(reading.seats, truth["seats"], strict=True))


def camera_stream(frame: np.ndarray, quality: int = 90) -> np.ndarray:
    ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=16, help="rounds (spread evenly over camera × river × winner)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", type=int, default=V.TABLE_SIZE, help="frame side in pixels")
    ap.add_argument("--settle", type=int, default=3, help="frames still before a look (the script holds 6-10)")
    ap.add_argument("--shared", type=Path, default=S.SHARED, help="the shared material folder (tile art)")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    S.set_shared(args.shared)
    names = V.style_names("held-out")
    V.load_styles(names)
    detector = open_detector(Settings.from_env())
    outcome: Counter[str] = Counter()
    exact, river_exact, delay, looks = [], [], [], []
    watch_ms, look_ms = [], []
    signal: dict[str, list[bool]] = {"play": [], "laid": [], "pushed": []}
    by_kind: dict[str, list[bool]] = {}
    for i in range(args.n):
        camera, messy, winner = KINDS[i % len(KINDS)]
        rng = np.random.default_rng([args.seed, i])
        states = table_states(rng, names, args.size, camera, messy, winner)
        laid_looks = []

        def read(det: Detector, frame: np.ndarray, found: Detections, seen: list[bool] = laid_looks) -> TableReading:
            """RoundWatch's reading, noting whether each look found the hands laid down."""
            reading = read_found(det, frame, found)
            seen.append(laid_down(reading))
            return reading

        watch = RoundWatch(detector, settle=args.settle, read=read)
        proposals = []
        frames = round_frames(states, rng)
        first_laid = next(k for k, (state, _) in enumerate(frames) if state == "laid")
        for k, (_state, frame) in enumerate(frames):
            frame = camera_stream(frame)
            before = watch.stats.looks
            start = time.perf_counter()
            p = watch.add(k + 1, frame)
            (look_ms if watch.stats.looks > before else watch_ms).append(1000 * (time.perf_counter() - start))
            if p is not None:
                proposals.append((k, p))
        outcome["once" if len(proposals) == 1 else "more than once" if proposals else
                "none: looks never agreed" if any(laid_looks) else "none: never read as laid down"] += 1
        kind = f"{camera} / {'messy' if messy else 'neat'}"
        by_kind.setdefault(kind, []).append(len(proposals) == 1 and round_exact(proposals[0][1].reading, states.truth))
        looks.append(watch.stats.looks)
        for k, p in proposals[:1]:
            exact.append(round_exact(p.reading, states.truth))
            river_exact.append(all(s.river == t["river"] for s, t in zip(p.reading.seats, states.truth["seats"],
                                                                            strict=True)))
            delay.append(k - first_laid)
        for state in signal:
            signal[state].append(laid_down(read_table(detector, camera_stream(getattr(states, state).image))))
    command = "PYTHONPATH=. python benchmarks/bench_live_table.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    print(f"# {command}")
    print(f"# {args.n} rounds of {sum(n for _, n, _ in ROUND_SCRIPT)} frames, styles {', '.join(names)}, "
          f"{args.size} px, settle {args.settle}, detector {detector.model_path.name}")
    print(f"proposed once       {outcome['once']}/{args.n}   more than once {outcome['more than once']}   none: "
          f"never read as laid down {outcome['none: never read as laid down']}, laid down but two looks never "
          f"agreed {outcome['none: looks never agreed']}")
    if exact:
        print(f"round exact         {np.mean(exact):.3f}  ({sum(exact)}/{len(exact)} proposals)")
        print(f"river exact (all 4) {np.mean(river_exact):.3f}  ({sum(river_exact)}/{len(river_exact)})")
        print(f"proposed on frame   median {np.median(delay):.0f} of the laid-down table (arms 3, then still)")
    print(f"table readings      median {np.median(looks):.0f} per round (max {max(looks)})")
    print(f"ms per frame        watched {np.median(watch_ms):.1f} (median), with a reading {np.median(look_ms):.0f}")
    for kind, flags in sorted(by_kind.items()):
        print(f"  {kind:<14} proposed once and round exact {sum(flags)}/{len(flags)}")
    for state, flags in signal.items():
        print(f"laid_down on {state:<7} {np.mean(flags):.3f}  ({sum(flags)}/{len(flags)})")


if __name__ == "__main__":
    main()
