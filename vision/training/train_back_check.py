"""Training the back check of ``vision/back_check.py`` (needs the ``train`` extra: torch; plain PyTorch).

A small plain CNN (0.3 M weights at width 16) maps a 64×64 crop of a box named ``back``, with its surroundings, to
one logit: is it a face-down tile? Trained with binary cross-entropy on ``datasets/back_crops.py`` output, with the
crop classifier's augmentation (turns, light, colour, blur, noise; never a mirror image). Checkpoints every epoch
(``last.pt``; ``best.pt`` by the validation crops' ROC AUC, the ranking the mAP benchmark rewards), resumable::

    zhuoji train-back-check --crops ../data/backs --epochs 24 --out ../data/runs --name backs
                            [--init models/zhuoji-backs.onnx] [--export models/zhuoji-backs.onnx]

``--init`` starts from a back-check ONNX (the shipped one: only its ONNX is kept), whose BatchNorms were folded
into the convolutions at export: each is unfolded again with the statistics measured on the training crops, so
the network computes the same function in both modes (``unfold_from_onnx``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from vision.back_check import BACK_CROP_MARGIN, BACK_CROP_SIZE
from vision.training.train_classify import (
    checkpoint,
    export_crop_network,
    open_run,
    restore,
    to_tensor,
    train_epoch,
)

ROOT = Path(__file__).resolve().parents[2]


def build_model(width: int = 16):
    """4 stages of [stride-2 conv, conv] (64 → 4 px) → global pool → one logit."""
    from torch import nn

    def conv(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.SiLU())

    w = width
    return nn.Sequential(conv(3, w, 2), conv(w, w), conv(w, 2 * w, 2), conv(2 * w, 2 * w),
                         conv(2 * w, 4 * w, 2), conv(4 * w, 4 * w), conv(4 * w, 8 * w, 2), conv(8 * w, 8 * w),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(8 * w, 1))


def roc_auc(truth: np.ndarray, score: np.ndarray) -> float:
    """Probability that a random true crop scores above a random false one (ties count half); NaN without both."""
    truth = np.asarray(truth, bool)
    pos, neg = int(truth.sum()), int((~truth).sum())
    if pos == 0 or neg == 0:
        return float("nan")
    order = np.argsort(score, kind="stable")
    ranks = np.empty(len(score))
    ranks[order] = np.arange(1, len(score) + 1)
    _, inverse, counts = np.unique(np.asarray(score)[order], return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks[order])
    ranks[order] = (sums / counts)[inverse]  # tied scores share their mean rank
    return float((ranks[truth].sum() - pos * (pos + 1) / 2) / (pos * neg))


def predict(model, x: np.ndarray, batch: int = 512) -> np.ndarray:
    """p(face-down tile) for all crops (eval mode, no augmentation)."""
    import torch

    model.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(x), batch):
            out.append(torch.sigmoid(model(to_tensor(x[i:i + batch]))[:, 0]).numpy())
    return np.concatenate(out) if out else np.zeros(0, np.float32)


def unfold_from_onnx(model, onnx_path: Path, calib: np.ndarray) -> None:
    """Load a back-check ONNX's weights into ``model`` (of :func:`build_model`, the same width).

    The export folded each BatchNorm into its conv (a conv with a bias). Unfolded: the conv keeps the weight, and
    its BatchNorm gets the conv output's mean μ and variance σ² on ``calib`` crops, γ = √(σ²+ε) and β = μ + bias:
    in eval mode BN(z) = z + bias whatever μ and σ are, and in train mode the batch statistics are near μ and σ,
    so fine-tuning starts from the same function."""
    import onnx
    import torch
    from onnx import numpy_helper
    from torch import nn

    graph = onnx.load(str(onnx_path)).graph
    inits = {i.name: numpy_helper.to_array(i).copy() for i in graph.initializer}
    convs_onnx = [n for n in graph.node if n.op_type == "Conv"]
    blocks = [m for m in model if isinstance(m, nn.Sequential)]
    if len(convs_onnx) != len(blocks):
        raise ValueError(f"{onnx_path}: {len(convs_onnx)} convolutions, the model has {len(blocks)}")
    linear = next(m for m in model if isinstance(m, nn.Linear))
    gemm = next((n for n in graph.node if n.op_type == "Gemm"), None)
    if gemm is None or inits[gemm.input[1]].shape != tuple(linear.weight.shape):
        raise ValueError(f"{onnx_path}: no final layer of shape {tuple(linear.weight.shape)}")
    gemm_w, gemm_b = inits[gemm.input[1]], inits[gemm.input[2]]
    biases: dict[int, object] = {}  # each conv's folded bias, the β of its BatchNorm once unfolded
    with torch.no_grad():
        for i, (node, block) in enumerate(zip(convs_onnx, blocks, strict=True)):
            w, b = inits[node.input[1]], inits[node.input[2]]
            if w.shape != tuple(block[0].weight.shape):
                raise ValueError(f"{onnx_path}: conv {i} is {w.shape}, the model's {tuple(block[0].weight.shape)}")
            block[0].weight.copy_(torch.from_numpy(w))
            biases[i] = torch.from_numpy(b)
            bn = block[1]  # for now BN(z) = z + b in eval mode, the ONNX's conv, for measuring the next blocks
            bn.running_mean.zero_()
            bn.running_var.fill_(1 - bn.eps)
            bn.weight.fill_(1.0)
            bn.bias.copy_(biases[i])
        linear.weight.copy_(torch.from_numpy(gemm_w))
        linear.bias.copy_(torch.from_numpy(gemm_b))
    # measure each conv's output statistics on real input, block by block (eval mode: the ONNX function)
    hooks, seen = [], {}
    for i, block in enumerate(blocks):
        hooks.append(block[0].register_forward_hook(
            lambda _m, _i, out, i=i: seen.__setitem__(i, (out.mean((0, 2, 3)), out.var((0, 2, 3))))))
    model.eval()
    with torch.no_grad():
        model(to_tensor(calib))
        for i, block in enumerate(blocks):
            mean, var = seen[i]
            bn = block[1]
            bn.running_mean.copy_(mean)
            bn.running_var.copy_(var)
            bn.weight.copy_(torch.sqrt(var + bn.eps))
            bn.bias.copy_(mean + biases[i])
    for h in hooks:
        h.remove()


def train(crops: Path, epochs: int, out_dir: Path, name: str, batch: int = 128, lr: float = 3e-3,
          width: int = 16, resume: bool = False, seed: int = 0, init: Path | None = None) -> Path:
    """Train on ``crops/train.npz``, validate on ``crops/val.npz``; returns the best checkpoint's path."""
    import torch

    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    train_set, val_set = np.load(crops / "train.npz"), np.load(crops / "val.npz")
    x, y = train_set["x"], train_set["y"].astype(np.float32)
    vx, vy = val_set["x"], val_set["y"].astype(bool)
    run, state = open_run(out_dir, name, resume)
    if state is not None:
        epochs, batch, lr, width = state["epochs"], state["batch"], state["lr"], state["width"]
    model = build_model(width)
    if init is not None and state is None:
        unfold_from_onnx(model, init, x[np.random.default_rng(seed).choice(len(x), min(256, len(x)), False)])
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * math.ceil(len(x) / batch),
                                                pct_start=0.1)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    start, best = 0, -1.0
    if state is not None:
        start, best = restore(state, model, opt, sched, generator)
    log = run / "results.csv"
    if start == 0:
        log.write_text("epoch,seconds,train_loss,val_auc,val_acc\n")
    for epoch in range(start, epochs):
        t0 = time.time()
        loss = train_epoch(model, x, y[:, None], batch, opt, sched, loss_fn, generator, f"epoch {epoch + 1}/{epochs}")
        p = predict(model, vx)
        auc, acc = roc_auc(vy, p), float(((p >= 0.5) == vy).mean()) if len(vy) else float("nan")
        with log.open("a") as f:
            f.write(f"{epoch + 1},{time.time() - t0:.0f},{loss:.4f},{auc:.4f},{acc:.4f}\n")
        print(f"epoch {epoch + 1}: validation ROC AUC {auc:.4f}, accuracy {acc:.4f}")
        score = auc if not np.isnan(auc) else -loss
        best = checkpoint(run, epoch, score, best, model, opt, sched, generator, width=width, epochs=epochs,
                          batch=batch, lr=lr)
    return run / "weights" / "best.pt"


