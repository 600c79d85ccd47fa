#!/usr/bin/env bash
# Make the speed benchmark set of the real-model kit (tools/realmodels) in DIR,
# laid out as prepare_bench.sh lays out the zoo, for tools/bench/cpu_vs_ort.py:
# M.onnx (a link to the cache's model), M.inputs/NAME.npy (its first held-out
# sample), M.q8 (quantize with its defaults, calibrated on the kit's calib
# split at the kit's input shape) and M.qdq (ORT's own INT8, tools/bench/
# ort_qdq.py, same calibration). Models are those of tools/realmodels/kit.py
# that load; isnet only when named (it is large: minutes to quantize).
#   tools/bench/prepare_kit_bench.sh DIR [BUILD_DIR] [MODEL...]
# The kit's models and inputs must be in the cache first
# (tools/realmodels/fetch.py, make_inputs.py). Then, with the same set:
#   /usr/bin/python3 tools/bench/cpu_vs_ort.py --threads 2 --runs 20 DIR/*.q8    # q8 INT8
#   /usr/bin/python3 tools/bench/cpu_vs_ort.py --threads 2 --runs 20 DIR/*.onnx  # q8 FP32
set -euo pipefail
dir=${1:?usage: prepare_kit_bench.sh DIR [BUILD_DIR] [MODEL...]}
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${2:-$top/build}" && pwd)
shift $(( $# >= 2 ? 2 : 1 ))
models=${*:-ppocr_det ppocr_rec ppocr_cls blazeface mlsd_tiny}
cache=${Q8_MODELS_DIR:-$HOME/.cache/q8/models}
mkdir -p "$dir"
for m in $models; do
    # name and shape from the kit's own table, so the two never disagree
    read -r name shape < <(cd "$top/tools/realmodels" && /usr/bin/python3 -c "
import sys, kit
m = [m for m in kit.MODELS if m.name == sys.argv[1] and m.loads]
if not m: sys.exit(f'prepare_kit_bench: {sys.argv[1]}: not a kit model that loads')
print(m[0].input_name, m[0].shape_arg())" "$m")
    onnx=$cache/$m.onnx calib=$cache/inputs/$m/calib
    first=$(ls "$cache/inputs/$m/heldout/"*.npy 2>/dev/null | head -n 1 || true)
    if [ ! -f "$onnx" ] || [ -z "$first" ]; then
        echo "prepare_kit_bench: $m: model or inputs missing in $cache" \
             "(run tools/realmodels/fetch.py and make_inputs.py)" >&2
        exit 1
    fi
    ln -sf "$onnx" "$dir/$m.onnx"
    # the file is named after the input; ':' is fine in a file name, and a
    # '/' (TensorFlow names: tower_0/images) makes a subfolder
    mkdir -p "$(dirname "$dir/$m.inputs/$name.npy")"
    cp "$first" "$dir/$m.inputs/$name.npy"
    "$build/quantize" "$onnx" -o "$dir/$m.q8" --calib "$calib" --input-shape "$shape" \
        > "$dir/$m.quantize.log"
    /usr/bin/python3 "$top/tools/bench/ort_qdq.py" "$onnx" -o "$dir/$m.qdq" --calib "$calib"
done
