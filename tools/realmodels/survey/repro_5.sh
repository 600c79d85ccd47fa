#!/bin/sh
# The fifth survey set's two findings as small models (python3-onnx), in $1 (default /tmp/q8_repro5):
#  1. dynq_conv.onnx, dynq_matmul.onnx: ONNX Runtime's quantize_dynamic pattern (DynamicQuantizeLinear ->
#     ConvInteger / MatMulInteger with the computed zero point -> Cast -> Mul), as in imgly's "small" ISNet.
#     ONNX Runtime runs both; q8run and quantize refuse: "input 2 ('xz') must be a constant".
#  2. concat_bn.onnx: DenseNet's pre-activation pattern (fr_expression): Concat of a big (|y|~5) and a small
#     (|y|~0.15) branch -> BatchNormalization (x32 on the small branch's channels) -> Relu -> Conv.
#     quantize (defaults): output SQNR about 12.6 dB; the small branch's conv shares the Concat's scale (10 dB).
#     --fp32-layers Conv_1 gives 36.9 dB, but --min-sqnr 30 --max-trials 8 stops after 1 trial with
#     "no layer left to fall back on" (build of a7a7bf7).
#  3. nan_conv_relu.onnx: Conv -> Relu on an input with one NaN: ONNX Runtime gives 9 NaNs, q8run (FP32)
#     none (0 where ORT has NaN; the fused conv+relu drops NaN). Relu, MaxPool, Conv alone keep NaN.
#     Seen first on fr_eye.onnx (one NaN pixel: ORT [nan nan], q8run FP32 [0.288 -0.409]).
# Q8_BUILD: the build folder (default build). Needs /usr/bin/python3 with numpy and onnx.
set -e
B=$(cd "${Q8_BUILD:-build}" && pwd); ORT=$(cd "$(dirname "$0")/../../ort" && pwd)/run_ort.js
D=${1:-/tmp/q8_repro5}; mkdir -p $D; cd $D
/usr/bin/python3 -B - <<'PY'
import numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
rng = np.random.default_rng(0)
w = rng.integers(0, 255, (4, 3, 3, 3)).astype(np.uint8)
nodes = [h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
         h.make_node("ConvInteger", ["xq", "w", "xz", "wz"], ["acc"], pads=[1, 1, 1, 1]),
         h.make_node("Cast", ["acc"], ["accf"], to=T.FLOAT),
         h.make_node("Mul", ["xs", "ws"], ["s"]),
         h.make_node("Mul", ["accf", "s"], ["y"])]
g = h.make_graph(nodes, "dynq", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 8, 8])],
                 [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 8, 8])],
                 [nh.from_array(w, "w"), nh.from_array(np.array(128, np.uint8), "wz"), nh.from_array(np.array(0.01, np.float32), "ws")])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 15)]); m.ir_version = 8
onnx.checker.check_model(m); onnx.save(m, "dynq_conv.onnx")
np.save("x.npy", rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
import numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
rng = np.random.default_rng(0)
nodes = [h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
         h.make_node("MatMulInteger", ["xq", "w", "xz", "wz"], ["acc"]),
         h.make_node("Cast", ["acc"], ["accf"], to=T.FLOAT),
         h.make_node("Mul", ["xs", "ws"], ["s"]), h.make_node("Mul", ["accf", "s"], ["y"])]
g = h.make_graph(nodes, "dynqmm", [h.make_tensor_value_info("x", T.FLOAT, [2, 16])], [h.make_tensor_value_info("y", T.FLOAT, [2, 8])],
                 [nh.from_array(rng.integers(0, 255, (16, 8)).astype(np.uint8), "w"), nh.from_array(np.array(128, np.uint8), "wz"), nh.from_array(np.array(0.01, np.float32), "ws")])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 15)]); m.ir_version = 8
