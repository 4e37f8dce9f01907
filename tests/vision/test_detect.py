"""The detection stage: image loading, letterbox geometry, post-processing, evaluation, the shipped model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import cv2
import numpy as np
import pytest

import vision.detect as detect_module
from api.cli import main
from vision.classes import CLASS_NAMES, NUM_CLASSES
from vision.classify import Classifier
from vision.detect import (
    ANY_NAME_IOU,
    CANDIDATE_CONF,
    DEFAULT_MODEL,
    ROW_CONF,
    SAME_NAME_IOU,
    WINDOW_LINEAR_FROM,
    Detector,
    ImageError,
    _far_edge,
    _postprocess,
    _window_boxes_first,
    detect,
    in_a_row,
    letterbox,
    load_image,
    suppress_same_name,
    unturn_boxes,
)
from vision.detections import Detections, box_iou
from vision.tiling import Window
from vision.training.evaluate import (
    EvalResult,
    _ap,
    evaluate,
    finding_ap50,
    named_by_labels,
    read_difficult,
    read_unlabelled,
    read_yolo_labels,
    with_alternatives,
)

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "datasets" / "samples").glob("*.jpg"))


def test_load_image_rejects_non_images(tmp_path: Path) -> None:
    bad = tmp_path / "notes.jpg"
    bad.write_text("not an image")
    with pytest.raises(ImageError, match="not a readable image"):
        load_image(bad)
    with pytest.raises(ImageError, match="no such file"):
        load_image(tmp_path / "missing.png")
    with pytest.raises(ImageError, match="empty"):
        load_image(b"")


def test_load_image_refuses_huge_dimensions_from_the_header() -> None:
    # A PNG header announcing 100000×100000 pixels must be refused before any decoding.
    header = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (100000).to_bytes(4, "big") * 2 + b"\x08\x02\x00\x00\x00"
    with pytest.raises(ImageError, match="too large"):
        load_image(header + b"\x00" * 100)


def test_load_image_refuses_bombs_in_every_header_format() -> None:
    import struct

    bmp = b"BM" + b"\0" * 12 + (40).to_bytes(4, "little") + struct.pack("<ii", 100000, 100000) + b"\0" * 40
    webp = b"RIFF" + b"\0" * 4 + b"WEBPVP8X" + b"\0" * 8 + (20000).to_bytes(3, "little") * 2 + b"\0" * 10
    for data in (bmp, webp):
        with pytest.raises(ImageError, match="too large"):
            load_image(data)
    with pytest.raises(ImageError, match="not a readable image"):
        load_image(b"GIF89a" + b"\0" * 50)


def test_load_image_accepts_bytes_and_grey_arrays() -> None:
    img = np.zeros((30, 40, 3), np.uint8)
    img[:, :20] = 255
    ok, png = cv2.imencode(".png", img)
    assert ok
    assert load_image(png.tobytes()).shape == (30, 40, 3)
    assert load_image(np.zeros((5, 6), np.uint8)).shape == (5, 6, 3)


def test_letterbox_keeps_aspect_and_maps_back() -> None:
    img = np.zeros((480, 1280, 3), np.uint8)
    canvas, lb = letterbox(img, 640)
    assert canvas.shape == (640, 640, 3)
    assert lb.scale == pytest.approx(0.5)
    assert (lb.pad_x, lb.pad_y) == (0, 200)
    assert (canvas[:200] == 114).all() and (canvas[200:440] == 0).all()


def test_a_window_is_scaled_bilinearly_and_the_whole_photo_area_averaged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A window over small tiles shrinks by 0.7-1: bilinear keeps its tiles sharp; the whole photo shrinks by far
    more, where only averaging each output pixel's area keeps fine patterns from aliasing."""
    rng = np.random.default_rng(0)
    window = rng.integers(0, 256, (758, 758, 3), np.uint8)  # a catalogue window's size
    canvas, lb = letterbox(window, 640, upscale=False, linear_from=WINDOW_LINEAR_FROM)
    assert lb.scale == pytest.approx(640 / 758)
    np.testing.assert_array_equal(canvas, cv2.resize(window, (640, 640), interpolation=cv2.INTER_LINEAR))
    photo = rng.integers(0, 256, (1224, 1632, 3), np.uint8)
    canvas, lb = letterbox(photo, 640)
    area = cv2.resize(photo, (640, 480), interpolation=cv2.INTER_AREA)
    np.testing.assert_array_equal(canvas[lb.pad_y:lb.pad_y + 480], area)
    # a window scaled by less than WINDOW_LINEAR_FROM (one grown over many small tiles) is area-averaged too
    wide = rng.integers(0, 256, (1400, 1400, 3), np.uint8)
    canvas, _ = letterbox(wide, 640, upscale=False, linear_from=WINDOW_LINEAR_FROM)
    np.testing.assert_array_equal(canvas, cv2.resize(wide, (640, 640), interpolation=cv2.INTER_AREA))
    # and the detector's windows take that path, its first pass the other
    seen = []
    real = detect_module.letterbox
    monkeypatch.setattr(detect_module, "letterbox", lambda img, size, upscale=True, linear_from=1.0: (
        seen.append((img.shape[:2], upscale, linear_from)) or real(img, size, upscale, linear_from)))
    detector = Detector.__new__(Detector)  # the letterbox choice alone: no model needed
    detector.size = 640
    detector.raw = lambda canvas: np.zeros((4 + NUM_CLASSES, 10), np.float32)
    detector._predict(photo, 0, 0, 0.25)
    detector._predict(window, 400, 200, 0.25, window=True)
    assert seen == [((1224, 1632), True, 1.0), ((758, 758), False, WINDOW_LINEAR_FROM)]


