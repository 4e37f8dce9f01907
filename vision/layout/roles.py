"""Roles: which groups are the 手牌 concealed hand, the 副露 melds, the 牌河 river and the 翻鸡 tile, and
which end of the rows is the player's.

``assign`` reads the hand block (its concealed groups and melds; the count rule concealed + 3 per meld = 13 or 14
settles doubtful cases), the river block, the indicator, the rest unassigned with a reason. ``orient`` turns the
frame so the player sits at +v: the river lies beyond the hand (farther from the player); without a river, the
faces of the hand point away from the player when there is that evidence (``Detections.facing``, from
``vision.upright``, for rows running up or down the photo); then perspective (far tiles are smaller) decides;
else the photo is taken to be upright."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from vision.classes import BACK
from vision.layout.frame import Geometry
from vision.layout.grouping import HOLE_GAP, MeldLike, edge_gap, inner_holes, meld_like
from vision.layout.scene import Scene
from vision.layout.values import LEGAL_COUNTS

BESIDE_HAND = "mixed tiles beside the hand"  # an unassigned reason: a group of 3+ in the hand's block, no meld
HAND_REACH = 1.9  # concealed pieces of one row further apart (in tiles) are not one hand (one missed tile at most)
LONE_MIN_CONFIDENCE = 0.5  # a lone box weaker than this is more likely a false detection than a tile
LONE_SIZE_TOLERANCE = 0.35  # log size difference to the tiles around (≈ ±40%) a lone tile may show
FACING_SURE = 2.0  # the hand's faces decide its orientation when their summed log-odds reach this


@dataclass
class Parts:
    """Roles by group index (into the chain list)."""

    concealed: list[int] = field(default_factory=list)  # group indices, in row order
    holes: int = 0
    melds: list[int] = field(default_factory=list)
    meld_info: dict[int, MeldLike] = field(default_factory=dict)
    river: list[int] = field(default_factory=list)  # row indices
    indicator: int | None = None  # local box index
    unassigned: list[tuple[list[int], str]] = field(default_factory=list)
    confidence: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class _HandPlan:
    """One reading of a block as a hand (group indices), scored by :func:`_settle`."""

    concealed: list[int]
    holes: int
    melds: list[int]
    leftovers: list[int]  # groups of the block in neither (unassigned, or lone tiles: indicator candidates)
    far_singles: list[int]  # lone tiles further along the hand row
    score: float


def _plan_hand(scene: Scene, block: list[int], meld: dict[int, MeldLike]) -> _HandPlan | None:
    """Best reading of a block as a hand: its main concealed group, the concealed pieces along its row, its
    melds. Doubtful pieces (a meld whose tiles disagree, a triplet past a tile-sized gap, a pair in a meld
    row) are settled by the count rule: concealed + 3 per meld = 13 or 14."""
    geo, groups, rows = scene.geo, scene.groups, scene.rows
    block_groups = [g for r in block for g in rows[r]]
    loose = [g for g in block_groups if meld[g].strength < 0.5 and meld[g].kind != "concealed_kong"]
    if not loose:
        return None
    def nearest_owner(g: int) -> float:  # at a table the hand is the row nearest its owner, the river beyond it
        if not scene.owner_known or len(groups[g]) < 3:  # (a stray tile or two may lie anywhere)
            return -math.inf
        return round(float(np.mean(geo.v[groups[g]])) / geo.depth0)

    main = max(loose, key=lambda g: (nearest_owner(g), len(groups[g]),
                                     sum(len(groups[h]) for h in row_containing(rows, g))))
    row = row_containing(rows, main)
    pos = row.index(main)
    # Walk out from the main group along its row; remember the gap on each piece's inner side.
    sure = [main]
    optional: list[int] = []
    gap_at: dict[int, float] = {}
    for step in (-1, 1):
        k = pos
        while 0 <= k + step < len(row):
            g = row[k + step]
            a, b = (groups[g], groups[row[k]]) if step < 0 else (groups[row[k]], groups[g])
            gap = edge_gap(geo, a, b)
            strength = meld[g].strength
            if gap > HAND_REACH or (strength >= 1.0 and gap < HOLE_GAP) or meld[g].kind == "concealed_kong":
                break  # too far, a clear meld laid beside the hand, or face-down tiles (never concealed)
            gap_at[g] = gap
            if strength >= 0.5:
                optional.append(g)  # a doubtful meld, or a triplet past a missed tile
                break
            sure.append(g)
            k += step
    fixed_melds = [g for g in block_groups if g not in sure and g not in optional and meld[g].strength >= 0.5]
    pairs = [g for g in block_groups if g not in sure and g not in optional and g not in fixed_melds
             and meld[g].strength > 0][:3]
    best: _HandPlan | None = None
    doubtful = optional + pairs
    for mask in range(1 << len(doubtful)):
        as_meld = {g for b, g in enumerate(doubtful) if mask >> b & 1}
        concealed = [g for g in row if g in sure or (g in optional and g not in as_meld)]
        melds = fixed_melds + [g for g in doubtful if g in as_meld]
        # Without the count to decide: a clear meld stays a meld, a pair stays out.
        prefer = sum(max(meld[g].strength - 0.5, 0.1) for g in optional if g in as_meld)
        prefer -= 0.3 * len(as_meld & set(pairs))
        plan = _settle(groups, row, concealed, gap_at, melds, block_groups, prefer)
        if best is None or plan.score > best.score:
            best = plan
    return best


def _settle(groups: list[list[int]], row: list[int], concealed: list[int], gap_at: dict[int, float],
            melds: list[int], block_groups: list[int], prefer: float) -> _HandPlan:
    """Count one choice of concealed pieces and melds; trim what the count rule says is too much; score it."""
    def holes_of(g: int) -> int:
        gap = gap_at.get(g, 0.0)
        return int(round(gap)) if gap >= HOLE_GAP else 0

    hole_at = {g: holes_of(g) for g in concealed}

    def total() -> int:
        return sum(len(groups[g]) + hole_at[g] for g in concealed) + 3 * len(melds)

    # Too many tiles: a gap of under 1.3 tiles at an end is more likely the drawn tile set apart than a missed
    # tile; a lone tile past a hole at either end is more likely the 翻鸡 tile than part of the hand.
    for g in (concealed[0], concealed[-1]):
        if total() > LEGAL_COUNTS[1] and hole_at[g] and gap_at[g] < 1.3:
            hole_at[g] = 0
    far_singles: list[int] = []
    while total() > LEGAL_COUNTS[1] and len(concealed) > 1:
        ends = [g for g in (concealed[0], concealed[-1]) if len(groups[g]) == 1 and hole_at[g]]
        if not ends:
            break
        far_singles.append(ends[-1])
        concealed = [g for g in concealed if g != ends[-1]]
    if total() > LEGAL_COUNTS[1]:  # still too many: the gaps were not missed tiles
        hole_at = dict.fromkeys(hole_at, 0)
    leftovers = [g for g in block_groups if g not in concealed and g not in melds and g not in far_singles]
    for g in list(leftovers):  # lone tiles further along the hand row: the 翻鸡 tile or strays
        if g in row and len(groups[g]) == 1:
            far_singles.append(g)
            leftovers.remove(g)
    n_concealed = sum(len(groups[g]) for g in concealed)
    count = total()
    score = 10.0 if count in LEGAL_COUNTS else 4.0 if abs(count - 13.5) <= 1.5 else 0.0
    score += len(melds) + 0.3 * n_concealed + (2.0 if max(len(groups[g]) for g in row) > 6 else 0.0)
    score += prefer - 0.5 * len(leftovers)
    return _HandPlan(concealed, sum(hole_at[g] for g in concealed), melds, leftovers, far_singles, score)


def row_containing(rows: list[list[int]], g: int) -> list[int]:
    return next(row for row in rows if g in row)


def assign(scene: Scene) -> Parts:
    """Roles: hand block (concealed + melds), river block, indicator, the rest unassigned."""
    groups, rows, blocks = scene.groups, scene.rows, scene.blocks
    meld = _meld_evidence(scene)
    parts = Parts(meld_info=meld)
    plans = [(b, _plan_hand(scene, block, meld)) for b, block in enumerate(blocks)]
    candidates = sorted(((b, p) for b, p in plans if p is not None), key=lambda bp: -bp[1].score)
    if not candidates:  # only melds in view: count them as melds
        all_groups = [g for block in blocks for r in block for g in rows[r]]
        parts.melds = [g for g in all_groups if meld[g].strength >= 0.5]
        parts.unassigned += [(groups[g], "not a meld and no concealed hand found") for g in all_groups
                             if g not in parts.melds]
        parts.notes.append("no concealed hand found")
        parts.confidence["concealed"] = 0.0
        return parts
    hand_block, plan = candidates[0]
    if len(candidates) > 1 and candidates[1][1].score >= plan.score - 1.0:
        parts.notes.append("two groups of rows could each be the hand")
        parts.confidence["hand"] = 0.5
    parts.concealed, parts.holes, parts.melds = plan.concealed, plan.holes, plan.melds
    lone = [g for g in plan.leftovers if len(groups[g]) == 1]  # a tile near the hand but in no row of it
    for g in plan.leftovers:
        if g not in lone:
            reason = f"{BESIDE_HAND}, not a meld" if len(groups[g]) >= 3 else "stray tiles beside the hand"
            parts.unassigned.append((groups[g], reason))
    others = _far_melds(scene, hand_block, parts)
    _river(scene, others, parts)
    size = {b: sum(len(groups[g]) for r in blocks[b] for g in rows[r]) for b in others}
    singles = {groups[rows[blocks[b][0]][0]][0]: blocks[b][0] for b in others if size[b] == 1}
    singles.update({groups[g][0]: None for g in plan.far_singles + lone})
    _lone_tiles(scene, singles, parts)
    return parts


def _meld_evidence(scene: Scene) -> dict[int, MeldLike]:
    """:class:`MeldLike` per group; a group joined across a hole counts its missed tiles."""
    geo, groups = scene.geo, scene.groups
    cls, top3, prob = scene.shown, scene.top3, scene.prob
    meld = {g: meld_like(cls[members], top3[members], prob[members]) for g, members in enumerate(groups)}
    for g, info in meld.items():
        holes = inner_holes(geo, groups[g]) if info.kind else 0
        if holes:  # joined pieces of one meld: the gap held the missed box(es)
            info.missing = holes if info.kind != "concealed_kong" else 4 - len(groups[g])
            info.strength = 1.0
            if info.kind == "pong" and len(groups[g]) + holes == 4:
                info.kind = "kong"
    return meld


def _far_melds(scene: Scene, hand_block: int, parts: Parts) -> list[int]:
    """Add to the melds the blocks that are only melds: laid further off (beyond a missed box, or up a bent
    row) they still belong to the hand. Discards are mixed tiles, three or four of one tile alone are a meld;
    doubtful ones only at the hand's level. Returns the other blocks."""
    geo, groups, rows, blocks = scene.geo, scene.groups, scene.rows, scene.blocks
    meld = parts.meld_info
    hand_v = float(np.mean(geo.v[[k for g in parts.concealed for k in groups[g]]]))
    others = []
    for b, block in enumerate(blocks):
        if b == hand_block:
            continue
        block_groups = [g for r in block for g in rows[r]]
        level = abs(float(np.mean(geo.v[[k for g in block_groups for k in groups[g]]])) - hand_v) <= 2.5 * geo.depth0
        if all(meld[g].strength >= 1.0 or (level and meld[g].strength >= 0.5) for g in block_groups):
            parts.melds += block_groups
        else:
            others.append(b)
    return others


