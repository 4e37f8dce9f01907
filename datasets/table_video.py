"""A camera fixed over the table through the end of a round, as frames: for live mode's table watch (``zhuoji live
--table``) and its tests.

One table scene of ``views`` (view ``table``) is drawn in three states under one camera, one light and one table
cloth: ``play`` (the hands standing, as during play: the camera sees their backs and tops), ``laid`` (every hand laid
face up: the scene ``views.render_table_round`` draws, with its truth) and ``pushed`` (every tile turned face down
and pushed together in the middle for the next deal). :func:`round_frames` strings them into a video: play with
arms reaching over the table, a still spell of play, the hands laid down and held still, an arm passing over the
laid table, then the tiles pushed in. Each frame gets a fixed camera's noise: a sub-pixel shake, sensor noise and a
flicker of the exposure.

    PYTHONPATH=. python -m datasets.table_video --out round.avi   # write one such video (MJPG)
"""

from __future__ import annotations

import argparse
import copy
import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from datasets import synth as S
from datasets import views as V
from vision.detections import Detections

HEAP_SCALE = 0.45  # pushed in: each tile's distance from the centre shrinks to this share (then jitters)
ARM_COLOUR = (118, 150, 205)  # BGR: a sleeve-less forearm under room light


@dataclass
class TableImage:
    """One state of the table as the camera sees it: the image, and what a perfect detector reports on it."""

    image: np.ndarray
    face_boxes: np.ndarray  # N × 4, the labelled faces (or backs) in pixels
    classes: np.ndarray  # N, the detector's classes

    def detections(self, keep: np.ndarray | None = None) -> Detections:
        """The labels as a detector's boxes (confidence 0.95), only ``keep`` when given (a bool per label)."""
        keep = np.ones(len(self.classes), bool) if keep is None else keep
        h, w = self.image.shape[:2]
        return Detections(self.face_boxes[keep].astype(np.float32), np.full(int(keep.sum()), 0.95, np.float32),
                          self.classes[keep].astype(np.int64), image_size=(w, h))


@dataclass
class TableStates:
    """The table in its three states under one camera, and the laid table's truth (``TableScene.to_json``)."""

    play: TableImage
    laid: TableImage
    pushed: TableImage
    truth: dict


def table_states(rng: np.random.Generator, styles: list[str], size: int = V.TABLE_SIZE, camera: str = "above",
                 messy: bool = False, winner: bool = True) -> TableStates:
    """Draw one round (as ``views.render_table_round`` does) and render it standing, laid and pushed in."""
    style = V.pick_style(rng, styles)
    ts = V.tileset(rng, style)
    deck = S.Deck(rng, [])
    tiles, truth = V.layout_table_round(deck, ts, rng, int(rng.integers(4)) if winner else None, messy, camera)
    cam = V.table_camera(rng, camera, tiles, ts, size)
    light, gloss = V.random_light(rng, cam), V.Gloss(rng.uniform(0.1, 0.5), rng.uniform(8, 80))
    seeds = rng.integers(0, 2**32, size=2)

    def draw(state_tiles: list[S.TilePose], sources: list[tuple[int, float]] | None = None) -> TableImage:
        # the same cloth, shadows and colour grading in every state: each draw starts from the same seeds
        img, labels = V.compose(np.random.default_rng(seeds[0]), cam, state_tiles, copy.copy(ts), light, gloss,
                                sources)
        img = S.photometric(img, np.random.default_rng(seeds[1]))
        return TableImage(img, labels.face_boxes, labels.classes)

    sources: list[tuple[int, float]] = []
    laid = draw(tiles, sources)
    scene = S.Scene(laid.image, np.zeros((0, 4)), laid.face_boxes, laid.classes, [])
    answer = V.TableScene(V.ViewScene(scene, "table", style, tiles, ts, cam), truth, sources).to_json()
    standing = copy.deepcopy(tiles)
    for t, (_seat, role, _order) in zip(standing, truth.roles, strict=True):
        if role == "hand":
            t.pose = "stand"
    return TableStates(draw(standing), laid, draw(pushed_in(tiles, ts, rng)), answer)


