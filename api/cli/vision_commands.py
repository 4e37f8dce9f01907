"""``zhuoji detect``, ``read``, ``score``, ``train``, ``train-classifier`` and ``train-back-check``: CLI shells over
vision.detect, the photo pipeline, vision.training.train, vision.training.train_classify and vision.training.train_back_check."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipeline.models import ReadResponse


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

    from api.cli.output import print_model
    from api.cli.paths import annotation_target
    from pipeline.detection import annotated_image, detect_response, find_tiles
    from pipeline.files import read_photo_file
    from pipeline.settings import Settings, open_detector

    if not 0 < args.conf < 1 or (args.iou is not None and not 0 < args.iou < 1):
        raise ValueError("--conf and --iou take a number between 0 and 1")
    overlap = {} if args.iou is None else {"iou": args.iou}
    folder = annotation_target(args.annotate, len(args.images) > 1) if args.annotate else None
    detector = open_detector(Settings.from_env(model=args.model))
    failed = 0
    for path in args.images:
        try:  # a shape no photo of tiles has is refused before any model runs; a large JPEG is decoded reduced
            found = find_tiles(detector, read_photo_file(path), str(path), conf=args.conf, tiled=args.tiled or None,
                               turned=args.turned, **overlap)
        except ValueError as exc:
            print(f"zhuoji detect: {exc}", file=sys.stderr)
            failed += 1
            continue
        answer = detect_response(found, detector.model_path.name)
        if args.json:
            print_model(answer)  # one line per photo: the body of POST /v1/detect
        else:
            names = [t.tile for t in sorted(answer.tiles, key=lambda t: t.box[0])]  # left to right
            print(f"{path}: {len(names)} tiles: {' '.join(names)}")
        if args.annotate:
            out = folder / f"{path.stem}.jpg" if folder is not None else args.annotate
            if not cv2.imwrite(str(out), annotated_image(found)):
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


def _photo_arg(args: argparse.Namespace):
    """The detector, the photo's bytes and its calibration for ``read``/``score``; a photo that cannot be read, or
    an ``--annotate`` path that cannot be written, is a one-line error before any model runs."""
    from api.cli.calibrate_commands import calibration_arg
    from api.cli.paths import JPEG_EXTENSIONS, annotation_target
    from pipeline.files import read_photo_file
    from pipeline.settings import Settings, open_detector

    data = read_photo_file(args.image)
    calibration = calibration_arg(args)
    if args.annotate:
        folder = annotation_target(args.annotate, False, JPEG_EXTENSIONS)
        if folder is not None:
            args.annotate = folder / f"{args.image.stem}.jpg"
    return open_detector(Settings.from_env(model=args.model)), data, calibration


def _turned(args: argparse.Namespace) -> bool | str:
    return "auto" if args.turned is None else args.turned


def _write_annotation(photo, out: Path) -> None:
    import base64

    from pipeline.photo import annotated_jpeg

    try:
        out.write_bytes(base64.b64decode(annotated_jpeg(photo)))
    except OSError as exc:  # checked before the work; the disk may still fill up
        raise ValueError(f"cannot write {out}: {exc.strerror or exc}") from None


def _print_reading(result: ReadResponse) -> None:
    hand = result.hand
    melds = " ".join(f"[{m.type}:{m.tile or '?'}]" for m in hand.melds)
    print(f"hand: {' '.join(hand.concealed_tiles) or '-'} {melds}".rstrip())
    if hand.river:
        print(f"river: {' '.join(hand.river)}")
    if hand.indicator:
        print(f"翻鸡 indicator: {hand.indicator}")
    for c in result.changes:
        print(f"corrected by the rules: {c.from_} → {c.to} ({c.reason})")
    for r in result.retake:
        print(f"retake? {r.code}: {r.message}")
    if result.calibration is not None:
        print(f"calibration: {result.calibration.message}")


def run_read(args: argparse.Namespace) -> int:
    from api.cli.output import print_model
    from pipeline.photo import read_bytes, read_response

    detector, data, calibration = _photo_arg(args)
    photo = read_bytes(detector, data, str(args.image), _turned(args), calibration)
    result = read_response(photo, detector.model_path.name)
    if args.json:
        print_model(result)  # the body of POST /v1/read
    else:
        _print_reading(result)
    if args.annotate:
        _write_annotation(photo, args.annotate)
    return 0


def run_score(args: argparse.Namespace) -> int:
    from api.cli.options import win_flags
    from api.cli.output import print_model
    from pipeline.models import ScoreContext
    from pipeline.photo import score_bytes

    ctx = ScoreContext(rules=args.rules, win_tile=args.win, flipped=args.flipped, self_drawn=args.self_drawn,
                       annotate=False, **win_flags(args))
    detector, data, calibration = _photo_arg(args)
    photo, result = score_bytes(detector, data, ctx, calibration, turned=_turned(args), field=str(args.image))
    if args.json:
        print_model(result)  # the body of POST /v1/score
    else:
        _print_reading(result)
        for line in result.assumptions:
            print(f"assumed: {line}")
        if result.score_error is not None:
            print(f"cannot score yet: {result.score_error.message}")
        elif result.analysis is not None:
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
    from pipeline.training import run_training

    return run_training("quantize", args.rest)


def run_train(args: argparse.Namespace) -> int:
    from pipeline.training import run_training

    return run_training(args.command, args.rest)
