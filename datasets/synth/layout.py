"""Scene layout: which tiles lie where, as at a 捉鸡 table (a revealed row, 碰/杠 melds, 闷豆, rivers, strays,
grids, piles). World frame: table plane z = 0, x to the right of the seated owner, y away from them, z up; one
world unit = one tile width."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from datasets.synth.artwork import SUITED, Face, TileSet
from datasets.synth.camera import TilePose, tile_corners
from datasets.synth.textures import rot2
from vision.classes import CLASS_NAMES


class Deck:
    """The tiles still free to place: 4 copies of each suited tile (a 108-tile set) plus a few other faces."""

    def __init__(self, rng: np.random.Generator, others: list[Face]) -> None:
        self.rng = rng
        self.left: dict[Face, int] = {t: 4 for t in SUITED}
        self.others = {o: 4 for o in others}

    def take(self, face: Face, k: int = 1) -> None:
        """Remove k copies (they must be there)."""
        pool = self.others if face.startswith("other/") else self.left
        pool[face] -= k

    def draw(self, p_other: float = 0.0) -> Face | None:
        """One random tile, an `other` one with probability p_other (if any left)."""
        pool = self.others if (self.others and self.rng.random() < p_other) else self.left
        names = [t for t, c in pool.items() if c > 0]
        if not names and pool is self.others:
            return self.draw(0.0)
        if not names:
            return None
        # weight by copies left, as a real draw from the wall would
        weights = np.array([pool[t] for t in names], np.float64)
        face = names[self.rng.choice(len(names), p=weights / weights.sum())]
        self.take(face)
        return face

    def draw_same(self, k: int) -> Face | None:
        """A suited tile with at least k copies left, taking k of them (for 碰 / 杠)."""
        names = [t for t, c in self.left.items() if c >= k]
        if not names:
            return None
        face = names[self.rng.integers(len(names))]
        self.take(face, k)
        return face


@dataclass
class Group:
    """Tiles placed together in a local frame, then moved as one (a row, a meld set, a river...)."""

    tiles: list[TilePose]

    def footprint(self, ts: TileSet) -> np.ndarray:
        """Local-frame rectangle (4 x 2) around all tiles, with a small margin."""
        pts = np.concatenate([tile_corners(t, ts)[:, :2] for t in self.tiles])
        (x0, y0), (x1, y1) = pts.min(0) - 0.15, pts.max(0) + 0.15
        return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])

    def moved(self, dx: float, dy: float, angle: float) -> Group:
        """The group rotated by ``angle`` about the local origin, then shifted."""
        r = rot2(angle)
        out = []
        for t in self.tiles:
            x, y = r @ (t.x, t.y)
            out.append(TilePose(t.face, t.pose, float(x + dx), float(y + dy), t.yaw + angle, t.z0))
        return Group(out)


def row(faces: list[tuple[Face, str, bool]], ts: TileSet, rng: np.random.Generator, gap: float,
        jitter: float = 0.02) -> list[TilePose]:
    """Tiles side by side along +x, near edges aligned on y = 0. Entries: (face, pose, turned 90°)."""
    tiles: list[TilePose] = []
    x = 0.0
    for face, pose, turned in faces:
        along, across = (ts.h, ts.w) if turned else (ts.w, ts.h)
        if pose == "stand":
            across = ts.d
        yaw = (math.pi / 2 if turned else 0.0) + rng.normal(0, jitter)
        tiles.append(TilePose(face, pose, x + along / 2 + rng.normal(0, jitter), across / 2 + rng.normal(0, jitter), yaw))
        x += along + gap + abs(rng.normal(0, jitter))
    return tiles


def suit_sort_key(face: Face) -> int:
    """Players sort their hand by suit and rank; others go last."""
    return CLASS_NAMES.index(face) if face in CLASS_NAMES else 99


def hand_row(deck: Deck, ts: TileSet, rng: np.random.Generator, p_other: float, stand: bool) -> Group:
    """The revealed concealed hand: 7-14 tiles side by side, usually sorted."""
    n = int(rng.integers(7, 15))
    faces = [f for f in (deck.draw(p_other) for _ in range(n)) if f is not None]
    if rng.random() < 0.7:
        faces.sort(key=suit_sort_key)
    pose = "stand" if stand else "up"
    return Group(row([(f, pose, False) for f in faces], ts, rng, gap=rng.uniform(0.0, 0.05)))


def meld(deck: Deck, ts: TileSet, rng: np.random.Generator) -> list[TilePose]:
    """One 碰 (3 same), 杠 (4 same; sometimes the 4th on top) or 闷豆 (4 down, or 3 down + 1 up)."""
    kind = rng.choice(["pong", "kong", "concealed"], p=[0.5, 0.25, 0.25])
    k = 3 if kind == "pong" else 4
    face = deck.draw_same(k)
    if face is None:
        return []
    gap = rng.uniform(0.0, 0.04)
    if kind == "concealed":
        n_up = 0 if rng.random() < 0.5 else 1
        poses = ["down"] * 4
        if n_up:
            poses[int(rng.integers(4))] = "up"
        return row([(face, p, False) for p in poses], ts, rng, gap)
    stacked = kind == "kong" and rng.random() < 0.25
    n_row = 3 if stacked else k
    turned = [False] * n_row
    if rng.random() < 0.4:
        turned[int(rng.integers(n_row))] = True
    tiles = row([(face, "up", t) for t in turned], ts, rng, gap)
    if stacked:  # the fourth copy lies on top of the middle tile
        mid = tiles[1]
        tiles.append(TilePose(face, "up", mid.x + rng.normal(0, 0.03), mid.y + rng.normal(0, 0.03),
                              mid.yaw + rng.normal(0, 0.03), z0=ts.d))
    return tiles


def melds_group(deck: Deck, ts: TileSet, rng: np.random.Generator, n: int) -> Group | None:
    """Several melds in a line with gaps between them."""
    tiles: list[TilePose] = []
    x = 0.0
    for _ in range(n):
        m = meld(deck, ts, rng)
        if not m:
            break
        for t in m:
            t.x += x
        tiles += m
        x = max(t.x for t in tiles) + ts.h / 2 + rng.uniform(0.25, 0.8)
    return Group(tiles) if tiles else None


def river(deck: Deck, ts: TileSet, rng: np.random.Generator, n: int) -> Group | None:
    """Discards in rows of six, a little untidy, sometimes one turned sideways."""
    tiles: list[TilePose] = []
    for r in range(math.ceil(n / 6)):
        k = min(6, n - 6 * r)
        faces = [f for f in (deck.draw(0.02) for _ in range(k)) if f is not None]
        turned = [rng.random() < 0.04 for _ in faces]
        line = row([(f, "up", t) for f, t in zip(faces, turned, strict=True)], ts, rng,
                   gap=rng.uniform(0.0, 0.12), jitter=0.05)
        for t in line:
            t.y += r * (ts.h + rng.uniform(0.02, 0.2))
        tiles += line
    return Group(tiles) if tiles else None


def grid(deck: Deck, ts: TileSet, rng: np.random.Generator) -> Group | None:
    """Tiles in a tidy grid (laid out for a photo, or in a tray)."""
    rows, cols = int(rng.integers(2, 6)), int(rng.integers(3, 10))
    gap = rng.uniform(0.0, 0.15)
    tiles: list[TilePose] = []
    for r in range(rows):
        faces = [deck.draw(0.15) for _ in range(cols)]
        line = row([(f, "down" if rng.random() < 0.05 else "up", False) for f in faces if f], ts, rng, gap)
        for t in line:
            t.y += r * (ts.h + gap)
        tiles += line
    return Group(tiles) if tiles else None


def pile(deck: Deck, ts: TileSet, rng: np.random.Generator, n: int, radius: float, p_down: float) -> Group | None:
    """Tiles dropped at random positions and angles without overlapping (shuffling, a heap of discards)."""
    tiles: list[TilePose] = []
    rects: list[np.ndarray] = []
    for _ in range(n):
        face = deck.draw(0.1)
        if face is None:
            break
        for _try in range(12):
            t = TilePose(face, "down" if rng.random() < p_down else "up", *rng.uniform(-radius, radius, 2),
                         yaw=rng.uniform(-math.pi, math.pi))
            rect = tile_corners(t, ts)[:4, :2]
            if not any(polys_overlap(rect, o) for o in rects):
                tiles.append(t)
                rects.append(rect)
                break
    return Group(tiles) if tiles else None


def polys_overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Separating-axis test for two convex polygons (k x 2 arrays of corners in order)."""
    for poly in (a, b):
        for i in range(len(poly)):
            edge = poly[(i + 1) % len(poly)] - poly[i]
            axis = np.array([-edge[1], edge[0]])
            pa, pb = a @ axis, b @ axis
            if pa.max() <= pb.min() or pb.max() <= pa.min():
                return False
    return True


