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

    python -m datasets.synth --out DIR --n 2000 --seed 0 [--size 640] [--val-frac 0.1] [--workers 1] [--boxes face]
    python -m datasets.synth --preview DIR --n 4 --seed 0     # PNGs with boxes drawn, for eyeballing

The same seed makes the same scenes only with the same tile styles: the CC0 artwork is always there, the KMahjongg
sets only where Debian's kdegames-mahjongg-data-kf5 and librsvg2-bin are installed (a scene's style is its first
random draw, so without them every scene comes out different). The builder says which styles it used, and
records them with the seed in DIR/build.json; the model card's figures are with all three.

The modules, in the order a scene is made: ``artwork`` (glyphs per style, the tile set of a scene),
``textures`` (table surfaces, noise), ``layout`` (which tiles lie where), ``camera`` (3-D tile boxes, the
pinhole camera), ``render`` (table, shadows, tiles, camera effects), ``labels`` (classes, difficult labels, YOLO
files), ``scene`` (one labelled photo), ``build`` (the dataset folder and the command line).
"""

# The names scripts (datasets/views.py) and tests use, from the module that defines each.
from datasets.synth.artwork import (
    GLYPH_SCALES,
    KMJ_STYLES,
    SHARED,
    TEX_H,
    TEX_W,
    Face,
    TileSet,
    available_styles,
    back_texture,
    get_art,
    load_art,
    random_tileset,
    scaled_glyph,
    set_shared,
    shared_folder,
)
from datasets.synth.build import build, main, preview, scene_rng
from datasets.synth.camera import (
    Camera,
    Placed,
    TilePose,
    look_at,
    place,
    random_camera,
    tile_corners,
    tile_frame,
    tile_outline,
)
from datasets.synth.labels import (
    BLURRED,
    BOX_KINDS,
    HIDDEN,
    MIN_VISIBLE,
    TRUNCATED,
    Labels,
    difficult_words,
    difficulty,
    draw_boxes,
    narrow_width,
    read_yolo,
    share_inside,
    shown_label,
    write_data_yaml,
    yolo_lines,
)
from datasets.synth.layout import Deck, pile, polys_overlap, river, row, scene_layout, suit_sort_key
from datasets.synth.render import (
    Light,
    add_clutter,
    blur,
    draw_shadows,
    draw_tile,
    jpeg,
    photometric,
    random_light,
    sensor_noise,
)
from datasets.synth.scene import Scene, compose, other_faces, render_scene, render_tile_face_on, texture_level
from datasets.synth.textures import FELT_COLOURS, fbm, jitter_colour, random_texture

__all__ = ["BLURRED", "BOX_KINDS", "Camera", "Deck", "FELT_COLOURS", "Face", "GLYPH_SCALES", "HIDDEN",
    "KMJ_STYLES", "Labels", "Light", "MIN_VISIBLE", "Placed", "SHARED", "Scene", "TEX_H", "TEX_W",
    "TRUNCATED", "TilePose", "TileSet", "add_clutter", "available_styles", "back_texture", "blur", "build",
    "compose", "difficult_words", "difficulty", "draw_boxes", "draw_shadows", "draw_tile", "fbm", "get_art",
    "jitter_colour", "jpeg", "load_art", "look_at", "main", "narrow_width", "other_faces", "photometric",
    "pile", "place", "polys_overlap", "preview", "random_camera", "random_light", "random_texture", "random_tileset",
    "read_yolo", "render_scene", "render_tile_face_on", "river", "row", "scaled_glyph", "scene_layout",
    "scene_rng", "sensor_noise", "set_shared", "share_inside", "shared_folder", "shown_label",
    "suit_sort_key", "texture_level", "tile_corners", "tile_frame", "tile_outline", "write_data_yaml",
    "yolo_lines"]
