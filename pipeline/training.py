"""The training programs behind ``zhuoji train``, ``train-classifier``, ``train-back-check`` and ``quantize``: each
hands its arguments to the main of its ``vision/training`` module. They need the ``train`` extra (torch,
ultralytics, onnx), imported only here and only when asked for."""

from __future__ import annotations

from collections.abc import Sequence


def run_training(command: str, argv: Sequence[str]) -> int:
    """Run ``command``'s training main with ``argv``; a ``ValueError`` when the train extra is not installed."""
    try:
        if command == "quantize":
            import onnx  # noqa: F401

            from vision.training.quantize import main
        else:
            import torch  # noqa: F401

            if command == "train":
                import ultralytics  # noqa: F401

                from vision.training.train import main
            elif command == "train-back-check":
                from vision.training.train_back_check import main
            else:
                from vision.training.train_classify import main
    except ImportError:
        extra = "quantizing" if command == "quantize" else "training"
        raise ValueError(f"{extra} needs the train extra: pip install -e '.[train]'") from None
    return main(list(argv))
