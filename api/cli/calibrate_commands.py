"""``zhuoji calibrate``: teach it your set (a shell over ``pipeline.calibration``, as ``POST /v1/calibrate``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_calibrate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("calibrate", help="teach it your set: references from a photo of its 27 suited tiles in three "
                                         "rows (1-9m, 1-9p, 1-9s), for read/score --calibration")
    p.add_argument("image", type=Path, help="photo of the 27 suited tiles face up: 1-9m, 1-9p and 1-9s in three rows")
    p.add_argument("--out", type=Path, metavar="FILE", help="write the calibration here (default: print its JSON)")
    p.add_argument("--model", type=Path, help="ONNX model (default: the shipped models/zhuoji-tiles-int8.onnx)")
    p.set_defaults(func=run_calibrate)


def run_calibrate(args: argparse.Namespace) -> int:
    from api.cli.output import print_model
    from pipeline.calibration import calibrate_bytes
    from pipeline.files import read_photo_file
    from pipeline.settings import Settings, open_detector

    data = read_photo_file(args.image)  # no such file, a folder, a FIFO: one line and exit 2
    calibration = calibrate_bytes(open_detector(Settings.from_env(model=args.model)), data, str(args.image))
    if args.out is None:
        print_model(calibration)  # the body of POST /v1/calibrate
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(calibration.model_dump(mode="json"), ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{args.out}: references of the 27 tiles ({calibration.kind} of {calibration.model}); the networks "
          f"named {round(calibration.agreement * 27)} of 27 as their place says")
    return 0


def add_calibration_option(p: argparse.ArgumentParser) -> None:
    from api.cli.table_calibration_commands import add_table_option

    p.add_argument("--calibration", type=Path, metavar="FILE",
                   help="name tiles with this set's references too (made by `zhuoji calibrate`)")
    add_table_option(p)


def calibration_arg(args: argparse.Namespace):
    """The calibration ``--calibration`` names, the one kept with ``--table``, or None."""
    from api.cli.table_calibration_commands import table_calibration
    from pipeline.calibration import read_calibration_file

    kept = table_calibration(args)
    if kept is not None:
        return kept
    return read_calibration_file(args.calibration) if args.calibration is not None else None
