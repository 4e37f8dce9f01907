"""The synthetic scene builder: reproducible, labels consistent with the image, faces never mirrored."""

from __future__ import annotations

import collections
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import cv2
import numpy as np
import pytest

from datasets import synth as builder
from datasets.synth import artwork
from vision.classes import BACK, CLASS_NAMES, NUM_CLASSES

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
SIZE = 320  # small scenes keep the suite fast; the builder scales tile sizes with the image size


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """The builder with only the CC0 artwork (what a fresh CI machine has), its cache in a temp folder."""
    old = os.environ.get("ZHUOJI_CACHE"), artwork.KMJ_DIR, artwork.shared_folder()
    os.environ["ZHUOJI_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    artwork.KMJ_DIR = Path("/nonexistent")  # optional GPL tilesets: not used in tests
    builder.set_shared(SHARED)
    yield builder
    cache, artwork.KMJ_DIR, shared = old
    builder.set_shared(shared)
    if cache is None:
        os.environ.pop("ZHUOJI_CACHE", None)
    else:
        os.environ["ZHUOJI_CACHE"] = cache


@pytest.fixture(scope="module")
def scenes(synth: ModuleType) -> list:
    return [synth.render_scene(synth.scene_rng(11, i), SIZE) for i in range(5)]


def test_same_seed_same_scene(synth: ModuleType, scenes: list) -> None:
    for i in (0, 3):
        scene, ref = synth.render_scene(synth.scene_rng(11, i), SIZE), scenes[i]
        assert np.array_equal(scene.image, ref.image)
        assert np.array_equal(scene.boxes, ref.boxes)
        assert np.array_equal(scene.classes, ref.classes)
        assert np.array_equal(scene.difficult, ref.difficult)


def test_different_seeds_differ(synth: ModuleType, scenes: list) -> None:
    assert not np.array_equal(synth.render_scene(synth.scene_rng(12, 0), SIZE).image, scenes[0].image)


def test_images_boxes_and_classes_are_well_formed(scenes: list) -> None:
    for scene in scenes:
        img, boxes, classes = scene.image, scene.boxes, scene.classes
        assert img.shape == (SIZE, SIZE, 3) and img.dtype == np.uint8
        assert scene.difficult.shape == classes.shape
        assert boxes.shape == (len(classes), 4)
        assert len(classes) > 0
        assert (boxes >= 0).all() and (boxes <= SIZE).all()
        assert (boxes[:, 2] > boxes[:, 0]).all() and (boxes[:, 3] > boxes[:, 1]).all()
        assert ((classes >= 0) & (classes < NUM_CLASSES)).all()


def test_face_down_tiles_occur(scenes: list) -> None:
    assert any((scene.classes == BACK).any() for scene in scenes)


def test_at_most_four_copies_per_scene(synth: ModuleType) -> None:
    art = synth.get_art()
    for i in range(20):
        rng = synth.scene_rng(5, i)
        ts = synth.random_tileset(rng, art)
        _, tiles = synth.scene_layout(rng, ts, synth.other_faces(art))
        counts = collections.Counter(t.face for t in tiles)
        assert max(counts.values()) <= 4, counts.most_common(1)


def test_face_frame_is_right_handed(synth: ModuleType) -> None:
    """n = u x v for every pose, so the face texture is mapped without a mirror."""
    ts = synth.random_tileset(np.random.default_rng(0), synth.get_art())
    for pose in ("up", "down", "stand"):
        for yaw in (0.0, 0.7, -2.5):
            _, u, v, n = synth.tile_frame(synth.TilePose("1s", pose, 0.0, 0.0, yaw), ts)
            assert np.allclose(np.cross(u, v), n)


def _grey(img: np.ndarray) -> np.ndarray:
    g = cv2.resize(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), (48, 64), interpolation=cv2.INTER_AREA)
    g = g.astype(np.float64) - g.mean()
    return g / (np.linalg.norm(g) + 1e-9)