class Table:
    """Places groups on the table without overlaps."""

    def __init__(self, ts: TileSet) -> None:
        self.ts = ts
        self.tiles: list[TilePose] = []
        self.rects: list[np.ndarray] = []

    def place(self, group: Group | None, dx: float, dy: float, angle: float) -> bool:
        """Put the group there if it does not overlap what is already placed."""
        if group is None or not group.tiles:
            return False
        rect = (rot2(angle) @ group.footprint(self.ts).T).T + (dx, dy)
        if any(polys_overlap(rect, r) for r in self.rects):
            return False
        self.rects.append(rect)
        self.tiles += group.moved(dx, dy, angle).tiles
        return True

    def place_near(self, group: Group | None, rng: np.random.Generator, centre: tuple[float, float],
                   spread: float, angle: float, tries: int = 12) -> bool:
        """Try random spots around ``centre`` until one is free."""
        for _ in range(tries):
            dx, dy = np.asarray(centre) + rng.uniform(-spread, spread, 2)
            if self.place(group, float(dx), float(dy), angle):
                return True
        return False


def player_area(table: Table, deck: Deck, rng: np.random.Generator, seat: float, dist: float,
                p_other: float, stand: bool = False) -> None:
    """One player's hand row and melds (and river towards the centre), for a seat rotated by ``seat``."""
    ts = table.ts
    hand = hand_row(deck, ts, rng, p_other, stand)
    if not hand.tiles:  # the set is used up
        return
    n_melds = int(rng.choice([0, 1, 2, 3, 4], p=[0.15, 0.3, 0.3, 0.15, 0.1]))
    melds = melds_group(deck, ts, rng, n_melds) if n_melds else None
    width = max(t.x for t in hand.tiles) + ts.w
    local = rot2(seat)
    hx = -width / 2 + rng.normal(0, 0.5)
    table.place(hand, *(local @ (hx, -dist)), seat)
    if melds is not None:
        if stand or rng.random() < 0.7:  # to the right of the hand, on the same line
            pos = (hx + width + rng.uniform(0.4, 1.5), -dist + rng.uniform(-0.1, 0.1))
        else:  # a row in front of the hand, towards the player
            pos = (hx + rng.uniform(-0.5, 1.5), -dist - ts.h - rng.uniform(0.3, 1.0))
        table.place(melds, *(local @ pos), seat)
    if rng.random() < 0.75:
        rv = river(deck, ts, rng, int(rng.integers(1, 19)))
        if rv is not None:
            rx = -3 * ts.w + rng.normal(0, 0.3)
            table.place(rv, *(local @ (rx, -dist + ts.h + rng.uniform(1.2, 3.0))), seat)


