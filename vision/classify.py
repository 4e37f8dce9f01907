"""Detections → Detections with each tile looked at again, closer: a second, small network that classifies one tile
crop at a time (onnxruntime + OpenCV; no torch).

The detector names a tile from a 640×640 view of the whole photo; most of its remaining mistakes are near-identical
glyphs (5m/7m/9m, 1s/7s, 2m/3m). The crop classifier sees each box on its own at the detector's resolution or
better, and was trained apart from the detector, so the two err on different tiles: their class scores are combined
(a weighted geometric mean) and the combined top 3 go on to the reading step.

A :class:`Classifier` called on (image, detections) is the stage's entry point; the :class:`~vision.detect.Detector`
holds one and calls it after its own look unless told not to. ``crop_tiles`` is the one way both training
(``datasets/crops.py``) and inference cut a box out of a photo.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import cv2
import numpy as np

from vision.classes import CLASS_NAMES, NUM_CLASSES
from vision.deadline import Deadline, check
from vision.detections import TURNS, Detections
from vision.images import load_image
from vision.sessions import open_session, run_crops_all

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CLASSIFIER = ROOT / "models" / "zhuoji-crops-int8.onnx"  # the int8 version of zhuoji-crops.onnx (quantize.py)
CROP_SIZE = 64
CROP_MARGIN = 0.08  # share of a box's width/height added on each side: the tile's edge is part of its look
MIN_CONFIDENCE = 0.1  # boxes below this are hardly tiles: not worth a second look (mAP scoring keeps ~300)
DETECTOR_WEIGHT = 0.3  # exponent of the detector's scores in the combined score; the classifier's is 1 - this
# A box whose combined name is less probable than this gets three more looks, its crop turned by 90°, 180° and 270°
# (the classifier was trained on every turn): synthetic mAP50 +0.003 to +0.004 for a few boxes a photo. 180° alone
# kept the real figures (real test mAP50 0.9910, real hands 24/25) but named fewer tiles of an unseen set (tinted
# tiles without calibration 0.964 → 0.953, benchmarks/bench_calibration.py; docs/experiments/speed-crops-once.md).
TURN_BELOW = 0.9
TURN_LOOKS = (1, 2, 3)  # the quarter turns of those looks
# ... but only when the classifier's own first look is less sure than this of its best name: a crop it already names
# surely gains nothing from being turned (its label-smoothed top-1 tops out near 0.93), however much the detector
# disagrees: their turned looks changed no name of 541 such boxes on the catalogue photos (of 580 doubtful ones)
# nor of 159 on the real test photos (of 276) (docs/experiments/speed-catalogue.md).
CROP_SURE = 0.85
# A box still in doubt after those looks and much wider than tall (height under this share of its width: more than
# a turned tile's 4:3) is most likely an upright face seen at a grazing angle, squashed into a strip; one more look
# with its crop stretched back to an upright tile's shape (UPRIGHT_ASPECT, width / height) is kept when it makes
# the name surer. Development set close-ups 0.969 → 0.973, the other views unchanged (views-run61.md).
STRIP_RATIO = 0.6
UPRIGHT_ASPECT = 0.75


def file_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def crop_tiles(img: np.ndarray, xyxy: np.ndarray, size: int = CROP_SIZE, margin: float = CROP_MARGIN,
               aspect: float | None = None, sharper: np.ndarray | None = None) -> np.ndarray:
    """(N, size, size, 3) uint8 BGR crops: each box grown by ``margin`` per side, scaled so that its longer side
    fills ``size`` (the aspect kept: an upright tile stays tall, a turned one wide), centred on grey 114 (also
    where the grown box leaves the photo). With ``aspect`` (width / height), every crop is instead stretched to
    that shape, its height filling ``size``. ``sharper``: the same photo at a higher resolution (a large JPEG
    decoded at full size): a box too small in ``img`` to fill its crop is cut from it instead."""
    out = np.full((len(xyxy), size, size, 3), 114, np.uint8)
    for i, (x0, y0, x1, y1) in enumerate(np.asarray(xyxy, np.float64).reshape(-1, 4)):
        w, h = x1 - x0, y1 - y0
        if w < 2 or h < 2:
            continue
        source = img
        if sharper is not None and max(w, h) * (1 + 2 * margin) < size:
            source = sharper
            k = sharper.shape[1] / img.shape[1]
            x0, y0, x1, y1, w, h = x0 * k, y0 * k, x1 * k, y1 * k, w * k, h * k
        h_img, w_img = source.shape[:2]
        x0, x1 = round(x0 - margin * w), round(x1 + margin * w)
        y0, y1 = round(y0 - margin * h), round(y1 + margin * h)
        region = np.full((y1 - y0, x1 - x0, 3), 114, np.uint8)
        cx0, cy0, cx1, cy1 = max(x0, 0), max(y0, 0), min(x1, w_img), min(y1, h_img)
        if cx1 <= cx0 or cy1 <= cy0:
            continue
        region[cy0 - y0:cy1 - y0, cx0 - x0:cx1 - x0] = source[cy0:cy1, cx0:cx1]
        s = size / max(x1 - x0, y1 - y0)
        nw, nh = max(1, min(size, round((x1 - x0) * s))), max(1, min(size, round((y1 - y0) * s)))
        if aspect is not None:
            nw, nh = max(1, min(size, round(size * aspect))), size
        resized = cv2.resize(region, (nw, nh), interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
        px, py = (size - nw) // 2, (size - nh) // 2
        out[i, py:py + nh, px:px + nw] = resized
    return out


def to_input(crops: np.ndarray) -> np.ndarray:
    """(N, size, size, 3) uint8 BGR crops as the network's input: (N, 3, size, size) RGB in [0, 1]."""
    return np.ascontiguousarray(crops[..., ::-1].transpose(0, 3, 1, 2), np.float32) / 255.0


