#!/usr/bin/env bash
# Regenerate the .q8 fuzzing seeds (tests/fuzz/seeds_q8) with this tree's
# quantize: a tiny Conv + Relu + Gemm model (python3-onnx), dense and 50%
# pruned, a wider pruned MLP (compressed weight encodings), and an If model,
# calibrated on 4 seeded random samples. Run after a format change.
# tiny_v2.q8, tiny_v3.q8, tiny_v4.q8, tiny_v6.q8, tiny_v7.q8, tiny_v8.q8 and tiny_v9.q8 are older versions of tiny.q8, kept (not made
# here) so that old files stay tested (tests/test_layouts.c).
#   tests/fuzz/make_q8_seeds.sh [BUILD_DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$tmp" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
d = sys.argv[1]
rng = np.random.default_rng(5)
w = numpy_helper.from_array(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), "conv.weight")
b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "conv.bias")
fw = numpy_helper.from_array(rng.standard_normal((4, 48)).astype(np.float32), "fc.weight")
fb = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "fc.bias")
shape = numpy_helper.from_array(np.array([1, 48], np.int64), "shape")
nodes = [helper.make_node("Conv", ["x", "conv.weight", "conv.bias"], ["c"], name="conv"),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("Reshape", ["r", "shape"], ["f"], name="flat"),
         helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["y"], name="fc", transB=1)]
g = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [w, b, fw, fb, shape])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{d}/tiny.onnx")
import os
os.makedirs(f"{d}/calib")
for i in range(4):
    np.save(f"{d}/calib/s{i}.npy", rng.standard_normal((1, 2, 6, 6)).astype(np.float32))
# control flow and a bound input: y = (sum(x) > 0 ? relu(x W) : -x) reshaped by
# the input 'shape' (bound with --bind); calibration takes both sides
W = numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32), "W")
zero = numpy_helper.from_array(np.array(0, np.float32), "zero")
vi = helper.make_tensor_value_info
then_g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["m"]),
                            helper.make_node("Relu", ["m"], ["t"])], "then", [],
                           [vi("t", TensorProto.FLOAT, [1, 8])])
else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                           [vi("e", TensorProto.FLOAT, [1, 8])])
nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
         helper.make_node("Greater", ["s", "zero"], ["c"]),
         helper.make_node("If", ["c"], ["b"], name="branch", then_branch=then_g, else_branch=else_g),
         helper.make_node("Reshape", ["b", "shape"], ["y"])]
g = helper.make_graph(nodes, "ifbind", [vi("x", TensorProto.FLOAT, [1, 8]),
                                        vi("shape", TensorProto.INT64, [2])],
                      [vi("y", TensorProto.FLOAT, None)], [W, zero])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{d}/ifbind.onnx")
for sub in ("x", "shape"):
    os.makedirs(f"{d}/calib2/{sub}")
for i in range(4):
    np.save(f"{d}/calib2/x/s{i}.npy", (rng.standard_normal((1, 8)) + (1 if i % 2 else -1)).astype(np.float32))
    np.save(f"{d}/calib2/shape/s{i}.npy", np.array([2, 4], np.int64))
# a wider Gemm, 50% pruned, every layer (--prune-protect none): its weights
# too many for the dense form to be the smallest, so the file holds the
# compressed encodings (bitmask, deflated) for the harness to mutate
rng = np.random.default_rng(7)  # its own: the seeds above stay as they were
fw2 = numpy_helper.from_array(rng.standard_normal((40, 96)).astype(np.float32), "fc2.weight")
fb2 = numpy_helper.from_array(rng.standard_normal(40).astype(np.float32), "fc2.bias")
fw3 = numpy_helper.from_array(rng.standard_normal((24, 40)).astype(np.float32), "fc3.weight")
nodes = [helper.make_node("Gemm", ["x", "fc2.weight", "fc2.bias"], ["h"], name="fc2", transB=1),
         helper.make_node("Relu", ["h"], ["r"], name="relu"),
         helper.make_node("Gemm", ["r", "fc3.weight"], ["y"], name="fc3", transB=1)]
g = helper.make_graph(nodes, "wide", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 96])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24])], [fw2, fb2, fw3])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{d}/wide.onnx")
os.makedirs(f"{d}/calib3")
for i in range(4):
    np.save(f"{d}/calib3/s{i}.npy", rng.standard_normal((1, 96)).astype(np.float32))
PY
"$build/quantize" "$tmp/tiny.onnx" -o "$top/tests/fuzz/seeds_q8/tiny.q8" --calib "$tmp/calib" > /dev/null
"$build/quantize" "$tmp/tiny.onnx" -o "$top/tests/fuzz/seeds_q8/tiny_pruned.q8" --calib "$tmp/calib" \
    --prune 0.5 > /dev/null
"$build/quantize" "$tmp/wide.onnx" -o "$top/tests/fuzz/seeds_q8/wide_pruned.q8" --calib "$tmp/calib3" \
    --prune 0.5 --prune-protect none > /dev/null
"$build/quantize" "$tmp/ifbind.onnx" -o "$top/tests/fuzz/seeds_q8/if_bound.q8" --calib "$tmp/calib2" \
    > /dev/null
ls -l "$top/tests/fuzz/seeds_q8"
