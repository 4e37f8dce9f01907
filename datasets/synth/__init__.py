"""Synthetic table scenes for the tile detector: 3-D tiles on a table, photographed by a phone.

Each scene is rendered from scratch with a small pinhole-camera model:

* a table plane (felt, wood, cloth, laminate or procedural texture, sometimes a rim or a tray) seen in perspective;
* tiles as boxes (face, ivory front layer, coloured back layer) laid out as at a 捉鸡 table: a revealed
  concealed row, 碰/杠 melds (some tiles turned 90°), 闷豆 (face-down kongs), rivers in rows of six, strays,
  grids and shuffled piles; soft shadows on the table;
* phone-camera effects: lighting gradients, glare, colour jitter, blur, sensor noise, JPEG compression.

Labels are the axis-aligned boxes around each tile's projected silhouette (the projection of a convex body is the
convex hull of its projected outline points), clipped to the image, or with ``--boxes face`` the boxes around each
tile's face (or back) alone, as the real photos are labelled; tiles less than 40% inside the image or less
than 40% visible behind other tiles are dropped. A label names what the camera sees of the tile: its face (the
tile's class), its back (`back`: a face-down tile, or a standing one seen from behind), or nothing to name (only
its sides in view, its face or back seen edge-on or mostly hidden: no label). Labels that no one could read in the
photo (cut off by the border, mostly hidden, or blurred for their size) are also marked difficult, one word per
label in DIR/difficult/ (see :func:`difficulty`), so that a benchmark can leave them out as PASCAL VOC does.
Faces are never mirrored: a face is only drawn when its normal points at the camera, and the texture is mapped
with the tile's right-handed (u, v, n) frame, so the only image transforms are rotations and perspective.

Usage::

    python datasets/synth.py --out DIR --n 2000 --seed 0 [--size 640] [--val-frac 0.1] [--workers 1] [--boxes face]
    python datasets/synth.py --preview DIR --n 4 --seed 0     # PNGs with boxes drawn, for eyeballing

The same seed makes the same scenes only with the same tile styles: the CC0 artwork is always there, the KMahjongg
sets only where Debian's kdegames-mahjongg-data-kf5 and librsvg2-bin are installed (a scene's style is its first
random draw, so without them every scene comes out different). The builder says which styles it used, and
records them with the seed in DIR/build.json; the model card's figures are with all three.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.classes import BACK, CLASS_NAMES, OTHER

REPO = Path(__file__).resolve().parents[1]

SHARED = REPO.parent / "shared"
FLUFFY_DIR = "tile-art/fluffystuff-cc0/Export/Regular"
KMJ_DIR = Path("/usr/share/kmahjongglib/tilesets")  # Debian's kdegames-mahjongg-data-kf5; optional, GPL
KMJ_STYLES = ("default", "traditional")  # the others use non-Chinese glyphs (alphabet, egypt) or white ink (jade)
TEX_W, TEX_H = 192, 256  # face texture size (3:4 like the artwork); enough for tiles up to ~190 px wide
MIN_VISIBLE = 0.4  # drop a box when less than this fraction of it lies inside the image
MIN_TOP_SHARE = 0.25  # ... or when its face (or back) covers less than this share of its silhouette: edge-on
SUITED = CLASS_NAMES[:27]

Face = str  # "5p" for a suited tile, "other/<style>/<name>" for winds, dragons, flowers


# --------------------------------------------------------------------------------------------------------------
# Artwork: glyph images (BGRA, TEX_H x TEX_W, transparent background) per style, cached on disk once.
# --------------------------------------------------------------------------------------------------------------


def cache_dir() -> Path:
    """Where rasterised faces are kept between runs (outside the repository)."""
    env = os.environ.get("ZHUOJI_CACHE")
    base = Path(env) if env else Path.home() / ".cache" / "zhuoji"
    return base / "faces"


def _fluffy_sources(shared: Path) -> dict[str, Path]:
    """Face name -> PNG for the CC0 riichi artwork (red-five "Dora" variants left out: Chinese fives are plain)."""
    root = shared / FLUFFY_DIR
    out: dict[str, Path] = {}
    for prefix, suit in (("Man", "m"), ("Pin", "p"), ("Sou", "s")):
        for r in range(1, 10):
            out[f"{r}{suit}"] = root / f"{prefix}{r}.png"
    # Haku (white dragon) is an empty face here: it would look exactly like a plain back, so it is left out.
    for name in ("Ton", "Nan", "Shaa", "Pei", "Hatsu", "Chun"):
        out[f"other/fluffy/{name.lower()}"] = root / f"{name}.png"
    return out


def _kmj_ids() -> dict[str, str]:
    """Face name -> SVG element id in a KMahjongg tileset (ROD = dots, BAMBOO = bamboo)."""
    ids: dict[str, str] = {}
    for svg_name, suit in (("CHARACTER", "m"), ("ROD", "p"), ("BAMBOO", "s")):
        for r in range(1, 10):
            ids[f"{r}{suit}"] = f"{svg_name}_{r}"
    for name, count in (("WIND", 4), ("DRAGON", 3), ("FLOWER", 4), ("SEASON", 4)):
        for k in range(1, count + 1):
            ids[f"other/kmj/{name.lower()}{k}"] = f"{name}_{k}"
    return ids


def _fit_glyph(bgra: np.ndarray) -> np.ndarray:
    """Resize a glyph image (its frame = the tile face) to the texture size."""
    return cv2.resize(bgra, (TEX_W, TEX_H), interpolation=cv2.INTER_AREA)


def _rasterise_kmj(svg: Path, element: str, tmp: Path) -> np.ndarray | None:
    """Render one element of a KMahjongg SVG with rsvg-convert; crop to its face frame. None if empty."""
    png = tmp / f"{element}.png"
    cmd = ["rsvg-convert", "-i", element, "-h", "720", str(svg), "-o", str(png)]
    if subprocess.run(cmd, capture_output=True).returncode != 0 or not png.exists():
        return None
    im = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
    if im is None or im.ndim != 3 or im.shape[2] != 4:
        return None
    ys, xs = np.nonzero(im[..., 3] > 0)  # a nearly transparent rectangle marks the face frame
    if len(ys) == 0:
        return None
    im = im[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].copy()
    im[im[..., 3] < 12] = 0  # drop that frame rectangle itself
    if (im[..., 3] > 128).mean() < 0.01:  # an empty face (white dragon): indistinguishable from a blank back
        return None
    return _fit_glyph(im)


def _build_style_cache(style: str, shared: Path, dest: Path) -> None:
    """Rasterise one style's faces into ``dest`` (one PNG per face; '/' in names becomes '__')."""
    dest.mkdir(parents=True, exist_ok=True)
    if style == "fluffy":
        for name, src in _fluffy_sources(shared).items():
            im = cv2.imread(str(src), cv2.IMREAD_UNCHANGED)
            if im is not None:
                cv2.imwrite(str(dest / f"{name.replace('/', '__')}.png"), _fit_glyph(im))
        return
    svgz = KMJ_DIR / f"{style}.svgz"
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        svg = tmp / f"{style}.svg"
        svg.write_bytes(gzip.decompress(svgz.read_bytes()))
        for name, element in _kmj_ids().items():
            glyph = _rasterise_kmj(svg, element, tmp)
            if glyph is not None:
                cv2.imwrite(str(dest / f"{name.replace('/', '__')}.png"), glyph)


def available_styles(shared: Path) -> list[str]:
    """Styles that can be used here: the CC0 artwork always; KMahjongg sets when installed and rsvg-convert exists."""
    styles = ["fluffy"] if (shared / FLUFFY_DIR).is_dir() else []
    if KMJ_DIR.is_dir() and shutil.which("rsvg-convert"):
        styles += [s for s in KMJ_STYLES if (KMJ_DIR / f"{s}.svgz").exists()]
    return styles


def load_art(shared: Path = SHARED) -> dict[str, dict[Face, np.ndarray]]:
    """Style -> face name -> glyph (BGRA uint8, TEX_H x TEX_W). Rasterises into the cache on first use."""
    art: dict[str, dict[Face, np.ndarray]] = {}
    for style in available_styles(shared):
        dest = cache_dir() / style
        done = dest / ".complete"
        if not done.exists():
            _build_style_cache(style, shared, dest)
            done.touch()
        faces = {}
        for png in sorted(dest.glob("*.png")):
            im = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
            if im is not None and im.shape == (TEX_H, TEX_W, 4):
                faces[png.stem.replace("__", "/")] = im
        if all(t in faces for t in SUITED):
            art[style] = faces
    if not art:
        raise FileNotFoundError(f"no tile artwork under {shared / FLUFFY_DIR}; pass --shared")
    return art


