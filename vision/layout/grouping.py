"""Grouping: boxes in the row frame → groups of touching tiles, rows of groups, blocks of rows.

``tile_chains``: tiles of a group touch: each box links to its nearest neighbour on either side along the row when
the gap is under half a tile; mutual links make chains, so bent rows need no line fit. ``split_meld_ends`` cuts
melds off a chain they share with the hand (backs, sideways tiles, a gap that stands out); ``join_meld_pieces``
mends a meld broken by a missed box. ``find_rows`` / ``find_blocks``: groups on one line form a row (up to a few
tile widths apart); rows close across form a block (hand row + meld row; the river's rows). ``meld_like`` says
how much a group looks like a meld (三/四张 of one tile, or face-down backs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from vision.classes import BACK, CLASS_NAMES, OTHER
from vision.detections import Detections
from vision.layout.frame import GAP_SPLIT, Geometry, mutual_chains, pair_offsets

ROW_REACH = 2.4  # groups on one line up to 2.4 tiles apart form a row (hand, drawn tile, melds)
BLOCK_REACH = 1.9  # rows under 1.9 depths apart (centre to centre) form a block: hand + meld row, river rows
HOLE_GAP = 0.85  # an edge gap of about one tile (or more) inside the concealed row: a missed tile
BACK_AS_OTHER = 0.15  # a box named `other` with `back` at least this probable in its top 3 is a face-down tile
NEXT_TILE = 1.5  # centres under this many tiles apart (width along the row, depth across it): neighbours
LAID_SORTED = 6  # this many tiles in order, at least, show that a hand was sorted (two or three always are)
MELD_DOUBT = 3.5  # a group whose tiles are one tile at under e^-3.5 the odds of their top-1 is no meld


def shown_classes(dets: Detections, kept: np.ndarray) -> np.ndarray:
    """Each kept box's top-1 class, a doubtful `other` read as `back` when `back` is in its top 3: backs come in
    many colours (green, blue, yellow, orange, white), and one the detector knows less well can look to it like
    no tile of the set; a face-down tile is what such a box is among the tiles of a hand."""
    cls = dets.class_id[kept].copy()
    top3, prob = dets.top3_class[kept], dets.top3_prob[kept]
    back_p = np.where(top3 == BACK, prob, 0.0).sum(1)
    cls[(cls == OTHER) & (back_p >= BACK_AS_OTHER)] = BACK
    return cls


def split_meld_ends(geo: Geometry, groups: list[list[int]], cls: np.ndarray, top3: np.ndarray,
                     prob: np.ndarray) -> list[list[int]]:
    """Split melds off a chain that runs them together with the hand or with each other.

    Concealed tiles are never face down nor sideways, and a hand sorted by its owner is mixed. So a chain
    that is nothing but runs of three or four of one tile is that many melds; and an end run of 3–4 of one
    tile is split off when it holds a back, or a sideways tile behind a small gap, or lies behind a gap that
    clearly stands out from the chain's others (a meld pushed close to the hand)."""
    def strong(run: list[int]) -> bool:
        return meld_like(cls[run], top3[run], prob[run]).strength >= 1.0

    out: list[list[int]] = []
    todo = list(groups)
    while todo:
        chain = todo.pop()
        if len(chain) < 5:
            out.append(chain)
            continue
        faces = {int(c) for c in cls[chain] if c != BACK}
        if len(faces) <= len(chain) // 3:
            runs = _meld_partition(chain, strong)
            if runs:
                out += runs
                continue
        gaps = np.array([edge_gap(geo, [a], [b]) for a, b in zip(chain, chain[1:], strict=False)])
        index = np.arange(len(gaps), dtype=float)
        cut = None
        for size in (3, 4):
            # cut before index ``at``: the run at the left end, then the one at the right end (in a chain of
            # twice ``size`` both cut at one index, and each run must be looked at)
            for at, run in ((size, chain[:size]), (len(chain) - size, chain[len(chain) - size:])):
                # Perspective stretches the gaps steadily along a row: judge the gap against the line through
                # the others, not against their raw values.
                rest = np.arange(len(gaps)) != at - 1
                slope, base = _line(index[rest], gaps[rest])
                excess = gaps[at - 1] - (base + slope * (at - 1))
                spread = float(np.abs(gaps[rest] - (base + slope * index[rest])).max())
                wide = excess >= 0.5 * GAP_SPLIT and excess >= 1.5 * spread
                backs = bool((cls[run] == BACK).any())
                sideways = bool(geo.turned[run].any()) and gaps[at - 1] >= 0.2
                rest_of = chain[size:] if at == size else chain[:len(chain) - size]
                unsorted = gaps[at - 1] >= 0.2 and sort_breaks(cls[chain]) > sort_breaks(cls[rest_of])
                # a sideways tile in a run after a hand sorted throughout, breaking its order: a meld, however
                # close it was pushed (from a seat's camera the gap can close up)
                laid = (bool(geo.turned[run].any()) and len(rest_of) >= LAID_SORTED
                        and sort_breaks(cls[rest_of]) == 0 and sort_breaks(cls[chain]) > 0)
                if (backs or sideways or wide or unsorted or laid) and strong(run):
                    cut = at
        if cut is None:
            out.append(chain)
        else:
            todo += [chain[:cut], chain[cut:]]
    return out


