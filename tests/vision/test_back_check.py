"""The back check stage: only boxes named ``back`` are rescored, the detector drops the ones it sinks, the shipped
model tells face-down tiles from flat things of their colour, the crop builder labels boxes by their overlap with
``back`` labels, and (with the train extra) a smoke train → ONNX → ``BackCheck`` chain."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from api.cli import main as cli_main
from datasets import synth
from datasets.back_crops import label_backs, scene_images
from datasets.back_crops import main as back_crops_main
from datasets.crops import read_boxes
from datasets.synth import artwork
from vision.back_check import BACK_SURE, DEFAULT_BACK_CHECK, BackCheck
from vision.classes import BACK, CLASS_NAMES
from vision.classify import DEFAULT_CLASSIFIER
from vision.detect import Detector
from vision.detections import Detections

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "datasets" / "samples"
needs_model = pytest.mark.skipif(not DEFAULT_BACK_CHECK.is_file(), reason="no shipped back check")


def _dets(classes: list[int], confidence: list[float]) -> Detections:
    n = len(classes)
    xyxy = np.array([[10 + 60 * i, 10, 60 + 60 * i, 80] for i in range(n)], np.float32)
    top3 = np.array([[c, (c + 1) % 29, (c + 2) % 29] for c in classes])
    probs = np.tile([[0.8, 0.15, 0.05]], (n, 1)).astype(np.float32)
    return Detections(xyxy, np.array(confidence, np.float32), np.array(classes), top3, probs, (400, 100))


@needs_model
def test_only_boxes_named_back_are_rescored(monkeypatch: pytest.MonkeyPatch) -> None:
    five_p = CLASS_NAMES.index("5p")
    dets = _dets([BACK, five_p, BACK], [0.9, 0.8, 0.6])
    check = BackCheck()
    seen: list[np.ndarray] = []

    def probs(img, xyxy):
        seen.append(xyxy)
        return np.array([0.25, 0.01], np.float32)

    monkeypatch.setattr(check, "probs", probs)
    out = check(np.zeros((100, 400, 3), np.uint8), dets, weight=0.5, sure=2.0)
    assert np.array_equal(seen[0], dets.xyxy[[0, 2]])  # the 5p box is not looked at
    assert out.confidence == pytest.approx([0.9 * 0.5, 0.8, 0.6 * 0.1])
    assert np.array_equal(out.class_id, dets.class_id) and np.array_equal(out.xyxy, dets.xyxy)
    assert dets.confidence[0] == pytest.approx(0.9)  # the input is unchanged
    none = check(np.zeros((100, 400, 3), np.uint8), _dets([five_p], [0.7]))
    assert none.confidence == pytest.approx([0.7]) and len(seen) == 1  # no back box: no look at all


@needs_model
def test_a_back_both_networks_are_sure_of_is_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    dets = _dets([BACK, BACK, BACK], [BACK_SURE + 0.05, BACK_SURE - 0.05, BACK_SURE])
    check = BackCheck()
    seen: list[np.ndarray] = []

    def probs(img, xyxy):
        seen.append(xyxy)
        return np.full(len(xyxy), 0.1, np.float32)

    monkeypatch.setattr(check, "probs", probs)
    out = check(np.zeros((100, 400, 3), np.uint8), dets)
    assert len(seen) == 1 and np.array_equal(seen[0], dets.xyxy[[1]])  # only the doubtful one is looked at
    assert out.confidence == pytest.approx([BACK_SURE + 0.05, (BACK_SURE - 0.05) * 0.1, BACK_SURE])


@needs_model
def test_the_detector_drops_a_back_the_check_sinks_below_its_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    detector = Detector(classifier=None)
    img = cv2.imread(str(SAMPLES / "sample_01.jpg"))
    plain = detector(img, closer=False)
    assert len(plain) > 3
    # pretend the detector named two of its boxes `back`: one the check finds a tile, one less sure and flat
    named, score = plain.class_id.copy(), plain.confidence.copy()
    named[[0, 1]] = BACK
    score[1] = 0.5
    monkeypatch.setattr("vision.detect._postprocess", lambda *a, **k: Detections(
        plain.xyxy, score, named, plain.top3_class, plain.top3_prob, plain.image_size))
    flat = plain.xyxy[1]
    monkeypatch.setattr(detector.back_check, "probs", lambda img, xyxy: np.array(
        [0.005 if np.array_equal(b, flat) else 1.0 for b in xyxy], np.float32))
    out = detector(img, conf=0.25)
    assert len(out) == len(plain) - 1
    assert not any(np.array_equal(b, plain.xyxy[1]) for b in out.xyxy)
    assert any(np.array_equal(b, plain.xyxy[0]) for b in out.xyxy)
    kept = detector(img, conf=0.001)  # a benchmark's threshold keeps it, ranked low
    low = [c for b, c in zip(kept.xyxy, kept.confidence, strict=True) if np.array_equal(b, plain.xyxy[1])]
    assert len(low) == 1 and low[0] < 0.01
    assert len(detector(img, conf=0.25, closer=False)) == len(plain)  # closer=False: no second looks at all


@pytest.fixture(scope="module")
def scene_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Twelve synthetic scenes of seed 41 (none trained on) in a builder's folder layout."""
    old, kmj_dir, shared = os.environ.get("ZHUOJI_CACHE"), artwork.KMJ_DIR, synth.shared_folder()
    os.environ["ZHUOJI_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    artwork.KMJ_DIR = Path("/nonexistent")  # optional GPL tilesets: not used in tests
    synth.set_shared(ROOT.parent / "shared")
    try:
        out = tmp_path_factory.mktemp("scenes")
        synth.build(out, n=12, seed=41, size=640, val_frac=0.0, progress=False)
    finally:
        artwork.KMJ_DIR = kmj_dir
        synth.set_shared(shared)
        if old is None:
            os.environ.pop("ZHUOJI_CACHE", None)
        else:
            os.environ["ZHUOJI_CACHE"] = old
    return out


@pytest.mark.slow
@needs_model
def test_the_shipped_check_tells_face_down_tiles_from_flat_things_of_their_colour(scene_folder: Path) -> None:
    check = BackCheck()
    tiles, flats = [], []
    for path in scene_images(scene_folder):
        img = cv2.imread(str(path))
        boxes, classes = read_boxes(path, img.shape[1], img.shape[0])
        backs = boxes[classes == BACK]
        if len(backs) == 0:
            continue
        tiles.append(check.probs(img, backs))
        # the same boxes on a bare table: a flat patch in the back's own colour, like a chip or a card
        table = cv2.GaussianBlur(img, (0, 0), 1).copy()
        table[:] = np.median(img.reshape(-1, 3), 0).astype(np.uint8)
        for x0, y0, x1, y1 in backs.astype(int):
            colour = img[(y0 + y1) // 2, (x0 + x1) // 2].tolist()
            cv2.rectangle(table, (x0, y0), (x1, y1), colour, -1)
        flats.append(check.probs(table, backs))
    tiles_p, flats_p = np.concatenate(tiles), np.concatenate(flats)
    assert len(tiles_p) >= 10
    # measured with the shipped model: medians 0.99 and 0.08
    assert np.median(tiles_p) > 0.8 and np.median(flats_p) < 0.4
    assert np.median(tiles_p) > np.median(flats_p) + 0.5


@needs_model
def test_a_model_of_another_kind_is_a_clear_error(tmp_path: Path) -> None:
    if DEFAULT_CLASSIFIER.is_file():
        with pytest.raises(ValueError, match="not a back-check model"):
            BackCheck(DEFAULT_CLASSIFIER)
    with pytest.raises(FileNotFoundError, match="back check not found"):
        BackCheck(tmp_path / "missing.onnx")


def test_boxes_are_labelled_by_their_overlap_with_back_labels() -> None:
    five_p = CLASS_NAMES.index("5p")
    labels = np.array([[0, 0, 100, 100], [200, 0, 300, 100]], np.float64)
    classes = np.array([BACK, five_p])
    boxes = np.array([[10, 0, 110, 100],    # IoU 0.82 with the back
                      [50, 0, 150, 100],    # IoU 0.33: across two tiles
                      [200, 0, 300, 100],   # on the 5p
                      [500, 0, 600, 100]])  # on nothing
    assert label_backs(boxes, labels, classes).tolist() == [True, False, False, False]
    assert label_backs(boxes, labels[1:], classes[1:]).tolist() == [False] * 4
    assert label_backs(np.zeros((0, 4)), labels, classes).shape == (0,)


@needs_model
def test_the_builder_cuts_every_box_named_back(scene_folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "backs"
    assert back_crops_main(["--scenes", str(scene_folder), "--out", str(out)]) == 0
    train, val = np.load(out / "train.npz"), np.load(out / "val.npz")
    assert train["x"].shape[1:] == (64, 64, 3) and len(train["x"]) == len(train["y"]) == len(train["confidence"])
    both = np.concatenate([train["y"], val["y"]])
    assert both.sum() >= 5  # the scenes have face-down tiles, and the pair finds them
    assert len(val["y"]) > 0  # scenes 0 and 10 go to validation
    assert (np.concatenate([train["confidence"], val["confidence"]]) >= 0.02).all()


def test_the_builder_refuses_a_folder_without_scenes(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        back_crops_main(["--scenes", str(tmp_path), "--out", str(tmp_path / "out")])
    assert exc.value.code == 2 and "no scene photos" in capsys.readouterr().err


def test_the_builder_refuses_a_model_it_cannot_load(scene_folder: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        back_crops_main(["--scenes", str(scene_folder), "--out", str(tmp_path / "out"),
                         "--model", str(tmp_path / "missing.onnx")])
    assert exc.value.code == 2 and "model not found" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- training (train extra)


def _tiny_crops(folder: Path, n: int = 96) -> Path:
    """Crops of a sample photo's boxes, half called face-down tiles: enough to train one short epoch on."""
    img = cv2.imread(str(SAMPLES / "sample_01.jpg"))
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 400, (n, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(30, 80, (n, 2))], 1)
    from vision.classify import crop_tiles

    x = crop_tiles(img, boxes, 64, 0.5)
    folder.mkdir(parents=True)
    for name, part in (("train", slice(0, n - 16)), ("val", slice(n - 16, n))):
        y = (np.arange(n)[part] % 2).astype(np.uint8)
        np.savez_compressed(folder / f"{name}.npz", x=x[part], y=y, confidence=np.ones(len(y), np.float32))
    return folder


@pytest.mark.slow
def test_smoke_train_resume_export_and_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch", reason="needs the train extra")
    pytest.importorskip("onnx", reason="needs the train extra")
    import vision.training.train_back_check as tb

    crops = _tiny_crops(tmp_path / "crops")
    real_predict, calls = tb.predict, []

    def stop_in_epoch_two(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_predict(*args, **kwargs)

    monkeypatch.setattr(tb, "predict", stop_in_epoch_two)
    with pytest.raises(KeyboardInterrupt):
        tb.train(crops, 2, tmp_path / "runs", "tiny", batch=32, width=4)
    run = tmp_path / "runs" / "tiny"
    assert len((run / "results.csv").read_text().splitlines()) == 2  # header + epoch 1
    monkeypatch.setattr(tb, "predict", real_predict)
    best = tb.train(crops, 99, tmp_path / "runs", "tiny", resume=True)  # the run's own 2 epochs, not 99
    assert [line.split(",")[0] for line in (run / "results.csv").read_text().splitlines()] == ["epoch", "1", "2"]
    check = BackCheck(tb.export_onnx(best, tmp_path / "backs.onnx"))
    p = check.probs(cv2.imread(str(SAMPLES / "sample_01.jpg")), np.array([[10, 10, 60, 80], [100, 100, 150, 170]]))
    assert p.shape == (2,) and ((p > 0) & (p < 1)).all()


def test_roc_auc_counts_ranked_pairs_and_ties() -> None:
    from vision.training.train_back_check import roc_auc

    assert roc_auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.2, 0.3, 0.4])) == pytest.approx(1.0)
    assert roc_auc(np.array([1, 1, 0, 0]), np.array([0.1, 0.2, 0.3, 0.4])) == pytest.approx(0.0)
    assert roc_auc(np.array([0, 1, 0, 1]), np.array([0.5, 0.5, 0.1, 0.9])) == pytest.approx(0.875)
    assert np.isnan(roc_auc(np.array([1, 1]), np.array([0.1, 0.2])))


def test_the_cli_refuses_a_folder_without_crops(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("torch", reason="needs the train extra")
    with pytest.raises(SystemExit) as exc:
        cli_main(["train-back-check", "--crops", str(tmp_path)])
    assert exc.value.code == 2 and "no train.npz and val.npz" in capsys.readouterr().err


@needs_model
def test_the_shipped_check_unfolds_into_torch_with_the_same_function(tmp_path: Path) -> None:
    """``--init``: the shipped ONNX's folded BatchNorms come back unfolded; eval mode computes what the ONNX does,
    and train mode (batch statistics) nearly so, so fine-tuning starts from the shipped check."""
    torch = pytest.importorskip("torch", reason="needs the train extra")
    pytest.importorskip("onnx", reason="needs the train extra")
    import vision.training.train_back_check as tb
    from vision.classify import crop_tiles

    img = cv2.imread(str(SAMPLES / "sample_06.jpg"))
    rng = np.random.default_rng(0)
    x0, y0 = rng.uniform(0, img.shape[1] - 80, 48), rng.uniform(0, img.shape[0] - 100, 48)
    boxes = np.stack([x0, y0, x0 + rng.uniform(30, 80, 48), y0 + rng.uniform(40, 100, 48)], 1)
    crops = crop_tiles(img, boxes, 64, 0.5)
    model = tb.build_model(16)
    tb.unfold_from_onnx(model, DEFAULT_BACK_CHECK, crops)
    shipped = BackCheck().probs(img, boxes)
    assert np.abs(tb.predict(model, crops) - shipped).max() < 1e-4
    model.train()
    model[-2].p = 0.0  # dropout off: compare the batch-statistics path alone
    with torch.no_grad():
        p_train = torch.sigmoid(model(tb.to_tensor(crops))[:, 0]).numpy()
    assert np.abs(p_train - shipped).max() < 0.05
    with pytest.raises(ValueError):
        tb.unfold_from_onnx(tb.build_model(8), DEFAULT_BACK_CHECK, crops)
