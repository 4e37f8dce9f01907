"""``zhuoji read-table PHOTO``: a CLI shell over :func:`pipeline.table_photo.read_table_bytes` (``--json`` prints
the body of ``POST /v1/read-table``)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_read_table(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("read-table", help="read a photo of the whole table: four hands, melds, rivers, flipped tile")
    p.add_argument("image", type=Path, help="photo of the table at the end of a round, every hand laid face up")
    p.add_argument("--json", action="store_true", help="machine-readable output: the body of POST /v1/read-table")
    p.add_argument("--annotate", type=Path, metavar="OUT", help="write the photo with the tiles as read (JPEG)")
    p.add_argument("--model", type=Path, help="ONNX model (default: the shipped models/zhuoji-tiles-int8.onnx)")
    p.set_defaults(func=run_read_table)


def run_read_table(args: argparse.Namespace) -> int:
    import cv2

    from api.cli.output import print_model
    from api.cli.paths import JPEG_EXTENSIONS, annotation_target
    from pipeline.files import read_photo_file
    from pipeline.settings import Settings, open_detector
    from pipeline.table_photo import annotated_table, read_table_bytes, table_reading

    data = read_photo_file(args.image)
    if args.annotate:  # checked before any model runs
        folder = annotation_target(args.annotate, False, JPEG_EXTENSIONS)
        if folder is not None:
            args.annotate = folder / f"{args.image.stem}.jpg"
    detector = open_detector(Settings.from_env(model=args.model))
    photo = read_table_bytes(detector, data, str(args.image))
    answer = table_reading(photo)
    if args.json:
        print_model(answer)
    else:
        for seat in answer.seats:
            melds = " ".join(f"[{m.type}:{m.tile or '?'}]" for m in seat.melds)
            print(f"seat {seat.seat}: {' '.join(seat.concealed) or '-'} {melds}".rstrip())
            if seat.river:
                print(f"  river: {' '.join(seat.river)}")
            elif not seat.river_separated:
                print("  river: in the heap")
        if answer.heap:
            print(f"heap ({len(answer.heap)}): {' '.join(answer.heap)}")
        print(f"翻鸡 flipped: {answer.flipped or '-'}")
        print(f"winner (guess): {'-' if answer.winner is None else f'seat {answer.winner}'}")
        for r in answer.retake:
            print(f"retake? {r.code}: {r.message}")
    if args.annotate and not cv2.imwrite(str(args.annotate), annotated_table(photo)):
        raise ValueError(f"cannot write {args.annotate}")
    return 0
