#!/usr/bin/python3
"""Models that ONNX Runtime's quantize_dynamic made (issue 11): the data's
zero point of ConvInteger / MatMulInteger comes from DynamicQuantizeLinear
at run time. q8run must match the ONNX definition (numpy here, run the way
the spec writes it), and quantize must say that the model was already
quantized instead of writing it silently with 0 INT8 nodes. Both were
refused before ("input 2 must be a constant").

    check_dynq_cli.py BUILD_DIR
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def dql(x):
    """DynamicQuantizeLinear as the ONNX spec defines it (float32 steps)."""
    lo, hi = np.float32(min(0.0, x.min())), np.float32(max(0.0, x.max()))
    scale = np.float32((hi - lo) / np.float32(255))
    zp = np.uint8(np.clip(np.rint(np.float32(0) - lo / scale), 0, 255))
    q = np.clip(np.rint(x / scale) + zp, 0, 255).astype(np.uint8)
    return q, scale, zp


def models(d, rng):
    w = rng.integers(0, 255, (4, 3, 3, 3)).astype(np.uint8)
    nodes = [h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
             h.make_node("ConvInteger", ["xq", "w", "xz", "wz"], ["acc"], pads=[1, 1, 1, 1]),
             h.make_node("Cast", ["acc"], ["accf"], to=T.FLOAT),
             h.make_node("Mul", ["xs", "ws"], ["s"]),
             h.make_node("Mul", ["accf", "s"], ["y"])]
    g = h.make_graph(nodes, "dynq_conv", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 8, 8])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 8, 8])],
                     [nh.from_array(w, "w"), nh.from_array(np.array(131, np.uint8), "wz"),
                      nh.from_array(np.array(0.01, np.float32), "ws")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 15)])
    m.ir_version = 8
    onnx.save(m, os.path.join(d, "conv.onnx"))
    b = rng.integers(0, 255, (16, 8)).astype(np.uint8)
    nodes = [h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
             h.make_node("MatMulInteger", ["xq", "b", "xz", "bz"], ["acc"]),
             h.make_node("Cast", ["acc"], ["accf"], to=T.FLOAT),
             h.make_node("Mul", ["xs", "bs"], ["s"]),
             h.make_node("Mul", ["accf", "s"], ["y"])]
    g = h.make_graph(nodes, "dynq_mm", [h.make_tensor_value_info("x", T.FLOAT, [2, 16])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 8])],
                     [nh.from_array(b, "b"), nh.from_array(np.array(120, np.uint8), "bz"),
                      nh.from_array(np.array(0.02, np.float32), "bs")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 15)])
    m.ir_version = 8
    onnx.save(m, os.path.join(d, "mm.onnx"))
    return w, b


def conv_ref(x, w):
    q, s, z = dql(x)
    xp = np.pad(q.astype(np.int64) - int(z), ((0, 0), (0, 0), (1, 1), (1, 1)))
    wv = w.astype(np.int64) - 131
    acc = np.zeros((1, 4, 8, 8), np.int64)
    for m in range(4):
        for i in range(8):
            for j in range(8):
                acc[0, m, i, j] = (xp[0, :, i:i + 3, j:j + 3] * wv[m]).sum()
    return acc.astype(np.float32) * np.float32(s * np.float32(0.01))


def mm_ref(x, b):
    q, s, z = dql(x)
    acc = (q.astype(np.int64) - int(z)) @ (b.astype(np.int64) - 120)
    return acc.astype(np.float32) * np.float32(s * np.float32(0.02))


def main():
    build = sys.argv[1]
    fails = []
    rng = np.random.default_rng(3)
    with tempfile.TemporaryDirectory() as d:
        w, b = models(d, rng)
        cases = [("conv.onnx", (1, 3, 8, 8), lambda x: conv_ref(x, w)),
                 ("mm.onnx", (2, 16), lambda x: mm_ref(x, b))]
        for name, shape, ref in cases:
            # shifted inputs: zero points away from 0 and 255 and at 0
            for k, shift in enumerate((0.0, 1.5, -3.0)):
                x = (rng.standard_normal(shape) + shift).astype(np.float32)
                xf, out = os.path.join(d, f"x{k}.npy"), os.path.join(d, f"o_{name}_{k}")
                np.save(xf, x)
                p = subprocess.run([os.path.join(build, "q8run"), os.path.join(d, name),
                                    "--input", xf, "-o", out], capture_output=True, text=True)
                if p.returncode != 0:
                    fails.append(f"q8run {name}: exit {p.returncode}: {p.stderr.strip()}")
                    continue
                got, want = np.load(os.path.join(out, "y.npy")), ref(x)
                if not np.allclose(got, want, rtol=1e-6, atol=1e-6):
                    fails.append(f"q8run {name} shift {shift}: max error "
                                 f"{np.abs(got - want).max()} of {np.abs(want).max()}")
            calib = os.path.join(d, "calib_" + name)
            os.makedirs(calib)
            for i in range(3):
                np.save(os.path.join(calib, f"{i}.npy"), rng.standard_normal(shape).astype(np.float32))
            q8 = os.path.join(d, name + ".q8")
            p = subprocess.run([os.path.join(build, "quantize"), os.path.join(d, name), "-o", q8,
                                "--calib", calib], capture_output=True, text=True)
            if p.returncode != 0 or "already quantized by another tool" not in p.stdout:
                fails.append(f"quantize {name}: exit {p.returncode}: {(p.stdout + p.stderr)[-400:]}")
    for f in fails:
        print("FAIL:", f)
    if fails:
        sys.exit(1)
    print("dynamic quantization: ConvInteger and MatMulInteger with run-time zero points")


if __name__ == "__main__":
    main()
