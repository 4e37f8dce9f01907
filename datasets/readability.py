"""Blind readability check: can a person name the tiles the synthetic builder marks difficult?

The synthetic benchmark leaves out labels marked difficult (cut by the border, mostly hidden, blurred for their
size; ``synth.difficulty``), as PASCAL VOC does. This tool checks that those are tiles no one can read, not tiles
a model merely finds hard: it draws random difficult and plain suited labels, shuffles them and shows each as a
numbered crop with its box outlined and no name; a person names what they can, then the answers are scored::

    python datasets/readability.py sheets DIR [--split val] [--difficult 48|all] [--plain 16] [--only REASONS]
                                      [--seed 0] --out OUT
    python datasets/readability.py score OUT ANSWERS.txt
    python datasets/readability.py apply DIR OUT ANSWERS.txt --to DIFFICULT_DIR

``sheets`` writes OUT/sheet_NN.png and OUT/key.json (the names: keep it from the reader). ``--only truncated,hidden``
draws only labels difficult for those reasons alone. ANSWERS.txt holds one line per number: ``N 7s`` (MPSZ) when
sure, ``N 7s?`` for a guess, ``N ?`` when the tile cannot be named. ``score`` prints, per difficulty reason
(``plain`` for labels that are not difficult), how many were named right for sure, guessed right, named wrong, and
not named. ``apply`` writes the set's difficulty words with every label the person named for sure (right or
wrong: they saw a readable tile) made plain, as PASCAL VOC's annotators mark a tile difficult only when they cannot
recognise it; ``bench_detector.py --checked DIFFICULT_DIR`` scores with those left out.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.classes import CLASS_NAMES
from vision.labels import read_yolo_labels

REPO = Path(__file__).resolve().parents[1]

SUITED = 27
CELL = 240  # a cell's crop side in pixels: small tiles are enlarged so that the sheet, not the eye, limits nothing
COLUMNS = 6
PER_SHEET = 24
OUTCOMES = ("sure right", "guessed right", "wrong", "not named")
REASONS = {"truncated", "hidden", "blurred"}


@dataclass
class Item:
    scene: str  # the image's name without .jpg
    index: int  # the label's line in the scene's label file
    box: list[float]  # xyxy pixels
    tile: str
    reason: str  # "plain" or the builder's difficulty word ("truncated+blurred")


def labels(root: Path, split: str) -> list[Item]:
    """Every suited label of a synthetic split with its difficulty word."""
    items = []
    for label_path in sorted((root / "labels" / split).glob("*.txt")):
        image = cv2.imread(str(root / "images" / split / f"{label_path.stem}.jpg"))
        if image is None:
            continue
        h, w = image.shape[:2]
        boxes, classes = read_yolo_labels(label_path, w, h)
        words_path = root / "difficult" / split / label_path.name
        words = words_path.read_text().split() if words_path.exists() else ["-"] * len(classes)
        if len(words) != len(classes):
            raise ValueError(f"{words_path}: {len(words)} difficulty words for {len(classes)} labels")
        for index, (box, cls, word) in enumerate(zip(boxes, classes, words, strict=True)):
            if cls < SUITED:
                items.append(Item(label_path.stem, index, [round(float(v), 1) for v in box], CLASS_NAMES[cls],
                                  "plain" if word == "-" else word))
    return items


def draw(items: list[Item], n_difficult: int | None, n_plain: int, seed: int,
         only: set[str] | None = None) -> list[Item]:
    """A shuffled random sample of difficult labels (``None``: all of them; ``only``: those whose every reason is
    in it) and plain ones (fewer where the set has fewer)."""
    rng = random.Random(seed)
    difficult = [i for i in items if i.reason != "plain" and (only is None or set(i.reason.split("+")) <= only)]
    plain = [i for i in items if i.reason == "plain"]
    n_difficult = len(difficult) if n_difficult is None else min(n_difficult, len(difficult))
    picked = rng.sample(difficult, n_difficult) + rng.sample(plain, min(n_plain, len(plain)))
    rng.shuffle(picked)
    return picked


def cell(image: np.ndarray, item: Item, number: int) -> np.ndarray:
    """The label's surroundings (a third of the box's larger side around it; grey past the border), enlarged to
    :data:`CELL` pixels, its box outlined in red, its number above."""
    x1, y1, x2, y2 = item.box
    margin = max(x2 - x1, y2 - y1) / 3 + 2
    left, top = int(x1 - margin), int(y1 - margin)
    right, bottom = int(x2 + margin) + 1, int(y2 + margin) + 1
    pad = max(0, -left, -top, right - image.shape[1], bottom - image.shape[0])
    padded = cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=(60, 60, 60))
    crop = padded[top + pad:bottom + pad, left + pad:right + pad]
    scale = CELL / max(crop.shape[:2])
    crop = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    corner = lambda x, y: (int(round((x - left) * scale)), int(round((y - top) * scale)))  # noqa: E731
    cv2.rectangle(crop, corner(x1, y1), corner(x2, y2), (0, 0, 255), 1)
    out = np.full((CELL + 24, CELL + 8, 3), 255, np.uint8)
    out[22:22 + crop.shape[0], 4:4 + crop.shape[1]] = crop
    cv2.putText(out, str(number), (4, 17), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 1)
    return out


def write_sheets(items: list[Item], root: Path, split: str, out: Path) -> list[Path]:
    """Numbered cells, :data:`PER_SHEET` to a PNG, and ``key.json`` with the names."""
    out.mkdir(parents=True, exist_ok=True)
    cells = [cell(cv2.imread(str(root / "images" / split / f"{item.scene}.jpg")), item, k)
             for k, item in enumerate(tqdm(items, desc="cells", unit="tile"))]
    blank = np.full_like(cells[0], 255) if cells else None
    written = []
    for start in range(0, len(cells), PER_SHEET):
        page = cells[start:start + PER_SHEET]
        page += [blank] * (-len(page) % COLUMNS)
        path = out / f"sheet_{start // PER_SHEET + 1:02d}.png"
        cv2.imwrite(str(path), np.vstack([np.hstack(page[r:r + COLUMNS]) for r in range(0, len(page), COLUMNS)]))
        written.append(path)
    (out / "key.json").write_text(json.dumps({"split": split, "items": [asdict(i) for i in items]}, indent=1))
    return written


def read_key(out: Path) -> tuple[str, list[Item]]:
    """The split and the items of a ``sheets`` folder's key."""
    key = json.loads((out / "key.json").read_text())
    return key["split"], [Item(**row) for row in key["items"]]