def export_onnx(weights: Path, out: Path) -> Path:
    """A dynamic-batch ONNX (opset 17) that maps (N, 3, 64, 64) RGB in [0, 1] to (N, 1) p(face-down tile), with its
    kind, crop size and margin in its metadata."""
    import torch

    state = torch.load(weights, weights_only=False, map_location="cpu")
    model = build_model(state.get("width", 16))
    model.load_state_dict(state["model"])
    return export_crop_network(torch.nn.Sequential(model, torch.nn.Sigmoid()), BACK_CROP_SIZE, out, "p_back", {
        "kind": "back_check", "crop_size": str(BACK_CROP_SIZE), "crop_margin": str(BACK_CROP_MARGIN),
        "epochs": json.dumps(state.get("epochs"))})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="zhuoji train-back-check",
                                description="Train the back check on datasets/back_crops.py output (CPU, resumable)")
    p.add_argument("--crops", type=Path, required=True, help="folder with train.npz and val.npz")
    p.add_argument("--epochs", type=int, default=24)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--width", type=int, default=16, help="channels of the first stage (doubling per stage)")
    p.add_argument("--out", type=Path, default=ROOT / "runs")
    p.add_argument("--name", default="backs")
    p.add_argument("--resume", action="store_true", help="continue OUT/NAME/weights/last.pt")
    p.add_argument("--init", type=Path, help="start from this back-check ONNX (e.g. the shipped one)")
    p.add_argument("--export", type=Path, help="after training, export the best weights to this ONNX path")
    a = p.parse_args(argv)
    if a.init is not None and not a.init.is_file():
        p.error(f"--init {a.init}: no such file")
    if not all((a.crops / f).is_file() for f in ("train.npz", "val.npz")):
        p.error(f"--crops {a.crops}: no train.npz and val.npz there (run datasets/back_crops.py)")
    try:
        best = train(a.crops, a.epochs, a.out, a.name, a.batch, a.lr, a.width, a.resume, init=a.init)
    except (FileNotFoundError, ValueError) as e:
        p.error(str(e))
    if a.export:
        print(export_onnx(best, a.export))
    return 0


if __name__ == "__main__":
    sys.exit(main())
