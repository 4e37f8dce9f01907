"""A training mix of real and synthetic images as ultralytics list files, sized for CPU training.

The real train split holds five augmented variants of each source photo, next to each other in name order; taking
the first share of the files (ultralytics' ``fraction``) would drop whole photos. This keeps every source photo
and picks ``--real-variants`` of its variants at random (seeded), adds ``--synth-train`` synthetic scenes (drawn from
the training scenes of every ``--synth`` folder, so that scenes of other seeds add variety), and validates on the
real valid split plus ``--synth-val`` synthetic scenes of the first folder. The valid split holds un-augmented photos
that the train split lacks; ``--valid-train N`` moves N of them into training, never one that is (or nearly
duplicates) a test photo or a photo of ``tests/data/real_hands``, so those stay unseen. ``--same-valid-as MIX``
instead reuses an earlier mix's valid photos in training and its validation list, so that runs on new variants
and scenes stay comparable and never validate on photos an earlier run trained on::

    python datasets/mix.py --real DIR --synth DIR [DIR ...] --out DIR [--real-variants 2] [--synth-train 900] [--synth-val 100]
                           [--valid-train 0 | --same-valid-as MIX] [--seed 0]

Writes DIR/train.txt, DIR/val.txt and DIR/data.yaml (29 classes). Labels stay beside the images of each set.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.classes import CLASS_NAMES

REPO = Path(__file__).resolve().parents[1]

REAL_HANDS = REPO / "tests" / "data" / "real_hands"

# Valid photos whose every box carries the same label (9 = 1p) although they show mixed tiles: they would skew
# checkpoint selection, so they are left out of validation.
MISLABELLED_VALID = {f"IMG_{n}" for n in (2778, 2779, 2780, 2781, 2783, 2786, 2788)}


def source_photo(name: str) -> str:
    """The source photo of an export variant: ``<root>_jpg.rf.<hash>.jpg`` → ``<root>``."""
    return re.sub(r"_(jpe?g|png)\.rf\.[0-9a-f]+\.\w+$", "", name, flags=re.I)


def _thumbnail(path: Path) -> np.ndarray:
    grey = cv2.resize(cv2.imread(str(path), cv2.IMREAD_GRAYSCALE), (32, 32), interpolation=cv2.INTER_AREA)
    v = grey.astype(np.float32).ravel()
    v -= v.mean()
    return v / (np.linalg.norm(v) + 1e-6)


def near_duplicates(candidates: list[Path], references: list[Path], min_corr: float = 0.85,
                    min_inliers: int = 40) -> set[Path]:
    """The candidates that show the same scene as some reference photo: 32×32 thumbnails correlate ≥ ``min_corr``
    (also true of a photo of the same table set-up: on the safe side, such photos stay out of training), or SIFT
    matches with one of the 8 most similar candidates fit a homography with ≥ ``min_inliers`` inliers (the same
    tiles photographed again after a small move)."""
    if not candidates or not references:
        return set()
    corr = np.stack([_thumbnail(p) for p in references]) @ np.stack([_thumbnail(p) for p in candidates]).T
    sift, matcher = cv2.SIFT_create(nfeatures=600), cv2.BFMatcher()
    cache: dict[int, tuple] = {}

    def features(path: Path) -> tuple:
        return sift.detectAndCompute(cv2.imread(str(path), cv2.IMREAD_GRAYSCALE), None)

    found = {candidates[j] for j in np.flatnonzero((corr >= min_corr).any(axis=0))}
    for i, ref in enumerate(tqdm(references, desc="near-duplicates", unit="photo")):
        kr, dr = features(ref)
        for j in np.argsort(-corr[i])[:8]:
            if candidates[j] in found:
                continue
            kc, dc = cache.setdefault(int(j), features(candidates[j]))
            if dr is None or dc is None:
                continue
            pairs = [m for m in matcher.knnMatch(dr, dc, k=2) if len(m) == 2]
            good = [m for m, n in pairs if m.distance < 0.75 * n.distance]
            if len(good) < min_inliers:
                continue
            src = np.float32([kr[m.queryIdx].pt for m in good])
            dst = np.float32([kc[m.trainIdx].pt for m in good])
            _, mask = cv2.findHomography(src, dst, cv2.RANSAC, 5.0)
            if mask is not None and int(mask.sum()) >= min_inliers:
                found.add(candidates[j])
    return found


def held_out_valid_photos() -> set[str]:
    """File names of valid-split photos used by the real-hands test set."""
    names = set()
    for spec in REAL_HANDS.glob("*.json"):
        source = json.loads(spec.read_text()).get("source", "")
        if source.startswith("valid/"):
            names.add(source.removeprefix("valid/"))
    return names


def _names(list_file: Path) -> set[str]:
    return {Path(line).name for line in list_file.read_text().splitlines() if line.strip()}


def write_mix(real: Path, synth: Path | list[Path], out: Path, real_variants: int = 2, synth_train: int = 900,
              synth_val: int = 100, seed: int = 0, valid_train: int = 0, same_valid_as: Path | None = None) -> Path:
    synth_dirs = [synth] if isinstance(synth, Path) else list(synth)
    val_scenes = sorted((synth_dirs[0] / "images" / "val").glob("*.jpg"))  # validation: the first folder only
    rng = random.Random(seed)
    groups: dict[str, list[Path]] = defaultdict(list)
    for img in sorted((real / "images" / "train").glob("*.jpg")):
        groups[source_photo(img.name)].append(img)
    train = [p for key in sorted(groups) for p in rng.sample(groups[key], min(real_variants, len(groups[key])))]
    synth_imgs = [p for d in synth_dirs for p in sorted((d / "images" / "train").glob("*.jpg"))]
    train += rng.sample(synth_imgs, min(synth_train, len(synth_imgs)))
    val = [p for p in sorted((real / "images" / "valid").glob("*.jpg"))
           if source_photo(p.name) not in MISLABELLED_VALID]
    synth_val_imgs = val_scenes[:synth_val]
    moved: list[Path] = []
    if same_valid_as is not None:
        earlier_train, earlier_val = _names(same_valid_as / "train.txt"), _names(same_valid_as / "val.txt")
        moved = [p for p in val if p.name in earlier_train]
        train += moved
        val = [p for p in val if p.name in earlier_val]
        synth_val_imgs = [p for p in val_scenes if p.name in earlier_val]
    elif valid_train:
        references = sorted((real / "images" / "test").glob("*.jpg")) + sorted(REAL_HANDS.glob("*.jpg"))
        held_out = held_out_valid_photos()
        kept = near_duplicates(val, references) | {p for p in val if p.name in held_out}
        movable = [p for p in val if p not in kept]
        moved = rng.sample(movable, min(valid_train, len(movable)))
        train += moved
        moved_set = set(moved)
        val = [p for p in val if p not in moved_set]
        print(f"{len(kept)} valid photos kept out of training (near a test or real-hands photo)")
    val += synth_val_imgs
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.txt").write_text("".join(f"{p.absolute()}\n" for p in train))
    (out / "val.txt").write_text("".join(f"{p.absolute()}\n" for p in val))
    yaml = out / "data.yaml"
    yaml.write_text(f"path: {out.absolute()}\ntrain: train.txt\nval: val.txt\nnames: {list(CLASS_NAMES)}\n")
    print(f"{len(train)} training images ({len(groups)} real photos × ≤{real_variants} variants + {len(moved)} "
          f"valid photos + {min(synth_train, len(synth_imgs))} synthetic), {len(val)} validation images → {yaml}")
    return yaml


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--real", type=Path, required=True, help="output folder of datasets/real.py")
    p.add_argument("--synth", type=Path, nargs="+", required=True,
                   help="output folder(s) of datasets.synth: training scenes from all, validation from the first")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--real-variants", type=int, default=2)
    p.add_argument("--synth-train", type=int, default=900)
    p.add_argument("--synth-val", type=int, default=100)
    valid = p.add_mutually_exclusive_group()
    valid.add_argument("--valid-train", type=int, default=0, help="valid photos to move into training")
    valid.add_argument("--same-valid-as", type=Path, metavar="MIX",
                       help="an earlier mix's folder: reuse its valid photos in training and its validation list")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    if a.same_valid_as is not None and not all((a.same_valid_as / f).is_file() for f in ("train.txt", "val.txt")):
        p.error(f"--same-valid-as {a.same_valid_as}: no train.txt and val.txt there (not a mix folder)")
    write_mix(a.real, a.synth, a.out, a.real_variants, a.synth_train, a.synth_val, a.seed, a.valid_train,
              a.same_valid_as)
    return 0


if __name__ == "__main__":
    sys.exit(main())
