#!/usr/bin/env bash
# Make the benchmark set in DIR: the zoo models (tools/zoo/make_zoo.py) and
# the shipped MNIST models at batch 1, each M.onnx with its inputs in
# M.inputs/ and its INT8 version M.q8 beside it (quantized with build/quantize,
# calibrated on M.inputs for the zoo, on models/mnist/calib for MNIST), and
# ORT's own INT8 of it, M.qdq (tools/bench/ort_qdq.py, same calibration).
#   tools/bench/prepare_bench.sh DIR [BUILD_DIR]
# Then: /usr/bin/python3 tools/bench/cpu_vs_ort.py --threads 2 --runs 30 DIR/*.onnx
#       /usr/bin/python3 tools/bench/cpu_vs_ort.py --threads 2 --runs 30 DIR/*.q8
set -euo pipefail
dir=${1:?usage: prepare_bench.sh DIR [BUILD_DIR]}
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${2:-$top/build}" && pwd)
mkdir -p "$dir"
/usr/bin/python3 "$top/tools/zoo/make_zoo.py" "$dir" > /dev/null
rm -f "$dir"/thirdparty_* "$dir"/tiny_relu_* 2>/dev/null || true
rm -rf "$dir"/thirdparty_*.inputs "$dir"/tiny_relu_*.inputs "$dir"/*.expected
for m in mlp cnn vit; do
    cp "$top/models/mnist/$m.onnx" "$dir/mnist_$m.onnx"
    mkdir -p "$dir/mnist_$m.inputs"
    cp "$top/models/mnist/sample.npy" "$dir/mnist_$m.inputs/input.npy"
    "$build/quantize" "$dir/mnist_$m.onnx" -o "$dir/mnist_$m.q8" --calib "$top/models/mnist/calib"
    /usr/bin/python3 "$top/tools/bench/ort_qdq.py" "$dir/mnist_$m.onnx" -o "$dir/mnist_$m.qdq" \
        --calib "$top/models/mnist/calib"
done
for f in "$dir"/*.onnx; do
    m=${f%.onnx}
    case $(basename "$m") in mnist_*) continue ;; esac
    "$build/quantize" "$f" -o "$m.q8" --calib "$m.inputs"
    /usr/bin/python3 "$top/tools/bench/ort_qdq.py" "$f" -o "$m.qdq" --calib "$m.inputs"
done
