"""Build: the grouped boxes → a :class:`Layout`, in reading order, with a confidence per part.

``arrange`` runs every stage that does not depend on which end of the rows is the player's (the row frame,
grouping, roles); ``build`` orients the rows (``roles.orient``: the river, else the faces' evidence, else
perspective) and gives the :class:`Layout`. ``layout(dets)`` is both. A caller that looks at the faces only when
the arrangement asks for it (``vision.upright``: a hand running up or down the photo) arranges once and builds
once with that evidence.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from vision.classes import CLASS_NAMES
from vision.detections import Detections
from vision.layout.frame import GAP_SPLIT, row_frame, screen, tile_pieces
from vision.layout.grouping import (
    edge_gap,
    find_blocks,
    find_rows,
    join_meld_pieces,
    shown_classes,
    split_meld_ends,
    trade_backs,
)
from vision.layout.roles import Parts, assign, boxes_of, orient, row_containing
from vision.layout.scene import Scene
from vision.layout.values import LEGAL_COUNTS, Layout, MeldGroup, PlacedTile, Unassigned


@dataclass
class Arrangement:
    """One photo's boxes grouped and given their roles, not yet oriented by the faces: ``scene`` and ``parts``
    (None when no box was fit to group) and the boxes left out so far. ``concealed``, ``river`` and ``angle`` are
    those of its layout without the faces' evidence (``vision.upright`` decides from them whether to look)."""

    scene: Scene | None
    parts: Parts | None
    unassigned: list[Unassigned]
    fixed: bool = False  # the row direction was given, pointing left to right for the player: not oriented again

    @cached_property
    def unfaced(self) -> Layout:
        """The layout without the faces' evidence (oriented by the river or perspective, else upright)."""
        return build(self)

    @property
    def concealed(self) -> list[PlacedTile]:
        return self.unfaced.concealed

    @property
    def river(self) -> list[PlacedTile]:
        return self.unfaced.river

    @property
    def angle(self) -> float:
        return self.unfaced.angle


def arrange(dets: Detections, subset: np.ndarray | None = None, angle: float | None = None) -> Arrangement:
    """Every stage but the orientation: screen the boxes (``subset`` of them), find the row frame (``angle``:
    the row direction given, radians, left to right for the player, as a table's seat has it), group, give roles."""
    kept, unassigned = screen(dets, np.arange(len(dets)) if subset is None else np.asarray(subset, dtype=int))
    if len(kept) == 0:
        return Arrangement(None, None, unassigned, fixed=angle is not None)
    xyxy = dets.xyxy[kept].astype(np.float64)
    geo, chains = row_frame(xyxy, angle)
    pieces = tile_pieces(geo, xyxy, dets.confidence[kept])
    if pieces:
        unassigned += [Unassigned(int(kept[w]), f"a piece of the tile of box {int(kept[k])} (one tile boxed "
                                                "in two parts)") for w, k in pieces]
        kept = np.delete(kept, [w for w, _ in pieces])
        geo, chains = row_frame(dets.xyxy[kept].astype(np.float64), angle)
    shown = shown_classes(dets, kept)
    top3, prob = dets.top3_class[kept], dets.top3_prob[kept]
    groups = split_meld_ends(geo, chains, shown, top3, prob)
    rows = find_rows(geo, groups)
    groups, rows = join_meld_pieces(geo, groups, rows, shown, top3, prob)
    groups = trade_backs(geo, groups, shown)
    scene = Scene(dets, kept, geo, groups, rows, find_blocks(geo, groups, rows), shown, owner_known=angle is not None)
    return Arrangement(scene, assign(scene), unassigned, fixed=angle is not None)


def build(arranged: Arrangement, facing: np.ndarray | None = None) -> Layout:
    """The :class:`Layout` of an arrangement, oriented (``facing``: (N, 2) per detection, :attr:`Detections.facing`,
    or None). The arrangement is left as it was: it may be built again with other evidence."""
    out = Layout(unassigned=list(arranged.unassigned))
    if arranged.scene is None or arranged.parts is None:
        out.notes.append("no boxes")
        return out
    scene = copy.copy(arranged.scene)
    scene.geo = copy.copy(scene.geo)
    scene.geo.cache = {}  # orienting may turn the frame: its pairwise matrices are its own
    parts = copy.deepcopy(arranged.parts)
    if not arranged.fixed:
        orient(scene, parts, None if facing is None else facing[scene.kept])
    return _build(scene, parts, out)