def apply(root: Path, split: str, items: list[Item], answers: dict[int, tuple[str | None, bool]],
          to: Path) -> int:
    """Write the split's difficulty words to ``to`` with every difficult item named for sure made plain (``-``);
    returns how many were (the plain controls among the items are plain already)."""
    readable: dict[str, set[int]] = {}
    for k, item in enumerate(items):
        if item.reason != "plain" and answers[k][0] is not None and answers[k][1]:
            readable.setdefault(item.scene, set()).add(item.index)
    to.mkdir(parents=True, exist_ok=True)
    for words_path in sorted((root / "difficult" / split).glob("*.txt")):
        words = words_path.read_text().split()
        keep = readable.get(words_path.stem, set())
        (to / words_path.name).write_text("".join(f"{'-' if i in keep else w}\n" for i, w in enumerate(words)))
    return sum(len(v) for v in readable.values())


def read_answers(path: Path, count: int) -> dict[int, tuple[str | None, bool]]:
    """``N TILE`` / ``N TILE?`` / ``N ?`` lines → {N: (tile or None, sure)}; every number of the key once."""
    answers: dict[int, tuple[str | None, bool]] = {}
    for line_no, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[0].isdigit():
            raise ValueError(f"{path}:{line_no}: expected 'N TILE', 'N TILE?' or 'N ?', got {line.strip()!r}")
        number, word = int(parts[0]), parts[1]
        sure = not word.endswith("?")
        tile = word.rstrip("?") or None
        if tile is not None and tile not in CLASS_NAMES[:SUITED]:
            raise ValueError(f"{path}:{line_no}: {tile!r} is not a suited tile (1m…9m, 1p…9p, 1s…9s)")
        if not 0 <= number < count:
            raise ValueError(f"{path}:{line_no}: no tile number {number} (the sheets hold 0…{count - 1})")
        if number in answers:
            raise ValueError(f"{path}:{line_no}: tile {number} answered twice")
        answers[number] = (tile, sure)
    missing = sorted(set(range(count)) - set(answers))
    if missing:
        raise ValueError(f"{path}: no answer for tile(s) {', '.join(map(str, missing[:10]))}"
                         f"{' …' if len(missing) > 10 else ''} (write 'N ?' for a tile you cannot name)")
    return answers


