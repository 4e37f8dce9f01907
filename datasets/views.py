"""Scenes of the views people photograph, in many tile styles: for training and for the views benchmark.

The general builder (``datasets/synth/``) draws whole tables; this one draws the views the detector misses on
real photos, one kind per scene (``VIEWS``):

* ``standing``: the player's-eye view of one's own standing concealed row, taken from the seat (the row fills the
  frame; tiles seen slightly from above, thick body and top edge in view), sometimes with melds beside it;
* ``melds``: a flat hand (concealed row face up) with 碰/杠 melds, at least one tile turned sideways (the
  discard taken), the melds beside, above or below the row;
* ``river``: discards (河) in loose heaps and untidy rows, any rotation, seen from any seat;
* ``closeup``: 8-20 tiles filling the frame (a row, a small grid or a heap);
* ``turned``: a standing row or a flat hand photographed with the phone held sideways (±90°);
* ``heap``: 40-70 tiles pushed together after a hand, touching at every angle, seen from above (a training view
  only: not one of the benchmark's ``BENCHMARK_VIEWS``);
* ``overhead``: one's standing row photographed from above it, close (tops in view, faces foreshortened to a
  strip), the row running straight or diagonally across the frame (a training view only);
* ``kongs``: a flat hand as in ``melds`` where most melds are 闷豆 (concealed kongs) and half the sets have backs
  as pale as their faces (a training view only).

Tiles are the synthetic builder's rounded 3-D bodies (ivory face layer, coloured back layer: green, blue,
yellow, orange or white; soft cast and contact shadows), rendered by a pinhole camera with a pure numpy/OpenCV
painter, plus what a flat-shaded box lacks: a glossy face with a specular highlight (Blinn-Phong, per tile, drawn
before nearer tiles cover it) and sometimes an automatic table's surface (felt around a raised centre panel).
Faces come from any style of ``datasets/styles.py`` (procedural fonts, dots, bamboo and birds) and the artwork
sets; ``--styles train`` uses every style not held out, ``--styles held-out`` only ``styles.HELD_OUT``.

Labels: YOLO txt in ``vision/classes.py`` order, one box per tile around its face (or back) as projected by the
camera (what the real photos and the shipped detector use), plus the builder's difficult words
(``synth.difficulty``). Speed: see datasets/README.md (measured renders/hour and the data volume planned from it).

    python datasets/views.py --out DIR --per-view 40 --seed 100 --styles held-out --split val   # benchmark set
    python datasets/views.py --out DIR --n 3000 --seed 200 --styles train --workers 16        # training set
    python datasets/views.py --out DIR --n 3500 --seed 360 --styles train --random-styles 150  # + random styles
    python datasets/views.py --preview DIR --per-view 2 --seed 0                              # PNGs with boxes

A benchmark set writes ``DIR/images/val/<view>_<NNNNNN>.jpg`` (and labels, difficult words); a training set
writes ``DIR/images/{train,val}/`` with views mixed by ``TRAIN_SHARES``. Scene ``i`` of view ``v`` depends only
on ``(seed, v, i)`` and the style list, so a set is the same whatever ``--workers`` is.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from datasets import styles as styles_mod
from datasets import synth as S
from vision.classes import CLASS_NAMES

# A new view goes at the end: a scene's random stream is seeded by its view's index, so earlier sets stay the same.
VIEWS = ("standing", "melds", "river", "closeup", "turned", "heap", "overhead", "kongs", "table")
BENCHMARK_VIEWS = VIEWS[:5]  # the views the benchmark reports and the default of --views
TRAIN_SHARES = {"standing": 0.35, "melds": 0.2, "river": 0.15, "closeup": 0.2, "turned": 0.1, "heap": 0.1,
                "overhead": 0.15, "kongs": 0.1, "table": 0.05}
TABLE_SIZE = 1600  # a table scene's side in pixels: its 100-150 tiles are ~50 px wide, as in a 12 MP photo read


# --------------------------------------------------------------------------------------------------------------
# Styles: the procedural ones join the synthetic builder's artwork (its faces are looked up by style name).
# --------------------------------------------------------------------------------------------------------------


def style_names(which: str, random_styles: int = 0, more_fonts: bool = False, family: str | None = None) -> list[str]:
    """``train``: every style here not held out, plus ``random_styles`` random ones (``rand-0`` ..., or with
    ``more_fonts`` ``randx-0`` ..., whose fonts include ``styles.MORE_FONTS``, or of another ``family`` of
    ``styles.RANDOM_FAMILIES``); ``held-out``: the held-out ones here; else a comma list."""
    here = styles_mod.available() + sorted(S.get_art())
    if random_styles and which != "train":
        raise ValueError("random styles are for training sets only (--styles train)")
    if which == "train":
        family = family or ("randx" if more_fonts else "rand")
        return styles_mod.training_styles(here) + [f"{family}-{i}" for i in range(random_styles)]
    if which == "held-out":
        return [s for s in styles_mod.HELD_OUT if s in here]
    names = [s.strip() for s in which.split(",") if s.strip()]
    missing = [s for s in names if s not in here]
    if missing:
        raise ValueError(f"unknown or unavailable styles: {', '.join(missing)} (here: {', '.join(here)})")
    return names


def pick_style(rng: np.random.Generator, names: list[str]) -> str:
    """A style for one scene: half the scenes take a random style (``rand-N``, ``randx-N``, ...) when there are any,
    the others one of the named sets, so the fixed sets keep their share however many random styles there are."""
    randoms = [s for s in names if styles_mod.is_random(s)]
    fixed = [s for s in names if not styles_mod.is_random(s)]
    if randoms and fixed:
        pool = randoms if rng.random() < 0.5 else fixed
        return pool[int(rng.integers(len(pool)))]
    return names[int(rng.integers(len(names)))]


def load_styles(names: list[str]) -> None:
    """Add the procedural styles among ``names`` to the synthetic builder's artwork of this process."""
    art = S.get_art()
    for name in names:
        if styles_mod.is_procedural(name) and name not in art:
            art[name] = styles_mod.faces(name)


def tileset(rng: np.random.Generator, style: str) -> S.TileSet:
    """A random physical set (ivory tone, back colour, proportions) with the faces of ``style``."""
    return S.random_tileset(rng, {style: {}})


def honours(style: str) -> list[S.Face]:
    """The `other` faces of a style (its winds and dragons)."""
    return sorted(f for f in S.get_art()[style] if f.startswith("other/"))


# --------------------------------------------------------------------------------------------------------------
# Layouts, in the synthetic builder's world frame (one unit = one tile width; the owner sits at -y).
# --------------------------------------------------------------------------------------------------------------


def standing_row(deck: S.Deck, ts: S.TileSet, rng: np.random.Generator, n: int) -> list[S.TilePose]:
    """The concealed row standing on its edge, faces towards the owner, usually sorted; sometimes the tile just
    drawn stands a little apart at the right end."""
    faces = [f for f in (deck.draw(0.03) for _ in range(n)) if f is not None]
    if rng.random() < 0.8:
        faces.sort(key=S.suit_sort_key)
    tiles = S.row([(f, "stand", False) for f in faces], ts, rng, gap=rng.uniform(0.0, 0.03), jitter=0.015)
    if len(tiles) > 4 and rng.random() < 0.35:
        tiles[-1].x += rng.uniform(0.3, 0.8)
    for t in tiles:  # a row is rarely perfectly straight: each tile leans and turns a little
        t.yaw += rng.normal(0, 0.03)
    return tiles


