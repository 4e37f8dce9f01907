"""Detector accuracy and latency, ours vs the mahjong-detector baseline, in one run on the same images.

    python benchmarks/bench_detector.py [--model models/zhuoji-tiles-int8.onnx] [--classifier PATH|none]
                                        [--back-check PATH|none] [--split test]
                                        [--synth DIR [DIR ...]] [--latency-images 20] [--limit N] [--latency-only]
                                        [--avx2-only]

Accuracy: mAP50 over the 27 suited classes on the real split (labels remapped to our classes), for our model and
for mahjong-detector (its honors mapped to `other`; its own grayscale + autocontrast preprocessing, scored at a low
threshold so its whole precision–recall curve counts). With --synth: the same on each synthetic validation set
(YOLO layout DIR/images/val, DIR/labels/val) where `back` is also scored for our model, again with the labels
the builder marks difficult left out (DIR/difficult/val, where it exists), and again with those a person could not
name left out (DIR/difficult_checked/val, where it exists: ``datasets/readability.py apply``). "Ours" is the detector
with its second, closer look by the crop classifier (``vision/classify.py``) and its back check
(``vision/back_check.py``) when they are shipped; the real split is also scored without them.
Latency: median end-to-end time (file → tile list) for 1280×960 JPEG photos, our `detect` vs the baseline's
`detect_tiles` on the same files, in blocks of photos taken in turn (see ``latency``).
--avx2-only: the whole run as on a CPU with AVX2 but no AVX-512, VNNI or AMX (``benchmarks/avx2_only.py``): the
code paths such a CPU takes, timed on this one.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import avx2_only
import cv2
import numpy as np

from vision.classes import CLASS_NAMES, OTHER
from vision.detect import DEFAULT_MODEL, Detector, _postprocess
from vision.detections import Detections
from vision.training.evaluate import (
    LOOKALIKES,
    SUITED,
    EvalResult,
    evaluate,
    finding_ap50,
    named_by_labels,
    read_unlabelled,
    with_alternatives,
)

ROOT = Path(__file__).resolve().parents[1]

REAL = ROOT.parent / "shared" / "datasets" / "rf-chinese-mahjong-v4"
REAL_REMAP = {27: OTHER}  # the real data's class 27 is "other"; ours is 28 (27 = back)
# Regions of test photos that show tiles the labels leave out (heaps above a labelled row, face-down walls).
UNLABELLED = ROOT / "datasets" / "real-test-unlabelled.json"


class Baseline:
    """mahjong-detector's model with its own preprocessing; classes mapped to ours."""

    def __init__(self) -> None:
        import importlib

        import onnxruntime as ort

        md = importlib.import_module("mahjong_detector.predict")

        self.md = md
        self.session = ort.InferenceSession(str(md.model_path), providers=["CPUExecutionProvider"])
        self.to_ours = np.array([CLASS_NAMES.index(n) if n in CLASS_NAMES else OTHER for n in md.CLASS_NAMES])

    def detections(self, path: Path) -> Detections:
        from mahjong_detector.preprocess import preprocess_image
        from PIL import Image

        img, pad = preprocess_image(Image.open(path))
        out = self.session.run(None, {self.session.get_inputs()[0].name: self.md.create_input_tensor(img)})[0][0]
        scores = out[4:].T
        cx, cy, w, h = out[:4]
        boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1)
        boxes[:, [0, 2]] = (boxes[:, [0, 2]] - pad.pad_x) / pad.scale
        boxes[:, [1, 3]] = (boxes[:, [1, 3]] - pad.pad_y) / pad.scale
        keep = scores.max(1) > 0.001
        # Sum the honor scores into one `other` score per box before taking the best class.
        ours = np.zeros((int(keep.sum()), len(CLASS_NAMES)), np.float32)
        np.add.at(ours.T, self.to_ours, scores[keep].T)
        return _postprocess(boxes[keep], np.minimum(ours, 1.0), 0.001, 0.5, 300, (pad.original_width,
                                                                                pad.original_height))


