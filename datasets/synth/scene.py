"""Scenes: a tile set, a layout, a camera and a light composed into one labelled photo."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from datasets.synth.artwork import TEX_W, Face, TileSet, back_texture, get_art, random_tileset
from datasets.synth.camera import Camera, Placed, TilePose, look_at, place, random_camera
from datasets.synth.labels import MIN_VISIBLE, Labels, difficulty, narrow_width, share_inside, shown_label
from datasets.synth.layout import scene_layout
from datasets.synth.render import (
    Light,
    blur,
    draw_shadows,
    draw_tile,
    jpeg,
    photometric,
    random_light,
    render_table,
    sensor_noise,
)


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
