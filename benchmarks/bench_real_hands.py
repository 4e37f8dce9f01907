"""Detector + layout + reading on real photos of laid-out hands (``tests/data/real_hands/``): per photo and totals.

    PYTHONPATH=. python benchmarks/bench_real_hands.py                        # the shipped model (or $ZHUOJI_MODEL)
    PYTHONPATH=. python benchmarks/bench_real_hands.py --model /path/to.onnx  # another export
    PYTHONPATH=. python benchmarks/bench_real_hands.py --classifier none      # the detector alone

Tiles are named by the detector and the crop classifier's second look together (``vision/classify.py``), as in
``zhuoji read``, unless ``--classifier none``.

Each photo is detected once, laid out once (``layout(dets)``) and read three ways: ``top-1`` every
box as the detector's best tile (``use_constraints=False``), ``rules`` with the copy and meld constraints
(``prefer_complete=False``), ``+complete`` with a complete 14-tile hand preferred too (the default).

Scoring. The expected files list the concealed row left to right as seen in the photo (a meld lists its tile and
its labelled boxes); the dataset's boxes (the ``.txt`` beside each photo) tie every expected tile to a place in the
image. A detected box is matched to a labelled one at IoU ≥ 0.5 (one to one, best first).

* ``tiles`` (tile accuracy): expected tiles whose matched box the layout put in the right part (concealed row or
  meld) and read as the right tile, over all expected tiles.
* ``exact``: the whole hand right: the concealed tiles as a multiset (no tile missing, none extra) and the melds
  (type and tile). The river is not scored: no photo shows one (loose tiles on the table are not labelled).
* ``order``: ``exact`` and the concealed tiles also in the expected order (the layout chose the player's side).

Winds, dragons and flowers are ``other`` in the expected files; they are no tiles of the Guiyang set, so the
reading leaves such a box unreadable ("?"), unless a suited tile among its top 3 is likelier at a Guiyang table
(where such tiles are rare: ``read(foreign_p=...)``), and then reports the change. A concealed box counts as
``other`` when the reading leaves it unreadable; a winds or dragon tile read as a suited tile is a wrong tile.
The ``suited`` column scores the photos without any such tile.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.settings import Settings, open_detector
from vision.detect import DEFAULT_MODEL, load_image
from vision.detections import Detections, box_iou, repeated_boxes
from vision.labels import parse_yolo, to_xyxy
from vision.layout import Layout, layout
from vision.reading import FOREIGN_P, TRAINED_OTHER_P, Reading, read

ROOT = Path(__file__).resolve().parents[1]
SET_DIR = ROOT / "tests" / "data" / "real_hands"
# The source dataset's classes, in its label files' order (27 is its `other`).
SOURCE_NAMES: tuple[str, ...] = (*(f"{r}{s}" for s in "mps" for r in range(1, 10)), "other")
MATCH_IOU = 0.5

CONFIGS: dict[str, dict[str, bool]] = {
    "top-1": {"use_constraints": False},
    "rules": {"use_constraints": True, "prefer_complete": False},
    "+complete": {"use_constraints": True},
}
if "prefer_complete" not in inspect.signature(read).parameters:  # an older reading stage: one rules row only
    del CONFIGS["rules"]


# ------------------------------------------------------------------------------------------- the photo set


@dataclass
class Expected:
    """One photo of the set: what its ``.json`` says, and the labelled boxes (pixels) in row order."""

    name: str
    image: Path
    source: str
    concealed: list[str]
    melds: list[dict[str, Any]]
    river: list[str]
    notes: str
    boxes: np.ndarray  # (N, 4) xyxy pixels, ordered along the row
    labels: list[str]  # class names of ``boxes``, same order

    @property
    def suited_only(self) -> bool:
        return "other" not in self.concealed

    def parts(self) -> list[str]:
        """Per labelled box (row order): "meld" when a meld's ``boxes`` (row-order indices) lists it, else
        "concealed"."""
        in_melds = {i for m in self.melds for i in m.get("boxes", [])}
        return ["meld" if i in in_melds else "concealed" for i in range(len(self.labels))]


def read_labels(path: Path, width: int, height: int) -> tuple[np.ndarray, list[str]]:
    """A YOLO label file (source class ids) → boxes in pixels and class names, sorted along the row.

    The row direction is the principal axis of the box centres, pointing right (or down for an upright row);
    for the photos of this set (one row, near horizontal) this is left to right. A box that repeats an earlier
    one of its class (``repeated_boxes``) is dropped: the source labels a few tiles twice.
    """
    ids, cxcywh = parse_yolo(path.read_text(), np.float64)
    xyxy = to_xyxy(cxcywh, width, height)
    cxcywh = cxcywh * [width, height, width, height]
    rows, cls = list(range(len(ids))), [int(c) for c in ids]
    unique = np.flatnonzero(~repeated_boxes(xyxy, cls))
    rows, cxcywh, xyxy, cls = [rows[i] for i in unique], cxcywh[unique], xyxy[unique], [cls[i] for i in unique]
    centres = cxcywh[:, :2] - cxcywh[:, :2].mean(0)
    axis = np.linalg.svd(centres, full_matrices=False)[2][0] if len(rows) > 1 else np.array([1.0, 0.0])
    axis = axis * (np.sign(axis[0]) if abs(axis[0]) >= abs(axis[1]) else np.sign(axis[1]))
    order = np.argsort(centres @ axis, kind="stable")
    return xyxy[order], [SOURCE_NAMES[cls[i]] for i in order]


def load_set(directory: Path = SET_DIR) -> list[Expected]:
    out = []
    for path in sorted(directory.glob("*.json")):
        doc = json.loads(path.read_text())
        image = directory / doc["image"]
        h, w = load_image(image).shape[:2]
        boxes, labels = read_labels(directory / doc.get("labels", f"{path.stem}.txt"), w, h)
        out.append(Expected(path.stem, image, doc["source"], list(doc["concealed"]), list(doc.get("melds", [])),
                            list(doc.get("river", [])), doc.get("notes", ""), boxes, labels))
    return out


def expected_tiles(exp: Expected) -> list[str]:
    """Every tile the expected layout puts on the table: the concealed row, then each meld's labelled boxes."""
    return exp.concealed + [m["tile"] for m in exp.melds for _ in m.get("boxes", [])]


