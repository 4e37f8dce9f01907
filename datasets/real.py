"""The real photos (rf-chinese-mahjong-v4, CC BY 4.0) as an ultralytics dataset in our 29-class order.

The source labels use 0..26 for the suited tiles and 27 for `other`; our detector has 27 = `back` and 28 = `other`.
This writes remapped label copies (27 -> 28) and links the images beside them, since ultralytics finds a label
by replacing ``images`` with ``labels`` in the image path::

    DIR/images/{train,valid,test}/*.jpg   symlinks to the shared photos
    DIR/labels/{train,valid,test}/*.txt   remapped copies
    DIR/data.yaml

Usage::

    python datasets/real.py --out DIR [--shared ../shared] [--merge-synth SYNTH_DIR]

``--merge-synth`` also writes DIR/data_merged.yaml that trains on both training sets and validates on both
validation sets (ultralytics accepts lists of image folders).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from vision.classes import CLASS_NAMES, OTHER
from vision.detections import repeated_boxes
from vision.labels import parse_yolo, to_xyxy

REPO = Path(__file__).resolve().parents[1]

SHARED = REPO.parent / "shared"
SOURCE = "datasets/rf-chinese-mahjong-v4"
SPLITS = ("train", "valid", "test")
SOURCE_OTHER = 27  # the source's `other`; our 27 is `back`


def remap_line(line: str) -> str:
    """One YOLO row with the source class id mapped to ours (27 `other` -> 28; 0..26 unchanged)."""
    parts = line.split()
    cls = int(parts[0])
    if not 0 <= cls <= SOURCE_OTHER:
        raise ValueError(f"class {cls} is outside the source's 0..{SOURCE_OTHER}: {line!r}")
    return " ".join([str(OTHER if cls == SOURCE_OTHER else cls), *parts[1:]])


def drop_repeats(rows: list[str]) -> list[str]:
    """YOLO rows without those that repeat an earlier row's class and box (``repeated_boxes``): the source labels
    a few tiles twice (29 boxes of its train split, 4 of valid, none of test), which would teach the detector a
    second box on one tile and count a tile it cannot find twice."""
    if not rows:
        return rows
    classes, cxcywh = parse_yolo("\n".join(rows), np.float64)
    repeated = repeated_boxes(to_xyxy(cxcywh, 1, 1), classes.tolist())
    return [r for r, rep in zip(rows, repeated, strict=True) if not rep]


def remap_label_text(text: str) -> str:
    """A whole label file, remapped; blank lines and repeated boxes dropped."""
    rows = drop_repeats([remap_line(ln) for ln in text.splitlines() if ln.strip()])
    return "\n".join(rows) + ("\n" if rows else "")


def _link(src: Path, dst: Path) -> None:
    """Make ``dst`` a symlink to ``src`` (replacing whatever is there)."""
    if dst.is_symlink() or dst.exists():
        if dst.is_symlink() and os.readlink(dst) == str(src):
            return
        dst.unlink()
    dst.symlink_to(src)


def data_yaml(root: Path, train: str | list[str], val: str | list[str], test: str | None = None) -> str:
    """Text of an ultralytics data.yaml with an absolute ``path`` and our class names."""

    def fmt(x: str | list[str]) -> str:
        return x if isinstance(x, str) else "[" + ", ".join(f"'{p}'" for p in x) + "]"

    lines = [f"path: {root.resolve()}", f"train: {fmt(train)}", f"val: {fmt(val)}"]
    if test:
        lines.append(f"test: {test}")
    lines += [f"nc: {len(CLASS_NAMES)}", "names: [" + ", ".join(f"'{n}'" for n in CLASS_NAMES) + "]"]
    return "\n".join(lines) + "\n"


def build(out_dir: str | Path, shared: str | Path = SHARED) -> Path:
    """Link the images, write remapped labels and data.yaml under ``out_dir``; returns the data.yaml path."""
    src = Path(shared).resolve() / SOURCE
    if not (src / "images").is_dir():
        raise FileNotFoundError(f"no real dataset at {src}; pass --shared")
    out = Path(out_dir).resolve()
    for split in SPLITS:
        images = src / "images" / split
        if not images.is_dir():
            continue
        (out / "images" / split).mkdir(parents=True, exist_ok=True)
        (out / "labels" / split).mkdir(parents=True, exist_ok=True)
        for img in sorted(images.iterdir()):
            _link(img, out / "images" / split / img.name)
            label = src / "labels" / split / f"{img.stem}.txt"
            if label.exists():
                (out / "labels" / split / label.name).write_text(remap_label_text(label.read_text()))
    test = "images/test" if (out / "images" / "test").is_dir() else None
    path = out / "data.yaml"
    path.write_text(data_yaml(out, "images/train", "images/valid", test))
    return path


def merge_with_synth(real_dir: str | Path, synth_dir: str | Path) -> Path:
    """Write real_dir/data_merged.yaml: train on real + synthetic train sets, validate on both val sets."""
    real, synth = Path(real_dir).resolve(), Path(synth_dir).resolve()
    for need in (real / "images" / "train", synth / "images" / "train"):
        if not need.is_dir():
            raise FileNotFoundError(f"{need} is missing; build the datasets first")
    train = [str(real / "images" / "train"), str(synth / "images" / "train")]
    val = [str(real / "images" / "valid"), str(synth / "images" / "val")]
    path = real / "data_merged.yaml"
    path.write_text(data_yaml(real, train, val))
    return path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Real photos as an ultralytics dataset in the 29-class order.")
    ap.add_argument("--out", type=Path, required=True, help="folder to write")
    ap.add_argument("--shared", type=Path, default=SHARED, help="the shared material folder")
    ap.add_argument("--merge-synth", type=Path, help="also write data_merged.yaml with this synthetic dataset")
    args = ap.parse_args(argv)
    print(build(args.out, args.shared))
    if args.merge_synth:
        print(merge_with_synth(args.out, args.merge_synth))


if __name__ == "__main__":
    main()