def sort_breaks(cls: np.ndarray) -> int:
    """How far a row of tiles is from sorted the way players sort a hand, read either way along the row: a suit
    that comes back after another (whatever the players' order of suits), or a rank lower than the one before
    it in its suit. Backs, honours and unknown tiles are passed over."""
    keys = [(name[1], int(name[0])) for name in (CLASS_NAMES[int(c)] for c in cls)
            if len(name) == 2 and name[0].isdigit() and name[1] in "mps"]

    def breaks(seq: list[tuple[str, int]]) -> int:
        count, seen = 0, []
        for (suit, rank), (prev_suit, prev_rank) in zip(seq[1:], seq, strict=False):
            if suit != prev_suit:
                seen.append(prev_suit)
                count += suit in seen
            else:
                count += rank < prev_rank
        return count

    return min(breaks(keys), breaks(keys[::-1]))


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares line y = slope · x + base."""
    dx = x - x.mean()
    slope = float(dx @ (y - y.mean())) / max(float(dx @ dx), 1e-12)
    return slope, float(y.mean()) - slope * float(x.mean())


def _meld_partition(chain: list[int], strong: Any) -> list[list[int]] | None:
    """Split ``chain`` into consecutive runs of 3–4 that each pass ``strong``, or None if it cannot be."""
    best: dict[int, list[list[int]] | None] = {len(chain): []}
    for i in range(len(chain) - 1, -1, -1):
        best[i] = None
        for size in (3, 4):
            rest = best.get(i + size)
            if rest is not None and strong(chain[i:i + size]):
                best[i] = [chain[i:i + size], *rest]
                break
    return best[0] if best[0] and len(best[0]) >= 2 else None


def join_meld_pieces(geo: Geometry, groups: list[list[int]], rows: list[list[int]], cls: np.ndarray,
                      top3: np.ndarray, prob: np.ndarray) -> tuple[list[list[int]], list[list[int]]]:
    """Join two short pieces of one row, under two tiles apart, when together they are one meld: a missed box
    inside a meld leaves a hole, a bent row or a sideways tile a wider gap. Every tile exists four times, so
    identical neighbours of at most four are one meld. Returns the new groups and rows (group indices)."""
    merged: dict[int, int] = {}  # group → the group it joined
    for row in rows:
        for a, b in zip(row, row[1:], strict=False):
            a = merged.get(a, a)
            union = groups[a] + groups[b]
            gap = edge_gap(geo, groups[a], groups[b])
            info = meld_like(cls[union], top3[union], prob[union])
            if len(union) + (gap >= HOLE_GAP) <= 4 and gap <= 1.9 and info.kind and info.doubt == 0:
                groups[a] = union
                merged[b] = a
    if not merged:
        return groups, rows
    keep = [g for g in range(len(groups)) if g not in merged]
    new_index = {g: k for k, g in enumerate(keep)}
    return [groups[g] for g in keep], [[new_index[g] for g in row if g in new_index] for row in rows]


def trade_backs(geo: Geometry, groups: list[list[int]], cls: np.ndarray) -> list[list[int]]:
    """A 闷豆's (concealed kong's) four backs beside a pong, the nearest back grouped with the pong (three of one
    face and a back: no meld) and three left (backs, or two and the one face a 闷豆 may show), maybe as a row of
    their own: the back goes to them when it lies nearer them (in tiles) than the pong's faces. From a seat's
    camera the gap between two melds closes up and the slant shifts the backs across the row."""
    def distance(k: int, members: list[int]) -> float:
        return float(np.min(np.hypot((geo.u[members] - geo.u[k]) / geo.width0,
                                     (geo.v[members] - geo.v[k]) / geo.depth0)))

    backs3 = [g for g in groups if len(g) == 3 and int((cls[g] == BACK).sum()) >= 2]  # a face may show among them
    for src in groups:
        if len(src) != 4 or int((cls[src] == BACK).sum()) != 1 or len({int(c) for c in cls[src] if c != BACK}) != 1:
            continue
        back = next(k for k in src if cls[k] == BACK)
        faces = [k for k in src if k != back]
        near = [g for g in backs3 if distance(back, g) < min(distance(back, faces), NEXT_TILE)]
        if len(near) == 1:
            src.remove(back)
            near[0].append(back)
            backs3.remove(near[0])
    return groups


def inner_holes(geo: Geometry, members: list[int]) -> int:
    """Tile-sized gaps inside a group (only joined meld pieces have them)."""
    return sum(int(round(gap)) for a, b in zip(members, members[1:], strict=False)
               if (gap := edge_gap(geo, [a], [b])) >= HOLE_GAP)


def _end_slope(geo: Geometry, chain: list[int]) -> float:
    """Local slope (dv/du) of a long group, to follow a bent row past a gap; 0 for short groups."""
    if len(chain) < 4:
        return 0.0
    slope, _ = _line(geo.u[chain], geo.v[chain])
    return min(max(slope, -0.35), 0.35)


def find_rows(geo: Geometry, groups: list[list[int]]) -> list[list[int]]:
    """Rows of groups: group ends on one line (bends followed), up to ``ROW_REACH`` tiles apart."""
    m = len(groups)
    if m == 1:
        return [[0]]
    first = np.array([g[0] for g in groups])
    last = np.array([g[-1] for g in groups])
    # A bent row turns most at its ends: follow each long group's slope over its last (first) four tiles; a short
    # group has no slope of its own and takes its partner's.
    right = np.array([_end_slope(geo, g[-4:]) if len(g) >= 4 else np.nan for g in groups])
    left = np.array([_end_slope(geo, g[:4]) if len(g) >= 4 else np.nan for g in groups])
    r, lf = np.broadcast_arrays(right[:, None], left[None, :])
    slope = np.where(np.isnan(r), np.nan_to_num(lf), np.where(np.isnan(lf), r, (r + lf) / 2))
    du = geo.u[first][None, :] - geo.u[last][:, None]
    dv = geo.v[first][None, :] - geo.v[last][:, None]
    pm = (geo.width[last][:, None] + geo.width[first][None, :]) / 2
    hm = (geo.depth[last][:, None] + geo.depth[first][None, :]) / 2
    gap = du - (geo.extent[last][:, None] + geo.extent[first][None, :]) / 2
    residual = np.abs(dv - slope * du)
    ok = (gap > -0.3 * pm) & (gap <= ROW_REACH * pm) & (residual <= 0.5 * hm)
    np.fill_diagonal(ok, False)
    cost = np.where(ok, gap / pm + 3 * residual / hm, np.inf)
    return mutual_chains(cost)


def find_blocks(geo: Geometry, groups: list[list[int]], rows: list[list[int]]) -> list[list[int]]:
    """Blocks of rows: rows whose tiles face each other across under ``BLOCK_REACH`` depths.

    A row of one tile joins the block of its nearest facing row but never bridges two blocks: a lone box
    (a spurious detection) between the hand and the river must not merge them."""
    n = len(geo.u)
    row_of = np.empty(n, dtype=int)
    size = np.zeros(len(rows), dtype=int)
    for r, row in enumerate(rows):
        for g in row:
            row_of[groups[g]] = r
            size[r] += len(groups[g])
    du, dv, _, wm, hm = pair_offsets(geo)
    across = np.abs(dv) / hm
    near = (np.abs(du) <= 1.5 * wm) & (across <= BLOCK_REACH)
    parent = list(range(len(rows)))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for i, j in zip(*np.nonzero(near), strict=True):
        a, b = find(row_of[i]), find(row_of[j])
        if a != b and size[row_of[i]] > 1 and size[row_of[j]] > 1:
            parent[a] = b
    for r in np.flatnonzero(size == 1):
        k = groups[rows[r][0]][0]
        partners = np.flatnonzero(near[k] & (size[row_of] > 1))
        if len(partners):
            parent[find(r)] = find(row_of[partners[np.argmin(across[k, partners])]])
    blocks: dict[int, list[int]] = {}
    for r in range(len(rows)):
        blocks.setdefault(find(r), []).append(r)
    return list(blocks.values())


def edge_gap(geo: Geometry, a: list[int], b: list[int]) -> float:
    """Gap in tile widths from the end of group ``a`` to the start of group ``b`` (b to the right of a)."""
    i, j = a[-1], b[0]
    pm = (geo.width[i] + geo.width[j]) / 2
    return float((geo.u[j] - geo.u[i] - (geo.extent[i] + geo.extent[j]) / 2) / pm)


@dataclass
class MeldLike:
    """How much a group looks like a meld: ``strength`` 1 for three or four of one tile (or backs with one
    kind of open tile), 0.6 with one odd tile whose top 3 holds the group's tile, 0.4 for a pair (a meld only
    if the count needs it), 0 for a mixed group."""

    kind: str | None = None
    tile: int | None = None  # class index of the meld's tile; None when all face down
    strength: float = 0.0
    missing: int = 0
    doubt: float = 0.0  # log-probability cost of reading every open tile as ``tile`` (0: all agree)


def meld_like(cls: np.ndarray, top3: np.ndarray, prob: np.ndarray) -> MeldLike:
    """Meld evidence of a group of boxes from the detector's top-3 classes.

    The meld's tile is the one in every open tile's top 3 that costs least in log-probability against each
    box's top-1 (0 when all agree). A cost over ``MELD_DOUBT`` means mixed tiles (a run like 4m 5m 6m has 5m in
    its neighbours' top 3, but far less likely)."""
    n = len(cls)
    if not 2 <= n <= 4:
        return MeldLike()
    faces = [k for k in range(n) if cls[k] != BACK]
    backs = n - len(faces)
    tile = None
    cost = 0.0
    if faces:
        common = set(int(c) for c in top3[faces[0]] if 0 <= c < 27)
        for k in faces[1:]:
            common &= set(int(c) for c in top3[k])
        if not common:
            return MeldLike()
        logp = np.log(np.maximum(prob[faces], 1e-6))

        def cost_of(t: int) -> float:
            return float(sum(logp[i, 0] - logp[i][list(top3[k]).index(t)] for i, k in enumerate(faces)))

        tile = min(common, key=cost_of)
        cost = cost_of(tile)
        if cost > MELD_DOUBT:
            return MeldLike()
    if backs:
        kind, missing = "concealed_kong", 4 - n
    else:
        kind, missing = ("kong", 0) if n == 4 else ("pong", 3 - n)
    strength = 0.4 if n == 2 else 1.0
    if n == 4 and backs == 1:  # a 闷豆 shows two, three or four backs: one back and three faces is a pong + a back
        strength = min(strength, 0.6)
    if cost > 0:  # some open tile's top-1 is another tile
        strength = min(strength, 0.6)
    return MeldLike(kind, tile, strength, missing, cost)
