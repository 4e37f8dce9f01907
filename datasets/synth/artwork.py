"""Tile artwork and tile sets.

Glyph images (BGRA, TEX_H x TEX_W, transparent background) per style: the CC0 FluffyStuff artwork always, the
KMahjongg sets where installed; rasterised into a disk cache once and kept in memory per copy of the material.
A tile set is one per scene (a table uses one set): its colours, proportions and face and back textures.
"""

from __future__ import annotations

import functools
import gzip
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from datasets.synth.textures import fbm, grid_xy, jitter_colour
from vision.classes import CLASS_NAMES

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
FLUFFY_DIR = "tile-art/fluffystuff-cc0/Export/Regular"
KMJ_DIR = Path("/usr/share/kmahjongglib/tilesets")  # Debian's kdegames-mahjongg-data-kf5; optional, GPL
KMJ_STYLES = ("default", "traditional")  # the others use non-Chinese glyphs (alphabet, egypt) or white ink (jade)
TEX_W, TEX_H = 192, 256  # face texture size (3:4 like the artwork); enough for tiles up to ~190 px wide
SUITED = CLASS_NAMES[:27]
Face = str  # "5p" for a suited tile, "other/<style>/<name>" for winds, dragons, flowers


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


def _build_style_cache(style: str, shared: Path, dest: Path, kmj_dir: Path) -> None:
    """Rasterise one style's faces into ``dest`` (one PNG per face; '/' in names becomes '__')."""
    dest.mkdir(parents=True, exist_ok=True)
    if style == "fluffy":
        for name, src in _fluffy_sources(shared).items():
            im = cv2.imread(str(src), cv2.IMREAD_UNCHANGED)
            if im is not None:
                cv2.imwrite(str(dest / f"{name.replace('/', '__')}.png"), _fit_glyph(im))
        return
    svgz = kmj_dir / f"{style}.svgz"
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        svg = tmp / f"{style}.svg"
        svg.write_bytes(gzip.decompress(svgz.read_bytes()))
        for name, element in _kmj_ids().items():
            glyph = _rasterise_kmj(svg, element, tmp)
            if glyph is not None:
                cv2.imwrite(str(dest / f"{name.replace('/', '__')}.png"), glyph)


def available_styles(shared: Path, kmj_dir: Path | None = None) -> list[str]:
    """Styles that can be used here: the CC0 artwork always; KMahjongg sets when installed (under ``kmj_dir``,
    default :data:`KMJ_DIR`) and rsvg-convert exists."""
    kmj_dir = KMJ_DIR if kmj_dir is None else kmj_dir
    styles = ["fluffy"] if (shared / FLUFFY_DIR).is_dir() else []
    if kmj_dir.is_dir() and shutil.which("rsvg-convert"):
        styles += [s for s in KMJ_STYLES if (kmj_dir / f"{s}.svgz").exists()]
    return styles


def load_art(shared: Path = SHARED, kmj_dir: Path | None = None) -> dict[str, dict[Face, np.ndarray]]:
    """Style -> face name -> glyph (BGRA uint8, TEX_H x TEX_W). Rasterises into the cache on first use."""
    kmj_dir = KMJ_DIR if kmj_dir is None else kmj_dir
    art: dict[str, dict[Face, np.ndarray]] = {}
    for style in available_styles(shared, kmj_dir):
        dest = cache_dir() / style
        done = dest / ".complete"
        if not done.exists():
            _build_style_cache(style, shared, dest, kmj_dir)
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


# Keyed on what the artwork is read from (the shared material, the KMahjongg folder): usually one pair, a test
# adds another.
@functools.lru_cache(maxsize=4)
def _art_of(shared: Path, kmj_dir: Path) -> dict[str, dict[Face, np.ndarray]]:
    return load_art(shared, kmj_dir)


def get_art() -> dict[str, dict[Face, np.ndarray]]:
    """The artwork of the shared material this process points at, loaded once per copy."""
    return _art_of(_ART_SHARED, KMJ_DIR)


def shared_folder() -> Path:
    """The copy of the shared material the builder points at (worker processes are pointed at it too)."""
    return _ART_SHARED


def set_shared(shared: Path) -> None:
    """Point the builder at another copy of the shared material (its artwork is loaded on first use)."""
    global _ART_SHARED
    _ART_SHARED = Path(shared)


# The tile set: one per scene (a table uses one set), its colours, proportions and face textures.
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
    return _scaled_glyph(_ART_SHARED, KMJ_DIR, style, face, scale, level)


# Bounded above every (style, face, scale, level) one artwork copy has (3 styles × ~45 faces × 4 scales × levels).
@functools.lru_cache(maxsize=4096)
def _scaled_glyph(shared: Path, kmj_dir: Path, style: str, face: Face, scale: float,
                  level: int) -> tuple[np.ndarray, np.ndarray]:
    art = _art_of(shared, kmj_dir)
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
