"""Fit the upright probe (``vision/upright.py``) on rendered tiles of the training styles, and measure it on the
held-out styles' turned photos (phone at ±90°).

    python datasets/upright.py                       # writes models/zhuoji-upright.json
    python datasets/upright.py --scenes 400 --test 60 --seed 7 --out models/zhuoji-upright.json

Each scene of ``datasets/views.py`` (standing rows, flat hands with melds, close-ups, rivers and turned photos, in
turn) gives the crops of its labelled face-up tiles and, from the camera, where the top of each glyph points in
the photo; tiles within 30° of a diagonal are left out (no quarter turn rights them). The crop classifier's
``features`` of each crop at the turn that rights it and at the opposite turn give one difference ``d``; an L2
logistic regression without bias (``d`` is upright, ``-d`` is not) fitted by Newton's method gives the weights.
Printed: the share of tiles whose upright turn the probe prefers, on the training tiles and on the held-out
styles' turned scenes, and the mean and spread of the held-out scores (what ``benchmarks/bench_layout.py``
draws its synthetic evidence from).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import cv2
import numpy as np

from datasets import synth as S
from datasets import views as V
from vision.classify import DEFAULT_CLASSIFIER, Classifier, crop_tiles, file_sha256, to_input
from vision.upright import DEFAULT_UPRIGHT

FIT_VIEWS = ("melds", "standing", "closeup", "river", "turned")
DIAGONAL = 30.0  # degrees off the nearest quarter turn beyond which a tile is left out


def upright_turns(vs: V.ViewScene) -> tuple[np.ndarray, np.ndarray]:
    """(face boxes of the labelled face-up tiles, the quarter turn k that rights each: np.rot90(crop, k)), tiles
    near a diagonal left out."""
    keep = vs.scene.classes < 27  # suited faces: their glyphs have a top
    boxes = vs.scene.face_boxes[keep]
    if not len(boxes):
        return boxes, np.zeros(0, int)
    centres, tops = [], []
    for t in vs.tiles:
        c, _, v, _ = S.tile_frame(t, vs.tileset)
        p, _ = vs.camera.project(np.stack([c, c + 0.3 * vs.tileset.h * v]))
        centres.append(p[0])
        tops.append(p[1] - p[0])
    centres, tops = np.array(centres), np.array(tops)
    mid = (boxes[:, :2] + boxes[:, 2:]) / 2
    nearest = np.argmin(np.hypot(mid[:, None, 0] - centres[None, :, 0], mid[:, None, 1] - centres[None, :, 1]), 1)
    # A glyph whose top points at angle a (image axes, y down) is righted by k quarter turns counter-clockwise.
    a = np.degrees(np.arctan2(tops[nearest, 1], tops[nearest, 0]))
    k = np.round((a + 90) / 90)
    ok = np.abs(a + 90 - 90 * k) < DIAGONAL
    return boxes[ok], k[ok].astype(int) % 4


def differences(classifier: Classifier, styles: list[str], seed: int, n: int,
                views: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(tiles, features) differences f(upright) - f(upside down) of the tiles of ``n`` scenes, and each tile's
    scene number."""
    V.load_styles(styles)
    diffs, scene = [], []
    name = classifier.session.get_inputs()[0].name
    for i in range(n):
        view = views[i % len(views)]
        vs = V.render_view(V.view_rng(seed, view, i), view, styles, 640)
        boxes, k = upright_turns(vs)
        if not len(boxes):
            continue
        crops = crop_tiles(vs.scene.image, boxes, classifier.size, classifier.margin)
        looks = np.stack([classifier.session.run(["features"], {name: to_input(np.rot90(crops, r, axes=(1, 2)))})[0]
                          for r in range(4)], 1)
        rows = np.arange(len(k))
        diffs.append(looks[rows, k] - looks[rows, (k + 2) % 4])
        scene.append(np.full(len(k), i))
    return np.concatenate(diffs).astype(np.float64), np.concatenate(scene)


def fit(d: np.ndarray, lam: float) -> np.ndarray:
    """Weights of an L2 logistic regression without bias: ``d`` upright, ``-d`` not (Newton's method)."""
    x = np.concatenate([d, -d])
    y = np.concatenate([np.ones(len(d)), np.zeros(len(d))])
    w = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1 / (1 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) / len(y) + lam * w
        hess = (x * (p * (1 - p))[:, None]).T @ x / len(y) + lam * np.eye(len(w))
        w -= np.linalg.solve(hess, grad)
        if np.abs(grad).max() < 1e-9:
            break
    return w


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", type=int, default=400, help="training scenes (training styles)")
    ap.add_argument("--test", type=int, default=60, help="turned scenes of the held-out styles to measure on")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--lam", type=float, default=1e-3, help="L2 weight")
    ap.add_argument("--classifier", type=Path, default=DEFAULT_CLASSIFIER)
    ap.add_argument("--out", type=Path, default=DEFAULT_UPRIGHT)
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    classifier = Classifier(args.classifier)
    train, _ = differences(classifier, V.style_names("train"), args.seed, args.scenes, FIT_VIEWS)
    w = fit(train, args.lam)
    test, scene = differences(classifier, V.style_names("held-out"), 100, args.test, ("turned",))
    s = test @ w
    votes = [float(s[scene == i].sum() > 0) for i in np.unique(scene)]
    report = {"train_tiles": len(train), "train_right": round(float(np.mean(train @ w > 0)), 3),
              "test_tiles": len(test), "test_right": round(float(np.mean(s > 0)), 3),
              "test_score_mean": round(float(s.mean()), 3), "test_score_std": round(float(s.std()), 3),
              "test_scenes_right": round(float(np.mean(votes)), 3)}
    print(json.dumps(report))
    args.out.write_text(json.dumps({
        "command": "python datasets/upright.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])),
        "classifier": args.classifier.name, "classifier_sha256": file_sha256(args.classifier), "fit": report,
        "weights": [round(float(v), 6) for v in w]}, indent=1) + "\n")
    print(args.out)


if __name__ == "__main__":
    main()
