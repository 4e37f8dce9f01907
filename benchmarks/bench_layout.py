"""Layout + reading on synthetic photos: grouping and hand accuracy per noise kind, and latency.

    PYTHONPATH=. python3 benchmarks/bench_layout.py            # 2000 layouts per noise kind
    PYTHONPATH=. python3 benchmarks/bench_layout.py --n 300 --kinds clean,class

Columns: ``group`` exact grouping (concealed, melds, river, indicator as box sets); ``order`` concealed and river
also in the right order (needs a river or perspective to tell the player's side); ``top-1`` / ``rules`` /
``+complete`` the hand (concealed MPSZ + melds) read exactly with each box's top-1 class, with the copy and
meld constraints, and with a complete 14-tile hand preferred too (the default); ``ms`` wall time of layout +
read per photo (median, p95) and its CPU time (median, p95; the wall time includes waits for a busy CPU).

Rows for what people lay down (``CASES``; each on a laid-out hand photographed at a slant: jitter, perspective,
bent rows, uneven gaps): ``laid`` with nothing pinned; ``turned`` every open meld (one to three) with one tile
turned sideways; ``above`` / ``below`` the melds in a row above or below the hand, one tile of each turned;
``vertical`` the hand running up or down the photo (phone held at ±90°, ±12°); ``backs`` a 闷豆 with backs of an
unfamiliar colour (named ``back`` weakly or ``other`` first), shown with four, two outer, two side by side or three
backs; ``closeup`` one to three tiles boxed twice (face alone, or face and body); ``laid-mix`` all of these at once.

    PYTHONPATH=. python3 benchmarks/bench_layout.py --n 500 --kinds laid,turned,above,below,vertical,backs,closeup,laid-mix

Faces (``vision/upright.py``): where the hand's row runs up or down the photo, the pipeline looks at which way a
few concealed tiles' faces point and lays the hand out again with that evidence. The scenes here are boxes, not
pixels, so the evidence is drawn as the upright probe scores real crops (``layout_synth.facing_evidence``:
the mean and spread measured on rendered turned photos of held-out styles), from a generator of its own (the
scenes stay seed for seed); ``--faces off`` leaves it out (the layout as before). Timing includes the second
layout, not the classifier's look (about 8 crops × 4 turns: see ``benchmarks/bench_facing.py``). With it
``order`` went 0.817 → 0.943 on ``vertical``, 0.820 → 0.933 on ``rotation``, 0.910 → 0.937 on ``laid-mix`` and
0.610 → 0.653 on ``all`` (``--n 300``, seeds 0–299); no other figure changed (docs/experiments/measurements.md).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vision.layout import arrange, build
from vision.reading import read
from vision.training.layout_synth import (
    NOISE_KINDS,
    facing_evidence,
    generate,
    layout_mismatches,
    reading_mismatches,
)
from vision.upright import boxes_to_look_at, with_facing

LAID = ("jitter", "perspective", "bend", "gaps")

KINDS: dict[str, tuple[str, ...]] = {
    "clean": (),
    **{k: (k,) for k in NOISE_KINDS},
    "all": NOISE_KINDS,
}


def _vertical(r: np.random.Generator) -> float:
    return float(r.choice([90.0, -90.0]) + r.uniform(-12, 12))


def _some_melds(r: np.random.Generator) -> int:
    return int(r.integers(1, 4))


# name → (noise, pinned features drawn from their own generator, so the scene's own draws stay seed-for-seed)
CASES: dict[str, tuple[tuple[str, ...], Any]] = {
    "laid": (LAID, lambda r: {}),
    "turned": (LAID, lambda r: {"turned": True, "melds": _some_melds(r)}),
    "above": (LAID, lambda r: {"turned": True, "melds": _some_melds(r), "meld_place": "above"}),
    "below": (LAID, lambda r: {"turned": True, "melds": _some_melds(r), "meld_place": "below"}),
    "vertical": (LAID, lambda r: {"angle": _vertical(r)}),
    "backs": ((*LAID, "colour"), lambda r: {
        "meld_types": ["concealed_kong", *r.choice(["pong", "kong", "concealed_kong"], size=int(r.integers(0, 3)))],
        "face_down": str(r.choice(["backs4", "backs2", "backs2side", "backs3"]))}),
    "closeup": (("jitter", "duplicates"), lambda r: {}),
    "laid-mix": ((*LAID, "colour", "duplicates"), lambda r: {
        "turned": True, "melds": _some_melds(r), "meld_place": str(r.choice(["right", "left", "above", "below"])),
        **({"angle": _vertical(r)} if r.random() < 0.5 else {})}),
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


def run_kind(noise: tuple[str, ...], n: int, seed: int, pins: Any = None, faces: bool = True) -> Tally:
    tally = Tally()
    for s in range(seed, seed + n):
        pinned = pins(np.random.default_rng([s, 1])) if pins else {}
        scene = generate(np.random.default_rng(s), noise, **pinned)
        dets = scene.dets
        w0, c0 = time.perf_counter(), time.process_time()
        arranged = arrange(dets)
        looked = boxes_to_look_at(arranged) if faces else []
        if looked:  # as pipeline.photo.read_photo does, with the classifier's look drawn
            dets = with_facing(dets, looked, facing_evidence(np.random.default_rng([s, 2]), scene.truth, looked))
        lay = build(arranged, dets.facing)
        reading = read(dets, lay)
        tally.wall.append(time.perf_counter() - w0)
        tally.cpu.append(time.process_time() - c0)
        tags = layout_mismatches(scene.truth, lay)
        tally.n += 1
        tally.boxes += len(scene.dets)
        tally.sizes.append(len(scene.dets))
        tally.group += not [t for t in tags if t != "order"]
        tally.order += not tags
        tally.hand["+complete"] += not reading_mismatches(scene.truth, reading)
        tally.hand["rules"] += not reading_mismatches(scene.truth, read(dets, lay, prefer_complete=False))
        tally.hand["top-1"] += not reading_mismatches(scene.truth, read(dets, lay, use_constraints=False))
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="layouts per noise kind (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--faces", choices=["on", "off"], default="on",
                        help="the faces' evidence for rows up or down the photo (default on)")
    parser.add_argument("--kinds", default=",".join([*KINDS, *CASES]), help="comma-separated rows to run")
    args = parser.parse_args()
    header = (f"{'noise':<12}{'N':>6}{'boxes':>7}{'group':>8}{'order':>8}{'top-1':>8}{'rules':>8}{'+complete':>10}"
              f"{'ms med':>8}{'ms p95':>8}{'cpu med':>9}{'cpu p95':>9}")
    print(header)
    print("-" * len(header))
    by_size: list[tuple[int, float]] = []
    for kind in args.kinds.split(","):
        if kind in KINDS:
            t = run_kind(KINDS[kind], args.n, args.seed, faces=args.faces == "on")
        elif kind in CASES:
            t = run_kind(CASES[kind][0], args.n, args.seed, CASES[kind][1], faces=args.faces == "on")
        else:
            raise SystemExit(f"unknown row {kind!r}; use any of {', '.join([*KINDS, *CASES])}")
        wall, cpu = np.array(t.wall) * 1e3, np.array(t.cpu) * 1e3
        print(f"{kind:<12}{t.n:>6}{t.boxes / t.n:>7.1f}{t.group / t.n:>8.3f}{t.order / t.n:>8.3f}"
              f"{t.hand['top-1'] / t.n:8.3f}{t.hand['rules'] / t.n:8.3f}"
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
