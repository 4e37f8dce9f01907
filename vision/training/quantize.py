"""Float ONNX model → int8 ONNX model (static quantization with onnxruntime), for the detector and the crop classifier.

The int8 detector network runs in about 0.5–0.7 of the float one's time on the 2-core CPUs measured, at about
the same accuracy on the real photos (numbers and commands in ``models/README.md``). Weights are 7-bit integers
(in int8) per output channel, so that x86 CPUs without VNNI (AVX2 only), whose int8 kernels add products in
int16, never saturate; activations uint8 with ranges from a percentile of
what a sample of calibration inputs produces (the plain min–max lets a few outliers stretch the scale: measured
lower mAP). The detect head's class branches and last layers stay float: box coordinates (0–640 px) and class
scores share one output tensor, and one int8 scale for both erased the scores (mAP 0); so do the classifier's last
layer and softmax.
Needs the ``onnx`` package (``train`` extra)::

    zhuoji quantize models/zhuoji-tiles.onnx --images ../data/real/images/train --samples 32 \
                    --out models/zhuoji-tiles-int8.onnx
    zhuoji quantize models/zhuoji-crops.onnx --crops ../data/crops11F/train.npz --out models/zhuoji-crops-int8.onnx

Calibration holds every activation of every input in memory: 64 photos took 19.5 GB at peak and 70 s here; on a
smaller machine use fewer (``--samples 16``). ``--images`` takes a folder of photos or a list file (one path per
line, as ``datasets/mix.py`` writes); photos are letterboxed exactly as ``vision.detect`` does at run time, crops
prepared as ``vision.classify`` does.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

import numpy as np
from tqdm import tqdm

from vision import classify, detect
from vision.images import ImageError, load_image

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp"}


def list_images(source: Path) -> list[Path]:
    """Photos of a folder, or the lines of a list file (relative lines are relative to the list's folder)."""
    if source.is_dir():
        return sorted(p for p in source.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
    if source.is_file():
        lines = [line.strip() for line in source.read_text().splitlines() if line.strip()]
        return [p if p.is_absolute() else source.parent / p for p in map(Path, lines)]
    raise FileNotFoundError(f"no such folder or list file: {source}")


def image_batches(paths: list[Path], size: int) -> list[np.ndarray]:
    """One (1, 3, size, size) float input per readable photo, prepared as the detector prepares it."""
    batches = []
    for path in tqdm(paths, desc="calibration photos", unit="photo"):
        try:
            canvas, _ = detect.letterbox(load_image(path), size)
        except ImageError:
            continue
        batches.append(detect.to_input(canvas))
    return batches


def crop_batches(crops_npz: Path, n: int, seed: int, batch: int = 64) -> list[np.ndarray]:
    """Batches of ``n`` crops drawn at random from a ``datasets/crops.py`` file, prepared as the classifier does."""
    x = np.load(crops_npz)["x"]
    pick = np.sort(np.random.default_rng(seed).choice(len(x), min(n, len(x)), replace=False))
    x = x[pick]
    return [classify.to_input(x[i:i + batch]) for i in range(0, len(x), batch)]


def nodes_kept_float(model) -> list[str]:
    """The nodes that stay float: the one that writes the model's output and those feeding it (the classifier's last
    layer and softmax: probabilities in steps of 1/255 would lose the small ones the score combination uses), and
    in a YOLO model the detect head (the last ``/model.N/`` module) but for the convolutions and activations of its
    box branches (``cv2``): the whole class branches (``cv3``, depthwise-separable and cheap; kept float, the face-box
    detector reads scenes better and real photos as well: ``models/README.md``), the last convolution of each box
    branch, the box decoding and the joint output."""
    outputs = {o.name for o in model.graph.output}
    last = [n for n in model.graph.node if set(n.output) & outputs]
    feeding = {i for n in last for i in n.input}
    keep = {n.name for n in model.graph.node if n in last or set(n.output) & feeding}
    index = [int(m.group(1)) for n in model.graph.node if (m := re.search(r"/model\.(\d+)/", n.name))]
    if index:
        head = f"/model.{max(index)}/"
        keep |= {n.name for n in model.graph.node
                 if head in n.name and (f"{head}cv3" in n.name or not ("/conv/Conv" in n.name or "/act/" in n.name))}
    return [n.name for n in model.graph.node if n.name in keep]


def quantize(model_in: Path, model_out: Path, batches: list[np.ndarray], percentile: float = 99.999) -> Path:
    """Write the int8 version of ``model_in`` to ``model_out``, calibrated on ``batches`` (inputs of the model's
    one input), its graph optimized (:func:`optimize_graph`). The float model's metadata (class names, crop size)
    is kept."""
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    if not batches:
        raise ValueError("no calibration inputs")
    # The percentile calibration stacks all batches: they must be of one size (the first's); the rest is dropped.
    inputs = np.concatenate(batches)
    size = min(len(batches[0]), len(inputs))
    batches = [inputs[i:i + size] for i in range(0, len(inputs) - size + 1, size)]
    source = onnx.load(str(model_in))
    input_name = source.graph.input[0].name

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.inputs = iter(batches)

        def get_next(self) -> dict[str, np.ndarray] | None:
            batch = next(self.inputs, None)
            return None if batch is None else {input_name: batch}

    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp) / "prepared.onnx"
        quant_pre_process(str(model_in), str(prepared))
        keep_float = nodes_kept_float(onnx.load(str(prepared)))
        quantized = Path(tmp) / "int8.onnx"
        # reduce_range: 7-bit weights. x86 CPUs without VNNI (AVX2 only) add u8×s8 products in pairs into int16,
        # which saturates with 8-bit weights: the model then reads almost nothing there (seen on an AMD EPYC).
        quantize_static(str(prepared), str(quantized), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        reduce_range=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        nodes_to_exclude=keep_float,
                        calibrate_method=CalibrationMethod.Percentile,
                        extra_options={"CalibPercentile": percentile})
        model = onnx.load(str(quantized))
    # The pre-processing pass declares every onnxruntime domain; the quantized graph uses standard operators only
    # (the optimized one then declares the onnxruntime operators it fuses into).
    used = {n.domain for n in model.graph.node}
    keep = [o for o in model.opset_import if o.domain in used or o.domain == ""]
    del model.opset_import[:]
    model.opset_import.extend(keep)
    del model.metadata_props[:]
    for prop in source.metadata_props:
        model.metadata_props.add(key=prop.key, value=prop.value)
    model.metadata_props.add(key="quantization", value=f"int8 static (QDQ, per-channel 7-bit weights, uint8 activations, "
                                                        f"{percentile} percentile of {sum(len(b) for b in batches)} "
                                                        f"inputs) from {model_in.name}")
    model_out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(model_out))
    return optimize_graph(model_out, model_out)


