"""A clean table photo's detections, built by hand: four seats around the centre of a 2000 px photo, each seat's
hand, melds and river laid as at the end of a round and turned to its side (seat 0 at the bottom, then 1 right,
2 top, 3 left), the face-down wall in the middle with the flipped tile beside it. Every box is named with
confidence ``P_TOP``; ``doubt`` gives a box a second class."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vision.classes import BACK, CLASS_NAMES
from vision.detections import Detections

SIZE = 2000
W, H = 40.0, 54.0  # a face-up tile from above: width, length (px)
P_TOP = 0.95


@dataclass
class SeatTiles:
    concealed: list[str]
    melds: list[tuple[str, str]] = field(default_factory=list)  # (type, tile): pong, kong, concealed_kong
    river: list[str] = field(default_factory=list)


@dataclass
class TablePlan:
    seats: list[SeatTiles]
    wall: int = 6
    flipped: str | None = "4m"


@dataclass
class Placed:
    """Where the plan's tiles went: box indices per seat and role."""

    dets: Detections
    concealed: list[list[int]]
    river: list[list[int]]
    melds: list[list[int]]
    wall: list[int]
    flipped: int | None


def _turn(seat: int, dx: float, dy: float) -> tuple[float, float]:
    """A point of seat 0's side (relative to the centre, y down) turned to ``seat``'s side."""
    return [(dx, dy), (dy, -dx), (-dx, -dy), (-dy, dx)][seat]


def build(plan: TablePlan, doubt: dict[int, tuple[str, float]] | None = None) -> Placed:
    """The detections of ``plan``; ``doubt``: box index → (second class, its probability)."""
    centres: list[tuple[float, float, bool]] = []  # (x, y, long side across the image's x axis)
    names: list[str] = []
    out = Placed(Detections.empty(), [[], [], [], []], [[], [], [], []], [[], [], [], []], [], None)

    def put(seat: int, dx: float, dy: float, name: str, sideways: bool = False) -> int:
        x, y = _turn(seat, dx, dy)
        centres.append((SIZE / 2 + x, SIZE / 2 + y, sideways != (seat % 2 == 1)))
        names.append(name)
        return len(names) - 1

    for s, seat in enumerate(plan.seats):
        x = -8.0 * W  # the hand row, the owner's left to right, then the melds after a gap
        for t in seat.concealed:
            out.concealed[s].append(put(s, x, 12.5 * W, t))
            x += W + 2
        x += 0.8 * W
        for kind, tile in seat.melds:
            k = 3 if kind == "pong" else 4
            for j in range(k):
                face = "back" if kind == "concealed_kong" and j != 1 else tile
                out.melds[s].append(put(s, x, 12.5 * W, face))
                x += W + 2
            x += 0.8 * W
        for i, t in enumerate(seat.river):  # rows of six from the owner's left, the first row nearest the owner
            r, c = divmod(i, 6)
            out.river[s].append(put(s, -3.4 * W + c * (W + 3), 6.0 * W - r * (H + 4), t))
    for i in range(plan.wall):  # the wall, along seat 0's side, in the middle of the table
        out.wall.append(put(0, -2.5 * W + i * (W + 1), 0.0, "back"))
    if plan.flipped is not None:
        out.flipped = put(0, -2.5 * W + plan.wall * (W + 1) + 0.5 * W, 0.0, plan.flipped)
    xyxy = np.array([[x - (H if turned else W) / 2, y - (W if turned else H) / 2,
                      x + (H if turned else W) / 2, y + (W if turned else H) / 2] for x, y, turned in centres])
    cls = np.array([CLASS_NAMES.index(n) for n in names])
    top3_class = np.stack([cls, np.full(len(cls), -1), np.full(len(cls), -1)], 1)
    top3_prob = np.stack([np.full(len(cls), P_TOP), np.zeros(len(cls)), np.zeros(len(cls))], 1)
    for box, (second, p) in (doubt or {}).items():
        top3_class[box, 1], top3_prob[box] = CLASS_NAMES.index(second), (1 - p - 0.01, p, 0.0)
    out.dets = Detections(xyxy, top3_prob[:, 0], cls, top3_class, top3_prob, (SIZE, SIZE))
    assert (cls[out.wall] == BACK).all()
    return out


# A round won by seat 0 (123m 456m 789p 11s and a 5p pong: 11 concealed + 3 = 14, complete),
# seats 1-3 waiting with 13; every kind at most 4 times on the table, the flipped tile included.
WON = TablePlan([
    SeatTiles(["1m", "2m", "3m", "4m", "5m", "6m", "7p", "8p", "9p", "1s", "1s"], [("pong", "5p")],
              ["9m", "9m", "1p", "2p", "3s", "4s", "5s", "6s"]),
    SeatTiles(["2m", "3m", "4m", "6p", "7p", "8p", "2s", "3s", "4s", "7s"], [("pong", "9s")],
              ["1m", "8m", "2p", "3p", "6s"]),
    SeatTiles(["1p", "1p", "3p", "4p", "5p", "6m", "7m", "8m", "5s", "5s"], [("concealed_kong", "8s")],
              ["9p", "7m", "3m", "6p", "1m", "2p", "4p", "7s", "9m"]),
    SeatTiles(["4p", "6p", "7p", "8p", "2s", "3s", "4s", "6s", "7s", "9s", "5m", "5m", "6m"], [],
              ["8m", "1s", "3p"]),
])
