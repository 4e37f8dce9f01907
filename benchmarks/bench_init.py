"""Initialisation comparison: mahjong-detector weights vs training from scratch, at the same small budget.

    python benchmarks/bench_init.py --data DATA.yaml [--train-images 240] [--val-images 120] [--epochs 1]

Both runs train YOLO11n on the same images for the same epochs (ultralytics, CPU, flips off) and are validated on
the same images; the script prints mAP50 before training (initialised model only) and after. Needs the train
extra. DATA.yaml is a 29-class dataset such as the output of datasets/mix.py.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import yaml

from vision.classes import CLASS_NAMES
from vision.training.train import SHARED, init_checkpoint, train

ROOT = Path(__file__).resolve().parents[1]


def _images(data: dict, key: str) -> list[str]:
    src = Path(data["path"]) / data[key]
    if src.suffix == ".txt":
        return src.read_text().split()
    return [str(p) for p in sorted(src.glob("*.jpg"))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--train-images", type=int, default=240)
    ap.add_argument("--val-images", type=int, default=120)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from ultralytics import YOLO

    data = yaml.safe_load(args.data.read_text())
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "train.txt").write_text("\n".join(rng.sample(_images(data, "train"), args.train_images)) + "\n")
        (work / "val.txt").write_text("\n".join(rng.sample(_images(data, "val"), args.val_images)) + "\n")
        small = work / "data.yaml"
        small.write_text(f"path: {work}\ntrain: train.txt\nval: val.txt\nnames: {list(CLASS_NAMES)}\n")
        calib = sorted((SHARED / "datasets/rf-chinese-mahjong-v4/images/valid").glob("*.jpg"))[:16]
        init = init_checkpoint(work / "init.pt", calib)
        before = YOLO(str(init)).val(data=str(small), batch=16, device="cpu", plots=False, verbose=False)
        results = {"mahjong-detector init, before training": (before.box.map50, 0.0)}
        for name, start in (("mahjong-detector init", str(init)), ("from scratch", "scratch")):
            t = time.perf_counter()
            best = train(small, start, args.epochs, work / "runs", name.replace(" ", "-"), workers=2)
            m = YOLO(str(best)).val(data=str(small), batch=16, device="cpu", plots=False, verbose=False)
            results[f"{name}, after {args.epochs} epoch(s)"] = (m.box.map50, time.perf_counter() - t)
    print(f"\n# Initialisation comparison: {args.train_images} training / {args.val_images} validation images "
          f"from {args.data}, imgsz 640, CPU")
    print("| start | val mAP50 (29 classes present) | train + val time |")
    print("| --- | --- | --- |")
    for name, (m50, secs) in results.items():
        print(f"| {name} | {m50:.4f} | {secs:.0f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
