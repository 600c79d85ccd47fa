#!/usr/bin/python3
"""quantize --int8-embeddings end to end: ids -> Gather(table 500 x 48) ->
`rows` (an output) -> MatMul -> `y`. By default the .q8 holds the table in
int8 (the file shrinks by most of the table's bytes) and each looked-up row
is within half a step of its own scale (max |row| / 127) of the float row;
with `off` the rows are the float rows exactly. A bad value is a usage
error (exit 2).

    check_embeddings_cli.py BUILD_DIR
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROWS, COLS = 500, 48


def model(path, table):
    w = np.random.default_rng(5).uniform(-.5, .5, (COLS, 8)).astype(np.float32)
    nodes = [helper.make_node("Gather", ["table", "ids"], ["rows"]),
             helper.make_node("MatMul", ["rows", "w"], ["y"])]
    g = helper.make_graph(
        nodes, "t", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 6])],
        [helper.make_tensor_value_info("rows", TensorProto.FLOAT, [1, 6, COLS]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 8])],
        [numpy_helper.from_array(table, "table"), numpy_helper.from_array(w, "w")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def main():
    build = sys.argv[1]
    r = np.random.default_rng(3)
    # rows of norms 1e-3 to 10: one scale for all would lose the short ones
    table = (r.standard_normal((ROWS, COLS)) *
             np.logspace(-3, 1, ROWS)[:, None]).astype(np.float32)
    fails = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        model(path, table)
        os.mkdir(os.path.join(d, "calib"))
        for i in range(4):
            np.save(os.path.join(d, "calib", f"s{i}.npy"), r.integers(0, ROWS, (1, 6)))
        ids = np.array([[0, 1, 250, 499, -1, 7]], np.int64)
        np.save(os.path.join(d, "ids.npy"), ids)
        rows = {}
        size = {}
        for name, extra in (("default", []), ("off", ["--int8-embeddings", "off"])):
            q8 = os.path.join(d, name + ".q8")
            p = subprocess.run([os.path.join(build, "quantize"), path, "-o", q8, "--calib",
                                os.path.join(d, "calib")] + extra, capture_output=True, text=True)
            if p.returncode:
                sys.exit(f"check_embeddings_cli: quantize {extra}: {p.stderr.strip()}")
            said = "int8 embedding tables: 1 lookup" in p.stdout
            if said != (name == "default"):
                fails.append(f"{name}: quantize says {p.stdout.strip()!r}")
            size[name] = os.path.getsize(q8)
            out = os.path.join(d, "o_" + name)
            p = subprocess.run([os.path.join(build, "q8run"), q8, "--input",
                                os.path.join(d, "ids.npy"), "--out", out],
                               capture_output=True, text=True)
            if p.returncode:
                sys.exit(f"check_embeddings_cli: q8run {name}: {p.stderr.strip()}")
            rows[name] = np.load(os.path.join(out, "rows.npy"))[0]
        want = table[ids[0]]
        step = np.abs(want).max(1, keepdims=True) / 127
        err = np.abs(rows["default"] - want)
        print(f"sizes: default {size['default']} B, off {size['off']} B "
              f"(table {table.nbytes} B); worst error / row step {(err / step).max():.3f}")
        if size["off"] - size["default"] < table.nbytes * 0.6:
            fails.append("the default .q8 does not hold the table in int8")
        if (err > step * 0.5001).any():
            fails.append("a row is off by more than half its step")
        if (err == 0).all():
            fails.append("the default rows are the float rows: not quantized")
        if not np.array_equal(rows["off"], want):
            fails.append("--int8-embeddings off does not give the float rows")
        p = subprocess.run([os.path.join(build, "quantize"), path, "-o",
                            os.path.join(d, "x.q8"), "--calib", os.path.join(d, "calib"),
                            "--int8-embeddings", "maybe"], capture_output=True, text=True)
        if p.returncode != 2 or "--int8-embeddings must be on or off" not in p.stderr:
            fails.append(f"a bad value: exit {p.returncode}, {p.stderr.strip()!r}")
        if os.path.exists(os.path.join(d, "x.q8")):
            fails.append("a usage error wrote a file")
    if fails:
        sys.exit("check_embeddings_cli: " + "; ".join(fails))


if __name__ == "__main__":
    main()
