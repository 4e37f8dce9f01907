"""Teach it your set: the grid of a calibration photo, the calibration file, and naming with it. Photos are composed
from the CC0 tile art (``datasets/tile_photos.py``): the ``black`` and ``tinted`` styles the networks never saw.
The command line and the HTTP surfaces: ``tests/api/test_calibrate_commands.py``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from datasets.tile_photos import ART, SUITED, calibration_photo, load_tiles, random_photo
from vision.calibrate import (
    Calibration,
    CalibrationError,
    apply_calibration,
    build_calibration,
    find_grid,
    parse_calibration,
)
from vision.classes import CLASS_NAMES
from vision.detections import Detections, box_iou

needs_art = pytest.mark.skipif(not (ART / "Black" / "Front.png").is_file(), reason="no CC0 tile art in ../shared")


def grid_dets(order: list[str], upside_down: bool = False, named: bool = True) -> Detections:
    """27 boxes in three rows of nine, rows and places as ``order`` lists them (row by row), shuffled; each box
    named as its tile (``named``), or, as on a set the networks do not know, as a neighbouring rank of its suit
    first and another tile of its suit second (the suit is still seen)."""
    boxes, top3, probs = [], [], []
    for k, tile in enumerate(order):
        r, c = divmod(k, 9)
        x, y = 100 + c * 44, 100 + r * 90
        boxes.append([x, y, x + 40, y + 54])
        rank, suit = int(tile[0]), tile[1]
        if named:
            top3.append([CLASS_NAMES.index(tile), -1, -1])
            probs.append([0.9, 0, 0])
        else:
            wrong = [f"{rank + 1 if rank < 9 else 8}{suit}", f"{rank - 1 if rank > 1 else 3}{suit}", "back"]
            top3.append([CLASS_NAMES.index(n) for n in wrong])
            probs.append([0.5, 0.3, 0.1])
    xyxy = np.array(boxes, float)
    if upside_down:
        xyxy = np.stack([1000 - xyxy[:, 2], 1000 - xyxy[:, 3], 1000 - xyxy[:, 0], 1000 - xyxy[:, 1]], 1)
    perm = np.random.default_rng(0).permutation(27)
    t3, p3 = np.array(top3)[perm], np.array(probs)[perm]
    return Detections(xyxy[perm], p3[:, 0], t3[:, 0], t3, p3, image_size=(1000, 1000))


def grid_names(dets: Detections, grid: Detections) -> list[str]:
    """The true tile of each grid box (by where the box lies in ``dets``' tile layout)."""
    return [dets.names[int(np.flatnonzero((dets.xyxy == box).all(1))[0])] for box in grid.xyxy]


# ------------------------------------------------------------------------------------------------ grid


@pytest.mark.parametrize("upside_down", [False, True])
def test_the_grid_is_read_by_place_whatever_the_photo_is_turned(upside_down: bool) -> None:
    dets = grid_dets(SUITED, upside_down)
    grid = find_grid(dets)
    assert grid_names(dets, grid) == list(SUITED)


def test_rows_in_another_suit_order_are_told_by_the_names() -> None:
    order = SUITED[18:27] + SUITED[0:9] + SUITED[9:18]  # s, m, p top to bottom
    dets = grid_dets(order)
    assert grid_names(dets, find_grid(dets)) == list(SUITED)


def test_the_place_names_a_tile_whatever_the_networks_thought() -> None:
    """Every box named one rank off (as on an unfamiliar set): the place still says which tile it is."""
    dets = grid_dets(SUITED, named=False)
    grid = find_grid(dets)
    truth = grid_dets(SUITED)  # same boxes, true names
    assert grid_names(truth, grid) == list(SUITED)


def test_a_photo_without_27_tiles_in_three_rows_is_refused_with_what_was_found() -> None:
    dets = grid_dets(SUITED)
    with pytest.raises(CalibrationError, match="found 26 tiles"):
        find_grid(dets[np.arange(26)])
    moved = dets[np.arange(27)]
    first = np.lexsort((moved.xyxy[:, 0], moved.xyxy[:, 1]))[0]
    moved.xyxy[first] += [9 * 44, 90, 9 * 44, 90]  # the top row's first tile put at the end of the middle row
    with pytest.raises(CalibrationError, match=r"not three rows of nine \(8\+10\+9\)"):
        find_grid(moved)


def test_pieces_of_one_tile_and_a_second_box_count_as_one_tile() -> None:
    dets = grid_dets(SUITED)
    k = 5
    x0, y0, x1, y1 = dets.xyxy[k]
    pieces = np.array([[x0, y0, x1, y0 + 25], [x0, y0 + 27, x1, y1], [x0 + 5, y0 + 6, x1 - 5, y1 - 8]])
    more = Detections(np.vstack([np.delete(dets.xyxy, k, 0), pieces]),
                      np.append(np.delete(dets.confidence, k), [0.8, 0.7, 0.3]),
                      np.append(np.delete(dets.class_id, k), [dets.class_id[k]] * 3), image_size=(1000, 1000))
    grid = find_grid(more)
    assert len(grid) == 27
    joined = grid.xyxy[list(SUITED).index(dets.names[k])]
    assert np.allclose(joined, dets.xyxy[k])


def test_a_box_around_two_tiles_does_not_hide_them() -> None:
    """Two neighbours boxed together (surer than either of their own boxes): the pair's box goes, both tiles stay."""
    dets = grid_dets(SUITED)
    a, b = (int(np.flatnonzero(np.array(dets.names) == t)[0]) for t in ("5s", "6s"))
    pair = np.concatenate([np.minimum(dets.xyxy[a, :2], dets.xyxy[b, :2]), np.maximum(dets.xyxy[a, 2:], dets.xyxy[b, 2:])])
    conf = dets.confidence.copy()
    conf[[a, b]] = [0.69, 0.19]
    more = Detections(np.vstack([dets.xyxy, pair]), np.append(conf, 0.95), np.append(dets.class_id, dets.class_id[b]),
                      image_size=(1000, 1000))
    grid = find_grid(more)
    assert grid_names(dets, grid) == list(SUITED)
    assert not (grid.xyxy == pair).all(1).any()


# ------------------------------------------------------------------------------------------- the file


def test_the_calibration_file_round_trips_and_refuses_malformed_ones() -> None:
    refs = np.random.default_rng(1).normal(size=(27, 4, 8)).astype(np.float32)
    cal = Calibration(refs / np.linalg.norm(refs, axis=-1, keepdims=True), "features", "crops.onnx", 0.5)
    text = json.dumps(cal.to_json())
    back = parse_calibration(text)
    assert back.model == "crops.onnx" and back.kind == "features" and back.references.shape == (27, 4, 8)
    assert np.allclose(back.references, cal.references, atol=2e-3)
    good = json.loads(text)
    for bad, message in [("nope", "not JSON"), ("[]", "JSON object"),
                         (json.dumps({**good, "version": 9}), "version"),
                         (json.dumps({**good, "tiles": SUITED[:26]}), "27 suited tiles"),
                         (json.dumps({**good, "shape": [27, 4, 9]}), "does not hold"),
                         (json.dumps({**good, "references_f16": "%%%"}), "not base64"),
                         (json.dumps({**good, "kind": "pixels"}), "'kind'")]:
        with pytest.raises(CalibrationError, match=message):
            parse_calibration(bad)


# --------------------------------------------------------------------------------- naming with it


@pytest.mark.slow
@needs_art
def test_calibration_names_an_unseen_set_the_classifier_cannot(detector) -> None:
    """Black tiles with white and orange glyphs (never in training): the crop classifier alone names few of them;
    with the set's references most (benchmarks/bench_calibration.py measures it on 30 photos)."""
    classifier = detector.classifier
    if classifier is None:
        pytest.skip("no crop classifier")
    tiles = load_tiles("black")
    cal_photo = calibration_photo(np.random.default_rng(7), tiles)
    cal = build_calibration(classifier, cal_photo.image, Detections(cal_photo.boxes, np.ones(27), np.arange(27)))
    plain = named = total = 0
    for s in (11, 12, 13):
        photo = random_photo(np.random.default_rng(s), tiles)
        want = np.array([CLASS_NAMES.index(t) for t in photo.tiles])
        probs = classifier.probs(photo.image, photo.boxes)
        crop = Detections(photo.boxes, np.ones(len(want)), probs.argmax(1), probs=probs,
                          top3_class=np.argsort(-probs, 1)[:, :3], top3_prob=np.sort(probs, 1)[:, ::-1][:, :3])
        plain += int((crop.class_id == want).sum())
        named += int((apply_calibration(cal, classifier, photo.image, crop).class_id == want).sum())
        total += len(want)
    assert plain / total < 0.4, plain / total
    assert named / total >= 0.75, named / total


@needs_art
def test_a_set_whose_tiles_the_networks_misname_is_still_calibrated_from_its_photo(detector) -> None:
    """Tinted tiles (the glyphs in other colours): the networks call some of them another tile, or `other`; each is
    still found and named by its place."""
    if detector.classifier is None:
        pytest.skip("no crop classifier")
    photo = calibration_photo(np.random.default_rng(0), load_tiles("tinted"))
    dets = detector(photo.image, turned=True)
    on_tile = box_iou(photo.boxes, dets.xyxy).argmax(1)
    assert any(dets.names[j] != tile for j, tile in zip(on_tile, photo.tiles, strict=True))  # misnamed: what is tested here
    cal = build_calibration(detector.classifier, photo.image, dets)
    assert cal.agreement < 1.0
    grid = find_grid(dets)
    assert (box_iou(grid.xyxy, photo.boxes).argmax(1) == np.arange(27)).all()


def test_a_calibration_of_another_classifier_is_refused_when_used(detector) -> None:
    if detector.classifier is None:
        pytest.skip("no crop classifier")
    refs = np.ones((27, 4, 256), np.float32) / 16
    image = np.full((200, 300, 3), 90, np.uint8)
    dets = Detections(np.array([[10, 10, 50, 60]]), np.array([0.9]), np.array([0]), image_size=(300, 200))
    name, sha = detector.classifier.model_path.name, detector.classifier.sha256
    retrained = "0" * 64  # the same file name, another network: its features mean something else
    for cal, message in [(Calibration(refs, "features", "another.onnx", 1.0, sha), "another.onnx"),
                         (Calibration(refs, "features", name, 1.0, retrained), "another version"),
                         (Calibration(refs, "features", name, 1.0, None), "another version"),  # kept before the hash
                         (Calibration(refs[..., :8], "features", name, 1.0, sha), "8 numbers")]:
        with pytest.raises(CalibrationError, match=message):
            apply_calibration(cal, detector.classifier, image, dets)


@needs_art
def test_naming_with_a_calibration_reuses_the_features_the_classifier_named_the_tiles_with(detector) -> None:
    """The detector's detections carry the crop classifier's features: a calibration names the tiles from them
    without cropping again, and names them as it does from fresh crops."""
    classifier = detector.classifier
    if classifier is None or not classifier.has_features:
        pytest.skip("no crop classifier with features")
    tiles = load_tiles("black")
    cal_photo = calibration_photo(np.random.default_rng(7), tiles)
    cal = build_calibration(classifier, cal_photo.image, Detections(cal_photo.boxes, np.ones(27), np.arange(27)))
    photo = random_photo(np.random.default_rng(11), tiles)
    dets = detector(photo.image)
    assert dets.features is not None and np.isfinite(dets.features[:, 0]).all()
    fresh = apply_calibration(cal, classifier, photo.image, Detections(dets.xyxy, dets.confidence, dets.class_id,
                                                                       dets.top3_class, dets.top3_prob,
                                                                       dets.image_size, dets.probs))
    calls = []
    looks = classifier.looks
    classifier.looks = lambda *a, **k: calls.append(a) or looks(*a, **k)
    try:
        reused = apply_calibration(cal, classifier, photo.image, dets)
    finally:
        del classifier.looks
    assert calls == []
    assert reused.names == fresh.names
    np.testing.assert_allclose(reused.confidence, fresh.confidence, atol=1e-3)
