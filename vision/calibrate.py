"""Teach it your set: references of one table's own tiles, and naming tiles with them.

A table photographs its 27 suited tiles once, laid out in three rows (1–9m, 1–9p, 1–9s). ``find_grid`` orders the
detected boxes by row and by place in the row, so each box's true name is known from where it lies, whatever the
networks thought; ``build_calibration`` keeps, per tile, the crop classifier's view of it (the penultimate
``features`` when the ONNX graph has that output, else its class probabilities), one per quarter turn of the crop,
so that a tile lying sideways or upside down meets a reference turned the same way. The result is a small JSON file.

``apply_calibration`` then names tiles at that table: each box's crop is compared with the 27 references (cosine
similarity, the best of the four turns) and the similarities become a distribution over the suited tiles,
``q_c = softmax(s_c / T)``; it is combined with the pipeline's probabilities ``p`` (detector × crop classifier) by a
weighted geometric mean over the suited tiles, their total share kept::

    p'_c ∝ p_c^(1-α) · (S · q_c)^α     for the 27 suited tiles, S = Σ_suited p_c (``back`` / ``other`` keep p_c)

with ``α = CALIBRATION_WEIGHT`` and ``T = TEMPERATURE``. A set the classifier has never seen (other glyphs, colours,
proportions) is then named by what its own tiles look like, while the classifier still breaks near-ties.

Rows may come in any suit order and the photo may be upside down: of the twelve readings (six suit orders, two
directions) the one the networks agree with most is taken (suits are told apart even on unfamiliar sets).
Runtime: numpy and onnxruntime only.
"""

from __future__ import annotations

import base64
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vision.classes import CLASS_NAMES
from vision.classify import Classifier, tileness
from vision.detections import Detections, box_intersection, box_iou
from vision.files import FileReadError, read_file

VERSION = 1
MAX_FILE_BYTES = 1_000_000  # a calibration file is about 74 kB
SUITED = 27
TURNS = (0, 1, 2, 3)  # quarter turns of each reference crop, counter-clockwise
# α and T: chosen on black-style photos of other seeds than the benchmark's (benchmarks/bench_calibration.py); on
# the tuning crops accuracy rose with α up to 0.7–0.85 and as T fell to 0.01 (α 0.6, T 0.05: 0.779;
# α 0.7, T 0.01: 0.875).
CALIBRATION_WEIGHT = 0.7  # α: the references' weight against the pipeline's probabilities
TEMPERATURE = 0.01  # T: cosine similarities 0.01 apart change the odds e-fold
MIN_TILENESS = 0.15  # boxes of a calibration photo less surely tiles than this are left out


class CalibrationError(ValueError):
    """A calibration photo or file that cannot be used; the message says what was found."""


@dataclass
class Calibration:
    """References of one set: ``references`` (27, turns, D) unit vectors in tile order (1m … 9s), made with the
    classifier file ``model`` from its output ``kind`` ("features" or "probs"); ``agreement`` is the share of the
    27 tiles the networks named as their place says (low on a set unlike the training data: why it is needed).
    ``model_sha256`` names the network itself: a retrained classifier keeps its file name, and its features mean
    something else (None in files made before it was recorded: those no longer fit any classifier)."""

    references: np.ndarray
    kind: str
    model: str
    agreement: float
    model_sha256: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = self.references.astype(np.float16).tobytes()
        return {"version": VERSION, "tiles": list(CLASS_NAMES[:SUITED]), "kind": self.kind, "model": self.model,
                "model_sha256": self.model_sha256,
                "shape": list(self.references.shape), "agreement": round(self.agreement, 3),
                "references_f16": base64.b64encode(data).decode("ascii")}

    @classmethod
    def from_json(cls, obj: Any) -> Calibration:
        """Parse a calibration file's JSON; anything malformed is a :class:`CalibrationError`."""
        if not isinstance(obj, dict):
            raise CalibrationError("a calibration is a JSON object (made by `zhuoji calibrate`)")
        if obj.get("version") != VERSION:
            raise CalibrationError(f"calibration version {obj.get('version')!r} is not {VERSION}: calibrate again")
        if obj.get("tiles") != list(CLASS_NAMES[:SUITED]):
            raise CalibrationError("calibration: 'tiles' must list the 27 suited tiles 1m … 9s in order")
        kind, model, shape = obj.get("kind"), obj.get("model"), obj.get("shape")
        if kind not in ("features", "probs") or not isinstance(model, str):
            raise CalibrationError("calibration: 'kind' must be features or probs and 'model' a file name")
        if (not isinstance(shape, list) or len(shape) != 3 or shape[:2] != [SUITED, len(TURNS)]
                or not isinstance(shape[2], int) or not 1 <= shape[2] <= 4096):
            raise CalibrationError(f"calibration: 'shape' must be [27, {len(TURNS)}, D]")
        try:
            raw = base64.b64decode(str(obj.get("references_f16", "")), validate=True)
        except ValueError:
            raise CalibrationError("calibration: 'references_f16' is not base64") from None
        if len(raw) != 2 * math.prod(shape):
            raise CalibrationError("calibration: 'references_f16' does not hold 'shape' float16 numbers")
        refs = np.frombuffer(raw, np.float16).astype(np.float32).reshape(shape)
        if not np.isfinite(refs).all():
            raise CalibrationError("calibration: references hold non-finite numbers")
        sha = obj.get("model_sha256")
        if sha is not None and not is_sha256(sha):
            raise CalibrationError("calibration: 'model_sha256' must be 64 hex digits (the crop classifier's SHA-256)")
        agreement = obj.get("agreement", 0.0)
        return cls(_unit(refs), kind, model, float(agreement) if isinstance(agreement, int | float) else 0.0, sha)


