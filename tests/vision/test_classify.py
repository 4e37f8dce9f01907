"""The crop classifier stage: cutting crops, combining scores, the dataset builder and (with the train extra) a
smoke train → ONNX → ``Classifier`` chain."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from datasets.crops import build, jitter_boxes, label_path, read_boxes
from datasets.crops import main as crops_main
from vision.classes import CLASS_NAMES, NUM_CLASSES
from vision.classify import (
    CROP_SIZE,
    CROP_SURE,
    DEFAULT_CLASSIFIER,
    TURN_BELOW,
    TURN_LOOKS,
    Classifier,
    combine,
    crop_tiles,
    geometric_mean,
    tileness,
)
from vision.detections import Detections

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "datasets" / "samples"
SAMPLE_LABELS = ROOT / "datasets" / "sample_labels"
GREY = 114


def _scene() -> np.ndarray:
    img = np.full((200, 300, 3), 20, np.uint8)
    img[50:130, 100:160] = (0, 0, 255)  # a red "tile", 60 wide × 80 tall
    return img


def test_a_crop_shows_its_box_centred_with_the_aspect_kept() -> None:
    crop = crop_tiles(_scene(), np.array([[100, 50, 160, 130]]), margin=0.0)[0]
    assert crop.shape == (CROP_SIZE, CROP_SIZE, 3)
    assert tuple(crop[CROP_SIZE // 2, CROP_SIZE // 2]) == (0, 0, 255)
    # 60 × 80 scaled to 48 × 64: grey bars of 8 px left and right, none above or below
    assert (crop[:, :7] == GREY).all() and (crop[:, -7:] == GREY).all()
    assert tuple(crop[1, CROP_SIZE // 2]) == (0, 0, 255) and tuple(crop[-2, CROP_SIZE // 2]) == (0, 0, 255)


def test_the_margin_shows_the_tiles_surroundings() -> None:
    crop = crop_tiles(_scene(), np.array([[100, 50, 160, 130]]), margin=0.25)[0]
    column = crop[:, CROP_SIZE // 2]
    assert tuple(column[1]) == (20, 20, 20) and tuple(column[CROP_SIZE // 2]) == (0, 0, 255)


def test_a_turned_tile_stays_wide_and_parts_outside_the_photo_are_grey() -> None:
    wide = crop_tiles(_scene(), np.array([[90, 60, 170, 120]]), margin=0.0)[0]
    assert (wide[:7] == GREY).all() and not (wide[:, :7] == GREY).all()
    edge = crop_tiles(_scene(), np.array([[-40, 10, 40, 90]]), margin=0.0)[0]
    assert (edge[:, : CROP_SIZE // 2 - 2] == GREY).all()  # the left half of that box lies outside the photo
    assert (edge[:, CROP_SIZE // 2 + 2:] == 20).all()


def test_a_crop_can_be_stretched_to_an_upright_tiles_shape() -> None:
    """A face seen at a grazing angle is a wide strip; stretched, it fills the crop's height at 3:4."""
    strip = crop_tiles(_scene(), np.array([[100, 80, 160, 100]]), margin=0.0, aspect=0.75)[0]
    assert strip.shape == (CROP_SIZE, CROP_SIZE, 3)
    assert (strip[:, :7] == GREY).all() and (strip[:, -7:] == GREY).all()  # 48 px wide, centred
    assert (strip[:, 9:CROP_SIZE - 9] == (0, 0, 255)).all()  # the 20 px tall strip now fills all 64 rows
    kept = crop_tiles(_scene(), np.array([[100, 80, 160, 100]]), margin=0.0)[0]
    assert (kept[:CROP_SIZE // 3] == GREY).all()  # without: the strip stays a strip


def test_a_small_box_is_cut_from_the_sharper_photo_and_a_large_one_from_its_own() -> None:
    """A photo decoded at half size, and the same at full size: a box too small to fill its crop is cut from the
    full size (what its crop there would be), a box that fills it from the photo the boxes are in."""
    sharp = np.full((400, 600, 3), 20, np.uint8)
    sharp[100:140, 200:230] = (0, 0, 255)  # a small tile: 15 × 20 px at half size
    sharp[110:130, 210:220] = (255, 255, 255)  # a detail the half size blurs
    sharp[200:380, 300:440] = (0, 255, 0)  # a large one: 70 × 90 px at half size
    half = cv2.resize(sharp, (300, 200), interpolation=cv2.INTER_AREA)
    small, large = np.array([[100, 50, 115, 70]]), np.array([[150, 100, 220, 190]])
    assert np.array_equal(crop_tiles(half, small, sharper=sharp), crop_tiles(sharp, small * 2))
    assert not np.array_equal(crop_tiles(half, small), crop_tiles(sharp, small * 2))
    assert np.array_equal(crop_tiles(half, large, sharper=np.zeros_like(sharp)), crop_tiles(half, large))


def test_empty_and_degenerate_boxes_give_grey_crops() -> None:
    assert crop_tiles(_scene(), np.zeros((0, 4))).shape == (0, CROP_SIZE, CROP_SIZE, 3)
    flat = crop_tiles(_scene(), np.array([[10, 10, 10.5, 50], [400, 400, 450, 480]]))
    assert (flat == GREY).all()


def _dets(top3: list[list[int]], probs: list[list[float]]) -> Detections:
    n = len(top3)
    return Detections(np.tile([0, 0, 10, 10], (n, 1)), np.array([p[0] for p in probs]), np.array([t[0] for t in top3]),
                      np.array(top3), np.array(probs), (100, 100))


def _looks(probs):
    """A stand-in for ``Classifier.looks`` from one for ``Classifier.probs`` (the same probabilities at each turn
    asked for; no features)."""
    def looks(img, xyxy, turns=(0,), aspect=None, sharper=None):
        kwargs = ({"turns": turns} if turns != (0,) else {}) | ({"aspect": aspect} if aspect is not None else {})
        return np.repeat(probs(img, xyxy, **kwargs)[None], len(turns), 0), None
    return looks


def _crop_probs(best: int, p: float) -> np.ndarray:
    out = np.full(NUM_CLASSES, (1 - p) / (NUM_CLASSES - 1))
    out[best] = p
    return out[None]


def test_combining_weighs_both_networks() -> None:
    five_m, seven_m, nine_m = (CLASS_NAMES.index(t) for t in ("5m", "7m", "9m"))
    dets = _dets([[seven_m, five_m, nine_m]], [[0.55, 0.40, 0.05]])
    sure_five = _crop_probs(five_m, 0.95)
    assert combine(dets, sure_five, detector_weight=1.0).class_id[0] == seven_m
    assert combine(dets, sure_five, detector_weight=0.0).class_id[0] == five_m
    both = combine(dets, sure_five, detector_weight=0.5)
    assert both.class_id[0] == five_m and both.top3_class[0, 1] == seven_m
    assert np.all(np.diff(both.top3_prob[0]) <= 0) and both.top3_prob[0].sum() <= 1 + 1e-6
    assert both.confidence[0] == pytest.approx(0.55)  # the box's confidence stays the detector's
    # a classifier torn between the same two tiles does not overturn the detector
    torn = _crop_probs(five_m, 0.45)
    torn[0, seven_m] = 0.40
    assert combine(dets, torn / torn.sum(), detector_weight=0.5).class_id[0] == seven_m


def test_a_class_outside_the_detectors_top3_needs_a_sure_classifier() -> None:
    one_s, seven_s, two_s, four_s = (CLASS_NAMES.index(t) for t in ("1s", "7s", "2s", "4s"))
    dets = _dets([[seven_s, two_s, four_s]], [[0.6, 0.3, 0.1]])
    assert combine(dets, _crop_probs(one_s, 0.9), 0.5).class_id[0] == seven_s
    assert combine(dets, _crop_probs(one_s, 0.9999), 0.5).class_id[0] == one_s


def test_every_detector_score_counts_when_the_detections_carry_them() -> None:
    one_s, seven_s, two_s, four_s = (CLASS_NAMES.index(t) for t in ("1s", "7s", "2s", "4s"))
    top3_only = _dets([[seven_s, two_s, four_s]], [[0.5, 0.2, 0.1]])
    probs = np.full((1, NUM_CLASSES), 0.12 / (NUM_CLASSES - 4))
    probs[0, [seven_s, two_s, four_s, one_s]] = [0.5, 0.2, 0.1, 0.08]  # 1s fourth, far from ruled out
    full = Detections(top3_only.xyxy, top3_only.confidence, top3_only.class_id, top3_only.top3_class,
                      top3_only.top3_prob, top3_only.image_size, probs)
    assert full[[0]].probs is not None and full[[0]].probs[0, one_s] == pytest.approx(0.08)
    fairly_sure_one_s = _crop_probs(one_s, 0.9)
    assert combine(top3_only, fairly_sure_one_s, 0.5).class_id[0] == seven_s  # 1s got the floor only
    both = combine(full, fairly_sure_one_s, 0.5)
    assert both.class_id[0] == one_s and both.top3_class[0, 1] == seven_s
    assert both.probs.shape == (1, NUM_CLASSES) and both.probs.sum() == pytest.approx(1.0)
    assert both.probs[0, one_s] == pytest.approx(both.top3_prob[0, 0])


def test_a_doubtfully_named_tile_ranks_below_a_surely_named_one(monkeypatch: pytest.MonkeyPatch) -> None:
    if not DEFAULT_CLASSIFIER.is_file():
        pytest.skip("no shipped crop classifier")
    five_m, seven_m, nine_m = (CLASS_NAMES.index(t) for t in ("5m", "7m", "9m"))
    dets = _dets([[seven_m, five_m, nine_m]] * 3, [[0.8, 0.15, 0.05]] * 3)
    dets.confidence[2] = 0.05  # hardly a tile: not looked at
    torn = _crop_probs(seven_m, 0.5)
    torn[0, five_m] = 0.45
    crop_probs = np.concatenate([_crop_probs(seven_m, 0.99), torn / torn.sum()])
    clf = Classifier(DEFAULT_CLASSIFIER)
    monkeypatch.setattr(clf, "looks", _looks(lambda img, xyxy: crop_probs[:len(xyxy)]))
    out = clf(np.zeros((100, 100, 3), np.uint8), dets, turn_below=0.0)  # one look each (turned looks: below)
    assert out.class_id.tolist() == [seven_m] * 3
    assert out.confidence[0] > out.confidence[1] > 0.3
    # the detector's confidence 0.8 is a sure tile (1.0) × its name's 0.8: the combined probability replaces that
    assert out.confidence[0] == pytest.approx(out.top3_prob[0, 0])
    assert out.confidence[1] == pytest.approx(out.top3_prob[1, 0])
    assert out.confidence[2] == pytest.approx(0.05) and dets.confidence[0] == pytest.approx(0.8)  # input unchanged


def test_a_sure_tile_of_a_doubtful_name_gets_the_second_look(monkeypatch: pytest.MonkeyPatch) -> None:
    if not DEFAULT_CLASSIFIER.is_file():
        pytest.skip("no shipped crop classifier")
    two_m, three_m, five_m = (CLASS_NAMES.index(t) for t in ("2m", "3m", "5m"))
    # best score 0.09 (2m), 3m nearly as likely: a tile at 0.18 (0.09 + 0.084 + 0.006), though no name reaches 0.1
    dets = _dets([[two_m, three_m, five_m]] * 2, [[0.3, 0.28, 0.02]] * 2)
    dets.confidence[:] = [0.09, 0.03]  # the second: a tile at 0.06 only, below the second look's 0.1
    assert tileness(dets) == pytest.approx([0.18, 0.06])
    clf = Classifier(DEFAULT_CLASSIFIER)
    monkeypatch.setattr(clf, "looks", _looks(lambda img, xyxy: np.repeat(_crop_probs(three_m, 0.95), len(xyxy), 0)))
    out = clf(np.zeros((100, 100, 3), np.uint8), dets, turn_below=0.0)
    assert out.names == ["3m", "2m"]
    assert out.probs is None  # hand-made detections: only their top 3 known, none made up
    assert out.confidence[0] == pytest.approx(0.18 * out.top3_prob[0, 0])
    assert out.confidence[1] == pytest.approx(0.03)


def test_a_doubtfully_named_tile_is_looked_at_again_turned(monkeypatch: pytest.MonkeyPatch) -> None:
    if not DEFAULT_CLASSIFIER.is_file():
        pytest.skip("no shipped crop classifier")
    five_m, seven_m, nine_m = (CLASS_NAMES.index(t) for t in ("5m", "7m", "9m"))
    dets = _dets([[seven_m, five_m, nine_m]] * 2, [[0.8, 0.15, 0.05]] * 2)
    torn = _crop_probs(seven_m, 0.5)
    torn[0, five_m] = 0.45
    first = np.concatenate([_crop_probs(seven_m, 0.99), torn / torn.sum()])
    calls = []

    def looks(img, xyxy, turns=(0,), sharper=None):
        calls.append((len(xyxy), turns))
        return first[:len(xyxy)] if turns == (0,) else _crop_probs(five_m, 0.95).repeat(len(xyxy), 0)

    clf = Classifier(DEFAULT_CLASSIFIER)
    monkeypatch.setattr(clf, "looks", _looks(looks))
    out = clf(np.zeros((100, 100, 3), np.uint8), dets)
    assert calls == [(2, (0,)), (1, TURN_LOOKS)]  # only the doubtful second box is looked at turned
    assert out.names == ["7m", "5m"]  # a turned look sure of 5m outweighs one torn look
    calls.clear()
    assert clf(np.zeros((100, 100, 3), np.uint8), dets, turn_below=0.0).names == ["7m", "7m"]
    assert calls == [(2, (0,))]
    calls.clear()  # a table photo: every crop turned too, the sure first box's as well (it becomes 5m here)
    assert clf(np.zeros((100, 100, 3), np.uint8), dets, turn_below=0.0, turn_all=True).names == ["5m", "5m"]
    assert calls == [(2, (0,)), (2, TURN_LOOKS)]


def test_a_crop_the_classifier_names_surely_is_not_turned_though_the_detector_disagrees(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The turned looks are for crops the classifier doubts; a disagreeing detector alone leaves the combined name
    doubtful, but the turned looks of a crop named surely changed no name on the catalogue or real test photos."""
    if not DEFAULT_CLASSIFIER.is_file():
        pytest.skip("no shipped crop classifier")
    five_m, seven_m, nine_m = (CLASS_NAMES.index(t) for t in ("5m", "7m", "9m"))
    dets = _dets([[five_m, seven_m, nine_m]] * 2, [[0.7, 0.25, 0.05]] * 2)  # the detector leans to 5m
    torn = _crop_probs(seven_m, 0.6)
    torn[0, five_m] = 0.35
    first = np.concatenate([_crop_probs(seven_m, CROP_SURE + 0.03), torn / torn.sum()])
    calls = []

    def looks(img, xyxy, turns=(0,), sharper=None):
        calls.append((len(xyxy), turns))
        return first[:len(xyxy)] if turns == (0,) else _crop_probs(seven_m, 0.95).repeat(len(xyxy), 0)

    clf = Classifier(DEFAULT_CLASSIFIER)
    monkeypatch.setattr(clf, "looks", _looks(looks))
    img = np.zeros((100, 100, 3), np.uint8)
    out = clf(img, dets)
    assert combine(dets[:1], first[:1]).top3_prob[0, 0] < TURN_BELOW  # the first box's name is doubtful
    assert calls == [(2, (0,)), (1, TURN_LOOKS)]  # the sure crop (first box) is not turned; the torn one is
    assert out.names == ["7m", "7m"]
    calls.clear()
    clf(img, dets, crop_sure=1.01)  # every doubtful combined name turned, as before
    assert calls == [(2, (0,)), (2, TURN_LOOKS)]


def test_a_doubtful_strip_is_looked_at_stretched_and_keeps_the_look_when_surer(monkeypatch: pytest.MonkeyPatch) -> None:
    if not DEFAULT_CLASSIFIER.is_file():
        pytest.skip("no shipped crop classifier")
    two_m, three_m, five_m = (CLASS_NAMES.index(t) for t in ("2m", "3m", "5m"))
    dets = _dets([[three_m, two_m, five_m]] * 3, [[0.5, 0.45, 0.05]] * 3)
    # a strip (60 × 20: an upright face seen from low), a turned tile (40 × 30) and a second strip
    dets.xyxy[:] = [[0, 0, 60, 20], [0, 40, 40, 70], [0, 80, 60, 100]]
    torn = _crop_probs(three_m, 0.5)
    torn[0, two_m] = 0.45
    calls = []

    def looks(img, xyxy, turns=(0,), aspect=None, sharper=None):
        calls.append((len(xyxy), turns, aspect))
        n = len(xyxy)
        if aspect is None:
            return np.repeat(torn / torn.sum(), n, 0)
        # stretched: the first strip reads as a sure 2m, the second no surer than before
        return np.concatenate([_crop_probs(two_m, 0.97), torn / torn.sum()])[:n]

    clf = Classifier(DEFAULT_CLASSIFIER)
    monkeypatch.setattr(clf, "looks", _looks(looks))
    out = clf(np.zeros((120, 100, 3), np.uint8), dets)
    assert calls == [(3, (0,), None), (3, TURN_LOOKS, None), (2, (0,), 0.75)]  # only the strips, stretched
    assert out.names == ["2m", "3m", "3m"]
    assert out.top3_prob[0, 0] > out.top3_prob[2, 0]
    calls.clear()
    clf(np.zeros((120, 100, 3), np.uint8), dets, strip_ratio=0.0)
    assert [c[2] for c in calls] == [None, None]  # strip_ratio 0: no stretched look


def test_the_geometric_mean_of_looks_keeps_what_every_look_finds_probable() -> None:
    a = np.array([[0.6, 0.4, 0.0], [0.2, 0.3, 0.5]])
    b = np.array([[0.6, 0.1, 0.3], [0.2, 0.3, 0.5]])
    mean = geometric_mean(np.stack([a, b]))
    assert np.allclose(mean.sum(1), 1) and mean[0].argmax() == 0 and mean[0, 2] < 1e-3  # one look's 0 rules out
    assert np.allclose(mean[1], [0.2, 0.3, 0.5], atol=1e-6)  # agreeing looks: unchanged
    weighted = geometric_mean(np.stack([a[:1], b[:1]]), np.array([1.0, 3.0]))
    assert weighted[0, 1] < mean[0, 1]  # leans to the more weighted look


def test_the_shipped_classifier_looks_at_turned_crops_in_one_batch() -> None:
    if not DEFAULT_CLASSIFIER.is_file():
        pytest.skip("no shipped crop classifier")
    clf = Classifier(DEFAULT_CLASSIFIER)
    img = cv2.imread(str(SAMPLES / "sample_02.jpg"))
    xyxy = np.array([[10, 10, 60, 80], [100, 100, 150, 170], [30, 40, 90, 90]], np.float32)
    each = [clf.probs(img, xyxy, turns=(k,)) for k in range(4)]
    assert not np.allclose(each[0], each[2])  # a turned crop is another look
    np.testing.assert_allclose(clf.probs(img, xyxy, turns=(0, 1, 2, 3)), geometric_mean(np.stack(each)), atol=1e-5)
    np.testing.assert_allclose(clf.probs(img, xyxy), each[0], atol=1e-6)


def test_the_features_of_every_look_travel_with_the_detections() -> None:
    """One run gives names and features: turn 0 of every looked-at box, the turns of ``TURN_LOOKS`` of those looked
    at turned, NaN elsewhere (other turns, a box too weak to look at); the same numbers a fresh look gives, so
    calibration and facing reuse them."""
    if not DEFAULT_CLASSIFIER.is_file():
        pytest.skip("no shipped crop classifier")
    clf = Classifier(DEFAULT_CLASSIFIER)
    img = cv2.imread(str(SAMPLES / "sample_02.jpg"))
    dets = _dets([[0, 1, 2]] * 3, [[0.9, 0.05, 0.05]] * 3)
    dets.xyxy[:] = [[10, 10, 60, 80], [100, 100, 150, 170], [30, 40, 90, 90]]
    dets.confidence[2] = 0.01  # hardly a tile: not looked at
    out = clf(img, dets, turn_below=1.01)  # every looked-at box is doubtful: turned looks too
    assert out.features is not None and out.features.shape == (3, 4, 256)
    looked = [0, *TURN_LOOKS]
    _, fresh = clf.looks(img, dets.xyxy[:2], tuple(looked))
    np.testing.assert_allclose(out.features[:2, looked], fresh.transpose(1, 0, 2), rtol=1e-4, atol=1e-4)
    assert np.isnan(np.delete(out.features[:2], looked, axis=1)).all()
    assert np.isnan(out.features[2]).all()
    once = clf(img, dets, turn_below=0.0)  # no box doubtful: turn 0 only
    assert np.isfinite(once.features[:2, 0]).all() and np.isnan(once.features[:2, 1:]).all()
    assert once[np.array([1, 0])].features is not None  # carried through selection


def test_the_classifier_checks_its_classes(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    if not DEFAULT_CLASSIFIER.is_file():
        pytest.skip("no shipped crop classifier")
    m = onnx.load(str(DEFAULT_CLASSIFIER))
    for p in m.metadata_props:
        if p.key == "names":
            p.value = json.dumps({str(i): n for i, n in enumerate(reversed(CLASS_NAMES))})
    bad = tmp_path / "bad.onnx"
    onnx.save(m, str(bad))
    with pytest.raises(ValueError, match="classes"):
        Classifier(bad)
    with pytest.raises(FileNotFoundError):
        Classifier(tmp_path / "missing.onnx")


def test_the_shipped_classifier_reads_labelled_sample_tiles() -> None:
    if not DEFAULT_CLASSIFIER.is_file():
        pytest.skip("no shipped crop classifier")
    clf = Classifier(DEFAULT_CLASSIFIER)
    right = total = 0
    for label in sorted(SAMPLE_LABELS.glob("*.txt")):
        img = cv2.imread(str(SAMPLES / f"{label.stem}.jpg"))
        rows = np.array([[float(v) for v in r.split()] for r in label.read_text().splitlines() if r.strip()])
        h, w = img.shape[:2]
        xyxy = np.stack([(rows[:, 1] - rows[:, 3] / 2) * w, (rows[:, 2] - rows[:, 4] / 2) * h,
                         (rows[:, 1] + rows[:, 3] / 2) * w, (rows[:, 2] + rows[:, 4] / 2) * h], 1)
        probs = clf.probs(img, xyxy)
        assert probs.shape == (len(rows), NUM_CLASSES) and np.allclose(probs.sum(1), 1, atol=1e-4)
        truth = rows[:, 0].astype(int)
        truth[truth == 27] = CLASS_NAMES.index("other")  # the source dataset's 27 is "other"; ours is 28
        right += int((probs.argmax(1) == truth).sum())
        total += len(rows)
    assert total >= 100 and right / total >= 0.9, f"{right}/{total} sample tiles read right"


# --------------------------------------------------------------------------- dataset builder


@pytest.fixture()
def tiny_mix(tmp_path: Path) -> Path:
    """Sample photos laid out as a dataset (images/<split>, labels/<split>) and a mix that lists them."""
    labelled = sorted(SAMPLE_LABELS.glob("*.txt"))[:6]
    lists: dict[str, list[str]] = {"train": [], "val": []}
    for k, label in enumerate(labelled):
        split = "val" if k >= 4 else "train"
        for kind, src in (("images", SAMPLES / f"{label.stem}.jpg"), ("labels", label)):
            (tmp_path / "data" / kind / split).mkdir(parents=True, exist_ok=True)
            shutil.copy(src, tmp_path / "data" / kind / split / src.name)
        lists[split].append(str(tmp_path / "data" / "images" / split / f"{label.stem}.jpg"))
    mix = tmp_path / "mix"
    mix.mkdir()
    for split, paths in lists.items():
        (mix / f"{split}.txt").write_text("\n".join(paths) + "\n")
    return mix


def test_label_files_are_found_beside_the_images_folder(tmp_path: Path) -> None:
    assert label_path(tmp_path / "images" / "train" / "a.jpg") == tmp_path / "labels" / "train" / "a.txt"
    xyxy, cls = read_boxes(tmp_path / "images" / "train" / "missing.jpg", 100, 100)
    assert xyxy.shape == (0, 4) and cls.shape == (0,)


def test_jitter_moves_each_edge_by_at_most_its_share() -> None:
    boxes = np.array([[100.0, 100, 160, 180]] * 500)
    moved = jitter_boxes(boxes, 0.1, np.random.default_rng(0))
    delta = np.abs(moved - boxes)
    assert delta[:, [0, 2]].max() <= 6 + 1e-9 and delta[:, [1, 3]].max() <= 8 + 1e-9
    assert delta.min() < 0.5 and delta[:, 0].max() > 5  # spread over the whole range


def test_the_builder_cuts_every_labelled_box(tiny_mix: Path, tmp_path: Path) -> None:
    out = tmp_path / "crops"
    assert crops_main(["--mix", str(tiny_mix), "--out", str(out), "--copies", "2"]) == 0
    train, val = np.load(out / "train.npz"), np.load(out / "val.npz")
    images = {s: [Path(p) for p in (tiny_mix / f"{s}.txt").read_text().split()] for s in ("train", "val")}

    def labels(paths: list[Path]) -> np.ndarray:
        return np.concatenate([read_boxes(p, *cv2.imread(str(p)).shape[1::-1])[1] for p in paths])

    assert np.array_equal(train["y"], np.concatenate([np.tile(labels([p]), 2) for p in images["train"]]))
    assert np.array_equal(val["y"], labels(images["val"]))
    assert train["x"].shape[1:] == (CROP_SIZE, CROP_SIZE, 3) and not train["synthetic"].any()
    # validation crops are cut as labelled, without jitter
    first = images["val"][0]
    img = cv2.imread(str(first))
    xyxy, _ = read_boxes(first, img.shape[1], img.shape[0])
    assert np.array_equal(val["x"][: len(xyxy)], crop_tiles(img, xyxy))
    fresh = build(images["val"], 1, 0.0, np.random.default_rng(1), "again")
    assert np.array_equal(fresh["x"], val["x"])


def test_the_builder_refuses_a_folder_that_is_no_mix(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        crops_main(["--mix", str(tmp_path), "--out", str(tmp_path / "out")])
    assert exc.value.code == 2 and "not a mix folder" in capsys.readouterr().err


# --------------------------------------------------------------------------- training (train extra)


@pytest.mark.slow
def test_smoke_train_resume_export_and_classify(tiny_mix: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch", reason="needs the train extra")
    pytest.importorskip("onnx", reason="needs the train extra")
    import vision.training.train_classify as tc

    crops = tmp_path / "crops"
    crops_main(["--mix", str(tiny_mix), "--out", str(crops), "--copies", "1"])
    real_evaluate, calls = tc.evaluate, []

    def stop_in_epoch_two(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_evaluate(*args, **kwargs)

    monkeypatch.setattr(tc, "evaluate", stop_in_epoch_two)
    with pytest.raises(KeyboardInterrupt):
        tc.train(crops, 2, tmp_path / "runs", "tiny", batch=32, width=8)
    run = tmp_path / "runs" / "tiny"
    assert len((run / "results.csv").read_text().splitlines()) == 2  # header + epoch 1
    monkeypatch.setattr(tc, "evaluate", real_evaluate)
    best = tc.train(crops, 99, tmp_path / "runs", "tiny", resume=True)  # the run's own 2 epochs, not 99
    assert [line.split(",")[0] for line in (run / "results.csv").read_text().splitlines()] == ["epoch", "1", "2"]
    # a later run starts from the stripped weights: with no learning rate they stay as they were
    stripped = tc.strip_checkpoint(best, tmp_path / "crops.pt")
    again = tc.train(crops, 1, tmp_path / "runs", "again", batch=32, lr=0.0, init=stripped)
    before = torch.load(stripped, weights_only=False)["model"]
    after = torch.load(again, weights_only=False)["model"]
    convs = [k for k in before if k.endswith(".weight") and before[k].ndim == 4]
    assert convs and all(torch.equal(before[k], after[k]) for k in convs)
    onnx_path = tc.export_onnx(best, tmp_path / "crops.onnx")
    clf = Classifier(onnx_path)
    img = cv2.imread(str(SAMPLES / "sample_01.jpg"))
    probs = clf.probs(img, np.array([[10, 10, 60, 80], [100, 100, 150, 170]]))
    assert probs.shape == (2, NUM_CLASSES) and np.allclose(probs.sum(1), 1, atol=1e-4)


@pytest.mark.slow
def test_a_trained_network_grows_deeper_without_forgetting(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch", reason="needs the train extra")
    import vision.training.train_classify as tc

    shallow = tc.build_model(8)
    for m in shallow.modules():  # trained-looking batch norms, so that a zero scale is what keeps the identity
        if isinstance(m, torch.nn.BatchNorm2d):
            torch.nn.init.uniform_(m.weight, 0.5, 1.5)
            torch.nn.init.uniform_(m.bias, -0.2, 0.2)
    deep = tc.build_model(8, extra=2)
    missing, unexpected = deep.load_state_dict(shallow.state_dict(), strict=False)
    assert not unexpected and missing and all("+" in k.split(".")[0] for k in missing)
    assert sum(p.numel() for p in deep.parameters()) > sum(p.numel() for p in shallow.parameters())
    x = torch.rand(4, 3, CROP_SIZE, CROP_SIZE)
    shallow.eval(), deep.eval()
    with torch.no_grad():
        assert torch.allclose(shallow(x), deep(x), atol=1e-6)  # the new blocks start as the identity
    # and the grown network trains, saves its shape, and exports
    ckpt = tmp_path / "shallow.pt"
    torch.save({"model": shallow.state_dict(), "width": 8}, ckpt)
    crops = tmp_path / "crops"
    crops.mkdir()
    rng = np.random.default_rng(0)
    for split, n in (("train", 64), ("val", 16)):
        np.savez(crops / f"{split}.npz", x=rng.integers(0, 255, (n, CROP_SIZE, CROP_SIZE, 3), dtype=np.uint8),
                 y=rng.integers(0, NUM_CLASSES, n), synthetic=np.zeros(n, bool))
    best = tc.train(crops, 1, tmp_path / "runs", "grown", batch=32, init=ckpt, extra=1)
    stripped = torch.load(tc.strip_checkpoint(best, tmp_path / "grown.pt"), weights_only=False)
    assert stripped["extra"] == 1 and "7+1.body.2.weight" in stripped["model"]
    clf = Classifier(tc.export_onnx(best, tmp_path / "grown.onnx"))
    assert clf.probs(np.zeros((100, 100, 3), np.uint8), np.array([[10, 10, 50, 70]])).shape == (1, NUM_CLASSES)
    with pytest.raises(ValueError, match="do not fit"):
        torch.save({"model": tc.build_model(16).state_dict(), "width": 8}, ckpt)
        tc.train(crops, 1, tmp_path / "runs", "misfit", batch=32, init=ckpt)


@pytest.mark.slow
def test_the_cli_trains_the_classifier_and_refuses_a_bad_folder(tiny_mix: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("torch", reason="needs the train extra")
    pytest.importorskip("onnx", reason="needs the train extra")
    from api.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["train-classifier", "--crops", str(tmp_path / "nothing")])
    assert exc.value.code == 2 and "run datasets/crops.py" in capsys.readouterr().err
    crops = tmp_path / "crops"
    crops_main(["--mix", str(tiny_mix), "--out", str(crops), "--copies", "1"])
    out = tmp_path / "model" / "crops.onnx"
    assert main(["train-classifier", "--crops", str(crops), "--epochs", "1", "--width", "8", "--out",
                 str(tmp_path / "runs"), "--export", str(out)]) == 0
    assert Classifier(out).size == CROP_SIZE and out.with_suffix(".pt").is_file()
    bad = tmp_path / "bad.pt"
    bad.write_text("not a checkpoint")
    with pytest.raises(SystemExit) as exc:
        main(["train-classifier", "--crops", str(crops), "--init", str(bad), "--out", str(tmp_path / "runs")])
    assert exc.value.code == 2 and "not a training checkpoint" in capsys.readouterr().err


def test_a_file_that_is_no_onnx_model_is_a_clear_error(tmp_path: Path) -> None:
    from vision.detect import Detector

    junk = tmp_path / "junk.onnx"
    junk.write_text("not a model")
    with pytest.raises(ValueError, match="not a loadable ONNX crop classifier"):
        Classifier(junk)
    with pytest.raises(ValueError, match="not a loadable ONNX model"):
        Detector(junk, classifier=None)
