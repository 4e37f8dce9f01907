"""Reading: a :class:`~vision.layout.Layout` and the detector's top-3 classes → the tiles, checked by the rules.

The detector scores each box alone; the rules tie the boxes together:

* every tile exists 4 times (docs/rules.md#tiles): no tile may be read more than 4 times in one photo;
* a meld (碰 pong / 杠 kong / 闷豆 concealed kong) is 3 or 4 of one tile, so its open tiles read alike;
* a 14-tile hand (concealed + 3 per meld) photographed at a win is complete (成牌, docs/rules.md#win-shapes): when the top-1 tiles
  miss that by a cheap change, the complete reading is preferred (``prefer_complete``);
* players lay their hand sorted (suit by suit, rank by rank): a concealed row of 6 tiles or more that breaks that
  order once, read at top-1, is taken to be sorted when a cheap change (up to ``SORTED_BONUS``) restores it;
* the 108-tile set has no winds, dragons or flowers: the detector learnt ``other`` from riichi photos, where a
  quarter of the boxes are such tiles, so its ``other`` score is rescaled to the share a Guiyang table has
  (``foreign_p``) before it competes with the suited classes. A box still read as ``other`` stays unreadable
  ("?"), for the player to correct.

``read`` picks the assignment with the highest sum of log-probabilities under these constraints: each box
(and each meld, as one variable) may take any class in its top 3; a best-first search over sets of changes
from the top-1 reading, cheapest first, stops as soon as no cheaper set can win. It reports every change
(box, from, to, probabilities), every tile still doubtful with its alternatives, and, when a retake would
help, reason codes with a sentence for the player (``no_tiles``, ``count_mismatch``, ``too_many_copies``,
``low_confidence``, ``blurry``, ``glare``, ``tiles_cut_off``, ``ambiguous_layout``).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scoring.shapes import is_seven_pairs, is_standard
from scoring.tiles import COPIES, TILES, to_mpsz
from vision.classes import BACK, CLASS_NAMES, OTHER
from vision.detections import Detections
from vision.layout import LEGAL_COUNTS, Layout, MeldGroup
from vision.layout.grouping import LAID_SORTED, sort_breaks

COMPLETE_BONUS = 3.0  # log-odds a 14-tile photo's hand is complete: worth changing tiles up to e^3 = 20× less likely
SORTED_BONUS = 1.5  # log-odds a hand laid sorted but for one tile was sorted: that tile's change up to e^1.5 dearer
MAX_CHANGE_COST = 8.0  # never read a box as a class under e^-8 of its top-1 (constraints cannot force more)
DOUBTFUL_P = 0.7  # a reading below this probability is listed as doubtful, with its alternatives
LOW_CONFIDENCE_P = 0.5  # a reading below this after the constraints asks for a retake...
FORCED_P = 0.15  # ...unless the rules chose it, from an alternative at least this likely
MIN_P = 1e-3  # probability given to a meld tile missing from a box's top 3
MAX_EXPANSIONS = 800  # sets of changes tried per photo at most (bounds the worst case to a few ms)
MAX_CHANGES = 4  # boxes the rules may change in one photo
# Share of boxes expected to be no tile of the set. A pure 108-tile table has none, but the detector mistakes
# flowers for the 1s bird and back: on the real-hands photos (14 of 25 hold honours) 0.005 to 0.263 read the same
# suited-only hands, and 0.1 the most tiles in all (benchmarks/bench_real_hands.py --foreign-p).
FOREIGN_P = 0.1
# Share of `other` among the labelled boxes the detector learnt from (rf-chinese-mahjong-v4 train: 9878 of 37547).
TRAINED_OTHER_P = 0.263
# Variance of the Laplacian inside the tiles, each scaled to 48 px on its short side; the median tile under this
# is blurry. On the real photos of rf-chinese-mahjong-v4/valid (40 images): sharp ones 936 (5th percentile) to
# 2166 (median); blurred by σ = 2% of a tile 310, by 4% (engravings hard to read) 38.
BLUR_VARIANCE = 100.0
GLARE_SHARE = 0.12  # share of a tile's pixels saturated (all channels ≥ 245) over this: glare (real photos: ≤ 0.02)
BORDER_PX = 1.0  # a box within this of the image edge touches it


# ------------------------------------------------------------------------------------------- data types


@dataclass(frozen=True)
class TileChange:
    """A box whose reading the rules changed: detector top-1 ``old`` (probability ``p_old``) → ``new``."""

    box: int
    old: str
    new: str
    p_old: float
    p_new: float
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"box": self.box, "from": self.old, "to": self.new, "p_from": round(self.p_old, 3),
                "p_to": round(self.p_new, 3), "reason": self.reason}


@dataclass(frozen=True)
class Doubt:
    """A reading that is still uncertain: the boxes, what was chosen (None: unknown) and the alternatives."""

    boxes: tuple[int, ...]
    tile: str | None
    alternatives: tuple[tuple[str, float], ...]
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"boxes": list(self.boxes), "tile": self.tile,
                "alternatives": [{"tile": t, "p": round(p, 3)} for t, p in self.alternatives], "reason": self.reason}


@dataclass(frozen=True)
class Retake:
    """Why a new photo would help: a reason code, a sentence for the player, the boxes concerned."""

    code: str
    message: str
    boxes: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "boxes": list(self.boxes)}


@dataclass(frozen=True)
class ReadMeld:
    """A meld as read: its type (碰 pong or one of the 杠 kongs, as ``scoring.melds.MELD_TYPES``) and tile ("?"
    when unreadable, None for a face-down 闷豆 (concealed kong) whose face no tile shows)."""

    type: str
    tile: str | None

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "tile": self.tile}


@dataclass
class Reading:
    """The tiles of one player's layout.

    concealed: MPSZ text of the concealed hand; concealed_tiles the same in layout order ("?" = unreadable, or no
        tile of the 108-tile set).
    melds: the melds as read (:class:`ReadMeld`; tile None for an unidentified face-down 闷豆).
    river / indicator: tile names. count: concealed + 3 per meld (13 waiting, 14 with the winning tile).
    complete: the 14 tiles form a complete hand (成牌); None when the count is not 14.
    changes / doubtful / retake: see the module docstring. ok: no retake needed.
    """

    concealed: str = ""
    concealed_tiles: list[str] = field(default_factory=list)
    melds: list[ReadMeld] = field(default_factory=list)
    river: list[str] = field(default_factory=list)
    indicator: str | None = None
    count: int = 0
    complete: bool | None = None
    changes: list[TileChange] = field(default_factory=list)
    doubtful: list[Doubt] = field(default_factory=list)
    retake: list[Retake] = field(default_factory=list)
    ok: bool = True

    @property
    def codes(self) -> list[str]:
        return [r.code for r in self.retake]

    def to_json(self) -> dict[str, Any]:
        return {"concealed": self.concealed, "concealed_tiles": list(self.concealed_tiles),
                "melds": [m.to_json() for m in self.melds], "river": list(self.river), "indicator": self.indicator,
                "count": self.count, "complete": self.complete, "changes": [c.to_json() for c in self.changes],
                "doubtful": [d.to_json() for d in self.doubtful], "retake": [r.to_json() for r in self.retake],
                "ok": self.ok}


# ------------------------------------------------------------------------------------------- variables


@dataclass
class _Var:
    """One choice: a single box (role concealed / river / indicator) or a whole meld (all its open boxes).

    options: (tile index 0..26, log-probability) sorted best first; options[0] is the detector's reading.
    """

    role: str
    boxes: tuple[int, ...]
    options: list[tuple[int, float]]
    copies: int = 1  # tiles this variable puts on the table (3 for a pong, 4 for a kong)


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def _box_var(dets: Detections, box: int, role: str, other_shift: float) -> _Var:
    """Options of one box from its top 3: the suited tiles, and ``other`` (no tile of the set) with its log-odds
    moved by ``other_shift`` (a back is no option: face-down tiles belong to 闷豆 melds)."""
    opts = [(int(c), math.log(max(float(p), MIN_P)) + (other_shift if c == OTHER else 0.0))
            for c, p in zip(dets.top3_class[box], dets.top3_prob[box], strict=True)
            if (0 <= c < 27 or c == OTHER) and p > 0]
    return _Var(role, (box,), sorted(opts, key=lambda o: -o[1]))


def _meld_var(dets: Detections, meld: MeldGroup) -> _Var | None:
    """One variable for a meld: its tile, scored over all its open boxes; None when all lie face down."""
    open_boxes = [t.box for t in meld.tiles if t.tile != CLASS_NAMES[BACK]]  # the layout's name: a back may read `other`
    if not open_boxes:
        return None
    probs = [dict(zip(dets.top3_class[b].tolist(), dets.top3_prob[b].tolist(), strict=True)) for b in open_boxes]
    logp = {t: sum(math.log(max(p.get(t, 0.0), MIN_P)) for p in probs)
            for t in {c for p in probs for c in p if 0 <= c < 27}}
    copies = 3 if meld.type == "pong" else 4
    return _Var("meld", tuple(open_boxes), sorted(logp.items(), key=lambda o: -o[1]), copies)


def _variables(dets: Detections, lay: Layout, other_shift: float) -> tuple[list[_Var], list[MeldGroup]]:
    """Variables of the layout; also the melds with no open tile (unknown 闷豆)."""
    variables: list[_Var] = []
    hidden: list[MeldGroup] = []
    for t in lay.concealed:
        variables.append(_box_var(dets, t.box, "concealed", other_shift))
    for m in lay.melds:
        v = _meld_var(dets, m)
        if v is None:
            hidden.append(m)
        else:
            variables.append(v)
    for t in lay.river:
        variables.append(_box_var(dets, t.box, "river", other_shift))
    if lay.indicator is not None:
        variables.append(_box_var(dets, lay.indicator.box, "indicator", other_shift))
    return variables, hidden


# ---------------------------------------------------------------------------------------------- search


@dataclass
class _Problem:
    variables: list[_Var]
    counts0: np.ndarray  # copies per class in the top-1 reading (27 suited tiles, then back and other)
    concealed0: np.ndarray  # concealed counts per class in the top-1 reading
    with_melds: bool
    want_complete: bool
    want_sorted: bool = False  # the concealed row read in order is sorted but for one break (``SORTED_BONUS``)

    def complete(self, concealed: list[int]) -> bool:
        """Whether concealed counts per class make a complete hand (a box read as ``other`` never does)."""
        if any(concealed[27:]):
            return False
        tiles = concealed[:27]
        return is_standard(tiles) or (not self.with_melds and sum(tiles) == 14 and is_seven_pairs(tiles))


def _sorted_but_one(variables: list[_Var]) -> bool:
    """A concealed row of ``LAID_SORTED`` tiles or more, read at top-1, that breaks the players' sorted order
    once: a hand laid sorted with one tile misread, or a drawn tile put at the end."""
    row = np.array([v.options[0][0] for v in variables if v.role == "concealed" and v.options])
    return len(row) >= LAID_SORTED and sort_breaks(row) == 1


def _solve(problem: _Problem) -> tuple[list[int], bool]:
    """Option index per variable maximising Σ log p (+ ``COMPLETE_BONUS`` for a complete 14-tile hand) with
    at most 4 copies of every tile. Returns (choice, feasible).

    Uniform-cost search over sets of moves (variable → another option), cheapest first. A move is worth
    considering if it takes a copy away from an over-used tile, or (when completeness counts) costs less
    than the bonus; the first feasible set found is optimal unless a later, dearer set can still earn the
    bonus, so the search stops once the cost passes the best found by the bonus."""
    variables = problem.variables
    choice = [0] * len(variables)
    over0 = set(np.flatnonzero(problem.counts0[:27] > COPIES).tolist())
    bonus = COMPLETE_BONUS if problem.want_complete else 0.0
    sorted_bonus = SORTED_BONUS if problem.want_sorted else 0.0
    row = [vi for vi, var in enumerate(variables) if var.role == "concealed"]  # in the row's order
    moves: list[tuple[float, int, int]] = []  # (cost, variable, option)
    for vi, var in enumerate(variables):
        top_tile, top_logp = var.options[0] if var.options else (-1, 0.0)
        for oi, (tile, logp) in enumerate(var.options[1:], start=1):
            cost = top_logp - logp
            # only concealed tiles decide completeness; any tile may relieve an over-used one; `other` is no way
            # out of either (a foreign tile is too unlikely at a Guiyang table to explain a misread)
            if tile != OTHER and cost <= MAX_CHANGE_COST and (top_tile in over0 or (
                    cost < max(bonus, sorted_bonus) and var.role == "concealed")):
                moves.append((cost, vi, oi))
    moves.sort()

    counts0 = problem.counts0.tolist()
    concealed0 = problem.concealed0.tolist()

    def evaluate(state: tuple[int, ...]) -> tuple[bool, float]:
        """Whether the state is feasible, and the bonus it earns."""
        counts = counts0[:]
        concealed = concealed0[:]
        tiles = {vi: variables[vi].options[0][0] for vi in row}
        for m in state:
            _, vi, oi = moves[m]
            var = variables[vi]
            old, new = var.options[0][0], var.options[oi][0]
            counts[old] -= var.copies
            counts[new] += var.copies
            if var.role == "concealed":
                concealed[old] -= 1
                concealed[new] += 1
                tiles[vi] = new
        feasible = max(counts[:27]) <= COPIES
        if not feasible:
            return False, 0.0
        earned = bonus if bonus and problem.complete(concealed) else 0.0
        if sorted_bonus and sort_breaks(np.array([tiles[vi] for vi in row])) == 0:
            earned += sorted_bonus
        return True, earned

    # Sets of moves in order of total cost: moves are sorted by cost, so from a set ending in move m the next
    # dearer sets are "append m+1" and "replace m by m+1"; every set is reached once, two pushes per pop.
    best_state: tuple[int, ...] | None = None
    best_value = math.inf  # cost - bonus of the best feasible state (lower is better)
    heap: list[tuple[float, tuple[int, ...]]] = [(0.0, ())]
    expansions = 0
    while heap and expansions < MAX_EXPANSIONS:
        cost, state = heapq.heappop(heap)
        if cost - bonus - sorted_bonus >= best_value:
            break  # nothing dearer can win, even with the bonus
        expansions += 1
        chosen = [moves[m][1] for m in state]
        if len(set(chosen)) == len(chosen):  # one option per variable
            feasible, earned = evaluate(state)
            if feasible:
                value = cost - earned
                if value < best_value:
                    best_value, best_state = value, state
        last = state[-1] if state else -1
        if last + 1 < len(moves):
            if len(state) < MAX_CHANGES:
                heapq.heappush(heap, (cost + moves[last + 1][0], (*state, last + 1)))
            if state:
                heapq.heappush(heap, (cost - moves[last][0] + moves[last + 1][0], (*state[:-1], last + 1)))
    if best_state is None:
        return choice, False
    for m in best_state:
        _, vi, oi = moves[m]
        choice[vi] = oi
    return choice, True


# ------------------------------------------------------------------------------------------ image checks


def _image_checks(image: np.ndarray, dets: Detections, boxes: list[int]) -> list[Retake]:
    """Blur (variance of the Laplacian over the tiles, at a fixed tile scale) and glare (saturated pixels)."""
    import cv2  # only needed when an image is given

    out: list[Retake] = []
    if image is None or image.size == 0 or not boxes:
        return out
    h, w = image.shape[:2]
    xyxy = np.clip(np.round(dets.xyxy[boxes]).astype(int), 0, [w, h, w, h])
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    glare_boxes: list[int] = []
    variances = []
    for b, (x0, y0, x1, y1) in zip(boxes, xyxy, strict=True):
        if x1 - x0 < 8 or y1 - y0 < 8:
            continue
        # Sharpness depends on scale: judge the inner 80% of every tile (not its edge against the table)
        # at 48 px on its short side.
        mx, my = (x1 - x0) // 10, (y1 - y0) // 10
        crop = gray[y0 + my:y1 - my, x0 + mx:x1 - mx]
        f = 48.0 / min(x1 - x0, y1 - y0)
        crop = cv2.resize(crop, None, fx=f, fy=f, interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_LINEAR)
        variances.append(float(cv2.Laplacian(crop, cv2.CV_64F).var()))
        patch = image[y0:y1, x0:x1]
        bright = (patch >= 245).all(axis=-1) if patch.ndim == 3 else patch >= 245
        if bright.mean() > GLARE_SHARE:
            glare_boxes.append(b)
    if variances and float(np.median(variances)) < BLUR_VARIANCE:
        out.append(Retake("blurry", "The photo is blurred: hold the phone still and let it focus on the tiles."))
    if glare_boxes:
        out.append(Retake("glare", f"Light reflects off {len(glare_boxes)} tile(s): tilt the phone or move away "
                                   "from the lamp.", tuple(glare_boxes)))
    return out


def _cut_off(dets: Detections, boxes: list[int], image_size: tuple[int, int]) -> list[int]:
    """Boxes touching the image border (a tile partly outside the photo)."""
    w, h = image_size
    if w <= 0 or h <= 0:
        return []
    return [b for b in boxes if dets.xyxy[b, 0] <= BORDER_PX or dets.xyxy[b, 1] <= BORDER_PX
            or dets.xyxy[b, 2] >= w - BORDER_PX or dets.xyxy[b, 3] >= h - BORDER_PX]


# ---------------------------------------------------------------------------------------------- reading


def _top1_choice(dets: Detections, var: _Var) -> int:
    """The reading without the rules: a box's top-1 class; a meld's most common top-1 tile among its boxes."""
    if var.role != "meld":
        top = int(dets.class_id[var.boxes[0]])
        return next((k for k, (t, _) in enumerate(var.options) if t == top), 0)
    votes = [int(dets.class_id[b]) for b in var.boxes if dets.class_id[b] < 27]
    tile = max(votes, key=votes.count) if votes else var.options[0][0]
    return next((k for k, (t, _) in enumerate(var.options) if t == tile), 0)


def _probability(dets: Detections, box: int, tile: int) -> float:
    for c, p in zip(dets.top3_class[box], dets.top3_prob[box], strict=True):
        if c == tile:
            return float(p)
    return 0.0


def read(dets: Detections, lay: Layout, image: np.ndarray | None = None, *, use_constraints: bool = True,
         prefer_complete: bool = True, foreign_p: float = FOREIGN_P) -> Reading:
    """Read the tiles of ``lay`` (made from ``dets``), using the rules to settle doubtful boxes.

    image: the photo (numpy BGR or gray) for the blur and glare checks; optional.
    use_constraints: False reads every box as its top-1 class (to measure what the constraints add).
    prefer_complete: a 14-tile hand is taken to be complete when a cheap change makes it so.
    foreign_p: the share of boxes expected to be no tile of the set (winds, dragons, flowers), in (0, 1);
        ``TRAINED_OTHER_P`` trusts the detector's ``other`` score as it is.
    """
    if not 0.0 < foreign_p < 1.0:
        raise ValueError(f"foreign_p must lie strictly between 0 and 1, not {foreign_p}")
    out = Reading()
    if len(dets) == 0 or not (lay.concealed or lay.melds or lay.river or lay.indicator):
        out.retake.append(Retake("no_tiles", "No tiles found: photograph the tiles from above, in good light."))
        out.ok = False
        return out
    variables, hidden = _variables(dets, lay, _logit(foreign_p) - _logit(TRAINED_OTHER_P))
    counts0 = np.zeros(len(CLASS_NAMES), dtype=int)
    concealed0 = np.zeros(len(CLASS_NAMES), dtype=int)
    for var in variables:
        if var.options:
            counts0[var.options[0][0]] += var.copies
            if var.role == "concealed":
                concealed0[var.options[0][0]] += 1
    out.count = lay.count
    solvable = [v for v in variables if v.options]
    readable = all(any(t < 27 for t, _ in v.options) for v in variables if v.role == "concealed")
    problem = _Problem(solvable, counts0, concealed0, bool(lay.melds),
                       prefer_complete and lay.count == 14 and not lay.holes and readable,
                       _sorted_but_one(variables))
    if use_constraints:
        choice, feasible = _solve(problem)
    else:
        choice, feasible = [_top1_choice(dets, v) for v in solvable], True
    chosen = {id(v): v.options[c][0] for v, c in zip(solvable, choice, strict=True)}

    # Fill in the reading, in layout order, and report what the rules changed.
    def tile_of(var: _Var) -> str:
        tile = chosen.get(id(var), OTHER)
        return TILES[tile] if tile < 27 else "?"

    out.concealed_tiles = [tile_of(v) for v in variables if v.role == "concealed"]
    out.concealed = to_mpsz([t for t in out.concealed_tiles if t != "?"])
    meld_vars = iter(v for v in variables if v.role == "meld")
    face_down = {id(m) for m in hidden}
    out.melds = [ReadMeld(m.type, None if id(m) in face_down else tile_of(next(meld_vars))) for m in lay.melds]
    out.river = [tile_of(v) for v in variables if v.role == "river"]
    out.indicator = next((tile_of(v) for v in variables if v.role == "indicator"), None)
    if lay.count == 14 and "?" not in out.concealed_tiles and not lay.holes:
        counts = [0] * 27
        for t in out.concealed_tiles:
            counts[TILES.index(t)] += 1
        out.complete = problem.complete(counts)
    if use_constraints:
        out.changes = _changes(dets, variables, chosen, counts0, "complete hand" if out.complete else "the hand laid "
                               "in order (players sort their tiles)")
    out.doubtful, low = _doubts(dets, variables, chosen, hidden, out.changes)
    out.retake = _retakes(dets, lay, image, out, feasible, low)
    out.ok = not out.retake
    return out


def _changes(dets: Detections, variables: list[_Var], chosen: dict[int, int], counts0: np.ndarray,
             hand_rule: str) -> list[TileChange]:
    """Every box whose reading differs from its detector top-1, with the rule that made the difference
    (``hand_rule``: the one a concealed tile was changed by, when no tile was over-used)."""
    out = []
    for var in variables:
        if id(var) not in chosen:
            continue
        new = chosen[id(var)]
        for b in var.boxes:
            old = int(dets.class_id[b])
            if old == new:
                continue
            if old == OTHER and var.role != "meld":
                reason = "no winds, dragons or flowers in the 108-tile set: the likeliest suited tile"
            elif old >= 27:
                reason = f"a box read as {CLASS_NAMES[old]} in the {var.role} row must be a tile"
            elif var.role == "meld":
                reason = "a meld's tiles are identical"
            else:
                reason = "at most 4 of a tile" if counts0[old] > COPIES else hand_rule
            p_old = float(dets.top3_prob[b, 0]) if dets.top3_class[b, 0] == old else float(dets.confidence[b])
            out.append(TileChange(b, CLASS_NAMES[old], CLASS_NAMES[new], p_old, _probability(dets, b, new), reason))
    return out


def _doubts(dets: Detections, variables: list[_Var], chosen: dict[int, int], hidden: list[MeldGroup],
            changes: list[TileChange]) -> tuple[list[Doubt], list[int]]:
    """Readings still in doubt (low probability, unreadable, face down), and the boxes worth a retake."""
    doubts: list[Doubt] = []
    low: list[int] = []
    changed = {c.box for c in changes}
    for var in variables:
        if id(var) not in chosen:
            doubts.append(Doubt(var.boxes, None, (), f"box in the {var.role} row is not a readable tile"))
            low += var.boxes
            continue
        tile = chosen[id(var)]
        if tile == OTHER:
            alts = tuple((TILES[c], round(_probability(dets, var.boxes[0], c), 3)) for c, _ in var.options if c < 27)
            doubts.append(Doubt(var.boxes, None, alts, f"box in the {var.role} row reads as no tile of the 108-tile "
                                                       "set (a wind, dragon or flower?)"))
            low += var.boxes
            continue
        p = min(_probability(dets, b, tile) for b in var.boxes)
        if p < DOUBTFUL_P:
            # a meld's alternatives carry the geometric mean probability over its boxes
            alts = sorted({(TILES[c], round(math.exp(lp / len(var.boxes)), 3)) for c, lp in var.options if c < 27},
                          key=lambda a: -a[1])
            doubts.append(Doubt(var.boxes, TILES[tile], tuple(alts), f"{var.role} tile read with p={p:.2f}"))
            # a change the rules forced onto an unlikely class is no better than a weak reading
            if p < LOW_CONFIDENCE_P and (p < FORCED_P or not changed.intersection(var.boxes)):
                low += var.boxes
    for m in hidden:
        doubts.append(Doubt(tuple(m.boxes), None, (), "闷豆 (concealed kong) lies face down: enter its tile"))
    return doubts, low


def _retakes(dets: Detections, lay: Layout, image: np.ndarray | None, out: Reading, feasible: bool,
             low: list[int]) -> list[Retake]:
    """Reason codes for a new photo, each with a sentence for the player."""
    reasons: list[Retake] = []
    boxes = [t.box for t in lay.concealed] + [b for m in lay.melds for b in m.boxes] + [t.box for t in lay.river]
    if lay.indicator is not None:
        boxes.append(lay.indicator.box)
    if (lay.concealed or lay.melds) and lay.count not in LEGAL_COUNTS:
        hint = "a tile may be hidden, cut off or not detected" if lay.count < 13 else "a tile may be counted twice"
        reasons.append(Retake("count_mismatch", f"Found {lay.count} tiles (concealed + 3 per meld) but a hand has 13 "
                                                f"or 14: {hint}. Spread the tiles out and retake."))
    counts: dict[str, int] = {}
    for t in out.concealed_tiles + out.river + ([out.indicator] if out.indicator else []):
        counts[t] = counts.get(t, 0) + 1
    for m in out.melds:
        if m.tile:
            counts[m.tile] = counts.get(m.tile, 0) + (3 if m.type == "pong" else 4)
    over = sorted(t for t, c in counts.items() if t != "?" and c > COPIES)
    if over or not feasible:
        reasons.append(Retake("too_many_copies", f"More than 4 of {', '.join(over) or 'a tile'} read: some tiles "
                                                 "were misread. Retake closer, or correct them by hand."))
    if low:
        reasons.append(Retake("low_confidence", f"{len(low)} tile(s) are hard to read: retake closer, with the tiles "
                                                "face up and in focus.", tuple(sorted(set(low)))))
    if image is not None:
        reasons += _image_checks(image, dets, boxes)
    size = dets.image_size if dets.image_size[0] > 0 else ((image.shape[1], image.shape[0]) if image is not None
                                                          else (0, 0))
    cut = _cut_off(dets, boxes, size)
    if cut:
        reasons.append(Retake("tiles_cut_off", f"{len(cut)} tile(s) touch the edge of the photo: step back so every "
                                               "tile is fully inside.", tuple(cut)))
    weak = [m for m in lay.melds if m.confidence < 0.45]
    harmless = ("overlaps", "a piece of the tile", "isolated box, unlike")  # left out, and no tile of their own
    unclear = [u.box for u in lay.unassigned if not u.reason.startswith(harmless)]
    if lay.notes or weak or unclear or lay.confidence.get("concealed", 1.0) < 0.45:
        detail = "; ".join(lay.notes) or ("boxes that fit no group" if unclear else "groups too close together")
        reasons.append(Retake("ambiguous_layout", f"The tiles' grouping is unclear ({detail}): leave a clear gap "
                                                  "between the hand, each meld and the discards.",
                              tuple(unclear + [b for m in weak for b in m.boxes])))
    return reasons
