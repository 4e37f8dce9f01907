"""Layout + reading on synthetic photos: grouping and hand accuracy per noise kind, and latency.

    PYTHONPATH=. python3 benchmarks/bench_layout.py            # 2000 layouts per noise kind
    PYTHONPATH=. python3 benchmarks/bench_layout.py --n 300 --kinds clean,class

Columns: ``group`` exact grouping (concealed, melds, river, indicator as box sets); ``order`` concealed and river
also in the right order (needs a river or perspective to tell the player's side); ``top-1`` / ``rules`` /
``+complete`` the hand (concealed MPSZ + melds) read exactly with each box's top-1 class, with the copy and
meld constraints, and with a complete 14-tile hand preferred too (the default); ``ms`` wall time of layout +
read per photo (median, p95) and its CPU time (median, p95; the wall time includes waits for a busy CPU).
The ``table`` row runs four-seat photos (N/4 of them) and counts seats.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field

import numpy as np

from vision.layout import layout
from vision.reading import read
from vision.training.layout_synth import (
    NOISE_KINDS,
    generate,
    generate_table,
    layout_mismatches,
    reading_mismatches,
)

KINDS: dict[str, tuple[str, ...]] = {
    "clean": (),
    **{k: (k,) for k in NOISE_KINDS},
    "all": NOISE_KINDS,
}


@dataclass
class Tally:
    n: int = 0
    boxes: int = 0
    group: int = 0
    order: int = 0
    hand: dict[str, int] = field(default_factory=lambda: {"top-1": 0, "rules": 0, "+complete": 0})
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)  # boxes per photo, for latency by size


def run_kind(noise: tuple[str, ...], n: int, seed: int) -> Tally:
    tally = Tally()
    for s in range(seed, seed + n):
        scene = generate(np.random.default_rng(s), noise)
        w0, c0 = time.perf_counter(), time.process_time()
        lay = layout(scene.dets)
        reading = read(scene.dets, lay)
        tally.wall.append(time.perf_counter() - w0)
        tally.cpu.append(time.process_time() - c0)
        tags = layout_mismatches(scene.truth, lay)
        tally.n += 1
        tally.boxes += len(scene.dets)
        tally.sizes.append(len(scene.dets))
        tally.group += not [t for t in tags if t != "order"]
        tally.order += not tags
        tally.hand["+complete"] += not reading_mismatches(scene.truth, reading)
        tally.hand["rules"] += not reading_mismatches(scene.truth, read(scene.dets, lay, prefer_complete=False))
        tally.hand["top-1"] += not reading_mismatches(scene.truth, read(scene.dets, lay, use_constraints=False))
    return tally


def run_table(n: int, seed: int) -> Tally:
    tally = Tally()
    for s in range(seed, seed + n):
        table = generate_table(np.random.default_rng(s))
        w0, c0 = time.perf_counter(), time.process_time()
        lays = layout(table.dets, mode="table")
        readings = [read(table.dets, lay) for lay in lays]
        tally.wall.append(time.perf_counter() - w0)
        tally.cpu.append(time.process_time() - c0)
        tally.boxes += len(table.dets)
        for truth, lay, reading in zip(table.seats, lays, readings, strict=True):
            tags = layout_mismatches(truth, lay)
            tally.n += 1
            tally.group += not [t for t in tags if t != "order"]
            tally.order += not tags
            tally.hand["+complete"] += not reading_mismatches(truth, reading)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="layouts per noise kind (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--kinds", default=",".join([*KINDS, "table"]), help="comma-separated rows to run")
    args = parser.parse_args()
    header = (f"{'noise':<12}{'N':>6}{'boxes':>7}{'group':>8}{'order':>8}{'top-1':>8}{'rules':>8}{'+complete':>10}"
              f"{'ms med':>8}{'ms p95':>8}{'cpu med':>9}{'cpu p95':>9}")
    print(header)
    print("-" * len(header))
    by_size: list[tuple[int, float]] = []
    for kind in args.kinds.split(","):
        if kind == "table":
            t = run_table(max(args.n // 4, 1), args.seed)
            per_photo = len(t.wall)
        elif kind in KINDS:
            t = run_kind(KINDS[kind], args.n, args.seed)
            per_photo = t.n
        else:
            raise SystemExit(f"unknown row {kind!r}; use any of {', '.join([*KINDS, 'table'])}")
        wall, cpu = np.array(t.wall) * 1e3, np.array(t.cpu) * 1e3
        top1 = f"{t.hand['top-1'] / t.n:8.3f}" if kind != "table" else f"{'-':>8}"
        rules = f"{t.hand['rules'] / t.n:8.3f}" if kind != "table" else f"{'-':>8}"
        print(f"{kind:<12}{t.n:>6}{t.boxes / per_photo:>7.1f}{t.group / t.n:>8.3f}{t.order / t.n:>8.3f}{top1}{rules}"
              f"{t.hand['+complete'] / t.n:>10.3f}{np.median(wall):>8.2f}{np.percentile(wall, 95):>8.2f}"
              f"{np.median(cpu):>9.2f}{np.percentile(cpu, 95):>9.2f}", flush=True)
        by_size += list(zip(t.sizes, t.cpu, strict=False))
    if by_size:
        print("\nCPU ms per photo (layout + read) by boxes in the photo, all hand rows together:")
        sizes, cpus = np.array([b for b, _ in by_size]), np.array([c for _, c in by_size]) * 1e3
        for lo, hi in ((0, 14), (14, 25), (25, 35), (35, 60)):
            sel = cpus[(sizes >= lo) & (sizes < hi)]
            if len(sel):
                print(f"  {lo:>2}–{hi - 1:<2} boxes: {len(sel):>6} photos, median {np.median(sel):.2f}, "
                      f"p95 {np.percentile(sel, 95):.2f}, max {sel.max():.2f}")


if __name__ == "__main__":
    main()
