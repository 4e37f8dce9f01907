"""The crop classifier's second look: tile accuracy of the detector alone, the classifier alone and both combined.

    python benchmarks/bench_classifier.py [--model models/zhuoji-tiles-int8.onnx] [--classifier models/zhuoji-crops-int8.onnx]
                                          [--mix ../data/mix3] [--weights 0 0.2 0.3 0.4 0.5 0.7 1]

The detector runs as ``zhuoji read`` runs it (two looks, confidence ≥ 0.25) on the real test split and, with
``--mix``, on the real photos of that mix's validation list (the set ``DETECTOR_WEIGHT`` was chosen on). Each
labelled box is matched to a detected one at IoU ≥ 0.5 (one to one, best first); the accuracy is the share of
matched boxes named right, so that only naming is measured, not finding. ``weight`` is the detector's exponent in
the combined score (``vision.classify.combine``): 1 = the detector alone, 0 = the classifier alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

from datasets.crops import label_path
from vision.classes import CLASS_NAMES, OTHER
from vision.classify import DEFAULT_CLASSIFIER, DETECTOR_WEIGHT, Classifier, combine
from vision.detect import DEFAULT_MODEL, Detector
from vision.detections import Detections, box_iou
from vision.images import load_image
from vision.labels import read_yolo_labels

ROOT = Path(__file__).resolve().parents[1]

REAL = ROOT.parent / "shared" / "datasets" / "rf-chinese-mahjong-v4"


def matched(detector: Detector, classifier: Classifier, images: list[Path], remap: dict[int, int], desc: str
            ) -> tuple[np.ndarray, Detections, np.ndarray]:
    """Truth class, the detector's reading and the classifier's probabilities of every matched box."""
    truth, top3, probs, scores, crops = [], [], [], [], []
    for path in tqdm(images, desc=desc, unit="photo"):
        img = load_image(path)
        gt, gt_cls = read_yolo_labels(label_path(path), img.shape[1], img.shape[0], remap)
        dets = detector(img, turned=True, closer=False)
        if not len(gt) or not len(dets):
            continue
        iou = box_iou(gt, dets.xyxy)
        used: list[int] = []
        for g in np.argsort(-iou.max(1)):
            j = int(iou[g].argmax())
            if iou[g, j] >= 0.5 and j not in used:
                used.append(j)
                truth.append(gt_cls[g])
        if used:
            top3.append(dets.top3_class[used])
            probs.append(dets.top3_prob[used])
            scores.append(dets.probs[used])
            crops.append(classifier.probs(img, dets.xyxy[used]))
    n = len(truth)
    dets = Detections(np.zeros((n, 4)), np.ones(n), np.concatenate(top3)[:, 0], np.concatenate(top3),
                      np.concatenate(probs), probs=np.concatenate(scores))
    return np.array(truth), dets, np.concatenate(crops)


def report(name: str, truth: np.ndarray, dets: Detections, crops: np.ndarray, weights: list[float]) -> None:
    print(f"\n## {name}: {len(truth)} labelled tiles matched to a detected box")
    print("\n| detector weight | tile accuracy | misnamed |\n| --- | --- | --- |")
    for w in weights:
        named = combine(dets, crops, w).class_id
        shipped = " (shipped)" if w == DETECTOR_WEIGHT else ""
        kind = " (detector alone)" if w == 1 else " (classifier alone)" if w == 0 else ""
        print(f"| {w:g}{kind}{shipped} | {np.mean(named == truth):.4f} | {int(np.sum(named != truth))} |")
    named = combine(dets, crops, DETECTOR_WEIGHT).class_id
    wrong = [(CLASS_NAMES[t], CLASS_NAMES[p]) for t, p in zip(truth, named, strict=True) if t != p]
    pairs: dict[str, int] = {}
    for t, p in wrong:
        pairs[f"{t}→{p}"] = pairs.get(f"{t}→{p}", 0) + 1
    print("\nmisnamed with the shipped weight (truth→read): "
          + (", ".join(f"{k} {v}" for k, v in sorted(pairs.items(), key=lambda kv: -kv[1])) or "none"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--classifier", type=Path, default=DEFAULT_CLASSIFIER)
    ap.add_argument("--mix", type=Path, help="a datasets/mix.py folder: also score its real validation photos")
    ap.add_argument("--weights", type=float, nargs="+", default=[1, 0.7, 0.5, 0.4, 0.3, 0.2, 0])
    ap.add_argument("--limit", type=int, help="use only the first N photos of each set")
    args = ap.parse_args()
    for path in (args.model, args.classifier):
        if not path.is_file():
            ap.error(f"no such model: {path}")
    detector = Detector(args.model, classifier=None)
    classifier = Classifier(args.classifier)
    print(f"# Crop classifier benchmark — {args.model.name} + {args.classifier.name}")
    sets: list[tuple[str, list[Path], dict[int, int]]] = []
    if args.mix:
        val = [Path(line) for line in (args.mix / "val.txt").read_text().split()]
        real_val = [p for p in val if ".rf." in p.name][: args.limit]  # the Roboflow export names its photos so
        sets.append((f"real validation photos of {args.mix.name} ({len(real_val)})", real_val, {}))
    test = sorted((REAL / "images" / "test").glob("*.jpg"))[: args.limit]
    sets.append((f"real test split ({len(test)} photos)", test, {27: OTHER}))  # the source's 27 is `other`
    for name, images, remap in sets:
        report(name, *matched(detector, classifier, images, remap, name.split(" (")[0]), args.weights)
    return 0


if __name__ == "__main__":
    sys.exit(main())
