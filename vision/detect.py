"""Image → :class:`Detections` with the shipped ONNX model (onnxruntime + OpenCV; no torch).

``detect(image)`` is the stage's entry point. A :class:`Detector` holds one onnxruntime session; sessions are
thread-safe, so a process loads the model once (``get_detector``) and serves every thread with it. By default it
also takes a second, closer look at each tile with the crop classifier (``vision/classify.py``) when that model is
shipped: the detector finds the boxes, both networks name the tile. Then the back check (``vision/back_check.py``)
looks at each box named ``back``: a face-down tile, or a chip or card in a back's colour?
"""

from __future__ import annotations

import json
import math
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.back_check import DEFAULT_BACK_CHECK, BackCheck
from vision.classes import BACK, CLASS_NAMES
from vision.classify import DEFAULT_CLASSIFIER, Classifier
from vision.deadline import Deadline, check
from vision.detections import Detections, box_intersection, box_iou
from vision.images import ImageError, load_image, load_image_reduced
from vision.sessions import open_session
from vision.tiling import DECIDE_CONF, Window, inner_cut, plan_windows, texture_map, windows_over
from vision.upright import load_probe

__all__ = ["Detector", "ImageError", "detect", "get_detector", "letterbox", "load_image"]

ROOT = Path(__file__).resolve().parents[1]
# The int8 version of zhuoji-tiles.onnx (vision/training/quantize.py): about half the time, the same accuracy.
DEFAULT_MODEL = ROOT / "models" / "zhuoji-tiles-int8.onnx"
# Two boxes of one name overlapping by IoU ≥ SAME_NAME_IOU are one tile; two boxes of different names only from
# ANY_NAME_IOU: neighbours in a row seen at a slant overlap by 0.5–0.7 (their whole-tile boxes) and usually differ.
SAME_NAME_IOU = 0.6
ANY_NAME_IOU = 0.7
MIN_DECODE_SIDE = 1600  # see Detector.min_side
# A window over small tiles is scaled to the network's input bilinearly from this scale up (area-averaged below it,
# as the whole photo always is): a window is scaled by 0.7-1 (a catalogue's by about 0.84), where bilinear keeps
# the small tiles sharper and takes 0.7 ms instead of 4-5 (catalogue tile accuracy 0.923 -> 0.933, mAP50 0.9849 ->
# 0.9861). The whole photo stays area-averaged: bilinear there lost tiles of the black held-out style (found 0.594
# -> 0.556, benchmarks/bench_calibration.py --style black; docs/experiments/speed-catalogue.md).
WINDOW_LINEAR_FROM = 0.5
# turned="auto" looks again at the photo turned 180° when a box is named less surely than this, or is less surely
# a tile: the second look is for doubtful tiles, and most photos have none.
DOUBT_NAME_BELOW = 0.8
DOUBT_CONF_BELOW = 0.4
# Candidates reach the crop classifier from this detector score (or the caller's ``conf`` if lower); one under
# ``conf`` is returned only when the second look lifts it to ``conf``. A tile in a face style the detector never
# saw spreads its scores over look-alike names (best 0.15-0.25) though it is surely a tile; the second look names it.
CANDIDATE_CONF = 0.10
# A candidate the second look leaves between ROW_CONF and ``conf`` is kept (at ``conf``) when it lies beside a sure
# tile of about its size, in line with it, and covers no sure tile: tiles lie in rows, so a box of a tile's size at
# a tile's place in a row is a tile, whatever the networks could make of its face (a style never seen, a face seen
# edge-on, a teal back the back check doubts). Chosen on held-out-style scenes of another seed than the benchmark's
# (docs/experiments/views-run43.md).
ROW_CONF = 0.10
ROW_SIZE = 1.6  # the neighbour's width and height each within this factor of the box's (nearer tiles look larger)
ROW_GAP = 0.5  # at most this share of the smaller tile's side between the two boxes
ROW_ALIGN = 0.5  # side by side: they overlap across the row by at least this share of the smaller one
ROW_COVER = 0.3  # a box covering this share of a sure tile (or covered by one this much) is not a tile of its own


@dataclass(frozen=True)
class Letterbox:
    scale: float
    pad_x: int
    pad_y: int