def test_a_table_photo_gets_a_window_per_column_centred_on_the_top_edge_of_its_tiles() -> None:
    """From a seat the far hand's row can be missed by the first pass and lie at the planned windows' top edge:
    one more window per planned column, of the planned size, centred on the top edge of the tiles found, inside
    the photo."""
    planned = [Window(x, y, x + 700, y + 700) for y in (300, 650) for x in (0, 450, 900)]
    boxes = np.array([[100, 420, 160, 480], [900, 500, 960, 560], [300, 1200, 360, 1260]], np.float32)
    extra = _far_edge(planned, boxes, (1600, 1600))
    assert extra == [Window(x, 70, x + 700, 770) for x in (0, 450, 900)]
    near_top = _far_edge(planned, boxes - [0, 300, 0, 300], (1600, 1600))
    assert {(v.y0, v.y1) for v in near_top} == {(0, 700)}  # clamped to the photo
    low = _far_edge(planned, boxes + [0, 1200, 0, 1200], (1600, 1700))
    assert {(v.y0, v.y1) for v in low} == {(1000, 1700)}


def test_postprocess_is_class_agnostic_and_gives_top3() -> None:
    scores = np.zeros((3, NUM_CLASSES), np.float32)
    scores[0, [3, 4, 5]] = [0.9, 0.3, 0.1]  # 4m, strongly
    scores[1, 8] = 0.6  # same place as box 0, another class: suppressed
    scores[2, 20] = 0.8  # elsewhere
    boxes = np.array([[0, 0, 10, 20], [1, 0, 11, 20], [50, 0, 60, 20]], np.float32)
    dets = _postprocess(boxes, scores, 0.25, 0.5, 300, (100, 40))
    assert sorted(dets.names) == ["3s", "4m"]
    i = dets.names.index("4m")
    assert [CLASS_NAMES[c] for c in dets.top3_class[i]] == ["4m", "5m", "6m"]
    assert dets.top3_prob[i, 0] == pytest.approx(0.9 / 1.3)
    assert dets.probs[i].sum() == pytest.approx(1.0) and dets.probs[i, 5] == pytest.approx(0.1 / 1.3)


def test_boxes_of_one_name_are_one_tile_from_a_lower_overlap_than_boxes_of_two_names() -> None:
    assert SAME_NAME_IOU < ANY_NAME_IOU
    # neighbours in a row seen at a slant: whole-tile boxes overlapping by IoU 0.65
    boxes = np.array([[0, 0, 100, 100], [21.2, 0, 121.2, 100], [300, 0, 400, 100]], np.float32)
    assert box_iou(boxes[:1], boxes[1:2])[0, 0] == pytest.approx(0.65, abs=0.01)
    scores = np.zeros((3, NUM_CLASSES), np.float32)
    scores[[0, 1, 2], [1, 2, 1]] = [0.9, 0.8, 0.7]  # 2m, 3m beside it, another 2m far away
    dets = _postprocess(boxes, scores, 0.25, ANY_NAME_IOU, 300, (400, 100))
    assert sorted(dets.names) == ["2m", "2m", "3m"]  # the class-agnostic step keeps both neighbours
    assert sorted(suppress_same_name(dets, SAME_NAME_IOU).names) == ["2m", "2m", "3m"]
    dets.class_id[dets.names.index("3m")] = 1  # the second look names the neighbour 2m too: a second box on one tile
    kept = suppress_same_name(dets, SAME_NAME_IOU)
    assert len(kept) == 2 and sorted(kept.confidence.tolist()) == pytest.approx([0.7, 0.9])
    assert len(suppress_same_name(dets, 0.7)) == 3  # under the threshold: two tiles
    # beyond ANY_NAME_IOU two names are one tile all the same
    close = boxes.copy()
    close[1] = [10, 0, 110, 100]  # IoU 0.82
    assert sorted(_postprocess(close, scores, 0.25, ANY_NAME_IOU, 300, (400, 100)).names) == ["2m", "2m"]


