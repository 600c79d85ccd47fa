#!/usr/bin/python3
"""quantize --min-sqnr on a layer whose error its exact output does not show
(the fifth survey's DenseNet finding, fr_expression): a large and a small
conv branch joined by Concat share one INT8 scale, and a BatchNormalization
multiplies the small branch's channels by 32. The search measures what each
layer's exact output gains the model; here none does (made exact, the small
branch is rounded again at the Concat's scale), and the search gave up after
trial 1 ("no layer left to fall back on") though keeping that conv FP32
takes the output from about 13 to 36 dB. It now falls back on the weakest
layer alone: the target is met.

    check_search_cli.py BUILD_DIR
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(path):
    rng = np.random.default_rng(0)
    wa = rng.standard_normal((8, 4, 3, 3)).astype(np.float32)           # |y| ~ 5
    wb = (rng.standard_normal((8, 4, 3, 3)) * 0.03).astype(np.float32)  # |y| ~ 0.15
    gamma = np.concatenate([np.ones(8), np.full(8, 32.0)]).astype(np.float32)
    zeros, ones = np.zeros(16, np.float32), np.ones(16, np.float32)
    wc = (rng.standard_normal((8, 16, 1, 1)) * 0.3).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "wa"], ["a"], pads=[1, 1, 1, 1], name="big"),
             helper.make_node("Conv", ["x", "wb"], ["b"], pads=[1, 1, 1, 1], name="small"),
             helper.make_node("Concat", ["a", "b"], ["c"], axis=1, name="join"),
             helper.make_node("BatchNormalization", ["c", "g", "beta", "mean", "var"], ["n"],
                              epsilon=1e-5, name="bn"),
             helper.make_node("Relu", ["n"], ["r"], name="relu"),
             helper.make_node("Conv", ["r", "wc"], ["y"], name="head")]
    inits = [numpy_helper.from_array(v, k) for k, v in
             dict(wa=wa, wb=wb, g=gamma, beta=zeros, mean=zeros, var=ones, wc=wc).items()]
    g = helper.make_graph(nodes, "concat_bn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, path)


def main():
    build = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        onnx_path = os.path.join(d, "cbn.onnx")
        model(onnx_path)
        calib = os.path.join(d, "calib")
        os.makedirs(calib)
        rng = np.random.default_rng(1)
        for i in range(8):
            np.save(f"{calib}/{i:03d}.npy", rng.standard_normal((1, 4, 16, 16)).astype(np.float32))
        out = os.path.join(d, "s.q8")
        p = subprocess.run([os.path.join(build, "quantize"), onnx_path, "-o", out, "--calib",
                            calib, "--min-sqnr", "30", "--max-trials", "4"],
                           capture_output=True, text=True, timeout=600)
        text = p.stdout + p.stderr
        if p.returncode != 0 or "criterion met" not in text or "FP32 for small" not in text:
            print(f"FAIL: quantize --min-sqnr 30: exit {p.returncode}:\n{text[-1200:]}")
            sys.exit(1)
    print("search: the weakest layer kept FP32 where no exact output gained")


if __name__ == "__main__":
    main()