# ------------------------------------------------------------------------------------------- scoring


def match_boxes(truth: np.ndarray, found: np.ndarray, threshold: float = MATCH_IOU) -> dict[int, int]:
    """Labelled box index → detected box index, one to one, highest IoU first."""
    if len(truth) == 0 or len(found) == 0:
        return {}
    iou = box_iou(truth, found)
    pairs = sorted(((iou[i, j], i, j) for i, j in zip(*np.nonzero(iou >= threshold), strict=True)), reverse=True)
    out: dict[int, int] = {}
    used: set[int] = set()
    for _, i, j in pairs:
        if i not in out and j not in used:
            out[int(i)] = int(j)
            used.add(int(j))
    return out


def concealed_tokens(reading: Reading) -> list[str]:
    """The concealed row as read, in layout order; a box read as no tile of the set is ``other``."""
    return ["other" if tile == "?" else tile for tile in reading.concealed_tiles]


@dataclass
class Score:
    tiles_right: int
    exact: bool
    order: bool
    tokens: list[str]
    melds: list[dict[str, Any]]
    changes: int
    codes: list[str]


def score(exp: Expected, dets: Detections, lay: Layout, reading: Reading) -> Score:
    tokens = concealed_tokens(reading)
    # Where the layout put each detected box, and what it reads there.
    placed: dict[int, tuple[str, str]] = {t.box: ("concealed", tok) for t, tok in zip(lay.concealed, tokens, strict=True)}
    for m, rm in zip(lay.melds, reading.melds, strict=True):
        for b in m.boxes:
            placed[b] = ("meld", rm.tile or "?")
    # Each labelled box's part and tile (the expected files agree with the labels: tests/vision/test_real_hands.py).
    parts = exp.parts()
    match = match_boxes(exp.boxes, dets.xyxy)
    right = sum(1 for i, j in match.items() if placed.get(j) == (parts[i], exp.labels[i]))
    melds_read = sorted((m.type, m.tile or "?") for m in reading.melds)
    melds_expected = sorted((m["type"], m["tile"] or "?") for m in exp.melds)
    exact = Counter(tokens) == Counter(exp.concealed) and melds_read == melds_expected
    return Score(right, exact, exact and tokens == exp.concealed, tokens, [m.to_json() for m in reading.melds], len(reading.changes),
                 reading.codes)


