"""Tile styles and view scenes (datasets/styles.py, datasets/views.py): faces drawn as named, labels that match the
tiles placed, held-out styles kept out of training."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from types import ModuleType

import cv2
import numpy as np
import pytest

from tests.datasets.support import load_dataset_script
from vision.classes import CLASS_NAMES, NUM_CLASSES, OTHER

ROOT = Path(__file__).resolve().parents[2]
SIZE = 320




@pytest.fixture(scope="module")
def views(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    old = os.environ.get("ZHUOJI_CACHE")
    os.environ["ZHUOJI_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    module = load_dataset_script("views")
    art = module.S.artwork
    kmj_dir, shared = art.KMJ_DIR, art.shared_folder()
    art.KMJ_DIR = Path("/nonexistent")  # optional GPL tilesets: not used in tests (as in test_synth.py)
    module.S.set_shared(ROOT.parent / "shared")
    yield module
    # The builder is one module shared with other tests: put it back, without the styles added here.
    art.KMJ_DIR = kmj_dir
    module.S.set_shared(shared)
    art._art_of.cache_clear()
    art._scaled_glyph.cache_clear()
    if old is None:
        os.environ.pop("ZHUOJI_CACHE", None)
    else:
        os.environ["ZHUOJI_CACHE"] = old


@pytest.fixture(scope="module")
def styles(views: ModuleType) -> ModuleType:
    return views.styles_mod


def some_styles(views: ModuleType) -> list[str]:
    """Two procedural styles where their fonts are installed, else the CC0 artwork alone."""
    procedural = views.styles_mod.available()[:2]
    names = procedural or ["fluffy"]
    views.load_styles(names)
    return names


def test_procedural_faces_are_distinct_and_complete(styles: ModuleType) -> None:
    names = styles.available()
    if not names:
        pytest.skip("no CJK font of datasets/styles.py installed (apt-get install fonts-noto-cjk ...)")
    faces = styles.faces(names[0])
    suited = list(CLASS_NAMES[:27])
    assert set(suited) <= set(faces)
    assert sum(f.startswith(f"other/{names[0]}/") for f in faces) == len(styles.HONOURS)
    for f in faces.values():
        assert f.shape == (styles.TEX_H, styles.TEX_W, 4) and f.dtype == np.uint8
        assert (f[..., 3] > 128).mean() > 0.01  # there is ink
    # every suited face differs from every other (no two tiles drawn alike)
    ink = np.stack([faces[f][..., 3].astype(np.float32) for f in suited])
    diff = np.abs(ink[:, None] - ink[None]).mean((2, 3))
    assert (diff + np.eye(27) * 1e9).min() > 2.0
    if len(names) > 1:  # and styles differ: the 1s bird of two styles is not the same drawing
        assert np.abs(faces["1s"].astype(np.float32) - styles.faces(names[1])["1s"]).mean() > 2.0


def test_held_out_styles_stay_out_of_training(views: ModuleType, styles: ModuleType) -> None:
    assert set(styles.HELD_OUT) <= set(styles.PROCEDURAL)
    train = views.style_names("train")
    assert not set(train) & set(styles.HELD_OUT)
    assert "fluffy" in train
    assert set(views.style_names("held-out")) <= set(styles.HELD_OUT)
    with pytest.raises(ValueError):
        views.style_names("no-such-style")


def test_random_styles_vary_and_never_take_what_is_held_out(views: ModuleType, styles: ModuleType) -> None:
    """``rand-N`` styles are fixed by N, differ from each other, and never use the held-out font or bird."""
    drawn = [styles.random_style(i) for i in range(200)]
    assert styles.random_style(7) == drawn[7] and styles.get("rand-7") == drawn[7]
    assert not {s.font for s in drawn} & set(styles.HELD_OUT_FONTS)
    assert not {s.bird for s in drawn} & set(styles.HELD_OUT_BIRDS)
    assert len({s.font for s in drawn}) >= 4 and len({s.bird for s in drawn}) >= 4
    assert min(s.weight for s in drawn) < 0 < max(s.weight for s in drawn)
    # the held-out styles do use them: what they test stays unseen in training
    assert {styles.PROCEDURAL[h].font for h in styles.HELD_OUT} & set(styles.HELD_OUT_FONTS)
    assert {styles.PROCEDURAL[h].bird for h in styles.HELD_OUT} & set(styles.HELD_OUT_BIRDS)
    with pytest.raises(KeyError):
        styles.get("rand-x")


def test_random_styles_join_training_sets_only(views: ModuleType) -> None:
    names = views.style_names("train", random_styles=5)
    assert names[-5:] == [f"rand-{i}" for i in range(5)]
    with pytest.raises(ValueError):
        views.style_names("held-out", random_styles=5)
    rng = np.random.default_rng(0)
    picks = [views.pick_style(rng, names) for _ in range(2000)]
    share = sum(p.startswith("rand-") for p in picks) / len(picks)
    assert 0.45 < share < 0.55  # half the scenes, however few random styles there are
    fixed = [n for n in names if not n.startswith("rand-")]
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)  # without random styles: as before
    assert [views.pick_style(rng_a, fixed) for _ in range(20)] == [fixed[int(rng_b.integers(len(fixed)))]
                                                                    for _ in range(20)]


def test_randx_styles_add_fonts_and_leave_rand_styles_as_they_were(views: ModuleType, styles: ModuleType) -> None:
    """``randx-N`` draw their font from ``MORE_FONTS`` as well (those installed); ``rand-N`` never do, so that a
    training set's command keeps making the same scenes. Neither takes the held-out font, and no extra font is the
    one the held-out handwriting font was drawn from (Klee One)."""
    assert styles.get("randx-7") == styles.random_style(7, more_fonts=True)
    assert styles.get("randx-7").name == "randx-7" and styles.is_random("randx-7") and styles.is_random("rand-7")
    assert not styles.is_random("randx-") and not styles.is_random("random-3")
    plain = {styles.random_style(i).font for i in range(300)}
    more = {styles.random_style(i, more_fonts=True).font for i in range(300)}
    assert not plain & set(styles.MORE_FONTS)
    assert not (plain | more) & set(styles.HELD_OUT_FONTS)
    installed = {f for f, (path, _) in styles.MORE_FONTS.items() if Path(path).exists()}
    assert more - set(styles.FONTS) == installed  # 300 draws reach every installed extra font
    assert not any("klee" in path.lower() for path, _ in styles.MORE_FONTS.values())
    names = views.style_names("train", random_styles=3, more_fonts=True)
    assert names[-3:] == ["randx-0", "randx-1", "randx-2"]
    rng = np.random.default_rng(0)
    share = sum(views.pick_style(rng, names).startswith("randx-") for _ in range(1000)) / 1000
    assert 0.4 < share < 0.6


def test_randw_styles_add_drawings_and_leave_randx_styles_as_they_were(views: ModuleType, styles: ModuleType) -> None:
    """``randw-N`` draw dots, bamboo sticks, spread and birds from more drawings (birds put together at random
    among them); ``randx-N`` keep every field as before (a default), so earlier sets stay reproducible."""
    old = [styles.random_style(i, more_fonts=True) for i in range(200)]
    assert all(s.stick == "joints" and s.spread == 1.0 and s.bird != "drawn" for s in old)
    assert {s.dot for s in old} <= set(styles.DOT_DRAWINGS)
    new = [styles.get(f"randw-{i}") for i in range(200)]
    assert new[5].name == "randw-5" and styles.is_random("randw-5") and new[5] == styles.random_style(5, family="randw")
    assert {s.dot for s in new} == set(styles.DOT_DRAWINGS + styles.MORE_DOTS)
    assert {s.stick for s in new} == set(styles.STICKS_DRAWN)
    assert 0.3 < sum(s.bird == "drawn" for s in new) / len(new) < 0.7
    assert not {s.bird for s in new} & set(styles.HELD_OUT_BIRDS) and not {s.font for s in new} & set(styles.HELD_OUT_FONTS)
    assert views.style_names("train", random_styles=2, family="randw")[-2:] == ["randw-0", "randw-1"]
    if not styles.available():
        return
    drawn = [s.name for s in new if s.bird == "drawn"][:4]  # each a bird of its own
    birds = [styles.render(n, "1s") for n in drawn]
    assert all(0.03 < (b[..., 3] > 128).mean() < 0.6 for b in birds)
    assert all(np.abs(a.astype(int) - b.astype(int)).mean() > 3 for a, b in zip(birds, birds[1:], strict=False))
    for dot in styles.MORE_DOTS:
        name = next(s.name for s in new if s.dot == dot)
        assert (styles.render(name, "5p")[..., 3] > 128).mean() > 0.05
    for stick in styles.STICKS_DRAWN:
        name = next(s.name for s in new if s.stick == stick)
        assert (styles.render(name, "8s")[..., 3] > 128).mean() > 0.05


def test_a_random_style_draws_every_face(styles: ModuleType) -> None:
    if not styles.available():
        pytest.skip("no CJK font of datasets/styles.py installed")
    seed = next(i for i in range(100) if styles.random_style(i).weight > 1.0)
    thick, plain = styles.render(f"rand-{seed}", "5m"), styles.render("noto-sans-a", "5m")
    assert thick.shape == plain.shape == (styles.TEX_H, styles.TEX_W, 4)
    assert (thick[..., 3] > 128).mean() > 0.05
    birds = {b: styles.render(f"rand-{next(i for i in range(200) if styles.random_style(i).bird == b)}", "1s")
             for b in ("crane", "duck")}
    assert all((f[..., 3] > 128).mean() > 0.03 for f in birds.values())


def test_a_row_seen_from_above_is_labelled_tile_by_tile(views: ModuleType) -> None:
    """Every tile of a flat row in full view gets exactly one label, of its class, its box around its face."""
    S = views.S
    style = some_styles(views)[0]
    rng = np.random.default_rng(3)
    ts = views.tileset(rng, style)
    faces = ["1s", "9m", "5p", "7s", "2m", "8p", views.honours(style)[0] if views.honours(style) else "3s"]
    tiles = S.row([(f, "up", i == 3) for i, f in enumerate(faces)], ts, rng, gap=0.1)
    tiles.append(S.TilePose("4p", "down", 3.0, 2.2, 0.0))  # a face-down tile: `back`
    cam = views.frame_camera(rng, tiles, ts, SIZE, 0.0, -math.pi / 2, 0.0, 0.8, 1.0)
    img, labels = views.compose(rng, cam, tiles, ts, S.Light(np.array([0.3, 0.2, 0.93]), 0.6), views.Gloss(0.4, 30))
    assert img.shape == (SIZE, SIZE, 3)
    assert len(labels.classes) == len(tiles)
    assert sorted(labels.classes.tolist()) == sorted(t.label for t in tiles)
    assert (labels.face_boxes >= 0).all() and (labels.face_boxes <= SIZE).all()
    # the face box of each tile is its face quad's bounds: the turned 7s is wider than tall
    turned = labels.face_boxes[labels.classes == CLASS_NAMES.index("7s")][0]
    assert turned[2] - turned[0] > turned[3] - turned[1]
    if views.honours(style):
        assert OTHER in labels.classes


@pytest.mark.parametrize("view", ["standing", "melds", "river", "closeup", "turned", "heap", "kongs"])
def test_each_view_renders_with_valid_labels(views: ModuleType, view: str) -> None:
    names = some_styles(views)
    vs = views.render_view(views.view_rng(7, view, 0), view, names, SIZE)
    sc = vs.scene
    assert sc.image.shape == (SIZE, SIZE, 3)
    assert len(sc.classes) > 0
    assert ((sc.classes >= 0) & (sc.classes < NUM_CLASSES)).all()
    assert (sc.face_boxes[:, :2] >= 0).all() and (sc.face_boxes[:, 2:] <= SIZE).all()
    assert (sc.face_boxes[:, 2:] > sc.face_boxes[:, :2]).all()
    # one label per tile at most; every tile whose whole outline is in view and that lies flat is labelled
    S = views.S
    in_view = [p for p in (S.place(vs.camera, t, vs.tileset) for t in vs.tiles)
               if p is not None and p.box(SIZE)[1] >= 1.0 and p.tile.pose != "stand"]
    assert len(in_view) <= len(sc.classes) <= len(vs.tiles)
    if view == "turned":  # the phone was held sideways: the row runs up the frame
        cx = (sc.face_boxes[:, 0] + sc.face_boxes[:, 2]) / 2
        cy = (sc.face_boxes[:, 1] + sc.face_boxes[:, 3]) / 2
        assert np.ptp(cy) > np.ptp(cx)


def test_a_heap_is_one_dense_pile_without_overlaps(views: ModuleType) -> None:
    """The heap view's tiles touch at any angle, as a heap pushed together after a hand does, and never overlap."""
    S = views.S
    style = some_styles(views)[0]
    rng = np.random.default_rng(11)
    ts = views.tileset(rng, style)
    tiles = views.dense_heap(S.Deck(rng, views.honours(style)), ts, rng, 60, p_other=0.1, p_down=0.05)
    assert len(tiles) >= 50
    rects = [S.tile_corners(t, ts)[:4, :2] for t in tiles]
    assert not any(S.polys_overlap(a, b) for i, a in enumerate(rects) for b in rects[i + 1:])
    reach = math.hypot(ts.w, ts.h)
    for t in tiles:  # no stray: every tile lies within a tile's diagonal of another
        assert min(math.hypot(t.x - u.x, t.y - u.y) for u in tiles if u is not t) <= reach
    # compact: the tiles cover at least a third of the heap's outline (its convex hull)
    area = cv2.contourArea(cv2.convexHull(np.concatenate(rects).astype(np.float32)))
    assert len(tiles) * ts.w * ts.h >= area / 3
    assert len({round(t.yaw, 1) for t in tiles}) > len(tiles) // 2  # at every angle, not in rows