@pytest.mark.parametrize("face", ["1s", "7p", "3m"])  # glyphs that are not symmetric
def test_face_is_not_mirrored(synth: ModuleType, face: str) -> None:
    """A tile rendered face-up, straight from above, reads like the artwork and not like its mirror images."""
    img, quad = synth.render_tile_face_on(face, 256)
    w, h = synth.TEX_W, synth.TEX_H
    rect = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    seen = _grey(cv2.warpPerspective(img, cv2.getPerspectiveTransform(quad.astype(np.float32), rect), (w, h)))

    def best(flip: tuple[slice, slice]) -> float:
        """Best match over the glyph sizes the builder uses, of the artwork flipped by ``flip``."""
        scores = []
        for scale in synth.GLYPH_SCALES:
            alpha, colour = synth.scaled_glyph("fluffy", face, scale, 0)
            art = (colour * alpha + 235 * (1 - alpha)).astype(np.uint8)
            scores.append(float((seen * _grey(np.ascontiguousarray(art[flip]))).sum()))
        return max(scores)

    keep, mirror = slice(None), slice(None, None, -1)
    same = best((keep, keep))
    assert same > 0.8
    for flip in ((keep, mirror), (mirror, keep), (mirror, mirror)):
        assert same > best(flip) + 0.1


def test_builder_never_flips() -> None:
    for module in sorted((ROOT / "datasets" / "synth").glob("*.py")):
        source = module.read_text()
        for call in ("cv2.flip", "np.flip", "fliplr", "flipud", "::-1"):
            assert call not in source, module.name


def test_labels_round_trip(synth: ModuleType, scenes: list, tmp_path: Path) -> None:
    boxes, classes = scenes[1].boxes, scenes[1].classes
    path = tmp_path / "a.txt"
    path.write_text("\n".join(synth.yolo_lines(boxes, classes, SIZE)) + "\n")
    back_boxes, back_classes = synth.read_yolo(path, SIZE)
    assert np.array_equal(back_classes, classes)
    assert np.allclose(back_boxes, boxes, atol=1e-3)


def test_build_writes_an_ultralytics_dataset(synth: ModuleType, tmp_path: Path) -> None:
    data = synth.build(tmp_path / "ds", n=4, seed=3, size=192, val_frac=0.25, progress=False)
    root = tmp_path / "ds"
    assert data == root / "data.yaml"
    text = data.read_text()
    assert f"path: {root.resolve()}" in text
    assert "names: [" + ", ".join(f"'{n}'" for n in CLASS_NAMES) + "]" in text
    train, val = sorted((root / "images" / "train").glob("*.jpg")), sorted((root / "images" / "val").glob("*.jpg"))
    assert (len(train), len(val)) == (3, 1)
    for img in train + val:
        label = root / "labels" / img.parent.name / f"{img.stem}.txt"
        assert label.exists()
        for row in label.read_text().split("\n"):
            if row:
                cls, *xywh = row.split()
                assert 0 <= int(cls) < NUM_CLASSES
                assert all(0 <= float(v) <= 1 for v in xywh)
        assert cv2.imread(str(img)).shape == (192, 192, 3)
    # what a rebuild needs to come out the same: the seed and the tile styles this machine had
    record = json.loads((root / "build.json").read_text())
    assert record["seed"] == 3 and record["n"] == 4 and record["styles"] == sorted(synth.get_art())
    assert "fluffy" in record["styles"]


