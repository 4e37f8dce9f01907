"""A whole table: which of the four seats each box belongs to, then each seat laid out in its own frame.

Seat 0 is the side nearest the bottom of the photo, then in the order of play: 1 right, 2 top, 3 left. A seat's
rows run along its edge of the table and its river lies towards the centre; each box goes to the side of the
table it lies on, whole rows kept together (a hand or a river row reaches past the table's diagonals).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from vision.detections import Detections
from vision.layout.build import arrange, build
from vision.layout.frame import dominant_angle, geometry, neighbour_links, tile_chains
from vision.layout.values import Layout

SEATS = 4
LONG_ROW = 5  # a placed row this long (a hand, a river row) may be continued by a short row past the diagonal
ROW_CONTINUES = 3.0  # ...on its line, under this many tile widths past its end


def layout_table(dets: Detections) -> list[Layout]:
    """Four layouts, one per seat (seat 0 nearest the bottom of the photo), each read left to right for its
    owner. Broken boxes are reported as unassigned in the layout of the seat they fell to."""
    if len(dets) == 0:
        return [Layout(notes=["no boxes"]) for _ in range(SEATS)]
    xyxy_all = dets.xyxy.astype(np.float64)
    valid = np.flatnonzero(np.isfinite(xyxy_all).all(1) & (xyxy_all[:, 2] - xyxy_all[:, 0] >= 1)
                           & (xyxy_all[:, 3] - xyxy_all[:, 1] >= 1))
    seat = np.zeros(len(dets), dtype=int)
    phi = 0.0
    if len(valid):
        phi = table_angle(xyxy_all[valid])  # the table's axes, mod 90°, chosen near the image axes
        seat[valid] = seats_of(xyxy_all[valid], phi)
    out = []
    for s in range(SEATS):
        members = np.flatnonzero(seat == s)
        own = np.intersect1d(members, valid)
        angle = seat_angle(xyxy_all[own], phi - s * math.pi / 2)
        out.append(build(arrange(dets, members, angle), dets.facing) if len(members) else Layout(notes=["no boxes"]))
    return out


def seats_of(xyxy: np.ndarray, phi: float) -> np.ndarray:
    """Seat 0..3 of every box: the side of the table centre it lies on (table axes at ``phi``)."""
    n = len(xyxy)
    centres = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    centre = (centres.min(0) + centres.max(0)) / 2
    rel = centres - centre
    x = rel[:, 0] * math.cos(phi) + rel[:, 1] * math.sin(phi)
    y = -rel[:, 0] * math.sin(phi) + rel[:, 1] * math.cos(phi)
    sector = np.where(np.abs(y) >= np.abs(x), np.where(y > 0, 0, 2), np.where(x > 0, 1, 3))
    seat = sector.copy()
    # Hands and rivers reach past the table's diagonals: a row goes whole to the side most of it lies on
    # (longest rows first; a row must run along its side: seats 0/2 horizontally, 1/3 vertically).
    rows: list[tuple[list[int], tuple[int, int]]] = []
    for axis_seats, ang in (((0, 2), phi), ((1, 3), phi - math.pi / 2)):
        rows += [(chain, axis_seats) for chain in tile_chains(geometry(xyxy, ang)) if len(chain) >= 2]
    placed = np.zeros(n, dtype=bool)
    wh = (xyxy[:, 2:] - xyxy[:, :2]).astype(np.float64)
    size = float(np.median(np.sqrt(wh[:, 0] * wh[:, 1])))

    def nearest_placed(members: list[int], seats: tuple[int, ...]) -> int | None:
        """The seat (of ``seats``) with a placed tile within two tile sizes of ``members``, nearest first."""
        anchors = np.flatnonzero(placed & np.isin(seat, seats))
        if not len(anchors):
            return None
        d = np.hypot(centres[members, None, 0] - centres[None, anchors, 0],
                     centres[members, None, 1] - centres[None, anchors, 1])
        return int(seat[anchors[np.argmin(d.min(0))]]) if d.min() <= 2.0 * size else None

    long_rows: list[tuple[list[int], int]] = []  # placed rows of LONG_ROW tiles or more (and what continues them)

    def continued_row(members: list[int], seats: tuple[int, ...]) -> int | None:
        """The seat (of ``seats``) whose long placed row ``members`` continue: on its line, past one of its ends
        by under ``ROW_CONTINUES`` tile widths (melds laid after a hand that reaches past the diagonal, as a
        near seat's does in a photo from that seat); the row then takes them in."""
        for row, owner in long_rows:
            if owner not in seats:
                continue
            mid = centres[row].mean(0)
            axis = np.linalg.svd(centres[row] - mid)[2][0]
            across = np.array([-axis[1], axis[0]])
            width = float(np.median(np.abs(axis[0]) * wh[row, 0] + np.abs(axis[1]) * wh[row, 1]))
            depth = float(np.median(np.abs(across[0]) * wh[row, 0] + np.abs(across[1]) * wh[row, 1]))
            along, off = (centres[row] - mid) @ axis, (centres[members] - mid) @ across
            t = (centres[members] - mid) @ axis
            if np.abs(off).max() > 0.5 * depth:
                continue
            past = max(float(t.min() - along.max()), float(along.min() - t.max()))
            if 0 < past < ROW_CONTINUES * width:
                row += members
                return owner
        return None

    for chain, axis_seats in sorted(rows, key=lambda ca: -len(ca[0])):
        free = [k for k in chain if not placed[k]]
        if not free:
            continue
        # Votes: placed tiles by their seat (a chain across a river's touching rows is not a row), others by side.
        best, count = Counter(int(seat[k] if placed[k] else sector[k]) for k in chain).most_common(1)[0]
        if best in axis_seats and count * 2 > len(chain) and len(chain) < LONG_ROW:
            continued_row(free, (best,))  # a meld after its hand: the hand's row reaches on through it
        elif not (best in axis_seats and count * 2 > len(chain)):
            # e.g. the first tiles of a river's last row, past the diagonal: they join the river they run along
            best = continued_row(free, axis_seats)
            if best is None and len(chain) < 3:
                best = nearest_placed(free, axis_seats)
        if best is not None:
            seat[free] = best
            placed[free] = True
            if len(chain) >= LONG_ROW:
                long_rows.append((chain, best))
    for k in np.flatnonzero(~placed):  # a lone tile goes with the nearest placed tile, if one is close
        near = nearest_placed([int(k)], (0, 1, 2, 3))
        if near is not None:
            seat[k] = near
    return seat


def seat_angle(xyxy: np.ndarray, nominal: float) -> float:
    """A seat's row direction: its own rows' direction (perspective slants the sides of a table) if within
    30° of the table axis ``nominal``, pointing the same way as ``nominal``; else ``nominal``."""
    angle = dominant_angle(neighbour_links(xyxy), 2) if len(xyxy) > 2 else None
    if angle is None:
        return nominal
    for candidate in (angle, angle + math.pi / 2, angle + math.pi, angle - math.pi / 2):
        diff = math.atan2(math.sin(candidate - nominal), math.cos(candidate - nominal))
        if abs(diff) <= math.radians(30):
            return nominal + diff
    return nominal


def table_angle(xyxy: np.ndarray) -> float:
    """The table's axes (seat rows run along them) mod 90°, in (-45°, 45°]."""
    angle = dominant_angle(neighbour_links(xyxy), 4) if len(xyxy) > 1 else None
    return 0.0 if angle is None else angle