# ------------------------------------------------------------------------------------------------ the grid


def find_grid(dets: Detections) -> Detections:
    """The 27 tiles of a calibration photo in tile order (1m … 9m, 1p … 9p, 1s … 9s) as detections, or a
    :class:`CalibrationError` saying what was found. Whatever the networks named a box (an unfamiliar set's tiles
    may look like ``other``, black tiles like backs), it counts when it is surely a tile; two boxes on one tile count
    once, pieces of one tile boxed apart (a face split by its gaps) are one box, and of more than 27 the 27 surest
    are taken (the three rows of nine then check that they are the tiles)."""
    ok = np.isfinite(dets.xyxy).all(1) & ((dets.xyxy[:, 2:] - dets.xyxy[:, :2]) >= 1).all(1)
    cand = np.flatnonzero(ok & (tileness(dets) >= MIN_TILENESS))
    tiles = _whole_tiles(dets[_one_box_per_tile(dets, cand)])
    if len(tiles) > SUITED:
        tiles = tiles[np.sort(np.argsort(-tileness(tiles), kind="stable")[:SUITED])]
    if len(tiles) != SUITED:
        raise CalibrationError(f"found {len(tiles)} tiles; a calibration photo shows the 27 suited tiles face up in "
                               "three rows of nine (1–9m, 1–9p, 1–9s), nothing else")
    centres = tiles.centers.astype(np.float64)
    rel = centres - centres.mean(0)
    _, _, vt = np.linalg.svd(rel, full_matrices=False)  # the rows' direction: the grid's longer axis
    along, across = rel @ vt[0], rel @ vt[1]
    by_across = np.argsort(across, kind="stable")
    gaps = np.diff(across[by_across])
    cuts = np.sort(np.argsort(gaps)[-2:]) + 1
    rows = np.split(by_across, cuts)
    sizes = [len(r) for r in rows]
    if sizes != [9, 9, 9] or float(gaps[cuts - 1].min()) <= max(float(np.ptp(across[r])) for r in rows):
        found = "+".join(str(n) for n in sizes) if sizes != [9, 9, 9] else "rows that run into each other"
        raise CalibrationError(f"found 27 tiles but not three rows of nine ({found}): lay 1–9m, 1–9p and 1–9s "
                               "in three straight rows with a gap between them")
    grid = np.array([r[np.argsort(along[r], kind="stable")] for r in rows])  # (3, 9)
    return tiles[_best_reading(tiles, grid)]


def _one_box_per_tile(dets: Detections, cand: np.ndarray) -> np.ndarray:
    """The candidates less the weaker of two boxes on one tile (overlapping, or one inside the other), and less a
    box drawn around two or more tiles that have boxes of their own (however sure it is: it is no one tile)."""
    xyxy = dets.xyxy[cand].astype(np.float64)
    area = np.prod(xyxy[:, 2:] - xyxy[:, :2], 1)
    inside = box_intersection(xyxy, xyxy) / area[None]  # [i, j]: share of box j inside box i
    np.fill_diagonal(inside, 0.0)
    spans = ((inside > 0.8) & (area[None] < 0.7 * area[:, None])).sum(1) >= 2
    same = (box_iou(xyxy, xyxy) > 0.45) | (box_intersection(xyxy, xyxy) / np.minimum(area[:, None], area[None]) > 0.8)
    keep = ~spans
    for k in np.argsort(-dets.confidence[cand], kind="stable"):
        if keep[k]:
            dup = same[k] & keep
            dup[k] = False
            keep[dup] = False
    return cand[keep]