class Classifier:
    """One onnxruntime session of the crop model; ``__call__`` is safe to use from many threads."""

    def __init__(self, model_path: str | os.PathLike = DEFAULT_CLASSIFIER, threads: int | None = None) -> None:
        path = Path(model_path)
        self.session = open_session(path, threads, "crop classifier")
        meta = self.session.get_modelmeta().custom_metadata_map
        names = json.loads(meta.get("names", "{}"))
        if [names.get(str(i)) for i in range(len(names))] != list(CLASS_NAMES):
            raise ValueError(f"{path}: its classes do not match this version's {NUM_CLASSES} classes")
        self.size = int(meta.get("crop_size", CROP_SIZE))
        self.margin = float(meta.get("crop_margin", CROP_MARGIN))
        self.model_path = path
        # which network, not which file name: a retrained classifier keeps its name (calibrations, upright probe)
        self.sha256 = file_sha256(path)
        # The penultimate layer (for calibration and facing), when the graph has that output: it comes with the
        # class probabilities from the same run.
        self.has_features = "features" in [o.name for o in self.session.get_outputs()]

    def looks(self, img: np.ndarray, xyxy: np.ndarray, turns: tuple[int, ...] = (0,),
              aspect: float | None = None, sharper: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray | None]:
        """(turns, N, classes) class probabilities and (turns, N, D) features (None when the graph has no
        ``features`` output) of the boxes' crops, one look at each quarter turn of each crop (counter-clockwise),
        all in one batch. ``aspect``, ``sharper``: as :func:`crop_tiles` takes them."""
        if len(xyxy) == 0:
            return np.zeros((len(turns), 0, NUM_CLASSES), np.float32), None
        crops = crop_tiles(img, xyxy, self.size, self.margin, aspect, sharper)
        batch = np.concatenate([np.rot90(crops, k, axes=(1, 2)) for k in turns])
        outputs = dict(zip((o.name for o in self.session.get_outputs()),
                           run_crops_all(self.session, to_input(batch)), strict=True))
        probs = next(iter(outputs.values())).reshape(len(turns), len(crops), -1)
        features = outputs.get("features")
        return probs, None if features is None else features.reshape(len(turns), len(crops), -1)

    def probs(self, img: np.ndarray, xyxy: np.ndarray, turns: tuple[int, ...] = (0,),
              aspect: float | None = None, sharper: np.ndarray | None = None) -> np.ndarray:
        """(N, classes) class probabilities of the boxes' crops; with several ``turns`` (quarter turns of each crop,
        counter-clockwise), their normalised geometric mean: one look at each turn, in one batch. ``aspect``,
        ``sharper``: as :func:`crop_tiles` takes them."""
        looks, _ = self.looks(img, xyxy, turns, aspect, sharper)
        return looks[0] if len(turns) == 1 else geometric_mean(looks)

    def turn_features(self, img: np.ndarray, dets: Detections, boxes: np.ndarray) -> np.ndarray:
        """(len(boxes), 4, D) features of the boxes' crops at every quarter turn: those :attr:`Detections.features`
        already holds, the missing turns looked at now (one batch). Needs a graph with a ``features`` output."""
        boxes = np.asarray(boxes, dtype=int)
        have = dets.features[boxes] if dets.features is not None else None
        if have is not None and np.isfinite(have).all():
            return have
        _, fresh = self.looks(img, dets.xyxy[boxes], tuple(range(TURNS)))
        assert fresh is not None, "turn_features needs a crop classifier with a features output"
        fresh = fresh.transpose(1, 0, 2)
        if have is None:
            return fresh
        known = np.isfinite(have).all(2, keepdims=True)  # a turn already looked at keeps its value (the same crop)
        return np.where(known, have, fresh)

    def __call__(self, image, dets: Detections, detector_weight: float = DETECTOR_WEIGHT,
                 min_confidence: float = MIN_CONFIDENCE, turn_below: float = TURN_BELOW,
                 strip_ratio: float = STRIP_RATIO, crop_sure: float = CROP_SURE,
                 deadline: Deadline | None = None, turn_all: bool = False,
                 sharper: np.ndarray | None = None) -> Detections:
        """The detections with class, top 3 and probabilities from the combined scores for every box that is a tile
        with :func:`tileness` ``min_confidence`` or more, whatever its name (weaker boxes, hardly tiles, keep the
        detector's). Boxes are unchanged. A looked-at box's confidence becomes its tileness times the combined
        probability of its name, so that a tile surely found but doubtfully named ranks below one sure on both
        counts, and a sure tile the detector could not name ranks by what the second look makes of it. A box whose
        combined name is still less probable than ``turn_below``, and whose crop the classifier itself names with
        less than ``crop_sure``, is looked at again, its crop turned (``TURN_LOOKS``: by 90°, 180° and 270°), and
        the classifier's part is the geometric mean of the looks (``turn_all``: every box, however sure). A box
        still in doubt whose height is under ``strip_ratio`` of its width (a face squashed into a strip) gets one look more,
        stretched to an upright tile's shape, and keeps it (with the first look) when its name comes out surer.
        ``sharper``: the photo at a higher resolution than ``image`` (:func:`crop_tiles`: small boxes are cropped
        from it). ``deadline`` is checked before each batch (:mod:`vision.deadline`)."""
        tile = tileness(dets)
        sure = np.flatnonzero(tile >= min_confidence)  # a sure tile of a doubtful name is just what to look at
        if len(sure) == 0:
            return dets
        img = load_image(image)
        check(deadline)
        probs, feats = self.looks(img, dets.xyxy[sure], sharper=sharper)
        first = probs[0]
        features = None
        if feats is not None:  # every turn not looked at stays NaN (Detections.features)
            features = np.full((len(dets), TURNS, feats.shape[2]), np.nan, np.float32)
            features[sure, 0] = feats[0]
        crop_probs = first.copy()
        looked = combine(dets[sure], crop_probs, detector_weight)
        in_doubt = looked.top3_prob[:, 0] < turn_below
        doubt = np.arange(len(sure)) if turn_all else np.flatnonzero(in_doubt & (first.max(1) < crop_sure))
        if len(doubt):
            check(deadline)
            probs, feats = self.looks(img, dets.xyxy[sure[doubt]], turns=TURN_LOOKS, sharper=sharper)
            turned = geometric_mean(probs)
            if features is not None and feats is not None:
                features[np.ix_(sure[doubt], TURN_LOOKS)] = feats.transpose(1, 0, 2)
            crop_probs[doubt] = geometric_mean(np.stack([first[doubt], turned]), np.array([1.0, len(TURN_LOOKS)]))
            looked = combine(dets[sure], crop_probs, detector_weight)
        if in_doubt.any():
            w, h = (dets.xyxy[sure, 2] - dets.xyxy[sure, 0]), (dets.xyxy[sure, 3] - dets.xyxy[sure, 1])
            strips = np.flatnonzero((looked.top3_prob[:, 0] < turn_below) & (h < strip_ratio * w))
            if len(strips):
                check(deadline)
                stretched = self.probs(img, dets.xyxy[sure[strips]], aspect=UPRIGHT_ASPECT, sharper=sharper)
                tried = geometric_mean(np.stack([first[strips], stretched]))
                surer = combine(dets[sure[strips]], tried, detector_weight).top3_prob[:, 0] > looked.top3_prob[strips, 0]
                if surer.any():
                    crop_probs[strips[surer]] = tried[surer]
                    looked = combine(dets[sure], crop_probs, detector_weight)
        out = dets[np.arange(len(dets))]  # a copy
        out.class_id[sure], out.top3_class[sure], out.top3_prob[sure] = (looked.class_id, looked.top3_class,
                                                                         looked.top3_prob)
        out.confidence[sure] = tile[sure] * looked.top3_prob[:, 0]
        if out.probs is not None:
            out.probs[sure] = looked.probs
        out.features = features
        return out