class Cached:
    """A predictor for ``vision.training.evaluate`` from a function path → Detections: each photo detected once, however
    many ways it is scored; ``names`` > 1 scores each box under its top names (``with_alternatives``)."""

    def __init__(self, detections, names: int = 1) -> None:
        self.detections, self.names, self.seen = detections, names, {}

    def get(self, path: Path) -> Detections:
        if path not in self.seen:
            self.seen[path] = self.detections(path)
        return self.seen[path]

    def __call__(self, path: Path):
        return with_alternatives(self.get(path), self.names)

    def with_names(self, names: int) -> Cached:
        """The same detections (shared cache), scored with ``names`` names per box."""
        other = Cached(self.detections, names)
        other.seen = self.seen
        return other


def ours_predictor(detector: Detector, turned: bool = False, closer: bool = True) -> Cached:
    return Cached(lambda path: detector(path, conf=0.001, turned=turned, closer=closer))


def multi_label(ours: Cached, base: Cached, images: list[Path], label_dir: Path,
                remap: dict[int, int] | None = None) -> str:
    """The same boxes scored with up to 3 names each, as ultralytics' validation scores (multi-label)."""
    scored = [evaluate(f.with_names(3), images, label_dir, remap, "3 names per box") for f in (ours, base)]
    return (f"scored with up to 3 names per box (ultralytics' multi-label validation; the reading stage sees "
            f"these): mAP50 over 27 classes ours {scored[0].map50(SUITED):.4f} | mahjong-detector "
            f"{scored[1].map50(SUITED):.4f}")


def ceilings(predict, images: list[Path], label_dir: Path, remap: dict[int, int] | None = None) -> str:
    """Where the mAP is lost: in finding the tiles or in naming them."""
    found = finding_ap50(predict, images, label_dir, remap)
    named = evaluate(named_by_labels(predict, label_dir, remap), images, label_dir, remap, "named by labels")
    return (f"finding the tiles, names aside: AP50 {found:.4f}; every found box named as its label: mAP50 "
            f"{named.map50(SUITED):.4f} (the most better naming alone could reach)")


def difficult_left_out(ours: Cached, base: Cached, images: list[Path], label_dir: Path, hard_dir: Path,
                       which: str = "difficult labels") -> str:
    """The same boxes scored without the labels the builder marks difficult (cut off by the border, mostly
    hidden, or too blurred for their size to read: ``datasets/synth/``), as PASCAL VOC scores; or without those
    of them a person could not name (``hard_dir`` written by ``datasets/readability.py apply``)."""
    back = CLASS_NAMES.index("back")
    o, b = (evaluate(f, images, label_dir, desc="difficult left out", difficult_dir=hard_dir) for f in (ours, base))
    files = [hard_dir / f"{p.stem}.txt" for p in images]
    n = sum(w != "-" for f in files if f.exists() for w in f.read_text().split())
    return (f"{which} left out ({n} of {int(o.gt_count.sum()) + n}; PASCAL VOC's convention): mAP50 over 27 "
            f"classes ours {o.map50(SUITED):.4f} (with back {o.map50([*SUITED, back]):.4f}) | mahjong-detector "
            f"{b.map50(SUITED):.4f}; finding the tiles, names aside: AP50 "
            f"{finding_ap50(ours, images, label_dir, difficult_dir=hard_dir):.4f}")


def report(title: str, ours: EvalResult, base: EvalResult | None, classes: list[int]) -> None:
    print(f"\n## {title} ({ours.images} images)")
    line = f"mAP50 over {len(classes)} classes: ours {ours.map50(classes):.4f}"
    if base is not None:
        line += f" | mahjong-detector {base.map50(classes):.4f}"
    print(line)
    print("\n| class | boxes | AP50 ours |" + (" AP50 mahjong-detector |" if base else ""))
    print("| --- | --- | --- |" + (" --- |" if base else ""))
    for c in classes:
        row = f"| {CLASS_NAMES[c]} | {ours.gt_count[c]} | {ours.ap50[c]:.3f} |"
        if base is not None:
            row += f" {base.ap50[c]:.3f} |"
        print(row)
    print("\nlook-alike confusions (truth→read, boxes at conf ≥ 0.25):")
    print("  ours: " + ", ".join(f"{k} {v}" for k, v in ours.confused(LOOKALIKES).items()))
    if base is not None:
        print("  mahjong-detector: " + ", ".join(f"{k} {v}" for k, v in base.confused(LOOKALIKES).items()))