def layout(dets: Detections) -> Layout:
    """One player's tiles → :class:`Layout` (the faces' evidence, when the detections carry it, orients it)."""
    return build(arrange(dets), dets.facing)


def _gap_confidence(scene: Scene, g: int) -> float:
    """How clearly group ``g`` stands apart: margins of its inner gaps and of the gaps to its row neighbours
    against the split threshold (half a tile). 1 = clear, 0.5 = on the threshold."""
    geo, groups, rows = scene.geo, scene.groups, scene.rows
    members = sorted(groups[g], key=lambda k: geo.u[k])
    inner = [edge_gap(geo, [a], [b]) for a, b in zip(members, members[1:], strict=False)]
    row = sorted(row_containing(rows, g), key=lambda h: geo.u[groups[h][0]])
    pos = row.index(g)
    outer = []
    for h in row[max(pos - 1, 0):pos] + row[pos + 1:pos + 2]:
        other = sorted(groups[h], key=lambda k: geo.u[k])
        outer.append(edge_gap(geo, members, other) if geo.u[other[0]] > geo.u[members[0]]
                     else edge_gap(geo, other, members))
    margin = min([GAP_SPLIT - x for x in inner] + [x - GAP_SPLIT for x in outer] + [1.0])
    return float(np.clip(0.5 + 1.5 * margin, 0.0, 1.0))


def _build(scene: Scene, parts: Parts, out: Layout) -> Layout:
    """The :class:`Layout` value from the roles: boxes back to detection indices, everything in reading order."""
    geo, groups, rows, kept = scene.geo, scene.groups, scene.rows, scene.kept
    shown = scene.shown

    def placed(k: int) -> PlacedTile:
        return PlacedTile(int(kept[k]), CLASS_NAMES[int(shown[k])], bool(geo.turned[k]))

    def by_u(members: list[int]) -> list[int]:
        return sorted(members, key=lambda k: geo.u[k])

    out.concealed = [placed(k) for k in by_u([k for g in parts.concealed for k in groups[g]])]
    out.holes = parts.holes
    meld_order = sorted(parts.melds, key=lambda g: (round(float(np.mean(geo.v[groups[g]]) / geo.depth0)),
                                                     float(np.mean(geo.u[groups[g]]))))
    for g in meld_order:
        info = parts.meld_info[g]
        conf = _gap_confidence(scene, g) * min(1.0, info.strength + 0.2 * (info.strength < 1))
        out.melds.append(MeldGroup(info.kind or "pong", None if info.tile is None else CLASS_NAMES[info.tile],
                                   [placed(k) for k in by_u(groups[g])], info.missing, conf))
    river_rows = sorted(parts.river, key=lambda r: -float(np.mean(geo.v[[k for g in rows[r] for k in groups[g]]])))
    out.river = [placed(k) for r in river_rows for k in by_u([k for g in rows[r] for k in groups[g]])]
    if parts.indicator is not None:
        out.indicator = placed(parts.indicator)
    out.unassigned += [Unassigned(int(kept[k]), reason) for members, reason in parts.unassigned for k in members]
    out.tile_size = (geo.width0, geo.depth0)
    out.angle = math.degrees(math.atan2(math.sin(geo.theta), math.cos(geo.theta)))
    conf = dict(parts.confidence)
    if parts.concealed:
        gap_conf = min(_gap_confidence(scene, g) for g in parts.concealed)
        conf["concealed"] = gap_conf * (1.0 if out.count in LEGAL_COUNTS else 0.6)
    if parts.river:
        hand, river = boxes_of(scene, parts)
        sep = float(np.min(np.abs(geo.v[river][:, None] - geo.v[hand][None, :]))) / geo.depth0 \
            if hand else 3.0
        conf["river"] = 1.0 if sep >= 2.0 else 0.6
    out.confidence = conf
    out.notes += parts.notes
    return out