def meld_with_turn(deck: S.Deck, ts: S.TileSet, rng: np.random.Generator, p_turn: float,
                   p_concealed: float = 0.25) -> list[S.TilePose]:
    """One 碰/杠 face up (a tile turned sideways with probability ``p_turn``: the discard taken from another
    player), or, with probability ``p_concealed``, a 闷豆 (concealed kong: four face down, or three down and one
    up)."""
    rest = 1.0 - p_concealed
    kind = rng.choice(["pong", "kong", "concealed"], p=[rest * 0.55 / 0.75, rest * 0.2 / 0.75, p_concealed])
    k = 3 if kind == "pong" else 4
    face = deck.draw_same(k)
    if face is None:
        return []
    gap = rng.uniform(0.0, 0.05)
    if kind == "concealed":
        poses = ["down"] * 4
        if rng.random() < 0.5:
            poses[int(rng.integers(4))] = "up"
        return S.row([(face, p, False) for p in poses], ts, rng, gap)
    turned = [False] * k
    if rng.random() < p_turn:
        turned[int(rng.integers(k))] = True
    return S.row([(face, "up", t) for t in turned], ts, rng, gap)


def melds_line(deck: S.Deck, ts: S.TileSet, rng: np.random.Generator, n: int, p_turn: float,
               p_concealed: float = 0.25) -> list[S.TilePose]:
    """``n`` melds side by side along +x with gaps."""
    tiles: list[S.TilePose] = []
    x = 0.0
    for _ in range(n):
        m = meld_with_turn(deck, ts, rng, p_turn, p_concealed)
        for t in m:
            t.x += x
        tiles += m
        if tiles:
            x = max(t.x for t in tiles) + ts.h / 2 + rng.uniform(0.2, 0.7)
    return tiles


def shifted(tiles: list[S.TilePose], dx: float, dy: float) -> list[S.TilePose]:
    for t in tiles:
        t.x, t.y = t.x + dx, t.y + dy
    return tiles


def layout_standing(deck: S.Deck, ts: S.TileSet, rng: np.random.Generator) -> tuple[list[S.TilePose], list[S.TilePose]]:
    """(all tiles, the tiles the camera frames): a standing row of 7-14, sometimes flat melds beside or in front."""
    row = standing_row(deck, ts, rng, int(rng.integers(7, 15)))
    tiles = list(row)
    if rng.random() < 0.45:
        melds = melds_line(deck, ts, rng, int(rng.integers(1, 4)), 0.5)
        if melds:
            if rng.random() < 0.6:  # to the right, on the row's line
                end = max(t.x for t in row) + ts.w / 2 + rng.uniform(0.4, 1.2)
                tiles += shifted(melds, end, -ts.h / 2 + rng.uniform(-0.2, 0.2))
            else:  # in front of the row, towards the owner
                tiles += shifted(melds, rng.uniform(-0.5, 2.0), -ts.h - rng.uniform(0.4, 1.0))
    return tiles, row


def layout_melds(deck: S.Deck, ts: S.TileSet, rng: np.random.Generator,
                 p_concealed: float = 0.25) -> tuple[list[S.TilePose], list[S.TilePose]]:
    """A flat concealed row of 1-13 and 1-4 melds (most with a turned tile) beside, above or below it."""
    n_melds = int(rng.integers(1, 5))
    hand = [f for f in (deck.draw(0.03) for _ in range(int(rng.integers(max(1, 13 - 3 * n_melds), 14 - 3 * n_melds))))
            if f is not None]
    if rng.random() < 0.75:
        hand.sort(key=S.suit_sort_key)
    row = S.row([(f, "up", False) for f in hand], ts, rng, gap=rng.uniform(0.0, 0.06))
    melds = melds_line(deck, ts, rng, n_melds, 0.75, p_concealed)
    width = max((t.x for t in row), default=0.0) + ts.w
    where = rng.choice(["right", "above", "below", "left"], p=[0.45, 0.25, 0.2, 0.1])
    if where == "right":
        shifted(melds, width + rng.uniform(0.3, 1.2), rng.uniform(-0.15, 0.15))
    elif where == "left":
        mw = max((t.x for t in melds), default=0.0) + ts.h
        shifted(melds, -mw - rng.uniform(0.3, 1.0), rng.uniform(-0.15, 0.15))
    else:
        dy = (ts.h + rng.uniform(0.3, 1.0)) * (1 if where == "above" else -1)
        shifted(melds, rng.uniform(-0.5, 1.5), dy)
    tiles = row + melds
    return tiles, tiles


def layout_river(deck: S.Deck, ts: S.TileSet, rng: np.random.Generator) -> tuple[list[S.TilePose], list[S.TilePose]]:
    """Discards: a loose heap (random positions and angles, none overlapping), or untidy rows of six, or both."""
    tiles: list[S.TilePose] = []
    if rng.random() < 0.7:
        n = int(rng.integers(5, 22))
        heap = S.pile(deck, ts, rng, n, radius=0.6 + 0.35 * math.sqrt(n), p_down=rng.uniform(0, 0.15))
        tiles += heap.tiles if heap else []
    if not tiles or rng.random() < 0.4:
        rv = S.river(deck, ts, rng, int(rng.integers(4, 19)))
        if rv:
            dy = (max(t.y for t in tiles) + 1.2) if tiles else 0.0
            angle = rng.normal(0, 0.25)
            tiles += rv.moved(rng.uniform(-2, 0), dy, angle).tiles
    return tiles, tiles


def layout_closeup(deck: S.Deck, ts: S.TileSet, rng: np.random.Generator) -> tuple[list[S.TilePose], list[S.TilePose]]:
    """8-20 tiles close together: a flat row, a standing row, two or three rows, or a small heap."""
    n = int(rng.integers(8, 21))
    kind = rng.choice(["row", "stand", "rows", "heap"], p=[0.3, 0.25, 0.25, 0.2])
    if kind in ("row", "stand") and n > 12:  # a single line of more would be a thin strip across the frame
        n = int(rng.integers(8, 13))
    if kind == "stand":
        tiles = standing_row(deck, ts, rng, n)
    elif kind == "heap":
        heap = S.pile(deck, ts, rng, n, radius=0.5 + 0.35 * math.sqrt(n), p_down=rng.uniform(0, 0.2))
        tiles = heap.tiles if heap else []
    else:
        rows = 1 if kind == "row" else int(rng.integers(2, 4))
        per = math.ceil(n / rows)
        tiles = []
        gap = rng.uniform(0.0, 0.2)
        for r in range(rows):
            faces = [f for f in (deck.draw(0.05) for _ in range(per)) if f is not None]
            line = S.row([(f, "down" if rng.random() < 0.05 else "up", False) for f in faces], ts, rng, gap)
            tiles += shifted(line, 0.0, r * (ts.h + rng.uniform(0.05, 0.5)))
    return tiles, tiles


