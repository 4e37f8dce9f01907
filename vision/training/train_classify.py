"""Training the crop classifier of ``vision/classify.py`` (needs the ``train`` extra: torch; plain PyTorch, no
ultralytics).

The network is a small residual CNN for 64×64 crops (2.0 M weights at the default width 32; ``--extra`` blocks make it
deeper, and grow a trained one). Augmentation happens on whole batches:
turns by 0/90/180/270° (a tile seen from any seat; never a mirror image: glyphs are not symmetric), brightness,
contrast, colour cast, blur and noise. Checkpoints every epoch (``last.pt``, ``best.pt`` by real-crop accuracy on
the validation crops), resumable::

    zhuoji train-classifier --crops ../data/crops --epochs 8 --out ../data/runs --name crops [--init CKPT.pt]
                            [--export models/zhuoji-crops.onnx]

``--export X.onnx`` also writes ``X.pt``, the weights alone (the start of a later run with ``--init``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from tqdm import tqdm

from vision.classes import CLASS_NAMES, NUM_CLASSES
from vision.classify import CROP_MARGIN, CROP_SIZE

ROOT = Path(__file__).resolve().parents[2]


def build_model(width: int = 32, extra: int = 0):
    """conv stem (stride 2) → 3 stages of [stride-2 conv, residual block] → global pool → linear; ``extra`` more
    residual blocks at each of the two coarsest stages (8×8 and 4×4: most of the naming, little of the compute).

    The layers keep their places in the state dict whatever ``extra`` is ("0".."11"; the extra blocks are "5+1",
    "7+1", …), and an extra block starts as the identity (its last batch norm's scale is 0), so a trained network
    grows deeper without forgetting what it knew (``train(init=..., extra=...)``)."""
    from collections import OrderedDict

    from torch import nn

    def conv(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.SiLU())

    class Residual(nn.Module):
        def __init__(self, c: int, act: bool = True) -> None:
            super().__init__()
            self.body = nn.Sequential(conv(c, c), nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c))
            self.act = nn.SiLU() if act else nn.Identity()
            if not act:
                nn.init.zeros_(self.body[2].weight)

        def forward(self, x):
            return self.act(x + self.body(x))

    w = width
    layers: list[tuple[str, nn.Module]] = [
        ("0", conv(3, w, 2)), ("1", Residual(w)),                       # 32×32
        ("2", conv(w, 2 * w, 2)), ("3", Residual(2 * w)),               # 16×16
        ("4", conv(2 * w, 4 * w, 2)), ("5", Residual(4 * w)),           # 8×8
        *[(f"5+{i + 1}", Residual(4 * w, act=False)) for i in range(extra)],
        ("6", conv(4 * w, 8 * w, 2)), ("7", Residual(8 * w)),           # 4×4
        *[(f"7+{i + 1}", Residual(8 * w, act=False)) for i in range(extra)],
        ("8", nn.AdaptiveAvgPool2d(1)), ("9", nn.Flatten()), ("10", nn.Dropout(0.2)),
        ("11", nn.Linear(8 * w, NUM_CLASSES)),
    ]
    return nn.Sequential(OrderedDict(layers))


def to_tensor(x_bgr: np.ndarray):
    """(N, H, W, 3) uint8 BGR → (N, 3, H, W) float RGB in [0, 1], as at inference."""
    import torch

    return torch.from_numpy(np.ascontiguousarray(x_bgr[..., ::-1].transpose(0, 3, 1, 2))).float().div_(255.0)


def augment(x, generator):
    """Random turns, light and colour changes, blur and noise on a (N, 3, H, W) batch in [0, 1]."""
    import torch
    import torch.nn.functional as F

    n = len(x)
    turns = torch.randint(0, 4, (n,), generator=generator)
    x = torch.stack([torch.rot90(x[i], int(turns[i]), (1, 2)) for i in range(n)])
    gain = torch.empty(n, 1, 1, 1).uniform_(0.6, 1.4, generator=generator)
    cast = torch.empty(n, 3, 1, 1).uniform_(0.85, 1.15, generator=generator)
    mean = x.mean((1, 2, 3), keepdim=True)
    contrast = torch.empty(n, 1, 1, 1).uniform_(0.7, 1.3, generator=generator)
    x = ((x - mean) * contrast + mean) * gain * cast
    blur = torch.rand(n, generator=generator) < 0.25
    if blur.any():
        k = torch.tensor([1.0, 2.0, 1.0])
        k = (k[:, None] * k[None, :] / 16).expand(3, 1, 3, 3)
        x[blur] = F.conv2d(F.pad(x[blur], (1, 1, 1, 1), mode="replicate"), k, groups=3)
    x = x + torch.randn(x.shape, generator=generator) * torch.empty(n, 1, 1, 1).uniform_(0, 0.04, generator=generator)
    return x.clamp_(0, 1)


def train_epoch(model, x: np.ndarray, target: np.ndarray, batch: int, opt, sched, loss_fn, generator,
                desc: str) -> float:
    """One pass over the crops in a random order, augmented (:func:`augment`), one optimizer and scheduler step
    per batch; returns the mean loss. ``target`` rows are what ``loss_fn`` compares with the network's output."""
    import torch

    model.train()
    total, seen = 0.0, 0
    order = torch.randperm(len(x), generator=generator).numpy()
    bar = tqdm(range(0, len(x), batch), desc=desc, unit="batch")
    for i in bar:
        idx = np.sort(order[i:i + batch])
        loss = loss_fn(model(augment(to_tensor(x[idx]), generator)), torch.from_numpy(target[idx]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        total += loss.item() * len(idx)
        seen += len(idx)
        bar.set_postfix(loss=f"{total / seen:.3f}")
    return total / max(seen, 1)


def open_run(out_dir: Path, name: str, resume: bool) -> tuple[Path, dict | None]:
    """The run's folder (made if new) and, with ``resume``, the state of its ``last.pt``."""
    import torch

    run = out_dir.resolve() / name
    (run / "weights").mkdir(parents=True, exist_ok=True)
    last = run / "weights" / "last.pt"
    if not resume:
        return run, None
    if not last.exists():
        raise FileNotFoundError(f"nothing to resume: {last} does not exist")
    return run, torch.load(last, weights_only=False)


def restore(state: dict, model, opt, sched, generator) -> tuple[int, float]:
    """Put a checkpoint's weights, optimizer, schedule and random stream back; returns (first epoch to run, best
    validation score so far)."""
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    sched.load_state_dict(state["scheduler"])
    generator.set_state(state["generator"])
    return state["epoch"] + 1, state["best"]


def checkpoint(run: Path, epoch: int, score: float, best: float, model, opt, sched, generator, **shape) -> float:
    """Save the epoch's state as ``last.pt`` (and ``best.pt`` when ``score`` beats ``best``), with ``shape`` (the
    network's width and the run's schedule) for :func:`open_run`; returns the best score so far. The mirror of
    :func:`restore`."""
    import torch

    state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
             "epoch": epoch, "best": max(best, score), "generator": generator.get_state(), **shape}
    torch.save(state, run / "weights" / "last.pt")
    if score > best:
        torch.save(state, run / "weights" / "best.pt")
    return max(best, score)


def evaluate(model, x: np.ndarray, y: np.ndarray, batch: int = 512) -> np.ndarray:
    """Predicted class ids for all crops (eval mode, no augmentation)."""
    import torch

    model.eval()
    preds = []
    with torch.no_grad():
        for i in range(0, len(x), batch):
            preds.append(model(to_tensor(x[i:i + batch])).argmax(1).numpy())
    return np.concatenate(preds) if preds else np.zeros(0, np.int64)


def _share(right: np.ndarray) -> float:
    """Share of True in ``right``; NaN when empty (e.g. no synthetic validation crops)."""
    return float(right.mean()) if len(right) else float("nan")


def train(crops: Path, epochs: int, out_dir: Path, name: str, batch: int = 128, lr: float = 3e-3,
          width: int = 32, resume: bool = False, seed: int = 0, init: Path | None = None, extra: int = 0) -> Path:
    """Train on ``crops/train.npz``, validate on ``crops/val.npz``; returns the best checkpoint's path. ``init``:
    start from a checkpoint's weights (and width) with a fresh schedule, e.g. the shipped ``models/zhuoji-crops.pt``;
    with ``extra`` above the checkpoint's, the network grows that many blocks deeper per coarse stage
    (:func:`build_model`), the new blocks starting as the identity."""
    import torch

    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    train_set, val_set = np.load(crops / "train.npz"), np.load(crops / "val.npz")
    x, y = train_set["x"], train_set["y"].astype(np.int64)
    vx, vy, vsynth = val_set["x"], val_set["y"].astype(np.int64), val_set["synthetic"]
    run, state = open_run(out_dir, name, resume)
    if state is not None:
        # the run's own schedule: its learning-rate curve spans the epochs it was started with
        epochs, batch, lr, width = state["epochs"], state["batch"], state["lr"], state["width"]
        extra = state.get("extra", 0)
    start_weights = None
    if init is not None and state is None:
        try:
            start_weights = torch.load(init, weights_only=False, map_location="cpu")
        except Exception as e:  # torch raises many kinds for a file that is no checkpoint
            raise ValueError(f"{init}: not a training checkpoint ({type(e).__name__})") from e
        if not isinstance(start_weights, dict) or "model" not in start_weights:
            raise ValueError(f"{init}: not a training checkpoint (no weights in it)")
        width = start_weights.get("width", width)
        extra = max(extra, start_weights.get("extra", 0))
    model = build_model(width, extra)
    if start_weights is not None:
        try:
            missing, unexpected = model.load_state_dict(start_weights["model"], strict=False)
        except RuntimeError as e:  # a layer of another shape
            raise ValueError(f"{init}: its weights do not fit this network: {str(e).splitlines()[0]}") from e
        if unexpected or any("+" not in k.split(".")[0] for k in missing):  # only grown blocks may be new
            raise ValueError(f"{init}: its weights do not fit this network (missing {missing[:3]}, "
                             f"unexpected {unexpected[:3]})")
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=5e-4)
    steps = epochs * math.ceil(len(x) / batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.1)
    start, best = 0, -1.0
    if state is not None:
        start, best = restore(state, model, opt, sched, generator)
    log = run / "results.csv"
    if start == 0:
        log.write_text("epoch,seconds,train_loss,val_acc,val_acc_real,val_acc_synthetic\n")
    for epoch in range(start, epochs):
        t0 = time.time()
        loss = train_epoch(model, x, y, batch, opt, sched, loss_fn, generator, f"epoch {epoch + 1}/{epochs}")
        pred = evaluate(model, vx, vy)
        right = pred == vy
        acc, real, synth = _share(right), _share(right[~vsynth]), _share(right[vsynth])
        with log.open("a") as f:
            f.write(f"{epoch + 1},{time.time() - t0:.0f},{loss:.4f},{acc:.4f},{real:.4f},{synth:.4f}\n")
        score = real if not np.isnan(real) else acc  # real crops pick the best epoch when there are any
        print(f"epoch {epoch + 1}: val accuracy {acc:.4f} (real {real:.4f}, synthetic {synth:.4f})")
        best = checkpoint(run, epoch, score, best, model, opt, sched, generator, width=width, extra=extra,
                          epochs=epochs, batch=batch, lr=lr)
    return run / "weights" / "best.pt"


def strip_checkpoint(weights: Path, out: Path) -> Path:
    """The weights (and shape) of a checkpoint alone, without optimizer state: what ``models/`` ships."""
    import torch

    state = torch.load(weights, weights_only=False, map_location="cpu")
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": state["model"], "width": state.get("width", 32), "extra": state.get("extra", 0),
                "epochs": state.get("epochs")}, out)
    return out