def _river(scene: Scene, others: list[int], parts: Parts) -> None:
    """The river: the biggest other block of two or more tiles (a lone box beside it must look like a tile). A
    row of mostly face-down tiles is no part of it: discards lie face up, and a row of backs apart from the hand
    is the wall."""
    geo, groups, rows, blocks = scene.geo, scene.groups, scene.rows, scene.blocks
    shown = scene.shown
    members = {r: [k for g in rows[r] for k in groups[g]] for b in others for r in blocks[b]}
    walls = {r for r, m in members.items() if len(m) >= 2 and 2 * int((shown[m] == BACK).sum()) > len(m)}
    for r in sorted(walls):
        parts.unassigned.append(([k for k in members[r] if shown[k] == BACK],
                                 "face-down tiles apart from the hand: the wall, not discards"))
        if up := [k for k in members[r] if shown[k] != BACK]:
            parts.unassigned.append((up, "tiles in a row of the wall, not discards"))
    size = {b: sum(len(members[r]) for r in blocks[b] if r not in walls) for b in others}
    multi = sorted((b for b in others if size[b] >= 2), key=lambda b: -size[b])
    river = multi[0] if multi else None
    for r in blocks[river] if river is not None else []:
        if r in walls:
            continue
        single = groups[rows[r][0]][0] if len(rows[r]) == 1 and len(groups[rows[r][0]]) == 1 else None
        if single is not None and not _plausible_tile(geo, single, float(scene.confidence[single])):
            parts.unassigned.append(([single], "box beside the river, unlike a tile here (size or confidence)"))
        else:
            parts.river.append(r)
    for b in others:  # a block of one box is a lone tile (_lone_tiles)
        rest = [k for r in blocks[b] if r not in walls for k in members[r]]
        if b != river and rest and sum(len(members[r]) for r in blocks[b]) >= 2:
            parts.unassigned.append((rest, "tiles away from both the hand and the river"))


