"""The builder: scenes written as an ultralytics dataset (images, labels, difficult words, data.yaml), previews
with the boxes drawn, and the command line (``python -m datasets.synth``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from datasets.synth.artwork import KMJ_STYLES, SHARED, available_styles, get_art, set_shared, shared_folder
from datasets.synth.labels import BOX_KINDS, difficult_words, draw_boxes, write_data_yaml, yolo_lines
from datasets.synth.scene import render_scene


def scene_rng(seed: int, index: int) -> np.random.Generator:
    """The generator for scene ``index``: independent of worker count and order."""
    return np.random.default_rng([seed, index])


def _write_one(job: tuple[Path, int, int, int, str, str]) -> int:
    """Render and save scene ``index`` into split ``split``; returns its number of boxes."""
    out, seed, index, size, split, box_kind = job
    scene = render_scene(scene_rng(seed, index), size)
    name = f"{index:06d}"
    cv2.imwrite(str(out / "images" / split / f"{name}.jpg"), scene.image, [cv2.IMWRITE_JPEG_QUALITY, 95])
    boxes = scene.face_boxes if box_kind == "face" else scene.boxes
    lines = yolo_lines(boxes, scene.classes, size)  # no tiles in view (rare): an empty file, a background
    (out / "labels" / split / f"{name}.txt").write_text("".join(f"{ln}\n" for ln in lines))
    (out / "difficult" / split / f"{name}.txt").write_text("".join(f"{w}\n" for w in difficult_words(scene.difficult)))
    return len(lines)


def _init_worker(shared: Path) -> None:
    """Each worker renders on one thread (the workers are the parallelism)."""
    cv2.setNumThreads(1)
    set_shared(shared)


def build(out_dir: str | Path, n: int, seed: int, size: int = 640, val_frac: float = 0.1, workers: int = 1,
          progress: bool = True, boxes: str = "tile") -> Path:
    """Write ``n`` scenes as an ultralytics dataset under ``out_dir``; returns the data.yaml path. ``boxes``
    (:data:`BOX_KINDS`): what each label's box surrounds, the whole tile as seen (``tile``, the default and what
    the shipped models were trained on) or its face alone (``face``, as the real photos are labelled)."""
    if boxes not in BOX_KINDS:
        raise ValueError(f"boxes must be one of {', '.join(BOX_KINDS)}, not {boxes!r}")
    out = Path(out_dir).resolve()
    for kind in ("images", "labels", "difficult"):
        for split in ("train", "val"):
            (out / kind / split).mkdir(parents=True, exist_ok=True)
    n_val = int(round(n * val_frac))
    val = set(np.random.default_rng([seed, 1 << 30]).permutation(n)[:n_val].tolist())
    jobs = [(out, seed, i, size, "val" if i in val else "train", boxes) for i in range(n)]
    styles = sorted(get_art())  # rasterise / load once before forking
    (out / "build.json").write_text(json.dumps({"n": n, "seed": seed, "size": size, "val_frac": val_frac,
                                                "boxes": boxes, "styles": styles}, indent=1) + "\n")
    bar = tqdm(total=n, desc="scenes", unit="img", disable=not progress)
    if workers <= 1:
        cv2.setNumThreads(1)
        for job in jobs:
            _write_one(job)
            bar.update()
    else:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(workers, _init_worker, (shared_folder(),)) as pool:
            for _ in pool.imap_unordered(_write_one, jobs, chunksize=4):
                bar.update()
    bar.close()
    return write_data_yaml(out / "data.yaml", out, "images/train", "images/val")


def preview(out_dir: str | Path, n: int, seed: int, size: int = 640) -> list[Path]:
    """Save ``n`` scenes as PNG with their boxes drawn."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        scene = render_scene(scene_rng(seed, i), size)
        p = out / f"scene_{seed}_{i:03d}.png"
        cv2.imwrite(str(p), draw_boxes(scene.image, scene.boxes, scene.classes, scene.difficult))
        paths.append(p)
    return paths


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m datasets.synth", description="Synthetic table scenes for the tile "
                                 "detector: 3-D tiles on a table, photographed by a phone.")
    ap.add_argument("--out", type=Path, help="dataset folder to write")
    ap.add_argument("--preview", type=Path, help="write PNG previews with boxes here instead of a dataset")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", type=int, default=640)
    ap.add_argument("--val-frac", type=float, default=0.1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--boxes", choices=BOX_KINDS, default="tile",
                    help="what a label's box surrounds: the whole tile as seen (default) or its face alone")
    ap.add_argument("--shared", type=Path, default=SHARED, help="the shared material folder (tile art)")
    args = ap.parse_args(argv)
    set_shared(args.shared)
    if args.preview:
        for p in preview(args.preview, args.n, args.seed, args.size):
            print(p)
        return
    if not args.out:
        ap.error("--out or --preview is required")
    styles = available_styles(args.shared)
    missing = [s for s in KMJ_STYLES if s not in styles]
    print(f"tile styles: {', '.join(styles)}", file=sys.stderr)
    if missing:
        print(f"warning: the KMahjongg styles {', '.join(missing)} are not installed (apt-get install "
              f"kdegames-mahjongg-data-kf5 librsvg2-bin): these scenes differ from those built with them",
              file=sys.stderr)
    print(build(args.out, args.n, args.seed, args.size, args.val_frac, args.workers, boxes=args.boxes))
