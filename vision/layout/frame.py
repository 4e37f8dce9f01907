"""The row frame: which boxes to group, the rows' direction, and every box in that frame.

``screen`` drops broken boxes and near-duplicates (two boxes on one tile). ``row_frame`` finds the row direction
from nearest-neighbour vectors (doubled-angle histogram, mod 180°), or the direction across it if more tiles chain
up that way; ``geometry`` puts the box centres in the row frame (u along the row, v across it) with the local tile
width and depth (perspective makes far tiles smaller) and spots sideways (turned) tiles. ``tile_pieces`` finds
the weaker of two boxes that are pieces of one tile (a face split by a gap, boxed in two parts). ``tile_chains``
links touching tiles along the row (the frame is chosen by which direction chains up more tiles, and grouping
starts from its chains). No pixel constant appears: every length is measured in the local tile size, estimated
from the boxes themselves."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vision.classes import BACK
from vision.detections import Detections, box_intersection, box_iou
from vision.layout.values import Unassigned

# Lengths in local tile units: along a row in tile widths, across it in tile depths.
GAP_SPLIT = 0.5  # a gap wider than half a tile ends a group (tiles of a group touch)
ROW_TOLERANCE = 0.45  # neighbours in one row are offset across it by under half a tile depth
DUPLICATE_IOU = 0.45  # tiles on a table overlap less than this even rotated by 45°; more is two boxes on one
CONTAINED = 0.8  # a box this much inside another is a second box on one tile (its face alone, or face + body)
TWO_ALIKE, TWO_FILL = 0.6, 0.65  # ...unless two such boxes, this alike in area, fill this much of it: two tiles
TWO_TILES = 1.5  # ...when it is this many tiles' areas (and they this much of one, ``TWO_ALIKE``): pieces are smaller
PIECE_SHAPE = 0.15  # ...named apart, the one whose shape fits a tile this much worse (log size) is a piece of it
STRADDLE, STRADDLE_EACH = 0.85, 0.25  # a box this much covered by two others, at least this by each: across two
STRADDLE_ALIKE = 0.2  # ...at least this by each when the two are named alike
SLICE_ON, SLICE_AREA = 0.6, 0.5  # a box this much on a stronger one of its name, at most this share of its area
PIECE_SPAN = 1.15  # two short boxes stacked across the row that together span at most this many depths are one tile
TILE_GAP = 0.04  # typical gap between touching tiles, in tile widths (used when few row neighbours are seen)
TILE_ASPECT = 1.35  # a tile's length / its width (about 35 × 26 mm)


@dataclass
class Geometry:
    """Boxes in the row frame. Index k refers to the k-th kept box."""

    theta: float  # row direction, radians
    u: np.ndarray  # along the row
    v: np.ndarray  # across it (towards the player when the photo is upright)
    width: np.ndarray  # local tile width along the row (px): perspective makes far tiles smaller
    depth: np.ndarray  # local tile depth across the row (px)
    extent: np.ndarray  # each box's extent along the row: tile width, or its depth when turned
    turned: np.ndarray  # bool: lying sideways
    rel: np.ndarray  # box size relative to the median box
    width0: float  # typical tile width (px), the median box's
    depth0: float  # typical tile depth (px)
    cache: dict[str, Any] = field(default_factory=dict)  # pairwise matrices, valid until the frame turns

    def flip(self) -> None:
        """Turn the frame by 180°: the other end of the rows is the player's left."""
        self.theta += math.pi
        self.u = -self.u
        self.v = -self.v
        self.cache.clear()