def score(items: list[Item], answers: dict[int, tuple[str | None, bool]]) -> dict[str, Counter]:
    """Per reason, how many answers fall in each of :data:`OUTCOMES`."""
    table: dict[str, Counter] = {}
    for k, item in enumerate(items):
        tile, sure = answers[k]
        outcome = ("not named" if tile is None else "wrong" if tile != item.tile
                   else "sure right" if sure else "guessed right")
        table.setdefault(item.reason, Counter())[outcome] += 1
    return table


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sheets", help="write blind contact sheets and their key")
    s.add_argument("root", type=Path, help="a synthetic dataset folder (images/, labels/, difficult/)")
    s.add_argument("--split", default="val")
    s.add_argument("--difficult", default="48", help="how many difficult labels to draw, or 'all'")
    s.add_argument("--only", help="draw only labels difficult for these reasons alone (comma-separated: "
                                  "truncated, hidden, blurred)")
    s.add_argument("--plain", type=int, default=16, help="how many plain labels to mix in, as a control")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("score", help="score a person's answers against the key")
    c.add_argument("out", type=Path, help="the folder `sheets` wrote")
    c.add_argument("answers", type=Path)
    w = sub.add_parser("apply", help="write difficulty words with the labels a person named for sure made plain")
    w.add_argument("root", type=Path, help="the synthetic dataset folder the sheets were drawn from")
    w.add_argument("out", type=Path, help="the folder `sheets` wrote")
    w.add_argument("answers", type=Path)
    w.add_argument("--to", type=Path, required=True, help="folder for the checked difficulty words")
    a = p.parse_args(argv)
    if a.command == "sheets":
        if not (a.root / "labels" / a.split).is_dir():
            p.error(f"{a.root}: no labels/{a.split}/ folder (a dataset written by datasets.synth?)")
        n_difficult = None if a.difficult == "all" else int(a.difficult) if a.difficult.isdigit() else -1
        if n_difficult == -1 or a.plain < 0:
            p.error("--difficult must be a count or 'all', --plain a count")
        only = None if a.only is None else {r.strip() for r in a.only.split(",")}
        if only is not None and not only <= REASONS:
            p.error(f"--only: reasons are {', '.join(sorted(REASONS))}")
        try:
            items = draw(labels(a.root, a.split), n_difficult, a.plain, a.seed, only)
        except ValueError as e:
            p.error(str(e))
        if not items:
            p.error(f"{a.root}: no suited labels in {a.split}")
        sheets = write_sheets(items, a.root, a.split, a.out)
        reasons = Counter(i.reason for i in items)
        print(f"{len(items)} tiles ({', '.join(f'{r} {n}' for r, n in sorted(reasons.items()))}) on "
              f"{len(sheets)} sheet(s) in {a.out}; answers: one line 'N TILE', 'N TILE?' or 'N ?' per tile")
        return 0
    key = a.out / "key.json"
    if not key.is_file():
        p.error(f"{key}: no such file (run `sheets` first)")
    if not a.answers.is_file():
        p.error(f"{a.answers}: no such file")
    split, items = read_key(a.out)
    try:
        answers = read_answers(a.answers, len(items))
    except ValueError as e:
        p.error(str(e))
    if a.command == "apply":
        if not (a.root / "difficult" / split).is_dir():
            p.error(f"{a.root}: no difficult/{split}/ folder")
        n = apply(a.root, split, items, answers, a.to)
        n_difficult = sum(i.reason != "plain" for i in items)
        print(f"{n} of {n_difficult} difficult labels named for sure made plain → {a.to}")
        return 0
    table = score(items, answers)
    print(f"{'reason':<20}" + "".join(f"{o:>15}" for o in OUTCOMES) + f"{'tiles':>8}")
    for reason in sorted(table, key=lambda r: (r != "plain", r)):
        counts = table[reason]
        print(f"{reason:<20}" + "".join(f"{counts[o]:>15}" for o in OUTCOMES) + f"{sum(counts.values()):>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