@dataclass
class PhotoResult:
    expected: Expected
    boxes: int
    detect_ms: float
    layout_read_ms: float
    scores: dict[str, Score] = field(default_factory=dict)


def run_photo(exp: Expected, model_path: str | Path | None = None, turned: bool | str = "auto",
              foreign_p: float = FOREIGN_P, classifier: str | None = None) -> PhotoResult:
    """Detect, lay out and read one photo (model_path None: ``$ZHUOJI_MODEL`` or the shipped model), as
    ``zhuoji read`` does (``turned``: the detector's second look at the photo turned 180°, "auto" when a tile is
    doubtful after the first; ``foreign_p``: the share of boxes expected to be no tile of the set, see
    :func:`vision.reading.read`; ``classifier``: a crop classifier path or ``none``, default ``$ZHUOJI_CLASSIFIER``
    or the shipped one)."""
    detector = open_detector(Settings.from_env(model=model_path, classifier=classifier))
    image = load_image(exp.image)
    t0 = time.perf_counter()
    dets = detector(image, turned=turned)
    t1 = time.perf_counter()
    lay = layout(dets)
    default = read(dets, lay, image, foreign_p=foreign_p)
    t2 = time.perf_counter()
    result = PhotoResult(exp, len(dets), (t1 - t0) * 1e3, (t2 - t1) * 1e3)
    for name, kwargs in CONFIGS.items():
        reading = default if name == "+complete" else read(dets, lay, image, foreign_p=foreign_p, **kwargs)
        result.scores[name] = score(exp, dets, lay, reading)
    return result


@dataclass
class Totals:
    photos: int
    tiles: int
    suited_photos: int
    tiles_right: dict[str, int]
    exact: dict[str, int]
    exact_suited: dict[str, int]
    order: dict[str, int]
    detect_ms: float
    layout_read_ms: float

    def tile_accuracy(self, config: str) -> float:
        return self.tiles_right[config] / max(self.tiles, 1)

    def exact_rate(self, config: str) -> float:
        return self.exact[config] / max(self.photos, 1)


def totals(results: list[PhotoResult]) -> Totals:
    def count(key, pick=lambda r: True) -> dict[str, int]:
        return {c: sum(int(key(r.scores[c])) for r in results if pick(r)) for c in CONFIGS}

    return Totals(
        photos=len(results),
        tiles=sum(len(expected_tiles(r.expected)) for r in results),
        suited_photos=sum(r.expected.suited_only for r in results),
        tiles_right=count(lambda s: s.tiles_right),
        exact=count(lambda s: s.exact),
        exact_suited=count(lambda s: s.exact, lambda r: r.expected.suited_only),
        order=count(lambda s: s.order),
        detect_ms=float(np.median([r.detect_ms for r in results])) if results else 0.0,
        layout_read_ms=float(np.median([r.layout_read_ms for r in results])) if results else 0.0,
    )


def run_set(model_path: str | Path | None = None, directory: Path = SET_DIR) -> tuple[list[PhotoResult], Totals]:
    results = [run_photo(exp, model_path) for exp in load_set(directory)]
    return results, totals(results)


# ------------------------------------------------------------------------------------------- report


def _short(tiles: list[str]) -> str:
    return " ".join("·" if t == "other" else t for t in tiles)


def print_photo(r: PhotoResult) -> None:
    exp = r.expected
    marks = "".join("✓" if r.scores[c].exact else "✗" for c in CONFIGS)
    print(f"{exp.name}  {marks}  boxes {r.boxes:>2}  detect {r.detect_ms:6.0f} ms  layout+read {r.layout_read_ms:5.1f} ms"
          f"   ({exp.source.split('_jpg')[0]})")
    print(f"    expected   {_short(exp.concealed)}" + (f"  melds {exp.melds}" if exp.melds else ""))
    shown: set[tuple[str, ...]] = set()
    for c, s in r.scores.items():
        key = (*s.tokens, *(f"{m['type']}:{m['tile']}" for m in s.melds))
        if key in shown:
            continue
        shown.add(key)
        same = [k for k, v in r.scores.items() if (*v.tokens, *(f"{m['type']}:{m['tile']}" for m in v.melds)) == key]
        melds = "  melds " + ", ".join(f"{m['type']} {m['tile']}" for m in s.melds) if s.melds else ""
        extra = f"  [{', '.join(s.codes)}]" if s.codes and c == "+complete" else ""
        print(f"    {'/'.join(same):<10} {_short(s.tokens)}{melds}  ({s.tiles_right}/{len(expected_tiles(exp))}){extra}")