def screen(dets: Detections, subset: np.ndarray) -> tuple[np.ndarray, list[Unassigned]]:
    """Boxes fit for grouping; broken boxes and the weaker of two boxes on one tile are unassigned."""
    xyxy = dets.xyxy[subset].astype(np.float64)
    ok = np.isfinite(xyxy).all(1) & (xyxy[:, 2] - xyxy[:, 0] >= 1) & (xyxy[:, 3] - xyxy[:, 1] >= 1)
    unassigned = [Unassigned(int(b), "invalid box (under a pixel, or not finite)") for b in subset[~ok]]
    idx = subset[ok]
    xyxy = xyxy[ok]
    if len(idx) < 2:
        return idx, unassigned
    iou = box_iou(xyxy, xyxy)
    np.fill_diagonal(iou, 0)
    # Close-ups: the detector may box one tile's face and the whole tile (face and body) apart; the smaller lies
    # inside the larger, whatever their IoU.
    area = np.prod(xyxy[:, 2:] - xyxy[:, :2], 1)
    inside = box_intersection(xyxy, xyxy) / np.maximum(np.minimum(area[:, None], area[None, :]), 1e-9)
    np.fill_diagonal(inside, 0)
    order = np.argsort(-_screen_rank(dets, idx, xyxy, inside), kind="stable")
    keep = np.ones(len(idx), dtype=bool)
    for k, a, b in _over_two_tiles(xyxy, iou, inside, area):  # before the greedy pass: it would keep it, not them
        keep[k] = False
        unassigned.append(Unassigned(int(idx[k]), f"overlaps boxes {int(idx[a])} and {int(idx[b])} (one box around "
                                                  "two tiles)"))
    for k in order:  # greedy, strongest first, like non-maximum suppression
        if not keep[k]:
            continue
        dup = ((iou[k] > DUPLICATE_IOU) | (inside[k] > CONTAINED)) & keep
        dup[k] = False
        for j in np.flatnonzero(dup):
            keep[j] = False
            unassigned.append(Unassigned(int(idx[j]), f"overlaps box {int(idx[k])} (two boxes on one tile)"))
    # A weak box across two touching tiles (half of each) that both have their own, stronger boxes.
    cover = box_intersection(xyxy, xyxy) / np.maximum(area[:, None], 1e-9)  # [j, k]: share of box j inside box k
    np.fill_diagonal(cover, 0)
    rank = np.empty(len(idx), dtype=int)
    rank[order] = np.arange(len(idx))
    cls = dets.class_id[idx]
    for j in order[::-1]:  # weakest first
        others = np.flatnonzero(keep & (np.arange(len(idx)) != j))
        if not keep[j] or len(others) < 2:
            continue
        two = others[np.argsort(-cover[j, others])[:2]]
        alike = cls[two[0]] == cls[two[1]]
        if cover[j, two].min() < (STRADDLE_ALIKE if alike else STRADDLE_EACH) or cover[j, two].sum() < STRADDLE:
            continue
        # Between two tiles of one name (a pair, a meld) the network may box the middle more surely than either
        # tile, or box a piece of the pattern they repeat, and name it theirs (or, of two 2s, 4s): there the two
        # boxes suffice, whatever their confidence, and a piece mostly on one of them counts too.
        if (rank[two] < rank[j]).all() or alike:
            keep[j] = False
            unassigned.append(Unassigned(int(idx[j]), f"overlaps boxes {int(idx[two[0]])} and {int(idx[two[1]])} "
                                                      "(one box across two tiles)"))
    for j in order[::-1]:  # a thin slice of a face boxed apart and named as it, mostly on the tile's stronger box
        on = np.flatnonzero(keep & (cls == cls[j]) & (rank < rank[j]) & (cover[j] >= SLICE_ON)
                            & (area[j] <= SLICE_AREA * area))
        if keep[j] and len(on) and cls[j] != BACK:  # backs lie stacked, each half on the one below
            keep[j] = False
            unassigned.append(Unassigned(int(idx[j]), f"a piece of the tile of box {int(idx[on[0]])} (a slice of it "
                                                      "boxed apart)"))
    return idx[keep], unassigned


def _over_two_tiles(xyxy: np.ndarray, iou: np.ndarray, inside: np.ndarray,
                    area: np.ndarray) -> list[tuple[int, int, int]]:
    """Boxes drawn around two whole tiles (two tiles of a meld boxed as one, however surely) that both have
    their own boxes: a box of two tiles' area (``TWO_TILES``) holding two boxes of about a tile's, about alike
    (``TWO_ALIKE``), each inside it (``CONTAINED``), not on each other, that together fill it (``TWO_FILL``).
    Pieces of one tile are smaller; a face boxed apart from its whole tile is one box inside another. Returns
    (the box, the two tiles' boxes)."""
    out = []
    tile = float(np.median(area))  # a tile's area here: pieces of one tile are smaller, a box over two larger
    for k in np.flatnonzero(area >= TWO_TILES * tile):
        within = np.flatnonzero((inside[k] > CONTAINED) & (area < area[k]) & (area >= TWO_ALIKE * tile))
        for a, b in itertools.combinations(within, 2):
            if (min(area[a], area[b]) >= TWO_ALIKE * max(area[a], area[b]) and iou[a, b] < DUPLICATE_IOU / 2
                    and area[a] + area[b] - box_intersection(xyxy[[a]], xyxy[[b]])[0, 0] >= TWO_FILL * area[k]):
                out.append((int(k), int(a), int(b)))
                break
    return out