def dense_heap(deck: S.Deck, ts: S.TileSet, rng: np.random.Generator, n: int, p_other: float, p_down: float
               ) -> list[S.TilePose]:
    """Up to ``n`` tiles touching at any angle, none overlapping: each new tile is tried against a tile already
    down, the nearer the middle of two drawn, so the heap grows compact like one pushed together."""
    tiles: list[S.TilePose] = []
    rects: list[np.ndarray] = []
    reach = math.hypot(ts.w, ts.h)
    for _ in range(n):
        face = deck.draw(p_other)
        if face is None:
            break
        for _try in range(60):
            if tiles:
                picks = [tiles[int(k)] for k in rng.integers(len(tiles), size=2)]
                anchor = min(picks, key=lambda t: math.hypot(t.x, t.y))
                a, r = rng.uniform(-math.pi, math.pi), rng.uniform(0.5, 1.0) * reach
                x, y = anchor.x + r * math.cos(a), anchor.y + r * math.sin(a)
            else:
                x = y = 0.0
            t = S.TilePose(face, "down" if rng.random() < p_down else "up", x, y, yaw=rng.uniform(-math.pi, math.pi))
            rect = S.tile_corners(t, ts)[:4, :2]
            near = [o for o, u in zip(rects, tiles, strict=True) if math.hypot(u.x - x, u.y - y) < reach]
            if not any(S.polys_overlap(rect, o) for o in near):
                tiles.append(t)
                rects.append(rect)
                break
    return tiles


def layout_heap(deck: S.Deck, ts: S.TileSet, rng: np.random.Generator) -> tuple[list[S.TilePose], list[S.TilePose]]:
    """The heap of discards in the middle after a hand: 40-70 tiles touching at every angle, some honours of a
    136/144-tile set, sometimes a row laid out before a player at the frame's edge (the camera frames the heap)."""
    heap = dense_heap(deck, ts, rng, int(rng.integers(40, 71)), p_other=rng.uniform(0.0, 0.3),
                      p_down=rng.uniform(0.0, 0.08))
    tiles = list(heap)
    if heap and rng.random() < 0.4:
        faces = [f for f in (deck.draw(0.1) for _ in range(int(rng.integers(6, 15)))) if f is not None]
        line = S.row([(f, "up", False) for f in faces], ts, rng, gap=rng.uniform(0.0, 0.08))
        x0 = min(t.x for t in heap) + rng.uniform(-2.0, 1.0)
        tiles += shifted(line, x0, min(t.y for t in heap) - ts.h - rng.uniform(0.8, 2.0))
    return tiles, heap


def layout_overhead(deck: S.Deck, ts: S.TileSet, rng: np.random.Generator
                    ) -> tuple[list[S.TilePose], list[S.TilePose]]:
    """6-11 tiles of a standing row: few enough that, seen from above and close, each face is a readable strip."""
    row = standing_row(deck, ts, rng, int(rng.integers(6, 12)))
    return row, row


def layout_kongs(deck: S.Deck, ts: S.TileSet, rng: np.random.Generator
                 ) -> tuple[list[S.TilePose], list[S.TilePose]]:
    """A flat hand as in ``melds`` where most melds are 闷豆 (concealed kongs), whose face-down tiles are rare in
    the other views."""
    return layout_melds(deck, ts, rng, p_concealed=0.65)


LAYOUTS = {"standing": layout_standing, "melds": layout_melds, "river": layout_river, "closeup": layout_closeup,
           "heap": layout_heap, "overhead": layout_overhead, "kongs": layout_kongs}


# --------------------------------------------------------------------------------------------------------------
# Cameras
# --------------------------------------------------------------------------------------------------------------


def frame_camera(rng: np.random.Generator, focus: list[S.TilePose], ts: S.TileSet, size: int, tilt: float,
                 azimuth: float, roll: float, fill: float, f_rel: float) -> S.Camera:
    """A camera aimed at the middle of ``focus`` whose tiles span about ``fill`` of the frame's width (more than 1
    cuts the row off at the sides), with focal length ``f_rel`` x size (longer where the horizon must stay out)."""
    pts = np.concatenate([S.tile_corners(t, ts) for t in focus])
    centre = (pts.min(0) + pts.max(0)) / 2
    centre[2] = 0.3 * pts[:, 2].max()
    # the extent across the camera's view: along the row as the owner sees it, rotated by the camera's azimuth
    side = np.array([-math.sin(azimuth), math.cos(azimuth)])
    depth = np.array([math.cos(azimuth), math.sin(azimuth)])  # away from the camera, foreshortened by the tilt
    extent = max(float(np.ptp(pts[:, :2] @ side)), float(np.ptp(pts[:, :2] @ depth)) * math.cos(tilt)) + 1e-3
    f = f_rel * size
    half_diag = math.hypot(size / 2, size / 2)
    f = max(f, half_diag / math.tan(math.radians(82) - tilt))  # the steepest corner ray still meets the table
    dist = f * extent / (fill * size)
    dist = max(dist, 2.5 * ts.h)  # a phone does not focus closer than about 7 cm
    target = centre + np.append(rng.normal(0, 0.08 * extent, 2), 0.0)
    return S.look_at(target, tilt, azimuth, roll, dist, f, f, size)


def view_camera(rng: np.random.Generator, view: str, layout: str, focus: list[S.TilePose], ts: S.TileSet,
                size: int) -> S.Camera:
    """How people photograph each view (``layout`` is the tile arrangement; ``view`` adds the phone's turn)."""
    roll = rng.normal(0, 0.05)
    if view == "turned":
        roll = float(rng.choice([-1.0, 1.0])) * math.pi / 2 + rng.normal(0, 0.08)
    if layout == "standing":  # from the seat, slightly above the row
        tilt, azimuth = math.radians(rng.uniform(38, 64)), -math.pi / 2 + rng.normal(0, 0.12)
        fill, f_rel = rng.uniform(0.85, 1.35), rng.uniform(0.75, 1.4)
    elif layout in ("melds", "kongs"):
        tilt, azimuth = math.radians(rng.uniform(0, 45)), -math.pi / 2 + rng.normal(0, 0.15)
        fill, f_rel = rng.uniform(0.6, 1.0), rng.uniform(0.8, 1.8)
    elif layout == "river":
        tilt, azimuth = math.radians(rng.uniform(0, 50)), rng.uniform(-math.pi, math.pi)
        fill, f_rel = rng.uniform(0.45, 0.95), rng.uniform(0.8, 1.8)
    elif layout == "overhead":  # a standing row from above it, close: the faces foreshortened, any diagonal
        tilt, azimuth = math.radians(rng.uniform(12, 40)), -math.pi / 2 + rng.uniform(-1.0, 1.0)
        fill, f_rel = rng.uniform(0.9, 1.5), rng.uniform(0.75, 1.5)
    elif layout == "heap":  # from above, any seat: the heap fills most of the frame
        tilt, azimuth = math.radians(rng.uniform(0, 40)), rng.uniform(-math.pi, math.pi)
        fill, f_rel = rng.uniform(0.5, 1.0), rng.uniform(0.8, 1.6)
    else:  # closeup: the tiles fill the frame
        tilt, azimuth = math.radians(rng.uniform(0, 50)), -math.pi / 2 + rng.normal(0, 0.3)
        fill, f_rel = rng.uniform(0.85, 1.3), rng.uniform(0.75, 1.5)
    if view == "turned":  # the frame's long way now runs along the row: fill the height instead
        fill *= rng.uniform(0.8, 1.0)
    return frame_camera(rng, focus, ts, size, tilt, azimuth, roll, fill, f_rel)


# --------------------------------------------------------------------------------------------------------------
# Rendering: the synthetic builder's painter, with glossy faces and automatic-table surfaces.
# --------------------------------------------------------------------------------------------------------------


