"""The detector on the views people photograph, in tile styles held out of training, and on the real test split.

    python benchmarks/bench_views.py [--set DIR] [--model models/zhuoji-tiles-int8.onnx] [--classifier PATH|none]
                                     [--back-check PATH|none] [--no-real] [--limit N] [--misses OUT]

(b) DIR is a benchmark set of ``datasets/views.py`` (``--split val --styles held-out``: every scene in
DIR/images/val, named ``<view>_<NNNNNN>.jpg``, face boxes, difficult words in DIR/difficult/val). Per view
(standing row from the seat, flat hand with melds, river, close-up, turned 90°) and per held-out style:

* tile accuracy: the labelled tiles (difficult ones left out) that the pipeline, as it runs by default (detector
  + crop classifier + back check, confidence 0.25), finds (IoU >= 0.5, one box per tile) and names right,
  over all labelled tiles; precision: the right ones over all boxes it gives (a box on a difficult tile is
  neither right nor wrong);
* mAP50 over the 27 suited classes (and with `back`), all confidences, difficult labels left out;
* a 95% interval of the tile accuracy, scenes resampled (bootstrap): how far the figure could move on another
  set of as many scenes;
* where the misses go: the most frequent truth -> read pairs (``none``: not found; ``extra``: a box on nothing);
  with ``--misses OUT``, contact sheets ``OUT/<view>.png`` of the tiles missed or misnamed (each crop captioned
  ``truth>read``), for a person to see what the scenes or the model lack (the hard-example loop).

(a) The real test split's mAP50 over 27 classes, scored as ``benchmarks/bench_detector.py`` scores it (its code).
Without ``--set``, (a) alone: it needs only ``../shared/datasets/rf-chinese-mahjong-v4``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
from bench_detector import REAL, REAL_REMAP, UNLABELLED, Cached, ours_predictor

from vision.classes import BACK, CLASS_NAMES, NUM_CLASSES
from vision.detect import DEFAULT_MODEL, Detector
from vision.detections import box_iou
from vision.labels import read_yolo_labels
from vision.training.evaluate import (
    SUITED,
    EvalResult,
    evaluate,
    finding_ap50,
    read_difficult,
    read_unlabelled,
)

VIEW_ORDER = ("standing", "melds", "river", "closeup", "turned")
VIEW_NAMES = {"standing": "standing row from the seat", "melds": "flat hand with melds", "river": "river",
              "closeup": "close-up (8-20 tiles)", "turned": "turned 90°"}


def misses(result: EvalResult, k: int = 6) -> str:
    """The ``k`` most frequent errors: truth -> read, 'none' for a tile not found, 'extra' for a box on nothing."""
    names = [*CLASS_NAMES, "none"]
    c = result.confusion
    pairs = Counter()
    for t in range(NUM_CLASSES + 1):
        for p in range(NUM_CLASSES + 1):
            if t != p and c[t, p]:
                pairs[("extra" if t == NUM_CLASSES else names[t], names[p])] += int(c[t, p])
    return ", ".join(f"{a}→{b} {n}" for (a, b), n in pairs.most_common(k)) or "none"


def miss_sheet(pipeline: Cached, images: list[Path], labels: Path, hard: Path, most: int = 80) -> np.ndarray | None:
    """Crops of the labelled tiles the pipeline misses or misnames (matched as ``vision.training.evaluate`` matches the
    confusion: best overlap first, IoU >= 0.5, each box once), captioned ``truth>read``, 10 to a row."""
    crops = []
    for path in images:
        img = cv2.imread(str(path))
        h, w = img.shape[:2]
        gt, cls = read_yolo_labels(labels / f"{path.stem}.txt", w, h)
        plain = ~read_difficult(hard / f"{path.stem}.txt", len(cls))
        boxes, _, names = pipeline(path)
        iou = box_iou(gt, boxes) if len(boxes) and len(gt) else np.zeros((len(gt), len(boxes)))
        taken = np.zeros(len(boxes), bool)
        for t in np.argsort(-iou.max(1)) if iou.size else range(len(gt)):
            row = np.where(taken, -1, iou[t]) if iou.size else np.array([])
            read = "none"
            if row.size and row.max() >= 0.5:
                taken[int(row.argmax())] = True
                read = CLASS_NAMES[int(names[int(row.argmax())])]
            if plain[t] and read != CLASS_NAMES[cls[t]]:
                x0, y0, x1, y1 = gt[t]
                m = 0.25 * max(x1 - x0, y1 - y0)
                x0, y0 = int(max(0, x0 - m)), int(max(0, y0 - m))
                x1, y1 = int(min(w, x1 + m)), int(min(h, y1 + m))
                crop = cv2.resize(img[y0:y1, x0:x1], (96, 112), interpolation=cv2.INTER_AREA)
                crop = cv2.copyMakeBorder(crop, 14, 0, 0, 0, cv2.BORDER_CONSTANT, value=(255, 255, 255))
                cv2.putText(crop, f"{CLASS_NAMES[cls[t]]}>{read}", (2, 11), cv2.FONT_HERSHEY_SIMPLEX, 0.38,
                            (0, 0, 200), 1, cv2.LINE_AA)
                crops.append(crop)
            if len(crops) >= most:
                break
        if len(crops) >= most:
            break
    if not crops:
        return None
    crops += [np.full_like(crops[0], 255)] * (-len(crops) % 10)
    return np.vstack([np.hstack(crops[i:i + 10]) for i in range(0, len(crops), 10)])


def scene_counts(pipeline: Cached, images: list[Path], labels: Path, hard: Path) -> np.ndarray:
    """(tiles read right, labelled tiles) of each scene, the samples of :func:`accuracy_interval`."""
    counts = np.zeros((len(images), 2))
    for i, img in enumerate(images):
        c = evaluate(pipeline, [img], labels, desc="", difficult_dir=hard).confusion
        counts[i] = np.trace(c[:NUM_CLASSES, :NUM_CLASSES]), c[:NUM_CLASSES].sum()
    return counts


def accuracy_interval(counts: np.ndarray, draws: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% interval of the tile accuracy, scenes drawn with replacement: tiles of one scene fail together (one
    style, one light, one angle), so the scenes, not the tiles, are the samples. Measured on the shipped
    detector: 40 close-ups span 0.861–0.983, 100 span 0.917–0.979."""
    picks = np.random.default_rng(seed).integers(0, len(counts), (draws, len(counts)))
    ratios = counts[picks, 0].sum(1) / np.maximum(counts[picks, 1].sum(1), 1)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(low), float(high)


