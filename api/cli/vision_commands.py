"""``zhuoji detect``, ``read``, ``score``, ``train``, ``train-classifier`` and ``train-back-check``: CLI shells over
vision.detect, the photo pipeline, vision.training.train, vision.training.train_classify and vision.training.train_back_check."""

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
    p.add_argument("--conf", type=float, default=0.25, help="least confidence of a box shown (default 0.25)")
    p.add_argument("--iou", type=float,
                   help="IoU from which two boxes of the same name are one tile (default 0.6; two boxes of "
                        "different names from 0.7, or from --iou when it is higher)")
    p.add_argument("--tiled", action="store_true",
                   help="also look at the whole photo in overlapping windows (default: only where the tiles found "
                        "are too small for one pass)")
    _add_turned_option(p, default=False)
    p.add_argument("--model", type=Path, help="ONNX model (default: the shipped models/zhuoji-tiles-int8.onnx)")
    p.set_defaults(func=run_detect)


def _add_turned_option(p: argparse.ArgumentParser, default: bool | None) -> None:
    p.add_argument("--turned", action=argparse.BooleanOptionalAction, default=default,
                   help="also look at the photo turned 180° and average both looks: fewer misread tiles for twice "
                        "the detection time (default: " + ("on when a tile is doubtful after the first look"
                                                           if default is None else "on" if default else "off") + ")")


def run_detect(args: argparse.Namespace) -> int:
    import cv2

    from api.cli.paths import annotation_target
    from pipeline.settings import Settings, open_detector
    from vision.annotate import draw_detections
    from vision.detect import ImageError
    from vision.images import load_photo_reduced

    if not 0 < args.conf < 1 or (args.iou is not None and not 0 < args.iou < 1):
        raise ValueError("--conf and --iou take a number between 0 and 1")
    overlap = {} if args.iou is None else {"iou": args.iou}
    folder = annotation_target(args.annotate, len(args.images) > 1) if args.annotate else None
    detector = open_detector(Settings.from_env(model=args.model))
    failed = 0
    for path in args.images:
        try:  # a shape no photo of tiles has is refused before any model runs; a large JPEG is decoded reduced
            image, full_size = load_photo_reduced(path, getattr(detector, "min_side", None))
        except ImageError as exc:
            print(f"zhuoji detect: {exc}", file=sys.stderr)
            failed += 1
            continue
        found = detector(image, conf=args.conf, tiled=args.tiled or None, turned=args.turned, **overlap)
        dets = found.rescaled(full_size)  # in the photo's own pixels
        order = dets.xyxy[:, 0].argsort(kind="stable")
        as_json = dets.to_json()
        boxes = [as_json[i] for i in order]
        if args.json:
            print(json.dumps({"image": str(path), "detections": [
                {"tile": b["tile"], "box": b["box"], "confidence": b["confidence"]} for b in boxes]},
                ensure_ascii=False))
        else:
            print(f"{path}: {len(boxes)} tiles: {' '.join(b['tile'] for b in boxes)}")
        if args.annotate:
            out = folder / f"{path.stem}.jpg" if folder is not None else args.annotate
            if not cv2.imwrite(str(out), draw_detections(image, found)):
                raise ValueError(f"cannot write {out}")
    # bad input only (no photo could be read): 2, as every command; some photos read, some not: 1
    return (2 if failed == len(args.images) else 1) if failed else 0


def _add_photo_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("image", type=Path, help="photo of one player's revealed hand")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--annotate", type=Path, metavar="OUT", help="write the photo with the tiles as read (JPEG)")
    _add_turned_option(p, default=None)
    p.add_argument("--model", type=Path, help="ONNX model (default: the shipped models/zhuoji-tiles-int8.onnx)")
    from api.cli.calibrate_commands import add_calibration_option

    add_calibration_option(p)


