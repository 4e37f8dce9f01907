"""The real-data builder: class 27 (`other` in the source) becomes our 28, 0..26 stay; layout for ultralytics."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from tests.datasets.support import load_dataset_script
from vision.classes import BACK, CLASS_NAMES, OTHER

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
SAMPLES = ROOT / "datasets" / "samples"
SAMPLE_LABELS = ROOT / "datasets" / "sample_labels"




@pytest.fixture(scope="module")
def real() -> ModuleType:
    return load_dataset_script("real")


def _classes(text: str) -> list[int]:
    return [int(row.split()[0]) for row in text.splitlines() if row.strip()]


def test_remap_line(real: ModuleType) -> None:
    assert real.remap_line("27 0.5 0.5 0.1 0.2") == f"{OTHER} 0.5 0.5 0.1 0.2"
    for cls in (0, 13, 26):
        assert real.remap_line(f"{cls} 0.1 0.2 0.3 0.4") == f"{cls} 0.1 0.2 0.3 0.4"
    with pytest.raises(ValueError):
        real.remap_line("28 0.1 0.2 0.3 0.4")  # not a source class


def test_a_tile_labelled_twice_is_written_once(real: ModuleType) -> None:
    # a source file's two boxes for one 2m (IoU 0.87), the 3m beside it, and an `other` in the same place as a 2m
    text = ("1 0.434375 0.592187 0.05625 0.098437\n1 0.435937 0.589063 0.060937 0.096875\n"
            "2 0.499219 0.589844 0.05625 0.1\n27 0.434375 0.592187 0.05625 0.098437\n")
    rows = real.remap_label_text(text).splitlines()
    assert [r.split()[0] for r in rows] == ["1", "2", str(OTHER)]  # a box of another class in the same place stays
    assert rows[0] == "1 0.434375 0.592187 0.05625 0.098437"  # the first of the two is kept
    # neighbouring tiles of one class (a pong laid edge to edge) are all kept
    pong = "\n".join(f"4 {x:.3f} 0.5 0.05 0.1" for x in (0.4, 0.45, 0.5))
    assert len(real.remap_label_text(pong).splitlines()) == 3


def _source_copy(tmp: Path) -> Path:
    """A tiny dataset shaped like the shared one, made from the samples with their ids mapped back (28 -> 27)."""
    shared = tmp / "shared"
    src = shared / "datasets" / "rf-chinese-mahjong-v4"
    samples = sorted(SAMPLES.glob("*.jpg"))
    for split, chunk in (("train", samples[:3]), ("valid", samples[3:5]), ("test", samples[5:6])):
        (src / "images" / split).mkdir(parents=True)
        (src / "labels" / split).mkdir(parents=True)
        for img in chunk:
            shutil.copy(img, src / "images" / split / img.name)
            rows = (SAMPLE_LABELS / f"{img.stem}.txt").read_text().splitlines()
            source_rows = [re.sub(r"^28 ", "27 ", r) for r in rows if r.strip()]
            (src / "labels" / split / f"{img.stem}.txt").write_text("\n".join(source_rows) + "\n")
    return shared


def test_build_remaps_other_and_keeps_suited(real: ModuleType, tmp_path: Path) -> None:
    shared = _source_copy(tmp_path)
    data = real.build(tmp_path / "out", shared)
    out = tmp_path / "out"
    n_other = 0
    for split in ("train", "valid", "test"):
        for src_label in sorted((shared / "datasets/rf-chinese-mahjong-v4/labels" / split).glob("*.txt")):
            before = _classes(src_label.read_text())
            after = _classes((out / "labels" / split / src_label.name).read_text())
            assert after == [OTHER if c == 27 else c for c in before]
            assert BACK not in after
            n_other += after.count(OTHER)
            image = out / "images" / split / f"{src_label.stem}.jpg"
            assert image.is_symlink() and image.resolve().parent.name == split
    assert n_other > 0  # the samples include winds and dragons
    text = data.read_text()
    assert f"path: {out.resolve()}" in text
    assert "val: images/valid" in text
    assert "names: [" + ", ".join(f"'{n}'" for n in CLASS_NAMES) + "]" in text
    real.build(out, shared)  # building again over the same folder works


def test_merge_with_synth_lists_both(real: ModuleType, tmp_path: Path) -> None:
    shared = _source_copy(tmp_path)
    real.build(tmp_path / "real", shared)
    for split in ("train", "val"):
        (tmp_path / "synth" / "images" / split).mkdir(parents=True)
    text = real.merge_with_synth(tmp_path / "real", tmp_path / "synth").read_text()
    synth = (tmp_path / "synth").resolve()
    assert f"'{synth / 'images' / 'train'}'" in text and f"'{synth / 'images' / 'val'}'" in text
    assert "images/valid'" in text


def test_samples_are_the_remapped_source_labels(real: ModuleType) -> None:
    """Each sample's label equals its original test label remapped (names listed in the samples README)."""
    table = re.findall(r"\| (sample_\d\d) \| (\S+\.jpg) \|", (SAMPLE_LABELS / "README.md").read_text())
    assert len(table) == len(list(SAMPLES.glob("*.jpg"))) >= 15
    source = SHARED / "datasets/rf-chinese-mahjong-v4/labels/test"
    for sample, original in table:
        expected = real.remap_label_text((source / f"{original[:-4]}.txt").read_text())
        assert (SAMPLE_LABELS / f"{sample}.txt").read_text() == expected


