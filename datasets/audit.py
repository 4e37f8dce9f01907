"""Label audit: boxes where the detector confidently reads another tile than the label says, for a person to check.

A model trained on noisy labels still learns the majority, so a box it reads with high confidence as another tile
is either a model error or a label error; the contact sheet shows which at a glance. One look per source photo
(an export's augmented variants of one photo repeat its labels)::

    python datasets/audit.py --images DIR --labels DIR [--model models/zhuoji-tiles-int8.onnx] [--min-p 0.8] --out DIR

Writes OUT/audit.json (one row per flagged box: image, box, label, read, p) and OUT/sheet_NN.png (crops captioned
``label>read``), and prints the count per (label, read) pair.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from datasets.mix import source_photo
from vision.classes import CLASS_NAMES
from vision.detect import DEFAULT_MODEL, Detector
from vision.detections import box_iou
from vision.labels import read_yolo_labels

REPO = Path(__file__).resolve().parents[1]

SUITED = 27


@dataclass
class Flag:
    image: str
    box: list[float]  # xyxy pixels of the labelled box
    label: str
    read: str
    p: float  # the detector's probability for what it read


def audit(images: list[Path], label_dir: Path, detector: Detector, min_p: float = 0.8) -> list[Flag]:
    """Suited-tile labels that the detector (two looks) reads as another suited tile with probability ≥ ``min_p``."""
    flags: list[Flag] = []
    seen: set[str] = set()
    for path in tqdm(images, desc="auditing", unit="img"):
        key = source_photo(path.name)
        if key in seen:
            continue
        seen.add(key)
        image = cv2.imread(str(path))
        if image is None:
            continue
        h, w = image.shape[:2]
        boxes, classes = read_yolo_labels(label_dir / f"{path.stem}.txt", w, h)
        dets = detector(image, turned=True)
        if not len(boxes) or not len(dets.xyxy):
            continue
        ious = box_iou(boxes, dets.xyxy)
        for i, j in enumerate(ious.argmax(1)):
            read = int(dets.class_id[j])
            if (ious[i, j] >= 0.5 and classes[i] < SUITED and read < SUITED and read != classes[i]
                    and dets.top3_prob[j, 0] >= min_p):
                flags.append(Flag(str(path), [round(float(v), 1) for v in boxes[i]], CLASS_NAMES[classes[i]],
                                  CLASS_NAMES[read], round(float(dets.top3_prob[j, 0]), 3)))
    return flags


def contact_sheets(flags: list[Flag], out: Path, per_sheet: int = 48, columns: int = 8) -> list[Path]:
    """Crops of the flagged boxes with ``label>read`` under each, ``per_sheet`` to a PNG."""
    cell_w, cell_h, crop_h = 100, 145, 120
    written = []
    for start in range(0, len(flags), per_sheet):
        cells = []
        for flag in flags[start:start + per_sheet]:
            image = cv2.imread(flag.image)
            x1, y1, x2, y2 = (int(v) for v in flag.box)
            crop = image[max(0, y1 - 4):y2 + 4, max(0, x1 - 4):x2 + 4]
            cell = np.full((cell_h, cell_w, 3), 255, np.uint8)
            cell[:crop_h, 5:cell_w - 5] = cv2.resize(crop, (cell_w - 10, crop_h))
            cv2.putText(cell, f"{flag.label}>{flag.read}", (3, cell_h - 7), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
                        (0, 0, 255), 1)
            cells.append(cell)
        cells += [np.full((cell_h, cell_w, 3), 255, np.uint8)] * (-len(cells) % columns)
        sheet = np.vstack([np.hstack(cells[r:r + columns]) for r in range(0, len(cells), columns)])
        path = out / f"sheet_{start // per_sheet + 1:02d}.png"
        cv2.imwrite(str(path), sheet)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--images", type=Path, required=True, help="folder of .jpg photos")
    p.add_argument("--labels", type=Path, required=True, help="folder of their YOLO .txt labels (our class order)")
    p.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    p.add_argument("--min-p", type=float, default=0.8, help="flag only reads at least this probable")
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    for folder in (a.images, a.labels):
        if not folder.is_dir():
            p.error(f"{folder}: no such folder")
    if not a.model.is_file():
        p.error(f"--model {a.model}: no such file")
    if not 0.0 < a.min_p <= 1.0:
        p.error("--min-p must lie in (0, 1]")
    flags = audit(sorted(a.images.glob("*.jpg")), a.labels, Detector(a.model), a.min_p)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "audit.json").write_text(json.dumps([asdict(f) for f in flags], indent=1))
    sheets = contact_sheets(flags, a.out)
    for (label, read), n in Counter((f.label, f.read) for f in flags).most_common():
        print(f"{label} read as {read}: {n}")
    print(f"{len(flags)} boxes flagged → {a.out / 'audit.json'}, {len(sheets)} contact sheet(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
