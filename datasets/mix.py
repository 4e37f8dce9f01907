"""A training mix of real and synthetic images as ultralytics list files, sized for CPU training.

The real train split holds five augmented variants of each source photo, next to each other in name order; taking
the first share of the files (ultralytics' ``fraction``) would drop whole photos. This keeps every source photo
and picks ``--real-variants`` of its variants at random (seeded), adds ``--synth-train`` synthetic scenes, and
validates on the real valid split plus ``--synth-val`` synthetic scenes::

    python datasets/mix.py --real DIR --synth DIR --out DIR [--real-variants 2] [--synth-train 900] [--synth-val 100]

Writes DIR/train.txt, DIR/val.txt and DIR/data.yaml (29 classes). Labels stay beside the images of each set.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from vision.classes import CLASS_NAMES  # noqa: E402

# Valid photos whose every box carries the same label (9 = 1p) although they show mixed tiles: they would skew
# checkpoint selection, so they are left out of validation.
MISLABELLED_VALID = {f"IMG_{n}" for n in (2778, 2779, 2780, 2781, 2783, 2786, 2788)}


def source_photo(name: str) -> str:
    """The source photo of an export variant: ``<root>_jpg.rf.<hash>.jpg`` → ``<root>``."""
    return re.sub(r"_(jpe?g|png)\.rf\.[0-9a-f]+\.\w+$", "", name, flags=re.I)


def write_mix(real: Path, synth: Path, out: Path, real_variants: int = 2, synth_train: int = 900,
              synth_val: int = 100, seed: int = 0) -> Path:
    rng = random.Random(seed)
    groups: dict[str, list[Path]] = defaultdict(list)
    for img in sorted((real / "images" / "train").glob("*.jpg")):
        groups[source_photo(img.name)].append(img)
    train = [p for key in sorted(groups) for p in rng.sample(groups[key], min(real_variants, len(groups[key])))]
    synth_imgs = sorted((synth / "images" / "train").glob("*.jpg"))
    train += rng.sample(synth_imgs, min(synth_train, len(synth_imgs)))
    val = [p for p in sorted((real / "images" / "valid").glob("*.jpg"))
           if source_photo(p.name) not in MISLABELLED_VALID]
    val += sorted((synth / "images" / "val").glob("*.jpg"))[:synth_val]
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.txt").write_text("".join(f"{p.absolute()}\n" for p in train))
    (out / "val.txt").write_text("".join(f"{p.absolute()}\n" for p in val))
    yaml = out / "data.yaml"
    yaml.write_text(f"path: {out.absolute()}\ntrain: train.txt\nval: val.txt\nnames: {list(CLASS_NAMES)}\n")
    print(f"{len(train)} training images ({len(groups)} real photos × ≤{real_variants} variants + "
          f"{min(synth_train, len(synth_imgs))} synthetic), {len(val)} validation images → {yaml}")
    return yaml


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--real", type=Path, required=True, help="output folder of datasets/real.py")
    p.add_argument("--synth", type=Path, required=True, help="output folder of datasets/synth.py")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--real-variants", type=int, default=2)
    p.add_argument("--synth-train", type=int, default=900)
    p.add_argument("--synth-val", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    write_mix(a.real, a.synth, a.out, a.real_variants, a.synth_train, a.synth_val, a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
