"""``zhuoji detect`` and ``zhuoji train``: CLI shells over vision.detect and vision.train."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_detect(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("detect", help="find and name the tiles in photos")
    p.add_argument("images", nargs="+", type=Path, help="photo files (JPEG, PNG, WebP, ...)")
    p.add_argument("--json", action="store_true", help="one JSON line per image")
    p.add_argument("--annotate", type=Path, metavar="OUT",
                   help="write each photo with labelled boxes (a folder when several images are given)")
    p.add_argument("--conf", type=float, default=0.25, help="confidence threshold (default 0.25)")
    p.add_argument("--iou", type=float, default=0.5, help="NMS IoU threshold (default 0.5)")
    p.add_argument("--tiled", action="store_true", help="also detect on overlapping crops (large table photos)")
    p.add_argument("--model", type=Path, help="ONNX model (default: the shipped models/zhuoji-tiles.onnx)")
    p.set_defaults(func=run_detect)


def run_detect(args: argparse.Namespace) -> int:
    import cv2

    from vision.annotate import draw_detections
    from vision.detect import ImageError, get_detector, load_image

    if not 0 < args.conf < 1 or not 0 < args.iou < 1:
        raise ValueError("--conf and --iou take a number between 0 and 1")
    detector = get_detector(args.model)
    failed = 0
    for path in args.images:
        try:
            image = load_image(path)
        except ImageError as exc:
            print(f"zhuoji detect: {exc}", file=sys.stderr)
            failed += 1
            continue
        dets = detector(image, conf=args.conf, iou=args.iou, tiled=args.tiled or None)
        order = dets.xyxy[:, 0].argsort(kind="stable")
        boxes = [dets.to_json()[i] for i in order]
        if args.json:
            print(json.dumps({"image": str(path), "detections": [
                {"tile": b["tile"], "box": b["box"], "confidence": b["confidence"]} for b in boxes]},
                ensure_ascii=False))
        else:
            print(f"{path}: {len(boxes)} tiles: {' '.join(b['tile'] for b in boxes)}")
        if args.annotate:
            out = args.annotate / f"{path.stem}.jpg" if len(args.images) > 1 else args.annotate
            out.parent.mkdir(parents=True, exist_ok=True)
            if not cv2.imwrite(str(out), draw_detections(image, dets)):
                raise ValueError(f"cannot write {out} (use a .jpg or .png name)")
    return 1 if failed else 0


def add_train(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train the detector (needs the 'train' extra)", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=run_train)


def run_train(args: argparse.Namespace) -> int:
    try:
        import ultralytics  # noqa: F401

        from vision.train import main as train_main
    except ImportError:
        raise ValueError("training needs the train extra: pip install -e '.[train]'") from None
    return train_main(args.rest)
