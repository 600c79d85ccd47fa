#!/usr/bin/env python3
"""op_survey.py: single-op FP32 models, q8 against ONNX Runtime, op by op.

    /usr/bin/python3 tools/bench/op_survey.py [--q8run build/q8run]
        [--threads 1] [--runs 200] [--only Tanh,Erf,...] [--dir DIR]

Writes one small ONNX model per case (python3-onnx) into DIR (default a
temporary folder), runs each with `q8run --profile` (q8's time in its nodes)
and with tools/ort/profile_ort.js (ORT's node times, its layout reorders
included), in turn, and prints a markdown table of median times and the
ratio q8 / ORT. A whole-model benchmark hides an op that is 50x slower when
it is a small part of one model; this finds it (the piecewise activations,
PRelu and Tanh were each found so). Compare ratios, on one machine, in one
run: both sides are timed the same way, but the machine is shared.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHAPE = [1, 64, 64, 64]  # 262,144 floats, 1 MiB: beyond L1, within L2 + L3


def model(path, op, shape, attrs=None, consts=(), opset=17):
    """One node on input x (shape) and constant inputs consts (arrays or None)."""
    names, inits = ["x"], []
    for i, c in enumerate(consts):
        if c is None:
            names.append("")
            continue
        names.append(f"c{i}")
        inits.append(numpy_helper.from_array(np.asarray(c), f"c{i}"))
    node = helper.make_node(op, names, ["y"], **(attrs or {}))
    g = helper.make_graph([node], op, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, path)


def cases():
    """(name, op, input shape, attrs, constant inputs, opset)."""
    r = np.random.default_rng(3)
    per_c = lambda: r.standard_normal([SHAPE[1], 1, 1]).astype(np.float32)
    out = []
    for op in ["Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Abs", "Neg", "Floor",
               "Round", "Reciprocal", "Sign", "Softsign", "Softplus", "Elu", "Selu", "Celu",
               "HardSigmoid", "HardSwish", "LeakyRelu", "ThresholdedRelu"]:
        out.append((op, op, SHAPE, None, (), 17))
    out.append(("Gelu", "Gelu", SHAPE, None, (), 20))
    out.append(("Clip [0, 6]", "Clip", SHAPE, None,
                (np.array(0, np.float32), np.array(6, np.float32)), 17))
    out.append(("PRelu per channel", "PRelu", SHAPE, None, (per_c(),), 17))
    for op in ["Add", "Mul", "Div", "Max", "Min", "Sub"]:
        out.append((f"{op} per channel", op, SHAPE, None, (per_c() + (3 if op == "Div" else 0),), 17))
    out.append(("Add same shape", "Add", SHAPE, None,
                (r.standard_normal(SHAPE).astype(np.float32),), 17))
    out.append(("Pow 2", "Pow", SHAPE, None, (np.array(2, np.float32),), 17))
    out.append(("Softmax rows of 64", "Softmax", SHAPE, {"axis": -1}, (), 17))
    out.append(("Softmax over C", "Softmax", SHAPE, {"axis": 1}, (), 17))
    out.append(("LayerNormalization 64", "LayerNormalization", [1, 4096, 64], {"axis": -1},
                (np.ones(64, np.float32), np.zeros(64, np.float32)), 17))
    out.append(("ReduceMean last", "ReduceMean", SHAPE, {"axes": [-1]}, (), 13))
    out.append(("Transpose NCHW->NHWC", "Transpose", SHAPE, {"perm": [0, 2, 3, 1]}, (), 17))
    out.append(("MaxPool 3x3/2 p1", "MaxPool", SHAPE,
                {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, (), 17))
    out.append(("AveragePool 2x2/2", "AveragePool", SHAPE,
                {"kernel_shape": [2, 2], "strides": [2, 2]}, (), 17))
    out.append(("GlobalAveragePool", "GlobalAveragePool", SHAPE, None, (), 17))
    out.append(("Resize nearest x2", "Resize", SHAPE, {"mode": "nearest"},
                (None, np.array([1, 1, 2, 2], np.float32)), 17))
    out.append(("Resize linear x2", "Resize", SHAPE, {"mode": "linear"},
                (None, np.array([1, 1, 2, 2], np.float32)), 17))
    w = lambda *s: (r.standard_normal(s) * 0.1).astype(np.float32)
    out.append(("Conv 1x1 64->64", "Conv", SHAPE, {"kernel_shape": [1, 1]}, (w(64, 64, 1, 1),), 17))
    out.append(("Conv 3x3 64->64 p1", "Conv", SHAPE, {"kernel_shape": [3, 3], "pads": [1] * 4},
                (w(64, 64, 3, 3),), 17))
    out.append(("Conv dw 3x3 p1", "Conv", SHAPE,
                {"kernel_shape": [3, 3], "pads": [1] * 4, "group": 64}, (w(64, 1, 3, 3),), 17))
    out.append(("Conv dw 3x3/2 p1", "Conv", SHAPE,
                {"kernel_shape": [3, 3], "pads": [1] * 4, "group": 64, "strides": [2, 2]},
                (w(64, 1, 3, 3),), 17))
    out.append(("Conv 1x1/2 64->128", "Conv", SHAPE, {"kernel_shape": [1, 1], "strides": [2, 2]},
                (w(128, 64, 1, 1),), 17))
    out.append(("MatMul 4096x64 . 64x256", "MatMul", [1, 4096, 64], None, (w(64, 256),), 17))
    return out


def q8_ms(q8run, model_path, inp, threads, runs):
    p = subprocess.run([q8run, model_path, "--input", inp, "--threads", str(threads), "--bench",
                        str(runs), "--profile"], capture_output=True, text=True)
    m = re.search(r"profile: ([0-9.]+) ms", p.stdout + p.stderr)
    return float(m.group(1)) if m and p.returncode == 0 else None


def ort_ms(model_path, inp, threads, runs):
    p = subprocess.run(["node", os.path.join(ROOT, "tools/ort/profile_ort.js"), model_path, inp,
                        str(threads), str(runs)], capture_output=True, text=True)
    m = re.search(r"ORT profile: ([0-9.]+) ms", p.stdout + p.stderr)
    return float(m.group(1)) if m and p.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--q8run", default=os.path.join(ROOT, "build/q8run"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--only", help="comma-separated case names (prefixes)")
    ap.add_argument("--dir", help="where the models go (default: a temporary folder)")
    a = ap.parse_args()
    d = a.dir or tempfile.mkdtemp(prefix="q8survey.")
    os.makedirs(d, exist_ok=True)
    want = [s.strip() for s in a.only.split(",")] if a.only else None
    rng = np.random.default_rng(1)
    print("| case | input | q8 ms | ORT ms | q8 / ORT |")
    print("|---|---|---:|---:|---:|")
    for i, (name, op, shape, attrs, consts, opset) in enumerate(cases()):
        if want and not any(name.startswith(w) for w in want):
            continue
        path, inp = os.path.join(d, f"case{i}.onnx"), os.path.join(d, f"case{i}.npy")
        model(path, op, shape, attrs, consts, opset)
        x = rng.standard_normal(shape).astype(np.float32) * 3
        if op in ("Log", "Sqrt"):
            x = np.abs(x) + 1e-3
        np.save(inp, x)
        q, o = q8_ms(a.q8run, path, inp, a.threads, a.runs), ort_ms(path, inp, a.threads, a.runs)
        ratio = f"{q / o:.2f}" if q and o else "—"
        fmt = lambda v: f"{v:.3f}" if v is not None else "failed"
        print(f"| {name} | {'x'.join(map(str, shape))} | {fmt(q)} | {fmt(o)} | {ratio} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
