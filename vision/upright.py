"""Which way the faces point: the player's "up" for a hand that runs up or down the photo (phone held at ±90°).

A tile's glyph is upright for the player who laid it, so the faces of the concealed row tell which end of the row
is the player's left when nothing else does (no river beyond the hand, no perspective: see ``vision.layout``'s
``_orient``). The crop classifier cannot tell by itself: it was trained on crops at every quarter turn, and names
a tile as surely upside down as upright (measured: its top-1 probability picks the upright turn of a tile about
as often as the wrong one). Its 256 ``features`` still carry the turn, and a linear probe on them — a weight
vector ``w`` fitted by ``datasets/upright.py`` on rendered tiles of the training styles — scores a crop turned by
``k`` against the same crop turned by ``k + 2``: ``w · (f(k) - f(k + 2))``, the log-odds that turn ``k`` is the
upright one. Two such scores per tile (turns 0 against 2, 1 against 3) give a vector in the image pointing to
where the top of its glyph is: :attr:`Detections.facing`, typed evidence for the layout stage, which stays free
of models.

Cost: one classifier batch of 4 turns × ``SAMPLE`` crops, and only for a row that runs more vertically than
horizontally (:func:`boxes_to_look_at`): an upright photo pays nothing.

The probe belongs to the crop classifier it was fitted on (its file's SHA-256 is stored with it): after the
classifier is retrained, run ``python datasets/upright.py`` again, or the probe is not used (no evidence, the
layout decides as before).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vision.classify import Classifier
from vision.detections import Detections

if TYPE_CHECKING:  # read, never built here: the detector loads this module for its probe, and needs no layout
    from vision.layout import Arrangement, Layout

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_UPRIGHT = ROOT / "models" / "zhuoji-upright.json"
SAMPLE = 8  # concealed tiles looked at: a few are enough (on rendered turned photos 5 already agree with all)
STEEP = math.radians(35)  # rows within 35° of the image's horizontal are read as the photo stands (no look)


class UprightError(ValueError):
    """The probe file is unreadable or made for another crop classifier."""


@dataclass(frozen=True)
class UprightProbe:
    """The probe's weights (one per classifier feature) and the crop classifier file it belongs to."""

    weights: np.ndarray
    classifier_sha256: str

    @classmethod
    def load(cls, path: str | Path, classifier: Classifier) -> UprightProbe:
        """The probe at ``path`` for ``classifier``; :class:`UprightError` if it is unreadable or was fitted on
        another classifier (its features mean something else)."""
        try:
            data = json.loads(Path(path).read_text())
            weights = np.asarray(data["weights"], np.float64).reshape(-1)
            sha = str(data["classifier_sha256"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UprightError(f"{path}: not an upright probe ({exc})") from exc
        if sha != classifier.sha256:
            raise UprightError(f"{path}: fitted on another crop classifier than {classifier.model_path.name}; "
                               f"run datasets/upright.py again")
        return cls(weights, sha)


def load_probe(classifier: Classifier | None, path: str | Path = DEFAULT_UPRIGHT) -> UprightProbe | None:
    """The shipped probe for ``classifier`` when there is one and it fits; else None (no face evidence)."""
    if classifier is None or not Path(path).is_file():
        return None
    try:
        return UprightProbe.load(path, classifier)
    except UprightError:
        return None


def boxes_to_look_at(lay: Arrangement | Layout) -> list[int]:
    """Box indices whose faces are worth a look: up to ``SAMPLE`` concealed tiles (the middle of the row, not
    its ends, where a tile set apart or a misplaced one sits) when the row runs more vertically than
    horizontally (or near the diagonal); none for a row across the photo, or when there is a river. An
    arrangement (``vision.layout.arrange``) says as much as its layout: which way the rows point does not matter
    here."""
    if not lay.concealed or lay.river:  # the river beyond the hand tells the player's side better
        return []
    if abs(math.sin(math.radians(lay.angle))) < math.sin(STEEP):
        return []
    tiles = [t.box for t in lay.concealed if not t.turned]
    if len(tiles) > SAMPLE:
        start = (len(tiles) - SAMPLE) // 2
        tiles = tiles[start:start + SAMPLE]
    return tiles


def facing_scores(classifier: Classifier, probe: UprightProbe, img: np.ndarray, dets: Detections,
                  boxes: list[int]) -> np.ndarray:
    """(len(boxes), 2) where each box's glyph top points in the image (x right, y down), as log-odds: x = turn 1
    against turn 3 (a quarter turn counter-clockwise makes a tile whose top points right upright), y = turn 2
    against turn 0 (a half turn rights a tile whose top points down). The features are those the crop classifier
    gave when it named the tiles (:attr:`Detections.features`); only turns it did not look at are looked at now."""
    if len(boxes) == 0:
        return np.zeros((0, 2), np.float32)
    score = classifier.turn_features(img, dets, np.asarray(boxes)).astype(np.float64) @ probe.weights  # (N, 4)
    return np.stack([score[:, 1] - score[:, 3], score[:, 2] - score[:, 0]], 1).astype(np.float32)


def with_facing(dets: Detections, boxes: list[int], scores: np.ndarray) -> Detections:
    """``dets`` (a copy) with ``scores`` as the facing of ``boxes``, zero elsewhere."""
    out = dets[np.arange(len(dets))]
    out.facing = np.zeros((len(dets), 2), np.float32)
    out.facing[boxes] = scores
    return out


def look_at_faces(classifier: Classifier, probe: UprightProbe, img: np.ndarray, dets: Detections,
                  lay: Arrangement | Layout) -> Detections | None:
    """``dets`` with the facing of the boxes :func:`boxes_to_look_at` picks from ``lay``, or None when it picks
    none (the layout stands as it is)."""
    boxes = boxes_to_look_at(lay)
    if not boxes:
        return None
    return with_facing(dets, boxes, facing_scores(classifier, probe, img, dets, boxes))
