"""Crops for the back check (``vision/back_check.py``): every box the shipped detector and crop classifier name
``back`` in synthetic scenes, labelled true when it lies on a face-down tile (IoU ≥ 0.5 with a ``back`` label) and
false otherwise (a coin or card, a tile's top edge or side, a box across two tiles).

Use scenes no network was trained on (the shipped pair's mistakes on its own training scenes are fewer than on
new ones): the shipped back check was trained on the 3,000 scenes of seed 30. Every tenth scene (by its number) goes
to validation::

    python datasets/back_crops.py --scenes ../data/synth30F --out ../data/backs [--min-confidence 0.02]

Writes OUT/train.npz and OUT/val.npz: ``x`` (N, 64, 64, 3) uint8 BGR crops from ``vision.classify.crop_tiles`` with
the back check's margin, ``y`` (N,) 1 for a face-down tile, ``confidence`` (N,) the box's confidence.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

from datasets.crops import read_boxes
from vision.back_check import BACK_CROP_MARGIN, BACK_CROP_SIZE
from vision.classes import BACK
from vision.classify import crop_tiles
from vision.detections import box_iou
from vision.images import ImageError, load_image

REPO = Path(__file__).resolve().parents[1]

MATCH_IOU = 0.5  # as the mAP50 benchmark matches a box to a label


def scene_images(folder: Path) -> list[Path]:
    """The scene photos of a builder's folder, every split."""
    return sorted(p for p in (folder / "images").glob("*/*") if p.suffix.lower() in (".jpg", ".jpeg", ".png"))


def label_backs(boxes: np.ndarray, labels: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """(N,) True for each box that overlaps a ``back`` label by IoU ≥ 0.5."""
    backs = labels[classes == BACK]
    if len(boxes) == 0 or len(backs) == 0:
        return np.zeros(len(boxes), bool)
    return box_iou(np.asarray(boxes, np.float64), backs).max(1) >= MATCH_IOU


def build(images: list[Path], detector, min_confidence: float) -> tuple[dict, dict]:
    """Train and validation arrays (every tenth scene by number to validation; a name that is no number: train)."""
    parts: dict[bool, dict[str, list]] = {v: {"x": [], "y": [], "confidence": []} for v in (False, True)}
    for path in tqdm(images, desc="scenes", unit="scene"):
        try:
            img = load_image(path)
        except ImageError as e:
            print(f"skipped: {e}", file=sys.stderr)
            continue
        dets = detector(img, conf=min_confidence)
        named = np.flatnonzero(dets.class_id == BACK)
        if len(named) == 0:
            continue
        labels, classes = read_boxes(path, img.shape[1], img.shape[0])
        part = parts[path.stem.isdigit() and int(path.stem) % 10 == 0]
        part["x"].append(crop_tiles(img, dets.xyxy[named], BACK_CROP_SIZE, BACK_CROP_MARGIN))
        part["y"].append(label_backs(dets.xyxy[named], labels, classes).astype(np.uint8))
        part["confidence"].append(dets.confidence[named].astype(np.float32))

    def stack(part: dict[str, list]) -> dict[str, np.ndarray]:
        if not part["x"]:
            return {"x": np.zeros((0, BACK_CROP_SIZE, BACK_CROP_SIZE, 3), np.uint8), "y": np.zeros(0, np.uint8),
                    "confidence": np.zeros(0, np.float32)}
        return {k: np.concatenate(v) for k, v in part.items()}

    return stack(parts[False]), stack(parts[True])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--scenes", type=Path, nargs="+", required=True, help="folders written by datasets.synth")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--min-confidence", type=float, default=0.02, help="boxes weaker than this are left out")
    p.add_argument("--model", type=Path, help="detector ONNX (default: the shipped one)")
    a = p.parse_args(argv)
    images = [img for folder in a.scenes for img in scene_images(folder)]
    if not images:
        p.error(f"--scenes: no scene photos under {' '.join(str(s) for s in a.scenes)} (images/<split>/)")
    from vision.detect import DEFAULT_MODEL, Detector

    # the pair the back check will follow, without a back check of its own
    try:
        detector = Detector(a.model or DEFAULT_MODEL, back_check=None)
    except (FileNotFoundError, ValueError) as e:  # a missing or unloadable model: one line, no trace
        p.error(f"--model: {e}")
    train, val = build(images, detector, a.min_confidence)
    a.out.mkdir(parents=True, exist_ok=True)
    for name, arrays in (("train", train), ("val", val)):
        np.savez_compressed(a.out / f"{name}.npz", **arrays)
        print(f"{a.out / name}.npz: {len(arrays['y'])} crops, {int(arrays['y'].sum())} on face-down tiles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
