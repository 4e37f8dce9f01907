"""int8 models (``vision/training/quantize.py``, ``zhuoji quantize``): the tool on the float models, and the shipped int8
models against their float sources."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from api.cli import main as cli_main
from vision.classify import Classifier, crop_tiles, to_input
from vision.detect import Detector
from vision.detections import box_iou
from vision.labels import read_yolo_labels

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
FLOAT_DETECTOR, INT8_DETECTOR = MODELS / "zhuoji-tiles.onnx", MODELS / "zhuoji-tiles-int8.onnx"
FLOAT_CLASSIFIER, INT8_CLASSIFIER = MODELS / "zhuoji-crops.onnx", MODELS / "zhuoji-crops-int8.onnx"
SAMPLES = ROOT / "datasets" / "samples"
SAMPLE_LABELS = ROOT / "datasets" / "sample_labels"


def _sample_boxes() -> list[tuple[np.ndarray, np.ndarray]]:
    """(photo, labelled xyxy boxes) of the labelled samples."""
    out = []
    for label in sorted(SAMPLE_LABELS.glob("*.txt")):
        img = cv2.imread(str(SAMPLES / f"{label.stem}.jpg"))
        out.append((img, read_yolo_labels(label, img.shape[1], img.shape[0])[0]))
    return out


def _agreement(a: Detector, b: Detector, photos: list[Path]) -> tuple[int, int, int]:
    """(boxes of a, boxes of b matched at IoU ≥ 0.7, matched boxes named alike)."""
    total = matched = same = 0
    for photo in photos:
        da, db = a(photo, closer=False), b(photo, closer=False)
        total += len(da)
        if len(da) and len(db):
            iou = box_iou(da.xyxy, db.xyxy)
            hit = iou.max(1) >= 0.7
            matched += int(hit.sum())
            same += int((da.class_id[hit] == db.class_id[iou.argmax(1)[hit]]).sum())
    return total, matched, same


def test_the_detect_heads_output_layers_stay_float() -> None:
    onnx = pytest.importorskip("onnx", reason="needs the train extra")

    from vision.training.quantize import nodes_kept_float

    model = onnx.load(str(FLOAT_DETECTOR))
    kept = nodes_kept_float(model)
    head = {n.split("/")[1] for n in kept}
    assert len(head) == 1 and kept, kept
    assert not any("/conv/Conv" in n for n in kept if "/cv2." in n)  # the box branches' inner convolutions
    assert sum("/cv3." in n and n.endswith("/conv/Conv") for n in kept) == 12  # the class branches: all float
    outputs = {o.name for o in model.graph.output}
    assert any(set(n.output) & outputs for n in model.graph.node if n.name in kept)  # the joint output
    assert sum(n.endswith(".2/Conv") for n in kept) == 6  # each branch's last convolution
    classifier = onnx.load(str(FLOAT_CLASSIFIER))
    kept = nodes_kept_float(classifier)
    # the last layer and its softmax; with the `features` output (calibration) also the pooled vector it reads
    assert [n.op_type for n in classifier.graph.node if n.name in kept] == ["Flatten", "Gemm", "Softmax", "Identity"]


@pytest.mark.slow
def test_the_classifier_quantizes_and_names_tiles_as_the_float_one(tmp_path: Path) -> None:
    pytest.importorskip("onnx", reason="needs the train extra")
    from vision.training.quantize import quantize

    crops = np.concatenate([crop_tiles(img, xyxy) for img, xyxy in _sample_boxes()])
    batches = [to_input(crops[i:i + 64]) for i in range(0, len(crops), 64)]
    out = quantize(FLOAT_CLASSIFIER, tmp_path / "crops-int8.onnx", batches)
    assert out.stat().st_size < 0.4 * FLOAT_CLASSIFIER.stat().st_size
    int8, float_ = Classifier(out), Classifier(FLOAT_CLASSIFIER)  # Classifier checks the class names it carries
    assert "int8" in int8.session.get_modelmeta().custom_metadata_map["quantization"]
    agree = total = 0
    for img, xyxy in _sample_boxes():
        probs = int8.probs(img, xyxy)
        assert np.allclose(probs.sum(1), 1, atol=1e-4) and (probs < 1 / 255).any()  # float probabilities
        agree += int((probs.argmax(1) == float_.probs(img, xyxy).argmax(1)).sum())
        total += len(xyxy)
    assert total >= 100 and agree / total >= 0.95, f"{agree}/{total}"


@pytest.mark.slow
def test_the_cli_quantizes_the_detector(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("onnx", reason="needs the train extra")
    out = tmp_path / "tiles-int8.onnx"
    assert cli_main(["quantize", str(FLOAT_DETECTOR), "--images", str(SAMPLES), "--samples", "3",
                     "--out", str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    int8 = Detector(out, classifier=None)  # Detector checks the class names it carries
    total, matched, same = _agreement(Detector(FLOAT_DETECTOR, classifier=None), int8,
                                      sorted(SAMPLES.glob("*.jpg"))[:4])
    assert total >= 40 and matched >= 0.9 * total and same >= 0.9 * matched, (total, matched, same)


def test_the_cli_shows_the_quantize_options(capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("onnx", reason="needs the train extra")
    with pytest.raises(SystemExit) as exc:
        cli_main(["quantize", "--help"])
    usage = capsys.readouterr().out
    assert exc.value.code == 0 and usage.startswith("usage: zhuoji quantize") and "--samples" in usage


@pytest.mark.parametrize("args, message", [
    (["README.md"], "not an ONNX model"),
    ([str(FLOAT_DETECTOR)], "needs --images"),
    ([str(FLOAT_DETECTOR), "--images", "no/such/folder"], "no such folder or list file"),
    ([str(FLOAT_CLASSIFIER)], "needs --crops"),
    ([str(FLOAT_CLASSIFIER), "--samples", "0"], "--samples must be at least 1"),
    ([str(FLOAT_CLASSIFIER), "--percentile", "120"], "--percentile must be"),
    (["no-such.onnx"], "no such model"),
])
def test_the_cli_refuses_what_it_cannot_quantize(args: list[str], message: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("onnx", reason="needs the train extra")
    with pytest.raises(SystemExit) as exc:
        cli_main(["quantize", *args, "--out", str(tmp_path / "x.onnx")])
    assert exc.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "x.onnx").exists()


def test_a_list_file_names_calibration_photos(tmp_path: Path) -> None:
    from vision.training.quantize import list_images

    photos = sorted(SAMPLES.glob("*.jpg"))[:2]
    listing = tmp_path / "train.txt"
    listing.write_text(f"{photos[0]}\n\n{photos[1].name}\n")
    assert list_images(listing) == [photos[0], tmp_path / photos[1].name]
    assert list_images(SAMPLES)[:2] == photos


# --------------------------------------------------------------------------- the shipped int8 models


@pytest.mark.slow
def test_the_shipped_int8_detector_finds_what_the_float_one_finds() -> None:
    if not INT8_DETECTOR.is_file():
        pytest.skip("no shipped int8 detector")
    total, matched, same = _agreement(Detector(FLOAT_DETECTOR, classifier=None), Detector(INT8_DETECTOR,
                                                                                         classifier=None),
                                      sorted(SAMPLES.glob("*.jpg")))
    assert total >= 150 and matched >= 0.95 * total and same >= 0.95 * matched, (total, matched, same)


@pytest.mark.slow
def test_the_shipped_int8_classifier_names_tiles_as_the_float_one() -> None:
    if not INT8_CLASSIFIER.is_file():
        pytest.skip("no shipped int8 classifier")
    int8, float_ = Classifier(INT8_CLASSIFIER), Classifier(FLOAT_CLASSIFIER)
    agree = total = 0
    for img, xyxy in _sample_boxes():
        agree += int((int8.probs(img, xyxy).argmax(1) == float_.probs(img, xyxy).argmax(1)).sum())
        total += len(xyxy)
    assert total >= 100 and agree / total >= 0.97, f"{agree}/{total}"


@pytest.mark.parametrize("model", [INT8_DETECTOR, INT8_CLASSIFIER], ids=lambda p: p.name)
def test_the_shipped_int8_weights_fit_in_7_bits(model: Path) -> None:
    """x86 CPUs without VNNI add pairs of u8×s8 products in int16: 8-bit weights saturate there, and an int8 model
    that is right on a VNNI machine reads almost nothing on an AVX2-only one. 7-bit weights (|w| ≤ 64) never saturate."""
    onnx = pytest.importorskip("onnx", reason="needs the train extra")
    from onnx import numpy_helper

    if not model.is_file():
        pytest.skip(f"no shipped {model.name}")
    graph = onnx.load(str(model)).graph
    # int8 tensors of 2 or more dimensions are the convolution and dense weights (zero points are 0-D or 1-D)
    weights = [numpy_helper.to_array(t) for t in graph.initializer
               if t.data_type == onnx.TensorProto.INT8 and len(t.dims) >= 2]
    assert len(weights) >= 10
    # |w| ≤ 64: two products 255 × 64 sum to 32,640, inside int16
    assert all(np.abs(w.astype(np.int32)).max() <= 64 for w in weights), [int(abs(w).max()) for w in weights][:5]


def test_the_shipped_int8_detector_is_stored_optimized(tmp_path: Path) -> None:
    """onnxruntime fuses each quantize/dequantize pair around a convolution into one int8 operator when it opens a
    model: done once in the file (``optimize_graph``), not in every process (the detector opened in 57 instead of
    127 ms CPU). The crop classifier's file keeps its bytes until its next quantization: kept table calibrations
    name it by its SHA-256, and a new hash would ask every table to recalibrate for 11 ms."""
    model = INT8_DETECTOR
    onnx = pytest.importorskip("onnx", reason="needs the train extra")
    from vision.training.quantize import optimize_graph

    if not model.is_file():
        pytest.skip(f"no shipped {model.name}")
    ops = [n.op_type for n in onnx.load(str(model)).graph.node]
    # unfused, the int8 detector held 408 DequantizeLinear nodes and no QLinearConv; fused, those left feed the
    # float layers of the head
    assert ops.count("QLinearConv") >= 10 and ops.count("DequantizeLinear") < ops.count("QLinearConv") / 4
    again = onnx.load(str(optimize_graph(model, tmp_path / "again.onnx")))
    assert len(again.graph.node) == len(ops)  # nothing left for onnxruntime to fuse at start-up


def test_an_optimized_graph_computes_the_same_and_keeps_its_metadata(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx", reason="needs the train extra")
    from vision.training.quantize import optimize_graph

    out = optimize_graph(FLOAT_CLASSIFIER, tmp_path / "crops-optimized.onnx")
    source, optimized = Classifier(FLOAT_CLASSIFIER), Classifier(out)  # Classifier checks the class names it carries
    assert ({p.key: p.value for p in onnx.load(str(out)).metadata_props}
            == {p.key: p.value for p in onnx.load(str(FLOAT_CLASSIFIER)).metadata_props})
    img, xyxy = _sample_boxes()[0]
    assert len(xyxy) >= 10
    assert np.allclose(optimized.probs(img, xyxy), source.probs(img, xyxy), atol=1e-5)
