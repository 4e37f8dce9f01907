"""One way to open an ONNX model for inference, shared by the detector and the crop classifier."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

# Crops per run of a crop network: all crops of a photo in one run is fastest up to a few dozen; beyond that the
# activations outgrow the caches (161 crops of a catalogue photo: min of six runs 308 ms in one batch, 85–97 ms in
# batches of 16–64, 202 ms one at a time; 2 shared cores).
CROP_BATCH = 32


def open_session(path: Path, threads: int | None, what: str):
    """An onnxruntime CPU session of ``path``; ``what`` names the model in errors. A missing file raises
    FileNotFoundError, a file onnxruntime cannot load ValueError (both a one-line message, no runtime trace)."""
    import onnxruntime as ort

    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads or os.cpu_count() or 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Idle threads sleep instead of spinning: the crop classifier's session runs right after the detector's on the
    # same cores, and one session's spinning threads slowed the other's runs by about half (live mode).
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own types (InvalidProtobuf, Fail, ...) for unreadable files
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: not a loadable ONNX {what} ({reason})") from None


def run_crops(session, crops: np.ndarray, batch: int = CROP_BATCH) -> np.ndarray:
    """A crop network's first output for (N, 3, size, size) crops, run ``batch`` crops at a time (its input is
    named ``crops`` and has a dynamic batch axis)."""
    return run_crops_all(session, crops, batch)[0]


def run_crops_all(session, crops: np.ndarray, batch: int = CROP_BATCH) -> list[np.ndarray]:
    """Every output of a crop network for (N, 3, size, size) crops (the crop classifier's ``probs`` and
    ``features`` come out of one run), ``batch`` crops at a time."""
    runs = [session.run(None, {"crops": crops[i:i + batch]}) for i in range(0, len(crops), batch)]
    return [np.concatenate([run[k] for run in runs]) for k in range(len(runs[0]))]