def tex_auto_table(rng: np.random.Generator, h: int, w: int, ppu: float) -> np.ndarray:
    """An automatic table: fine felt in its usual colours around a raised square centre panel (dark plastic with
    a dice window and a display) and the dark slots where the walls come up."""
    felt = np.array(S.FELT_COLOURS[rng.integers(len(S.FELT_COLOURS))], np.float32)
    tex = np.empty((h, w, 3), np.float32)
    tex[:] = S.jitter_colour(rng, tuple(felt), 0.15)
    tex *= (1 + 0.05 * (S.fbm(rng, h, w, max(4.0, w / ppu / 2)) - 0.5))[..., None]
    cx, cy = rng.uniform(0.2, 0.8) * w, rng.uniform(0.2, 0.8) * h
    half = rng.uniform(2.5, 4.5) * ppu
    panel = S.jitter_colour(rng, (40, 40, 45), 0.4)
    ang = rng.uniform(-0.2, 0.2)
    box = cv2.boxPoints(((cx, cy), (2 * half, 2 * half), math.degrees(ang))).astype(np.int32)
    cv2.fillConvexPoly(tex, box, (panel * 1.5).tolist(), cv2.LINE_AA)
    inner = cv2.boxPoints(((cx, cy), (1.8 * half, 1.8 * half), math.degrees(ang))).astype(np.int32)
    cv2.fillConvexPoly(tex, inner, panel.tolist(), cv2.LINE_AA)
    cv2.circle(tex, (int(cx), int(cy)), int(0.35 * half), (panel * 0.6).tolist(), -1, cv2.LINE_AA)  # dice window
    cv2.rectangle(tex, (int(cx - 0.5 * half), int(cy + 0.5 * half)), (int(cx + 0.5 * half), int(cy + 0.7 * half)),
                  (40, 40, 200), -1)  # the display
    for k in range(4):  # the slots where the walls rise, one per side
        a = ang + k * math.pi / 2
        d = half + rng.uniform(1.5, 3.0) * ppu
        sx, sy = cx + d * math.cos(a), cy + d * math.sin(a)
        slot = cv2.boxPoints(((sx, sy), (0.4 * ppu, 9 * ppu), math.degrees(a))).astype(np.int32)
        cv2.fillConvexPoly(tex, slot, (felt * 0.35).tolist(), cv2.LINE_AA)
    return tex


def render_table(rng: np.random.Generator, cam: S.Camera) -> np.ndarray:
    """The table in perspective: an automatic table's surface a third of the time, else the builder's materials."""
    s = cam.size
    quad = cam.unproject_to_table(np.array([[0, 0], [s, 0], [s, s], [0, s]], np.float64))
    lo = quad.min(0) - 1
    extent = np.minimum(quad.max(0) + 1 - lo, 400.0)
    ppu = float(min(480 / extent.max(), 120.0))
    tw, th = max(8, int(extent[0] * ppu)), max(8, int(extent[1] * ppu))
    tex = tex_auto_table(rng, th, tw, ppu) if rng.random() < 0.35 else S.random_texture(rng, th, tw, ppu)
    if rng.random() < 0.2:
        S.add_clutter(rng, tex, ppu)
    to_tex = np.array([[ppu, 0, -lo[0] * ppu], [0, ppu, -lo[1] * ppu], [0, 0, 1]])
    h_img = cam.table_homography() @ np.linalg.inv(to_tex)
    return cv2.warpPerspective(np.clip(tex, 0, 255).astype(np.uint8), h_img, (s, s), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REFLECT)


@dataclass
class Gloss:
    """The glaze of the tiles: how strong and how tight their specular highlight is."""

    strength: float  # peak added brightness, 0..1 of full white
    shininess: float  # Blinn-Phong exponent