def test_the_builder_runs_as_a_module() -> None:
    out = subprocess.run([sys.executable, "-m", "datasets.synth", "--help"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("usage: python -m datasets.synth")
    assert "--boxes {tile,face}" in out.stdout


def test_the_builder_says_which_tile_styles_it_uses(synth: ModuleType, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(artwork, "KMJ_DIR", tmp_path / "no-kmahjongg")  # as on a machine without the packages
    synth.main(["--out", str(tmp_path / "ds"), "--n", "1", "--size", "96"])
    err = capsys.readouterr().err
    assert "tile styles: fluffy" in err and "warning: the KMahjongg styles default, traditional" in err
    assert json.loads((tmp_path / "ds" / "build.json").read_text())["styles"] == ["fluffy"]


@pytest.mark.parametrize(("azimuth", "tilt", "expected"), [
    (-np.pi / 2, 50, ["1m", "5p", "9s"]),  # from the owners' seat: the faces
    (np.pi / 2, 50, ["back", "back", "back"]),  # from across the table: the backs, so `back`
    (0.0, 80, []),  # from the side, low: only the tiles' sides and edges, nothing to name
])
def test_a_standing_tile_is_labelled_by_what_the_camera_sees_of_it(synth: ModuleType, azimuth: float, tilt: float,
                                                                    expected: list[str]) -> None:
    rng = np.random.default_rng(3)
    ts = synth.random_tileset(rng, synth.get_art())
    tiles = [synth.TilePose(face, "stand", x, 0.0, 0.0) for face, x in (("1m", -1.5), ("5p", 0.0), ("9s", 1.5))]
    cam = synth.look_at(np.array([0.0, 0.0, ts.h / 2]), np.radians(tilt), azimuth, 0.0, 12.0, 2.0 * SIZE,
                        2.0 * SIZE, SIZE)
    light = synth.Light(np.array([0.0, 0.0, 1.0]), 0.7)
    _, labels = synth.compose(rng, cam, tiles, ts, light)
    boxes, classes = labels.boxes, labels.classes
    assert sorted(CLASS_NAMES[c] for c in classes) == expected
    assert len(boxes) == len(expected)


def test_blur_scales_with_the_image_so_a_larger_size_is_the_same_photo(synth: ModuleType) -> None:
    """Rendered at 1280 px and scaled down, a blurred scene looks as blurred as the same scene rendered at 640."""
    cells = (np.random.default_rng(0).random((160, 160)) > 0.5).astype(np.uint8) * 255
    big = np.dstack([cv2.resize(cells, (1280, 1280), interpolation=cv2.INTER_NEAREST)] * 3)
    small = cv2.resize(big, (640, 640), interpolation=cv2.INTER_AREA)
    blurred = 0
    for seed in range(12):
        at_640 = synth.blur(small, np.random.default_rng(seed))[0].astype(np.float32)
        if np.array_equal(at_640, small):
            continue  # this draw adds no blur
        blurred += 1
        at_1280 = cv2.resize(synth.blur(big, np.random.default_rng(seed))[0], (640, 640),
                             interpolation=cv2.INTER_AREA).astype(np.float32)
        assert np.abs(at_640 - at_1280).mean() < 0.35 * np.abs(at_640 - small).mean()
    assert blurred >= 3


def test_blur_reports_its_spread(synth: ModuleType) -> None:
    """The spread that :func:`difficulty` weighs is the standard deviation of the kernel that blurred the image:
    a point of light spreads that far."""
    dot = np.zeros((640, 640, 3), np.uint8)
    dot[320, 320] = 255
    seen = set()
    for seed in range(20):
        out, spread = synth.blur(dot.astype(np.float32), np.random.default_rng(seed))
        if spread == 0:
            assert np.array_equal(out, dot)
            continue
        g = out[..., 0] / out[..., 0].sum()
        ys, xs = np.mgrid[:640, :640]
        # the widest spread over any direction (motion blur is a line): the largest eigenvalue of the covariance
        cov = np.cov(np.stack([xs.ravel(), ys.ravel()]), aweights=g.ravel(), bias=True)
        assert np.sqrt(np.linalg.eigvalsh(cov).max()) == pytest.approx(spread, rel=0.05)
        seen.add("gauss" if np.linalg.eigvalsh(cov).min() > 0.5 * np.linalg.eigvalsh(cov).max() else "motion")
    assert seen == {"gauss", "motion"}


def test_difficulty_marks_cut_hidden_and_blurred_tiles(synth: ModuleType) -> None:
    views = np.array([[1.0, 1.0, 40.0],  # inside, in view, sharp for its size
                      [0.5, 1.0, 40.0],  # half outside the image
                      [1.0, 0.6, 40.0],  # its face partly behind another tile
                      [1.0, 1.0, 10.0],  # a face 10 px wide: too small to read even unblurred
                      [0.5, 0.6, 10.0]], np.float32)
    faces = np.array([0, 13, 26, 4, 28])  # suited tiles and an `other`
    sharp = synth.difficulty(faces, views, 0.0)
    assert sharp.tolist() == [0, synth.TRUNCATED, synth.HIDDEN, synth.BLURRED,
                              synth.TRUNCATED | synth.HIDDEN | synth.BLURRED]
    assert synth.difficulty(faces[:1], views[:1], 3.0).tolist() == [synth.BLURRED]  # 40 px under a 3 px blur
    assert not synth.difficulty(np.full(5, BACK), views, 3.0).any()  # a back is a back, however cut or blurred
    assert synth.difficult_words(sharp) == ["-", "truncated", "hidden", "blurred", "truncated+hidden+blurred"]


def test_build_writes_one_difficulty_word_per_label(synth: ModuleType, tmp_path: Path) -> None:
    synth.build(tmp_path / "ds", n=6, seed=4, size=192, val_frac=0.5, progress=False)
    words = collections.Counter()
    for label in (tmp_path / "ds" / "labels").glob("*/*.txt"):
        flags = tmp_path / "ds" / "difficult" / label.parent.name / label.name
        rows = [r for r in label.read_text().splitlines() if r]
        got = flags.read_text().split()
        assert len(got) == len(rows)
        words.update(got)
    assert words["-"] > 0
    reasons = ["truncated", "hidden", "blurred"]
    assert set(words) <= {"-"} | {"+".join(c) for n in range(1, 4) for c in itertools.combinations(reasons, n)}


def test_narrow_width_is_a_faces_width_across_its_narrow_way(synth: ModuleType) -> None:
    upright = np.array([[0, 0], [30, 0], [30, 40], [0, 40]], np.float64)
    assert synth.narrow_width(upright) == pytest.approx(30)
    edge_on = np.array([[0, 0], [40, 0], [41, 5], [1, 5]], np.float64)  # a face seen almost edge-on
    assert synth.narrow_width(edge_on) == pytest.approx(5, rel=0.01)
    turned = upright @ np.array([[0.6, -0.8], [0.8, 0.6]])
    assert synth.narrow_width(turned) == pytest.approx(30)


def test_face_boxes_lie_inside_tile_boxes_and_can_be_written(synth: ModuleType, scenes: list, tmp_path: Path) -> None:
    """The face (or back) is part of the tile: its box lies within the tile's, and equals it only seen from above."""
    for scene in scenes:
        assert scene.face_boxes.shape == scene.boxes.shape
        assert (scene.face_boxes[:, :2] >= scene.boxes[:, :2] - 1e-3).all()
        assert (scene.face_boxes[:, 2:] <= scene.boxes[:, 2:] + 1e-3).all()
        assert (scene.face_boxes[:, 2:] > scene.face_boxes[:, :2]).all()
    areas = [np.prod(s.face_boxes[:, 2:] - s.face_boxes[:, :2], 1) / np.prod(s.boxes[:, 2:] - s.boxes[:, :2], 1)
             for s in scenes]
    assert np.concatenate(areas).min() < 0.9  # some tiles show their bodies
    tile = synth.build(tmp_path / "tile", n=2, seed=3, size=192, val_frac=0.5, progress=False).parent
    face = synth.build(tmp_path / "face", n=2, seed=3, size=192, val_frac=0.5, progress=False, boxes="face").parent
    for label in (tile / "labels").glob("*/*.txt"):
        twin = face / "labels" / label.parent.name / label.name
        t, f = synth.read_yolo(label, 192), synth.read_yolo(twin, 192)
        assert np.array_equal(t[1], f[1])  # the same tiles and classes, other boxes
        assert (np.prod(f[0][:, 2:] - f[0][:, :2], 1) <= np.prod(t[0][:, 2:] - t[0][:, :2], 1) + 1).all()
    assert json.loads((face / "build.json").read_text())["boxes"] == "face"
    with pytest.raises(ValueError, match="boxes must be one of tile, face"):
        synth.build(tmp_path / "x", n=1, seed=0, boxes="body")