def _whole_tiles(dets: Detections) -> Detections:
    """Boxes of whole tiles: a box under 60% of the median size is a piece of a tile. Pieces on a whole tile's box
    go; pieces that touch each other become one box (their union, named as the strongest piece) when that is the
    size of a tile, else go."""
    if len(dets) < 3:
        return dets
    xyxy = dets.xyxy.astype(np.float64)
    area = np.prod(xyxy[:, 2:] - xyxy[:, :2], 1)
    typical = float(np.median(area))
    small = area < 0.6 * typical
    if not small.any():
        return dets
    reach = 0.1 * math.sqrt(typical)
    grown = xyxy + np.array([-reach, -reach, reach, reach])
    touch = box_intersection(grown, grown) > 0
    on_whole = (box_intersection(xyxy, xyxy[~small]) / area[:, None] > 0.3).any(1)
    pieces = [int(k) for k in np.flatnonzero(small & ~on_whole)]
    keep = list(np.flatnonzero(~small))
    union_boxes: list[np.ndarray] = []
    union_from: list[int] = []
    seen: set[int] = set()
    for k in pieces:
        if k in seen:
            continue
        cluster, todo = {k}, [k]
        while todo:
            j = todo.pop()
            for i in pieces:
                if i not in cluster and touch[j, i]:
                    cluster.add(i)
                    todo.append(i)
        seen |= cluster
        members = sorted(cluster)
        box = np.concatenate([xyxy[members, :2].min(0), xyxy[members, 2:].max(0)])
        if 0.6 * typical <= float(np.prod(box[2:] - box[:2])) <= 1.6 * typical:
            union_boxes.append(box)
            union_from.append(max(members, key=lambda i: float(dets.confidence[i])))
    out = dets[np.array(keep + union_from, dtype=int)]
    if union_boxes:
        out.xyxy[len(keep):] = np.array(union_boxes, np.float32)
        if out.features is not None:  # a union's crop is not its strongest piece's: looked at again if needed
            out.features[len(keep):] = np.nan
    return out


