"""For ``zhuoji table calibrate ID photo.jpg`` (teach a table its set; ``--clear`` forgets it; run by
``api.cli.table_commands``), the calibration line of ``zhuoji table show``, and ``read``/``score --table ID``: the same
store and pipeline functions as ``/v1/tables/{id}/calibrate`` and the ``table`` form field."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipeline.calibration import KeptCalibration
    from pipeline.models import CalibrationFile
    from tables import CalibrationRecord


def add_table_calibrate(a: argparse.ArgumentParser) -> None:
    a.add_argument("id")
    a.add_argument("image", nargs="?", type=Path,
                   help="photo of the 27 suited tiles face up in three rows (1-9m, 1-9p, 1-9s), or a calibration "
                        "JSON file made by `zhuoji calibrate --out`")
    a.add_argument("--clear", action="store_true", help="forget the table's calibration instead")
    a.add_argument("--model", type=Path, help="ONNX model (default: the shipped models/zhuoji-tiles-int8.onnx)")


def calibration_words(kept: CalibrationRecord | None, problem: str | None = None) -> str:
    """One line on a table's calibration, for ``table show`` and ``table calibrate``; ``problem``: why it no
    longer fits the models here (see :func:`calibration_problem_here`)."""
    if kept is None:
        return "calibration: none (teach it your set: zhuoji table calibrate ID photo.jpg)"
    named = round(kept.agreement * 27)
    others = ", ".join(f"{d.tile} read as {d.read_as}" for d in kept.disagreed)
    words = (f"calibration: your set's, taught {kept.created_at[:16].replace('T', ' ')} with {kept.model}; the "
             f"networks named {named} of 27 as their place says{f' ({others})' if others else ''}")
    return words + (f"\n  recalibrate: {problem} (photos are read without it until then)" if problem else "")


def calibration_problem_here(kept: CalibrationRecord | None, model: Path | None = None) -> str | None:
    """Why the kept calibration cannot name tiles with the models this machine would read with (as the service's
    answer says "recalibrate"), or None when it can, there is none, or the models cannot be opened here."""
    if kept is None:
        return None
    from pipeline.calibration import calibration_problem
    from pipeline.settings import Settings, open_detector

    try:
        detector = open_detector(Settings.from_env(model=model))
    except (OSError, ValueError, RuntimeError):  # no models here: a ledger machine can still show its tables
        return None
    return calibration_problem(detector, kept.model, kept.kind, kept.model_sha256)


def calibration_of(args: argparse.Namespace) -> CalibrationFile:
    """The calibration of ``args.image``: a JSON file (checked as ``PUT /v1/tables/{id}/calibration`` checks its
    body), a photo calibrated here."""
    from pipeline.calibration import calibrate_bytes, calibration_file
    from pipeline.files import read_photo_file
    from pipeline.settings import Settings, open_detector

    if args.image.suffix.lower() == ".json":
        return calibration_file(args.image)
    data = read_photo_file(args.image)  # no such file, a folder, a FIFO: one line and exit 2
    return calibrate_bytes(open_detector(Settings.from_env(model=args.model)), data, str(args.image))


def add_table_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table", metavar="ID", help="name tiles with the calibration kept with this table")
    p.add_argument("--db", metavar="URL", help="where the tables are (with --table; default as `zhuoji table`)")


def table_calibration(args: argparse.Namespace) -> KeptCalibration | None:
    """The calibration kept with ``--table`` (None without the option); an unknown table is a one-line error."""
    if args.table is None:
        return None
    if args.calibration is not None:
        raise ValueError("give --calibration or --table, not both")
    from pipeline.calibration import kept_calibration
    from pipeline.settings import Settings
    from tables import StoreUnavailable, TableNotFound, TableStore, default_database_url

    try:
        store = TableStore.open(Settings.from_env(database_url=args.db).database_url or default_database_url())
        try:
            kept = store.get_calibration(args.table, True)
        finally:
            store.close()
    except (StoreUnavailable, TableNotFound) as exc:
        raise ValueError(str(exc.args[0])) from None
    return kept_calibration(kept.calibration if kept is not None else None)