def test_an_overhead_row_is_seen_from_above_in_any_direction(views: ModuleType) -> None:
    """The overhead view looks down on a short standing row from close above it (tops in view, faces
    foreshortened to strips), and the row may cross the frame diagonally."""
    names = some_styles(views)
    angles, labelled = [], 0
    for i in range(12):
        vs = views.render_view(views.view_rng(5, "overhead", i), "overhead", names, SIZE)
        assert 6 <= len(vs.tiles) <= 11 and all(t.pose == "stand" for t in vs.tiles)
        tilt = math.degrees(math.acos(float(np.clip(-vs.camera.R[2, 2], -1, 1))))
        assert tilt <= 41, tilt  # looking down at most 40° from straight down (and a little roll)
        ends = vs.camera.project(np.array([[t.x, t.y, 0.0] for t in (vs.tiles[0], vs.tiles[-1])]))[0]
        d = ends[1] - ends[0]
        angles.append(abs(math.degrees(math.atan2(d[1], d[0]))) % 180)
        labelled += len(vs.scene.classes)
        sc = vs.scene
        assert ((sc.classes >= 0) & (sc.classes < NUM_CLASSES)).all()
        assert (sc.face_boxes[:, :2] >= 0).all() and (sc.face_boxes[:, 2:] <= SIZE).all()
    assert labelled >= 12  # most scenes show readable face strips
    assert any(20 < min(a, 180 - a) < 70 for a in angles)  # some rows run diagonally across the frame


