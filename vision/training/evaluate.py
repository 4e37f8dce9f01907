"""Detector evaluation on labelled images: per-class AP at IoU 0.5 and the confusion between tile classes.

Plain numpy so that any predictor (ours, a baseline) is scored by the same code: a predictor maps an image path to
``(boxes xyxy, scores, class ids)`` in original-image pixels, in our class order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.classes import CLASS_NAMES, NUM_CLASSES
from vision.detections import Detections, box_iou
from vision.labels import read_yolo_labels

Prediction = tuple[np.ndarray, np.ndarray, np.ndarray]
SUITED = list(range(27))


def read_difficult(path: Path, count: int) -> np.ndarray:
    """Which of an image's ``count`` labels are difficult, from a file of one word per label (``-`` for a label
    that is not, its reasons otherwise, as the synthetic builder writes them); no file: none is."""
    if not path.exists():
        return np.zeros(count, bool)
    words = path.read_text().split()
    if len(words) != count:
        raise ValueError(f"{path}: {len(words)} difficulty words for {count} labels")
    return np.array([w != "-" for w in words], bool)


@dataclass
class EvalResult:
    ap50: np.ndarray  # (NUM_CLASSES,), NaN where a class has no ground truth
    gt_count: np.ndarray  # (NUM_CLASSES,)
    confusion: np.ndarray  # (NUM_CLASSES + 1, NUM_CLASSES + 1): rows truth, cols predicted; last = none
    images: int

    def map50(self, classes: Iterable[int] = SUITED) -> float:
        vals = [self.ap50[c] for c in classes if not np.isnan(self.ap50[c])]
        return float(np.mean(vals)) if vals else float("nan")

    def tile_accuracy(self) -> tuple[float, float, int]:
        """(tile accuracy, precision, labelled tiles) of the confident boxes: labels read right over labels (found
        or not), and over boxes (those on nothing included)."""
        c = self.confusion
        right = int(np.trace(c[:NUM_CLASSES, :NUM_CLASSES]))
        labels = int(c[:NUM_CLASSES].sum())
        boxes = int(c[:, :NUM_CLASSES].sum())
        return right / max(labels, 1), right / max(boxes, 1), labels

    def confused(self, pairs: Iterable[tuple[str, str]]) -> dict[str, int]:
        """How often truth A was read as B (and B as A) among boxes found at IoU ≥ 0.5."""
        idx = {n: i for i, n in enumerate(CLASS_NAMES)}
        return {f"{a}→{b}": int(self.confusion[idx[a], idx[b]]) for a, b in pairs}


def _ap(scores: np.ndarray, hits: np.ndarray, n_gt: int) -> float:
    """COCO-style AP: mean interpolated precision at 101 recall points."""
    if n_gt == 0:
        return float("nan")
    if len(scores) == 0:
        return 0.0
    order = np.argsort(-scores, kind="stable")
    tp = np.cumsum(hits[order])
    fp = np.cumsum(~hits[order])
    recall = tp / n_gt
    precision = tp / np.maximum(tp + fp, 1e-9)
    envelope = np.flip(np.maximum.accumulate(np.flip(precision)))
    idx = np.searchsorted(recall, np.linspace(0, 1, 101), side="left")
    return float(np.where(idx < len(recall), envelope[np.minimum(idx, len(recall) - 1)], 0.0).mean())


def evaluate(predict: Callable[[Path], Prediction], images: list[Path], label_dir: Path,
             remap: dict[int, int] | None = None, desc: str = "evaluating",
             difficult_dir: Path | None = None, unlabelled: dict[str, np.ndarray] | None = None) -> EvalResult:
    """Score ``predict`` on images whose YOLO labels lie in ``label_dir`` (same stem, .txt). With
    ``difficult_dir`` (:func:`read_difficult` files, same stem), difficult labels are left out as PASCAL VOC
    leaves out its difficult objects: they are not counted as tiles to find, and a box on one (IoU ≥ 0.5, when it
    matches no other label) is neither right nor wrong. ``unlabelled`` (image stem → regions, normalised xyxy;
    :func:`read_unlabelled`) marks where a photo shows tiles its labels leave out, as KITTI's "DontCare" regions:
    a box that matches no label, centred in such a region and on no label, is neither right nor wrong."""
    per_class: list[list[tuple[float, bool]]] = [[] for _ in range(NUM_CLASSES)]
    gt_count = np.zeros(NUM_CLASSES, np.int64)
    confusion = np.zeros((NUM_CLASSES + 1, NUM_CLASSES + 1), np.int64)
    for path in tqdm(images, desc=desc, unit="img", disable=len(images) < 2):
        h, w = cv2.imread(str(path)).shape[:2]
        gt_boxes, gt_cls = read_yolo_labels(label_dir / f"{path.stem}.txt", w, h, remap)
        hard = (read_difficult(difficult_dir / f"{path.stem}.txt", len(gt_cls)) if difficult_dir
                else np.zeros(len(gt_cls), bool))
        np.add.at(gt_count, gt_cls[~hard], 1)
        boxes, scores, cls = predict(path)
        dont_care = _in_unlabelled(boxes, gt_boxes, (unlabelled or {}).get(path.stem), w, h)
        # Per-class matching for AP (greedy by score, each truth matched once).
        for c in np.unique(np.concatenate([cls, gt_cls])):
            p = np.where(cls == c)[0]
            g = np.where(gt_cls == c)[0]
            p = p[np.argsort(-scores[p])]
            ious = box_iou(boxes[p], gt_boxes[g])
            used, g_hard = np.zeros(len(g), bool), hard[g]
            for k, i in enumerate(p):
                hit = False
                if len(g):
                    row = np.where(used | g_hard, -1, ious[k])
                    j = int(np.argmax(row))
                    if row[j] >= 0.5:
                        used[j] = hit = True
                    elif g_hard.any() and ious[k, g_hard].max() >= 0.5:
                        continue  # on a difficult tile
                if not hit and dont_care[i]:
                    continue  # on a tile the labels leave out
                per_class[c].append((float(scores[i]), hit))
        # Class-agnostic matching for the confusion matrix (confident boxes only).
        confident = scores >= 0.25
        ious = box_iou(gt_boxes, boxes[confident])
        pred_cls = cls[confident]
        taken = np.zeros(len(pred_cls), bool)
        for t in np.argsort(-ious.max(1) if ious.size else np.zeros(len(gt_cls))):
            if hard[t]:
                continue
            row = np.where(taken, -1, ious[t]) if ious.size else np.array([])
            if row.size and row.max() >= 0.5:
                j = int(row.argmax())
                taken[j] = True
                confusion[gt_cls[t], pred_cls[j]] += 1
            else:
                confusion[gt_cls[t], NUM_CLASSES] += 1
        on_hard = (ious[hard].max(0) >= 0.5) if hard.any() and ious.size else np.zeros(len(pred_cls), bool)
        for j in np.where(~taken & ~on_hard & ~dont_care[confident])[0]:
            confusion[NUM_CLASSES, pred_cls[j]] += 1
    ap = np.array([_ap(np.array([s for s, _ in per_class[c]]), np.array([h for _, h in per_class[c]], bool),
                       int(gt_count[c])) for c in range(NUM_CLASSES)])
    return EvalResult(ap, gt_count, confusion, len(images))


def read_unlabelled(path: Path) -> dict[str, np.ndarray]:
    """Regions of photos that show tiles their labels leave out: a JSON object, image stem → list of normalised
    ``[x1, y1, x2, y2]``."""
    return {stem: np.asarray(regions, np.float64).reshape(-1, 4) for stem, regions in json.loads(path.read_text()).items()}


def _in_unlabelled(boxes: np.ndarray, gt_boxes: np.ndarray, regions: np.ndarray | None, w: int, h: int) -> np.ndarray:
    """Which boxes are centred in an unlabelled region and on no label (a second box on a labelled tile stays an
    error, wherever it lies)."""
    if regions is None or not len(boxes):
        return np.zeros(len(boxes), bool)
    cx, cy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    r = regions * [w, h, w, h]

    def inside(b: np.ndarray) -> np.ndarray:
        return ((cx[:, None] >= b[:, 0]) & (cx[:, None] <= b[:, 2]) & (cy[:, None] >= b[:, 1])
                & (cy[:, None] <= b[:, 3])).any(1)

    on_label = inside(gt_boxes) if len(gt_boxes) else np.zeros(len(boxes), bool)
    return inside(r) & ~on_label


def finding_ap50(predict: Callable[[Path], Prediction], images: list[Path], label_dir: Path,
                 remap: dict[int, int] | None = None, classes: Iterable[int] = SUITED,
                 difficult_dir: Path | None = None) -> float:
    """AP50 of finding the tiles of ``classes`` whatever their names: every one of them, labelled or predicted,
    counts as one class. What the detector's boxes alone allow, the naming aside."""
    classes = set(classes)
    one = min(classes)
    merged = {c: one for c in classes} | {k: (one if v in classes else v) for k, v in (remap or {}).items()}

    def boxes_only(path: Path) -> Prediction:
        boxes, scores, cls = predict(path)
        return boxes, scores, np.where(np.isin(cls, list(classes)), one, cls)

    return float(evaluate(boxes_only, images, label_dir, merged, "finding", difficult_dir).ap50[one])


