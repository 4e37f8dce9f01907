"""The one value the layout's stages share: the boxes kept, their row frame and how they group."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vision.detections import Detections
from vision.layout.frame import Geometry


@dataclass
class Scene:
    """One photo's boxes as the roles stage reads them. Local index k (into ``kept``, ``geo``'s arrays, ``shown``)
    is the k-th kept box; ``groups`` are lists of local indices, ``rows`` lists of group indices, ``blocks`` lists
    of row indices."""

    dets: Detections
    kept: np.ndarray  # detection index of each local box
    geo: Geometry
    groups: list[list[int]]
    rows: list[list[int]]
    blocks: list[list[int]]
    shown: np.ndarray  # each kept box's class as the layout reads it (``grouping.shown_classes``)
    owner_known: bool = False  # the row direction was given (a table's seat): larger ``geo.v`` is nearer the owner

    @property
    def confidence(self) -> np.ndarray:
        return self.dets.confidence[self.kept]

    @property
    def top3(self) -> np.ndarray:
        return self.dets.top3_class[self.kept]

    @property
    def prob(self) -> np.ndarray:
        return self.dets.top3_prob[self.kept]