_ART_SHARED: Path = SHARED


@functools.lru_cache(maxsize=4)  # keyed on the copy of the shared material: usually one, a test adds another
def _art_of(shared: Path) -> dict[str, dict[Face, np.ndarray]]:
    return load_art(shared)


def get_art() -> dict[str, dict[Face, np.ndarray]]:
    """The artwork of the shared material this process points at, loaded once per copy."""
    return _art_of(_ART_SHARED)


def set_shared(shared: Path) -> None:
    """Point the builder at another copy of the shared material (its artwork is loaded on first use)."""
    global _ART_SHARED
    _ART_SHARED = Path(shared)


# --------------------------------------------------------------------------------------------------------------
# Small numeric utilities
# --------------------------------------------------------------------------------------------------------------


def log_uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    """A value spread evenly in log space (scales, focal lengths)."""
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def value_noise(rng: np.random.Generator, h: int, w: int, cells: float) -> np.ndarray:
    """Smooth noise in [0, 1] with about ``cells`` blobs across the longer side (float32, h x w)."""
    gy = max(2, int(round(cells * h / max(h, w))) + 1)
    gx = max(2, int(round(cells * w / max(h, w))) + 1)
    grid = rng.random((gy, gx), dtype=np.float32)
    return cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC).clip(0, 1)


def fbm(rng: np.random.Generator, h: int, w: int, cells: float, octaves: int = 3) -> np.ndarray:
    """Fractal noise: octaves of value noise, each twice as fine and half as strong; in about [0, 1]."""
    out = np.zeros((h, w), np.float32)
    amp, total = 1.0, 0.0
    for k in range(octaves):
        out += amp * value_noise(rng, h, w, cells * 2**k)
        total += amp
        amp *= 0.5
    return out / total


def jitter_colour(rng: np.random.Generator, bgr: tuple[float, float, float], amount: float) -> np.ndarray:
    """A colour with each channel scaled by a random factor in 1 ± amount."""
    return np.clip(np.asarray(bgr, np.float32) * rng.uniform(1 - amount, 1 + amount, 3), 0, 255)


