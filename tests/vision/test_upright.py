"""Which way faces point (vision/upright.py) and the layout's use of it: a hand running up or down the photo is
read from the player's left when its faces say where the player sits."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.classify import DEFAULT_CLASSIFIER, Classifier
from vision.detections import Detections
from vision.layout import arrange, build, layout
from vision.training.layout_synth import facing_evidence, generate
from vision.upright import (
    SAMPLE,
    UprightError,
    UprightProbe,
    boxes_to_look_at,
    facing_scores,
    load_probe,
    with_facing,
)

LAID = ("jitter", "perspective", "bend", "gaps")


def vertical_scene(seed: int, angle: float):
    return generate(np.random.default_rng(seed), LAID, angle=angle, river=False)


def true_facing(scene, boxes: list[int], strength: float = 3.0) -> np.ndarray:
    """Each box's face pointing away from the player (the photo's up turned by the scene's angle)."""
    a = np.deg2rad(scene.truth.angle)
    return np.tile(strength * np.array([np.sin(a), -np.cos(a)]), (len(boxes), 1))


@pytest.mark.parametrize("angle", [90.0, -90.0, 78.0, -101.0])
def test_a_vertical_hand_is_read_from_the_player_left_when_its_faces_say_so(angle: float) -> None:
    right = 0
    for seed in range(12):
        scene = vertical_scene(seed, angle)
        first = layout(scene.dets)
        looked = boxes_to_look_at(first)
        assert looked, "a hand running up or down the photo is worth a look at its faces"
        lay = layout(with_facing(scene.dets, looked, true_facing(scene, looked)))
        assert lay.confidence["orientation"] == 0.9
        right += [t.box for t in lay.concealed] == scene.truth.concealed
    assert right >= 11  # grouping itself may miss a scene; the direction never


def test_one_arrangement_is_built_with_the_faces_evidence_as_a_second_layout_would_be() -> None:
    """The pipeline groups a photo once (``arrange``) and orients it once the faces are looked at (``build``): the
    same layout as laying the photo out again with the evidence, and the arrangement is not changed by a build."""
    for seed in range(6):
        scene = vertical_scene(seed, 90.0 if seed % 2 else -90.0)
        arranged = arrange(scene.dets)
        looked = boxes_to_look_at(arranged)
        assert looked == boxes_to_look_at(layout(scene.dets))
        for facing in (true_facing(scene, looked), -true_facing(scene, looked)):
            faced = with_facing(scene.dets, looked, facing)
            assert build(arranged, faced.facing).to_json() == layout(faced).to_json()
        assert build(arranged).to_json() == layout(scene.dets).to_json()


def test_faces_pointing_the_other_way_turn_the_row_round() -> None:
    scene = vertical_scene(3, 90.0)
    looked = boxes_to_look_at(layout(scene.dets))
    lay = layout(with_facing(scene.dets, looked, -true_facing(scene, looked)))
    assert [t.box for t in lay.concealed] == scene.truth.concealed[::-1]


def test_weak_or_split_evidence_leaves_the_layout_as_it_was() -> None:
    scene = vertical_scene(5, -90.0)
    before = layout(scene.dets)
    looked = boxes_to_look_at(before)
    mixed = true_facing(scene, looked, 0.2)
    mixed[::2] *= -1  # half each way: no decision
    lay = layout(with_facing(scene.dets, looked, mixed))
    assert [t.box for t in lay.concealed] == [t.box for t in before.concealed]
    assert lay.confidence["orientation"] == before.confidence["orientation"]


def test_noisy_evidence_as_the_probe_gives_it_gets_most_vertical_hands_right() -> None:
    right = 0
    for seed in range(40):
        scene = vertical_scene(seed, float(np.random.default_rng(seed).choice([90.0, -90.0])))
        looked = boxes_to_look_at(layout(scene.dets))
        evidence = facing_evidence(np.random.default_rng([seed, 2]), scene.truth, looked)
        lay = layout(with_facing(scene.dets, looked, evidence))
        right += [t.box for t in lay.concealed] == scene.truth.concealed
    assert right >= 34  # about one scene in 20 loses its grouping, whatever the direction


def test_upright_photos_and_hands_with_a_river_pay_nothing() -> None:
    for seed in range(10):
        flat = generate(np.random.default_rng(seed), LAID, angle=float(np.random.default_rng(seed).uniform(-20, 20)))
        assert boxes_to_look_at(layout(flat.dets)) == []
        with_river = generate(np.random.default_rng(seed), LAID, angle=90.0, river=12)
        assert boxes_to_look_at(layout(with_river.dets)) == []