def score(pipeline: Cached, ranked: Cached, images: list[Path], labels: Path, hard: Path, desc: str
          ) -> tuple[EvalResult, EvalResult]:
    """(the pipeline's confident boxes scored, all-confidence boxes scored) with difficult labels left out."""
    return (evaluate(pipeline, images, labels, desc=f"{desc}, pipeline", difficult_dir=hard),
            evaluate(ranked, images, labels, desc=f"{desc}, ranked", difficult_dir=hard))


def rendered(folder: Path, build: dict, pipeline: Cached, ranked: Cached, limit: int | None,
             misses_dir: Path | None) -> None:
    """(b): the rendered scenes of the set in ``folder``, by view and by style."""
    images_dir, labels, hard = (folder / d / "val" for d in ("images", "labels", "difficult"))
    by_view = {v: sorted(images_dir.glob(f"{v}_*.jpg"))[: limit] for v in VIEW_ORDER}
    rows = ["| view | scenes | tiles | tile accuracy | precision | mAP50 (27) | mAP50 (27 + back) | finding AP50 "
            "| tile accuracy, 95% interval |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    notes = []
    everything: list[Path] = []
    counts: list[np.ndarray] = []
    for view, images in by_view.items():
        if not images:
            continue
        everything += images
        conf, allc = score(pipeline, ranked, images, labels, hard, view)
        acc, prec, n = conf.tile_accuracy()
        found = finding_ap50(ranked, images, labels, difficult_dir=hard)
        counts.append(scene_counts(pipeline, images, labels, hard))
        low, high = accuracy_interval(counts[-1])
        rows.append(f"| {VIEW_NAMES[view]} | {len(images)} | {n} | {acc:.3f} | {prec:.3f} | {allc.map50(SUITED):.3f} "
                    f"| {allc.map50([*SUITED, BACK]):.3f} | {found:.3f} | {low:.3f}–{high:.3f} |")
        notes.append(f"- {VIEW_NAMES[view]}: {misses(conf)}")
        if misses_dir:
            sheet = miss_sheet(pipeline, images, labels, hard)
            if sheet is not None:
                misses_dir.mkdir(parents=True, exist_ok=True)
                cv2.imwrite(str(misses_dir / f"{view}.png"), sheet)
    conf, allc = score(pipeline, ranked, everything, labels, hard, "all")
    acc, prec, n = conf.tile_accuracy()
    low, high = accuracy_interval(np.concatenate(counts))
    rows.append(f"| **all views** | {len(everything)} | {n} | {acc:.3f} | {prec:.3f} | {allc.map50(SUITED):.3f} | "
                f"{allc.map50([*SUITED, BACK]):.3f} | {finding_ap50(ranked, everything, labels, difficult_dir=hard):.3f} "
                f"| {low:.3f}–{high:.3f} |")
    held = [s for s in build.get("styles", []) if s in build.get("held_out", [])]
    kind = ("held-out styles" if held and len(held) == len(build.get("styles", [])) else
            "styles not all held out of training: not a cross-style measure")
    print(f"\n## (b) Rendered scenes ({kind}), by view (difficult labels left out)\n")
    print("\n".join(rows))
    print("\nmost frequent errors at confidence 0.25 (truth→read; none = not found, extra = a box on nothing):")
    print("\n".join(notes))

    scene_styles = build.get("scene_styles", {})
    if scene_styles:
        print("\n| style | held out | scenes | tiles | tile accuracy | precision |\n| --- | --- | --- | --- | --- | --- |")
        for style in sorted(set(scene_styles.values())):
            imgs = [p for p in everything if scene_styles.get(p.stem) == style]
            if imgs:
                a, pr, k = evaluate(pipeline, imgs, labels, desc=style, difficult_dir=hard).tile_accuracy()
                out = "yes" if style in build.get("held_out", []) else "no"
                print(f"| {style} | {out} | {len(imgs)} | {k} | {a:.3f} | {pr:.3f} |")



def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", type=Path, help="a benchmark set written by datasets/views.py (without it: (a) only, the real test split)")
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--classifier", default="default", help="crop classifier ONNX, or 'none'")
    ap.add_argument("--back-check", default="default", help="back-check ONNX, or 'none'")
    ap.add_argument("--no-real", action="store_true", help="skip (a), the real test split")
    ap.add_argument("--limit", type=int, help="only the first N scenes of each view")
    ap.add_argument("--misses", type=Path, help="write contact sheets of the missed and misnamed tiles here")
    args = ap.parse_args()
    if args.set is None and args.no_real:
        ap.error("--no-real without --set leaves nothing to measure")
    build = {}
    if args.set is not None:
        if not (args.set / "labels" / "val").is_dir():
            ap.error(f"--set {args.set}: no labels/val/ folder (a set written by datasets/views.py --split val)")
        build = json.loads((args.set / "build.json").read_text()) if (args.set / "build.json").exists() else {}
    detector = Detector(args.model, classifier=None if args.classifier == "none" else args.classifier,
                        back_check=None if args.back_check == "none" else args.back_check)
    title = args.model.name + "".join(f" + {what} {part.model_path.name}" for what, part in
                                      (("crop classifier", detector.classifier), ("back check", detector.back_check))
                                      if part is not None)
    print(f"# Views benchmark — {title}\n\nset: {args.set or 'none (the real test split only)'}")
    if build.get("command"):
        print(f"made with: `{build['command']}`\nstyles: {', '.join(build.get('styles', []))}")

    pipeline = Cached(lambda p: detector(p))  # as the CLI and the service run it (confidence 0.25)
    ranked = ours_predictor(detector)  # every box down to confidence 0.001, for the mAP
    if args.set is not None:
        rendered(args.set, build, pipeline, ranked, args.limit, args.misses)
    if not args.no_real:
        real = sorted((REAL / "images" / "test").glob("*.jpg"))
        r = evaluate(ranked, real, REAL / "labels" / "test", REAL_REMAP, "real test")
        rc = evaluate(pipeline, real, REAL / "labels" / "test", REAL_REMAP, "real test, pipeline")
        a, pr, k = rc.tile_accuracy()
        regions = read_unlabelled(UNLABELLED)
        u = evaluate(ranked, real, REAL / "labels" / "test", REAL_REMAP, "real test", unlabelled=regions)
        uc = evaluate(pipeline, real, REAL / "labels" / "test", REAL_REMAP, "real test, pipeline", unlabelled=regions)
        print(f"\n## (a) Real photos, test split ({len(real)} images)\n\nmAP50 over 27 classes {r.map50(SUITED):.4f}; "
              f"tile accuracy {a:.3f} ({k} tiles), precision {pr:.3f}\n\nthe same with the tiles the labels leave out "
              f"not scored ({UNLABELLED.name}, {len(regions)} photos): mAP50 {u.map50(SUITED):.4f}; precision "
              f"{uc.tile_accuracy()[1]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