def _lone_tiles(scene: Scene, singles: dict[int, int | None], parts: Parts) -> None:
    """Lone tiles (box → its own row, or None when it sits in a hand row): a discard in front of the hand
    when there is no river yet (within the hand's width), else the 翻鸡 tile (preferably off to a side);
    boxes unlike a tile here and further lone tiles are unassigned."""
    geo, groups, rows = scene.geo, scene.groups, scene.rows
    hand_u = geo.u[[k for g in parts.concealed + parts.melds for k in groups[g]]]
    inside = {k for k in singles if hand_u.min() - geo.width0 <= geo.u[k] <= hand_u.max() + geo.width0}
    for k in [k for k in singles if not _plausible_tile(geo, k, float(scene.confidence[k]))]:
        parts.unassigned.append(([k], "isolated box, unlike a tile here (size or confidence)"))
        del singles[k]
    if not parts.river:
        parts.river = [r for k, r in singles.items() if k in inside and r is not None]
        for r in parts.river:
            del singles[groups[rows[r][0]][0]]
    if singles:
        conf = scene.confidence
        best = max(singles, key=lambda k: (k not in inside, conf[k]))
        parts.indicator = best
        for k in singles:
            if k != best:
                parts.unassigned.append(([k], "isolated box (a second tile lying apart)"))
        parts.confidence["indicator"] = 1.0 if len(singles) == 1 else 0.5


