"""FP16 models: q8 widens them to float32 at import (src/passes/fp16.c).

Usage: check_fp16.py BUILD_DIR MODEL.onnx CALIB_DIR SAMPLE.npy

From an FP32 model this makes two models with the same float16-rounded
weights, in a temporary folder:
  half.onnx  as float16 exporters write it: float16 initializers, float16
             graph input and output, float16 compute; and, around one node,
             a Cast pair that round-trips through float32 (mixed precision);
  ref.onnx   the same in float32: weights rounded to float16 and back.
Widened, half.onnx computes exactly what ref.onnx computes on the same
(float16-representable) input, so q8run's float16 output must be ref's
float32 output rounded to float16, bit for bit: in FP32 (.onnx) and in INT8
(both quantized with the same calibration, also rounded to float16). The
float16 .q8 must say float16 for its input and output, and a run fed float32
data must still work (the session accepts both). Exits non-zero on failure.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def half_model(m):
    """float16 everywhere (what a float16 export looks like), plus a
    float32 Cast pair around the first Relu."""
    h = onnx.ModelProto()
    h.CopyFrom(m)
    g = h.graph
    for init in g.initializer:
        if init.data_type == TensorProto.FLOAT:
            a = numpy_helper.to_array(init).astype(np.float16)
            init.CopyFrom(numpy_helper.from_array(a, init.name))
    for vi in list(g.input) + list(g.output):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.FLOAT16
    del g.value_info[:]
    for i, n in enumerate(g.node):
        if n.op_type == "Relu":
            x = n.input[0]
            g.node.insert(i, helper.make_node("Cast", [x], [x + "_f32"], to=TensorProto.FLOAT))
            n.input[0] = x + "_f32"
            y = n.output[0]
            n.output[0] = y + "_f32"
            g.node.insert(i + 2, helper.make_node("Cast", [y + "_f32"], [y],
                                                  to=TensorProto.FLOAT16))
            break
    return h


def ref_model(m):
    r = onnx.ModelProto()
    r.CopyFrom(m)
    for init in r.graph.initializer:
        if init.data_type == TensorProto.FLOAT:
            a = numpy_helper.to_array(init).astype(np.float16).astype(np.float32)
            init.CopyFrom(numpy_helper.from_array(a, init.name))
    return r


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}\n{p.stderr}")
    return p.stdout


def q8run(build, model, x_path, out_dir):
    run([os.path.join(build, "q8run"), model, "--input", f"input={x_path}", "--out", out_dir])
    return np.load(os.path.join(out_dir, "logits.npy"))


def check(label, got, want32):
    want = want32.astype(np.float16)
    if got.dtype != np.float16:
        sys.exit(f"FAIL {label}: output is {got.dtype}, not float16")
    if got.shape != want.shape or not np.array_equal(got.view(np.uint16), want.view(np.uint16)):
        d = np.abs(got.astype(np.float32) - want.astype(np.float32)).max()
        sys.exit(f"FAIL {label}: float16 output differs from the float32 reference rounded "
                 f"(max |diff| {d})")
    print(f"ok {label}: {got.size} float16 outputs equal the reference's, bit for bit")


def main():
    build, model, calib, sample = sys.argv[1:5]
    m = onnx.load(model)
    tmp = tempfile.mkdtemp(prefix="q8-fp16-")
    half, ref = os.path.join(tmp, "half.onnx"), os.path.join(tmp, "ref.onnx")
    onnx.save(half_model(m), half)
    onnx.save(ref_model(m), ref)
    onnx.checker.check_model(half)

    x16 = np.load(sample).astype(np.float16)
    x16_path, x32_path = os.path.join(tmp, "x16.npy"), os.path.join(tmp, "x32.npy")
    np.save(x16_path, x16)
    np.save(x32_path, x16.astype(np.float32))
    cal16, cal32 = os.path.join(tmp, "cal16"), os.path.join(tmp, "cal32")
    os.makedirs(cal16)
    os.makedirs(cal32)
    for f in sorted(os.listdir(calib)):
        if f.endswith(".npy"):
            a = np.load(os.path.join(calib, f)).astype(np.float16)
            np.save(os.path.join(cal16, f), a)
            np.save(os.path.join(cal32, f), a.astype(np.float32))

    out = os.path.join(tmp, "out")
    want = q8run(build, ref, x32_path, out)
    check("fp32 .onnx, float16 input", q8run(build, half, x16_path, out), want)
    check("fp32 .onnx, float32 input", q8run(build, half, x32_path, out), want)

    q_half, q_ref = os.path.join(tmp, "half.q8"), os.path.join(tmp, "ref.q8")
    run([os.path.join(build, "quantize"), half, "-o", q_half, "--calib", cal16])
    run([os.path.join(build, "quantize"), ref, "-o", q_ref, "--calib", cal32])
    want = q8run(build, q_ref, x32_path, out)
    check("int8 .q8, float16 input", q8run(build, q_half, x16_path, out), want)

    info = json.loads(run([os.path.join(build, "q8run"), q_half, "--input", f"input={x16_path}",
                           "--json"]).strip().splitlines()[-1])
    dts = [t["dtype"] for t in info["inputs"] + info["outputs"]]
    if dts != ["float16", "float16"]:
        sys.exit(f"FAIL: the float16 .q8 reports dtypes {dts}")
    print("ok: float16 model passes")


if __name__ == "__main__":
    main()