def _screen_rank(dets: Detections, idx: np.ndarray, xyxy: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Which of two boxes on one tile to keep first: the more confident, unless one lies inside the other, they
    are named apart, and it fits a tile's shape clearly worse (``PIECE_SHAPE``): a piece of a sideways tile
    boxed on its own reads as another tile (three 6p dots of a turned 6p as 4p)."""
    rank = dets.confidence[idx].astype(np.float64).copy()
    size = xyxy[:, 2:] - xyxy[:, :2]
    short, long = np.median(size.min(1)), np.median(size.max(1))  # the tiles' own size here
    log_size = np.log(np.maximum(size, 1e-9))
    upright, sideways = np.log([short, long]), np.log([long, short])
    misfit = np.minimum(np.abs(log_size - upright).sum(1), np.abs(log_size - sideways).sum(1))
    cls = dets.class_id[idx]
    for a, b in zip(*np.nonzero(np.triu(np.maximum(inside, inside.T) > CONTAINED)), strict=True):
        if cls[a] == cls[b]:
            continue
        strong, weak = (a, b) if rank[a] >= rank[b] else (b, a)
        if misfit[strong] - misfit[weak] >= PIECE_SHAPE:
            rank[strong] = rank[weak] - 1e-6
    return rank


def neighbour_links(xyxy: np.ndarray) -> np.ndarray:
    """Vectors between close box centres: pairs nearer than 1.6 × the nearer of the two nearest-neighbour
    distances (row neighbours and, in a block, the tiles of the next row; not the tile after next)."""
    c = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    d = np.hypot(c[:, None, 0] - c[None, :, 0], c[:, None, 1] - c[None, :, 1])
    np.fill_diagonal(d, np.inf)
    nn = d.min(1)
    i, j = np.triu_indices(len(c), 1)
    close = d[i, j] <= 1.6 * np.minimum(nn[i], nn[j])
    return c[j[close]] - c[i[close]]


def dominant_angle(vectors: np.ndarray, fold: int) -> float | None:
    """Dominant direction of ``vectors`` modulo 360°/fold (fold 2: lines; fold 4: a grid's axes), in radians.

    Histogram of the folded angles smoothed over ±15° (a bent row spreads its links over that much, a tight
    grid of river tiles does not: the wide window lets the longer rows win), its peak refined by the circular
    mean of the angles within 15° of it.
    """
    if len(vectors) == 0:
        return None
    a = fold * np.arctan2(vectors[:, 1], vectors[:, 0])
    bins = 36 * fold  # 5° bins before folding
    hist = np.bincount(((a + np.pi) / (2 * np.pi) * bins).astype(int) % bins, minlength=bins).astype(float)
    hist = np.convolve(np.concatenate([hist[-3:], hist, hist[:3]]), [1, 2, 3, 4, 3, 2, 1], mode="valid")
    peak = (np.argmax(hist) + 0.5) / bins * 2 * np.pi - np.pi
    off = (a - peak + np.pi) % (2 * np.pi) - np.pi  # signed difference to the peak
    near = np.abs(off) < fold * np.deg2rad(15)
    mean = peak + math.atan2(float(np.sin(off[near]).sum()), float(np.cos(off[near]).sum())) if near.any() else peak
    return float(mean / fold)


def _row_angle(xyxy: np.ndarray) -> float:
    """Row direction in radians, in (-90°, 90°]: the most common direction between neighbouring tiles.

    Rows are longer than a block is deep (13 tiles in a hand, six in a river row), so row neighbours
    outnumber neighbours across rows even where perspective brings rows closer than tiles."""
    angle = dominant_angle(neighbour_links(xyxy), 2) if len(xyxy) > 1 else None
    if angle is None:
        return 0.0
    return angle + math.pi if angle <= -math.pi / 2 else angle


def row_frame(xyxy: np.ndarray, angle: float | None = None) -> tuple[Geometry, list[list[int]]]:
    """Row frame and groups: of the dominant neighbour direction and the one across it, the direction along
    which more tiles chain up (rows are longer than a block is deep; a bent or sheared river grid can put more
    neighbour links across its rows than along them). ``angle``: the row direction given (a seat of a table)."""
    if angle is not None:
        geo = geometry(xyxy, angle)
        return geo, tile_chains(geo)
    theta = _row_angle(xyxy)
    best: tuple[int, Geometry, list[list[int]]] | None = None
    for candidate in (theta, theta - math.pi / 2 if theta > 0 else theta + math.pi / 2):
        geo = geometry(xyxy, candidate)
        chains = tile_chains(geo)
        links = len(xyxy) - len(chains)
        if best is None or links > best[0]:
            best = (links, geo, chains)
    assert best is not None
    return best[1], best[2]


def tile_pieces(geo: Geometry, xyxy: np.ndarray, confidence: np.ndarray) -> list[tuple[int, int]]:
    """(weaker, stronger) pairs of boxes that are two pieces of one tile. The detector sometimes boxes the parts
    of a face split by a gap apart (the two dots and the four dots of a 6p): two boxes at one place along the row,
    stacked across it, each shorter than a tile is deep and together about one tile deep. Kept as two tiles, the
    weak piece would break the row (a small box reads as a tile lying sideways). The tile depth is the one of the
    boxes around, not the pieces' own (their small size would pass for distance); two whole tiles stacked (river
    rows) or two sideways tiles stacked (an added kong) span well over one such depth."""
    cos, sin = abs(math.cos(geo.theta)), abs(math.sin(geo.theta))
    across = (xyxy[:, 2] - xyxy[:, 0]) * sin + (xyxy[:, 3] - xyxy[:, 1]) * cos
    lo, hi = geo.v - across / 2, geo.v + across / 2
    du = np.abs(geo.u[:, None] - geo.u[None, :])
    dv = np.abs(geo.v[:, None] - geo.v[None, :])
    stacked = (du < 0.35 * geo.width[:, None]) & (dv < geo.depth0)
    np.fill_diagonal(stacked, False)
    pieces: list[tuple[int, int]] = []
    taken: set[int] = set()
    for k in np.flatnonzero(stacked.any(1))[np.argsort(-confidence[stacked.any(1)], kind="stable")]:
        for w in np.flatnonzero(stacked[k]):
            if k in taken or w in taken or confidence[w] > confidence[k]:
                continue
            around = (du[k] < 3 * geo.width0) & (dv[k] < geo.depth0)
            around[[k, w]] = False
            depth = float(np.median(geo.depth[around])) if around.any() else geo.depth0
            span = max(hi[k], hi[w]) - min(lo[k], lo[w])
            if max(across[k], across[w]) < 0.85 * depth and span <= PIECE_SPAN * depth:
                pieces.append((int(w), int(k)))
                taken |= {int(w), int(k)}
    return pieces


def geometry(xyxy: np.ndarray, theta: float) -> Geometry:
    """Centres in the row frame, local tile size and sideways tiles, from the boxes and the row angle."""
    cos, sin = math.cos(theta), math.sin(theta)
    centres = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    u = centres[:, 0] * cos + centres[:, 1] * sin
    v = -centres[:, 0] * sin + centres[:, 1] * cos
    bw = xyxy[:, 2] - xyxy[:, 0]
    bh = xyxy[:, 3] - xyxy[:, 1]
    area = bw * bh
    rel = np.sqrt(area / np.median(area))  # a turned tile has the same area; a far one is smaller
    c, s = abs(cos), abs(sin)
    # Width: centre distance between row neighbours. Tiles of a group touch, so the short distances are the
    # tile width itself (the median would add the typical gap); perspective is taken out by the box size.
    du = u[None, :] - u[:, None]
    dv = v[None, :] - v[:, None]
    dist = np.hypot(du, dv)
    np.fill_diagonal(dist, np.inf)
    nn = dist.min(1)
    along = (np.abs(dv) < 0.36 * np.abs(du)) & (dist <= 1.6 * np.minimum(nn[:, None], nn[None, :]))
    i, j = np.nonzero(np.triu(along, 1))
    if len(i) >= 4:
        steps = np.sort(dist[i, j] / ((rel[i] + rel[j]) / 2))
        pitch0 = float(steps[len(steps) // 2])
        width0 = min(max(float(steps[int(0.15 * len(steps))]), 0.75 * pitch0), pitch0)
    elif len(i):
        width0 = float(np.median(dist[i, j] / ((rel[i] + rel[j]) / 2))) / (1 + TILE_GAP)
    else:  # no row neighbours: width from the box, assuming the usual tile shape
        width0 = float(np.median(bw / (c + TILE_ASPECT * s) / rel))
    # Boxes stacked on one spot (no real layout) must not make the tile size vanish.
    width0 = max(width0, 0.25 * float(np.sqrt(np.median(area))))
    width = width0 * rel
    # Depth of a tile lying straight: the box is (w c + d s) × (w s + d c); solve with the known width.
    depth_one = (bh - width * s) / c if c >= s else (bw - width * c) / s
    depth0 = float(np.clip(np.median(depth_one / rel), 0.4 * width0, 2.5 * width0))
    depth = depth0 * rel
    # Sideways tiles: their shape along / across the row stands out from the others'. A box of extents (a along
    # the row, b across) shows as (a c + b s) × (a s + b c); solved for (a, b), a tile turned 90° has a / b
    # larger by TILE_ASPECT² than a straight one, seen from above (width and depth swap) as on a table seen at
    # a slant (the depth across the row is foreshortened, a turned tile's long side along it is not), so it is
    # measured against the nearest boxes' median rather than a tile model (perspective and a bent row skew the
    # boxes, smoothly over the photo). Near 45° straight and turned look alike.
    det = c * c - s * s
    along = (bw * c - bh * s) / det if abs(c - s) > 0.3 else bw
    across = (bh * c - bw * s) / det if abs(c - s) > 0.3 else bh
    shape = np.log(np.maximum(along, 1e-6) / np.maximum(across, 1e-6))
    if len(shape) > 2:
        k = min(6, len(shape) - 1)  # the six nearest; the box itself is at infinite distance: left out
        nearest = np.argpartition(dist, k - 1, axis=1)[:, :k]
        local = np.median(shape[nearest], axis=1)
    else:
        local = np.full(len(shape), float(np.median(shape)))
    turned = (shape - local > math.log(TILE_ASPECT)) & (along > 0) & (across > 0) & (abs(c - s) > 0.3)
    extent = np.where(turned, TILE_ASPECT * width, width)
    return Geometry(theta, u, v, width, depth, extent, turned, rel, width0, depth0)


def pair_offsets(geo: Geometry) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pairwise (i → j) along offset, across offset, edge gap, mean width, mean depth (computed once)."""
    if "pairs" not in geo.cache:
        geo.cache["pairs"] = _pair_matrices(geo)
    return geo.cache["pairs"]


def _pair_matrices(geo: Geometry) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    du = geo.u[None, :] - geo.u[:, None]
    dv = geo.v[None, :] - geo.v[:, None]
    pm = (geo.width[:, None] + geo.width[None, :]) / 2
    hm = (geo.depth[:, None] + geo.depth[None, :]) / 2
    gap = du - (geo.extent[:, None] + geo.extent[None, :]) / 2
    return du, dv, gap, pm, hm


def mutual_chains(cost: np.ndarray) -> list[list[int]]:
    """Chains from a cost matrix (i → j: j follows i): keep i → j when j is i's best successor and i is j's best
    predecessor; follow the kept links from each chain's head."""
    n = len(cost)
    nxt = np.full(n, -1)
    has_prev = np.zeros(n, dtype=bool)
    if n > 1:
        best_next = np.argmin(cost, axis=1)
        best_prev = np.argmin(cost, axis=0)
        for i in range(n):
            j = best_next[i]
            if np.isfinite(cost[i, j]) and best_prev[j] == i:
                nxt[i] = j
                has_prev[j] = True
    chains = []
    for head in np.flatnonzero(~has_prev):
        chain = [int(head)]
        while nxt[chain[-1]] >= 0:
            chain.append(int(nxt[chain[-1]]))
        chains.append(chain)
    return chains


def tile_chains(geo: Geometry) -> list[list[int]]:
    """Groups: runs of touching tiles along the row (gap under half a tile, offset across under half a depth)."""
    du, dv, gap, pm, hm = pair_offsets(geo)
    ok = (du > 0) & (gap <= GAP_SPLIT * pm) & (gap > -0.5 * pm) & (np.abs(dv) <= ROW_TOLERANCE * hm)
    cost = np.where(ok, gap / pm + 2 * np.abs(dv) / hm, np.inf)
    return mutual_chains(cost)
