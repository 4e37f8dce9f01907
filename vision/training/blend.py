"""Blending two checkpoints weight by weight: the detector's or the crop classifier's (needs the ``train`` extra).

A detector fine-tuned on new kinds of scenes (other tile styles, the views people photograph) reads those far
better but can lose a little on the photos it knew. Interpolating the weights of the earlier checkpoint and the
fine-tuned one (Wortsman et al., "Robust fine-tuning of zero-shot models", 2022: WiSE-FT) keeps most of both:
``alpha`` 0 is the earlier network, 1 the fine-tuned one. The two must share one architecture, as a fine-tuned
checkpoint does. Integer buffers (BatchNorm's batch counters) are taken from the fine-tuned network. A crop
classifier checkpoint (``zhuoji train-classifier``: its ``model`` is a state dict) is blended the same way and
exported as the classifier is.

    python -m vision.training.blend models/zhuoji-tiles.pt ../data/runs/views34/weights/best.pt --alpha 0.3 \\
        --out ../data/blend/tiles-0.3.pt --export ../data/blend/tiles-0.3.onnx
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def blend_state(earlier: dict, tuned: dict, alpha: float) -> dict:
    """``(1 - alpha) * earlier + alpha * tuned`` for every floating-point tensor; other tensors from ``tuned``."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be within 0..1, not {alpha}")
    if earlier.keys() != tuned.keys():
        missing = sorted(set(earlier) ^ set(tuned))[:5]
        raise ValueError(f"the checkpoints differ in architecture (e.g. {', '.join(missing)})")
    out = {}
    for key, t in tuned.items():
        e = earlier[key]
        if e.shape != t.shape:
            raise ValueError(f"the checkpoints differ in architecture ({key}: {tuple(e.shape)} vs {tuple(t.shape)})")
        out[key] = (1.0 - alpha) * e.float() + alpha * t.float() if t.is_floating_point() else t.clone()
    return out


def _network(checkpoint: dict):
    """The network an ultralytics checkpoint holds: ``model``, or ``ema`` in one saved mid-run."""
    net = checkpoint.get("model") or checkpoint.get("ema")
    if net is None:
        raise ValueError("not a detector checkpoint (no model in it)")
    return net.float()


def is_classifier(checkpoint: dict) -> bool:
    """A crop classifier checkpoint keeps its weights as a state dict; a detector's, as the network itself."""
    return isinstance(checkpoint.get("model"), dict)


def blend_checkpoints(earlier: Path, tuned: Path, alpha: float, out: Path) -> Path:
    """Write a checkpoint (``earlier``'s format, weights only) whose weights blend the two; returns ``out``."""
    import torch

    base = torch.load(earlier, weights_only=False, map_location="cpu")
    other = torch.load(tuned, weights_only=False, map_location="cpu")
    out.parent.mkdir(parents=True, exist_ok=True)
    if is_classifier(base) != is_classifier(other):
        raise ValueError("one checkpoint is a crop classifier's and the other a detector's")
    if is_classifier(base):
        torch.save({**{k: base.get(k) for k in ("width", "extra")}, "epochs": other.get("epochs"),
                    "model": blend_state(base["model"], other["model"], alpha)}, out)
        return out
    net = _network(base)
    net.load_state_dict(blend_state(net.state_dict(), _network(other).state_dict(), alpha))
    base.update(model=net.half(), ema=None, optimizer=None, updates=None)
    torch.save(base, out)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vision.training.blend", description=__doc__.split("\n\n")[0])
    p.add_argument("earlier", type=Path, help="the checkpoint fine-tuning started from")
    p.add_argument("tuned", type=Path, help="the fine-tuned checkpoint")
    p.add_argument("--alpha", type=float, required=True, help="share of the fine-tuned weights (0..1)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--export", type=Path, help="also export the blend to this ONNX path")
    args = p.parse_args(argv)
    try:
        print(blend_checkpoints(args.earlier, args.tuned, args.alpha, args.out))
    except ValueError as e:
        p.error(str(e))
    if args.export:
        import torch

        if is_classifier(torch.load(args.out, weights_only=False, map_location="cpu")):
            from vision.training.train_classify import export_onnx
        else:
            from vision.training.train import export_onnx
        print(export_onnx(args.out, args.export))
    return 0


if __name__ == "__main__":
    sys.exit(main())