def test_the_detect_commands_iou_help_states_the_detectors_thresholds(capsys: pytest.CaptureFixture[str]) -> None:
    # the CLI writes them out rather than importing vision.detect (OpenCV, onnxruntime) to build its parser
    with pytest.raises(SystemExit):
        main(["detect", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"default {SAME_NAME_IOU};" in text and f"different names from {ANY_NAME_IOU}" in text


def test_postprocess_vote_averages_the_class_scores_of_one_tile() -> None:
    scores = np.zeros((3, NUM_CLASSES), np.float32)
    scores[0, [1, 2]] = [0.7, 0.5]  # one look says 2m
    scores[1, [1, 2]] = [0.1, 0.6]  # the other look, same tile, says 3m
    scores[2, 20] = 0.8  # another tile
    boxes = np.array([[0, 0, 10, 20], [0.5, 0, 10.5, 20], [50, 0, 60, 20]], np.float32)
    plain = _postprocess(boxes.copy(), scores, 0.25, 0.5, 300, (100, 40))
    voted = _postprocess(boxes.copy(), scores, 0.25, 0.5, 300, (100, 40), vote=True)
    assert sorted(plain.names) == ["2m", "3s"]
    assert sorted(voted.names) == ["3m", "3s"]  # mean 2m 0.4, 3m 0.55
    i = voted.names.index("3m")
    assert voted.confidence[i] == pytest.approx(0.55)
    assert voted.confidence[voted.names.index("3s")] == pytest.approx(0.8)  # alone: unchanged


def test_weak_candidates_do_not_vote() -> None:
    """Candidates under the caller's confidence (there for the second look) do not dilute a tile's scores: one
    sure look (2m 0.6) and two weak ones (best 0.16) on the same tile stay a sure 2m."""
    scores = np.zeros((3, NUM_CLASSES), np.float32)
    scores[0, 1] = 0.6
    scores[1:, 5] = 0.16
    boxes = np.array([[0, 0, 10, 20], [0.3, 0, 10.3, 20], [0, 0.3, 10, 20.3]], np.float32)
    diluted = _postprocess(boxes.copy(), scores, 0.15, 0.5, 300, (100, 40), vote=True)
    floored = _postprocess(boxes.copy(), scores, 0.15, 0.5, 300, (100, 40), vote=True, vote_floor=0.25)
    assert diluted.confidence.tolist() == pytest.approx([0.2])
    assert floored.names == ["2m"] and floored.confidence.tolist() == pytest.approx([0.6])


def test_postprocess_drops_a_weak_box_across_two_tiles_but_keeps_a_row() -> None:
    # A row of four 40-px tiles, and a weak box straddling tiles 2 and 3 off-centre (real case: hand_05).
    row = [[x, 0, x + 40, 70] for x in (0, 41, 82, 123)]
    boxes = np.array([*row, [55, -3, 134, 76]], np.float32)
    scores = np.zeros((5, NUM_CLASSES), np.float32)
    scores[np.arange(5), [0, 1, 2, 3, 2]] = [0.7, 0.6, 0.55, 0.5, 0.29]
    dets = _postprocess(boxes, scores, 0.25, 0.5, 300, (200, 80))
    assert sorted(dets.names) == ["1m", "2m", "3m", "4m"]
    # The same weak box with only one more confident neighbour under it is a tile of its own: kept.
    alone = _postprocess(boxes[[0, 4]], scores[[0, 4]], 0.25, 0.5, 300, (200, 80))
    assert len(alone) == 2
    # Neighbours that overlap a little (tight row, perspective) are all kept.
    tight = np.array([[x, 0, x + 40, 70] for x in (0, 32, 64, 96)], np.float32)
    assert len(_postprocess(tight, scores[:4], 0.25, 0.5, 300, (200, 80))) == 4
    # A weak tile whose two neighbours cover 80% of it (steep perspective) is kept: it is no bigger than they are.
    steep = np.array([[0, 0, 40, 70], [48, 0, 88, 70], [24, 0, 64, 70]], np.float32)
    assert len(_postprocess(steep, scores[[0, 1, 4]], 0.25, 0.5, 300, (200, 80))) == 3


def test_ap_of_perfect_and_empty_predictions() -> None:
    assert _ap(np.array([0.9, 0.8]), np.array([True, True]), 2) == pytest.approx(1.0)
    assert _ap(np.array([]), np.array([], bool), 3) == 0.0
    assert np.isnan(_ap(np.array([0.5]), np.array([False]), 0))
    assert box_iou(np.array([[0, 0, 2, 2]], float), np.array([[1, 0, 3, 2]], float))[0, 0] == pytest.approx(1 / 3)


def test_evaluate_scores_a_perfect_predictor_at_one(tmp_path: Path) -> None:
    img = tmp_path / "a.jpg"
    cv2.imwrite(str(img), np.zeros((100, 200, 3), np.uint8))
    (tmp_path / "a.txt").write_text("0 0.25 0.5 0.1 0.4\n27 0.75 0.5 0.1 0.4\n")
    boxes, cls = read_yolo_labels(tmp_path / "a.txt", 200, 100, {27: 28})
    assert cls.tolist() == [0, 28]
    result: EvalResult = evaluate(lambda _p: (boxes, np.array([0.9, 0.8]), cls), [img], tmp_path, {27: 28})
    assert result.ap50[0] == pytest.approx(1.0) and result.ap50[28] == pytest.approx(1.0)
    assert result.confusion[0, 0] == 1
    wrong = evaluate(lambda _p: (boxes, np.array([0.9, 0.8]), np.array([1, 28])), [img], tmp_path, {27: 28})
    assert wrong.ap50[0] == 0.0 and wrong.confused([("1m", "2m")]) == {"1m→2m": 1}


def test_finding_ignores_names_and_the_naming_ceiling_renames_found_boxes(tmp_path: Path) -> None:
    img = tmp_path / "a.jpg"
    cv2.imwrite(str(img), np.zeros((100, 200, 3), np.uint8))
    (tmp_path / "a.txt").write_text("0 0.25 0.5 0.1 0.4\n5 0.5 0.5 0.1 0.4\n27 0.75 0.5 0.1 0.4\n")
    boxes, _ = read_yolo_labels(tmp_path / "a.txt", 200, 100)
    # both suited tiles found but misnamed, a spurious box far from any tile, the back tile missed
    found = np.concatenate([boxes[:2], [[0, 0, 10, 10]]])

    def predict(_p: Path):
        return found, np.array([0.9, 0.8, 0.95]), np.array([3, 7, 4])

    assert evaluate(predict, [img], tmp_path).map50() == 0.0
    # the spurious box outranks both hits: precision 1/2 then 2/3 at full recall
    assert finding_ap50(predict, [img], tmp_path) == pytest.approx(2 / 3, abs=0.01)
    renamed = named_by_labels(predict, tmp_path)
    assert renamed(img)[2].tolist() == [0, 5, 4]  # the spurious box keeps its name
    ceiling = evaluate(renamed, [img], tmp_path)
    assert ceiling.ap50[0] == pytest.approx(1.0) and ceiling.ap50[5] == pytest.approx(1.0)
    assert ceiling.ap50[27] == 0.0  # the missed back tile stays missed
    # of 3 labels 2 read right; of 3 boxes 2 right (the spurious one counts against precision)
    assert ceiling.tile_accuracy() == (pytest.approx(2 / 3), pytest.approx(2 / 3), 3)
    assert evaluate(predict, [img], tmp_path).tile_accuracy()[:2] == (0.0, 0.0)


def test_scored_with_alternatives_a_misnamed_box_still_counts_for_its_right_name(tmp_path: Path) -> None:
    img = tmp_path / "a.jpg"
    cv2.imwrite(str(img), np.zeros((100, 200, 3), np.uint8))
    (tmp_path / "a.txt").write_text("1 0.25 0.5 0.1 0.4\n20 0.75 0.5 0.1 0.4\n")
    boxes, _ = read_yolo_labels(tmp_path / "a.txt", 200, 100)
    # the 2m is read 3m first (0.6) and 2m second (0.3); the 3s is read right, with no alternative
    dets = Detections(boxes, [0.8, 0.9], [2, 20], [[2, 1, 0], [20, -1, -1]], [[0.6, 0.3, 0.1], [1.0, 0, 0]],
                      (200, 100))
    top1 = evaluate(lambda _p: (dets.xyxy, dets.confidence, dets.class_id), [img], tmp_path)
    assert top1.ap50[1] == 0.0 and top1.ap50[20] == pytest.approx(1.0)
    xyxy, scores, cls = with_alternatives(dets)
    assert cls.tolist() == [2, 20, 1, 0]
    assert scores.tolist() == pytest.approx([0.8, 0.9, 0.4, 0.8 / 6])
    multi = evaluate(lambda _p: (xyxy, scores, cls), [img], tmp_path)
    assert multi.ap50[1] == pytest.approx(1.0) and multi.ap50[20] == pytest.approx(1.0)
    assert with_alternatives(dets, 1)[2].tolist() == [2, 20]


def test_difficult_labels_are_left_out_as_pascal_voc_does(tmp_path: Path) -> None:
    img = tmp_path / "a.jpg"
    cv2.imwrite(str(img), np.zeros((100, 200, 3), np.uint8))
    (tmp_path / "a.txt").write_text("0 0.15 0.5 0.1 0.4\n0 0.5 0.5 0.1 0.4\n0 0.85 0.5 0.1 0.4\n")
    hard = tmp_path / "difficult"
    hard.mkdir()
    (hard / "a.txt").write_text("-\nblurred\ntruncated+blurred\n")
    boxes, _ = read_yolo_labels(tmp_path / "a.txt", 200, 100)
    # the easy tile is found, the first difficult one is found but misnamed 2m (a wrong box for 2m, with all
    # labels), the second is found as 1m with the highest score, then one spurious 1m box far from any tile
    found = np.concatenate([boxes, [[90, 0, 110, 10]]])

    def predict(_p: Path):
        return found, np.array([0.5, 0.9, 0.95, 0.6]), np.array([0, 1, 0, 0])

    every = evaluate(predict, [img], tmp_path)
    assert every.gt_count[0] == 3 and every.confusion[0, 1] == 1
    easy = evaluate(predict, [img], tmp_path, difficult_dir=hard)
    assert easy.gt_count[0] == 1
    # 1m: the box on the truncated tile is neither right nor wrong; the spurious box outranks the one hit
    assert easy.ap50[0] == pytest.approx(0.5, abs=0.01)
    # per class, as in VOC: the 2m box is on no 2m, difficult or not, so it still counts against 2m, which has
    # nothing to find here (no AP); only the confusion matrix, which matches across classes, leaves it out
    assert np.isnan(easy.ap50[1])
    assert easy.confusion[0, 1] == 0 and easy.confusion[0, 0] == 1 and easy.confusion[NUM_CLASSES, 0] == 1
    assert easy.confusion[NUM_CLASSES, 1] == 0
    assert finding_ap50(predict, [img], tmp_path, difficult_dir=hard) == pytest.approx(0.5, abs=0.01)
    assert read_difficult(hard / "none.txt", 2).tolist() == [False, False]  # no file: nothing is difficult
    with pytest.raises(ValueError, match="2 difficulty words for 3 labels"):
        (hard / "a.txt").write_text("-\nblurred\n")
        evaluate(predict, [img], tmp_path, difficult_dir=hard)


def test_boxes_on_tiles_the_labels_leave_out_are_neither_right_nor_wrong(tmp_path: Path) -> None:
    img = tmp_path / "a.jpg"
    cv2.imwrite(str(img), np.zeros((100, 200, 3), np.uint8))
    (tmp_path / "a.txt").write_text("0 0.15 0.8 0.1 0.4\n")  # one labelled 1m at the bottom left
    # the labelled tile found (0.9), a second box on it (0.5), a box on an unlabelled tile in the region above
    # (0.95) and a spurious box outside every region (0.7)
    found = np.array([[10, 60, 40, 99], [12, 62, 42, 99], [100, 5, 130, 40], [160, 60, 190, 99]], float)

    def predict(_p: Path):
        return found, np.array([0.9, 0.5, 0.95, 0.7]), np.array([0, 0, 0, 0])

    regions = tmp_path / "unlabelled.json"
    regions.write_text('{"a": [[0.4, 0.0, 1.0, 0.45], [0.0, 0.5, 0.3, 1.0]]}')
    unlabelled = read_unlabelled(regions)
    assert unlabelled["a"].shape == (2, 4)
    every = evaluate(predict, [img], tmp_path)
    left_out = evaluate(predict, [img], tmp_path, unlabelled=unlabelled)
    # every box scored: 0.95 wrong, then 0.9 right → AP 1/2; three boxes on no label
    assert every.ap50[0] == pytest.approx(0.5, abs=0.01) and every.confusion[NUM_CLASSES, 0] == 3
    # the box on the unlabelled tile is not scored → AP 1; the second box on the labelled tile stays an extra
    # although the second region covers it, and so does the spurious one outside the regions
    assert left_out.ap50[0] == pytest.approx(1.0) and left_out.confusion[NUM_CLASSES, 0] == 2
    assert left_out.gt_count[0] == 1 and left_out.confusion[0, 0] == 1
    other = evaluate(predict, [img], tmp_path, unlabelled={"b": unlabelled["a"]})  # regions of another photo
    assert other.ap50[0] == pytest.approx(every.ap50[0])


needs_model = pytest.mark.skipif(not (DEFAULT_MODEL.exists() or os.environ.get("ZHUOJI_MODEL")),
                                 reason="no shipped model (models/zhuoji-tiles-int8.onnx) and ZHUOJI_MODEL not set")


@needs_model
def test_shipped_model_finds_tiles_in_real_samples() -> None:
    assert SAMPLES, "datasets/samples holds the real sample photos"
    found = 0
    for path in SAMPLES[:5]:
        dets = detect(path)
        h, w = cv2.imread(str(path)).shape[:2]
        assert dets.image_size == (w, h)
        assert (dets.xyxy[:, 2] <= w).all() and (dets.xyxy[:, 3] <= h).all()
        found += len(dets)
    assert found >= 20


@needs_model
def test_a_low_threshold_keeps_the_weak_candidates_it_asks_for(detector) -> None:
    """A benchmark asks for conf 0.001 to score the whole precision–recall curve: boxes below the usual 0.05 come
    back, and a higher threshold keeps exactly the boxes of the lower one that reach it."""
    photo = SAMPLES[0]
    low = detector(photo, conf=0.001, closer=False)
    usual = detector(photo, conf=0.25, closer=False)
    assert (low.confidence < 0.05).sum() >= 10
    strong = low[np.flatnonzero(low.confidence >= 0.25)]
    assert len(usual) >= 10 and sorted(usual.names) == sorted(strong.names)


@needs_model
def test_detect_cli_json_and_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"\xff\xd8garbage")
    out = tmp_path / "ann"
    code = main(["detect", str(SAMPLES[0]), str(bad), "--json", "--annotate", str(out)])
    captured = capsys.readouterr()
    assert code == 1  # one file failed, the other was still processed
    line = json.loads(captured.out.strip().splitlines()[0])  # the body of POST /v1/detect for the first photo
    assert line["count"] == len(line["tiles"]) > 0 and set(line["image"]) == {"width", "height"}
    assert set(line["tiles"][0]) == {"index", "tile", "box", "confidence", "alternatives"}
    assert "broken.jpg" in captured.err and "Traceback" not in captured.err
    assert (out / f"{SAMPLES[0].stem}.jpg").exists()


@needs_model
def test_the_turned_look_is_the_same_reading_whichever_way_up_the_photo_is() -> None:
    photo = cv2.imread(str(SAMPLES[2]))
    h, w = photo.shape[:2]
    upright = detect(photo, turned=True)
    upside_down = detect(np.ascontiguousarray(photo[::-1, ::-1]), turned=True)
    assert len(upright) >= 5 and len(upright) == len(upside_down)
    back = upside_down.xyxy[:, [2, 3, 0, 1]] * -1 + [w, h, w, h]  # boxes of the turned photo, mapped back
    match = box_iou(upright.xyxy, back).argmax(1)
    assert box_iou(upright.xyxy, back).max(1).min() > 0.95
    assert upright.names == [upside_down.names[j] for j in match]
    # the crop classifier sees each crop turned too (trained on all four turns, not exactly invariant): close
    np.testing.assert_allclose(upright.confidence, upside_down.confidence[match], atol=0.03)


@pytest.mark.parametrize("quarters", [1, 2, 3])
def test_boxes_found_in_a_quarter_turned_photo_map_back_to_the_photo(quarters: int) -> None:
    h, w = 30, 50  # not square: a quarter turn swaps the sides
    photo = np.zeros((h, w), np.uint8)
    photo[7:20, 5:12] = 1  # one tile: x 5..12, y 7..20
    ys, xs = np.nonzero(np.rot90(photo, quarters))
    found = np.array([[xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]], np.float64)
    np.testing.assert_array_equal(unturn_boxes(found, quarters, (w, h)), [[5, 7, 12, 20]])


@needs_model
def test_a_quarter_turned_look_reads_a_photo_lying_on_its_side() -> None:
    """A hand photo turned a quarter (as a side seat's tiles lie in a table photo): the look turned back a quarter
    finds its tiles where the upright photo has them, with the same names."""
    photo = cv2.imread(str(SAMPLES[2]))
    h, w = photo.shape[:2]
    upright = detect(photo)
    sideways = np.ascontiguousarray(np.rot90(photo, 3))  # a quarter clockwise
    both = detect(sideways, turned=(1,))
    # the upright photo is the sideways one turned back a quarter: its boxes, mapped as that look's are
    expected = unturn_boxes(upright.xyxy.astype(np.float64), 1, (h, w))
    iou = box_iou(expected, both.xyxy)
    assert len(upright) >= 5 and (iou.max(1) > 0.8).all()
    assert upright.names == [both.names[j] for j in iou.argmax(1)]


@pytest.mark.slow
@needs_model
def test_tiled_inference_maps_crop_boxes_back_to_the_photo() -> None:
    # A 4×3 mosaic of one sample photo: about 2560×1920, tiles small relative to the whole.
    tile = cv2.imread(str(SAMPLES[1]))
    mosaic = np.vstack([np.hstack([tile] * 4)] * 3)
    plain = detect(mosaic, tiled=False)
    tiled = detect(mosaic, tiled=True)
    h, w = mosaic.shape[:2]
    assert tiled.image_size == (w, h)
    assert len(tiled) >= len(plain)
    assert (tiled.xyxy[:, 0] >= 0).all() and (tiled.xyxy[:, 2] <= w).all() and (tiled.xyxy[:, 3] <= h).all()
    # Boxes are found all over the mosaic, not only in the first crop.
    assert tiled.centers[:, 0].max() > 0.75 * w and tiled.centers[:, 1].max() > 0.66 * h


class _Scripted(Detector):
    """A detector whose network gives fixed anchors (no model file), with a crop classifier that names every crop
    ``3m`` surely: the stage's own thresholds and second look are what is tested."""

    def __init__(self, anchors: list[tuple[tuple[float, float, float, float], dict[str, float]]]) -> None:
        out = np.zeros((4 + NUM_CLASSES, len(anchors)), np.float32)
        for i, ((cx, cy, w, h), scores) in enumerate(anchors):
            out[:4, i] = cx, cy, w, h
            for name, s in scores.items():
                out[4 + CLASS_NAMES.index(name), i] = s
        self.out, self.size, self.min_side = out, 640, 1600
        self.back_check = self.upright = None
        self.classifier = _SureOf3m.__new__(_SureOf3m)

    def raw(self, canvas: np.ndarray) -> np.ndarray:
        return self.out


class _SureOf3m(Classifier):
    def looks(self, img: np.ndarray, xyxy: np.ndarray, turns: tuple[int, ...] = (0,),
              aspect: float | None = None, sharper: np.ndarray | None = None) -> tuple[np.ndarray, None]:
        p = np.full((len(turns), len(xyxy), NUM_CLASSES), 0.001, np.float32)
        p[..., CLASS_NAMES.index("3m")] = 1.0
        return p / p.sum(2, keepdims=True), None


def test_a_tile_the_detector_could_not_name_reaches_the_second_look_and_weak_boxes_are_cut() -> None:
    """A tile in an unseen face style splits the detector's scores over look-alikes (2m 0.2, 3m 0.18, 4m 0.17):
    surely a tile, its best score under 0.25. It is a candidate (from ``CANDIDATE_CONF``) and the second look
    names it; a box with one weak score and nothing else stays weak and is not returned."""
    unnamed = ((100.0, 100.0, 40.0, 56.0), {"2m": 0.2, "3m": 0.18, "4m": 0.17})
    weak = ((300.0, 100.0, 40.0, 56.0), {"5p": 0.2})
    sure = ((500.0, 100.0, 40.0, 56.0), {"3m": 0.9})
    image = np.full((640, 640, 3), 128, np.uint8)
    detector = _Scripted([unnamed, weak, sure])
    found = detector(image)
    assert CANDIDATE_CONF < 0.2
    assert sorted(found.xyxy[:, 0].round().tolist()) == [80.0, 480.0]
    assert found.names == ["3m", "3m"] and (found.confidence >= 0.25).all()
    assert detector(image, conf=0.2).xyxy[:, 0].round().tolist() == [480.0, 80.0, 280.0]
    # Candidates only from the caller's floor: the unnamed tile is never looked at.
    only_sure = detector(image, candidate_conf=0.25)
    assert only_sure.xyxy[:, 0].round().tolist() == [480.0]
    # Without the second look the cut is the detector's best score, as before.
    plain = detector(image, closer=False)
    assert plain.xyxy[:, 0].round().tolist() == [480.0]


def _boxes(xyxy: list[tuple[float, float, float, float]], confidence: list[float],
           image_size: tuple[int, int] = (640, 480)) -> Detections:
    n = len(xyxy)
    return Detections(np.array(xyxy, np.float32), np.array(confidence, np.float32), np.zeros(n, np.int64),
                      np.zeros((n, 3), np.int64), np.tile([[0.9, 0.05, 0.05]], (n, 1)).astype(np.float32), image_size)


def test_a_weak_box_in_a_row_beside_a_sure_tile_of_its_size_is_a_tile() -> None:
    row = [(100 + 42 * i, 100, 140 + 42 * i, 156) for i in range(3)]  # three sure tiles, 40×56, 2 px apart
    boxes = _boxes([*row, (42, 300, 82, 356),  # and a fourth sure tile near the photo's left edge
                    (226, 100, 266, 156),  # the next tile of the row: weak
                    (100, 158, 140, 214),  # under the first tile (a row running down the photo): weak
                    (400, 300, 440, 356),  # alone on the table
                    (120, 100, 160, 156),  # half on two sure tiles
                    (226, 100, 300, 200),  # where a tile could be, but twice its size
                    (0, 300, 40, 356),  # beside the fourth, but touching the edge: a tile may be cut there
                    (4, 244, 44, 300),  # above that weak one only: weak boxes are no anchors
                    (268, 100, 308, 156)],  # two tiles on from the sure ones
                   [0.9, 0.8, 0.7, 0.9, 0.2, 0.15, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2])
    assert in_a_row(boxes, 0.25, (640, 480)).tolist() == [False] * 4 + [True, True] + [False] * 6
    # from the floor up only; the sure tiles are the anchors, so a caller's lower threshold leaves fewer weak
    low = _boxes([*row, (226, 100, 266, 156)], [0.9, 0.8, 0.7, ROW_CONF - 0.01])
    assert not in_a_row(low, 0.25, (640, 480)).any()
    assert not in_a_row(boxes, 0.001, (640, 480)).any()  # a benchmark's whole curve: nothing lifted
    assert not in_a_row(_boxes([], []), 0.25, (640, 480)).any()


def test_the_detector_keeps_a_weak_tile_in_a_row_at_its_threshold() -> None:
    """The row rule in the stage: a weak box beside three sure tiles comes out at ``conf``; the same box alone on
    the table does not, and without the second look (``closer=False``) nothing is lifted."""
    row = [((100.0 + 42 * i, 100.0, 40.0, 56.0), {"3m": 0.9}) for i in range(3)]
    weak = ((226.0, 100.0, 40.0, 56.0), {"5p": 0.15})
    alone = ((400.0, 400.0, 40.0, 56.0), {"5p": 0.15})
    detector = _Scripted([*row, weak, alone])
    image = np.full((640, 640, 3), 128, np.uint8)
    everything = detector(image, conf=0.01)
    assert ((everything.confidence >= ROW_CONF) & (everything.confidence < 0.25)).sum() == 2  # both weak
    found = detector(image)
    assert sorted(found.xyxy[:, 0].round().tolist()) == [80.0, 122.0, 164.0, 206.0]
    assert found.confidence[found.xyxy[:, 0].round() == 206.0].tolist() == [0.25]
    assert sorted(detector(image, closer=False).xyxy[:, 0].round().tolist()) == [80.0, 122.0, 164.0]


def test_a_loose_first_pass_box_yields_to_a_window_s_sure_box_on_the_same_tile() -> None:
    """At a table photo's scale the first pass boxes small tiles loosely; a window sees them closer. A first-pass
    candidate overlapping a sure window box by IoU 0.4 or more is dropped (it would survive NMS beside it as a
    second tile); one on a tile no window found surely stays, as do all the window's candidates."""
    tile = np.zeros(NUM_CLASSES, np.float32)
    tile[3] = 0.9
    weak = tile * 0.1
    boxes = np.array([[95, 95, 140, 155],  # first pass: loose box on the tile the window boxes at [100, 100, 130, 145]
                      [300, 100, 330, 145],  # first pass: a tile the window found only weakly
                      [500, 100, 530, 145],  # first pass: a tile outside every window
                      [100, 100, 130, 145],  # window: sure
                      [300, 100, 330, 145]], np.float32)  # window: weak
    scores = np.stack([tile, tile, tile, tile, weak])
    kept, kept_scores = _window_boxes_first(boxes, scores, first=3, conf=0.25)
    assert kept.tolist() == boxes[1:].tolist() and len(kept_scores) == 4
    assert box_iou(boxes[:1], boxes[3:4])[0, 0] < ANY_NAME_IOU  # NMS alone would keep both
