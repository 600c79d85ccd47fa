#!/usr/bin/python3
"""quantize --scalar-tables auto (the default) end to end: a Conv -> Mul k ->
Sub -> Conv model (its scalar ops cost the output little as a table: taken)
and a Conv -> Mul 40 -> Tanh -> Conv one (the table's extra rounding before
the steep tanh costs several dB: not taken). Checks what quantize prints and
the INT8 node count against --scalar-tables off and on.

    check_tables_cli.py BUILD_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(path, steep):
    r = np.random.default_rng(4)
    w1 = numpy_helper.from_array(r.uniform(-.5, .5, (8, 8, 1, 1)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(r.uniform(-.5, .5, (8, 8, 1, 1)).astype(np.float32), "w2")
    k = numpy_helper.from_array(np.array(40.0 if steep else 0.75, np.float32), "k")
    b = numpy_helper.from_array(np.array(2.0, np.float32), "b")
    mid = [helper.make_node("Tanh", ["m"], ["a"])] if steep else \
        [helper.make_node("Sub", ["m", "b"], ["a"])]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"]),
             helper.make_node("Mul", ["c1", "k"], ["m"])] + mid + \
        [helper.make_node("Conv", ["a", "w2"], ["y"])]
    g = helper.make_graph(nodes, "t",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])],
                          [w1, w2, k, b])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def quantize(build, onnx_path, calib, extra):
    p = subprocess.run([os.path.join(build, "quantize"), onnx_path, "-o", onnx_path + ".q8",
                        "--calib", calib] + extra, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"quantize {extra} failed: {p.stderr}")
    n = int(re.search(r"(\d+) INT8 nodes", p.stdout).group(1))
    return p.stdout, n


def main():
    build = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        calib = os.path.join(d, "calib")
        os.mkdir(calib)
        r = np.random.default_rng(7)
        for i in range(8):
            np.save(os.path.join(calib, f"s{i}.npy"),
                    r.uniform(-1, 1, (1, 8, 8, 8)).astype(np.float32))
        fails = []
        for steep, want in ((False, "on"), (True, "off")):
            path = os.path.join(d, f"m{int(steep)}.onnx")
            model(path, steep)
            out, n = quantize(build, path, calib, [])
            _, n_off = quantize(build, path, calib, ["--scalar-tables", "off"])
            _, n_on = quantize(build, path, calib, ["--scalar-tables", "on"])
            line = re.search(r"scalar tables (on|off) \(.*\)", out)
            print(f"{'steep' if steep else 'affine'}: {line.group(0) if line else out.strip()}; "
                  f"INT8 nodes default {n}, off {n_off}, on {n_on}")
            if not line or line.group(1) != want:
                fails.append(f"{'steep' if steep else 'affine'}: want tables {want}")
            if n_on <= n_off or n != (n_on if want == "on" else n_off):
                fails.append(f"{'steep' if steep else 'affine'}: INT8 node counts")
        if fails:
            sys.exit("check_tables_cli: " + "; ".join(fails))


if __name__ == "__main__":
    main()