def letterbox(img: np.ndarray, size: int, upscale: bool = True,
              linear_from: float = 1.0) -> tuple[np.ndarray, Letterbox]:
    """Resize keeping the aspect ratio and pad to size×size (grey 114, as in training). ``upscale=False``: an
    image smaller than size×size is padded at its own scale, not enlarged (a window of a tiled photo).
    ``linear_from``: scaled by less than this, the image is averaged over each output pixel's area (no aliasing);
    from it, interpolated bilinearly (sharper, and a fraction of the time)."""
    h, w = img.shape[:2]
    scale = min(size / w, size / h)
    if not upscale:
        scale = min(scale, 1.0)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    resized = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_AREA if scale < linear_from else cv2.INTER_LINEAR)
    pad_x, pad_y = (size - nw) // 2, (size - nh) // 2
    canvas = np.full((size, size, 3), 114, np.uint8)
    canvas[pad_y:pad_y + nh, pad_x:pad_x + nw] = resized
    return canvas, Letterbox(scale, pad_x, pad_y)


def to_input(canvas: np.ndarray) -> np.ndarray:
    """A letterboxed BGR canvas as the network's input: (1, 3, size, size) RGB in [0, 1]."""
    return cv2.dnn.blobFromImage(canvas, 1.0 / 255.0, swapRB=True)  # NCHW RGB in [0, 1], one pass


