#!/usr/bin/env bash
# The speed benchmark set of the survey's models (tools/realmodels/survey:
# models q8 was not tuned on) in DIR, laid out as prepare_kit_bench.sh lays
# out the kit, for tools/bench/cpu_vs_ort.py: M.onnx (a link), M.inputs/
# NAME.npy (its first held-out input), M.q8 (quantize with its defaults on
# the survey's calib split), M.qdq (ORT's own INT8, tools/bench/ort_qdq.py,
# same calibration). One-input models only (the VADs carry state).
#   tools/bench/prepare_survey_bench.sh DIR [BUILD_DIR] [MODEL...]
# The survey's models and inputs must be in its cache first
# (survey/fetch_models.sh, fetch_models_5.sh, gen_inputs.py, gen_inputs_5.py).
set -euo pipefail
dir=${1:?usage: prepare_survey_bench.sh DIR [BUILD_DIR] [MODEL...]}
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${2:-$top/build}" && pwd)
shift $(( $# >= 2 ? 2 : 1 ))
cache=${Q8_SURVEY_DIR:-$HOME/.cache/q8/survey}
models=${*:-yolov5s_tfjs fr_detect fr_feature fr_landmark fr_expression fr_age esrgan_slim_x4}
mkdir -p "$dir"
for m in $models; do
    onnx=$cache/models/$m.onnx calib=$cache/inputs/$m/calib
    first=$(ls "$cache/inputs/$m/heldout/"*.npy 2>/dev/null | head -n 1 || true)
    if [ ! -f "$onnx" ] || [ -z "$first" ] || [ ! -d "$calib" ]; then
        echo "prepare_survey_bench: $m: model, held-out or calib inputs missing in $cache" >&2
        exit 1
    fi
    name=$(/usr/bin/python3 -c "
import sys, onnx
g = onnx.load(sys.argv[1], load_external_data=False).graph
init = {i.name for i in g.initializer}
ins = [i.name for i in g.input if i.name not in init]
if len(ins) != 1: sys.exit(f'prepare_survey_bench: {sys.argv[2]}: {len(ins)} inputs, one expected')
print(ins[0])" "$onnx" "$m")
    ln -sf "$onnx" "$dir/$m.onnx"
    mkdir -p "$(dirname "$dir/$m.inputs/$name.npy")"
    cp "$first" "$dir/$m.inputs/$name.npy"
    "$build/quantize" "$onnx" -o "$dir/$m.q8" --calib "$calib" > "$dir/$m.quantize.log" 2>&1
    /usr/bin/python3 "$top/tools/bench/ort_qdq.py" "$onnx" -o "$dir/$m.qdq" --calib "$calib"
done
