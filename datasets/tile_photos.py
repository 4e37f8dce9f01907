"""Flat photos of tiles laid in rows, drawn from the CC0 FluffyStuff artwork in one of its styles, with their true
boxes: a calibration photo (the 27 suited tiles in three rows: 1–9m, 1–9p, 1–9s) and photos of random tiles, for
measuring how a set looks to the networks with and without calibration (``benchmarks/bench_calibration.py``) and
for the calibration tests.

Styles: ``regular`` (ivory faces, the style the synthetic training scenes use), ``black`` (white and orange
glyphs on black tiles: never in training, so a set the networks have not seen) and ``tinted`` (the regular glyphs
with their hues turned by a third of the circle, thinner strokes, on a pale yellow front: the same drawings in
another set's colours). Each tile is the artwork's blank
front with its face on top and a strip of the back's colour below it (the tile's body seen from the player's side);
the photo gets a felt of random colour and grain, light, blur and JPEG compression. Boxes are the tiles' faces, as
the detector's labels are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ART = ROOT.parent / "shared" / "tile-art" / "fluffystuff-cc0" / "Export"
STYLES = {"regular": "Regular", "black": "Black", "tinted": "Regular"}
SUITED = [f"{r}{s}" for s in "mps" for r in range(1, 10)]
_PREFIX = {"m": "Man", "p": "Pin", "s": "Sou"}


@dataclass
class TilePhoto:
    image: np.ndarray  # BGR uint8
    boxes: np.ndarray  # (N, 4) xyxy of each tile's face
    tiles: list[str]  # MPSZ name per box


def load_tiles(style: str, art: Path = ART) -> dict[str, np.ndarray]:
    """Tile name → BGRA tile image (the blank front with the face over it), 800 × 600 as the artwork."""
    folder = art / STYLES[style]
    front = cv2.imread(str(folder / "Front.png"), cv2.IMREAD_UNCHANGED)
    if front is None:
        raise FileNotFoundError(f"no tile artwork at {folder}")
    out = {}
    for name in SUITED:
        face = cv2.imread(str(folder / f"{_PREFIX[name[1]]}{name[0]}.png"), cv2.IMREAD_UNCHANGED)
        if style == "tinted":
            face = _tint(face)
        a = face[..., 3:].astype(np.float32) / 255.0
        tile = front.astype(np.float32)
        if style == "tinted":
            tile[..., :3] = tile[..., :3] * np.array([0.80, 0.97, 1.0], np.float32)  # pale yellow (BGR)
        tile[..., :3] = face[..., :3] * a + tile[..., :3] * (1 - a)
        out[name] = tile.astype(np.uint8)
    return out


def _tint(face: np.ndarray) -> np.ndarray:
    """A face's glyph in other colours (hue turned by 60 of OpenCV's 180 steps) and with thinner strokes."""
    hsv = cv2.cvtColor(face[..., :3], cv2.COLOR_BGR2HSV)
    hsv[..., 0] = (hsv[..., 0].astype(np.int32) + 60) % 180
    out = face.copy()
    out[..., :3] = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
    out[..., 3] = cv2.erode(face[..., 3], np.ones((9, 9), np.uint8))
    return out


def compose(rng: np.random.Generator, tiles: dict[str, np.ndarray], rows: list[list[str]],
            upside_down: bool = False) -> TilePhoto:
    """A photo of ``rows`` of tiles (names), top to bottom, left to right; ``upside_down`` turns the photo 180°."""
    width = int(rng.integers(56, 84))
    height = int(round(width * 4 / 3))
    body = int(round(height * rng.uniform(0.08, 0.16)))
    gap = width * rng.uniform(0.03, 0.12)
    row_gap = height * rng.uniform(0.35, 0.7)
    n_cols = max(len(r) for r in rows)
    margin = int(width * 1.2)
    w_img = int(margin * 2 + n_cols * (width + gap))
    h_img = int(margin * 2 + len(rows) * (height + body + row_gap))
    felt = np.array(rng.choice([(60, 110, 40), (110, 70, 30), (70, 70, 70), (40, 60, 120)]), np.float32)
    img = np.clip(felt + rng.normal(0, 9, size=(h_img, w_img, 3)), 0, 255).astype(np.float32)
    back_colour = np.array(rng.choice([(60, 150, 40), (40, 170, 220), (150, 90, 30), (200, 200, 200)]), np.float32)
    boxes, names = [], []
    for r, row in enumerate(rows):
        y = margin + r * (height + body + row_gap)
        for c, name in enumerate(row):
            x = margin + c * (width + gap) + rng.uniform(-0.03, 0.03) * width
            yy = y + rng.uniform(-0.04, 0.04) * height
            x0, y0 = int(round(x)), int(round(yy))
            tile = cv2.resize(tiles[name], (width, height), interpolation=cv2.INTER_AREA).astype(np.float32)
            a = tile[..., 3:] / 255.0
            shadow = img[y0 + 4:y0 + height + body + 4, x0 + 3:x0 + width + 3]
            shadow *= 0.7  # the tile's shadow on the felt
            img[y0 + height - body // 2:y0 + height + body, x0:x0 + width] = back_colour * rng.uniform(0.8, 1.0)
            region = img[y0:y0 + height, x0:x0 + width]
            region[:] = tile[..., :3] * a + region * (1 - a)
            boxes.append([x0, y0, x0 + width, y0 + height])
            names.append(name)
    gain, bias = rng.uniform(0.75, 1.2), rng.uniform(-20, 20)
    light = np.linspace(rng.uniform(0.85, 1.0), rng.uniform(1.0, 1.15), w_img)[None, :, None]
    img = np.clip(img * gain * light + bias, 0, 255).astype(np.uint8)
    sigma = rng.uniform(0.0, 1.0)
    if sigma > 0.3:
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    ok, jpeg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(70, 93))])
    assert ok
    img = cv2.imdecode(jpeg, cv2.IMREAD_COLOR)
    xyxy = np.array(boxes, np.float32)
    if upside_down:
        img = np.ascontiguousarray(img[::-1, ::-1])
        xyxy = np.stack([w_img - xyxy[:, 2], h_img - xyxy[:, 3], w_img - xyxy[:, 0], h_img - xyxy[:, 1]], 1)
    return TilePhoto(img, xyxy, names)


def calibration_photo(rng: np.random.Generator, tiles: dict[str, np.ndarray], upside_down: bool = False) -> TilePhoto:
    """The 27 suited tiles in three rows: 1–9m, 1–9p, 1–9s."""
    return compose(rng, tiles, [SUITED[0:9], SUITED[9:18], SUITED[18:27]], upside_down)


def random_photo(rng: np.random.Generator, tiles: dict[str, np.ndarray], n_rows: int = 3, per_row: int = 8) -> TilePhoto:
    """``n_rows`` rows of ``per_row`` random suited tiles; half the photos upside down."""
    rows = [[SUITED[int(i)] for i in rng.integers(0, 27, size=per_row)] for _ in range(n_rows)]
    return compose(rng, tiles, rows, upside_down=bool(rng.random() < 0.5))
