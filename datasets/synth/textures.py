"""Small numeric utilities (noise, colours, rotations) and table textures.

Texture generators take (rng, h, w, ppu) with ppu = texture pixels per tile width and return float32 BGR.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import cv2
import numpy as np


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