def add_specular(img: np.ndarray, cam: S.Camera, p: S.Placed, ts: S.TileSet, light: S.Light, gloss: Gloss) -> None:
    """The highlight on a tile's visible face or back: Blinn-Phong evaluated on a grid over the face and warped
    onto it in the image (the view direction changes across a near face, so the highlight moves and falls off)."""
    centre, u, v, n = p.frame
    if n @ (cam.C - centre) > 0:
        quad, normal, c = p.uv[:4], n, centre
    elif -n @ (cam.C - (centre - ts.d * n)) > 0:
        quad, normal, c = p.uv[[5, 4, 7, 6]], -n, centre - ts.d * n
        u = -u  # the back seen unmirrored: its right is the face's left
    else:
        return
    roi = S.render._roi(quad, img.shape[0])
    if roi is None:
        return
    g = 12
    a, b = np.meshgrid(np.linspace(-1, 1, g), np.linspace(1, -1, g))  # texture rows run top (v = +1) to bottom
    pts = c + (a[..., None] * ts.w / 2) * u + (b[..., None] * ts.h / 2) * v
    view = cam.C - pts
    view /= np.linalg.norm(view, axis=-1, keepdims=True)
    half = view + light.to_light
    half /= np.linalg.norm(half, axis=-1, keepdims=True)
    spec = (np.clip(half @ normal, 0, 1) ** gloss.shininess * gloss.strength * 255).astype(np.float32)
    x0, y0, x1, y1 = roi
    src = np.array([[-0.5, -0.5], [g - 0.5, -0.5], [g - 0.5, g - 0.5], [-0.5, g - 0.5]], np.float32)
    m = cv2.getPerspectiveTransform(src, (quad - 0.5 - (x0, y0)).astype(np.float32))
    warped = cv2.warpPerspective(spec, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderValue=0)
    mask = np.zeros_like(warped)
    cv2.fillConvexPoly(mask, np.round((quad - (x0, y0)) * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)
    patch = img[y0:y1, x0:x1].astype(np.float32) + (warped * mask)[..., None]
    img[y0:y1, x0:x1] = np.clip(patch, 0, 255).astype(np.uint8)


def compose(rng: np.random.Generator, cam: S.Camera, tiles: list[S.TilePose], ts: S.TileSet, light: S.Light,
            gloss: Gloss, sources: list[tuple[int, float]] | None = None) -> tuple[np.ndarray, S.Labels]:
    """Table, shadows, then tiles back to front, each with its highlight before nearer tiles cover it; labels as
    ``synth.compose`` makes them (same rules for what is shown, dropped, hidden). ``sources``, when given, gets
    per label the index of its tile in ``tiles`` and the turn of its face in the image (degrees clockwise from
    upright: 90 = the glyph's top points right)."""
    img = render_table(rng, cam)
    index = {id(t): k for k, t in enumerate(tiles)}
    placed = [p for p in (S.place(cam, t, ts) for t in tiles) if p is not None]
    img = S.draw_shadows(img, cam, placed, ts, light, cam.tile_px(ts.w), rng)
    ts.level = S.texture_level(placed)
    S.back_texture(ts, rng)
    order = sorted(placed, key=lambda q: -q.depth)
    ids = np.zeros(img.shape[:2], np.int32)
    tops = np.zeros(img.shape[:2], bool)
    drawn = []
    for k, p in enumerate(order):
        drawn.append(S.draw_tile(img, cam, p, ts, light, ids, k + 1, tops))
        add_specular(img, cam, p, ts, light, gloss)
    seen = np.bincount(ids.ravel(), minlength=len(order) + 1)[1:]
    top_seen = np.bincount(ids[tops], minlength=len(order) + 1)[1:]
    boxes, face_boxes, classes, views = [], [], [], []
    for p, (area, shown, top_px), vis, top_vis in zip(order, drawn, seen, top_seen, strict=True):
        box, frac = p.box(cam.size)
        if frac < S.MIN_VISIBLE or vis < S.MIN_VISIBLE * area or min(box[2] - box[0], box[3] - box[1]) < 4:
            continue
        label = S.shown_label(p.tile, shown, top_px, top_vis, area)
        if label is None:
            continue
        top = p.uv[:4] if shown == "face" else p.uv[[5, 4, 7, 6]]
        rim = p.outline_uv[:16] if shown == "face" else p.outline_uv[16:]
        boxes.append(box)
        face_boxes.append(np.concatenate([np.maximum(rim.min(0), 0.0), np.minimum(rim.max(0), float(cam.size))]))
        classes.append(label)
        views.append((S.share_inside(top, cam.size), top_vis / top_px, S.narrow_width(top)))
        if sources is not None:
            up = (top[0] + top[1] - top[2] - top[3]) / 2  # bottom edge to top edge, as the glyph is read
            sources.append((index[id(p.tile)], math.degrees(math.atan2(up[0], -up[1])) % 360))
    return img, S.Labels(np.array(boxes, np.float32).reshape(-1, 4), np.array(face_boxes, np.float32).reshape(-1, 4),
                         np.array(classes, np.int64), np.array(views, np.float32).reshape(-1, 3))


def random_light(rng: np.random.Generator, cam: S.Camera) -> S.Light:
    """Room light from above; half the time from beyond the tiles, facing the camera (the glare people get)."""
    el = math.radians(rng.uniform(40, 85))
    if rng.random() < 0.5:
        away = cam.R[2, :2] / max(np.linalg.norm(cam.R[2, :2]), 1e-6)  # the camera's look direction on the table
        az = math.atan2(away[1], away[0]) + rng.normal(0, 0.5)
    else:
        az = rng.uniform(-math.pi, math.pi)
    to_light = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    return S.Light(to_light, rng.uniform(0.45, 0.75))


@dataclass
class ViewScene:
    """A rendered view: the builder's scene (face boxes) and what made it."""

    scene: S.Scene
    view: str
    style: str
    tiles: list[S.TilePose]
    tileset: S.TileSet
    camera: S.Camera


def render_view(rng: np.random.Generator, view: str, style_list: list[str], size: int = 640) -> ViewScene:
    """One scene of ``view`` in a style drawn from ``style_list`` (loaded with :func:`load_styles`); a ``table``
    scene is :func:`render_table_round`'s at ``TABLE_SIZE`` or more."""
    if view == "table":
        return render_table_round(rng, style_list, max(size, TABLE_SIZE)).view
    style = pick_style(rng, style_list)
    ts = tileset(rng, style)
    if view == "kongs" and rng.random() < 0.5:
        # backs as pale as the faces: a face-down tile must be told from a face with one stroke by its blankness
        ts.back = ts.ivory * rng.uniform(0.9, 1.0)
    deck = S.Deck(rng, honours(style))
    layout = str(rng.choice(["standing", "melds"], p=[0.6, 0.4])) if view == "turned" else view
    tiles, focus = LAYOUTS[layout](deck, ts, rng)
    cam = view_camera(rng, view, layout, focus or tiles, ts, size)
    gloss = Gloss(rng.uniform(0.1, 0.6), rng.uniform(8, 80))
    img, labels = compose(rng, cam, tiles, ts, random_light(rng, cam), gloss)
    img = S.photometric(img, rng)
    img, spread = S.blur(img, rng)
    img = S.jpeg(S.sensor_noise(img, rng), rng)
    scene = S.Scene(img, labels.boxes, labels.face_boxes, labels.classes,
                    S.difficulty(labels.classes, labels.views, spread))
    return ViewScene(scene, view, style, tiles, ts, cam)


# --------------------------------------------------------------------------------------------------------------
# The whole table at the end of a round (view ``table``): four seats, rivers, the wall and the flipped tile.
# --------------------------------------------------------------------------------------------------------------

TABLE_HAND_DIST = (11.5, 12.5)  # the concealed rows' distance from the table centre, in tile widths
TABLE_RIVER_DIST = (6.8, 7.4)  # the first river row's (the row nearest the owner)
TABLE_MESSY_YAW = math.radians(15)  # a messy river's tiles turn up to this much
TABLE_HEAP_SHARE = 0.2  # tables whose discards go into a heap in the middle (some seats' or all)
TABLE_CAMERAS = ("above", "seat")  # a phone held over the middle; from seat 0 at 25-45° from straight down


@dataclass
class TableTruth:
    """What a table scene shows, for a benchmark: per seat the concealed hand (laid order), the melds (type,
    tile; tile None for a 闷豆 with every tile face down) and the river in order; the flipped tile; the winner
    (the seat whose 14 tiles are complete, or None); how it was photographed; and per input tile its seat (None for
    the wall and the flipped tile), role (hand, meld, river, wall, flipped) and order within its role."""

    seats: list[dict]
    flipped: str | None
    winner: int | None
    camera: str
    river: str  # neat | messy
    roles: list[tuple[int | None, str, int]]  # per tile of ViewScene.tiles
    heap: list[str] = field(default_factory=list)  # discards thrown into a heap in the middle (given to no seat)


@dataclass
class TableScene:
    """A rendered table: the view (image, labels, tiles), the truth, and per label its tile index and rotation."""

    view: ViewScene
    truth: TableTruth
    sources: list[tuple[int, float]]  # per label: index into view.tiles, rotation of the face in the image (deg)

    def to_json(self) -> dict:
        """The truth and one entry per label (tile, seat, role, order, face box in pixels, rotation in degrees)."""
        t, scene = self.truth, self.view.scene
        tiles = []
        for (k, rot), box, cls in zip(self.sources, scene.face_boxes, scene.classes, strict=True):
            seat, role, order = t.roles[k]
            tiles.append({"tile": CLASS_NAMES[int(cls)], "seat": seat, "role": role, "order": order,
                          "box": [round(float(v), 1) for v in box], "rotation": round(rot, 1)})
        return {"seats": t.seats, "flipped": t.flipped, "winner": t.winner, "camera": t.camera, "river": t.river,
                "heap": t.heap, "style": self.view.style, "tiles": tiles}


def complete_faces(deck: S.Deck, rng: np.random.Generator, sets: int) -> list[S.Face] | None:
    """``sets`` sets (pongs or chows) and a pair from the deck, or None when the draws run out (the deck is then
    as before)."""
    taken: list[S.Face] = []

    def take(faces: list[S.Face]) -> bool:
        need = Counter(faces)
        if any(deck.left.get(f, 0) < k for f, k in need.items()):
            return False
        for f, k in need.items():
            deck.take(f, k)
        taken.extend(faces)
        return True

    for _ in range(sets):
        for _try in range(30):
            suit, rank = "mps"[int(rng.integers(3))], int(rng.integers(1, 10))
            chow = rng.random() < 0.6 and rank <= 7
            if take([f"{rank + j}{suit}" for j in range(3)] if chow else [f"{rank}{suit}"] * 3):
                break
        else:
            break
    pair = False
    for _try in range(30):
        f = f"{int(rng.integers(1, 10))}{'mps'[int(rng.integers(3))]}"
        if take([f, f]):
            pair = True
            break
    if len(taken) != 3 * sets + 2 or not pair:
        for f in taken:  # put them back
            deck.left[f] += 1
        return None
    return taken


def _table_melds(deck: S.Deck, ts: S.TileSet, rng: np.random.Generator, n: int
                 ) -> tuple[list[S.TilePose], list[dict], list[int]]:
    """``n`` melds along +x (tiles, their truth, the meld index of each tile): 碰 pong, 杠 kong, 闷豆 concealed
    kong (three face down and one up, or all four down); an open meld's claimed tile often turned sideways."""
    tiles: list[S.TilePose] = []
    truth: list[dict] = []
    owner: list[int] = []
    x = 0.0
    for _ in range(n):
        kind = str(rng.choice(["pong", "kong", "concealed_kong"], p=[0.6, 0.2, 0.2]))
        face = deck.draw_same(3 if kind == "pong" else 4)
        if face is None:
            break
        k = 3 if kind == "pong" else 4
        if kind == "concealed_kong":
            poses = ["down"] * 4
            shown = rng.random() < 0.75
            if shown:
                poses[int(rng.integers(4))] = "up"
            row = S.row([(face, p, False) for p in poses], ts, rng, rng.uniform(0.0, 0.04))
        else:
            turned = [False] * k
            if rng.random() < 0.7:
                turned[int(rng.integers(k))] = True
            row = S.row([(face, "up", t) for t in turned], ts, rng, rng.uniform(0.0, 0.04))
            shown = True
        tiles += shifted(row, x, 0.0)
        truth.append({"type": kind, "tile": face if shown else None})
        owner += [len(truth) - 1] * len(row)
        x = max(t.x for t in tiles) + ts.h / 2 + rng.uniform(0.3, 0.9)
    return tiles, truth, owner


def _river_rows(faces: list[S.Face], ts: S.TileSet, rng: np.random.Generator, messy: bool,
                placed: list[np.ndarray]) -> list[S.TilePose]:
    """Discards in rows of six from the owner's left, the first row at y = 0 and the next ones towards the table
    centre (+y). Messy: gaps, tiles pushed about and turned up to 15°, touching but never overlapping (a turn
    that would overlap is tried smaller)."""
    tiles: list[S.TilePose] = []
    gap = rng.uniform(0.0, 0.06)
    for i, face in enumerate(faces):
        r, c = divmod(i, 6)
        x = c * (ts.w + gap) + ts.w / 2
        y = r * (ts.h + gap + 0.05) + ts.h / 2
        for shrink in (1.0, 0.5, 0.0):
            if messy:
                t = S.TilePose(face, "up", x + shrink * rng.normal(0, 0.12), y + shrink * rng.normal(0, 0.12),
                               float(np.clip(rng.normal(0, 0.6 * TABLE_MESSY_YAW), -1, 1) * TABLE_MESSY_YAW * shrink))
            else:
                t = S.TilePose(face, "up", x + rng.normal(0, 0.01), y + rng.normal(0, 0.01), rng.normal(0, 0.01))
            rect = S.tile_corners(t, ts)[:4, :2]
            if not any(S.polys_overlap(rect, o) for o in placed) or shrink == 0.0:
                break
        placed.append(rect)
        tiles.append(t)
    return tiles


def _table_heap(faces: list[S.Face], ts: S.TileSet, rng: np.random.Generator, placed: list[np.ndarray]
                ) -> list[S.TilePose]:
    """Discards thrown into a heap in the middle of the table: face up, touching at any angle, none overlapping
    another tile or a river (``placed``: the corners of the tiles already down); a tile with no room is left
    out (the returned tiles are the heap)."""
    tiles: list[S.TilePose] = []
    rects: list[np.ndarray] = []
    reach = math.hypot(ts.w, ts.h)
    for face in faces:
        for _try in range(60):
            if tiles:
                picks = [tiles[int(k)] for k in rng.integers(len(tiles), size=2)]
                anchor = min(picks, key=lambda t: math.hypot(t.x, t.y))
                a, r = rng.uniform(-math.pi, math.pi), rng.uniform(0.55, 1.0) * reach
                x, y = anchor.x + r * math.cos(a), anchor.y + r * math.sin(a)
            else:
                x, y = rng.normal(0, 0.5, 2)
            t = S.TilePose(face, "up", x, y, yaw=rng.uniform(-math.pi, math.pi))
            rect = S.tile_corners(t, ts)[:4, :2]
            if not any(S.polys_overlap(rect, o) for o in rects + placed):
                tiles.append(t)
                rects.append(rect)
                break
    return tiles


def _to_seat(tiles: list[S.TilePose], seat: int) -> list[S.TilePose]:
    """Tiles laid out in seat 0's frame (owner at -y) turned to ``seat``: a quarter turn counter-clockwise per
    seat seen from above, so 1 sits right of seat 0, 2 across, 3 left."""
    a = seat * math.pi / 2
    c, s = math.cos(a), math.sin(a)
    for t in tiles:
        t.x, t.y, t.yaw = c * t.x - s * t.y, s * t.x + c * t.y, t.yaw + a
    return tiles


def layout_table_round(deck: S.Deck, ts: S.TileSet, rng: np.random.Generator, winner: int | None, messy: bool,
                       camera: str, heap: bool = False) -> tuple[list[S.TilePose], TableTruth]:
    """The table at the end of a round (seat 0 at -y): every hand laid face up in front of its owner (upright for
    the owner, the drawn tile last, sometimes a little apart), the melds to its right, the river between the hand
    and the centre; the rest of the wall, face down two high, in front of one seat; the flipped tile on the wall,
    beside it, or none. ``heap``: some seats (each with chance 3/4, at least one) throw their discards into a
    heap in the middle instead of laying a river; the heap's tiles belong to no seat."""
    tiles: list[S.TilePose] = []
    roles: list[tuple[int | None, str, int]] = []
    seats: list[dict] = []
    hands: list[tuple[list[S.Face], list[S.TilePose], list[dict], list[int]]] = []
    for seat in range(4):  # the hands first: they are dealt before the discards
        n_melds = int(rng.choice([0, 1, 2, 3], p=[0.35, 0.35, 0.2, 0.1]))
        melds, meld_truth, owner = _table_melds(deck, ts, rng, n_melds)
        faces = complete_faces(deck, rng, 4 - len(meld_truth)) if seat == winner else None
        if faces is None:
            faces = [f for f in (deck.draw(0.0) for _ in range(13 - 3 * len(meld_truth))) if f is not None]
        if seat == winner and faces:
            win = faces.pop(int(rng.integers(len(faces))))
            faces = sorted(faces, key=S.suit_sort_key) + [win]
        else:
            faces.sort(key=S.suit_sort_key)
        hands.append((faces, melds, meld_truth, owner))
    flipped = deck.draw(0.0) if rng.random() < 0.8 else None
    heaping = [bool(rng.random() < 0.75) for _ in range(4)] if heap else [False] * 4
    if heap and not any(heaping):
        heaping[int(rng.integers(4))] = True
    thrown: list[S.Face] = []
    river_rects: list[np.ndarray] = []
    for seat, (faces, melds, meld_truth, owner) in enumerate(hands):
        n_river = min(int(rng.integers(5, 15)), sum(deck.left.values()))
        discards = [f for f in (deck.draw(0.0) for _ in range(n_river)) if f is not None]
        row = S.row([(f, "up", False) for f in faces], ts, rng, gap=rng.uniform(0.0, 0.04), jitter=0.01)
        if seat == winner and len(row) > 1 and rng.random() < 0.5:  # the drawn tile set a little apart
            row[-1].x += rng.uniform(0.2, 0.5)
        width = max(t.x for t in row) + ts.w / 2
        if melds:
            width += rng.uniform(0.4, 1.2)
            shifted(melds, width, 0.0)
            width = max(t.x for t in melds) + ts.h / 2
        dist = rng.uniform(*TABLE_HAND_DIST)
        x0 = -width / 2 + rng.normal(0, 0.4)
        local = shifted(row, x0, -dist - ts.h / 2) + shifted(melds, x0, -dist - ts.h / 2)
        river_y = -rng.uniform(*TABLE_RIVER_DIST) - ts.h / 2
        if heaping[seat]:
            thrown += discards
            rv: list[S.TilePose] = []
        else:
            rv = shifted(_river_rows(discards, ts, rng, messy, []), -3.5 * ts.w + rng.normal(0, 0.2), river_y)
        tiles += _to_seat(local + rv, seat)
        river_rects += [S.tile_corners(t, ts)[:4, :2] for t in tiles[len(tiles) - len(rv):]]
        roles += [(seat, "hand", k) for k in range(len(row))]
        roles += [(seat, "meld", owner[k]) for k in range(len(melds))]
        roles += [(seat, "river", k) for k in range(len(rv))]
        seats.append({"seat": seat, "concealed": list(faces), "melds": meld_truth,
                      "river": [] if heaping[seat] else discards, "river_separated": not heaping[seat]})
    pile = _table_heap(list(rng.permutation(np.array(thrown, dtype=object))), ts, rng, river_rects) if thrown else []
    tiles += pile
    roles += [(None, "heap", k) for k in range(len(pile))]
    # The wall: what is left of it, two high, between one seat's hand and its river.
    stacks = int(rng.integers(3, 9))
    wall_seat = int(rng.integers(4))
    wall: list[S.TilePose] = []
    x0 = rng.uniform(-4.0, 4.0 - stacks)
    y0 = -rng.uniform(9.3, 9.8)
    for k in range(stacks):
        for level in (0, 1):
            face = deck.draw(0.0) or "1m"  # face down: which tile does not matter when the set is used up
            wall.append(S.TilePose(face, "down", x0 + k * (ts.w + 0.01), y0 + rng.normal(0, 0.01),
                                   rng.normal(0, 0.01), z0=level * ts.d))
    where = str(rng.choice(["on", "beside"]))
    extra: list[S.TilePose] = []
    if flipped is not None:
        if where == "on":  # on top of a stack, turned a little
            k = int(rng.integers(stacks))
            extra.append(S.TilePose(flipped, "up", x0 + k * ts.w + rng.normal(0, 0.05), y0 + rng.normal(0, 0.05),
                                    rng.normal(0, 0.15), z0=2 * ts.d))
        else:  # just past an end of the wall, or in front of it
            side = rng.choice([-1.0, 1.0])
            x = x0 + (stacks - 1) * ts.w + ts.w + rng.uniform(0.2, 0.5) if side > 0 else x0 - ts.w - rng.uniform(0.2, 0.5)
            extra.append(S.TilePose(flipped, "up", x, y0 + rng.normal(0, 0.1), rng.normal(0, 0.15)))
    tiles += _to_seat(wall + extra, wall_seat)
    roles += [(None, "wall", k) for k in range(len(wall))] + [(None, "flipped", 0) for _ in extra]
    return tiles, TableTruth(seats, flipped, winner, camera, "heap" if heap else "messy" if messy else "neat", roles,
                             [t.face for t in pile])


def table_camera(rng: np.random.Generator, camera: str, tiles: list[S.TilePose], ts: S.TileSet, size: int
                 ) -> S.Camera:
    """``above``: a phone held over the middle (up to 8° off straight down); ``seat``: from seat 0, 25–45° from
    straight down. Seat 0 at the bottom of the photo either way; the focal length and the principal point are
    then fitted so the whole table fills the frame with a margin (as a photo cropped to the table)."""
    tilt = math.radians(rng.uniform(0, 8) if camera == "above" else rng.uniform(25, 45))
    pts = np.concatenate([S.tile_corners(t, ts) for t in tiles])
    centre = np.append((pts[:, :2].min(0) + pts[:, :2].max(0)) / 2 + rng.normal(0, 0.3, 2), 0.0)
    extent = float(np.ptp(pts[:, :2], 0).max())
    cam = S.look_at(centre, tilt, -math.pi / 2 + rng.normal(0, 0.04), rng.normal(0, 0.03),
                    extent * rng.uniform(0.9, 1.3), 1.0, 1.0, size)
    rays = (pts - cam.C) @ cam.R.T
    norm = rays[:, :2] / rays[:, 2:3]  # image coordinates at focal length 1, about the principal point
    lo, hi = norm.min(0), norm.max(0)
    margin = rng.uniform(0.02, 0.06) * size
    f = (size - 2 * margin) / float((hi - lo).max())
    cam.K = np.array([[f, 0, size / 2 - f * (lo[0] + hi[0]) / 2], [0, f, size / 2 - f * (lo[1] + hi[1]) / 2],
                      [0, 0, 1]])
    return cam


def render_table_round(rng: np.random.Generator, style_list: list[str], size: int = 1600,
                       camera: str | None = None, messy: bool | None = None, winner: bool | None = None,
                       heap: bool | None = None) -> TableScene:
    """One table scene in a style drawn from ``style_list``; ``camera``, ``messy`` (rivers), ``winner`` (one seat
    holds a complete 14) and ``heap`` (discards thrown into a heap in the middle, a ``TABLE_HEAP_SHARE`` of
    scenes) drawn when not given."""
    style = pick_style(rng, style_list)
    ts = tileset(rng, style)
    deck = S.Deck(rng, [])
    camera = camera or str(rng.choice(TABLE_CAMERAS))
    messy = bool(rng.random() < 0.5) if messy is None else messy
    winner = bool(rng.random() < 0.6) if winner is None else winner
    if heap is None:  # from a child stream: the scenes without a heap stay as they were drawn before heaps
        heap = bool(rng.spawn(1)[0].random() < TABLE_HEAP_SHARE)
    tiles, truth = layout_table_round(deck, ts, rng, int(rng.integers(4)) if winner else None, messy, camera, heap)
    cam = table_camera(rng, camera, tiles, ts, size)
    gloss = Gloss(rng.uniform(0.1, 0.5), rng.uniform(8, 80))
    sources: list[tuple[int, float]] = []
    img, labels = compose(rng, cam, tiles, ts, random_light(rng, cam), gloss, sources)
    img = S.photometric(img, rng)
    img = S.jpeg(S.sensor_noise(img, rng), rng)  # no blur: a whole-table photo is taken steady
    scene = S.Scene(img, labels.boxes, labels.face_boxes, labels.classes,
                    S.difficulty(labels.classes, labels.views, 0.0))
    return TableScene(ViewScene(scene, "table", style, tiles, ts, cam), truth, sources)


# --------------------------------------------------------------------------------------------------------------
# Dataset files
# --------------------------------------------------------------------------------------------------------------


def view_rng(seed: int, view: str, index: int) -> np.random.Generator:
    return np.random.default_rng([seed, VIEWS.index(view), index])


def _write_one(job: tuple[Path, int, str, int, int, str, tuple[str, ...]]) -> tuple[str, str, int]:
    out, seed, view, index, size, split, names = job
    name = f"{view}_{index:06d}"
    if view == "table":  # with its truth: seats, roles and orders, for benchmarks/bench_table_photo.py
        table = render_table_round(view_rng(seed, view, index), list(names), max(size, TABLE_SIZE))
        vs, size = table.view, max(size, TABLE_SIZE)
        (out / "table" / split).mkdir(parents=True, exist_ok=True)
        (out / "table" / split / f"{name}.json").write_text(json.dumps(table.to_json(), ensure_ascii=False) + "\n")
    else:
        vs = render_view(view_rng(seed, view, index), view, list(names), size)
    cv2.imwrite(str(out / "images" / split / f"{name}.jpg"), vs.scene.image, [cv2.IMWRITE_JPEG_QUALITY, 95])
    lines = S.yolo_lines(vs.scene.face_boxes, vs.scene.classes, size)
    (out / "labels" / split / f"{name}.txt").write_text("".join(f"{ln}\n" for ln in lines))
    words = S.difficult_words(vs.scene.difficult)
    (out / "difficult" / split / f"{name}.txt").write_text("".join(f"{w}\n" for w in words))
    return name, vs.style, len(lines)


def _init_worker(names: tuple[str, ...]) -> None:
    cv2.setNumThreads(1)
    load_styles(list(names))


def plan(n: int | None, per_view: int | None, views: tuple[str, ...] | list[str], seed: int, val_frac: float, split: str
         ) -> list[tuple[str, int, str]]:
    """(view, index, split) of every scene: ``per_view`` of each view, or ``n`` shared by ``TRAIN_SHARES``."""
    if per_view is not None:
        items = [(v, i) for v in views for i in range(per_view)]
    else:
        shares = np.array([TRAIN_SHARES[v] for v in views])
        counts = np.floor(shares / shares.sum() * (n or 0)).astype(int)
        counts[0] += (n or 0) - counts.sum()
        items = [(v, i) for v, c in zip(views, counts, strict=True) for i in range(c)]
    if split == "val":
        return [(v, i, "val") for v, i in items]
    val = set(np.random.default_rng([seed, 1 << 30]).permutation(len(items))[: round(len(items) * val_frac)])
    return [(v, i, "val" if k in val else "train") for k, (v, i) in enumerate(items)]


def build(out_dir: str | Path, names: list[str], seed: int, views: tuple[str, ...] | list[str] = BENCHMARK_VIEWS, n: int | None = None,
          per_view: int | None = None, size: int = 640, split: str = "train", val_frac: float = 0.1,
          workers: int = 1, progress: bool = True, command: str = "") -> Path:
    """Write the scenes and a data.yaml; returns its path. ``split="val"`` puts every scene in validation (a
    benchmark set)."""
    # Workers are the parallelism; an OpenCV thread pool in the parent could also leave a lock held across the
    # fork (seen once here: both workers waiting forever)
    cv2.setNumThreads(1)
    out = Path(out_dir).resolve()
    for kind in ("images", "labels", "difficult"):
        for sp in ("train", "val"):
            (out / kind / sp).mkdir(parents=True, exist_ok=True)
    load_styles(names)
    jobs = [(out, seed, v, i, size, sp, tuple(names)) for v, i, sp in plan(n, per_view, views, seed, val_frac, split)]
    bar = tqdm(total=len(jobs), desc="views", unit="img", disable=not progress)
    if workers <= 1:
        results = []
        for job in jobs:
            results.append(_write_one(job))
            bar.update()
    else:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(workers, _init_worker, (tuple(names),)) as pool:
            results = []
            for r in pool.imap_unordered(_write_one, jobs, chunksize=2):
                results.append(r)
                bar.update()
    bar.close()
    styles_used = {name: style for name, style, _ in sorted(results)}
    (out / "build.json").write_text(json.dumps({
        "command": command, "seed": seed, "size": size, "views": list(views), "n": n, "per_view": per_view,
        "split": split, "boxes": "face", "styles": names, "held_out": list(styles_mod.HELD_OUT),
        "labels": sum(k for _, _, k in results), "scene_styles": styles_used}, indent=1) + "\n")
    return S.write_data_yaml(out / "data.yaml", out, "images/train", "images/val")


def preview(out_dir: Path, per_view: int, seed: int, names: list[str], size: int = 640) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    load_styles(names)
    paths = []
    for view in VIEWS:
        for i in range(per_view):
            vs = render_view(view_rng(seed, view, i), view, names, size)
            p = out_dir / f"{view}_{i:03d}_{vs.style}.png"
            cv2.imwrite(str(p), S.draw_boxes(vs.scene.image, vs.scene.face_boxes, vs.scene.classes, vs.scene.difficult))
            paths.append(p)
    return paths


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="dataset folder to write")
    ap.add_argument("--preview", type=Path, help="write PNGs with boxes drawn here instead")
    ap.add_argument("--n", type=int, help="scenes in all, shared among the views by TRAIN_SHARES")
    ap.add_argument("--per-view", type=int, help="scenes per view (a benchmark set)")
    ap.add_argument("--views", default=",".join(BENCHMARK_VIEWS),
                    help=f"comma list of views, of {', '.join(VIEWS)} (default: all but heap)")
    ap.add_argument("--styles", default="train", help="train | held-out | a comma list of style names")
    ap.add_argument("--random-styles", type=int, default=0,
                    help="with --styles train: add this many random styles (rand-0 ...), drawn in half the scenes")
    ap.add_argument("--more-fonts", action="store_true",
                    help="the random styles are randx-0 ...: fonts of styles.MORE_FONTS as well")
    ap.add_argument("--more-drawings", action="store_true",
                    help="the random styles are randw-0 ...: as --more-fonts, with more drawings of dots, "
                         "bamboo and the 1s bird")
    ap.add_argument("--split", choices=["train", "val"], default="train",
                    help="val: every scene in images/val (a benchmark set)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", type=int, default=640)
    ap.add_argument("--val-frac", type=float, default=0.1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--shared", type=Path, default=S.SHARED, help="the shared material folder (tile art)")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)  # before drawing any style: see build()
    S.set_shared(args.shared)
    views = [v.strip() for v in args.views.split(",") if v.strip()]
    if bad := [v for v in views if v not in VIEWS]:
        ap.error(f"unknown views: {', '.join(bad)} (choose from {', '.join(VIEWS)})")
    try:
        names = style_names(args.styles, args.random_styles, args.more_fonts,
                            family="randw" if args.more_drawings else None)
    except ValueError as e:
        ap.error(str(e))
    if not names:
        ap.error(f"no styles available for --styles {args.styles} (install the fonts: see datasets/styles.py)")
    shown = ([n for n in names if not styles_mod.is_random(n)]
             + ([f"{args.random_styles} random"] if args.random_styles else []))
    print(f"styles: {', '.join(shown)}", file=sys.stderr)
    if args.preview:
        for p in preview(args.preview, args.per_view or 1, args.seed, names, args.size):
            print(p)
        return
    if not args.out or (args.n is None) == (args.per_view is None):
        ap.error("--out and exactly one of --n or --per-view are required (or --preview)")
    command = "python datasets/views.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    print(build(args.out, names, args.seed, views, args.n, args.per_view, args.size, args.split, args.val_frac,
                args.workers, command=command))


if __name__ == "__main__":
    main()