class Detector:
    """One onnxruntime session of the tile model (and one of the crop classifier and one of the back check, unless
    ``classifier`` or ``back_check`` is None: ``"default"`` is the shipped one when present); ``__call__`` is safe
    to use from many threads."""

    def __init__(self, model_path: str | os.PathLike = DEFAULT_MODEL, threads: int | None = None,
                 classifier: str | os.PathLike | None = "default",
                 back_check: str | os.PathLike | None = "default") -> None:
        if classifier == "default":
            classifier = DEFAULT_CLASSIFIER if DEFAULT_CLASSIFIER.is_file() else None
        if back_check == "default":
            back_check = DEFAULT_BACK_CHECK if DEFAULT_BACK_CHECK.is_file() else None
        self.classifier = Classifier(classifier, threads) if classifier is not None else None
        self.back_check = BackCheck(back_check, threads) if back_check is not None else None
        self.upright = load_probe(self.classifier)  # which way faces point (vision/upright.py), if it fits
        path = Path(model_path)
        self.session = open_session(path, threads, "model")
        self.input_name = self.session.get_inputs()[0].name
        self.size = int(self.session.get_inputs()[0].shape[2])
        meta = self.session.get_modelmeta().custom_metadata_map
        names = json.loads(meta["names"]) if meta.get("names", "").startswith("{\"") else None
        if names and [names[str(i)] for i in range(len(names))] != list(CLASS_NAMES):
            raise ValueError(f"{path}: its classes do not match this version's {len(CLASS_NAMES)} classes")
        self.model_path = path
        # Photos decoded from a file or bytes are decoded at reduced size down to this longer side: one pass sees
        # 640 px, and windows over small tiles keep them at least TARGET_TILE_PX (a 12 MP JPEG at 2000 px).
        self.min_side = MIN_DECODE_SIDE

    def raw(self, canvas: np.ndarray) -> np.ndarray:
        """Run the network on one letterboxed BGR canvas; returns (4 + classes, anchors)."""
        return self.session.run(None, {self.input_name: to_input(canvas)})[0][0]

    def __call__(self, image, conf: float = 0.25, iou: float = SAME_NAME_IOU, tiled: bool | None = None,
                 max_det: int = 300, turned: bool | str | tuple[int, ...] = False, closer: bool = True,
                 iou_any: float = ANY_NAME_IOU, deadline: Deadline | None = None,
                 candidate_conf: float = CANDIDATE_CONF, tile_px: int | None = None,
                 turn_all: bool = False, sharper: np.ndarray | None = None) -> Detections:
        """``iou``: two boxes of the same name that overlap by this much are one tile (the weaker is dropped);
        ``iou_any``: the same whatever their names (non-maximum suppression in two steps: all boxes before naming,
        then boxes of one name once the crop classifier has named them).
        ``tiled``: None looks again, closer, only where the first pass's tiles are too small for the network
        (``vision/tiling.py``); True at the whole photo in windows; False never.
        ``tile_px``: with ``tiled`` None, look again at every tile found (not only the small ones), in windows
        scaled so that they reach this many pixels (a table photo: small tiles seen at a slant, squashed).
        ``turn_all``: the crop classifier looks at every box's crop turned too, not only at doubtful ones.
        ``turned``: also look at the photo turned 180° and average each tile's class scores over both looks
        (test-time augmentation: twice the time, fewer misread tiles; see ``benchmarks/bench_detector.py``);
        ``"auto"``: only when the first look leaves a tile doubtful (:func:`doubtful`); a tuple of quarter turns
        (``np.rot90``'s ``k``, anticlockwise), e.g. ``(1, 3)``: those looks too (a table photo's side seats).
        ``conf``: a box is returned when the detector's best score or its confidence after the second look
        reaches it. The detector's candidates start lower (``candidate_conf``, or ``conf`` if lower), so that the
        second look can raise a tile the detector found but could not name.
        ``closer``: combine the class scores with the crop classifier's (when this detector has one), and check
        each box named ``back`` with the back check (when it has one); a box the check sinks below ``conf`` is
        dropped: something flat in a back's colour, not a face-down tile.
        A path or encoded photo far larger than needed is decoded at reduced size (``min_side``); the boxes are
        always in the photo's own pixels. ``sharper``: with a decoded ``image``, the same photo at a higher
        resolution (a large JPEG decoded at full size), from which the crop classifier cuts the crops of small
        boxes (:func:`vision.classify.crop_tiles`).
        ``deadline``: checked before each model run (each look, each window, each second look); past it, or
        cancelled, :class:`~vision.deadline.WorkCancelled` is raised and no further model runs."""
        img, full = load_image_reduced(image, self.min_side)
        args = (conf, min(conf, candidate_conf), iou, tiled, max_det, closer, iou_any, deadline, tile_px, turn_all,
                sharper)
        dets = self._look(img, turned if isinstance(turned, tuple) else turned is True, *args)
        if turned == "auto" and doubtful(dets, conf).any():
            dets = self._look(img, True, *args)
        return dets.rescaled(full)

    def _look(self, img: np.ndarray, turned: bool | tuple[int, ...], conf: float, floor: float, iou: float,
              tiled: bool | None, max_det: int, closer: bool, iou_any: float, deadline: Deadline | None,
              tile_px: int | None, turn_all: bool, sharper: np.ndarray | None) -> Detections:
        h, w = img.shape[:2]
        check(deadline)
        boxes, scores, view = self._predict(img, 0, 0, floor)
        for quarters in ((2,) if turned is True else turned or ()):
            check(deadline)
            b, s, _ = self._predict(np.ascontiguousarray(np.rot90(img, quarters)), 0, 0, floor)
            boxes, scores = np.concatenate([boxes, unturn_boxes(b, quarters, (w, h))]), np.concatenate([scores, s])
        first = len(boxes)
        for win in self._windows(boxes, scores, view, (w, h), tiled, tile_px):
            check(deadline)
            b, s, _ = self._predict(img[win.y0:win.y1, win.x0:win.x1], win.x0, win.y0, floor, window=True)
            whole = ~inner_cut(b, win, (w, h))
            boxes, scores = np.concatenate([boxes, b[whole]]), np.concatenate([scores, s[whole]])
        if tile_px is not None and len(boxes) > first:
            boxes, scores = _window_boxes_first(boxes, scores, first, conf)
        dets = _postprocess(boxes, scores, floor, max(iou, iou_any), max_det, (w, h), vote=bool(turned),
                           vote_floor=conf)
        keep = dets.confidence >= conf  # the detector alone is sure enough of these: kept whatever their name
        if closer and self.classifier is not None:
            dets = self.classifier(img, dets, deadline=deadline, turn_all=turn_all, sharper=sharper)
        keep |= dets.confidence >= conf  # the second look found a tile the detector could not name
        if closer and self.back_check is not None:
            check(deadline)
            dets = self.back_check(img, dets)
            keep &= (dets.class_id != BACK) | (dets.confidence >= conf)  # sunk: not a face-down tile
        if closer:
            in_row = in_a_row(dets, conf, (w, h))
            if in_row.any():
                dets = dets[np.arange(len(dets))]  # a copy
                dets.confidence[in_row] = conf
                keep |= in_row
        if not keep.all():
            dets = dets[np.flatnonzero(keep)]
        return suppress_same_name(dets, iou)

    def _windows(self, boxes: np.ndarray, scores: np.ndarray, view: np.ndarray, image_size: tuple[int, int],
                 tiled: bool | None, tile_px: int | None = None) -> list[Window]:
        """The windows to look at again after the first pass: ``tiled`` None decides from the first pass's tiles
        (``vision/tiling.py``), True covers the whole photo, False none."""
        if tiled is False:
            return []
        w, h = image_size
        if tiled:
            side = min(2 * self.size, max(w, h))
            return windows_over(image_size, side, round(0.2 * side))
        if max(w, h) <= self.size:
            return []
        found = _postprocess(boxes.copy(), scores, DECIDE_CONF, ANY_NAME_IOU, 300, image_size)
        texture = texture_map(view) if len(found) == 0 else None
        if tile_px is None:
            return plan_windows(image_size, self.size, found.xyxy, texture)
        wins = plan_windows(image_size, self.size, found.xyxy, texture, min_tile_px=math.inf, target_tile_px=tile_px)
        if wins and len(found):
            wins += _far_edge(wins, found.xyxy, image_size)
        return wins

    def _predict(self, img: np.ndarray, x0: int, y0: int, conf: float,
                 window: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Candidate boxes (original pixels, offset by x0, y0) and class scores of the anchors whose best score
        reaches ``conf``: never above the caller's floor, or a benchmark asking for the whole precision–recall
        curve (conf 0.001) would lose its low-confidence tail. Also the image as the network saw it (unpadded).
        ``window``: a window of a tiled photo (padded, never enlarged; bilinear from ``WINDOW_LINEAR_FROM``)."""
        canvas, lb = (letterbox(img, self.size, upscale=False, linear_from=WINDOW_LINEAR_FROM) if window
                      else letterbox(img, self.size))
        out = self.raw(canvas)
        scores = out[4:].T  # (anchors, classes), already sigmoid
        keep = scores.max(1) >= conf
        cx, cy, bw, bh = out[:4, keep]
        boxes = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], 1)
        boxes[:, [0, 2]] = (boxes[:, [0, 2]] - lb.pad_x) / lb.scale + x0
        boxes[:, [1, 3]] = (boxes[:, [1, 3]] - lb.pad_y) / lb.scale + y0
        nh, nw = round(img.shape[0] * lb.scale), round(img.shape[1] * lb.scale)
        return boxes, scores[keep], canvas[lb.pad_y:lb.pad_y + nh, lb.pad_x:lb.pad_x + nw]


WINDOW_OVER_FIRST = 0.4  # a first-pass candidate overlapping a sure window box by this IoU yields to it


def _window_boxes_first(boxes: np.ndarray, scores: np.ndarray, first: int, conf: float
                        ) -> tuple[np.ndarray, np.ndarray]:
    """The candidates without those of the first passes (``[:first]``: the whole photo, turned or not) that a
    window found surely too: at a table photo's scale the first passes see tiles of 15-25 px and box them loosely,
    and a loose box beside the window's tight one on the same tile survives NMS as a second tile."""
    sure = np.flatnonzero(scores[first:].max(1) >= conf) + first
    if len(sure) == 0:
        return boxes, scores
    xywh = np.concatenate([boxes[sure, :2], boxes[sure, 2:] - boxes[sure, :2]], 1)
    kept = np.asarray(cv2.dnn.NMSBoxes(xywh.tolist(), scores[sure].max(1).tolist(), conf, 0.5),
                      dtype=np.int64).reshape(-1)
    tight = boxes[sure[kept]]
    loose = box_iou(boxes[:first], tight).max(1) >= WINDOW_OVER_FIRST
    keep = np.concatenate([~loose, np.ones(len(boxes) - first, bool)])
    return boxes[keep], scores[keep]


def _far_edge(wins: list[Window], boxes: np.ndarray, image_size: tuple[int, int]) -> list[Window]:
    """One more window per column of the planned ones, of their size, centred on the top edge of the tiles found:
    from a seat, the far hand's row, small, squashed and upside down, can be missed by the first pass entirely and
    then lies at the planned windows' top edge, where the detector finds it worst (or past it)."""
    w, h = image_size
    side_x, side_y = wins[0].x1 - wins[0].x0, wins[0].y1 - wins[0].y0
    y0 = int(max(0, min(h - side_y, float(boxes[:, 1].min()) - side_y / 2)))
    return [Window(x, y0, min(x + side_x, w), min(y0 + side_y, h)) for x in sorted({v.x0 for v in wins})]


def unturn_boxes(boxes: np.ndarray, quarters: int, image_size: tuple[int, int]) -> np.ndarray:
    """Boxes found in the photo turned by ``np.rot90(img, quarters)`` (anticlockwise quarter turns), in the
    photo's own pixels (``image_size``: its width and height)."""
    w, h = image_size
    x0, y0, x1, y1 = boxes.T
    if quarters % 4 == 1:
        return np.stack([w - y1, x0, w - y0, x1], 1)
    if quarters % 4 == 2:
        return np.stack([w - x1, h - y1, w - x0, h - y0], 1)
    if quarters % 4 == 3:
        return np.stack([y0, h - x1, y1, h - x0], 1)
    return boxes


def in_a_row(dets: Detections, conf: float, image_size: tuple[int, int], floor: float = ROW_CONF) -> np.ndarray:
    """Which boxes with confidence from ``floor`` to under ``conf`` lie in a row beside a sure tile (confidence ≥
    ``conf``): a left/right or upper/lower neighbour of about their size (``ROW_SIZE``), close (``ROW_GAP``) and in
    line (``ROW_ALIGN``), and no sure tile under them (``ROW_COVER``). A box touching the photo's edge is left out:
    there a tile may be cut."""
    sure = dets.confidence >= conf
    weak = np.flatnonzero((dets.confidence >= floor) & ~sure)
    found = np.zeros(len(dets), bool)
    if len(weak) == 0 or not sure.any():
        return found
    tiles, boxes = dets.xyxy[sure], dets.xyxy[weak]
    tw, th = (tiles[:, 2:] - tiles[:, :2]).T
    bw, bh = (boxes[:, 2:] - boxes[:, :2]).T
    w, h = image_size
    inside = (boxes[:, 0] > 2) & (boxes[:, 1] > 2) & (boxes[:, 2] < w - 2) & (boxes[:, 3] < h - 2)
    inter = box_intersection(boxes, tiles)
    covered = (inter / np.maximum(bw * bh, 1e-9)[:, None] >= ROW_COVER) | (inter / np.maximum(tw * th, 1e-9) >= ROW_COVER)
    log_w, log_h = np.log(np.maximum(bw, 1e-9))[:, None], np.log(np.maximum(bh, 1e-9))[:, None]
    alike = ((np.abs(log_w - np.log(np.maximum(tw, 1e-9))) < np.log(ROW_SIZE)) &
             (np.abs(log_h - np.log(np.maximum(th, 1e-9))) < np.log(ROW_SIZE)))
    gap_x = np.maximum(0, np.maximum(tiles[None, :, 0] - boxes[:, None, 2], boxes[:, None, 0] - tiles[None, :, 2]))
    gap_y = np.maximum(0, np.maximum(tiles[None, :, 1] - boxes[:, None, 3], boxes[:, None, 1] - tiles[None, :, 3]))
    over_x = np.minimum(tiles[None, :, 2], boxes[:, None, 2]) - np.maximum(tiles[None, :, 0], boxes[:, None, 0])
    over_y = np.minimum(tiles[None, :, 3], boxes[:, None, 3]) - np.maximum(tiles[None, :, 1], boxes[:, None, 1])
    small_w, small_h = np.minimum(bw[:, None], tw), np.minimum(bh[:, None], th)
    beside = (gap_x <= ROW_GAP * small_w) & (over_y >= ROW_ALIGN * small_h)
    above = (gap_y <= ROW_GAP * small_h) & (over_x >= ROW_ALIGN * small_w)
    found[weak] = inside & ~covered.any(1) & (alike & (beside | above)).any(1)
    return found


def doubtful(dets: Detections, conf: float = 0.25) -> np.ndarray:
    """Which boxes of a first look are worth a second, turned look: named with top-1 probability under
    ``DOUBT_NAME_BELOW``, or a tile with confidence under ``DOUBT_CONF_BELOW`` (from ``conf``: below it they are
    not reported at all)."""
    return (dets.confidence >= conf) & ((dets.top3_prob[:, 0] < DOUBT_NAME_BELOW) |
                                        (dets.confidence < DOUBT_CONF_BELOW))


def _drop_spanning(boxes: np.ndarray, keep: np.ndarray, covered: float = 0.7, part: float = 0.2) -> np.ndarray:
    """Drop each box that two or more more-confident, smaller boxes cover (≥ ``covered`` of its area together,
    each ≥ ``part``): the network sometimes adds a weak box across two neighbouring tiles. Its IoU with either is
    about 0.5 or less, so NMS keeps it, and it would count as one tile too many. ``boxes`` are in order of
    confidence, best first."""
    if len(boxes) < 3:
        return keep
    area = np.maximum(np.prod(boxes[:, 2:] - boxes[:, :2], 1), 1e-9)
    share = box_intersection(boxes, boxes) / area[:, None]  # [i, j]: share of box i that box j covers
    share *= np.tri(len(boxes), k=-1)  # only boxes more confident than i (j < i) count
    under = share >= part
    mean_under = (under * area[None, :]).sum(1) / np.maximum(under.sum(1), 1)
    # bigger than the tiles under it: a true tile next to overlapping neighbours (steep perspective) is not
    spanning = (under.sum(1) >= 2) & (share.sum(1) >= covered) & (area >= 1.5 * mean_under)
    return keep[~spanning]


def suppress_same_name(dets: Detections, iou: float) -> Detections:
    """Drop each box that overlaps a more confident box of the same name by IoU ≥ ``iou`` (greedy, strongest
    first): two boxes on one tile. Boxes keep their order."""
    if len(dets) < 2:
        return dets
    overlap = box_iou(dets.xyxy, dets.xyxy) >= iou
    overlap &= np.equal.outer(dets.class_id, dets.class_id)
    keep = np.ones(len(dets), bool)
    for i in np.argsort(-dets.confidence, kind="stable"):
        if keep[i]:
            drop = overlap[i] & keep
            drop[i] = False
            keep[drop] = False
    return dets if keep.all() else dets[np.flatnonzero(keep)]


def _postprocess(boxes: np.ndarray, scores: np.ndarray, conf: float, iou: float, max_det: int,
                 image_size: tuple[int, int], vote: bool = False, vote_iou: float = 0.7,
                 vote_floor: float = 0.0) -> Detections:
    """Threshold, class-agnostic NMS, clip, top-3. ``vote``: each kept box takes the mean class scores of all
    candidates overlapping it by IoU ≥ ``vote_iou`` whose best score reaches ``vote_floor`` (score voting:
    several looks at one tile agree)."""
    if len(boxes) == 0:
        return Detections.empty(image_size)
    best = scores.max(1)
    mask = best >= conf
    boxes, scores, best = boxes[mask], scores[mask], best[mask]
    if len(boxes) == 0:
        return Detections.empty(image_size)
    # One tile, one label: class-agnostic NMS (neighbouring tiles barely overlap).
    xywh = np.concatenate([boxes[:, :2], boxes[:, 2:] - boxes[:, :2]], 1)
    keep = np.asarray(cv2.dnn.NMSBoxes(xywh.tolist(), best.tolist(), conf, iou), dtype=np.int64).reshape(-1)
    keep = keep[np.argsort(-best[keep])]
    keep = _drop_spanning(boxes[keep], keep)[:max_det]
    if vote:
        near = (box_iou(boxes[keep], boxes) >= vote_iou) & (best >= vote_floor)  # weak candidates do not dilute
        near[np.arange(len(keep)), keep] = True  # each kept box votes for itself: never 0
        near = near.astype(np.float32)
        scores = near @ scores / near.sum(1, keepdims=True)
        boxes, best = boxes[keep], scores.max(1)
    else:
        boxes, scores, best = boxes[keep], scores[keep], best[keep]
    w, h = image_size
    boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, w)
    boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, h)
    top3 = np.argsort(-scores, 1)[:, :3]
    probs = scores / np.maximum(scores.sum(1, keepdims=True), 1e-9)
    return Detections(boxes, best, top3[:, 0], top3, np.take_along_axis(probs, top3, 1), image_size, probs)


_detectors: dict[tuple[str, str | None, str | None], Detector] = {}
_lock = threading.Lock()


def get_detector(model_path: str | os.PathLike | None = None, classifier: str | None = "default",
                 back_check: str | None = "default") -> Detector:
    """The process-wide :class:`Detector` for a model path and its crop classifier and back check (each a path,
    None to go without, ``"default"`` for the shipped one), loaded once. The choices come from
    ``pipeline.settings.Settings`` at the edge."""
    path = str(model_path or DEFAULT_MODEL)
    with _lock:
        if (path, classifier, back_check) not in _detectors:
            _detectors[path, classifier, back_check] = Detector(path, classifier=classifier, back_check=back_check)
        return _detectors[path, classifier, back_check]


def detect(image, conf: float = 0.25, iou: float = SAME_NAME_IOU, tiled: bool | None = None,
           model_path: str | os.PathLike | None = None, turned: bool = False) -> Detections:
    """Detect tiles in an image (path, encoded bytes or BGR array). Boxes are in original-image pixels."""
    return get_detector(model_path)(image, conf=conf, iou=iou, tiled=tiled, turned=turned)
