"""Build the speed benchmarks' inputs, reproducibly, from the real test photos (no real 12 MP photos ship).

    python benchmarks/make_inputs.py [--out benchmarks/inputs] [--seed 0]

Writes (under ``--out``, git-ignored):

* ``phone/``: 12 MP (4000×3000) JPEGs of one hand: real test photos of 13–16 labelled tiles, scaled up to the
  photo's full height and set on a table-coloured 4:3 canvas (the tiles 180–250 px wide, as a phone held over a
  hand shows them).
* ``catalogue/``: 8 MP (3264×2448) JPEGs of 150 small tiles: the test photos' labelled tile crops laid in a 15×10
  grid with jitter, each tile about 64 px wide, 85 px tall (about 17 px tall at the detector's 640 px view of the whole photo).
  Their labels (YOLO, the real dataset's class ids) are in ``catalogue_labels/``.
* ``frames/``: 640 px frames: real test photos as they are.
* ``mixed/``: 25 photos of mixed sizes, 0.4–12 MP: test photos scaled to 640², 1280×960, 2048×1536, 3264×2448
  and 4000×3000, in turn.
* ``live_720p.mp4``: 10 s of 720p video at 30 frames/s from one hand photo (``tests/data/real_hands/hand_01.jpg``), panned gently left and right
  (±60 px, one sweep per 4 s) with a pixel or two of hand-held jitter.

The functions are also what the live-mode test builds its video with.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "datasets" / "rf-chinese-mahjong-v4"
TABLE_BGR = (60, 110, 50)  # a green table cloth
LIVE_HAND = ROOT / "tests" / "data" / "real_hands" / "hand_01.jpg"  # a real photo of one 14-tile hand in a row


def table(width: int, height: int, rng: np.random.Generator) -> np.ndarray:
    """A table-coloured canvas with a little cloth texture (noise blurred to a weave)."""
    noise = rng.normal(0, 10, (height // 4 + 1, width // 4 + 1, 1)).astype(np.float32)
    noise = cv2.resize(noise, (width, height), interpolation=cv2.INTER_LINEAR)[:height, :width, None]
    return np.clip(np.array(TABLE_BGR, np.float32) + noise, 0, 255).astype(np.uint8)


def phone_photo(photo: np.ndarray, rng: np.random.Generator, size: tuple[int, int] = (4000, 3000)) -> np.ndarray:
    """``photo`` scaled to the canvas height, centred on a table canvas of ``size`` (width, height)."""
    w, h = size
    s = h / photo.shape[0]
    big = cv2.resize(photo, (round(photo.shape[1] * s), h), interpolation=cv2.INTER_CUBIC)[:, :w]
    out = table(w, h, rng)
    x0 = (w - big.shape[1]) // 2
    out[:, x0:x0 + big.shape[1]] = big
    return out


def scaled(photo: np.ndarray, size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """``photo`` at ``size``: a square photo scaled to the height and set on a table canvas of that size."""
    return phone_photo(photo, rng, size)


def tile_crops(images: list[Path], limit: int = 600) -> list[tuple[np.ndarray, int]]:
    """The labelled tiles of the real photos (YOLO labels beside them), cut out with a 2 px margin, with their
    class (the dataset's class ids)."""
    crops = []
    for path in images:
        img = cv2.imread(str(path))
        label = path.parents[2] / "labels" / path.parent.name / f"{path.stem}.txt"
        if img is None or not label.is_file():
            continue
        h, w = img.shape[:2]
        for line in label.read_text().split("\n"):
            parts = line.split()
            if len(parts) != 5:
                continue
            cx, cy, bw, bh = (float(v) for v in parts[1:])
            x0, y0 = max(0, round((cx - bw / 2) * w) - 2), max(0, round((cy - bh / 2) * h) - 2)
            x1, y1 = min(w, round((cx + bw / 2) * w) + 2), min(h, round((cy + bh / 2) * h) + 2)
            if x1 - x0 >= 12 and y1 - y0 >= 12:
                crops.append((img[y0:y1, x0:x1], int(parts[0])))
            if len(crops) >= limit:
                return crops
    return crops


def catalogue(crops: list[tuple[np.ndarray, int]], rng: np.random.Generator, size: tuple[int, int] = (3264, 2448),
              cols: int = 15, rows: int = 10, tile_width: int = 64) -> tuple[np.ndarray, str]:
    """``cols × rows`` tiles drawn from ``crops``, each scaled to ``tile_width`` px wide, in a jittered grid
    in the middle of a table canvas; and its YOLO labels (the dataset's class ids)."""
    labels = []
    w, h = size
    out = table(w, h, rng)
    cell_w, cell_h = round(tile_width * 1.5), round(tile_width * 1.9)
    x_start, y_start = (w - cols * cell_w) // 2, (h - rows * cell_h) // 2
    for r in range(rows):
        for c in range(cols):
            crop, cls = crops[int(rng.integers(len(crops)))]
            s = tile_width / crop.shape[1]
            tile = cv2.resize(crop, (tile_width, max(8, round(crop.shape[0] * s))), interpolation=cv2.INTER_CUBIC)
            tile = tile[:cell_h - 8]
            x = x_start + c * cell_w + int(rng.integers(0, cell_w - tile_width))
            y = y_start + r * cell_h + int(rng.integers(0, max(1, cell_h - tile.shape[0])))
            out[y:y + tile.shape[0], x:x + tile.shape[1]] = tile
            th, tw = tile.shape[:2]
            labels.append(f"{cls} {(x + tw / 2) / w:.6f} {(y + th / 2) / h:.6f} {tw / w:.6f} {th / h:.6f}")
    return out, "\n".join(labels) + "\n"


def panned_frames(photo: np.ndarray, seconds: float = 10.0, fps: float = 30.0, size: tuple[int, int] = (1280, 720),
                  pan: float = 60.0, period: float = 4.0, jitter: float = 1.5, noise: float = 4.0,
                  flicker: float = 0.03, seed: int = 0):
    """Frames of a hand photo in a ``size`` view, panned left and right by ``pan`` px (a sine of ``period`` s)
    with ``jitter`` px of random hand-held shake, ``noise`` grey levels of sensor noise and ``flicker`` (a share) of
    exposure change per frame: a still hand filmed by a gently moving camera."""
    rng = np.random.default_rng(seed)
    w, h = size
    s = h / photo.shape[0]
    big = cv2.resize(photo, (round(photo.shape[1] * s), h), interpolation=cv2.INTER_CUBIC)
    canvas = table(w + 4 * round(pan), h + 40, np.random.default_rng(seed))
    x0 = (canvas.shape[1] - big.shape[1]) // 2
    canvas[20:20 + h, x0:x0 + big.shape[1]] = big
    for i in range(round(seconds * fps)):
        dx = pan * math.sin(2 * math.pi * i / (fps * period)) + rng.normal(0, jitter)
        dy = rng.normal(0, jitter)
        m = np.float32([[1, 0, -(canvas.shape[1] - w) / 2 + dx], [0, 1, -20 + dy]])
        frame = cv2.warpAffine(canvas, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        gain = 1.0 + rng.uniform(-flicker, flicker)
        grain = rng.normal(0, noise, (h, w, 1)).astype(np.float32)
        yield np.clip(frame.astype(np.float32) * gain + grain, 0, 255).astype(np.uint8)


def write_video(path: Path, frames, fps: float = 30.0) -> Path:
    writer = None
    for frame in frames:
        if writer is None:
            fourcc = cv2.VideoWriter_fourcc(*("MJPG" if path.suffix == ".avi" else "mp4v"))
            writer = cv2.VideoWriter(str(path), fourcc, fps, (frame.shape[1], frame.shape[0]))
            if not writer.isOpened():
                raise RuntimeError(f"cannot write {path}")
        writer.write(frame)
    if writer is not None:
        writer.release()
    return path


def hand_photos(images: list[Path]) -> list[Path]:
    """The test photos of one hand: 13–16 labelled tiles."""
    out = []
    for p in images:
        label = p.parents[2] / "labels" / p.parent.name / f"{p.stem}.txt"
        if label.is_file() and 13 <= len(label.read_text().split("\n")) - (label.read_text().endswith("\n")) <= 16:
            out.append(p)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "inputs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--photos", type=int, default=10, help="photos per set (phone, catalogue, frames)")
    args = ap.parse_args()
    images = sorted((REAL / "images" / "test").glob("*.jpg"))
    if not images:
        ap.error(f"no test photos under {REAL}")
    rng = np.random.default_rng(args.seed)
    hands = hand_photos(images)
    jpeg = [cv2.IMWRITE_JPEG_QUALITY, 90]
    for sub in ("phone", "catalogue", "catalogue_labels", "frames", "mixed"):
        (args.out / sub).mkdir(parents=True, exist_ok=True)
    for i, p in enumerate(hands[:args.photos]):
        cv2.imwrite(str(args.out / "phone" / f"phone_{i:02d}.jpg"), phone_photo(cv2.imread(str(p)), rng), jpeg)
        cv2.imwrite(str(args.out / "frames" / f"frame_{i:02d}.jpg"), cv2.imread(str(p)), jpeg)
    crops = tile_crops(images)
    for i in range(args.photos):
        image, labels = catalogue(crops, rng)
        cv2.imwrite(str(args.out / "catalogue" / f"catalogue_{i:02d}.jpg"), image, jpeg)
        (args.out / "catalogue_labels" / f"catalogue_{i:02d}.txt").write_text(labels)
    sizes = [(640, 640), (1280, 960), (2048, 1536), (3264, 2448), (4000, 3000)]
    for i, p in enumerate(images[:25]):
        cv2.imwrite(str(args.out / "mixed" / f"mixed_{i:02d}.jpg"),
                    scaled(cv2.imread(str(p)), sizes[i % len(sizes)], rng), jpeg)
    write_video(args.out / "live_720p.mp4", panned_frames(cv2.imread(str(LIVE_HAND)), seed=args.seed))
    print(f"wrote {args.out}: phone/ {len(list((args.out / 'phone').glob('*.jpg')))}, catalogue/ {args.photos}, "
          f"frames/ {len(list((args.out / 'frames').glob('*.jpg')))}, mixed/ 25, live_720p.mp4 (from {LIVE_HAND.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