def test_at_most_a_few_concealed_tiles_are_looked_at() -> None:
    scene = vertical_scene(1, 90.0)
    lay = layout(scene.dets)
    looked = boxes_to_look_at(lay)
    concealed = [t.box for t in lay.concealed]
    assert 0 < len(looked) <= SAMPLE and set(looked) <= set(concealed)
    assert looked == concealed[(len(concealed) - len(looked)) // 2:][:len(looked)]  # the middle of the row


# ------------------------------------------------------------------------------------ the probe on pixels


@pytest.fixture(scope="module")
def classifier() -> Classifier:
    if not DEFAULT_CLASSIFIER.is_file():
        pytest.skip("no crop classifier shipped")
    return Classifier(DEFAULT_CLASSIFIER)


def glyph_photo() -> tuple[np.ndarray, np.ndarray]:
    """A photo of three ivory squares with lopsided marks, and their boxes (56 px: grown by the crop margin they
    are 64 px, the crop size, so no crop is resized or padded and a turned photo's crops are the turned crops)."""
    img = np.full((300, 400, 3), (40, 110, 40), np.uint8)
    boxes = np.array([[50, 100, 106, 156], [150, 100, 206, 156], [250, 100, 306, 156]], np.float32)
    for k, (x0, y0, x1, y1) in enumerate(boxes.astype(int)):
        cv2.rectangle(img, (x0, y0), (x1, y1), (225, 240, 245), -1)
        cv2.putText(img, "7F4"[k], (x0 + 8, y0 + 30), cv2.FONT_HERSHEY_SIMPLEX, 0.9, (30, 30, 30), 3)
        cv2.rectangle(img, (x0 + 10, y1 - 14), (x1 - 10, y1 - 6), (40, 40, 200), -1)
    return img, boxes


def faces(classifier: Classifier, probe: UprightProbe, img: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """The facing of every box, from boxes no classifier has looked at yet."""
    dets = Detections(boxes, np.ones(len(boxes)), np.zeros(len(boxes)))
    return facing_scores(classifier, probe, img, dets, list(range(len(boxes))))


def test_facing_turns_with_the_photo(classifier: Classifier) -> None:
    probe = UprightProbe(np.random.default_rng(0).normal(size=256), "any")
    img, boxes = glyph_photo()
    h, w = img.shape[:2]
    base = faces(classifier, probe, img, boxes)
    # a quarter turn counter-clockwise: a face pointing right (+x) now points up (-y)
    quarter = np.ascontiguousarray(np.rot90(img))
    qboxes = np.stack([boxes[:, 1], w - boxes[:, 2], boxes[:, 3], w - boxes[:, 0]], 1)
    turned = faces(classifier, probe, quarter, qboxes)
    np.testing.assert_allclose(turned, np.stack([base[:, 1], -base[:, 0]], 1), rtol=1e-4, atol=1e-3)
    # a half turn: every face points the other way
    half = np.ascontiguousarray(img[::-1, ::-1])
    hboxes = np.stack([w - boxes[:, 2], h - boxes[:, 3], w - boxes[:, 0], h - boxes[:, 1]], 1)
    np.testing.assert_allclose(faces(classifier, probe, half, hboxes), -base, rtol=1e-4, atol=1e-3)
    assert np.abs(base).max() > 0.01  # the check above is not about zeros


def test_a_probe_made_for_another_classifier_is_not_used(classifier: Classifier, tmp_path: Path) -> None:
    path = tmp_path / "probe.json"
    path.write_text(json.dumps({"weights": [0.0] * 256, "classifier_sha256": "0" * 64}))
    with pytest.raises(UprightError, match="another crop classifier"):
        UprightProbe.load(path, classifier)
    assert load_probe(classifier, path) is None
    path.write_text(json.dumps({"weights": [0.5] * 256, "classifier_sha256": classifier.sha256}))
    assert UprightProbe.load(path, classifier).weights.shape == (256,)
    path.write_text("{not json")
    with pytest.raises(UprightError, match="not an upright probe"):
        UprightProbe.load(path, classifier)
    assert load_probe(None, path) is None and load_probe(classifier, tmp_path / "missing.json") is None


def test_facing_reuses_the_features_the_classifier_named_the_tiles_with(classifier: Classifier) -> None:
    """The crop classifier's features of each turn it looked at travel with the detections: facing from them is
    facing from fresh crops, and a box with all four turns known needs no further look."""
    probe = UprightProbe(np.random.default_rng(1).normal(size=256), "any")
    img, boxes = glyph_photo()
    blank = Detections(boxes, np.ones(3), np.zeros(3))
    _, feats = classifier.looks(img, boxes, (0, 1, 2, 3))
    carried = Detections(boxes, np.ones(3), np.zeros(3), features=feats.transpose(1, 0, 2))
    calls = []
    looks = classifier.looks
    classifier.looks = lambda *a, **k: calls.append(a) or looks(*a, **k)  # type: ignore[method-assign]
    try:
        reused = facing_scores(classifier, probe, img, carried, [0, 1, 2])
    finally:
        del classifier.looks
    assert calls == []
    np.testing.assert_allclose(reused, facing_scores(classifier, probe, img, blank, [0, 1, 2]), rtol=1e-4, atol=1e-3)
    # only turn 0 known (a tile named surely at the first look): the other turns are looked at, turn 0 kept
    half = feats.transpose(1, 0, 2).copy()
    half[:, 1:] = np.nan
    partial = Detections(boxes, np.ones(3), np.zeros(3), features=half)
    np.testing.assert_allclose(facing_scores(classifier, probe, img, partial, [0, 1, 2]), reused, rtol=1e-4, atol=1e-3)
