"""The player's left on photos taken with the phone at ±90°: rendered ``turned`` scenes through the real pipeline.

    python benchmarks/bench_facing.py --n 60                       # held-out styles, seed 100
    python benchmarks/bench_facing.py --n 60 --view melds          # upright photos: what the look costs there

Each scene is ``datasets/views.py``'s (``turned``: a standing row or a flat hand with melds, the phone held
sideways; the views bench's seed and held-out styles). ``pipeline.photo.read_photo`` reads it twice, without the
faces' evidence (``vision/upright.py``'s probe switched off: the layout as it was) and with it. The concealed
row's boxes are matched to the rendered tiles (nearest tile centre); a row of three or more is in the player's
``direction`` when its tiles' positions along the row rise from the player's left (correlation > 0) and in
``order`` when they rise at every step. ``cpu ms``: median CPU time of ``read_photo`` per photo (all threads; the
wall time on a shared machine says little); ``faces cpu ms``: median CPU time of the faces' look alone
(``vision.upright.look_at_faces``) on the photos where it looks.
"""

from __future__ import annotations

import argparse
import time

import cv2
import numpy as np

from datasets import synth as S
from datasets import views as V
from pipeline.photo import read_photo
from vision import upright
from vision.detect import Detector


def player_positions(vs: V.ViewScene, centres: np.ndarray) -> np.ndarray:
    """Each box centre's nearest rendered tile, as its position along the row from the player's left (x)."""
    tiles = np.array([vs.camera.project(S.tile_frame(t, vs.tileset)[0][None])[0][0] for t in vs.tiles])
    d = np.hypot(centres[:, None, 0] - tiles[None, :, 0], centres[:, None, 1] - tiles[None, :, 1])
    return np.array([vs.tiles[k].x for k in np.argmin(d, 1)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--view", default="turned", choices=V.VIEWS)
    ap.add_argument("--styles", default="held-out")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    names = V.style_names(args.styles)
    V.load_styles(names)
    detector = Detector()
    probe = detector.upright
    if probe is None:
        raise SystemExit("no upright probe for this crop classifier: run datasets/upright.py")
    looks: list[float] = []
    tally = {"without": [0, 0, []], "with": [0, 0, []]}
    rows = 0
    for i in range(args.n):
        vs = V.render_view(V.view_rng(args.seed, args.view, i), args.view, names, 640)
        results = {}
        for name, p in (("without", None), ("with", probe)):
            detector.upright = p
            t0 = time.process_time()
            photo = read_photo(detector, vs.scene.image)
            tally[name][2].append(time.process_time() - t0)
            results[name] = [t.box for t in photo.layout.concealed], photo.dets.centers
            if p is None:
                t0 = time.process_time()
                if upright.look_at_faces(detector.classifier, probe, vs.scene.image, photo.dets, photo.layout):
                    looks.append(time.process_time() - t0)
        if len(results["without"][0]) < 3:
            continue
        rows += 1
        for name, (boxes, centres) in results.items():
            x = player_positions(vs, centres[boxes])
            tally[name][0] += float(np.corrcoef(np.arange(len(x)), x)[0, 1]) > 0
            tally[name][1] += bool(np.all(np.diff(x) > 0))
    print(f"{args.view} scenes {args.n}, rows of 3+ concealed tiles {rows}, looked at the faces on "
          f"{len(looks)} photos (faces cpu ms median {1e3 * np.median(looks) if looks else 0:.1f})")
    print(f"{'faces':<9}{'direction':>10}{'order':>8}{'cpu ms':>8}")
    for name, (direction, order, ms) in tally.items():
        print(f"{name:<9}{direction / max(rows, 1):>10.3f}{order / max(rows, 1):>8.3f}{1e3 * np.median(ms):>8.1f}")


if __name__ == "__main__":
    main()
