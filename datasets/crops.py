"""Tile crops for the crop classifier (``vision/classify.py``), cut from the same images as a detector mix.

Training crops come from the mix's training list (real photos, the valid photos it moved into training and
synthetic scenes); validation crops from its validation list, so that the real test split and the photos of
``tests/data/real_hands`` stay unseen here too. Each labelled box is cut ``--copies`` times with its edges moved at
random by up to ``--jitter`` of its size (the detector's boxes are not exact either); validation boxes are cut once,
as labelled::

    python datasets/crops.py --mix ../data/mix3 --synth ../data/synth --out ../data/crops [--copies 2] [--jitter 0.08] [--seed 0]

Writes OUT/train.npz and OUT/val.npz: ``x`` (N, 64, 64, 3) uint8 BGR crops from ``vision.classify.crop_tiles``,
``y`` (N,) class ids in :data:`vision.classes.CLASS_NAMES` order, ``synthetic`` (N,) bool.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

from vision.classes import CLASS_NAMES
from vision.classify import CROP_SIZE, crop_tiles
from vision.images import ImageError, load_image
from vision.labels import read_yolo_labels

REPO = Path(__file__).resolve().parents[1]


def label_path(image: Path) -> Path:
    """The YOLO label file of an image: ``…/images/<split>/x.jpg`` → ``…/labels/<split>/x.txt``."""
    parts = list(image.parts)
    i = len(parts) - 1 - parts[::-1].index("images")
    return Path(*parts[:i], "labels", *parts[i + 1:]).with_suffix(".txt")


def read_boxes(image: Path, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """(N, 4) xyxy pixel boxes and (N,) class ids of an image's YOLO labels (no file: none)."""
    xyxy, cls = read_yolo_labels(label_path(image), width, height, dtype=np.float64)
    known = (cls >= 0) & (cls < len(CLASS_NAMES))  # a class of another label set has no crop to learn
    return xyxy[known], cls[known]


def jitter_boxes(xyxy: np.ndarray, amount: float, rng: np.random.Generator) -> np.ndarray:
    """Each edge moved by up to ``amount`` of the box's width (x) or height (y), independently."""
    size = np.concatenate([xyxy[:, 2:] - xyxy[:, :2]] * 2, 1)
    return xyxy + rng.uniform(-amount, amount, xyxy.shape) * size


def build(images: list[Path], copies: int, jitter: float, rng: np.random.Generator, desc: str,
          synth_root: Path | None = None) -> dict[str, np.ndarray]:
    xs, ys, synthetic = [], [], []
    skipped = 0
    for image in tqdm(images, desc=desc, unit="image"):
        try:
            img = load_image(image)
        except ImageError:
            skipped += 1
            continue
        xyxy, cls = read_boxes(image, img.shape[1], img.shape[0])
        if not len(cls):
            continue
        is_synth = synth_root is not None and synth_root in image.resolve().parents
        for _ in range(copies):
            boxes = jitter_boxes(xyxy, jitter, rng) if jitter else xyxy
            xs.append(crop_tiles(img, boxes))
            ys.append(cls)
            synthetic.append(np.full(len(cls), is_synth))
    if skipped:
        print(f"{skipped} unreadable images skipped")
    if not xs:
        return {"x": np.zeros((0, CROP_SIZE, CROP_SIZE, 3), np.uint8), "y": np.zeros(0, np.int16),
                "synthetic": np.zeros(0, bool)}
    return {"x": np.concatenate(xs), "y": np.concatenate(ys).astype(np.int16), "synthetic": np.concatenate(synthetic)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mix", type=Path, required=True, help="a datasets/mix.py folder (train.txt, val.txt)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--synth", type=Path, help="the datasets.synth folder, to count synthetic crops apart")
    p.add_argument("--copies", type=int, default=2, help="jittered crops per training box")
    p.add_argument("--jitter", type=float, default=0.08)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    lists = {split: a.mix / f"{split}.txt" for split in ("train", "val")}
    if not all(f.is_file() for f in lists.values()):
        p.error(f"--mix {a.mix}: no train.txt and val.txt there (not a mix folder)")
    rng = np.random.default_rng(a.seed)
    a.out.mkdir(parents=True, exist_ok=True)
    for split, list_file in lists.items():
        images = [Path(line) for line in list_file.read_text().splitlines() if line.strip()]
        train = split == "train"
        data = build(images, a.copies if train else 1, a.jitter if train else 0.0, rng, f"{split} crops",
                     a.synth.resolve() if a.synth else None)
        np.savez(a.out / f"{split}.npz", **data)
        counts = np.bincount(data["y"], minlength=len(CLASS_NAMES))
        print(f"{split}: {len(data['y'])} crops ({int(data['synthetic'].sum())} synthetic) from {len(images)} images; "
              f"fewest: {CLASS_NAMES[int(counts.argmin())]} {int(counts.min())} → {a.out / (split + '.npz')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