def test_the_kongs_view_shows_face_down_kongs_often_in_pale_backs(views: ModuleType) -> None:
    """``kongs`` is a flat hand whose melds are mostly 闷豆 (concealed kongs, face down), and about half its sets
    have backs as pale as their faces: the face-down tiles the other views show too rarely."""
    names = some_styles(views)
    down, melds_down, pale, n = 0, 0, 0, 16
    for i in range(n):
        vs = views.render_view(views.view_rng(3, "kongs", i), "kongs", names, SIZE)
        down += sum(t.pose == "down" for t in vs.tiles)
        pale += float(np.abs(vs.tileset.back - vs.tileset.ivory).max()) <= 0.1 * float(vs.tileset.ivory.max())
        assert all(t.pose in ("up", "down") for t in vs.tiles)  # flat on the table, none standing
    for i in range(n):
        vs = views.render_view(views.view_rng(3, "melds", i), "melds", names, SIZE)
        melds_down += sum(t.pose == "down" for t in vs.tiles)
    assert down > 2 * melds_down
    assert n // 4 <= pale <= 3 * n // 4


def test_the_default_views_are_the_benchmark_views(views: ModuleType, tmp_path: Path) -> None:
    """``heap``, ``overhead`` and ``kongs`` train the detector but are not benchmark views: a set built without
    --views has none of them, and the views before them keep their random streams (so earlier sets and benchmarks are rebuilt the
    same)."""
    training_only = {"heap", "overhead", "kongs"}
    assert training_only <= set(views.VIEWS) and not training_only & set(views.BENCHMARK_VIEWS)
    assert views.VIEWS[: len(views.BENCHMARK_VIEWS)] == views.BENCHMARK_VIEWS
    names = some_styles(views)
    common = ["--per-view", "1", "--split", "val", "--size", "160", "--styles", ",".join(names),
              "--shared", str(ROOT.parent / "shared")]
    views.main(["--out", str(tmp_path / "set"), *common])
    assert sorted(p.stem for p in (tmp_path / "set" / "images" / "val").glob("*.jpg")) == sorted(
        f"{v}_000000" for v in views.BENCHMARK_VIEWS)
    with pytest.raises(SystemExit):
        views.main(["--out", str(tmp_path / "x"), *common, "--views", "heap,pile"])