def scene_layout(rng: np.random.Generator, ts: TileSet, others: list[Face]) -> tuple[str, list[TilePose]]:
    """Choose a scene kind and lay out its tiles. Returns (kind, tiles)."""
    deck = Deck(rng, others)
    table = Table(ts)
    p_other = 0.0 if rng.random() < 0.6 else rng.uniform(0.03, 0.25)
    kind = str(rng.choice(["hand", "table", "loose"], p=[0.5, 0.2, 0.3]))
    if kind == "hand":
        stand = rng.random() < 0.12
        player_area(table, deck, rng, 0.0, 0.0, p_other, stand)
        if rng.random() < 0.4:  # discards further away: own, or another player's (read from their seat)
            opp = river(deck, ts, rng, int(rng.integers(3, 19)))
            facing = float(rng.choice([0.0, math.pi / 2, math.pi, -math.pi / 2]))
            table.place_near(opp, rng, (0, 4.0 + rng.uniform(0, 3)), 3.0, facing + rng.normal(0, 0.1))
    elif kind == "table":
        n_players = int(rng.integers(2, 5))
        dist = rng.uniform(6.5, 9.5)
        for k in range(n_players):
            player_area(table, deck, rng, k * math.pi / 2 + rng.normal(0, 0.04), dist, p_other)
    else:
        if rng.random() < 0.5:
            table.place(grid(deck, ts, rng), 0.0, 0.0, rng.normal(0, 0.05))
        else:
            n = int(rng.integers(6, 26))
            table.place(pile(deck, ts, rng, n, radius=1.0 + 0.5 * math.sqrt(n), p_down=rng.uniform(0, 0.4)),
                        0.0, 0.0, 0.0)
    # stray tiles: one just drawn, one knocked over, ...
    for _ in range(int(rng.choice([0, 1, 2, 3], p=[0.5, 0.25, 0.15, 0.1]))):
        stray = pile(deck, ts, rng, 1, 0.0, p_down=0.35)
        bounds = np.array([(t.x, t.y) for t in table.tiles]) if table.tiles else np.zeros((1, 2))
        centre = bounds.mean(0)
        table.place_near(stray, rng, (float(centre[0]), float(centre[1])), float(np.ptp(bounds, 0).max() / 2 + 2), 0.0)
    return kind, table.tiles