def _best_reading(dets: Detections, grid: np.ndarray) -> np.ndarray:
    """Of the twelve readings of the (3, 9) grid of box indices (suit order, photo upright or upside down), the
    box indices (27,) in tile order of the one whose names the networks find most probable."""
    probs = _probs(dets)
    logp = np.log(np.maximum(probs, 1e-6))
    # The suit of an unfamiliar set's tile is seen better than its rank: each box scores its suit's share too.
    suit_logp = np.log(np.maximum(probs[:, :SUITED].reshape(-1, 3, 9).sum(2), 1e-6))
    best, best_score = None, -np.inf
    for flipped in (False, True):
        g = grid[::-1, ::-1] if flipped else grid
        for suits in itertools.permutations(range(3)):
            order = np.empty(SUITED, dtype=int)
            for row, suit in enumerate(suits):
                order[suit * 9:suit * 9 + 9] = g[row]
            score = float(logp[order, np.arange(SUITED)].sum() + suit_logp[order, np.arange(SUITED) // 9].sum())
            if score > best_score:
                best, best_score = order, score
    assert best is not None
    return best


def _probs(dets: Detections) -> np.ndarray:
    """(N, classes) probabilities; hand-made detections with only a top 3 share the rest evenly."""
    if dets.probs is not None:
        return dets.probs.astype(np.float64)
    out = np.full((len(dets), len(CLASS_NAMES)), 1e-3)
    for i in range(len(dets)):
        for c, p in zip(dets.top3_class[i], dets.top3_prob[i], strict=True):
            if c >= 0:
                out[i, c] = max(float(p), 1e-3)
    return out / out.sum(1, keepdims=True)


# ------------------------------------------------------------------------------------------ references


def embed(classifier: Classifier, img: np.ndarray, xyxy: np.ndarray, turns: tuple[int, ...] = (0,)) -> tuple[np.ndarray, str]:
    """(N, len(turns), D) unit vectors of the boxes' crops, one per quarter turn, and their kind: the classifier's
    ``features`` output when its graph has one, else its class probabilities (a weaker fallback)."""
    probs, features = classifier.looks(img, xyxy, turns)
    kind, out = ("features", features) if features is not None else ("probs", probs)
    return _unit(out.transpose(1, 0, 2).astype(np.float32)), kind


def _vectors(classifier: Classifier, img: np.ndarray, dets: Detections, boxes: np.ndarray,
             turns: tuple[int, ...]) -> np.ndarray:
    """(len(boxes), len(turns), D) unit vectors of the boxes at the given turns: the features the crop classifier
    gave when it named them (:attr:`Detections.features`) where it looked at those turns, the rest looked at now."""
    if not classifier.has_features:
        return embed(classifier, img, dets.xyxy[boxes], turns)[0]
    have = dets.features[boxes][:, list(turns)] if dets.features is not None else None
    missing = np.ones(len(boxes), bool) if have is None else ~np.isfinite(have).all((1, 2))
    if have is not None and not missing.any():
        return _unit(have)
    fresh, _ = embed(classifier, img, dets.xyxy[boxes[missing]], turns)
    out = np.empty((len(boxes), len(turns), fresh.shape[2]), np.float32)
    if have is not None:
        out[~missing] = have[~missing]
    out[missing] = fresh
    return _unit(out)


def build_calibration(classifier: Classifier, img: np.ndarray, dets: Detections) -> Calibration:
    """References from a calibration photo's image and detections (:func:`find_grid` orders them)."""
    grid = find_grid(dets)
    refs = _vectors(classifier, img, grid, np.arange(SUITED), TURNS)
    kind = "features" if classifier.has_features else "probs"
    agreement = float(np.mean(grid.class_id == np.arange(SUITED)))
    return Calibration(refs, kind, classifier.model_path.name, agreement, classifier.sha256)


def apply_calibration(calibration: Calibration, classifier: Classifier, image: np.ndarray, dets: Detections,
                      weight: float = CALIBRATION_WEIGHT, temperature: float = TEMPERATURE) -> Detections:
    """``dets`` with every box that is a tile renamed by the formula of the module docstring (boxes unchanged;
    confidence scaled like the crop classifier's: tileness × the new top-1 probability). The boxes' features are
    the ones the crop classifier gave when it named them; only boxes it did not look at are cropped now."""
    if len(dets) == 0:
        return dets
    check_compatible(calibration, classifier)
    sure = np.flatnonzero(tileness(dets) >= 0.1)
    if len(sure) == 0:
        return dets
    vectors = _vectors(classifier, image, dets, sure, (0,))
    if vectors.shape[2] != calibration.references.shape[2]:
        raise CalibrationError(f"this calibration holds vectors of {calibration.references.shape[2]} numbers, the "
                               f"crop classifier gives {vectors.shape[2]}: photograph the 27 tiles again")
    sim = np.einsum("nd,ctd->nct", vectors[:, 0], calibration.references).max(2)  # (n, 27): best turn
    q = np.exp((sim - sim.max(1, keepdims=True)) / temperature)
    q /= q.sum(1, keepdims=True)
    p = np.maximum(_probs(dets)[sure], 1e-6)
    share = p[:, :SUITED].sum(1, keepdims=True)
    mixed = p.copy()
    mixed[:, :SUITED] = np.exp((1 - weight) * np.log(p[:, :SUITED]) + weight * np.log(np.maximum(share * q, 1e-9)))
    mixed[:, :SUITED] *= share / mixed[:, :SUITED].sum(1, keepdims=True)  # the suited tiles keep their share
    mixed /= mixed.sum(1, keepdims=True)
    top3 = np.argsort(-mixed, 1)[:, :3]
    tile = tileness(dets)[sure]
    out = dets[np.arange(len(dets))]  # a copy
    probs = _probs(dets).astype(np.float32) if out.probs is None else out.probs
    probs[sure] = mixed
    out.probs = probs
    out.class_id[sure], out.top3_class[sure] = top3[:, 0], top3
    out.top3_prob[sure] = np.take_along_axis(mixed, top3, 1)
    out.confidence[sure] = tile * out.top3_prob[sure, 0]
    return out


def check_compatible(calibration: Calibration, classifier: Classifier) -> None:
    """A calibration is only comparable with crops seen by the classifier that made it."""
    kind = "features" if classifier.has_features else "probs"
    if calibration.model != classifier.model_path.name or calibration.kind != kind:
        raise CalibrationError(f"this calibration was made with the crop classifier {calibration.model} "
                               f"({calibration.kind}); this service runs {classifier.model_path.name} ({kind}): "
                               "photograph the 27 tiles again (`zhuoji calibrate`)")
    if calibration.model_sha256 != classifier.sha256:
        raise CalibrationError(f"this calibration was made with another version of the crop classifier "
                               f"{calibration.model} (the models were retrained since): photograph the 27 tiles "
                               "again (`zhuoji calibrate`)")


def is_sha256(value: object) -> bool:
    """Whether ``value`` is a SHA-256 in hex (64 lower-case hex digits)."""
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-9)


def load_calibration(path: str | Path) -> Calibration:
    """A calibration file written by ``zhuoji calibrate``; a missing or malformed one is a CalibrationError."""
    try:
        data = read_file(path, MAX_FILE_BYTES)  # a folder, device, FIFO or huge file: one line, never a hang
    except FileReadError as exc:
        raise CalibrationError(f"calibration: {exc}") from None
    return parse_calibration(data, str(path))


def parse_calibration(text: str | bytes, source: str = "calibration") -> Calibration:
    """A calibration from its JSON text (a file's or a form field's)."""
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"{source} is not JSON ({exc})") from None
    return Calibration.from_json(obj)