def export_onnx(weights: Path, out: Path) -> Path:
    """A dynamic-batch ONNX (opset 17) that maps (N, 3, 64, 64) RGB in [0, 1] to (N, classes) probabilities,
    with the class names, crop size and margin in its metadata."""
    import torch

    state = torch.load(weights, weights_only=False, map_location="cpu")
    model = build_model(state.get("width", 32), state.get("extra", 0))
    model.load_state_dict(state["model"])
    return export_crop_network(torch.nn.Sequential(model, torch.nn.Softmax(1)), CROP_SIZE, out, "probs", {
        "names": json.dumps(dict(enumerate(CLASS_NAMES))), "crop_size": str(CROP_SIZE),
        "crop_margin": str(CROP_MARGIN)})


def export_crop_network(net, size: int, out: Path, output: str, metadata: dict[str, str]) -> Path:
    """``net`` (in eval mode from here on) as a dynamic-batch ONNX (opset 17) whose input ``crops`` is (N, 3, size,
    size) RGB in [0, 1], with ``metadata`` in the file."""
    import onnx
    import torch

    net.eval()
    out.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():  # the TorchScript exporter: no onnxscript needed for this plain network
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(net, torch.zeros(1, 3, size, size), str(out), input_names=["crops"],
                          output_names=[output], dynamic_axes={"crops": {0: "n"}, output: {0: "n"}},
                          opset_version=17, dynamo=False)
    m = onnx.load(str(out))
    for key, value in metadata.items():
        m.metadata_props.add(key=key, value=value)
    onnx.save(m, str(out))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="zhuoji train-classifier",
                                description="Train the crop classifier on datasets/crops.py output (CPU, resumable)")
    p.add_argument("--crops", type=Path, required=True, help="folder with train.npz and val.npz")
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--width", type=int, default=32, help="channels of the first stage (doubling per stage)")
    p.add_argument("--extra", type=int, default=0,
                   help="more residual blocks per coarse stage (with --init: grows that network deeper)")
    p.add_argument("--out", type=Path, default=ROOT / "runs")
    p.add_argument("--name", default="crops")
    p.add_argument("--resume", action="store_true", help="continue OUT/NAME/weights/last.pt")
    p.add_argument("--init", type=Path, help="start from this checkpoint's weights (e.g. models/zhuoji-crops.pt)")
    p.add_argument("--export", type=Path, help="after training, export the best weights to this ONNX path "
                                               "(and the weights alone beside it, .pt)")
    a = p.parse_args(argv)
    if not all((a.crops / f).is_file() for f in ("train.npz", "val.npz")):
        p.error(f"--crops {a.crops}: no train.npz and val.npz there (run datasets/crops.py)")
    if a.init is not None and not a.init.is_file():
        p.error(f"--init {a.init}: no such checkpoint")
    try:
        best = train(a.crops, a.epochs, a.out, a.name, a.batch, a.lr, a.width, a.resume, init=a.init, extra=a.extra)
    except ValueError as e:  # --init weights that are no checkpoint or do not fit
        p.error(str(e))
    if a.export:
        print(export_onnx(best, a.export))
        print(strip_checkpoint(best, a.export.with_suffix(".pt")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