def test_build_writes_a_benchmark_set(views: ModuleType, tmp_path: Path) -> None:
    names = some_styles(views)
    yaml = views.build(tmp_path / "set", names, seed=5, views=["melds", "closeup"], per_view=2, size=256,
                       split="val", progress=False, command="test")
    assert yaml.exists()
    images = sorted((tmp_path / "set" / "images" / "val").glob("*.jpg"))
    assert [p.stem for p in images] == ["closeup_000000", "closeup_000001", "melds_000000", "melds_000001"]
    meta = json.loads((tmp_path / "set" / "build.json").read_text())
    assert meta["styles"] == names and set(meta["scene_styles"]) == {p.stem for p in images}
    for p in images:
        rows = (tmp_path / "set" / "labels" / "val" / f"{p.stem}.txt").read_text().split("\n")
        rows = [r.split() for r in rows if r]
        words = (tmp_path / "set" / "difficult" / "val" / f"{p.stem}.txt").read_text().split()
        assert len(words) == len(rows) > 0
        for r in rows:
            assert 0 <= int(r[0]) < NUM_CLASSES
            cx, cy, w, h = map(float, r[1:])
            assert min(cx - w / 2, cy - h / 2) >= -1e-6 and max(cx + w / 2, cy + h / 2) <= 1 + 1e-6