def test_near_duplicates_finds_a_retaken_photo_and_nothing_else(tmp_path: Path) -> None:
    import cv2

    mix = load_dataset_script("mix")
    photos = sorted(SAMPLES.glob("*.jpg"))
    original = cv2.imread(str(photos[0]))
    h, w = original.shape[:2]
    # The same tiles photographed again: a small shift and turn, other exposure.
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), 4, 1.05)
    turn[:, 2] += (12, -8)
    retaken = cv2.convertScaleAbs(cv2.warpAffine(original, turn, (w, h), borderMode=cv2.BORDER_REFLECT), alpha=0.85,
                                  beta=10)
    cv2.imwrite(str(tmp_path / "retaken.jpg"), retaken)
    candidates = [tmp_path / "retaken.jpg", *photos[5:10]]
    found = mix.near_duplicates(candidates, [photos[0], photos[10]])
    assert found == {tmp_path / "retaken.jpg"}


def test_photos_of_the_real_hands_set_are_held_out() -> None:
    mix = load_dataset_script("mix")
    held = mix.held_out_valid_photos()
    assert len(held) >= 5 and all(name.endswith(".jpg") for name in held)


def test_a_mix_can_reuse_an_earlier_mixs_valid_photos_and_validation_list(tmp_path: Path) -> None:
    import cv2
    import numpy as np

    mix = load_dataset_script("mix")
    blank = np.zeros((8, 8, 3), np.uint8)

    def images(folder: Path, names: list[str]) -> list[Path]:
        folder.mkdir(parents=True)
        for name in names:
            cv2.imwrite(str(folder / name), blank)
        return [folder / name for name in names]

    real, synth = tmp_path / "real", tmp_path / "synth"
    images(real / "images" / "train", [f"p{i}_jpg.rf.{k:02x}.jpg" for i in range(4) for k in range(5)])
    valid = images(real / "images" / "valid", [f"v{i}.jpg" for i in range(6)])
    images(synth / "images" / "train", [f"s{i}.jpg" for i in range(10)])
    synth_val = images(synth / "images" / "val", [f"t{i}.jpg" for i in range(5)])
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    (earlier / "train.txt").write_text(f"/elsewhere/images/valid/{valid[1].name}\n/elsewhere/images/valid/v4.jpg\n")
    (earlier / "val.txt").write_text("".join(f"/elsewhere/{n}\n" for n in ("v0.jpg", "v3.jpg", "v5.jpg", "t2.jpg")))

    mix.write_mix(real, synth, tmp_path / "new", synth_train=3, seed=7, same_valid_as=earlier)
    train = (tmp_path / "new" / "train.txt").read_text().split()
    val = (tmp_path / "new" / "val.txt").read_text().split()
    assert [Path(p).name for p in val] == ["v0.jpg", "v3.jpg", "v5.jpg", synth_val[2].name]
    assert {Path(p).name for p in train if "/valid/" in p} == {"v1.jpg", "v4.jpg"}
    assert len(train) == 4 * 2 + 2 + 3  # each source photo × 2 variants, the 2 valid photos, 3 synthetic
    assert not {Path(p).name for p in train} & {Path(p).name for p in val}


def test_a_mix_draws_training_scenes_from_every_synthetic_folder_and_validates_on_the_first(tmp_path: Path) -> None:
    import cv2
    import numpy as np

    mix = load_dataset_script("mix")
    blank = np.zeros((8, 8, 3), np.uint8)
    for folder, names in [("real/images/train", ["p0_jpg.rf.00.jpg"]), ("real/images/valid", ["v0.jpg"]),
                          ("a/images/train", ["a0.jpg", "a1.jpg"]), ("a/images/val", ["av0.jpg"]),
                          ("b/images/train", ["b0.jpg", "b1.jpg", "b2.jpg"]), ("b/images/val", ["bv0.jpg"])]:
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        for name in names:
            cv2.imwrite(str(tmp_path / folder / name), blank)
    mix.main(["--real", str(tmp_path / "real"), "--synth", str(tmp_path / "a"), str(tmp_path / "b"),
              "--out", str(tmp_path / "o"), "--synth-train", "5"])
    train = {Path(p).name for p in (tmp_path / "o" / "train.txt").read_text().split()}
    val = {Path(p).name for p in (tmp_path / "o" / "val.txt").read_text().split()}
    assert train == {"p0_jpg.rf.00.jpg", "a0.jpg", "a1.jpg", "b0.jpg", "b1.jpg", "b2.jpg"}
    assert val == {"v0.jpg", "av0.jpg"}