def unlabelled_left_out(ours: Cached, base: Cached, images: list[Path], label_dir: Path) -> str:
    """The same boxes with those on tiles the labels leave out not scored (``UNLABELLED``): a detector that finds
    more of a photo's unlabelled tiles is not marked down for it."""
    regions = read_unlabelled(UNLABELLED)
    o, b = (evaluate(f, images, label_dir, REAL_REMAP, "unlabelled tiles left out", unlabelled=regions)
            for f in (ours, base))
    (oa, op, _), (ba, bp, _) = o.tile_accuracy(), b.tile_accuracy()
    return (f"with the tiles the labels leave out not scored ({UNLABELLED.relative_to(ROOT)}, {len(regions)} "
            f"photos): mAP50 over 27 classes ours {o.map50(SUITED):.4f} | mahjong-detector {b.map50(SUITED):.4f}; "
            f"tile accuracy / precision at 0.25 ours {oa:.3f} / {op:.3f} | mahjong-detector {ba:.3f} / {bp:.3f}")


def latency(detector: Detector, images: list[Path], n: int) -> None:
    from mahjong_detector import detect_tiles

    with tempfile.TemporaryDirectory() as tmp:
        photos = []
        for i, p in enumerate(images[:n]):
            out = Path(tmp) / f"photo_{i}.jpg"
            cv2.imwrite(str(out), cv2.resize(cv2.imread(str(p)), (1280, 960)), [cv2.IMWRITE_JPEG_QUALITY, 90])
            photos.append(out)
        detector(photos[0])
        detect_tiles(photos[0])
        runs: dict[str, list[float]] = {"ours detect()": [], "ours detect(turned=True)": [],
                                        "mahjong-detector detect_tiles": []}
        calls = [lambda p: detector(p), lambda p: detector(p, turned=True), lambda p: detect_tiles(str(p))]
        if detector.classifier is not None or detector.back_check is not None:
            runs["ours detect(closer=False)"] = []
            calls.append(lambda p: detector(p, closer=False))
        # Each pipeline runs a block of photos, one pipeline after another, forth and back over several rounds:
        # all share the machine's load, and one pipeline's runtime threads (which spin for a moment after each
        # call) never sit between two calls of another, as they would if calls alternated photo by photo.
        order = list(zip(runs.values(), calls, strict=True))
        for block in range(4):
            for times, call in order if block % 2 == 0 else order[::-1]:
                for p in photos[block::4]:
                    t = time.perf_counter()
                    call(p)
                    times.append(time.perf_counter() - t)
    print(f"\n## Latency, 1280×960 JPEG, end to end (file → tiles), {len(photos)} photos")
    for name, times in runs.items():
        print(f"{name + ':':<31} median {1000 * statistics.median(times):.1f} ms, "
              f"p90 {1000 * sorted(times)[math.ceil(0.9 * len(times)) - 1]:.1f} ms")