def pushed_in(tiles: list[S.TilePose], ts: S.TileSet, rng: np.random.Generator) -> list[S.TilePose]:
    """Every tile face down, pushed towards the middle and turned every which way; a tile that would land on one
    already placed is left out (it lies under the heap)."""
    out: list[S.TilePose] = []
    placed: list[np.ndarray] = []
    for t in rng.permutation(len(tiles)):
        src = tiles[int(t)]
        moved = S.TilePose(src.face, "down", src.x * HEAP_SCALE + rng.normal(0, 0.8),
                           src.y * HEAP_SCALE + rng.normal(0, 0.8), float(rng.uniform(-math.pi, math.pi)))
        rect = S.tile_corners(moved, ts)[:4, :2]
        if any(S.polys_overlap(rect, o) for o in placed):
            continue
        placed.append(rect)
        out.append(moved)
    return out


def with_arm(image: np.ndarray, rng: np.random.Generator, reach: float | None = None) -> np.ndarray:
    """A forearm and hand reaching in from a random edge, ``reach`` (0..1) of the way to the middle."""
    h, w = image.shape[:2]
    out = image.copy()
    side = int(rng.integers(4))
    along = rng.uniform(0.2, 0.8)
    start = [(along * w, h), (w, along * h), (along * w, 0), (0, along * h)][side]
    reach = rng.uniform(0.25, 0.55) if reach is None else reach
    end = (start[0] + (w / 2 - start[0]) * reach * 2, start[1] + (h / 2 - start[1]) * reach * 2)
    thick = max(8, int(0.07 * w))
    colour = tuple(int(c * rng.uniform(0.85, 1.1)) for c in ARM_COLOUR)
    p0, p1 = tuple(int(v) for v in start), tuple(int(v) for v in end)
    cv2.line(out, p0, p1, colour, thick, cv2.LINE_AA)
    cv2.circle(out, p1, int(thick * 0.8), colour, -1, cv2.LINE_AA)
    return out


def camera_noise(image: np.ndarray, rng: np.random.Generator, shake: float = 0.7, noise: float = 2.0,
                 flicker: float = 0.01) -> np.ndarray:
    """A fixed camera's frame of a still table: a sub-pixel shake, sensor noise, a flicker of the exposure."""
    h, w = image.shape[:2]
    dx, dy = rng.uniform(-shake, shake, 2)
    moved = cv2.warpAffine(image, np.float32([[1, 0, dx], [0, 1, dy]]), (w, h), flags=cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_REFLECT)
    out = moved.astype(np.float32) * rng.normal(1.0, flicker) + rng.normal(0, noise, moved.shape)
    return np.clip(out, 0, 255).astype(np.uint8)


# The script of a round's end: (state, frames, arm): play with arms over the table, a still spell of play, the
# hands laid down (arms over the laid table), held still, an arm passing over, still again, then pushed in.
ROUND_SCRIPT: tuple[tuple[str, int, bool], ...] = (
    ("play", 6, True), ("play", 6, False), ("laid", 3, True), ("laid", 10, False), ("laid", 2, True),
    ("laid", 6, False), ("pushed", 3, True), ("pushed", 8, False),
)


def round_frames(states: TableStates, rng: np.random.Generator,
                 script: tuple[tuple[str, int, bool], ...] = ROUND_SCRIPT) -> list[tuple[str, np.ndarray]]:
    """The frames of ``script`` (state name, frame count, an arm in view), each with the camera's noise."""
    frames = []
    for state, count, arm in script:
        image = getattr(states, state).image
        for _ in range(count):
            frames.append((state, camera_noise(with_arm(image, rng) if arm else image, rng)))
    return frames


def write_video(path: Path, frames: list[np.ndarray], fps: float = 5.0) -> Path:
    """Frames as an MJPG .avi (OpenCV writes it everywhere without extra codecs)."""
    h, w = frames[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (w, h))
    if not writer.isOpened():
        raise ValueError(f"cannot write video {path}")
    for f in frames:
        writer.write(f)
    writer.release()
    return path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="the video to write (.avi)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", type=int, default=V.TABLE_SIZE)
    ap.add_argument("--camera", choices=V.TABLE_CAMERAS, default="above")
    ap.add_argument("--styles", default="held-out")
    args = ap.parse_args(argv)
    names = V.style_names(args.styles)
    V.load_styles(names)
    rng = np.random.default_rng(args.seed)
    states = table_states(rng, names, args.size, args.camera)
    write_video(args.out, [f for _, f in round_frames(states, rng)])
    print(f"{args.out}: {sum(n for _, n, _ in ROUND_SCRIPT)} frames; laid table: " + "; ".join(
        f"seat {s['seat']} {''.join(s['concealed'])}" for s in states.truth["seats"]))


if __name__ == "__main__":
    main()
