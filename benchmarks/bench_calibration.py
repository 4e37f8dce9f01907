"""Cross-style tile accuracy with and without calibration ("teach it your set").

    PYTHONPATH=. python3 benchmarks/bench_calibration.py                    # black style (never in training), 30 photos
    PYTHONPATH=. python3 benchmarks/bench_calibration.py --style regular --photos 30

For a style of ``datasets/tile_photos.py``: one calibration photo (27 tiles in three rows, seed ``--seed``) is
detected and turned into references by ``vision.calibrate`` (through ``find_grid``, as ``zhuoji calibrate`` does; if
the detector cannot find the grid, the true boxes are used and the line says so); then ``--photos`` photos of 24
random tiles (other seeds: other tile sizes, felt, light, blur; half upside down) are read by the shipped detector
and crop classifier, and named again with the calibration. Printed per style:

- ``pipeline``: tiles named right / all true tiles (a box matches a true tile at IoU ≥ 0.5; a missed tile is
  wrong), without and with calibration; ``found``: the share of true tiles with a matching box;
- ``crops on true boxes``: the crop classifier alone on the true boxes (the detector's misses left out), without
  and with calibration (the same formula, with the classifier's probabilities in place of the pipeline's).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from datasets.tile_photos import calibration_photo, load_tiles, random_photo
from vision.calibrate import (
    CALIBRATION_WEIGHT,
    TEMPERATURE,
    CalibrationError,
    apply_calibration,
    build_calibration,
)
from vision.classes import CLASS_NAMES
from vision.detect import get_detector
from vision.detections import Detections, box_iou


def match(truth: np.ndarray, found: np.ndarray) -> np.ndarray:
    """Per true box the index of its matching detection (IoU ≥ 0.5, greedy by IoU), or -1."""
    out = np.full(len(truth), -1)
    if len(found) == 0:
        return out
    iou = box_iou(truth, found)
    while iou.size and iou.max() >= 0.5:
        t, f = np.unravel_index(np.argmax(iou), iou.shape)
        out[t] = f
        iou[t, :] = 0
        iou[:, f] = 0
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--style", default="black", help="black or tinted (held out of training), or regular")
    parser.add_argument("--photos", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0, help="the calibration photo's seed; test photos use the next ones")
    parser.add_argument("--weight", type=float, default=CALIBRATION_WEIGHT)
    parser.add_argument("--temperature", type=float, default=TEMPERATURE)
    parser.add_argument("--classifier", default="default", help="crop classifier ONNX (default: the shipped one)")
    args = parser.parse_args()
    detector = get_detector(classifier=args.classifier)
    classifier = detector.classifier
    if classifier is None:
        raise SystemExit("no crop classifier: calibration needs one")
    tiles = load_tiles(args.style)
    cal_photo = calibration_photo(np.random.default_rng(args.seed), tiles)
    cal_dets = detector(cal_photo.image, turned=True)
    try:
        calibration = build_calibration(classifier, cal_photo.image, cal_dets)
        source = f"the calibration photo's {len(cal_dets)} detections"
    except CalibrationError as exc:
        truth = Detections(cal_photo.boxes, np.ones(27), np.arange(27))
        calibration = build_calibration(classifier, cal_photo.image, truth)
        source = f"the true boxes (the detector: {exc})"
    print(f"style {args.style}: calibration from {source}; kind {calibration.kind}, networks agreed on "
          f"{calibration.agreement:.3f} of the 27 tiles; weight {args.weight}, temperature {args.temperature}")
    counts = {"truth": 0, "found": 0, "plain": 0, "calibrated": 0, "crop_plain": 0, "crop_calibrated": 0}
    start = time.perf_counter()
    for s in range(args.seed + 1, args.seed + 1 + args.photos):
        photo = random_photo(np.random.default_rng(s), tiles)
        want = np.array([CLASS_NAMES.index(t) for t in photo.tiles])
        dets = detector(photo.image, turned=True)
        named = apply_calibration(calibration, classifier, photo.image, dets, args.weight, args.temperature)
        m = match(photo.boxes, dets.xyxy)
        hit = m >= 0
        counts["truth"] += len(want)
        counts["found"] += int(hit.sum())
        counts["plain"] += int((dets.class_id[m[hit]] == want[hit]).sum())
        counts["calibrated"] += int((named.class_id[m[hit]] == want[hit]).sum())
        crop_probs = classifier.probs(photo.image, photo.boxes)
        crop = Detections(photo.boxes, np.ones(len(want)), crop_probs.argmax(1), probs=crop_probs,
                          top3_class=np.argsort(-crop_probs, 1)[:, :3],
                          top3_prob=np.sort(crop_probs, 1)[:, ::-1][:, :3])
        crop_named = apply_calibration(calibration, classifier, photo.image, crop, args.weight, args.temperature)
        counts["crop_plain"] += int((crop.class_id == want).sum())
        counts["crop_calibrated"] += int((crop_named.class_id == want).sum())
    n = counts["truth"]
    print(f"{args.photos} photos, {n} tiles, {time.perf_counter() - start:.1f} s")
    print(f"pipeline tile accuracy: {counts['plain'] / n:.3f} without calibration, {counts['calibrated'] / n:.3f} "
          f"with (found {counts['found'] / n:.3f})")
    print(f"crops on true boxes:    {counts['crop_plain'] / n:.3f} without calibration, "
          f"{counts['crop_calibrated'] / n:.3f} with")


if __name__ == "__main__":
    main()
