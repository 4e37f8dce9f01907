"""Training images of whole-table scenes as the detector sees them: the whole photo at 640 px, and windows.

``vision/tiling.py`` reads a large photo in two looks: one pass over the whole photo scaled to the network's input
(a table's tiles ~18 px there), then square windows scaled so that the small tiles reach ~40 px. A table scene of
``datasets/views.py --views table`` (1,600 px, tiles ~45 px) fed to the trainer whole only teaches the first look;
this cuts each scene into what both looks show the network:

* ``<scene>_whole.jpg``: the scene scaled so its longer side is ``--size``;
* ``<scene>_wNN.jpg``: ``--windows`` square windows scaled to ``--size``, half of them from
  ``vision.tiling.plan_windows`` run on the true boxes (the windows the reader would cut), half at random places
  around a tile, sized so that the tiles reach 35-50 px.

A window's boxes are clipped to it; a tile with less than ``MIN_VISIBLE`` of its box inside is dropped (the reader
leaves tiles cut by a window's edge to another window or the first pass: ``tiling.inner_cut``). The output is a
synthetic folder ``datasets/mix.py`` takes (``DIR/images/{train,val}``, labels beside them)::

    python datasets/table_windows.py --scenes ../data/table53 --out ../data/tablewin53 --windows 2 --seed 53
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.labels import read_yolo_labels
from vision.tiling import Window, plan_windows

MIN_VISIBLE = 0.6  # share of a tile's box that must lie inside a window for the tile to be labelled there
TILE_PX = (35.0, 50.0)  # a random window's tiles (median longer side) after scaling to the network's input


def window_labels(boxes: np.ndarray, classes: np.ndarray, win: Window, min_visible: float = MIN_VISIBLE
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The boxes (xyxy, photo pixels) seen in ``win``: clipped to it, in its own pixels; those with less than
    ``min_visible`` of their area inside dropped."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    clipped = np.stack([np.clip(boxes[:, 0], win.x0, win.x1), np.clip(boxes[:, 1], win.y0, win.y1),
                        np.clip(boxes[:, 2], win.x0, win.x1), np.clip(boxes[:, 3], win.y0, win.y1)], 1)
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    inside = (clipped[:, 2] - clipped[:, 0]) * (clipped[:, 3] - clipped[:, 1])
    keep = inside >= min_visible * np.maximum(area, 1e-9)
    return clipped[keep] - [win.x0, win.y0, win.x0, win.y0], np.asarray(classes)[keep]


def random_window(rng: np.random.Generator, image_size: tuple[int, int], boxes: np.ndarray, size: int) -> Window:
    """A square window around a random tile, sized so that the median tile reaches ``TILE_PX`` at ``size``."""
    w, h = image_size
    longer = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    side = int(min(max(w, h), max(size / 2, np.median(longer) * size / rng.uniform(*TILE_PX))))
    i = int(rng.integers(len(boxes)))
    cx, cy = (boxes[i, :2] + boxes[i, 2:]) / 2
    x0 = int(np.clip(cx - side * rng.uniform(0.2, 0.8), 0, max(0, w - side)))
    y0 = int(np.clip(cy - side * rng.uniform(0.2, 0.8), 0, max(0, h - side)))
    return Window(x0, y0, min(x0 + side, w), min(y0 + side, h))


def scene_windows(rng: np.random.Generator, image_size: tuple[int, int], boxes: np.ndarray, size: int, n: int
                  ) -> list[Window]:
    """``n`` windows of one scene: every other one from ``plan_windows`` (the reader's own), the rest random."""
    planned = plan_windows(image_size, size, boxes)
    wins = []
    for k in range(n):
        if k % 2 == 0 and planned:
            wins.append(planned.pop(int(rng.integers(len(planned)))))
        else:
            wins.append(random_window(rng, image_size, boxes, size))
    return wins


def yolo_rows(boxes: np.ndarray, classes: np.ndarray, width: float, height: float) -> str:
    return "".join(f"{int(c)} {(x0 + x1) / 2 / width:.6f} {(y0 + y1) / 2 / height:.6f} {(x1 - x0) / width:.6f} "
                   f"{(y1 - y0) / height:.6f}\n" for (x0, y0, x1, y1), c in zip(boxes, classes, strict=True))


def _scaled(img: np.ndarray, size: int) -> np.ndarray:
    h, w = img.shape[:2]
    s = size / max(h, w)
    return cv2.resize(img, (max(1, round(w * s)), max(1, round(h * s))), interpolation=cv2.INTER_AREA)


def cut_scene(image: Path, label: Path, out_images: Path, out_labels: Path, rng: np.random.Generator, size: int,
              n_windows: int) -> int:
    """Write one scene's whole view and windows; returns the images written."""
    img = cv2.imread(str(image))
    h, w = img.shape[:2]
    boxes, classes = read_yolo_labels(label, w, h, dtype=np.float64)
    stem = image.stem
    cv2.imwrite(str(out_images / f"{stem}_whole.jpg"), _scaled(img, size), [cv2.IMWRITE_JPEG_QUALITY, 95])
    (out_labels / f"{stem}_whole.txt").write_text(yolo_rows(boxes, classes, w, h))
    if len(boxes) == 0:
        return 1
    for k, win in enumerate(scene_windows(rng, (w, h), boxes, size, n_windows)):
        part_boxes, part_classes = window_labels(boxes, classes, win)
        cv2.imwrite(str(out_images / f"{stem}_w{k:02d}.jpg"), _scaled(img[win.y0:win.y1, win.x0:win.x1], size),
                    [cv2.IMWRITE_JPEG_QUALITY, 95])
        (out_labels / f"{stem}_w{k:02d}.txt").write_text(
            yolo_rows(part_boxes, part_classes, win.x1 - win.x0, win.y1 - win.y0))
    return 1 + n_windows


def build(scenes: Path, out: Path, n_windows: int = 2, size: int = 640, seed: int = 0) -> int:
    """Cut every scene of ``scenes/images/{train,val}``; returns the images written."""
    written = 0
    for split in ("train", "val"):
        images = sorted((scenes / "images" / split).glob("*.jpg"))
        (out / "images" / split).mkdir(parents=True, exist_ok=True)
        (out / "labels" / split).mkdir(parents=True, exist_ok=True)
        for i, image in enumerate(tqdm(images, desc=split, unit="scene")):
            rng = np.random.default_rng([seed, split == "val", i])
            written += cut_scene(image, scenes / "labels" / split / f"{image.stem}.txt", out / "images" / split,
                                 out / "labels" / split, rng, size, n_windows)
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenes", type=Path, required=True, help="a views.py folder of table scenes")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--windows", type=int, default=2, help="windows per scene, besides the whole view")
    p.add_argument("--size", type=int, default=640, help="the network's input side")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    if not (a.scenes / "images").is_dir():
        p.error(f"--scenes {a.scenes}: no images folder there")
    cv2.setNumThreads(1)
    print(f"{build(a.scenes, a.out, a.windows, a.size, a.seed)} images → {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
