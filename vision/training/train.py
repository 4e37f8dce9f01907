"""Training the tile detector (needs the ``train`` extra: ultralytics + torch).

Entry points:

* :func:`init_checkpoint` — a YOLO11n checkpoint for our 29 classes whose weights come from the ``mahjong-detector``
  model (MIT, riichi tiles, YOLO11n). Its ONNX holds the *fused* network (conv + BatchNorm folded into one conv with a
  bias); we unfold each fused conv into conv + BatchNorm whose statistics are measured on real images, so the
  network computes the same function in eval mode and nearly the same in train mode (where BatchNorm uses batch
  statistics). The class head keeps the 27 suited rows (re-ordered by name), ``other`` starts from the mean of the
  honor rows (winds and dragons are "other" tiles to us) and ``back`` starts fresh.
* :func:`train` — ultralytics training with flips disabled (tile glyphs are not symmetric), checkpoints every epoch,
  resumable.
* :func:`export_onnx` — fixed 640×640 ONNX with the class names in its metadata.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from vision.classes import CLASS_NAMES

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
MODELS = ROOT / "models"


def mahjong_detector_onnx() -> Path:
    """Path of the ONNX model shipped inside the ``mahjong-detector`` package."""
    import importlib.util

    spec = importlib.util.find_spec("mahjong_detector")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("the mahjong-detector package is not installed (pip install mahjong-detector)")
    return Path(spec.origin).parent / "model.onnx"


def _onnx_tensors(onnx_path: Path) -> tuple[dict[str, np.ndarray], list[str]]:
    import ast

    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_path))
    tensors = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    meta = {p.key: p.value for p in model.metadata_props}
    names = ast.literal_eval(meta["names"])  # "{0: '1m', 1: '1p', ...}"
    return tensors, [names[i] for i in range(len(names))]


def _letterbox_batch(paths: list[Path], size: int = 640) -> np.ndarray:
    batch = []
    for p in paths:
        img = cv2.imread(str(p))
        h, w = img.shape[:2]
        s = size / max(h, w)
        img = cv2.resize(img, (round(w * s), round(h * s)))
        canvas = np.full((size, size, 3), 114, np.uint8)
        canvas[: img.shape[0], : img.shape[1]] = img
        batch.append(canvas[:, :, ::-1].transpose(2, 0, 1))
    return np.stack(batch).astype(np.float32) / 255.0


def init_checkpoint(out_path: Path, calib_images: list[Path], onnx_path: Path | None = None) -> Path:
    """Write an ultralytics checkpoint initialised from the mahjong-detector weights (see module docstring)."""
    import torch
    from ultralytics.nn.modules import Conv
    from ultralytics.nn.tasks import DetectionModel

    tensors, src_names = _onnx_tensors(onnx_path or mahjong_detector_onnx())
    model = DetectionModel("yolo11n.yaml", nc=len(CLASS_NAMES), verbose=False)
    model.names = dict(enumerate(CLASS_NAMES))
    state = model.state_dict()
    convs = {name: m for name, m in model.named_modules() if isinstance(m, Conv)}
    new_state: dict[str, torch.Tensor] = {}
    for name, m in convs.items():
        w, b = tensors[f"{name}.conv.weight"], tensors[f"{name}.conv.bias"]
        new_state[f"{name}.conv.weight"] = torch.tensor(w)
        eps = m.bn.eps
        new_state[f"{name}.bn.weight"] = torch.ones(len(b))
        new_state[f"{name}.bn.bias"] = torch.tensor(b)
        new_state[f"{name}.bn.running_mean"] = torch.zeros(len(b))
        new_state[f"{name}.bn.running_var"] = torch.full((len(b),), 1 - eps)
    src_row = [src_names.index(n) for n in CLASS_NAMES[:27]]
    honor_rows = [i for i, n in enumerate(src_names) if n not in CLASS_NAMES]
    for key, value in state.items():
        if key in new_state or key.endswith("num_batches_tracked") or key not in tensors:
            continue
        src = tensors[key]
        if src.shape == tuple(value.shape):
            new_state[key] = torch.tensor(src)
        elif ".cv3." in key and src.shape[0] == len(src_names):  # class rows of the head's last conv
            t = value.clone()
            t[:27] = torch.tensor(src[src_row])
            t[CLASS_NAMES.index("other")] = torch.as_tensor(src[honor_rows].mean(0))
            if key.endswith("bias"):
                t[CLASS_NAMES.index("back")] = float(src[src_row].mean())
            new_state[key] = t
    missing = [k for k in state if k not in new_state and not k.endswith("num_batches_tracked")]
    # The DFL conv is a fixed integral (not in the ONNX as a learnable initializer under this name).
    missing = [k for k in missing if not k.startswith("model.23.dfl")]
    if missing:
        raise RuntimeError(f"weights not found in the mahjong-detector ONNX: {missing[:5]} ...")
    model.load_state_dict(new_state, strict=False)
    _calibrate_batchnorm(model, convs, _letterbox_batch(calib_images))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    model.args = {"imgsz": 640}
    torch.save({"model": model, "train_args": {}, "date": time.strftime("%Y-%m-%d"),
                "init": "mahjong-detector 0.0.6 (MIT), BatchNorm unfolded"}, out_path)
    return out_path


def _calibrate_batchnorm(model, convs, images: np.ndarray) -> None:
    """Give each unfolded BatchNorm the measured mean/var of its conv output, keeping the eval-mode function.

    In eval mode BN(z) = (z − μ)/√(σ²+ε)·γ + β; with γ = √(σ²+ε) and β = μ + b this is z + b whatever μ, σ are,
    so choosing μ, σ² = the statistics seen on real images makes train mode (batch statistics) agree as well.
    """
    import torch

    stats: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}

    def hook(name):
        def fn(_module, _inp, out):
            stats[name] = (out.mean((0, 2, 3)), out.var((0, 2, 3)))
        return fn

    handles = [m.conv.register_forward_hook(hook(n)) for n, m in convs.items()]
    model.eval()
    with torch.no_grad():
        model(torch.from_numpy(images))
    for h in handles:
        h.remove()
    with torch.no_grad():
        for name, m in convs.items():
            mean, var = stats[name]
            bias = m.bn.bias.clone()  # b of the fused conv, stored there by init_checkpoint
            m.bn.running_mean.copy_(mean)
            m.bn.running_var.copy_(var)
            m.bn.weight.copy_(torch.sqrt(var + m.bn.eps))
            m.bn.bias.copy_(mean + bias)


def check_resumable(last: Path) -> None:
    """Raise ``ValueError`` unless ``last`` is the checkpoint of an interrupted run (an epoch done, the optimizer's
    state kept). A finished run's ``last.pt`` keeps no optimizer state, and ultralytics given one to resume starts
    a new training from it instead, on its default data."""
    import torch

    if not last.exists():
        raise ValueError(f"nothing to resume: {last} does not exist")
    ckpt = torch.load(last, map_location="cpu", weights_only=False)
    if ckpt.get("epoch", -1) < 0 or ckpt.get("optimizer") is None:
        raise ValueError(f"nothing to resume: {last} is a finished run's checkpoint (continue from it with --init)")


def train(data: Path, init: str, epochs: int, out_dir: Path, name: str, imgsz: int = 640, batch: int = 16,
          fraction: float = 1.0, resume: bool = False, workers: int = 2, **extra) -> Path:
    """Train with ultralytics; returns the best checkpoint. ``init``: 'mahjong-detector', 'scratch' or a .pt path."""
    from ultralytics import YOLO
    from ultralytics.utils import torch_utils

    # ultralytics trains on the CPU with one thread fewer than the cores: 1 of 2 here, 1.6x slower than both
    torch_utils.NUM_THREADS = os.cpu_count() or 1
    run_dir = out_dir.resolve() / name  # ultralytics would put a relative project under its own runs folder
    if resume:
        last = run_dir / "weights" / "last.pt"
        check_resumable(last)
        YOLO(str(last)).train(resume=True)
        return run_dir / "weights" / "best.pt"
    if init == "scratch":
        model = YOLO("yolo11n.yaml")
    elif init == "mahjong-detector":
        calib = sorted((SHARED / "datasets/rf-chinese-mahjong-v4/images/valid").glob("*.jpg"))[:16]
        if not calib:  # any images will do for the BatchNorm statistics
            calib = sorted(Path(data).parent.rglob("*.jpg"))[:16]
        model = YOLO(str(init_checkpoint(out_dir / "init" / "mahjong-detector-init.pt", calib)))
    else:
        model = YOLO(init)
    if init != "scratch":  # a trained start: short warm-up, and no high bias LR that would wreck the head
        extra = {"warmup_epochs": 0.5, "warmup_bias_lr": 0.0, **extra}
    extra.setdefault("close_mosaic", max(1, epochs // 4))
    model.train(data=str(data), epochs=epochs, imgsz=imgsz, batch=batch, workers=workers, device="cpu",
                project=str(out_dir.resolve()), name=name, exist_ok=True, fliplr=0.0, flipud=0.0, fraction=fraction,
                amp=False, plots=False, save_period=1, patience=100, **extra)
    return run_dir / "weights" / "best.pt"


def export_onnx(weights: Path, out: Path = MODELS / "zhuoji-tiles.onnx", imgsz: int = 640) -> Path:
    """Export a trained checkpoint to a fixed-size ONNX (opset 17) with our class names in its metadata."""
    import onnx
    from ultralytics import YOLO

    # ultralytics writes its export beside the checkpoint (models/zhuoji-tiles.pt → models/zhuoji-tiles.onnx, the
    # shipped model): export from a copy in a scratch folder so that nothing beside ``weights`` is overwritten
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "weights.pt"
        shutil.copy(weights, copy)
        exported = Path(YOLO(str(copy)).export(format="onnx", imgsz=imgsz, opset=17, simplify=True, dynamic=False))
        m = onnx.load(str(exported))
    meta = {p.key: p for p in m.metadata_props}
    for key, value in {"names": json.dumps(dict(enumerate(CLASS_NAMES))), "zhuoji_classes": ",".join(CLASS_NAMES),
                       "imgsz": json.dumps([imgsz, imgsz])}.items():
        if key in meta:
            meta[key].value = value
        else:
            m.metadata_props.add(key=key, value=value)
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(m, str(out))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="zhuoji train", description="Train the tile detector (CPU friendly, resumable)")
    p.add_argument("--data", type=Path, required=True, help="ultralytics data.yaml (29 classes)")
    p.add_argument("--init", default="mahjong-detector", help="mahjong-detector | scratch | path to a .pt")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--imgsz", type=int, default=640)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--fraction", type=float, default=1.0, help="share of the training images to use")
    p.add_argument("--out", type=Path, default=ROOT / "runs")
    p.add_argument("--name", default="tiles")
    p.add_argument("--resume", action="store_true", help="continue OUT/NAME/weights/last.pt of an interrupted run "
                                                         "(its own data, epochs and settings)")
    p.add_argument("--cache", action="store_true", help="keep decoded training images in RAM (faster epochs)")
    p.add_argument("--lr0", type=float, help="AdamW's learning rate (a gentler fine-tune); by default ultralytics "
                                             "picks one (AdamW at 2e-3 * 5 / (4 + 29 classes), about 3e-4, for "
                                             "runs under 10,000 batches)")
    p.add_argument("--close-mosaic", type=int, help="the last epochs trained without mosaic (0: mosaic throughout); "
                                                    "by default a quarter of them, at least 1")
    p.add_argument("--export", type=Path, help="after training, export the best weights to this ONNX path")
    args = p.parse_args(argv)
    if args.lr0 is not None and not 0 < args.lr0 < 1:
        p.error(f"--lr0 {args.lr0}: a learning rate between 0 and 1")
    if args.close_mosaic is not None and not 0 <= args.close_mosaic <= args.epochs:
        p.error(f"--close-mosaic {args.close_mosaic}: a count of epochs from 0 to --epochs ({args.epochs})")
    if args.resume:
        try:
            check_resumable(args.out.resolve() / args.name / "weights" / "last.pt")
        except ValueError as e:
            p.error(str(e))
    extra = {"cache": "ram"} if args.cache else {}
    if args.lr0 is not None:  # ultralytics' optimizer "auto" ignores lr0: name the optimizer it would pick
        extra.update(optimizer="AdamW", lr0=args.lr0)
    if args.close_mosaic is not None:
        extra["close_mosaic"] = args.close_mosaic
    best = train(args.data, args.init, args.epochs, args.out, args.name, args.imgsz, args.batch, args.fraction,
                 args.resume, **extra)
    if args.export:
        print(export_onnx(best, args.export))
    return 0


if __name__ == "__main__":
    sys.exit(main())
