"""Training chain: initialisation from mahjong-detector keeps its function; 1-epoch smoke train → ONNX → detect."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs the train extra")
pytest.importorskip("ultralytics", reason="needs the train extra")

from vision.classes import CLASS_NAMES  # noqa: E402
from vision.detect import Detector, letterbox  # noqa: E402
from vision.training.train import (  # noqa: E402
    _letterbox_batch,
    _onnx_tensors,
    export_onnx,
    init_checkpoint,
    mahjong_detector_onnx,
    train,
)

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_IMAGES = sorted((ROOT / "datasets" / "samples").rglob("*.jpg"))


def _sample_label(img: Path) -> Path:
    labels = list((ROOT / "datasets").rglob(f"{img.stem}.txt"))
    assert labels, f"no label for {img}"
    return labels[0]


@pytest.fixture(scope="module")
def init_ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("init") / "init.pt"
    return init_checkpoint(out, SAMPLE_IMAGES[:4])


@pytest.mark.slow
def test_initialisation_reproduces_the_mahjong_detector_network(init_ckpt: Path) -> None:
    import onnxruntime as ort

    onnx_path = mahjong_detector_onnx()
    _, src_names = _onnx_tensors(onnx_path)
    model = torch.load(init_ckpt, weights_only=False)["model"].eval()
    batch = _letterbox_batch(SAMPLE_IMAGES[4:6])
    with torch.no_grad():
        ours = model(torch.from_numpy(batch))[0].numpy()
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    theirs = session.run(None, {session.get_inputs()[0].name: batch[:1]})[0]
    rows = [src_names.index(n) for n in CLASS_NAMES[:27]]
    # Same boxes and the same suited-class scores (re-ordered into our class order).
    np.testing.assert_allclose(ours[0, :4], theirs[0, :4], atol=0.05 * 640 / 100)
    np.testing.assert_allclose(ours[0, 4:31], theirs[0, 4 + np.array(rows)], atol=2e-3)


def _tiny_data(tmp_path: Path) -> Path:
    """Four sample photos to train on and two to validate on; returns the data.yaml."""
    data = tmp_path / "data"
    for split, imgs in (("train", SAMPLE_IMAGES[:4]), ("val", SAMPLE_IMAGES[4:6])):
        (data / "images" / split).mkdir(parents=True)
        (data / "labels" / split).mkdir(parents=True)
        for img in imgs:
            shutil.copy(img, data / "images" / split / img.name)
            shutil.copy(_sample_label(img), data / "labels" / split / f"{img.stem}.txt")
    yaml = data / "data.yaml"
    yaml.write_text(f"path: {data}\ntrain: images/train\nval: images/val\nnames: {list(CLASS_NAMES)}\n")
    return yaml


@pytest.mark.slow
def test_one_epoch_smoke_train_exports_a_working_model(init_ckpt: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    yaml = _tiny_data(tmp_path)
    monkeypatch.chdir(tmp_path)  # a relative --out is relative to where the command runs
    best = train(yaml, str(init_ckpt), epochs=1, out_dir=Path("runs"), name="smoke", imgsz=160, batch=2,
                 workers=0)
    assert best == tmp_path / "runs" / "smoke" / "weights" / "best.pt" and best.exists()
    assert torch.get_num_threads() == os.cpu_count()  # trained on every core, not ultralytics' cores − 1
    beside = best.with_suffix(".onnx")  # like models/zhuoji-tiles.onnx beside models/zhuoji-tiles.pt
    beside.write_bytes(b"the shipped model")
    onnx_path = export_onnx(best, tmp_path / "smoke.onnx", imgsz=160)
    assert beside.read_bytes() == b"the shipped model"  # exporting elsewhere leaves it alone
    detector = Detector(onnx_path)
    assert detector.size == 160
    canvas, _ = letterbox(np.zeros((120, 200, 3), np.uint8), 160)
    assert detector.raw(canvas).shape == (4 + len(CLASS_NAMES), (160 // 8) ** 2 + (160 // 16) ** 2 + (160 // 32) ** 2)
    dets = detector(SAMPLE_IMAGES[0], conf=0.001)
    assert len(dets) > 0 and dets.class_id.max() < len(CLASS_NAMES)


@pytest.mark.slow
def test_an_interrupted_run_resumes_from_its_last_checkpoint(init_ckpt: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    yaml = _tiny_data(tmp_path)
    monkeypatch.chdir(tmp_path)
    train(yaml, str(init_ckpt), epochs=2, out_dir=Path("runs"), name="tiny", imgsz=160, batch=2, workers=0)
    weights = tmp_path / "runs" / "tiny" / "weights"
    with pytest.raises(ValueError, match="finished run"):  # ultralytics would start a new run from it instead
        train(yaml, "unused", epochs=2, out_dir=Path("runs"), name="tiny", resume=True)
    # A run stopped during its second epoch leaves last.pt and results.csv as they were after the first
    first = torch.load(weights / "epoch0.pt", weights_only=False)  # the per-epoch copy, numbered from 0
    assert first["epoch"] == 0 and first["optimizer"] is not None
    shutil.copy(weights / "epoch0.pt", weights / "last.pt")
    results = tmp_path / "runs" / "tiny" / "results.csv"
    results.write_text("".join(results.read_text().splitlines(keepends=True)[:2]))
    best = train(Path("elsewhere.yaml"), "unused", epochs=99, out_dir=Path("runs"), name="tiny", resume=True)
    assert best == tmp_path / "runs" / "tiny" / "weights" / "best.pt" and best.exists()
    resumed = torch.load(weights / "last.pt", weights_only=False)
    assert resumed["epoch"] == -1  # finished: ultralytics marks a completed run's last.pt so
    rows = results.read_text().splitlines()[1:]
    assert [int(float(r.split(",")[0])) for r in rows] == [1, 2]  # the second epoch ran once, of the run's own 2


def test_train_command_passes_its_options_through(capsys: pytest.CaptureFixture[str]) -> None:
    from api.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--help"])
    assert exit_info.value.code == 0
    usage = capsys.readouterr().out
    assert usage.startswith("usage: zhuoji train") and "--data" in usage and "--resume" in usage


def test_lr0_names_adamw_and_a_bad_one_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import vision.training.train as T

    seen = {}
    monkeypatch.setattr(T, "train", lambda *args, **extra: seen.update(extra) or tmp_path / "best.pt")
    assert T.main(["--data", "d.yaml", "--lr0", "1e-4", "--cache"]) == 0
    assert seen == {"optimizer": "AdamW", "lr0": 1e-4, "cache": "ram"}  # "auto" would ignore lr0
    seen.clear()
    assert T.main(["--data", "d.yaml"]) == 0 and seen == {}  # ultralytics' own choice by default
    with pytest.raises(SystemExit) as exit_info:
        T.main(["--data", "d.yaml", "--lr0", "3"])
    assert exit_info.value.code == 2 and "learning rate" in capsys.readouterr().err


def test_close_mosaic_is_passed_on_and_a_bad_count_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import vision.training.train as T

    seen = {}
    monkeypatch.setattr(T, "train", lambda *args, **extra: seen.update(extra) or tmp_path / "best.pt")
    assert T.main(["--data", "d.yaml", "--epochs", "1", "--close-mosaic", "0"]) == 0
    assert seen == {"close_mosaic": 0}  # mosaic kept on for the whole one-epoch fine-tune
    for bad in ("-1", "3"):
        with pytest.raises(SystemExit) as exit_info:
            T.main(["--data", "d.yaml", "--epochs", "2", "--close-mosaic", bad])
        assert exit_info.value.code == 2 and "--close-mosaic" in capsys.readouterr().err


@pytest.mark.slow
def test_shipped_checkpoint_is_the_shipped_onnx_network() -> None:
    """`zhuoji train --init models/zhuoji-tiles.pt` must continue the model that ships, not an older one."""
    model = torch.load(ROOT / "models" / "zhuoji-tiles.pt", weights_only=False)["model"].float().eval()
    detector = Detector(ROOT / "models" / "zhuoji-tiles.onnx")
    canvas, _ = letterbox(cv2.imread(str(SAMPLE_IMAGES[0])), detector.size)
    blob = cv2.dnn.blobFromImage(canvas, 1.0 / 255.0, swapRB=True)
    with torch.no_grad():
        ours = model(torch.from_numpy(blob))[0][0].numpy()
    shipped = detector.raw(canvas)
    confident = shipped[4:].max(0) > 0.25
    assert confident.sum() >= 5  # the sample photo has tiles, so the comparison means something
    np.testing.assert_allclose(ours[:4, confident], shipped[:4, confident], atol=0.5)  # pixels at 640
    np.testing.assert_allclose(ours[4:], shipped[4:], atol=2e-3)


def test_resume_refuses_a_missing_or_finished_run_in_one_line(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import vision.training.train as T

    args = ["--data", "d.yaml", "--resume", "--out", str(tmp_path), "--name", "r"]
    with pytest.raises(SystemExit) as exit_info:
        T.main(args)
    assert exit_info.value.code == 2 and "does not exist" in capsys.readouterr().err
    (tmp_path / "r" / "weights").mkdir(parents=True)
    torch.save({"epoch": -1, "optimizer": None}, tmp_path / "r" / "weights" / "last.pt")  # as a finished run's
    with pytest.raises(SystemExit) as exit_info:
        T.main(args)
    assert exit_info.value.code == 2 and "finished run" in capsys.readouterr().err
