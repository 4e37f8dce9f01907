"""Give the crop classifier's ONNX graph a second output, ``features``: the pooled vector its last layer reads
(the penultimate features), for calibration references (``vision/calibrate.py``). The ``probs`` output stays
the first output and unchanged. Needs the ``onnx`` package (train extra); the runtime only reads the result.

    python -m vision.training.embed_output models/zhuoji-crops.onnx models/zhuoji-crops-int8.onnx
"""

from __future__ import annotations

import argparse
from pathlib import Path

FEATURES = "features"


def add_features_output(path: Path) -> bool:
    """Add the ``features`` output to the model at ``path`` in place; False when it already has one."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    if any(o.name == FEATURES for o in graph.output):
        return False
    producer = {out: node for node in graph.node for out in node.output}
    softmax = producer[graph.output[0].name]
    last = producer[softmax.input[0]]  # the classifier's last layer (Gemm): its input is the pooled vector
    if softmax.op_type != "Softmax" or last.op_type != "Gemm":
        raise ValueError(f"{path}: expected ... -> Gemm -> Softmax at the end, found {last.op_type} -> {softmax.op_type}")
    weights = {t.name: t for t in graph.initializer}
    weight = last.input[1]
    if weight not in weights:  # int8 graphs: the weight passes through a DequantizeLinear
        weight = producer[weight].input[0]
    shape = numpy_helper.to_array(weights[weight]).shape
    trans_b = next((a.i for a in last.attribute if a.name == "transB"), 0)
    width = shape[1] if trans_b else shape[0]
    graph.node.append(helper.make_node("Identity", [last.input[0]], [FEATURES], name="features_output"))
    graph.output.append(helper.make_tensor_value_info(FEATURES, onnx.TensorProto.FLOAT, ["n", width]))
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+", type=Path, help="crop classifier ONNX files, edited in place")
    args = parser.parse_args(argv)
    for path in args.models:
        print(f"{path}: {'features output added' if add_features_output(path) else 'already has one'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