def add_read(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("read", help="read a hand photo: layout (hand, melds, river) and rules-checked tiles")
    _add_photo_args(p)
    p.set_defaults(func=run_read)


def add_score(sub: argparse._SubParsersAction) -> None:
    from api.cli.options import add_win_context_options

    p = sub.add_parser("score", help="read a hand photo and score it: hand type, fan, waits")
    _add_photo_args(p)
    p.add_argument("--win", metavar="TILE", help="the winning tile (default: the last tile of a 14-tile hand)")
    p.add_argument("--self-drawn", action="store_true", help="自摸: the winner drew the tile himself")
    p.add_argument("--flipped", metavar="TILE", help="翻鸡: the flipped indicator tile")
    add_win_context_options(p)
    p.set_defaults(func=run_score)


def _read_photo_arg(args: argparse.Namespace):
    """The detector and the read photo of ``read``/``score``; a bad photo, or an ``--annotate`` path that cannot be
    written, becomes a one-line ValueError before any model runs."""
    import time

    from api.cli.calibrate_commands import calibration_arg
    from api.cli.paths import JPEG_EXTENSIONS, annotation_target
    from api.service.errors import ApiError
    from api.service.uploads import decode_image_reduced
    from pipeline.photo import read_photo
    from pipeline.settings import Settings, open_detector
    from vision.files import read_file
    from vision.images import MAX_FILE_BYTES

    data = read_file(args.image, MAX_FILE_BYTES)  # a folder, device, FIFO or huge file: one line, never a hang
    calibration = calibration_arg(args)
    if args.annotate:
        folder = annotation_target(args.annotate, False, JPEG_EXTENSIONS)
        if folder is not None:
            args.annotate = folder / f"{args.image.stem}.jpg"
    detector = open_detector(Settings.from_env(model=args.model))
    start = time.perf_counter()
    try:
        # shapes no photo of tiles has are refused here, before any model runs; a large JPEG is decoded reduced
        image, full_size = decode_image_reduced(data, "image", getattr(detector, "min_side", None))
    except ApiError as exc:
        raise ValueError(f"{args.image}: {exc.message}") from None
    turned = "auto" if args.turned is None else args.turned
    return detector, read_photo(detector, image, turned=turned, start=start, full_size=full_size,
                                calibration=calibration)


def _write_annotation(photo, out: Path) -> None:
    import base64

    from pipeline.photo import annotated_jpeg

    try:
        out.write_bytes(base64.b64decode(annotated_jpeg(photo)))
    except OSError as exc:  # checked before the work; the disk may still fill up
        raise ValueError(f"cannot write {out}: {exc.strerror or exc}") from None


def _print_reading(result: dict) -> None:
    hand = result["hand"]
    melds = " ".join(f"[{m.type}:{m.tile or '?'}]" for m in hand.melds)
    print(f"hand: {' '.join(hand.concealed_tiles) or '-'} {melds}".rstrip())
    if hand.river:
        print(f"river: {' '.join(hand.river)}")
    if hand.indicator:
        print(f"翻鸡 indicator: {hand.indicator}")
    for c in result["changes"]:
        print(f"corrected by the rules: {c['from']} → {c['to']} ({c['reason']})")
    for r in result["retake"]:
        print(f"retake? {r.code}: {r.message}")
    if result.get("calibration") is not None:
        print(f"calibration: {result['calibration'].message}")


def run_read(args: argparse.Namespace) -> int:
    from pipeline.photo import read_response

    detector, photo = _read_photo_arg(args)
    result = read_response(photo, detector.model_path.name)
    if args.json:
        from pipeline.models import ReadResponse

        print(ReadResponse(**result).model_dump_json(by_alias=True))
    else:
        _print_reading(result)
    if args.annotate:
        _write_annotation(photo, args.annotate)
    return 0


def run_score(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from api.cli.options import win_flags
    from pipeline.models import ScoreContext
    from pipeline.photo import score_reading

    try:
        ctx = ScoreContext(rules=args.rules, win_tile=args.win, flipped=args.flipped, self_drawn=args.self_drawn,
                           annotate=False, **win_flags(args))
    except ValidationError as exc:
        raise ValueError("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from None
    detector, photo = _read_photo_arg(args)
    result = score_reading(photo, ctx, detector.model_path.name)
    if args.json:
        print(result.model_dump_json(by_alias=True))
    else:
        _print_reading({"hand": result.hand, "changes": result.changes, "retake": result.retake,
                        "calibration": result.calibration})
        for line in result.assumptions:
            print(f"assumed: {line}")
        if result.score_error is not None:
            print(f"cannot score yet: {result.score_error.message}")
        else:
            for line in result.analysis.explanation:
                print(line)
    if args.annotate:
        _write_annotation(photo, args.annotate)
    return 0 if result.score_error is None else 1


def add_train(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train the detector (needs the 'train' extra)", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=run_train)


def add_train_classifier(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train-classifier", help="train the crop classifier (needs the 'train' extra)",
                       add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=run_train)


def add_train_back_check(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train-back-check", help="train the back check (needs the 'train' extra)", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=run_train)


def add_quantize(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("quantize", help="int8 version of a float detector or crop classifier (needs the 'train' "
                                        "extra)", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=run_quantize)


def run_quantize(args: argparse.Namespace) -> int:
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise ValueError("quantizing needs the train extra: pip install -e '.[train]'") from None
    from vision.training.quantize import main as quantize_main

    return quantize_main(args.rest)


def run_train(args: argparse.Namespace) -> int:
    try:
        import torch  # noqa: F401

        if args.command == "train":
            import ultralytics  # noqa: F401

            from vision.training.train import main as train_main
        elif args.command == "train-back-check":
            from vision.training.train_back_check import main as train_main
        else:
            from vision.training.train_classify import main as train_main
    except ImportError:
        raise ValueError("training needs the train extra: pip install -e '.[train]'") from None
    return train_main(args.rest)