def geometric_mean(looks: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """(N, classes) normalised weighted geometric mean of (looks, N, classes) probabilities: a class must be
    probable in every look to stay probable."""
    w = np.ones(len(looks)) if weights is None else np.asarray(weights, np.float64)
    log = np.log(np.clip(np.asarray(looks, np.float64), 1e-6, 1.0))
    mean = np.exp(np.tensordot(w / w.sum(), log, axes=1))
    return (mean / mean.sum(1, keepdims=True)).astype(np.float32)


def tileness(dets: Detections) -> np.ndarray:
    """How surely each box is a tile, whatever its name: the sum of the detector's three best class scores, at most
    1 (from a box's confidence, its best score, and its top 3, each score's share of all its scores). Not the best
    score alone: a tile the detector cannot name for sure (2m or 3m?) splits its score between the names, and the
    best score would rank it as if it were hardly a tile, whatever the second look makes of it. Three, as the
    reading stage weighs three names. Measured as the box's part of its confidence (synthetic mAP50, best score →
    tileness): 0.9345 → 0.9377 on the validation scenes and 0.9306 → 0.9332 on 300 scenes of seed 11 with crop
    classifier run 3; 0.9364 → 0.9380 and 0.9345 → 0.9370 with run 4 (models/README.md)."""
    share = np.clip(dets.top3_prob, 0, None)
    return np.minimum(dets.confidence * share.sum(1) / np.maximum(share[:, 0], 1e-9), 1.0)


def combine(dets: Detections, crop_probs: np.ndarray, detector_weight: float = DETECTOR_WEIGHT,
            floor: float = 1e-3) -> Detections:
    """Weighted geometric mean of the detector's and the classifier's class probabilities, renormalised. Every
    detector probability counts, at least ``floor`` (so that no class is ruled out by the detector alone; the
    classifier can still name a tile the detector ranked low, but only when it is sure). Detections that carry
    only their top 3 (hand-made ones) give ``floor`` to every other class."""
    n = len(dets)
    if dets.probs is not None:
        det = np.maximum(dets.probs.astype(np.float64), floor)
    else:
        det = np.full((n, NUM_CLASSES), floor, np.float64)
        valid = dets.top3_class >= 0
        rows = np.repeat(np.arange(n)[:, None], 3, 1)
        det[rows[valid], dets.top3_class[valid]] = np.maximum(dets.top3_prob[valid], floor)
    det /= det.sum(1, keepdims=True)
    crop = np.clip(np.asarray(crop_probs, np.float64), 1e-6, 1.0)
    score = np.exp(detector_weight * np.log(det) + (1 - detector_weight) * np.log(crop))
    score /= score.sum(1, keepdims=True)
    top3 = np.argsort(-score, 1)[:, :3]
    return Detections(dets.xyxy, dets.confidence, top3[:, 0], top3, np.take_along_axis(score, top3, 1),
                      dets.image_size, score)
