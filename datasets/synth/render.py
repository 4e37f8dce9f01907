"""Rendering: the table, shadows and tiles drawn in perspective, then the phone camera's effects (lighting
gradients and glare, colour jitter, blur, sensor noise, JPEG)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from datasets.synth.artwork import TileSet, back_texture, face_texture
from datasets.synth.camera import Camera, Placed, TilePose, tile_corners
from datasets.synth.textures import (
    grid_xy,
    jitter_colour,
    random_texture,
    tex_procedural,
    tex_wood,
    value_noise,
)


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


# Camera effects


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