def _plausible_tile(geo: Geometry, k: int, confidence: float) -> bool:
    """A lone box is taken for a tile only with fair confidence and the size a tile has at its place (box size
    varies smoothly over the photo under perspective: a plane fit of log size over the other boxes)."""
    if confidence < LONE_MIN_CONFIDENCE:
        return False
    others = np.arange(len(geo.u)) != k
    if others.sum() < 4:
        return True
    # Ridge fit in depth units: a slope the other boxes barely span (one row) shrinks towards flat.
    scale = geo.depth0
    x = np.column_stack([geo.u[others], geo.v[others]]) / scale
    mean = x.mean(0)
    x -= mean
    y = np.log(geo.rel[others])
    slope = np.linalg.solve(x.T @ x + 0.25 * len(x) * np.eye(2), x.T @ (y - y.mean()))
    expected = y.mean() + float((np.array([geo.u[k], geo.v[k]]) / scale - mean) @ slope)
    return abs(float(np.log(geo.rel[k])) - expected) <= LONE_SIZE_TOLERANCE


def boxes_of(scene: Scene, parts: Parts) -> tuple[list[int], list[int]]:
    """Local box indices of the hand (concealed + melds) and of the river."""
    groups, rows = scene.groups, scene.rows
    hand = [k for g in parts.concealed + parts.melds for k in groups[g]]
    river = [k for r in parts.river for g in rows[r] for k in groups[g]]
    return hand, river


def orient(scene: Scene, parts: Parts, facing: np.ndarray | None = None) -> None:
    """Turn the frame so the player sits at +v: the river lies beyond the hand; without a river, the hand's
    faces point away from the player (``facing``, per kept box of ``scene.kept``, when looked at); else far tiles
    look smaller under perspective; failing all, keep the photo upright (rows read left to right)."""
    geo = scene.geo
    hand, river = boxes_of(scene, parts)
    depth = geo.depth0
    if hand and river:
        dv = float(np.mean(geo.v[river]) - np.mean(geo.v[hand]))
        if dv > 0:
            geo.flip()
        parts.confidence["orientation"] = 1.0 if abs(dv) > 1.5 * depth else 0.7
        return
    if facing is not None and hand:
        away = np.array([math.sin(geo.theta), -math.cos(geo.theta)])  # -v: from the player across the row
        vote = float((facing[hand] @ away).sum())
        if abs(vote) >= FACING_SURE:
            if vote < 0:
                geo.flip()
            parts.confidence["orientation"] = 0.9
            return
    if len(hand) >= 6:
        v = geo.v[hand] / depth
        if np.ptp(v) >= 1.0:
            change = np.polyfit(v, np.log(geo.rel[hand]), 1)[0] * np.ptp(v)  # > 0: nearer tiles look bigger
            if change < -0.06:
                geo.flip()
            if abs(change) >= 0.06:
                parts.confidence["orientation"] = 0.8
                return
    parts.confidence["orientation"] = 0.5