def test_mix_refuses_a_folder_that_is_not_a_mix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mix = load_dataset_script("mix")
    with pytest.raises(SystemExit) as stop:
        mix.main(["--real", str(tmp_path), "--synth", str(tmp_path), "--out", str(tmp_path / "o"),
                  "--same-valid-as", str(tmp_path / "nowhere")])
    assert stop.value.code == 2
    assert "not a mix folder" in capsys.readouterr().err


def test_label_audit_flags_a_wrong_label_and_draws_it(tmp_path: Path, detector) -> None:
    import json

    import cv2


    audit = load_dataset_script("audit")
    photos = sorted(SAMPLES.glob("*.jpg"))[:3]
    labels = tmp_path / "labels"
    labels.mkdir()
    for photo in photos:
        shutil.copy(SAMPLE_LABELS / f"{photo.stem}.txt", labels)
    clean = audit.audit(photos, labels, detector, min_p=0.8)
    # Relabel one tile that the detector reads confidently and rightly as a different suited tile.
    rows = (labels / f"{photos[0].stem}.txt").read_text().splitlines()
    h, w = cv2.imread(str(photos[0])).shape[:2]
    dets = detector(photos[0], turned=True)
    confidence = [_right_read_probability(row, dets, w, h) for row in rows]
    target = max(range(len(rows)), key=confidence.__getitem__)
    assert confidence[target] >= 0.8  # the photo holds a tile the detector reads rightly and confidently
    true_class = int(rows[target].split()[0])
    wrong = (true_class + 1) % 27
    rows[target] = " ".join([str(wrong), *rows[target].split()[1:]])
    (labels / f"{photos[0].stem}.txt").write_text("\n".join(rows) + "\n")
    flags = audit.audit(photos, labels, detector, min_p=0.8)
    new = [f for f in flags if f not in clean]
    assert [(f.label, f.read) for f in new] == [(CLASS_NAMES[wrong], CLASS_NAMES[true_class])]
    assert audit.main(["--images", str(SAMPLES), "--labels", str(labels), "--out", str(tmp_path / "out")]) == 0
    rows_out = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert {(r["label"], r["read"]) for r in rows_out} >= {(CLASS_NAMES[wrong], CLASS_NAMES[true_class])}
    assert (tmp_path / "out" / "sheet_01.png").is_file()


def _right_read_probability(row: str, dets, w: int, h: int) -> float:
    """The detector's probability for a labelled suited tile it finds (IoU ≥ 0.7) and reads rightly, else 0."""
    import numpy as np

    from vision.detections import box_iou

    c, cx, cy, bw, bh = (float(v) for v in row.split()[:5])
    box = np.array([[(cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h]])
    ious = box_iou(box, dets.xyxy)[0]
    j = int(ious.argmax())
    right = c < 27 and ious[j] >= 0.7 and dets.class_id[j] == int(c)
    return float(dets.top3_prob[j, 0]) if right else 0.0


def test_the_unlabelled_regions_are_parts_of_test_photos() -> None:
    """datasets/real-test-unlabelled.json: where test photos show tiles their labels leave out. Each region lies in
    its photo and covers part of it, never the whole: boxes there are not scored, so a region must stay where
    the unlabelled tiles are."""
    import numpy as np

    from vision.training.evaluate import read_unlabelled

    regions = read_unlabelled(ROOT / "datasets" / "real-test-unlabelled.json")
    assert 5 <= len(regions) <= 20
    labels = SHARED / "datasets/rf-chinese-mahjong-v4/labels/test"
    for stem, boxes in regions.items():
        assert ((boxes >= 0) & (boxes <= 1)).all() and (boxes[:, :2] < boxes[:, 2:]).all(), stem
        assert np.prod(boxes[:, 2:] - boxes[:, :2], axis=1).sum() < 0.65, f"{stem}: regions cover most of the photo"
        if labels.is_dir():
            assert (labels / f"{stem}.txt").is_file(), f"{stem}: not a photo of the test split"