def grid_xy(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel row and column coordinates as broadcastable (h x 1) and (1 x w) float32 arrays."""
    return np.arange(h, dtype=np.float32)[:, None], np.arange(w, dtype=np.float32)[None, :]


def rot2(a: float) -> np.ndarray:
    """2-D rotation matrix."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s], [s, c]], np.float64)


# --------------------------------------------------------------------------------------------------------------
# Table textures. Generators take (rng, h, w, ppu) with ppu = texture pixels per tile width, return float32 BGR.
# --------------------------------------------------------------------------------------------------------------

FELT_COLOURS = [(60, 165, 55), (45, 120, 35), (40, 95, 25), (150, 95, 35), (120, 70, 20), (125, 115, 205),
                (95, 80, 170), (90, 90, 95), (60, 60, 150)]
WOOD_COLOURS = [((95, 150, 200), (60, 105, 150)), ((70, 110, 150), (40, 70, 100)), ((140, 185, 220), (100, 145, 190)),
                ((45, 70, 100), (25, 40, 60)), ((190, 195, 200), (150, 155, 160))]


def tex_felt(rng: np.random.Generator, h: int, w: int, ppu: float) -> np.ndarray:
    """Felt / table cloth: one colour, a fine woven mesh, soft blotches and grain."""
    base = jitter_colour(rng, FELT_COLOURS[rng.integers(len(FELT_COLOURS))], 0.15)
    period = max(2.2, rng.uniform(0.04, 0.1) * ppu)  # mesh cell in texture px, never below Nyquist
    yy, xx = grid_xy(h, w)
    mesh = np.sin(xx * (2 * np.pi / period)) * np.sin(yy * (2 * np.pi / period))
    shade = 1 + rng.uniform(0.02, 0.08) * mesh + rng.uniform(0.03, 0.12) * (fbm(rng, h, w, 6) - 0.5)
    shade += rng.uniform(0.0, 0.06) * (rng.random((h, w), dtype=np.float32) - 0.5)
    return base[None, None, :] * shade[..., None]


def tex_wood(rng: np.random.Generator, h: int, w: int, ppu: float) -> np.ndarray:
    """Wood: planks of grain lines bent by noise, with dark seams between planks."""
    light, dark = (jitter_colour(rng, c, 0.12) for c in WOOD_COLOURS[rng.integers(len(WOOD_COLOURS))])
    yy, xx = grid_xy(h, w)
    plank = rng.uniform(2.5, 8.0) * ppu
    warp = (fbm(rng, h, w, 3) - 0.5) * rng.uniform(0.5, 3.0) * ppu
    grain_period = rng.uniform(0.08, 0.4) * ppu
    t = (yy + warp + 0.15 * xx * rng.uniform(-0.1, 0.1)) / grain_period
    grain = (0.5 + 0.5 * np.sin(2 * np.pi * t)) ** rng.uniform(1.0, 4.0)
    mix = (0.55 * grain + 0.45 * fbm(rng, h, w, 12))[..., None]
    img = light[None, None, :] * (1 - mix) + dark[None, None, :] * mix
    plank_id = np.floor((yy + 0.3 * warp) / plank)
    img *= (1 + 0.08 * np.sin(plank_id * 12.9898))[..., None]  # plank-to-plank tone change
    seam = np.abs(((yy + 0.3 * warp) / plank) % 1.0 - 0.5) > 0.5 - 0.6 / plank
    img[seam] *= 0.6
    return img


def tex_cloth(rng: np.random.Generator, h: int, w: int, ppu: float) -> np.ndarray:
    """Cloth: gingham / stripes of two colours, with a weave."""
    c1 = rng.uniform(40, 235, 3).astype(np.float32)
    c2 = np.clip(c1 * rng.uniform(0.4, 0.85), 0, 255)
    period = rng.uniform(0.4, 2.5) * ppu
    yy, xx = grid_xy(h, w)
    a = (np.sin(2 * np.pi * xx / period) > 0).astype(np.float32)
    b = (np.sin(2 * np.pi * yy / period) > 0).astype(np.float32) if rng.random() < 0.6 else np.zeros_like(a)
    mix = cv2.GaussianBlur(np.ascontiguousarray(np.broadcast_to(0.5 * a + 0.5 * b, (h, w))), (0, 0), 0.8)[..., None]
    weave = 1 + 0.05 * np.sin(xx * 2.2) * np.sin(yy * 2.2)
    return (c1[None, None, :] * (1 - mix) + c2[None, None, :] * mix) * weave[..., None]


def tex_laminate(rng: np.random.Generator, h: int, w: int, ppu: float) -> np.ndarray:
    """Light laminate / stone table: pale grey with faint streaks (like the grey tables in the real photos)."""
    base = jitter_colour(rng, (rng.uniform(150, 225),) * 3, 0.06)
    streak = cv2.resize(rng.random((h, max(2, w // 40)), dtype=np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    shade = 1 + 0.12 * (streak - 0.5) + 0.08 * (fbm(rng, h, w, 8) - 0.5)
    return base[None, None, :] * shade[..., None]


def tex_procedural(rng: np.random.Generator, h: int, w: int, ppu: float) -> np.ndarray:
    """Anything else: a gradient between two random colours, fractal noise, sometimes stripes."""
    c1, c2 = rng.uniform(20, 240, 3).astype(np.float32), rng.uniform(20, 240, 3).astype(np.float32)
    yy, xx = grid_xy(h, w)
    ang = rng.uniform(0, 2 * np.pi)
    g = (xx * math.cos(ang) + yy * math.sin(ang)) / max(h, w)
    g = np.broadcast_to((g - g.min()) / max(1e-6, float(np.ptp(g))), (h, w))
    mix = 0.6 * g + 0.4 * fbm(rng, h, w, rng.uniform(3, 20))
    if rng.random() < 0.4:
        period = rng.uniform(0.3, 3) * ppu
        mix = 0.7 * mix + 0.3 * (np.sin(2 * np.pi * (xx * math.sin(ang) - yy * math.cos(ang)) / period) > 0)
    return c1[None, None, :] * (1 - mix[..., None]) + c2[None, None, :] * mix[..., None]


TEXTURES: list[tuple[Callable[..., np.ndarray], float]] = [
    (tex_felt, 0.42), (tex_wood, 0.18), (tex_cloth, 0.1), (tex_laminate, 0.14), (tex_procedural, 0.16)]


def random_texture(rng: np.random.Generator, h: int, w: int, ppu: float) -> np.ndarray:
    """One table material."""
    fns, weights = zip(*TEXTURES, strict=True)
    fn = fns[rng.choice(len(fns), p=np.asarray(weights) / sum(weights))]
    return fn(rng, h, w, ppu)


# --------------------------------------------------------------------------------------------------------------
# The tile set: one per scene (a table uses one set), its colours, proportions and face textures.
# --------------------------------------------------------------------------------------------------------------

IVORY = [(242, 244, 246), (228, 240, 246), (212, 232, 242), (200, 226, 238), (236, 238, 232)]
BACKS = [(70, 150, 40), (45, 110, 25), (215, 170, 80), (230, 195, 120), (150, 80, 20), (40, 170, 230),
         (30, 140, 250), (60, 200, 235), (235, 238, 240), (50, 60, 190)]


@dataclass
class TileSet:
    """Look of one physical set."""

    style: str
    ivory: np.ndarray  # BGR of the front layer and face
    back: np.ndarray  # BGR of the back layer and back face
    back_frac: float  # share of the thickness taken by the coloured back layer
    w: float  # tile width (world unit = 1 ~ 28 mm)
    h: float  # tile height
    d: float  # thickness
    corner: float  # radius of the rounded vertical edges, in tile widths
    glyph_scale: float  # glyph size on the face (one of GLYPH_SCALES, so scaled glyphs can be cached)
    ink: float  # darkening of the glyph ink
    back_pattern: int  # 0 plain, 1 grain noise, 2 embossed frame, 3 subtle gradient
    level: int = 0  # texture detail: faces are built at TEX size / 2**level (small tiles need less)
    faces: dict[Face, list[np.ndarray]] = field(default_factory=dict)  # face -> texture mip levels (BGRA)
    _shapes: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def face_shape(self) -> tuple[np.ndarray, np.ndarray]:
        """(alpha uint8, rim shading float32) of a face: rounded corners, darker towards the bevelled rim."""
        if self.level not in self._shapes:
            w, h = TEX_W >> self.level, TEX_H >> self.level
            yy, xx = grid_xy(h, w)
            r = self.corner * w
            # signed distance to the rounded rectangle (negative inside), in texture pixels
            qx = np.abs(xx + 0.5 - w / 2) - (w / 2 - r)
            qy = np.abs(yy + 0.5 - h / 2) - (h / 2 - r)
            sdf = np.hypot(np.maximum(qx, 0), np.maximum(qy, 0)) + np.minimum(np.maximum(qx, qy), 0) - r
            alpha = (np.clip(0.5 - sdf, 0, 1) * 255).astype(np.uint8)
            rim = 0.8 + 0.2 * np.clip(-sdf / (0.07 * w), 0, 1) ** 0.6
            self._shapes[self.level] = alpha, rim[..., None].astype(np.float32)
        return self._shapes[self.level]


GLYPH_SCALES = (0.76, 0.82, 0.88, 0.93)


def random_tileset(rng: np.random.Generator, art: dict[str, dict[Face, np.ndarray]]) -> TileSet:
    """A random set: style, ivory tone, back colour (sometimes all white), proportions."""
    styles = sorted(art)
    style = styles[rng.integers(len(styles))]
    ivory = jitter_colour(rng, IVORY[rng.integers(len(IVORY))], 0.04)
    back = jitter_colour(rng, BACKS[rng.integers(len(BACKS))], 0.12) if rng.random() < 0.94 else ivory * 0.98
    return TileSet(style=style, ivory=ivory, back=back, back_frac=rng.uniform(0.3, 0.65), w=1.0,
                   h=rng.uniform(1.28, 1.42), d=rng.uniform(0.6, 0.85), corner=rng.uniform(0.05, 0.14),
                   glyph_scale=GLYPH_SCALES[rng.integers(len(GLYPH_SCALES))], ink=rng.uniform(0.8, 1.0),
                   back_pattern=int(rng.integers(4)))


def scaled_glyph(style: str, face: Face, scale: float, level: int) -> tuple[np.ndarray, np.ndarray]:
    """(alpha, colour) float32 of a glyph shrunk by ``scale``, centred on a face canvas of TEX size / 2**level.

    Cached per process and per copy of the artwork (a few MB per style and level).
    """
    return _scaled_glyph(_ART_SHARED, style, face, scale, level)


# Bounded above every (style, face, scale, level) one artwork copy has (3 styles × ~45 faces × 4 scales × levels).
@functools.lru_cache(maxsize=4096)
def _scaled_glyph(shared: Path, style: str, face: Face, scale: float, level: int) -> tuple[np.ndarray, np.ndarray]:
    art = _art_of(shared)
    glyph = art[style].get(face)
    if glyph is None:  # an "other" face from another style
        glyph = next(a[face] for a in art.values() if face in a)
    w, h = TEX_W >> level, TEX_H >> level
    gw, gh = int(w * scale), int(h * scale)
    canvas = np.zeros((h, w, 4), np.uint8)
    x0, y0 = (w - gw) // 2, (h - gh) // 2
    canvas[y0 : y0 + gh, x0 : x0 + gw] = cv2.resize(glyph, (gw, gh), interpolation=cv2.INTER_AREA)
    return canvas[..., 3:].astype(np.float32) / 255, canvas[..., :3].astype(np.float32)


def _mips(bgr: np.ndarray, alpha: np.ndarray) -> list[np.ndarray]:
    """Texture pyramid (BGRA), so small tiles are not sampled from a texture many times their size (aliasing)."""
    bgra = np.dstack([np.clip(bgr, 0, 255).astype(np.uint8), alpha])
    levels = [bgra]
    while levels[-1].shape[1] > 24:
        levels.append(cv2.pyrDown(levels[-1]))
    return levels


def face_texture(ts: TileSet, face: Face) -> list[np.ndarray]:
    """The face of one tile kind in this set (glyph on ivory, rim, rounded corners), cached per scene."""
    if face not in ts.faces:
        a, colour = scaled_glyph(ts.style, face, ts.glyph_scale, ts.level)
        alpha, rim = ts.face_shape()
        img = (ts.ivory * (1 - a) + colour * (ts.ink * a)) * rim
        ts.faces[face] = _mips(img, alpha)
    return ts.faces[face]


def back_texture(ts: TileSet, rng: np.random.Generator | None = None) -> list[np.ndarray]:
    """The back face: the back colour, plain or with a faint pattern (drawn with ``rng`` on first use)."""
    key = "__back__"
    if key in ts.faces:
        return ts.faces[key]
    rng = rng if rng is not None else np.random.default_rng(0)
    w, h = TEX_W >> ts.level, TEX_H >> ts.level
    img = np.empty((h, w, 3), np.float32)
    img[:] = ts.back
    if ts.back_pattern == 1:
        img *= (1 + 0.06 * (fbm(rng, h, w, 10) - 0.5))[..., None]
    elif ts.back_pattern == 2:  # an embossed frame or oval, slightly darker
        m = np.zeros((h, w), np.float32)
        line = max(1, w // 48)
        if rng.random() < 0.5:
            cv2.ellipse(m, (w // 2, h // 2), (w // 3, h // 3), 0, 0, 360, 1.0, line, cv2.LINE_AA)
        else:
            cv2.rectangle(m, (w // 6, h // 7), (w * 5 // 6, h * 6 // 7), 1.0, line, cv2.LINE_AA)
        img *= (1 - 0.1 * m)[..., None]
    elif ts.back_pattern == 3:
        img *= np.linspace(1.05, 0.95, h, dtype=np.float32)[:, None, None]
    alpha, rim = ts.face_shape()
    ts.faces[key] = _mips(img * rim, alpha)
    return ts.faces[key]


# --------------------------------------------------------------------------------------------------------------
# Layout: which tiles lie where. World frame: table plane z = 0, x to the right of the seated owner, y away from
# them, z up. One world unit = one tile width.
# --------------------------------------------------------------------------------------------------------------


@dataclass
class TilePose:
    """One tile on the table."""

    face: Face
    pose: str  # "up" (flat, face up), "down" (flat, face down), "stand" (upright, face towards -y rotated by yaw)
    x: float
    y: float
    yaw: float  # rotation about z, radians; 0 = upright text for the player sitting at -y
    z0: float = 0.0  # height of the tile's lowest point (stacked tiles lie on another tile)

    @property
    def label(self) -> int:
        """Detector class: `back` for a face-down tile, `other` for non-suited faces, else the suited tile."""
        if self.pose == "down":
            return BACK
        return OTHER if self.face.startswith("other/") else CLASS_NAMES.index(self.face)


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


# --------------------------------------------------------------------------------------------------------------
# Geometry: tile boxes in 3-D, the camera.
# --------------------------------------------------------------------------------------------------------------


def tile_frame(t: TilePose, ts: TileSet) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(face centre, u, v, n) of a tile: u = face right, v = face up, n = u x v = out of the face.

    n = u x v always (written out below), so the artwork mapped with u to the right and v up is never mirrored.
    """
    c, s = math.cos(t.yaw), math.sin(t.yaw)
    u = np.array([c, s, 0.0])
    if t.pose == "up":
        v, n = np.array([-s, c, 0.0]), np.array([0.0, 0.0, 1.0])
        centre = np.array([t.x, t.y, t.z0 + ts.d])
    elif t.pose == "down":
        v, n = np.array([s, -c, 0.0]), np.array([0.0, 0.0, -1.0])
        centre = np.array([t.x, t.y, t.z0])
    else:  # standing, face towards the player
        v, n = np.array([0.0, 0.0, 1.0]), np.array([s, -c, 0.0])
        centre = np.array([t.x, t.y, t.z0 + ts.h / 2]) + n * ts.d / 2
    return centre, u, v, n


def tile_corners(t: TilePose, ts: TileSet) -> np.ndarray:
    """8 x 3 box corners: the face quad (TL, TR, BR, BL as the artwork is read), then the same at the back."""
    c, u, v, n = tile_frame(t, ts)
    hw, hh = ts.w / 2, ts.h / 2
    face = np.array([c - hw * u + hh * v, c + hw * u + hh * v, c + hw * u - hh * v, c - hw * u - hh * v])
    return np.concatenate([face, face - ts.d * n])


_ARC = np.linspace(0, np.pi / 2, 4)


def tile_outline(t: TilePose, ts: TileSet) -> np.ndarray:
    """32 x 3 points: the rounded-corner outline of the face plane, then of the back plane.

    The tile's silhouette from any view is the convex hull of their projections (the body is convex).
    """
    c, u, v, n = tile_frame(t, ts)
    r = ts.corner * ts.w
    ax, ay = ts.w / 2 - r, ts.h / 2 - r
    pts = []
    for sx, sy, a0 in ((1, 1, 0.0), (-1, 1, np.pi / 2), (-1, -1, np.pi), (1, -1, 1.5 * np.pi)):
        for a in a0 + _ARC:
            pts.append(c + (sx * ax + r * math.cos(a)) * u + (sy * ay + r * math.sin(a)) * v)
    face = np.array(pts)
    return np.concatenate([face, face - ts.d * n])


@dataclass
class Camera:
    """Pinhole camera looking at the table: x_img = K R (X - C)."""

    K: np.ndarray
    R: np.ndarray
    C: np.ndarray
    size: int

    def project(self, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World points (N x 3) -> image points (N x 2, continuous pixels, image = [0, size]^2) and depths (N)."""
        cam = (pts - self.C) @ self.R.T
        z = cam[:, 2]
        uv = cam @ self.K.T
        return uv[:, :2] / np.maximum(z, 1e-6)[:, None], z

    def table_homography(self) -> np.ndarray:
        """3 x 3 map from table coordinates (x, y, 1) to image pixels."""
        return self.K @ np.column_stack([self.R[:, 0], self.R[:, 1], -self.R @ self.C])

    def unproject_to_table(self, uv: np.ndarray) -> np.ndarray:
        """Image points -> where their rays hit the table (N x 2)."""
        rays = np.column_stack([uv, np.ones(len(uv))]) @ np.linalg.inv(self.K).T @ self.R
        t = -self.C[2] / np.minimum(rays[:, 2], -1e-6)
        return (self.C[None, :] + t[:, None] * rays)[:, :2]

    def tile_px(self, width: float) -> float:
        """Roughly how many pixels a length ``width`` spans where the optical axis meets the table."""
        x, y = self.unproject_to_table(np.array([[self.size / 2, self.size / 2]]))[0]
        return float(self.K[0, 0] * width / np.linalg.norm(self.C - (x, y, 0.0)))


def look_at(target: np.ndarray, tilt: float, azimuth: float, roll: float, dist: float, fx: float, fy: float,
            size: int) -> Camera:
    """Camera at ``dist`` from ``target``, tilted ``tilt`` from looking straight down, standing on the side
    ``azimuth`` (-pi/2 = the player's seat at -y), rolled about its axis by ``roll``."""
    back = np.array([math.cos(azimuth) * math.sin(tilt), math.sin(azimuth) * math.sin(tilt), math.cos(tilt)])
    z = -back
    x = np.array([-math.sin(azimuth), math.cos(azimuth), 0.0])  # horizontal, to the viewer's right
    y = np.cross(z, x)  # image down; (x, y, z) is right-handed, so the image is not mirrored
    cr, sr = math.cos(roll), math.sin(roll)
    x, y = cr * x + sr * y, -sr * x + cr * y
    K = np.array([[fx, 0, size / 2], [0, fy, size / 2], [0, 0, 1]])
    return Camera(K, np.stack([x, y, z]), target + dist * back, size)


SCALE_PX = {"hand": (24, 120), "table": (20, 45), "loose": (26, 120)}  # tile width in px at 640, per scene kind


def random_camera(rng: np.random.Generator, kind: str, tiles: list[TilePose], ts: TileSet, size: int) -> Camera:
    """A phone's view of the layout: tilt 0-60 deg, mostly from the owner's side, scale by scene kind."""
    tilt = math.radians(rng.uniform(0, 60) if rng.random() < 0.75 else rng.uniform(0, 15))
    if kind == "table" or rng.random() < 0.15:
        azimuth = rng.uniform(-math.pi, math.pi) if rng.random() < 0.3 else -math.pi / 2 + rng.normal(0, 0.3)
    else:
        azimuth = -math.pi / 2 + rng.normal(0, 0.15)
    # mostly level rows; sometimes the phone is turned any way (rotations are fine, mirroring never)
    roll = rng.normal(0, 0.06) if rng.random() < 0.8 else rng.uniform(-math.pi, math.pi)
    w_px = log_uniform(rng, *SCALE_PX[kind]) * size / 640
    f = log_uniform(rng, 0.85, 2.2) * size
    f = max(f, 7.5 * w_px)  # a phone does not focus closer than about 8 tile widths (~20 cm)
    half_diag = math.hypot(size / 2, size / 2)  # keep the horizon out: the steepest corner ray must hit the table
    f = max(f, half_diag / math.tan(math.radians(80) - tilt))
    aspect = 1.0 if rng.random() < 0.6 else rng.uniform(0.8, 1.25)  # the real photos are stretched to square
    xy = np.array([(t.x, t.y) for t in tiles]) if tiles else np.zeros((1, 2))
    centre = xy.mean(0)
    frac = rng.uniform(0.0, 1.0) if kind != "table" else rng.uniform(0.0, 0.3)
    target = np.array([*(centre + frac * (xy[rng.integers(len(xy))] - centre)), 0.0])
    return look_at(target, tilt, azimuth, roll, f * ts.w / w_px, f, f * aspect, size)


@dataclass
class Placed:
    """A tile with its geometry as seen by the camera."""

    tile: TilePose
    frame: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    corners: np.ndarray  # 8 x 3
    uv: np.ndarray  # 8 x 2 projected corners
    outline_uv: np.ndarray  # 32 x 2 projected rounded outlines
    depth: float  # camera distance of the face centre, for painter's order

    def box(self, size: int) -> tuple[np.ndarray, float]:
        """Axis-aligned box of the silhouette clipped to the image, and the fraction of it inside."""
        (x0, y0), (x1, y1) = self.outline_uv.min(0), self.outline_uv.max(0)
        cx0, cy0, cx1, cy1 = max(0.0, x0), max(0.0, y0), min(float(size), x1), min(float(size), y1)
        area = max(1e-6, (x1 - x0) * (y1 - y0))
        frac = max(0.0, cx1 - cx0) * max(0.0, cy1 - cy0) / area
        return np.array([cx0, cy0, cx1, cy1]), frac


def place(cam: Camera, t: TilePose, ts: TileSet) -> Placed | None:
    """Project a tile; None when it is behind the camera or entirely outside the image."""
    corners = tile_corners(t, ts)
    uv, z = cam.project(corners)
    outline_uv, oz = cam.project(tile_outline(t, ts))
    if (z <= 0.05).any() or (oz <= 0.05).any():
        return None
    p = Placed(t, tile_frame(t, ts), corners, uv, outline_uv, 0.0)
    if p.box(cam.size)[1] <= 0:
        return None
    p.depth = float(np.linalg.norm(p.frame[0] - cam.C))
    return p


# --------------------------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------------------------


def render_table(rng: np.random.Generator, cam: Camera, tiles: list[TilePose], ts: TileSet) -> np.ndarray:
    """The table plane in perspective (uint8 BGR): a material, maybe a rim, a tray, clutter; warped into view."""
    s = cam.size
    quad = cam.unproject_to_table(np.array([[0, 0], [s, 0], [s, s], [0, s]], np.float64))
    lo = quad.min(0) - 1
    extent = np.minimum(quad.max(0) + 1 - lo, 400.0)
    ppu = float(min(480 / extent.max(), 120.0))  # texture px per world unit
    tw, th = max(8, int(extent[0] * ppu)), max(8, int(extent[1] * ppu))
    tex = random_texture(rng, th, tw, ppu)
    to_tex = np.array([[ppu, 0, -lo[0] * ppu], [0, ppu, -lo[1] * ppu], [0, 0, 1]])
    if rng.random() < 0.3:
        add_rim(rng, tex, ppu)
    if tiles and rng.random() < 0.12:
        add_tray(rng, tex, tiles, ts, to_tex)
    if rng.random() < 0.3:
        add_clutter(rng, tex, ppu)
    tex = np.clip(tex, 0, 255).astype(np.uint8)
    h_img = cam.table_homography() @ np.linalg.inv(to_tex)
    return cv2.warpPerspective(tex, h_img, (s, s), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def add_rim(rng: np.random.Generator, tex: np.ndarray, ppu: float) -> None:
    """A second surface beyond a straight edge (the wooden frame of a table, a tray's lip)."""
    h, w = tex.shape[:2]
    other = tex_wood(rng, h, w, ppu) if rng.random() < 0.6 else tex_procedural(rng, h, w, ppu)
    ang = rng.uniform(0, 2 * np.pi)
    yy, xx = grid_xy(h, w)
    d = (xx - w * rng.uniform(0.2, 0.8)) * math.cos(ang) + (yy - h * rng.uniform(0.2, 0.8)) * math.sin(ang)
    mask = np.broadcast_to(d > 0, (h, w))
    tex[mask] = other[mask]
    edge = np.broadcast_to(np.abs(d) < max(1.0, 0.08 * ppu), (h, w))
    tex[edge] *= 0.55


def add_tray(rng: np.random.Generator, tex: np.ndarray, tiles: list[TilePose], ts: TileSet,
             to_tex: np.ndarray) -> None:
    """A dark tray under the tiles (several real photos show tiles laid out in a black tray)."""
    pts = np.concatenate([tile_corners(t, ts)[:, :2] for t in tiles])
    lo, hi = pts.min(0) - rng.uniform(0.3, 1.0), pts.max(0) + rng.uniform(0.3, 1.0)
    box = np.array([[lo[0], lo[1], 1], [hi[0], hi[1], 1]]) @ to_tex.T
    (x0, y0), (x1, y1) = box[0, :2].astype(int), box[1, :2].astype(int)
    colour = jitter_colour(rng, (35, 35, 38), 0.3).tolist()
    lip = max(2, int(0.25 * to_tex[0, 0]))
    cv2.rectangle(tex, (x0, y0), (x1, y1), [c * 1.6 for c in colour], -1)
    cv2.rectangle(tex, (x0 + lip, y0 + lip), (x1 - lip, y1 - lip), colour, -1)


def add_clutter(rng: np.random.Generator, tex: np.ndarray, ppu: float) -> None:
    """Flat things that are not tiles: coins, chips, paper, a phone."""
    h, w = tex.shape[:2]
    for _ in range(int(rng.integers(1, 4))):
        colour = rng.uniform(0, 255, 3).tolist()
        cx, cy = int(rng.uniform(0, w)), int(rng.uniform(0, h))
        r = int(rng.uniform(0.3, 2.5) * ppu)
        if rng.random() < 0.5:
            cv2.circle(tex, (cx, cy), max(2, r // 2), colour, -1, cv2.LINE_AA)
        else:
            box = ((cx, cy), (r * rng.uniform(1, 3), r * rng.uniform(0.5, 2)), rng.uniform(0, 180))
            cv2.fillConvexPoly(tex, cv2.boxPoints(box).astype(np.int32), colour, cv2.LINE_AA)


@dataclass
class Light:
    """A directional light (unit vector towards it) and how much light comes from everywhere else."""

    to_light: np.ndarray
    ambient: float

    def shade(self, normal: np.ndarray) -> float:
        """Brightness factor of a surface with this normal."""
        return self.ambient + (1 - self.ambient) * max(0.0, float(normal @ self.to_light))


def random_light(rng: np.random.Generator) -> Light:
    """Light from above (room lamps), 45-88 deg high, from any side."""
    el, az = math.radians(rng.uniform(45, 88)), rng.uniform(-math.pi, math.pi)
    to_light = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    return Light(to_light, rng.uniform(0.5, 0.75))


def draw_shadows(img: np.ndarray, cam: Camera, placed: list[Placed], ts: TileSet, light: Light,
                 tile_px: float, rng: np.random.Generator) -> np.ndarray:
    """Darken the table under and beside the tiles: a soft cast shadow and a tight contact shadow."""
    s = cam.size
    scale = 4  # shadows are blurry anyway: draw and blur at quarter resolution
    cast = np.zeros((s // scale, s // scale), np.float32)
    contact = np.zeros_like(cast)
    lz = max(light.to_light[2], 0.3)
    for p in placed:
        corners = p.corners
        base = corners * [1, 1, 0]
        slid = base.copy()
        slid[:, :2] -= corners[:, 2:3] / lz * light.to_light[None, :2]  # slide along the light onto z = 0
        hull_pts, z = cam.project(np.concatenate([base, slid]))
        if (z <= 0.05).any():  # a shadow reaching behind the camera would project nonsense
            continue
        hull_pts = np.clip(hull_pts, -4 * s, 5 * s)
        cv2.fillConvexPoly(cast, cv2.convexHull((hull_pts / scale).astype(np.int32)), 1.0)
        foot, _ = cam.project(base)
        cv2.fillConvexPoly(contact, cv2.convexHull((foot / scale).astype(np.int32)), 1.0)
    cast = cv2.GaussianBlur(cast, (0, 0), max(0.6, tile_px * rng.uniform(0.08, 0.25) / scale))
    contact = cv2.GaussianBlur(contact, (0, 0), max(0.5, tile_px * 0.04 / scale))
    dark = rng.uniform(0.2, 0.5) * cast + rng.uniform(0.15, 0.3) * contact
    dark = cv2.resize(np.clip(dark, 0, 0.75), (s, s), interpolation=cv2.INTER_LINEAR)
    return (img * (1 - dark[..., None])).astype(np.uint8)


def _roi(pts: np.ndarray, size: int) -> tuple[int, int, int, int] | None:
    """Integer bounds (x0, y0, x1, y1) of points inside the image, or None when outside."""
    x0, y0 = np.floor(pts.min(0)).astype(int) - 1
    x1, y1 = np.ceil(pts.max(0)).astype(int) + 1
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(size, x1), min(size, y1)
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def draw_textured_quad(img: np.ndarray, levels: list[np.ndarray], quad: np.ndarray, shade: float) -> None:
    """Warp a BGRA texture (TL, TR, BR, BL corners) onto an image quad; alpha gives corners and soft edges."""
    roi = _roi(quad, img.shape[0])
    if roi is None:
        return
    x0, y0, x1, y1 = roi
    span = max(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[2] - quad[3]))
    tex = levels[0]
    for lv in levels:  # the smallest level still at least as wide as the quad
        if lv.shape[1] >= span:
            tex = lv
    th, tw = tex.shape[:2]
    src = np.array([[-0.5, -0.5], [tw - 0.5, -0.5], [tw - 0.5, th - 0.5], [-0.5, th - 0.5]], np.float32)
    dst = (quad - 0.5 - (x0, y0)).astype(np.float32)  # continuous coords -> pixel centres
    m = cv2.getPerspectiveTransform(src, dst)
    warped = cv2.warpPerspective(tex, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    a = warped[..., 3:].astype(np.float32) * (1 / 255)
    patch = img[y0:y1, x0:x1].astype(np.float32)
    img[y0:y1, x0:x1] = (patch * (1 - a) + warped[..., :3].astype(np.float32) * (shade * a)).astype(np.uint8)


def fill_poly(img: np.ndarray, pts: np.ndarray, colour: np.ndarray) -> None:
    """A flat-coloured convex polygon with anti-aliased, sub-pixel precise edges."""
    cv2.fillConvexPoly(img, np.round(pts * 16).astype(np.int32), np.clip(colour, 0, 255).tolist(), cv2.LINE_AA,
                       shift=4)


def draw_tile(img: np.ndarray, cam: Camera, p: Placed, ts: TileSet, light: Light,
              ids: np.ndarray | None = None, tile_id: int = 0, tops: np.ndarray | None = None
              ) -> tuple[int, str | None, int]:
    """Draw one tile: its sides in two layers (ivory front, coloured back), then the face or the back on top.

    Drawn as a box, then cut to the rounded silhouette (hull of the rounded outlines), which also rounds the
    vertical edges; everything outside the silhouette is restored from the background. The silhouette is also
    written into ``ids`` (which tile is in front where) and the face or back drawn into ``tops`` (where a tile
    shows its face or back rather than a side). Returns the silhouette's pixel count inside the image, which top
    was drawn (``"face"``, ``"back"`` or None: only sides in view) and that top's pixel count.
    """
    roi = _roi(p.outline_uv, img.shape[0])
    if roi is None:
        return 0, None, 0
    x0, y0, x1, y1 = roi
    before = img[y0:y1, x0:x1].copy()
    centre, _, _, n = p.frame
    uv, corners = p.uv, p.corners
    split = 1 - ts.back_frac
    side_shades = []
    for i in range(4):  # side i spans face edge i -> i+1 and the same edge at the back
        j = (i + 1) % 4
        mid = (corners[i] + corners[j]) / 2 - ts.d / 2 * n
        normal = mid - (centre - ts.d / 2 * n)
        normal /= np.linalg.norm(normal)
        if normal @ (cam.C - mid) <= 0:
            continue
        s_i, s_j = uv[i] + split * (uv[i + 4] - uv[i]), uv[j] + split * (uv[j + 4] - uv[j])
        shade = light.shade(normal)
        side_shades.append(shade)
        fill_poly(img, np.array([uv[i], uv[j], s_j, s_i]), ts.ivory * shade * 0.97)
        fill_poly(img, np.array([s_i, s_j, uv[j + 4], uv[i + 4]]), ts.back * shade)
    under = float(np.mean(side_shades)) if side_shades else 0.8
    shown = None
    if n @ (cam.C - centre) > 0:
        top, colour, shown = uv[:4], ts.ivory, "face"
        levels = face_texture(ts, p.tile.face)
        shade = light.shade(n)
    elif -n @ (cam.C - (centre - ts.d * n)) > 0:
        # the back is seen from behind the face: TR, TL, BL, BR keeps its texture unmirrored for its own normal
        top, colour, shown = uv[[5, 4, 7, 6]], ts.back, "back"
        levels = back_texture(ts)
        shade = light.shade(-n)
    else:
        top = None
    if top is not None:
        fill_poly(img, top, colour * under * 0.97)  # the rounded edge below the face's rounded corners
        draw_textured_quad(img, levels, top, shade)
        if np.linalg.norm(top[1] - top[0]) > 30:  # the bevel along the top edge catches the light
            hl = np.clip(colour * shade * 1.1 + 12, 0, 255).tolist()
            cv2.polylines(img, [np.round(top * 16).astype(np.int32).reshape(-1, 1, 2)], True, hl, 1, cv2.LINE_AA,
                          shift=4)
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    hull = cv2.convexHull(np.round((p.outline_uv - (x0, y0)) * 16).astype(np.int32))
    cv2.fillConvexPoly(mask, hull, 255, cv2.LINE_AA, shift=4)
    m = mask[..., None].astype(np.float32) * (1 / 255)
    now = img[y0:y1, x0:x1].astype(np.float32)
    img[y0:y1, x0:x1] = (before * (1 - m) + now * m).astype(np.uint8)
    inside = mask > 127
    if ids is not None:
        ids[y0:y1, x0:x1][inside] = tile_id
    top_px = 0
    if top is not None:
        on_top = np.zeros_like(mask)
        cv2.fillConvexPoly(on_top, np.round((top - (x0, y0)) * 16).astype(np.int32), 255, cv2.LINE_AA, shift=4)
        on_top = (on_top > 127) & inside
        top_px = int(np.count_nonzero(on_top))
    if tops is not None:
        tops[y0:y1, x0:x1][inside] = False
        if top is not None:
            tops[y0:y1, x0:x1][on_top] = True
    return int(np.count_nonzero(inside)), shown, top_px


# --------------------------------------------------------------------------------------------------------------
# Camera effects
# --------------------------------------------------------------------------------------------------------------


def light_field(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Multiplicative light (uneven lighting times white balance) and additive glare, each size x size x 3.

    Computed on a coarse grid and scaled up: both are smooth.
    """
    g = 48
    yy, xx = grid_xy(g, g)
    yy, xx = yy / (g - 1) - 0.5, xx / (g - 1) - 0.5
    ang = rng.uniform(0, 2 * np.pi)
    fld = 1 + rng.uniform(0, 0.5) * (xx * math.cos(ang) + yy * math.sin(ang))
    fld = fld * (1 - rng.uniform(0, 0.5) * (xx**2 + yy**2))
    fld = fld * (1 + rng.uniform(0, 0.2) * (value_noise(rng, g, g, 3) - 0.5)) * rng.uniform(0.75, 1.2)
    fld = fld[..., None] * rng.uniform(0.92, 1.08, 3)  # white balance
    glare = np.zeros((g, g), np.float32)
    for _ in range(int(rng.choice([0, 1, 2], p=[0.55, 0.35, 0.1]))):
        cx, cy, r = rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5), rng.uniform(0.03, 0.2)
        glare += rng.uniform(40, 140) * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))
    up = (size, size)
    glare3 = np.repeat(glare[..., None], 3, axis=2)
    return (cv2.resize(fld.astype(np.float32), up, interpolation=cv2.INTER_LINEAR),
            cv2.resize(glare3, up, interpolation=cv2.INTER_LINEAR))


def photometric(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Lighting, glare, white balance, saturation, then gamma and contrast, as phones and lamps give them."""
    fld, glare = light_field(rng, img.shape[0])
    out = cv2.add(cv2.multiply(img.astype(np.float32), fld), glare)
    grey = cv2.cvtColor(cv2.cvtColor(out, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    sat = rng.uniform(0.65, 1.3)
    out = cv2.addWeighted(out, sat, grey, 1 - sat, 0)
    out = cv2.convertScaleAbs(cv2.threshold(out, 0, 0, cv2.THRESH_TOZERO)[1])  # clipped to 0..255
    gamma, contrast = rng.uniform(0.8, 1.25), rng.uniform(0.85, 1.15)
    lut = np.clip(((np.arange(256) / 255.0) ** gamma - 0.5) * contrast * 255 + 127.5, 0, 255).astype(np.uint8)
    return cv2.LUT(out, lut)


def blur(img: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Defocus or hand-shake blur, sometimes, and its spread in pixels (the standard deviation of the kernel, 0 for
    none). Its radius grows with the image (drawn for 640 px), so that a scene rendered at a larger ``size`` is the
    same photo with more pixels, not a sharper one."""
    r, per_640 = rng.random(), img.shape[0] / 640
    if r < 0.3:
        sigma = rng.uniform(0.4, 1.4) * per_640
        return cv2.GaussianBlur(img, (0, 0), sigma), sigma
    if r < 0.4:
        k = max(3, round(int(rng.integers(3, 9)) * per_640))
        kernel = np.zeros((k, k), np.float32)
        ang, c = rng.uniform(0, math.pi), (k - 1) / 2
        dx, dy = c * math.cos(ang), c * math.sin(ang)
        cv2.line(kernel, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)), 1.0, 1, cv2.LINE_AA)
        return cv2.filter2D(img, -1, kernel / kernel.sum()), kernel_spread(kernel)
    return img, 0.0


def kernel_spread(kernel: np.ndarray) -> float:
    """How far a blur kernel spreads a point, in pixels: its standard deviation along its widest direction (the
    square root of the larger eigenvalue of its weights' covariance)."""
    ys, xs = np.mgrid[: kernel.shape[0], : kernel.shape[1]]
    cov = np.cov(np.stack([xs.ravel(), ys.ravel()]), aweights=kernel.ravel(), bias=True)
    return float(np.sqrt(np.linalg.eigvalsh(cov).max()))


def sensor_noise(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Gaussian noise in brightness, sometimes."""
    if rng.random() < 0.5:
        return img
    s = img.shape[0]
    # drawn at half resolution: demosaicing and denoising leave phone noise a little blotchy anyway
    noise = rng.standard_normal((s // 2, s // 2), dtype=np.float32) * rng.uniform(1, 6)
    noise = cv2.resize(noise, (s, s), interpolation=cv2.INTER_LINEAR)
    return cv2.add(img, noise[..., None].repeat(3, axis=2), dtype=cv2.CV_8U)


def jpeg(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A round trip through JPEG at a random quality, as phones and messengers do."""
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(35, 96))])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else img


# --------------------------------------------------------------------------------------------------------------
# Scenes
# --------------------------------------------------------------------------------------------------------------


def other_faces(art: dict[str, dict[Face, np.ndarray]]) -> list[Face]:
    """All non-suited faces available in any style."""
    return sorted({f for faces in art.values() for f in faces if f.startswith("other/")})


def texture_level(placed: list[Placed]) -> int:
    """The coarsest texture level still at least as wide as the widest face in view (saves composing time)."""
    span = max((float(np.linalg.norm(p.uv[1] - p.uv[0])) for p in placed), default=0.0)
    level = 0
    while level < 3 and (TEX_W >> (level + 1)) >= span:
        level += 1
    return level


@dataclass
class Labels:
    """What :func:`compose` labels: per tile in view, its box (xyxy pixels, clipped to the image) around the whole
    tile as the camera sees it, face and body, and around its face (or back) alone; its class; and, for
    :func:`difficulty`, how much of the face lies inside the image, how much of that is not hidden behind other
    tiles, and the face's narrow width in pixels (:func:`narrow_width`)."""

    boxes: np.ndarray  # N x 4
    face_boxes: np.ndarray  # N x 4
    classes: np.ndarray  # N
    views: np.ndarray  # N x 3


BOX_KINDS = ("tile", "face")  # what a label's box surrounds: the whole tile as seen, or its face (or back) alone


def compose(rng: np.random.Generator, cam: Camera, tiles: list[TilePose], ts: TileSet,
            light: Light) -> tuple[np.ndarray, Labels]:
    """Table, shadows and tiles (back to front), with their labels. No camera effects."""
    img = render_table(rng, cam, tiles, ts)
    placed = [p for p in (place(cam, t, ts) for t in tiles) if p is not None]
    img = draw_shadows(img, cam, placed, ts, light, cam.tile_px(ts.w), rng)
    ts.level = texture_level(placed)
    back_texture(ts, rng)  # its faint pattern comes from the scene's generator
    order = sorted(placed, key=lambda q: -q.depth)  # painter's order: farthest first
    ids = np.zeros(img.shape[:2], np.int32)  # which tile is in front at each pixel (0 = table)
    tops = np.zeros(img.shape[:2], bool)  # where the tile in front shows its face or back (not a side)
    drawn = [draw_tile(img, cam, p, ts, light, ids, k + 1, tops) for k, p in enumerate(order)]
    seen = np.bincount(ids.ravel(), minlength=len(order) + 1)[1:]
    top_seen = np.bincount(ids[tops], minlength=len(order) + 1)[1:]
    boxes, face_boxes, classes, views = [], [], [], []
    for p, (area, shown, top_px), vis, top_vis in zip(order, drawn, seen, top_seen, strict=True):
        box, frac = p.box(cam.size)
        # drop tiles mostly outside the image or mostly hidden behind other tiles (a kong's covered tile)
        if frac < MIN_VISIBLE or vis < MIN_VISIBLE * area or min(box[2] - box[0], box[3] - box[1]) < 4:
            continue
        label = shown_label(p.tile, shown, top_px, top_vis, area)
        if label is None:
            continue
        top = p.uv[:4] if shown == "face" else p.uv[[5, 4, 7, 6]]
        boxes.append(box)
        rim = p.outline_uv[:16] if shown == "face" else p.outline_uv[16:]  # its rounded outline
        face_boxes.append(np.concatenate([np.maximum(rim.min(0), 0.0), np.minimum(rim.max(0), float(cam.size))]))
        classes.append(label)
        views.append((share_inside(top, cam.size), top_vis / top_px, narrow_width(top)))
    return img, Labels(np.array(boxes, np.float32).reshape(-1, 4), np.array(face_boxes, np.float32).reshape(-1, 4),
                       np.array(classes, np.int64), np.array(views, np.float32).reshape(-1, 3))


def share_inside(quad: np.ndarray, size: int) -> float:
    """The share of a projected face (convex) that lies inside the ``size`` x ``size`` image."""
    quad = np.asarray(quad, np.float32)
    area = abs(cv2.contourArea(quad))
    if area < 1e-6:
        return 0.0
    frame = np.array([[0, 0], [size, 0], [size, size], [0, size]], np.float32)
    inside, _ = cv2.intersectConvexConvex(quad, frame)
    return float(inside) / area


def narrow_width(quad: np.ndarray) -> float:
    """The width of a projected face across its narrow way, in pixels: its area over its longest side (a face
    seen edge-on is a thin strip however long it is)."""
    x, y = quad[:, 0], quad[:, 1]
    area = 0.5 * abs(float(x @ np.roll(y, -1) - y @ np.roll(x, -1)))
    return area / max(float(np.linalg.norm(quad - np.roll(quad, -1, 0), axis=1).max()), 1e-6)


def shown_label(tile: TilePose, shown: str | None, top_px: int, top_vis: int, area: int) -> int | None:
    """The class a person could tell from the image: the tile's own class when its face is in view, `back` when
    its back is (a face-down tile, or a standing one seen from behind), None (no label) when only its sides are,
    or when the face or back is a sliver (seen edge-on) or mostly hidden behind other tiles."""
    if shown is None or top_px < MIN_TOP_SHARE * area or top_vis < MIN_VISIBLE * top_px:
        return None
    return tile.label if shown == "face" else BACK


TRUNCATED, HIDDEN, BLURRED = 1, 2, 4  # why a label is difficult (bits)
DIFFICULT_NAMES = {TRUNCATED: "truncated", HIDDEN: "hidden", BLURRED: "blurred"}
# Where a person stops reading the tiles of the validation scenes (looked at, binned by each measure; the model
# card says how): below 60% inside the image a tile's number is often cut off;
# below 14 times the blur's spread across its narrow way the strokes of 万 numbers run together and dots and
# bamboos can no longer be counted. Every photo is a little soft (lens, demosaicing, JPEG), so the spread counts as
# at least 0.8 px: an unblurred face narrower than 11 px is too small to read.
EASY_INSIDE = 0.6  # a tile less inside the image than this is truncated
EASY_UNHIDDEN = 0.75  # a face (or back) less in view than this is hidden
EASY_SHARPNESS = 14.0  # a face narrower than this many times the blur's spread is blurred
MIN_SPREAD = 0.8  # px


def difficulty(classes: np.ndarray, views: np.ndarray, spread: float) -> np.ndarray:
    """Why each label is difficult, as bits (0: not): the tile is cut by the image border (truncated), its face
    is partly hidden behind other tiles (hidden), or the face is narrow for the blur (blurred). Only faces are
    read: a `back` is a face-down tile however blurred or cut, so it is never difficult. A difficult tile is
    labelled as any other; the benchmark can leave it out, as PASCAL VOC leaves out its ``difficult`` objects.
    Decided from how the scene was made, not from any model."""
    inside, unhidden, width = views.T
    flags = ((inside < EASY_INSIDE) * TRUNCATED | (unhidden < EASY_UNHIDDEN) * HIDDEN
             | (width < EASY_SHARPNESS * max(spread, MIN_SPREAD)) * BLURRED)
    return np.where(classes == BACK, 0, flags).astype(np.uint8)


def difficult_words(flags: np.ndarray) -> list[str]:
    """One word per label for DIR/difficult/SPLIT/NAME.txt: ``-`` (not difficult) or its reasons joined by ``+``
    (``truncated+blurred``); read back by ``vision.training.evaluate.read_difficult``."""
    return ["+".join(w for bit, w in DIFFICULT_NAMES.items() if f & bit) or "-" for f in flags]


@dataclass
class Scene:
    """A rendered scene: the photo, its labels (xyxy boxes in pixels around each whole tile and around its face
    alone, class ids) and, per label, why it is difficult (:func:`difficulty`; 0 when it is not)."""

    image: np.ndarray
    boxes: np.ndarray
    face_boxes: np.ndarray
    classes: np.ndarray
    difficult: np.ndarray


def render_scene(rng: np.random.Generator, size: int = 640) -> Scene:
    """One random scene of ``size`` x ``size`` pixels."""
    art = get_art()
    ts = random_tileset(rng, art)
    kind, tiles = scene_layout(rng, ts, other_faces(art))
    cam = random_camera(rng, kind, tiles, ts, size)
    img, labels = compose(rng, cam, tiles, ts, random_light(rng))
    img = photometric(img, rng)
    img, spread = blur(img, rng)
    img = jpeg(sensor_noise(img, rng), rng)
    return Scene(img, labels.boxes, labels.face_boxes, labels.classes,
                 difficulty(labels.classes, labels.views, spread))


def render_tile_face_on(face: Face = "1s", size: int = 256, style: str = "fluffy") -> tuple[np.ndarray, np.ndarray]:
    """A single face-up tile seen straight from above, no rotation or camera effects (to check orientation).

    Returns the image and the tile's face quad in pixels (TL, TR, BR, BL as the artwork is read).
    """
    ts = random_tileset(np.random.default_rng(0), get_art())
    ts.style = style
    tile = TilePose(face, "up", 0.0, 0.0, 0.0)
    f = float(size)
    cam = look_at(np.array([0.0, 0.0, ts.d]), 0.0, -math.pi / 2, 0.0, f / (0.4 * size), f, f, size)
    img = np.full((size, size, 3), 90, np.uint8)
    placed = place(cam, tile, ts)
    assert placed is not None
    draw_tile(img, cam, placed, ts, Light(np.array([0.0, 0.0, 1.0]), 1.0))
    return img, placed.uv[:4]


# --------------------------------------------------------------------------------------------------------------
# Dataset files
# --------------------------------------------------------------------------------------------------------------


def yolo_lines(boxes: np.ndarray, classes: np.ndarray, size: int) -> list[str]:
    """YOLO txt rows: class cx cy w h, normalised to the image size."""
    lines = []
    for (x0, y0, x1, y1), c in zip(boxes, classes, strict=True):
        cx, cy, w, h = (x0 + x1) / 2 / size, (y0 + y1) / 2 / size, (x1 - x0) / size, (y1 - y0) / size
        lines.append(f"{int(c)} {cx:.6f} {cy:.6f} {w:.6f} {h:.6f}")
    return lines


def read_yolo(path: Path, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of :func:`yolo_lines`: (boxes xyxy in pixels, classes)."""
    rows = [ln.split() for ln in path.read_text().splitlines() if ln.strip()]
    if not rows:
        return np.zeros((0, 4), np.float32), np.zeros(0, np.int64)
    a = np.array(rows, np.float64)
    cx, cy, w, h = (a[:, 1:] * size).T
    boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1).astype(np.float32)
    return boxes, a[:, 0].astype(np.int64)


def write_data_yaml(path: Path, root: Path, train: str | list[str], val: str | list[str]) -> Path:
    """An ultralytics data.yaml with an absolute ``path`` and our 29 class names in order."""

    def fmt(x: str | list[str]) -> str:
        return x if isinstance(x, str) else "[" + ", ".join(f"'{p}'" for p in x) + "]"

    names = ", ".join(f"'{n}'" for n in CLASS_NAMES)
    path.write_text(f"path: {root.resolve()}\ntrain: {fmt(train)}\nval: {fmt(val)}\nnc: {len(CLASS_NAMES)}\n"
                    f"names: [{names}]\n")
    return path


def scene_rng(seed: int, index: int) -> np.random.Generator:
    """The generator for scene ``index``: independent of worker count and order."""
    return np.random.default_rng([seed, index])


def _write_one(job: tuple[Path, int, int, int, str, str]) -> int:
    """Render and save scene ``index`` into split ``split``; returns its number of boxes."""
    out, seed, index, size, split, box_kind = job
    scene = render_scene(scene_rng(seed, index), size)
    name = f"{index:06d}"
    cv2.imwrite(str(out / "images" / split / f"{name}.jpg"), scene.image, [cv2.IMWRITE_JPEG_QUALITY, 95])
    boxes = scene.face_boxes if box_kind == "face" else scene.boxes
    lines = yolo_lines(boxes, scene.classes, size)  # no tiles in view (rare): an empty file, a background
    (out / "labels" / split / f"{name}.txt").write_text("".join(f"{ln}\n" for ln in lines))
    (out / "difficult" / split / f"{name}.txt").write_text("".join(f"{w}\n" for w in difficult_words(scene.difficult)))
    return len(lines)


def _init_worker(shared: Path) -> None:
    """Each worker renders on one thread (the workers are the parallelism)."""
    cv2.setNumThreads(1)
    set_shared(shared)


def build(out_dir: str | Path, n: int, seed: int, size: int = 640, val_frac: float = 0.1, workers: int = 1,
          progress: bool = True, boxes: str = "tile") -> Path:
    """Write ``n`` scenes as an ultralytics dataset under ``out_dir``; returns the data.yaml path. ``boxes``
    (:data:`BOX_KINDS`): what each label's box surrounds, the whole tile as seen (``tile``, the default and what
    the shipped models were trained on) or its face alone (``face``, as the real photos are labelled)."""
    if boxes not in BOX_KINDS:
        raise ValueError(f"boxes must be one of {', '.join(BOX_KINDS)}, not {boxes!r}")
    out = Path(out_dir).resolve()
    for kind in ("images", "labels", "difficult"):
        for split in ("train", "val"):
            (out / kind / split).mkdir(parents=True, exist_ok=True)
    n_val = int(round(n * val_frac))
    val = set(np.random.default_rng([seed, 1 << 30]).permutation(n)[:n_val].tolist())
    jobs = [(out, seed, i, size, "val" if i in val else "train", boxes) for i in range(n)]
    styles = sorted(get_art())  # rasterise / load once before forking
    (out / "build.json").write_text(json.dumps({"n": n, "seed": seed, "size": size, "val_frac": val_frac,
                                                "boxes": boxes, "styles": styles}, indent=1) + "\n")
    bar = tqdm(total=n, desc="scenes", unit="img", disable=not progress)
    if workers <= 1:
        cv2.setNumThreads(1)
        for job in jobs:
            _write_one(job)
            bar.update()
    else:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(workers, _init_worker, (_ART_SHARED,)) as pool:
            for _ in pool.imap_unordered(_write_one, jobs, chunksize=4):
                bar.update()
    bar.close()
    return write_data_yaml(out / "data.yaml", out, "images/train", "images/val")


def draw_boxes(img: np.ndarray, boxes: np.ndarray, classes: np.ndarray,
               difficult: np.ndarray | None = None) -> np.ndarray:
    """A copy of the image with labelled boxes (for previews); difficult labels in grey, with their reasons."""
    out = img.copy()
    flags = np.zeros(len(classes), np.uint8) if difficult is None else difficult
    words = difficult_words(flags)
    for (x0, y0, x1, y1), c, f, w in zip(boxes.astype(int), classes, flags, words, strict=True):
        colour = ((160, 160, 160) if f else (0, 0, 255) if c == BACK else (255, 0, 255) if c == OTHER
                  else (0, 255, 0))
        text = CLASS_NAMES[c] + (f" ({w})" if f else "")
        cv2.rectangle(out, (x0, y0), (x1, y1), colour, 1)
        cv2.putText(out, text, (x0 + 1, y0 + 10), cv2.FONT_HERSHEY_SIMPLEX, 0.35, colour, 1, cv2.LINE_AA)
    return out


def preview(out_dir: str | Path, n: int, seed: int, size: int = 640) -> list[Path]:
    """Save ``n`` scenes as PNG with their boxes drawn."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        scene = render_scene(scene_rng(seed, i), size)
        p = out / f"scene_{seed}_{i:03d}.png"
        cv2.imwrite(str(p), draw_boxes(scene.image, scene.boxes, scene.classes, scene.difficult))
        paths.append(p)
    return paths


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="dataset folder to write")
    ap.add_argument("--preview", type=Path, help="write PNG previews with boxes here instead of a dataset")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", type=int, default=640)
    ap.add_argument("--val-frac", type=float, default=0.1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--boxes", choices=BOX_KINDS, default="tile",
                    help="what a label's box surrounds: the whole tile as seen (default) or its face alone")
    ap.add_argument("--shared", type=Path, default=SHARED, help="the shared material folder (tile art)")
    args = ap.parse_args(argv)
    set_shared(args.shared)
    if args.preview:
        for p in preview(args.preview, args.n, args.seed, args.size):
            print(p)
        return
    if not args.out:
        ap.error("--out or --preview is required")
    styles = available_styles(args.shared)
    missing = [s for s in KMJ_STYLES if s not in styles]
    print(f"tile styles: {', '.join(styles)}", file=sys.stderr)
    if missing:
        print(f"warning: the KMahjongg styles {', '.join(missing)} are not installed (apt-get install "
              f"kdegames-mahjongg-data-kf5 librsvg2-bin): these scenes differ from those built with them",
              file=sys.stderr)
    print(build(args.out, args.n, args.seed, args.size, args.val_frac, args.workers, boxes=args.boxes))


if __name__ == "__main__":
    main()