def markdown(t: Totals, model: str) -> str:
    names = {"top-1": "top-1 (no constraints)", "rules": "constraints, `prefer_complete=False`",
             "+complete": "constraints + complete hand (default)"}
    lines = [f"Real photos of laid-out hands (`tests/data/real_hands/`, {t.photos} photos, {t.tiles} tiles; "
             f"model `{model}`):", "",
             "| reading | tile accuracy | exact hands | exact, suited-only photos | exact and in order |",
             "|---|---|---|---|---|"]
    for c in CONFIGS:
        lines.append(f"| {names[c]} | {t.tile_accuracy(c):.3f} | {t.exact[c]}/{t.photos} ({t.exact_rate(c):.2f}) | "
                     f"{t.exact_suited[c]}/{t.suited_photos} | {t.order[c]}/{t.photos} |")
    lines += ["", f"Median latency per 640×640 photo: detect {t.detect_ms:.0f} ms, layout + read {t.layout_read_ms:.1f} ms "
                  "(CPU, onnxruntime)."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=None,
                        help=f"ONNX model (default: $ZHUOJI_MODEL or {DEFAULT_MODEL.relative_to(ROOT)})")
    parser.add_argument("--set", type=Path, default=SET_DIR, help="folder of photos and expected .json files")
    parser.add_argument("--turned", action=argparse.BooleanOptionalAction, default=None,
                        help="the detector's second look at the photo turned 180° (default: when a tile is doubtful "
                             "after the first look, as in zhuoji read)")
    parser.add_argument("--foreign-p", type=float, default=FOREIGN_P,
                        help=f"share of boxes expected to be no tile of the set (default {FOREIGN_P}; "
                             f"{TRAINED_OTHER_P} trusts the detector's `other` as trained)")
    parser.add_argument("--classifier", help="crop classifier ONNX, or 'none' for the detector alone (default: "
                                             "$ZHUOJI_CLASSIFIER or the shipped models/zhuoji-crops-int8.onnx)")
    args = parser.parse_args()
    if not 0.0 < args.foreign_p < 1.0:
        parser.error("--foreign-p must lie strictly between 0 and 1")
    model = Path(args.model or os.environ.get("ZHUOJI_MODEL") or DEFAULT_MODEL)
    if not model.is_file():
        raise SystemExit(f"model not found: {model} (pass --model PATH)")
    detector = open_detector(Settings.from_env(model=model, classifier=args.classifier))  # load once, untimed
    closer = [part.model_path.name for part in (detector.classifier, detector.back_check) if part is not None]
    print(f"columns ✓/✗: exact hand with {', '.join(CONFIGS)}; '·' = other (not a tile of the set)\n")
    results = []
    for exp in load_set(args.set):
        r = run_photo(exp, model, "auto" if args.turned is None else args.turned, args.foreign_p, args.classifier)
        print_photo(r)
        results.append(r)
    t = totals(results)
    print()
    for c in CONFIGS:
        print(f"{c:<10} tile accuracy {t.tile_accuracy(c):.3f} ({t.tiles_right[c]}/{t.tiles})   exact hands "
              f"{t.exact[c]}/{t.photos} ({t.exact_rate(c):.2f}), suited-only {t.exact_suited[c]}/{t.suited_photos}, "
              f"in order {t.order[c]}/{t.photos}")
    print(f"median ms: detect {t.detect_ms:.0f}, layout + read {t.layout_read_ms:.1f}\n")
    try:
        shown = model.resolve().relative_to(ROOT)
    except ValueError:
        shown = model.name
    label = " + ".join([str(shown), *closer]) if closer else f"{shown} alone (no crop classifier)"
    label += {None: "", True: ", two looks (--turned)", False: ", one look (--no-turned)"}[args.turned]
    print(markdown(t, label + ("" if args.foreign_p == FOREIGN_P else f", --foreign-p {args.foreign_p}")))


if __name__ == "__main__":
    main()