def test_table_scenes_are_rounds_a_table_could_show(views: ModuleType) -> None:
    """View ``table``: four seats of 13 tiles (counting melds as 3), one seat of 14 in a complete shape when there is
    a winner, at most 4 copies of a kind on the table, rivers in rows of six; every label names a tile of the truth
    with its seat and role, and a seat's labels lie along its side of the photo (seat 0 at the bottom, 1 right,
    2 top, 3 left). Not a default (benchmark) view."""
    from scoring.shapes import is_seven_pairs, is_standard
    from scoring.tiles import TILES

    assert "table" in views.VIEWS and "table" not in views.BENCHMARK_VIEWS
    names = some_styles(views)
    for i, (camera, winner, heap) in enumerate([("above", True, False), ("seat", False, False), ("above", True, True)]):
        scene = views.render_table_round(views.view_rng(1, "table", i), names, 1200, camera, i == 1, winner, heap)
        truth = scene.to_json()
        assert (truth["winner"] is not None) == winner and truth["camera"] == camera
        assert bool(truth["heap"]) == heap and (truth["river"] == "heap") == heap
        # a seat whose discards are in the heap lays no river; the heap's tiles are the discards of those seats
        assert all(s["river_separated"] == (not heap or bool(s["river"])) for s in truth["seats"])
        assert all(s["river_separated"] for s in truth["seats"]) != heap
        copies = {t: 0 for t in TILES}
        for seat in truth["seats"]:
            count = len(seat["concealed"]) + 3 * len(seat["melds"])
            assert count == (14 if seat["seat"] == truth["winner"] else 13)
            for t in seat["concealed"] + seat["river"]:
                copies[t] += 1
            for m in seat["melds"]:
                if m["tile"] is not None:  # a 闷豆 all face down: its tile is not told
                    copies[m["tile"]] += 3 if m["type"] == "pong" else 4
            if seat["seat"] == truth["winner"]:
                counts = [seat["concealed"].count(t) for t in TILES]
                assert is_standard(counts) or is_seven_pairs(counts)
        for t in truth["heap"] + ([truth["flipped"]] if truth["flipped"] else []):
            copies[t] += 1
        assert max(v for k, v in copies.items() if k in TILES) <= 4
        labels = truth["tiles"]
        assert {t["role"] for t in labels} <= {"hand", "meld", "river", "heap", "wall", "flipped"}
        assert ("heap" in {t["role"] for t in labels}) == heap
        assert all(t["seat"] is None and t["tile"] == truth["heap"][t["order"]] for t in labels if t["role"] == "heap")
        centre = np.mean([[(t["box"][0] + t["box"][2]) / 2, (t["box"][1] + t["box"][3]) / 2] for t in labels], 0)
        for t in labels:
            if t["seat"] is None:
                continue
            seat = truth["seats"][t["seat"]]
            if t["role"] == "hand":
                assert t["tile"] == seat["concealed"][t["order"]]
                x, y = (t["box"][0] + t["box"][2]) / 2 - centre[0], (t["box"][1] + t["box"][3]) / 2 - centre[1]
                side = (0 if y > 0 else 2) if abs(y) > abs(x) else (1 if x > 0 else 3)
                assert side == t["seat"]
            elif t["role"] == "river":
                assert t["tile"] == seat["river"][t["order"]]
        assert any(t["role"] == "wall" and t["tile"] == "back" for t in labels)
