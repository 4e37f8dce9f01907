"""Geometry: a tile's pose and its box in 3-D, the pinhole camera, and a tile projected into the image."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from datasets.synth.artwork import Face, TileSet
from datasets.synth.textures import log_uniform
from vision.classes import BACK, CLASS_NAMES, OTHER


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