onnx.checker.check_model(m); onnx.save(m, "dynq_matmul.onnx"); np.save("x2.npy", rng.standard_normal((2, 16)).astype(np.float32))
import numpy as np, onnx, os
from onnx import helper as h, TensorProto as T, numpy_helper as nh
rng = np.random.default_rng(0)
wa = rng.standard_normal((8, 4, 3, 3)).astype(np.float32)          # big branch, |y| ~ 5
wb = (rng.standard_normal((8, 4, 3, 3)) * 0.03).astype(np.float32) # small branch, |y| ~ 0.15
g = np.concatenate([np.ones(8), np.full(8, 32.0)]).astype(np.float32)
zeros, ones = np.zeros(16, np.float32), np.ones(16, np.float32)
wc = (rng.standard_normal((8, 16, 1, 1)) * 0.3).astype(np.float32)
nodes = [h.make_node("Conv", ["x", "wa"], ["a"], pads=[1, 1, 1, 1]), h.make_node("Conv", ["x", "wb"], ["b"], pads=[1, 1, 1, 1]),
         h.make_node("Concat", ["a", "b"], ["c"], axis=1),
         h.make_node("BatchNormalization", ["c", "g", "beta", "mean", "var"], ["n"], epsilon=1e-5),
         h.make_node("Relu", ["n"], ["r"]), h.make_node("Conv", ["r", "wc"], ["y"])]
inits = [nh.from_array(v, k) for k, v in dict(wa=wa, wb=wb, g=g, beta=zeros, mean=zeros, var=ones, wc=wc).items()]
gr = h.make_graph(nodes, "concat_bn", [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 16, 16])],
                  [h.make_tensor_value_info("y", T.FLOAT, [1, 8, 16, 16])], inits)
m = h.make_model(gr, opset_imports=[h.make_opsetid("", 13)]); m.ir_version = 7
onnx.checker.check_model(m); onnx.save(m, "concat_bn.onnx")
for d, n, s in (("cbn/calib", 16, 0), ("cbn/heldout", 4, 100)):
    os.makedirs(d, exist_ok=True)
    for i in range(n): np.save(f"{d}/{i:04d}.npy", np.random.default_rng(s + i).uniform(-1, 1, (1, 4, 16, 16)).astype(np.float32))
import numpy as np
x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4) - 8; x[0, 0, 1, 1] = np.nan; np.save("xnan.npy", x)
g = h.make_graph([h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), h.make_node("Relu", ["c"], ["y"])], "nan_conv_relu",
                 [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 4, 4])], [h.make_tensor_value_info("y", T.FLOAT, [1, 1, 4, 4])],
                 [nh.from_array(np.ones((1, 1, 3, 3), np.float32), "w")])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)]); m.ir_version = 7; onnx.save(m, "nan_conv_relu.onnx")
PY
for m in dynq_conv:x.npy dynq_matmul:x2.npy; do
  f=${m%%:*}; x=${m#*:}
  echo "== $f: ONNX Runtime"; node $ORT $f.onnx --input x=$x --out ort_$f || true
  echo "== $f: q8run"; $B/q8run $f.onnx --input $x --out q8_$f || true
done
echo "== concat_bn: quantize (defaults), q8report"
$B/quantize concat_bn.onnx -o concat_bn.q8 --calib cbn/calib || true
$B/q8report concat_bn.onnx concat_bn.q8 --data cbn/heldout -o $D/concat_bn.html || true
echo "== concat_bn: --min-sqnr 30 --max-trials 8 (the search), then --fp32-layers Conv_1 (by hand)"
$B/quantize concat_bn.onnx -o search.q8 --calib cbn/calib --min-sqnr 30 --max-trials 8 || true
$B/quantize concat_bn.onnx -o conv1.q8 --calib cbn/calib --fp32-layers Conv_1 || true
$B/q8report concat_bn.onnx conv1.q8 --data cbn/heldout -o $D/conv1.html || true
echo "== nan_conv_relu: NaN count, ONNX Runtime then q8run FP32"
node $ORT nan_conv_relu.onnx --input x=xnan.npy --out ort_nan >/dev/null; $B/q8run nan_conv_relu.onnx --input xnan.npy --out q8_nan >/dev/null
/usr/bin/python3 -c "import numpy as np; print(int(np.isnan(np.load('ort_nan/y.npy')).sum()), int(np.isnan(np.load('q8_nan/y.npy')).sum()))"