def synthetic(root: Path, detector: Detector, baseline: Cached, limit: int | None) -> None:
    """Ours and the baseline on one synthetic validation set: every label, then the difficult ones left out."""
    images = sorted((root / "images" / "val").glob("*.jpg"))[:limit]
    label_dir = root / "labels" / "val"
    ours = ours_predictor(detector)
    s_ours = evaluate(ours, images, label_dir, desc="ours, synth")
    s_base = evaluate(baseline, images, label_dir, desc="mahjong-detector, synth")
    report(f"Synthetic validation scenes, {root}", s_ours, s_base, SUITED)
    back = CLASS_NAMES.index("back")
    print(f"synthetic mAP50 over 27 suited + back: ours {s_ours.map50([*SUITED, back]):.4f} "
          f"(back AP50 {s_ours.ap50[back]:.3f}, {s_ours.gt_count[back]} boxes)")
    print("ours, " + ceilings(ours, images, label_dir))
    print(multi_label(ours, baseline, images, label_dir))
    for folder, which in (("difficult", "difficult labels"),
                          ("difficult_checked", "difficult labels a person could not name")):
        if (root / folder / "val").is_dir():
            print(difficult_left_out(ours, baseline, images, label_dir, root / folder / "val", which))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--classifier", default="default",
                    help="crop classifier ONNX, or 'none' (default: the shipped models/zhuoji-crops-int8.onnx)")
    ap.add_argument("--back-check", default="default",
                    help="back-check ONNX, or 'none' (default: the shipped models/zhuoji-backs.onnx)")
    ap.add_argument("--split", default="test", choices=["test", "valid"])
    ap.add_argument("--synth", type=Path, nargs="+", help="synthetic dataset folders with images/val and labels/val")
    ap.add_argument("--latency-images", type=int, default=20, help="photos to time (0: no timing)")
    ap.add_argument("--limit", type=int, help="use only the first N images of each set")
    ap.add_argument("--latency-only", action="store_true", help="time the pipelines, skip the accuracy figures")
    ap.add_argument("--avx2-only", action="store_true",
                    help="hide AVX-512, VNNI and AMX from this run (Linux x86-64 with CPUID faulting)")
    args = ap.parse_args()
    if args.latency_images < 0 or (args.latency_only and args.latency_images == 0):
        ap.error("--latency-images: a count of photos to time, at least 1 with --latency-only")
    for root in args.synth or []:
        if not (root / "labels" / "val").is_dir():
            ap.error(f"--synth {root}: no labels/val/ folder there (a dataset written by datasets.synth)")
    if args.avx2_only:
        try:
            avx2_only.restart_avx2_only()
        except avx2_only.Unavailable as e:
            ap.error(f"--avx2-only: {e}")

    detector = Detector(args.model, classifier=None if args.classifier == "none" else args.classifier,
                        back_check=None if args.back_check == "none" else args.back_check)
    closer = detector.classifier is not None or detector.back_check is not None
    images = sorted((REAL / "images" / args.split).glob("*.jpg"))[: args.limit]
    title = args.model.name + "".join(f" + {what} {part.model_path.name}" for what, part in
                                      (("crop classifier", detector.classifier), ("back check", detector.back_check))
                                      if part is not None)
    print(f"# Detector benchmark — model {title}\n{avx2_only.machine()}")
    if args.latency_only:
        latency(detector, images, args.latency_images)
        return 0
    baseline = Cached(Baseline().detections)
    label_dir = REAL / "labels" / args.split
    ours_real = ours_predictor(detector)
    ours = evaluate(ours_real, images, label_dir, REAL_REMAP, "ours, real")
    base = evaluate(baseline, images, label_dir, REAL_REMAP, "mahjong-detector, real")
    turned = evaluate(ours_predictor(detector, turned=True), images, label_dir, REAL_REMAP, "ours turned, real")
    alone = (evaluate(ours_predictor(detector, closer=False), images, label_dir, REAL_REMAP, "detector alone, real")
             if closer else None)
    report(f"Real photos, {args.split} split", ours, base, SUITED)
    if args.split == "test":
        print(unlabelled_left_out(ours_real, baseline, images, label_dir))
    print("ours, " + ceilings(ours_real, images, label_dir, REAL_REMAP))
    print(multi_label(ours_real, baseline, images, label_dir, REAL_REMAP))
    print(f"with the second look at the photo turned 180° (detect(turned=True)): mAP50 over 27 classes "
          f"{turned.map50(SUITED):.4f}")
    if alone is not None:
        print(f"the detector alone, without the crop classifier and back check (closer=False): mAP50 over 27 classes "
              f"{alone.map50(SUITED):.4f}; look-alike confusions: "
              + ", ".join(f"{k} {v}" for k, v in alone.confused(LOOKALIKES).items()))
    for root in args.synth or []:
        synthetic(root, detector, baseline, args.limit)
    if args.latency_images > 0:
        latency(detector, images, args.latency_images)
    return 0


if __name__ == "__main__":
    sys.exit(main())