def optimize_graph(model_in: Path, model_out: Path) -> Path:
    """Write ``model_in`` with onnxruntime's graph optimizations up to the extended level already applied (the int8
    detector's QDQ pairs fused into QLinearConv and the like), so that each process opening it skips that work:
    opening the int8 detector took 127 ms CPU, its optimized graph 57 ms, the crop classifier 29 → 18 ms, the
    outputs bit for bit the same. The extended level only: the layout transforms above it depend on the CPU's
    instruction set, and onnxruntime still applies them when it opens the file. The metadata is kept."""
    import onnx
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    with tempfile.TemporaryDirectory() as tmp:
        optimized = Path(tmp) / "optimized.onnx"
        opts.optimized_model_filepath = str(optimized)
        ort.InferenceSession(str(model_in), opts, providers=["CPUExecutionProvider"])
        model = onnx.load(str(optimized))
    # onnxruntime declares every domain it knows (ai.onnx.ml 5, training, ...): an older onnxruntime refuses a
    # version it does not know even when no node uses it, so only the domains in use are kept
    used = {n.domain for n in model.graph.node} | {""}
    keep = [o for o in model.opset_import if o.domain in used]
    del model.opset_import[:]
    model.opset_import.extend(keep)
    model_out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(model_out))
    return model_out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="zhuoji quantize", description=__doc__.split("\n\n")[0])
    p.add_argument("model", type=Path, help="float ONNX: the detector (input 'images') or the crop classifier "
                                            "(input 'crops')")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--images", type=Path, help="detector: a folder of photos or a list file")
    p.add_argument("--crops", type=Path, help="crop classifier: a datasets/crops.py train.npz")
    p.add_argument("--samples", type=int, default=None,
                   help="calibration inputs drawn at random (default: 64 photos, 1024 crops)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--percentile", type=float, default=99.999)
    a = p.parse_args(argv)
    if a.samples is not None and a.samples < 1:
        p.error("--samples must be at least 1")
    if not 50 < a.percentile <= 100:
        p.error("--percentile must be above 50 and at most 100")
    import onnx

    if not a.model.is_file():
        p.error(f"no such model: {a.model}")
    try:
        inputs = onnx.load(str(a.model)).graph.input
    except Exception as exc:  # onnx raises protobuf's own errors for a file that is not a model
        p.error(f"{a.model}: not an ONNX model ({type(exc).__name__})")
    kind = inputs[0].name if inputs else ""
    if kind == "images":
        if a.images is None:
            p.error("the detector needs --images (calibration photos)")
        try:
            paths = list_images(a.images)
        except FileNotFoundError as exc:
            p.error(str(exc))
        rng = np.random.default_rng(a.seed)
        n = min(a.samples or 64, len(paths))
        paths = [paths[i] for i in np.sort(rng.choice(len(paths), n, replace=False))] if paths else []
        size = int(inputs[0].type.tensor_type.shape.dim[2].dim_value or 640)
        batches = image_batches(paths, size)
    elif kind == "crops":
        if a.crops is None or not a.crops.is_file():
            p.error("the crop classifier needs --crops (a datasets/crops.py .npz file)")
        batches = crop_batches(a.crops, a.samples or 1024, a.seed)
    else:
        p.error(f"{a.model}: neither the detector (input 'images') nor the crop classifier (input 'crops')")
    if not batches:
        p.error("no readable calibration inputs")
    print(quantize(a.model, a.out, batches, a.percentile))
    return 0