def named_by_labels(predict: Callable[[Path], Prediction], label_dir: Path,
                    remap: dict[int, int] | None = None) -> Callable[[Path], Prediction]:
    """``predict`` with each box that overlaps a label by IoU ≥ 0.5 renamed as that label (the best overlap): its
    mAP is the ceiling that better naming alone can reach with these boxes and confidences."""

    def renamed(path: Path) -> Prediction:
        boxes, scores, cls = predict(path)
        h, w = cv2.imread(str(path)).shape[:2]
        gt_boxes, gt_cls = read_yolo_labels(label_dir / f"{path.stem}.txt", w, h, remap)
        cls = np.array(cls, copy=True)
        if len(boxes) and len(gt_boxes):
            iou = box_iou(boxes, gt_boxes)
            hit = iou.max(1) >= 0.5
            cls[hit] = gt_cls[iou.argmax(1)[hit]]
        return boxes, scores, cls

    return renamed


def with_alternatives(dets: Detections, names: int = 3) -> Prediction:
    """A box once per name of its top ``names``, the k-th with confidence × p_k / p_1 (the best name keeps the box's
    confidence): how ultralytics' own validation scores a detector (several labels per box, each with its own
    score), and what the reading stage sees (the top 3 of every tile). A box whose best name is wrong then still
    counts for the right one, ranked by how probable that name is."""
    xs, scores, classes = [], [], []
    best = np.maximum(dets.top3_prob[:, 0], 1e-9)
    for k in range(min(names, 3)):
        ok = (dets.top3_class[:, k] >= 0) & ((dets.top3_prob[:, k] > 0) | (k == 0))
        xs.append(dets.xyxy[ok])
        scores.append((dets.confidence * dets.top3_prob[:, k] / best)[ok] if k else dets.confidence[ok])
        classes.append(dets.top3_class[ok, k])
    return np.concatenate(xs), np.concatenate(scores), np.concatenate(classes)


LOOKALIKES = [("1s", "2s"), ("7s", "8s"), ("4p", "5p"), ("5p", "6p"), ("4p", "6p"), ("1m", "2m"), ("2m", "3m"),
              ("1m", "3m"), ("6s", "9s"), ("1s", "other")]
